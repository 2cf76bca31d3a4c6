#include "model/container_writer.h"

#include <algorithm>

#include "model/container_format.h"
#include "model/crc32.h"

namespace orknn::model {

std::vector<uint8_t> assemble_container(const std::vector<SectionPayload>& sections) {
  const uint64_t table_size = uint64_t{sections.size()} * kSectionEntrySize;
  std::vector<SectionEntry> entries;
  uint64_t end = kHeaderSize + table_size;
  for (const SectionPayload& section : sections) {
    const uint64_t alignment = std::max<uint64_t>(section.alignment, 1);
    const uint64_t offset = (end + alignment - 1) / alignment * alignment;
    entries.push_back(
        {section.kind, section.flags, offset, section.size, crc32(section.data, section.size), 0});
    end = offset + section.size;
  }

  std::vector<uint8_t> file(static_cast<size_t>(end), 0);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].size > 0) {
      std::copy(sections[i].data, sections[i].data + sections[i].size,
                file.begin() + static_cast<ptrdiff_t>(entries[i].offset));
    }
    encode_section_entry(entries[i], &file[kHeaderSize + i * kSectionEntrySize]);
  }
  FileHeader header;
  header.section_count = static_cast<uint32_t>(sections.size());
  header.file_size = end;
  header.section_table_offset = kHeaderSize;
  header.section_table_crc32 = crc32(file.data() + kHeaderSize, table_size);
  encode_header(header, file.data());  // header_crc32 is still 0 here, as its definition needs
  store_u32_le(file.data() + header_field::kHeaderCrc32, crc32(file.data(), kHeaderSize));
  return file;
}

}  // namespace orknn::model
