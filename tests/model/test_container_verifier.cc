// One test per container rule of docs/model-format.md: each edits a valid file so that exactly
// that rule breaks (resealing the checksums where the edit would otherwise be caught by them),
// and checks the error names the value and the rule.
#include <string>

#include "model/container_writer.h"
#include "model/crc32.h"
#include "model/model_file.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace {

using namespace orknn;
using namespace orknn::model;
using namespace orknn::model::testing;

constexpr int kGraphSection = 0;  // the builder writes GRAPH first, then WEIGHTS
constexpr int kWeightsSection = 1;

void expect_parses(const std::vector<uint8_t>& file) {
  Result<std::shared_ptr<const ModelFile>> model = ModelFile::parse(file);
  if (!model.ok()) fail_msg("expected success: %s", model.status().message().c_str());
}

void test_sample_file_layout(void** state) {
  const std::vector<uint8_t> file = sample_model_bytes();
  const FileHeader header = read_header(file);
  assert_memory_equal(file.data(), "ORKNNMDL", 8);
  assert_int_equal(header.format_version, 1);
  assert_int_equal(header.header_size, 64);
  assert_int_equal(header.section_count, 2);
  assert_int_equal(header.flags, 0);
  assert_int_equal(header.file_size, file.size());
  assert_int_equal(header.section_table_offset, 64);
  const SectionEntry graph = read_section(file, kGraphSection);
  const SectionEntry weights = read_section(file, kWeightsSection);
  assert_int_equal(graph.kind, 1);
  assert_int_equal(graph.flags, kSectionFlagRequired);
  assert_int_equal(graph.offset, 128);
  assert_int_equal(weights.kind, 2);
  assert_int_equal(weights.offset % 64, 0);
  assert_int_equal(weights.offset + weights.size, file.size());
  expect_parses(file);
}

// --- Header ------------------------------------------------------------------------------------

void test_empty_file(void** state) {
  expect_invalid_model({}, {"not an OpenRKNN model"});
}

void test_wrong_magic(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  file[0] = 'X';
  expect_invalid_model(file, {"not an OpenRKNN model", "XRKNNMDL", "ORKNNMDL"});
}

void test_vendor_file_refused(void** state) {
  std::vector<uint8_t> file(64, 0);
  const char magic[] = "RKNN";
  std::copy(magic, magic + 4, file.begin());
  file[8] = 6;
  expect_invalid_model(file, {"vendor-compiled RKNN model", "format version 6", "rknn-convert"});
}

void test_file_shorter_than_header(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  file.resize(40);
  expect_invalid_model(file, {"40 bytes", "smaller than the 64-byte header"});
}

void test_format_version_zero(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.format_version = 0;
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"format_version 0 is invalid"});
}

void test_newer_format_version_names_both(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.format_version = 2;
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"format_version 2", "newer", "(format_version 1)"});
}

void test_header_size(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.header_size = 80;
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"header_size 80 is not 64"});
}

void test_header_crc(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.header_crc32 ^= 1;
  write_header(&file, header);
  expect_invalid_model(file, {"header_crc32", "corrupted header"});
}

void test_header_flags(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.flags = 4;
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"header flags 0x00000004", "does not know"});
}

void test_header_reserved_bytes(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.reserved[3] = 7;
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"header byte 51 is 7", "reserved bytes must be 0"});
}

void test_file_size_truncated_and_extended(void** state) {
  std::vector<uint8_t> truncated = sample_model_bytes();
  const std::string full = std::to_string(truncated.size());
  truncated.pop_back();
  reseal(&truncated);
  expect_invalid_model(truncated, {"file_size ", full.c_str(), "does not match", "truncated"});
  std::vector<uint8_t> extended = sample_model_bytes();
  extended.push_back(0);
  expect_invalid_model(extended, {"file_size ", full.c_str(), "does not match", "extended"});
}

void test_section_count_zero(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.section_count = 0;
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"section_count is 0"});
}

void test_section_table_out_of_bounds(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  FileHeader header = read_header(file);
  header.section_table_offset = file.size() - 16;
  write_header(&file, header);
  reseal(&file);
  const std::string words = "section table: offset " + std::to_string(file.size() - 16) +
                            " + size 64 (2 entries) exceeds file size " +
                            std::to_string(file.size());
  expect_invalid_model(file, {words.c_str()});

  header.section_table_offset = 64;
  header.section_count = 0xFFFFFFFFu;  // 128 GiB of table
  write_header(&file, header);
  reseal(&file);
  expect_invalid_model(file, {"section table", "4294967295 entries", "exceeds file size"});
}

void test_section_table_crc(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  SectionEntry entry = read_section(file, kGraphSection);
  entry.crc32 ^= 0x100;
  write_section(&file, kGraphSection, entry);  // no reseal: the table CRC must notice
  expect_invalid_model(file, {"section_table_crc32", "corrupted section table"});
}

