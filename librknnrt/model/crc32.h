// CRC-32/ISO-HDLC (the zlib/PNG/Ethernet CRC): reflected polynomial 0xEDB88320, initial value
// and final xor 0xFFFFFFFF. It protects every byte of a model file (docs/model-format.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace orknn::model {

// CRC of `size` bytes at `data`. `data` may be null when `size` is 0.
uint32_t crc32(const void* data, size_t size);

// Incremental form, for data that is not contiguous: start with kCrc32Initial, feed the pieces in
// order with crc32_update, and finish with crc32_finish.
constexpr uint32_t kCrc32Initial = 0xFFFFFFFFu;
uint32_t crc32_update(uint32_t state, const void* data, size_t size);
inline uint32_t crc32_finish(uint32_t state) {
  return state ^ 0xFFFFFFFFu;
}

}  // namespace orknn::model
