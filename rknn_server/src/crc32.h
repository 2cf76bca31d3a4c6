// CRC-32 as zlib and the IEEE 802.3 standard compute it (reflected polynomial 0xEDB88320,
// initial and final XOR 0xFFFFFFFF): the checksum of a model upload.
#pragma once

#include <cstddef>
#include <cstdint>

namespace orknn::server {

// Continues a CRC over more bytes; start with crc = 0.
uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size);

}  // namespace orknn::server
