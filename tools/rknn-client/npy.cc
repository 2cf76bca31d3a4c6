#include "npy.h"

#include <fstream>
#include <iterator>

#include "rknn_api.h"

namespace orknn::client {
namespace {

struct DescriptorType {
  const char* descriptor;
  uint32_t dtype;
  size_t bytes;
};

const DescriptorType kTypes[] = {
    {"<f4", RKNN_TENSOR_FLOAT32, 4}, {"<f2", RKNN_TENSOR_FLOAT16, 2},
    {"|i1", RKNN_TENSOR_INT8, 1},    {"|u1", RKNN_TENSOR_UINT8, 1},
    {"<i2", RKNN_TENSOR_INT16, 2},   {"<u2", RKNN_TENSOR_UINT16, 2},
    {"<i4", RKNN_TENSOR_INT32, 4},   {"<u4", RKNN_TENSOR_UINT32, 4},
    {"<i8", RKNN_TENSOR_INT64, 8},   {"|b1", RKNN_TENSOR_BOOL, 1},
};

// The value of 'key' in the header dict, up to the next ',' or '}' (or the closing ')').
std::string header_value(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return std::string();
  size_t start = header.find(':', at);
  if (start == std::string::npos) return std::string();
  ++start;
  while (start < header.size() && header[start] == ' ') ++start;
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    return end == std::string::npos ? std::string() : header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    return end == std::string::npos ? std::string() : header.substr(start + 1, end - start - 1);
  }
  end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

}  // namespace

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot read '" + path + "'";
    return false;
  }
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    *error = path + ": not a .npy file (bad magic)";
    return false;
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_length, header_start;
  if (major == 1) {
    header_length = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 && bytes.size() >= 12) {
    header_length = 0;
    for (int i = 0; i < 4; ++i)
      header_length |= size_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    *error = path + ": .npy version " + std::to_string(major) + " is not 1 or 2";
    return false;
  }
  if (header_start + header_length > bytes.size()) {
    *error = path + ": header runs past the end of the file";
    return false;
  }
  const std::string header = bytes.substr(header_start, header_length);
  if (header_value(header, "fortran_order").find("True") != std::string::npos) {
    *error = path + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)";
    return false;
  }
  const std::string descriptor = header_value(header, "descr");
  size_t item = 0;
  for (const DescriptorType& type : kTypes) {
    if (descriptor == type.descriptor) {
      out->dtype = type.dtype;
      item = type.bytes;
    }
  }
  if (item == 0) {
    *error = path + ": dtype '" + descriptor + "' is not supported";
    return false;
  }
  out->shape.clear();
  uint64_t elements = 1;
  const std::string shape = header_value(header, "shape");
  size_t at = 0;
  while (at < shape.size()) {
    const size_t comma = shape.find(',', at);
    const std::string part =
        shape.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (part.find_first_of("0123456789") != std::string::npos) {
      const unsigned long dim = std::stoul(part);
      out->shape.push_back(static_cast<uint32_t>(dim));
      elements *= dim;
    }
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  const size_t data_start = header_start + header_length;
  if (bytes.size() - data_start != elements * item) {
    *error = path + ": data has " + std::to_string(bytes.size() - data_start) + " bytes, shape (" +
             shape + ") needs " + std::to_string(elements * item);
    return false;
  }
  out->data = bytes.substr(data_start);
  return true;
}

bool write_npy(const std::string& path, const NpyArray& array, std::string* error) {
  const char* descriptor = nullptr;
  for (const DescriptorType& type : kTypes) {
    if (type.dtype == array.dtype) descriptor = type.descriptor;
  }
  if (!descriptor) {
    *error = "no .npy dtype for tensor type " + std::to_string(array.dtype);
    return false;
  }
  std::string shape;
  for (uint32_t dim : array.shape) shape += std::to_string(dim) + ",";
  if (array.shape.size() > 1) shape.pop_back();
  std::string header = std::string("{'descr': '") + descriptor +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  file.write("\x93NUMPY\x01\x00", 8);
  const char length[2] = {static_cast<char>(header.size() & 0xFF),
                          static_cast<char>(header.size() >> 8)};
  file.write(length, 2);
  file << header;
  file.write(array.data.data(), static_cast<std::streamsize>(array.data.size()));
  if (!file) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace orknn::client
