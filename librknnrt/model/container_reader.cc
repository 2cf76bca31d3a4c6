#include "model/container_reader.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "core/logging.h"
#include "model/container_format.h"
#include "model/crc32.h"
#include "model/vendor_model.h"

namespace orknn::model {
namespace {

std::string hex32(uint32_t value) {
  std::ostringstream stream;
  stream << "0x" << std::hex << std::setw(8) << std::setfill('0') << value;
  return stream.str();
}

// A printable rendering of the first bytes of a file, for "this is not a model" messages.
std::string quote_bytes(const uint8_t* data, size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t byte = data[i];
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      text += static_cast<char>(byte);
    } else {
      static const char kDigits[] = "0123456789abcdef";
      text += "\\x";
      text += kDigits[byte >> 4];
      text += kDigits[byte & 0xF];
    }
  }
  return text;
}

// True when [offset, offset + size) lies inside a file of `file_size` bytes, without overflow.
bool range_fits(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// A byte range of the file that some check covers, named for error messages.
struct CoveredRange {
  uint64_t begin;
  uint64_t end;
  std::string name;
};

Status check_magic_and_version(const uint8_t* data, size_t size) {
  if (auto vendor = detect_vendor_model(data, size)) {
    return invalid_model(describe_vendor_model(*vendor));
  }
  const size_t magic_bytes = std::min(size, kModelMagic.size());
  if (size < kModelMagic.size() || !std::equal(data, data + magic_bytes, kModelMagic.begin())) {
    return invalid_model("not an OpenRKNN model: the file starts with \"",
                         quote_bytes(data, magic_bytes), "\", not the magic \"ORKNNMDL\"");
  }
  if (size < kHeaderSize) {
    return invalid_model("file is ", size, " bytes, smaller than the ", kHeaderSize,
                         "-byte header (truncated file)");
  }
  // The version is judged before anything else in the header: a newer version may lay the rest
  // of the header out differently, and its reader deserves a message about versions, not CRCs.
  const uint32_t version = load_u32_le(data + header_field::kFormatVersion);
  if (version == 0) {
    return invalid_model("format_version 0 is invalid (versions start at 1)");
  }
  if (version > kFormatVersion) {
    return invalid_model("model format_version ", version,
                         " is newer than this runtime can read (format_version ", kFormatVersion,
                         "); use a newer OpenRKNN, or convert the model with an rknn-convert that "
                         "writes format_version ",
                         kFormatVersion);
  }
  return ok_status();
}

Status check_header(const uint8_t* data, size_t size, const FileHeader& header) {
  if (header.header_size != kHeaderSize) {
    return invalid_model("header_size ", header.header_size, " is not ", kHeaderSize,
                         " (required by format_version ", header.format_version, ")");
  }
  uint8_t zeroed[kHeaderSize];
  std::copy(data, data + kHeaderSize, zeroed);
  store_u32_le(zeroed + header_field::kHeaderCrc32, 0);
  const uint32_t actual_crc = crc32(zeroed, kHeaderSize);
  if (actual_crc != header.header_crc32) {
    return invalid_model("header_crc32 ", hex32(header.header_crc32),
                         " does not match the CRC of the header ", hex32(actual_crc),
                         " (corrupted header)");
  }
  if (header.flags != 0) {
    return invalid_model("header flags ", hex32(header.flags),
                         " has bits this reader does not know (format_version ",
                         header.format_version, " defines none)");
  }
  for (size_t i = 0; i < header.reserved.size(); ++i) {
    if (header.reserved[i] != 0) {
      return invalid_model("header byte ", header_field::kReserved + i, " is ",
                           static_cast<int>(header.reserved[i]), ", but reserved bytes must be 0");
    }
  }
  if (header.file_size != size) {
    return invalid_model("file_size ", header.file_size, " in the header does not match the ", size,
                         " bytes read (truncated or extended file)");
  }
  if (header.section_count == 0) {
    return invalid_model("section_count is 0: a model needs at least a GRAPH section");
  }
  const uint64_t table_size = static_cast<uint64_t>(header.section_count) * kSectionEntrySize;
  if (!range_fits(header.section_table_offset, table_size, size)) {
    return invalid_model("section table: offset ", header.section_table_offset, " + size ",
                         table_size, " (", header.section_count, " entries) exceeds file size ",
                         size);
  }
  const uint32_t table_crc = crc32(data + header.section_table_offset, table_size);
  if (table_crc != header.section_table_crc32) {
    return invalid_model("section_table_crc32 ", hex32(header.section_table_crc32),
                         " does not match the CRC of the section table ", hex32(table_crc),
                         " (corrupted section table)");
  }
  return ok_status();
}

// Checks one section entry on its own: fields, bounds and CRC.
Status check_section(const uint8_t* data, size_t size, const SectionEntry& entry,
                     const std::string& name) {
  if (entry.reserved != 0) {
    return invalid_model(name, ": reserved field is ", entry.reserved, ", must be 0");
  }
  if (entry.kind == 0) return invalid_model(name, ": kind 0 is invalid");
  if (!range_fits(entry.offset, entry.size, size)) {
    return invalid_model(name, ": offset ", entry.offset, " + size ", entry.size,
                         " exceeds file size ", size);
  }
  if (entry.kind == static_cast<uint32_t>(SectionKind::kWeights) &&
      entry.offset % kWeightsAlignment != 0) {
    return invalid_model(name, ": offset ", entry.offset, " is not a multiple of ",
                         kWeightsAlignment, " (weights must be usable in place)");
  }
  const uint32_t actual_crc = crc32(data + entry.offset, entry.size);
  if (actual_crc != entry.crc32) {
    return invalid_model(name, ": crc32 ", hex32(entry.crc32), " does not match the CRC of its ",
                         entry.size, " bytes ", hex32(actual_crc), " (corrupted section)");
  }
  return ok_status();
}

// Ranges must not overlap, and every byte outside all of them must be zero, so that no byte of
// the file escapes every check (a flipped padding byte is as suspicious as any other).
Status check_coverage(const uint8_t* data, size_t size, std::vector<CoveredRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const CoveredRange& a, const CoveredRange& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t position = 0;
  const CoveredRange* previous = nullptr;
  for (const CoveredRange& range : ranges) {
    if (range.begin == range.end) continue;  // an empty section occupies no bytes
    if (previous != nullptr && range.begin < previous->end) {
      return invalid_model(range.name, " [", range.begin, ", ", range.end, ") overlaps ",
                           previous->name, " [", previous->begin, ", ", previous->end, ")");
    }
    for (uint64_t i = position; i < range.begin; ++i) {
      if (data[i] != 0) {
        return invalid_model("byte ", i, " is ", static_cast<int>(data[i]),
                             " but lies outside the header, the section table and every section "
                             "(padding must be 0)");
      }
    }
    position = range.end;
    previous = &range;
  }
  for (uint64_t i = position; i < size; ++i) {
    if (data[i] != 0) {
      return invalid_model("byte ", i, " is ", static_cast<int>(data[i]),
                           " but lies after the last section (padding must be 0)");
    }
  }
  return ok_status();
}

}  // namespace

