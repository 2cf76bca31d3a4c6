// Verification of the container level of a model file: header, section table, section bounds,
// checksums and padding. The graph inside the GRAPH section is checked by graph_verifier.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace orknn::model {

// Where the sections a version-1 reader uses sit in a verified file.
struct ContainerLayout {
  uint32_t format_version = 0;
  uint64_t graph_offset = 0;
  uint64_t graph_size = 0;
  bool has_weights = false;
  uint64_t weights_offset = 0;  // a multiple of kWeightsAlignment
  uint64_t weights_size = 0;
};

// Checks every byte of [data, data + size): after success each byte is known to belong to the
// header, the section table or a section with a matching CRC, or to be zero padding. Reads nothing
// outside the range, whatever the bytes say. Vendor-compiled RKNN files are refused with a message
// naming their version and target platform. Errors are kInvalidModel.
Result<ContainerLayout> read_container(const uint8_t* data, size_t size);

}  // namespace orknn::model
