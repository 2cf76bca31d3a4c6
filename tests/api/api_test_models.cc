#include "api/api_test_models.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "core/dtype.h"
#include "model/model_builder.h"

namespace orknn::api_testing {
namespace {

using model::Attr;
using model::ModelBuilder;
using model::Quantization;

const float kMean[3] = {10, 20, 30};
const float kStd[3] = {2, 4, 8};
const float kScale[3] = {1, 2, 3};
const float kShift[3] = {-1, 0, 1};

std::vector<uint8_t> serialize_or_throw(const ModelBuilder& builder) {
  auto bytes = builder.serialize();
  if (!bytes.ok()) throw std::runtime_error(bytes.status().message());
  return std::move(bytes).value();
}

// Adds a [1,3,1,1] constant holding `values` in the precision's representation.
int add_channel_constant(ModelBuilder& builder, const std::string& name, const float* values,
                         Precision precision) {
  const std::vector<int64_t> shape = {1, 3, 1, 1};
  switch (precision) {
    case Precision::kFloat32:
      return builder.add_constant_f32(name, shape, {values[0], values[1], values[2]});
    case Precision::kFloat16: {
      Float16Bits halves[3];
      for (int i = 0; i < 3; ++i) halves[i] = float_to_half(values[i]);
      return builder.add_constant(name, DataType::kFloat16, shape, halves, sizeof(halves));
    }
    case Precision::kInt8: {
      // Values are small integers: scale 1/16 represents them exactly.
      int8_t quantized[3];
      for (int i = 0; i < 3; ++i) quantized[i] = static_cast<int8_t>(values[i] * 16);
      return builder.add_constant(name, DataType::kInt8, shape, quantized, sizeof(quantized),
                                  Quantization{{1.0f / 16}, {0}, 0});
    }
  }
  return -1;
}

}  // namespace

std::vector<uint8_t> build_affine_model(const AffineModelOptions& options) {
  ModelBuilder builder;
  const DataType type = options.precision == Precision::kFloat32   ? DataType::kFloat32
                        : options.precision == Precision::kFloat16 ? DataType::kFloat16
                                                                   : DataType::kInt8;
  const bool int8 = options.precision == Precision::kInt8;
  const Quantization input_q = int8 ? Quantization{{1.0f / 16}, {0}, 0} : Quantization{};
  const Quantization output_q = int8 ? Quantization{{1.0f / 8}, {-8}, 0} : Quantization{};
  const int64_t n = options.batch;
  const int x = builder.add_tensor("x", type, {n, 3, 2, 2}, input_q);
  const int scale = add_channel_constant(builder, "scale", kScale, options.precision);
  const int shift = add_channel_constant(builder, "shift", kShift, options.precision);
  const int scaled = builder.add_tensor("scaled", type, {n, 3, 2, 2}, output_q);
  const int y = builder.add_tensor("y", type, {n, 3, 2, 2}, output_q);
  const int z = builder.add_tensor("z", type, {n, 12}, output_q);
  builder.add_node("Mul", {x, scale}, {scaled}, {}, "mul");
  builder.add_node("Add", {scaled, shift}, {y}, {}, "add");
  builder.add_node("Flatten", {y}, {z}, {Attr::i("axis", 1)}, "flatten");
  model::InputOptions input_options;
  input_options.mean = {kMean[0], kMean[1], kMean[2]};
  input_options.std = {kStd[0], kStd[1], kStd[2]};
  input_options.nhwc_layout = true;
  input_options.reverse_channels = options.reverse_channels;
  builder.add_input(x, input_options);
  builder.add_output(y);
  builder.add_output(z);
  builder.set_target_platform(options.target_platform);
  builder.set_custom_string(options.custom_string);
  builder.set_producer("api-tests", "1");
  builder.set_source_framework("ONNX");
  return serialize_or_throw(builder);
}

std::vector<float> affine_model_expected(const std::vector<float>& user_nhwc,
                                         bool reverse_channels) {
  std::vector<float> expected(12);
  for (int c = 0; c < 3; ++c) {
    const int source_channel = reverse_channels ? 2 - c : c;
    for (int s = 0; s < 4; ++s) {
      const float normalised = (user_nhwc[s * 3 + source_channel] - kMean[c]) / kStd[c];
      expected[c * 4 + s] = normalised * kScale[c] + kShift[c];
    }
  }
  return expected;
}

std::vector<uint8_t> build_chain_model(int depth) {
  ModelBuilder builder;
  int current = builder.add_tensor("input", DataType::kFloat32, {1, 16});
  builder.add_input(current);
  const int half = builder.add_constant_f32("half", {1}, {0.5f});
  for (int i = 0; i < depth; ++i) {
    const int next = builder.add_tensor("t" + std::to_string(i), DataType::kFloat32, {1, 16});
    builder.add_node("Add", {current, half}, {next}, {}, "add" + std::to_string(i));
    current = next;
  }
  builder.add_output(current);
  builder.set_target_platform("rk3588");
  return serialize_or_throw(builder);
}

std::vector<uint8_t> build_dynamic_model() {
  ModelBuilder builder;
  const int x = builder.add_tensor("x", DataType::kFloat32, {1, 3, 4, 4});
  const int two = builder.add_constant_f32("two", {1}, {2.0f});
  const int one = builder.add_constant_f32("one", {1}, {1.0f});
  const int doubled = builder.add_tensor("doubled", DataType::kFloat32, {1, 3, 4, 4});
  const int y = builder.add_tensor("y", DataType::kFloat32, {1, 3, 4, 4});
  builder.add_node("Mul", {x, two}, {doubled}, {}, "mul");
  builder.add_node("Add", {doubled, one}, {y}, {}, "add");
  model::InputOptions input_options;
  input_options.nhwc_layout = true;
  builder.add_input(x, input_options);
  builder.add_output(y);
  builder.add_dynamic_shape_set({{1, 3, 4, 4}});
  builder.add_dynamic_shape_set({{1, 3, 8, 8}});
  builder.add_dynamic_shape_set({{1, 3, 2, 6}});
  builder.set_target_platform("rk3588");
  return serialize_or_throw(builder);
}

std::string write_temporary_file(const std::vector<uint8_t>& bytes, const std::string& tag) {
  char path[] = "/tmp/orknn-test-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  std::string name = std::string(path) + "-" + tag + ".rknn";
  std::rename(path, name.c_str());
  std::ofstream out(name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return name;
}

}  // namespace orknn::api_testing