// --- Sections ----------------------------------------------------------------------------------

void edit_section(std::vector<uint8_t>* file, int index, void (*edit)(SectionEntry*)) {
  SectionEntry entry = read_section(*file, index);
  edit(&entry);
  write_section(file, index, entry);
  reseal(file);
}

void test_section_reserved_field(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  edit_section(&file, kGraphSection, [](SectionEntry* entry) { entry->reserved = 1; });
  expect_invalid_model(file, {"section 0 (GRAPH): reserved field is 1"});
}

void test_section_kind_zero(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  edit_section(&file, kWeightsSection, [](SectionEntry* entry) { entry->kind = 0; });
  expect_invalid_model(file, {"section 1 (kind 0): kind 0 is invalid"});
}

void test_section_out_of_bounds(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  const SectionEntry weights = read_section(file, kWeightsSection);
  edit_section(&file, kWeightsSection, [](SectionEntry* entry) { entry->size += 1000; });
  const std::string words = "section 1 (WEIGHTS): offset " + std::to_string(weights.offset) +
                            " + size " + std::to_string(weights.size + 1000) +
                            " exceeds file size " + std::to_string(file.size());
  expect_invalid_model(file, {words.c_str()});
}

void test_section_offset_wraps_around(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  edit_section(&file, kGraphSection, [](SectionEntry* entry) {
    entry->offset = UINT64_MAX - 10;
    entry->size = 100;
  });
  expect_invalid_model(
      file, {"section 0 (GRAPH): offset 18446744073709551605 + size 100", "exceeds file size"});
}

void test_weights_section_unaligned(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  const SectionEntry weights = read_section(file, kWeightsSection);
  edit_section(&file, kWeightsSection, [](SectionEntry* entry) {
    entry->offset -= 32;
    entry->size += 32;
  });
  const std::string words = "section 1 (WEIGHTS): offset " + std::to_string(weights.offset - 32) +
                            " is not a multiple of 64";
  expect_invalid_model(file, {words.c_str()});
}

void test_section_crc(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  file[read_section(file, kGraphSection).offset + 3] ^= 0x10;
  expect_invalid_model(file, {"section 0 (GRAPH): crc32", "corrupted section"});
  std::vector<uint8_t> weights_flipped = sample_model_bytes();
  weights_flipped.back() ^= 0x01;
  expect_invalid_model(weights_flipped, {"section 1 (WEIGHTS): crc32", "corrupted section"});
}

void test_two_graph_sections(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  edit_section(&file, kWeightsSection, [](SectionEntry* entry) { entry->kind = 1; });
  expect_invalid_model(file, {"section 1 (GRAPH): a second GRAPH section"});
}

void test_two_weights_sections(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  edit_section(&file, kGraphSection, [](SectionEntry* entry) { entry->kind = 2; });
  expect_invalid_model(file, {"section 1 (WEIGHTS): a second WEIGHTS section"});
}

void test_no_graph_section(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  edit_section(&file, kGraphSection, [](SectionEntry* entry) {
    entry->kind = 77;
    entry->flags = 0;
  });
  expect_invalid_model(file, {"none of the 2 sections is a GRAPH section"});
}

void test_overlapping_sections(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  const uint64_t graph_offset = read_section(file, kGraphSection).offset;  // 128, 64-aligned
  edit_section(&file, kWeightsSection, [](SectionEntry* entry) { entry->offset = 128; });
  assert_int_equal(graph_offset, 128);
  expect_invalid_model(file, {"overlaps", "section 0 (GRAPH) [128,", "section 1 (WEIGHTS) [128,"});
}

void test_nonzero_padding_between_sections(void** state) {
  // Grow the custom string until the graph does not end on a 64-byte boundary, so a gap exists.
  for (std::string text;; text += "x") {
    SampleModel sample = make_sample_model();
    sample.builder.set_custom_string(text);
    std::vector<uint8_t> file = sample.builder.serialize().value();
    const SectionEntry graph = read_section(file, kGraphSection);
    const SectionEntry weights = read_section(file, kWeightsSection);
    const uint64_t gap = graph.offset + graph.size;
    if (gap == weights.offset) continue;
    file[gap] = 9;
    const std::string words = "byte " + std::to_string(gap) + " is 9";
    expect_invalid_model(file, {words.c_str(), "padding must be 0"});
    return;
  }
}

void test_trailing_bytes(void** state) {
  std::vector<uint8_t> file = sample_model_bytes();
  const size_t original_size = file.size();
  file.resize(original_size + 64, 0);
  FileHeader header = read_header(file);
  header.file_size = file.size();
  write_header(&file, header);
  reseal(&file);
  expect_parses(file);  // zero padding at the end is allowed (a writer may pad to a page)
  file[original_size + 10] = 0x5A;
  const std::string words = "byte " + std::to_string(original_size + 10) + " is 90";
  expect_invalid_model(file, {words.c_str(), "after the last section"});
}

