// Byte layout of the open model container, version 1 (docs/model-format.md is the specification).
//
// Every multi-byte field is little-endian and is read and written one byte at a time, so the
// layout never depends on the host's endianness, struct padding or alignment rules. The structs
// below are plain values; only encode_*/decode_* know where their fields sit in the file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace orknn::model {

// --- Constants --------------------------------------------------------------------------------

inline constexpr std::array<uint8_t, 8> kModelMagic = {'O', 'R', 'K', 'N', 'N', 'M', 'D', 'L'};
inline constexpr uint32_t kFormatVersion = 1;  // the newest version this code reads and writes
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr uint32_t kSectionEntrySize = 32;
// Weights are used in place by the runtime (SIMD loads, DMA to the NPU), so the weights section and
// every constant inside it start on this boundary.
inline constexpr uint64_t kWeightsAlignment = 64;
// RKNN_QUERY_CUSTOM_STRING hands the string back in a 1024-byte buffer with a terminating zero.
inline constexpr size_t kMaxCustomStringBytes = 1023;

enum class SectionKind : uint32_t {
  kGraph = 1,    // serialized orknn.model.proto.Model
  kWeights = 2,  // raw constant data, addressed by Tensor.data_offset
};

// Section entry flag: a reader that does not know the section's kind must refuse the file
// instead of skipping the section.
inline constexpr uint32_t kSectionFlagRequired = 1u << 0;

// --- Little-endian field access ---------------------------------------------------------------

inline uint32_t load_u32_le(const uint8_t* bytes) {
  return static_cast<uint32_t>(bytes[0]) | static_cast<uint32_t>(bytes[1]) << 8 |
         static_cast<uint32_t>(bytes[2]) << 16 | static_cast<uint32_t>(bytes[3]) << 24;
}
inline uint64_t load_u64_le(const uint8_t* bytes) {
  return static_cast<uint64_t>(load_u32_le(bytes)) | static_cast<uint64_t>(load_u32_le(bytes + 4))
                                                         << 32;
}
inline void store_u32_le(uint8_t* bytes, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}
inline void store_u64_le(uint8_t* bytes, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}

// --- File header: the first 64 bytes ----------------------------------------------------------

struct FileHeader {
  std::array<uint8_t, 8> magic = kModelMagic;
  uint32_t format_version = kFormatVersion;
  uint32_t header_size = kHeaderSize;
  uint32_t section_count = 0;
  uint32_t flags = 0;  // no flag is defined in version 1; every bit must be zero
  uint64_t file_size = 0;
  uint64_t section_table_offset = 0;
  uint32_t header_crc32 = 0;         // CRC of the 64 header bytes with this field zeroed
  uint32_t section_table_crc32 = 0;  // CRC of the section_count x 32 bytes of the section table
  std::array<uint8_t, 16> reserved{};
};

namespace header_field {  // byte offsets inside the header
inline constexpr size_t kMagic = 0;
inline constexpr size_t kFormatVersion = 8;
inline constexpr size_t kHeaderSize = 12;
inline constexpr size_t kSectionCount = 16;
inline constexpr size_t kFlags = 20;
inline constexpr size_t kFileSize = 24;
inline constexpr size_t kSectionTableOffset = 32;
inline constexpr size_t kHeaderCrc32 = 40;
inline constexpr size_t kSectionTableCrc32 = 44;
inline constexpr size_t kReserved = 48;
}  // namespace header_field

inline void encode_header(const FileHeader& header, uint8_t* out /* kHeaderSize bytes */) {
  for (size_t i = 0; i < header.magic.size(); ++i) out[header_field::kMagic + i] = header.magic[i];
  store_u32_le(out + header_field::kFormatVersion, header.format_version);
  store_u32_le(out + header_field::kHeaderSize, header.header_size);
  store_u32_le(out + header_field::kSectionCount, header.section_count);
  store_u32_le(out + header_field::kFlags, header.flags);
  store_u64_le(out + header_field::kFileSize, header.file_size);
  store_u64_le(out + header_field::kSectionTableOffset, header.section_table_offset);
  store_u32_le(out + header_field::kHeaderCrc32, header.header_crc32);
  store_u32_le(out + header_field::kSectionTableCrc32, header.section_table_crc32);
  for (size_t i = 0; i < header.reserved.size(); ++i) {
    out[header_field::kReserved + i] = header.reserved[i];
  }
}

inline FileHeader decode_header(const uint8_t* in /* kHeaderSize bytes */) {
  FileHeader header;
  for (size_t i = 0; i < header.magic.size(); ++i) header.magic[i] = in[header_field::kMagic + i];
  header.format_version = load_u32_le(in + header_field::kFormatVersion);
  header.header_size = load_u32_le(in + header_field::kHeaderSize);
  header.section_count = load_u32_le(in + header_field::kSectionCount);
  header.flags = load_u32_le(in + header_field::kFlags);
  header.file_size = load_u64_le(in + header_field::kFileSize);
  header.section_table_offset = load_u64_le(in + header_field::kSectionTableOffset);
  header.header_crc32 = load_u32_le(in + header_field::kHeaderCrc32);
  header.section_table_crc32 = load_u32_le(in + header_field::kSectionTableCrc32);
  for (size_t i = 0; i < header.reserved.size(); ++i) {
    header.reserved[i] = in[header_field::kReserved + i];
  }
  return header;
}

// --- Section table entry: 32 bytes each -------------------------------------------------------

struct SectionEntry {
  uint32_t kind = 0;    // a SectionKind value, or a kind from a newer writer
  uint32_t flags = 0;   // kSectionFlagRequired; the other bits are reserved and ignored
  uint64_t offset = 0;  // from the start of the file
  uint64_t size = 0;
  uint32_t crc32 = 0;  // CRC of the section's `size` bytes
  uint32_t reserved = 0;
};

namespace section_field {  // byte offsets inside one entry
inline constexpr size_t kKind = 0;
inline constexpr size_t kFlags = 4;
inline constexpr size_t kOffset = 8;
inline constexpr size_t kSize = 16;
inline constexpr size_t kCrc32 = 24;
inline constexpr size_t kReserved = 28;
}  // namespace section_field

inline void encode_section_entry(const SectionEntry& entry, uint8_t* out /* 32 bytes */) {
  store_u32_le(out + section_field::kKind, entry.kind);
  store_u32_le(out + section_field::kFlags, entry.flags);
  store_u64_le(out + section_field::kOffset, entry.offset);
  store_u64_le(out + section_field::kSize, entry.size);
  store_u32_le(out + section_field::kCrc32, entry.crc32);
  store_u32_le(out + section_field::kReserved, entry.reserved);
}

inline SectionEntry decode_section_entry(const uint8_t* in /* 32 bytes */) {
  SectionEntry entry;
  entry.kind = load_u32_le(in + section_field::kKind);
  entry.flags = load_u32_le(in + section_field::kFlags);
  entry.offset = load_u64_le(in + section_field::kOffset);
  entry.size = load_u64_le(in + section_field::kSize);
  entry.crc32 = load_u32_le(in + section_field::kCrc32);
  entry.reserved = load_u32_le(in + section_field::kReserved);
  return entry;
}

// "GRAPH", "WEIGHTS", or "kind N" for a kind this version does not know.
inline std::string section_kind_name(uint32_t kind) {
  switch (kind) {
    case static_cast<uint32_t>(SectionKind::kGraph):
      return "GRAPH";
    case static_cast<uint32_t>(SectionKind::kWeights):
      return "WEIGHTS";
    default:
      return "kind " + std::to_string(kind);
  }
}

}  // namespace orknn::model
