// NumPy .npy files (format 1.0/2.0, little-endian, C order) in and out of rknn-client.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orknn::client {

struct NpyArray {
  uint32_t dtype = 0;  // rknn_tensor_type value
  std::vector<uint32_t> shape;
  std::string data;
};

// False with `error` for files that are not .npy, Fortran order, big-endian or of a dtype
// the runtime has no type for.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);
bool write_npy(const std::string& path, const NpyArray& array, std::string* error);

}  // namespace orknn::client
