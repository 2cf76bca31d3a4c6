#include "dataset/npy_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/dtype.h"

namespace orknn::convert {
namespace {

// Extracts the value of 'key' from the header dict text ("{'descr': '<f4', ...}").
std::string header_value(const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "'";
  size_t position = header.find(quoted);
  if (position == std::string::npos) return "";
  position = header.find(':', position + quoted.size());
  if (position == std::string::npos) return "";
  ++position;
  while (position < header.size() && header[position] == ' ') ++position;
  if (position >= header.size()) return "";
  if (header[position] == '\'') {
    const size_t end = header.find('\'', position + 1);
    return end == std::string::npos ? "" : header.substr(position + 1, end - position - 1);
  }
  if (header[position] == '(') {
    const size_t end = header.find(')', position);
    return end == std::string::npos ? "" : header.substr(position, end - position + 1);
  }
  const size_t end = header.find_first_of(",}", position);
  return header.substr(position, end - position);
}

}  // namespace

Result<NpyArray> read_npy(const std::string& path) {
  const std::string what = "'" + path + "'";
  std::ifstream file(path, std::ios::binary);
  if (!file) return invalid_argument(what, ": cannot open the file");
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string bytes = buffer.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return invalid_argument(what, ": not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_length;
  size_t header_start;
  if (major == 1) {
    header_length =
        static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalid_argument(what, ": truncated header");
    header_length = 0;
    for (int i = 0; i < 4; ++i)
      header_length |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return invalid_argument(what, ": .npy format version ", major, " is not supported");
  }
  if (header_start + header_length > bytes.size())
    return invalid_argument(what, ": truncated header");
  const std::string header = bytes.substr(header_start, header_length);
  NpyArray array;
  std::string descr = header_value(header, "descr");
  const bool fortran_order =
      header_value(header, "fortran_order").find("True") != std::string::npos;
  if (descr.size() < 2) return invalid_argument(what, ": no dtype in the header");
  if (descr[0] == '>') return invalid_argument(what, ": big-endian data is not supported");
  if (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') descr = descr.substr(1);
  array.dtype = descr;
  std::string shape_text = header_value(header, "shape");
  for (char& c : shape_text) {
    if (c == '(' || c == ')' || c == ',') c = ' ';
  }
  std::stringstream shape_stream(shape_text);
  int64_t dimension;
  int64_t count = 1;
  while (shape_stream >> dimension) {
    if (dimension < 0) return invalid_argument(what, ": negative dimension");
    array.shape.push_back(dimension);
    count *= dimension;
  }
  size_t size;
  const char kind = descr[0];
  try {
    size = std::stoul(descr.substr(1));
  } catch (const std::exception&) {
    return invalid_argument(what, ": dtype '", descr, "' is not supported");
  }
  const bool known =
      (kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
      ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
      (kind == 'b' && size == 1);
  if (!known) return invalid_argument(what, ": dtype '", descr, "' is not supported");
  const size_t data_start = header_start + header_length;
  const size_t needed = static_cast<size_t>(count) * size;
  if (bytes.size() - data_start < needed) {
    return invalid_argument(what, ": holds ", bytes.size() - data_start,
                            " data bytes but shape and dtype need ", needed, " (truncated)");
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data() + data_start);
  array.values.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < array.values.size(); ++i) {
    const uint8_t* element = data + i * size;
    double value = 0;
    if (kind == 'f') {
      if (size == 2) {
        uint16_t bits;
        std::memcpy(&bits, element, 2);
        value = half_to_float(bits);
      } else if (size == 4) {
        float v;
        std::memcpy(&v, element, 4);
        value = v;
      } else {
        std::memcpy(&value, element, 8);
      }
    } else if (kind == 'b') {
      value = element[0] ? 1 : 0;
    } else {
      uint64_t bits = 0;
      std::memcpy(&bits, element, size);
      if (kind == 'i' && size < 8 && (bits >> (8 * size - 1)) & 1)
        bits |= ~uint64_t{0} << (8 * size);
      value =
          kind == 'i' ? static_cast<double>(static_cast<int64_t>(bits)) : static_cast<double>(bits);
    }
    array.values[i] = value;
  }
  if (fortran_order && array.shape.size() > 1) {
    // Column-major (numpy writes it for transposed arrays): reorder into C order.
    const size_t rank = array.shape.size();
    std::vector<double> reordered(array.values.size());
    std::vector<int64_t> index(rank, 0);
    for (size_t c = 0; c < reordered.size(); ++c) {
      // `index` walks the array in C order; its column-major offset is where the value is.
      size_t offset = 0;
      size_t stride = 1;
      for (size_t d = 0; d < rank; ++d) {
        offset += static_cast<size_t>(index[d]) * stride;
        stride *= static_cast<size_t>(array.shape[d]);
      }
      reordered[c] = array.values[offset];
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < array.shape[d]) break;
        index[d] = 0;
      }
    }
    array.values = std::move(reordered);
  }
  return array;
}

Status write_npy_float32(const std::string& path, const std::vector<int64_t>& shape,
                         const float* values) {
  std::string shape_text = "(";
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    shape_text +=
        std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
    count *= shape[i];
  }
  shape_text += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text + ", }";
  // Pad so the data starts on a 64-byte boundary, ending the header with a newline.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  if (!file) return invalid_argument("cannot write '", path, "'");
  const char magic[] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  file.write(magic, sizeof(magic));
  const uint16_t length = static_cast<uint16_t>(header.size());
  const char length_bytes[] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  file.write(length_bytes, 2);
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  file.write(reinterpret_cast<const char*>(values),
             static_cast<std::streamsize>(count * sizeof(float)));
  if (!file) return invalid_argument("cannot write '", path, "'");
  return ok_status();
}

}  // namespace orknn::convert
