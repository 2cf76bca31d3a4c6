// Checks a client's input tensor against the model's input attributes before any byte reaches
// the runtime, so that a wrong dtype, shape or size gets INVALID_ARGUMENT with a message that
// names the value and the rule it broke.
#pragma once

#include <cstddef>
#include <string>

#include "openrknn/server/v1/rknn_server.pb.h"
#include "rknn_api.h"

namespace orknn::server {

// Bytes per element of a C API tensor type; 0 for types without a whole byte size (INT4) or
// values outside the enum.
size_t element_bytes(uint32_t dtype);

// `attribute` is the model's input attribute (RKNN_QUERY_INPUT_ATTR), `native` its native one
// (RKNN_QUERY_NATIVE_INPUT_ATTR). Returns an empty string when the tensor is acceptable.
std::string check_input_tensor(const openrknn::server::v1::Tensor& tensor,
                               const rknn_tensor_attr& attribute, const rknn_tensor_attr& native);

std::string dims_text(const uint32_t* dims, size_t count);

}  // namespace orknn::server