// --- Section kinds and graph decoding -------------------------------------------------------

std::vector<uint8_t> sample_with_extra_section(uint32_t kind, uint32_t flags,
                                               const std::string& payload) {
  const SampleModel sample = make_sample_model();
  const std::string graph = sample.builder.graph().SerializeAsString();
  const std::vector<uint8_t>& weights = sample.builder.weights();
  return assemble_container({
      {1, kSectionFlagRequired, reinterpret_cast<const uint8_t*>(graph.data()), graph.size()},
      {kind, flags, reinterpret_cast<const uint8_t*>(payload.data()), payload.size()},
      {2, kSectionFlagRequired, weights.data(), weights.size(), kWeightsAlignment},
  });
}

void test_unknown_optional_section_is_skipped(void** state) {
  expect_parses(sample_with_extra_section(99, 0, "future data"));
  expect_parses(sample_with_extra_section(99, 0, ""));  // empty sections occupy no bytes
  expect_parses(sample_with_extra_section(99, 0xFFFFFFFEu, "other flag bits are ignored"));
}

void test_unknown_required_section_is_refused(void** state) {
  expect_invalid_model(sample_with_extra_section(99, kSectionFlagRequired, "x"),
                       {"section 1 (kind 99) is marked required", "format_version 1"});
}

void test_graph_section_not_protobuf(void** state) {
  const uint8_t garbage[] = {0xFF, 0xFF, 0xFF, 0xFF};
  const std::vector<uint8_t> file =
      assemble_container({{1, kSectionFlagRequired, garbage, sizeof(garbage)}});
  expect_invalid_model(file, {"GRAPH section (4 bytes)", "not a valid orknn.model.proto.Model"});
}

void test_graph_string_not_utf8(void** state) {
  const SampleModel sample = make_sample_model();
  proto::Model graph = sample.builder.graph();
  graph.mutable_tensors(0)->set_name("bad\xff");
  expect_invalid_model(pack_unverified(graph, sample.builder.weights()),
                       {"not a valid orknn.model.proto.Model", "UTF-8"});
  // The builder cannot write it either.
  SampleModel named = make_sample_model();
  named.builder.add_tensor("bad\xfe", DataType::kFloat32, {1});
  expect_error(named.builder.serialize().status(), StatusCode::kInvalidModel, {"UTF-8"});
}

void test_unknown_protobuf_fields_are_ignored(void** state) {
  const SampleModel sample = make_sample_model();
  std::string graph = sample.builder.graph().SerializeAsString();
  graph += std::string("\xA0\x06\x01", 3);  // field 100, varint 1: from a newer producer
  const std::vector<uint8_t>& weights = sample.builder.weights();
  const std::vector<uint8_t> file = assemble_container({
      {1, kSectionFlagRequired, reinterpret_cast<const uint8_t*>(graph.data()), graph.size()},
      {2, kSectionFlagRequired, weights.data(), weights.size(), kWeightsAlignment},
  });
  expect_parses(file);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sample_file_layout),
      cmocka_unit_test(test_empty_file),
      cmocka_unit_test(test_wrong_magic),
      cmocka_unit_test(test_vendor_file_refused),
      cmocka_unit_test(test_file_shorter_than_header),
      cmocka_unit_test(test_format_version_zero),
      cmocka_unit_test(test_newer_format_version_names_both),
      cmocka_unit_test(test_header_size),
      cmocka_unit_test(test_header_crc),
      cmocka_unit_test(test_header_flags),
      cmocka_unit_test(test_header_reserved_bytes),
      cmocka_unit_test(test_file_size_truncated_and_extended),
      cmocka_unit_test(test_section_count_zero),
      cmocka_unit_test(test_section_table_out_of_bounds),
      cmocka_unit_test(test_section_table_crc),
      cmocka_unit_test(test_section_reserved_field),
      cmocka_unit_test(test_section_kind_zero),
      cmocka_unit_test(test_section_out_of_bounds),
      cmocka_unit_test(test_section_offset_wraps_around),
      cmocka_unit_test(test_weights_section_unaligned),
      cmocka_unit_test(test_section_crc),
      cmocka_unit_test(test_two_graph_sections),
      cmocka_unit_test(test_two_weights_sections),
      cmocka_unit_test(test_no_graph_section),
      cmocka_unit_test(test_overlapping_sections),
      cmocka_unit_test(test_nonzero_padding_between_sections),
      cmocka_unit_test(test_trailing_bytes),
      cmocka_unit_test(test_unknown_optional_section_is_skipped),
      cmocka_unit_test(test_unknown_required_section_is_refused),
      cmocka_unit_test(test_graph_section_not_protobuf),
      cmocka_unit_test(test_graph_string_not_utf8),
      cmocka_unit_test(test_unknown_protobuf_fields_are_ignored),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
