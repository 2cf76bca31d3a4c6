#include "model/crc32.h"

#include <array>

namespace orknn::model {
namespace {

// One table entry per byte value: the remainder of that byte shifted through eight steps of the
// bitwise algorithm. Built at compile time so there is no initialisation order to think about.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t remainder = byte;
    for (int bit = 0; bit < 8; ++bit) {
      remainder = (remainder & 1u) ? (remainder >> 1) ^ 0xEDB88320u : remainder >> 1;
    }
    table[byte] = remainder;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32_update(uint32_t state, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    state = kTable[(state ^ bytes[i]) & 0xFFu] ^ (state >> 8);
  }
  return state;
}

uint32_t crc32(const void* data, size_t size) {
  return crc32_finish(crc32_update(kCrc32Initial, data, size));
}

}  // namespace orknn::model
