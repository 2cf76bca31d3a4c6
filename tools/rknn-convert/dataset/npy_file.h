// NumPy .npy files (format versions 1.0-3.0, little-endian, C order): calibration and analysis
// inputs, and the per-layer snapshots accuracy-analysis writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace orknn::convert {

struct NpyArray {
  std::vector<int64_t> shape;
  std::string dtype;           // numpy descr without byte order: "f4", "u1", "i8", "b1", ...
  std::vector<double> values;  // converted to double (exact for every dtype but 64-bit ints
                               // beyond 2^53, which no image or tensor data needs)
};

// Reads any numeric dtype (bool, int8..int64, uint8..uint64, float16/32/64). Errors name the file.
Result<NpyArray> read_npy(const std::string& path);

// Writes float32 data of `shape` (version 1.0 header).
Status write_npy_float32(const std::string& path, const std::vector<int64_t>& shape,
                         const float* values);

}  // namespace orknn::convert