Result<ContainerLayout> read_container(const uint8_t* data, size_t size) {
  if (data == nullptr && size != 0) return invalid_model("model data is null");
  ORKNN_RETURN_IF_ERROR(check_magic_and_version(data, size));
  const FileHeader header = decode_header(data);
  ORKNN_RETURN_IF_ERROR(check_header(data, size, header));

  ContainerLayout layout;
  layout.format_version = header.format_version;
  std::vector<CoveredRange> ranges;
  ranges.push_back({0, kHeaderSize, "the header"});
  ranges.push_back({header.section_table_offset,
                    header.section_table_offset +
                        static_cast<uint64_t>(header.section_count) * kSectionEntrySize,
                    "the section table"});
  int graph_sections = 0;
  int weights_sections = 0;
  for (uint32_t index = 0; index < header.section_count; ++index) {
    const SectionEntry entry = decode_section_entry(
        data + header.section_table_offset + static_cast<uint64_t>(index) * kSectionEntrySize);
    const std::string name = str_cat("section ", index, " (", section_kind_name(entry.kind), ")");
    ORKNN_RETURN_IF_ERROR(check_section(data, size, entry, name));
    ranges.push_back({entry.offset, entry.offset + entry.size, name});
    if (entry.kind == static_cast<uint32_t>(SectionKind::kGraph)) {
      if (++graph_sections > 1) return invalid_model(name, ": a second GRAPH section");
      layout.graph_offset = entry.offset;
      layout.graph_size = entry.size;
    } else if (entry.kind == static_cast<uint32_t>(SectionKind::kWeights)) {
      if (++weights_sections > 1) return invalid_model(name, ": a second WEIGHTS section");
      layout.has_weights = true;
      layout.weights_offset = entry.offset;
      layout.weights_size = entry.size;
    } else if (entry.flags & kSectionFlagRequired) {
      return invalid_model(name, " is marked required, but format_version ", header.format_version,
                           " readers do not know this kind");
    } else {
      log_debug("model: skipping optional ", name, " (", entry.size, " bytes)");
    }
  }
  if (graph_sections == 0)
    return invalid_model("none of the ", header.section_count, " sections is a GRAPH section");
  ORKNN_RETURN_IF_ERROR(check_coverage(data, size, std::move(ranges)));
  return layout;
}

}  // namespace orknn::model
