// eval_memory's figures and text, as the vendor toolkit (2.3) prints them.
#pragma once

#include <cstdint>
#include <string>

#include "openrknn/server/v1/rknn_server.pb.h"
#include "rknn_api.h"

namespace orknn::server {

// weight = total_weight_size, internal = total_internal_size, other = the rest of the DMA
// memory the context holds (never negative), total = their sum; model_size = the file's bytes.
openrknn::server::v1::EvalMemoryResponse memory_report(const rknn_mem_size& sizes,
                                                       uint64_t model_size);

// "3.53 MiB" at 1 MiB and above, "473.00 KiB" below.
std::string human_bytes(uint64_t bytes);

}  // namespace orknn::server
