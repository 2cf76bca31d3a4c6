// Assembling a container from section payloads: header, section table, sections, checksums.
// It does not look inside the sections; ModelBuilder::serialize() verifies its result, and tests
// use it directly to produce files with deliberately broken graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orknn::model {

struct SectionPayload {
  uint32_t kind = 0;
  uint32_t flags = 0;  // kSectionFlagRequired for kinds a reader must understand
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint64_t alignment = 1;  // the section's file offset is a multiple of this
};

// Layout: the 64-byte header, the section table right after it, then the sections in the given
// order, each preceded by the zero padding its alignment needs. Every CRC is filled in.
std::vector<uint8_t> assemble_container(const std::vector<SectionPayload>& sections);

}  // namespace orknn::model
