#include <cstdio>
#include <cstring>

#include "model/container_writer.h"
#include "model/crc32.h"
#include "model/model_file.h"
#include "model/protobuf_log_silencer.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace orknn::model::testing {

SampleModel make_sample_model() {
  SampleModel sample;
  ModelBuilder& builder = sample.builder;
  builder.set_producer("model-tests", "1.2.3");
  builder.set_target_platform("rk3588");
  builder.set_custom_string("sample custom string");
  builder.set_source_framework("ONNX");

  sample.input = builder.add_tensor("input", DataType::kFloat32, {1, 3, 4, 4});
  sample.aux = builder.add_tensor("aux", DataType::kInt8, {1, 2, 4, 4}, {{0.125f}, {-3}, 0});
  const int8_t weight_values[6] = {1, -2, 3, -4, 5, -6};
  sample.weight = builder.add_constant("conv.weight", DataType::kInt8, {2, 3, 1, 1}, weight_values,
                                       sizeof(weight_values), {{0.5f, 0.25f}, {0, 0}, 0});
  sample.bias = builder.add_constant_f32("conv.bias", {2}, {0.5f, -1.0f});
  sample.conv_out = builder.add_tensor("conv.out", DataType::kFloat32, {1, 2, 4, 4});
  sample.aux_float = builder.add_tensor("aux.float", DataType::kFloat32, {1, 2, 4, 4});
  sample.sum = builder.add_tensor("sum", DataType::kFloat32, {1, 2, 4, 4});
  sample.clip_max = builder.add_constant_f32("clip.max", {}, {6.0f});
  sample.clipped = builder.add_tensor("clipped", DataType::kFloat32, {1, 2, 4, 4});
  sample.activated = builder.add_tensor("activated", DataType::kFloat32, {1, 2, 4, 4});
  sample.upsampled = builder.add_tensor("upsampled", DataType::kFloat32, {1, 2, 8, 8});
  sample.shape = builder.add_constant_i64("reshape.shape", {2}, {1, -1});
  sample.flat = builder.add_tensor("flat", DataType::kFloat32, {1, 128});

  builder.add_node(
      "Conv", {sample.input, sample.weight, sample.bias}, {sample.conv_out},
      {Attr::ints("kernel_shape", {1, 1}), Attr::ints("pads", {0, 0, 0, 0}),
       Attr::ints("strides", {1, 1}), Attr::i("group", 1), Attr::s("auto_pad", "NOTSET")},
      "conv");
  builder.add_node("Cast", {sample.aux}, {sample.aux_float}, {Attr::i("to", 1)}, "cast");
  builder.add_node("Add", {sample.conv_out, sample.aux_float}, {sample.sum});
  builder.add_node("Clip", {sample.sum, -1, sample.clip_max}, {sample.clipped}, {}, "clip");
  builder.add_node("LeakyRelu", {sample.clipped}, {sample.activated}, {Attr::f("alpha", 0.1f)},
                   "leaky");
  builder.add_node("Upsample", {sample.activated}, {sample.upsampled},
                   {Attr::s("mode", "nearest"), Attr::floats("scales", {1, 1, 2, 2})}, "up");
  builder.add_node("Reshape", {sample.upsampled, sample.shape}, {sample.flat}, {}, "reshape");

  builder.add_input(sample.input, {{0.5f, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f}, true, true});
  builder.add_input(sample.aux);
  builder.add_output(sample.upsampled);
  builder.add_output(sample.flat);
  builder.add_dynamic_shape_set({{1, 3, 4, 4}, {1, 2, 4, 4}});
  builder.add_dynamic_shape_set({{1, 3, 8, 8}, {1, 2, 8, 8}});
  return sample;
}

std::vector<uint8_t> sample_model_bytes() {
  Result<std::vector<uint8_t>> bytes = make_sample_model().builder.serialize();
  if (!bytes.ok())
    fail_msg("sample model does not serialize: %s", bytes.status().message().c_str());
  return std::move(bytes).value();
}

std::vector<uint8_t> pack_unverified(const proto::Model& graph,
                                     const std::vector<uint8_t>& weights) {
  std::string graph_bytes;
  {
    const ProtobufLogSilencer silence;  // tests pack strings that are not UTF-8 on purpose
    graph_bytes = graph.SerializeAsString();
  }
  std::vector<SectionPayload> sections;
  sections.push_back({static_cast<uint32_t>(SectionKind::kGraph), kSectionFlagRequired,
                      reinterpret_cast<const uint8_t*>(graph_bytes.data()), graph_bytes.size()});
  if (!weights.empty()) {
    sections.push_back({static_cast<uint32_t>(SectionKind::kWeights), kSectionFlagRequired,
                        weights.data(), weights.size(), kWeightsAlignment});
  }
  return assemble_container(sections);
}

FileHeader read_header(const std::vector<uint8_t>& file) {
  assert_true(file.size() >= kHeaderSize);
  return decode_header(file.data());
}

void write_header(std::vector<uint8_t>* file, const FileHeader& header) {
  assert_true(file->size() >= kHeaderSize);
  encode_header(header, file->data());
}

SectionEntry read_section(const std::vector<uint8_t>& file, int index) {
  const uint64_t at = read_header(file).section_table_offset + uint64_t(index) * kSectionEntrySize;
  assert_true(at + kSectionEntrySize <= file.size());
  return decode_section_entry(file.data() + at);
}

void write_section(std::vector<uint8_t>* file, int index, const SectionEntry& entry) {
  const uint64_t at = read_header(*file).section_table_offset + uint64_t(index) * kSectionEntrySize;
  assert_true(at + kSectionEntrySize <= file->size());
  encode_section_entry(entry, file->data() + at);
}

void reseal(std::vector<uint8_t>* file) {
  FileHeader header = read_header(*file);
  const uint64_t table_size = uint64_t{header.section_count} * kSectionEntrySize;
  const bool table_fits = header.section_table_offset <= file->size() &&
                          table_size <= file->size() - header.section_table_offset;
  if (table_fits) {
    for (uint32_t i = 0; i < header.section_count; ++i) {
      SectionEntry entry = read_section(*file, static_cast<int>(i));
      if (entry.offset <= file->size() && entry.size <= file->size() - entry.offset) {
        entry.crc32 = crc32(file->data() + entry.offset, entry.size);
        write_section(file, static_cast<int>(i), entry);
      }
    }
    header.section_table_crc32 = crc32(file->data() + header.section_table_offset, table_size);
  }
  header.header_crc32 = 0;
  write_header(file, header);
  header.header_crc32 = crc32(file->data(), kHeaderSize);
  write_header(file, header);
}

void expect_error(const Status& status, StatusCode code, std::initializer_list<const char*> words) {
  if (status.ok()) fail_msg("expected %s, but the call succeeded", status_code_name(code));
  if (status.code() != code) {
    fail_msg("expected %s, got %s: %s", status_code_name(code), status_code_name(status.code()),
             status.message().c_str());
  }
  for (const char* word : words) {
    if (status.message().find(word) == std::string::npos) {
      fail_msg("message does not contain \"%s\": %s", word, status.message().c_str());
    }
  }
}

void expect_invalid_model(const std::vector<uint8_t>& file,
                          std::initializer_list<const char*> words) {
  Result<std::shared_ptr<const ModelFile>> model = ModelFile::parse(file);
  expect_error(model.status(), StatusCode::kInvalidModel, words);
}

}  // namespace orknn::model::testing
