#include "common/op_test_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

// cmocka needs these before its header.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include "graph/tensor_conversion.h"

namespace orknn::testing {

using graph::Attribute;
using graph::Shape;
using graph::Tensor;

TensorSpec input(std::string name, Shape shape, std::vector<float> values) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.shape = std::move(shape);
  spec.values = std::move(values);
  return spec;
}

TensorSpec constant(std::string name, Shape shape, std::vector<float> values) {
  TensorSpec spec = input(std::move(name), std::move(shape), std::move(values));
  spec.constant = true;
  return spec;
}

TensorSpec weight(std::string name, Shape shape, std::vector<float> values, int per_channel_axis) {
  TensorSpec spec = constant(std::move(name), std::move(shape), std::move(values));
  spec.role = QuantRole::kWeight;
  spec.per_channel_axis = per_channel_axis;
  return spec;
}

TensorSpec bias(std::string name, Shape shape, std::vector<float> values) {
  TensorSpec spec = constant(std::move(name), std::move(shape), std::move(values));
  spec.role = QuantRole::kBias;
  return spec;
}

TensorSpec int64_constant(std::string name, Shape shape, std::vector<int64_t> values) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.shape = std::move(shape);
  spec.data_type = DataType::kInt64;
  spec.int_values = std::move(values);
  spec.constant = true;
  return spec;
}

TensorSpec omitted() {
  return TensorSpec();
}

Attribute attr_int(int64_t value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInt;
  attribute.int_value = value;
  return attribute;
}
Attribute attr_float(float value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloat;
  attribute.float_value = value;
  return attribute;
}
Attribute attr_string(std::string value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kString;
  attribute.string_value = std::move(value);
  return attribute;
}
Attribute attr_ints(std::vector<int64_t> values) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInts;
  attribute.ints = std::move(values);
  return attribute;
}
Attribute attr_floats(std::vector<float> values) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloats;
  attribute.floats = std::move(values);
  return attribute;
}

NodeSpec node_spec(std::string op_type, std::vector<TensorSpec> inputs, Attributes attributes) {
  NodeSpec spec;
  spec.op_type = std::move(op_type);
  spec.inputs = std::move(inputs);
  spec.attributes = std::move(attributes);
  return spec;
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return "float32";
    case Precision::kFloat16:
      return "float16";
    case Precision::kInt8:
      return "int8";
  }
  return "?";
}

namespace {

bool is_real_spec(const TensorSpec& spec) {
  return spec.data_type == DataType::kFloat32 && spec.role != QuantRole::kKeepFloat;
}

// Asymmetric int8 parameters covering [min(values, 0), max(values, 0)].
graph::Quantization activation_quantization(const std::vector<float>& values) {
  float low = 0.0f, high = 0.0f;
  for (float value : values) {
    if (std::isfinite(value)) {
      low = std::min(low, value);
      high = std::max(high, value);
    }
  }
  float scale = (high - low) / 255.0f;
  if (scale <= 0.0f) scale = 1.0f;
  const int32_t zero_point =
      std::clamp(static_cast<int32_t>(std::nearbyint(-128.0f - low / scale)), -128, 127);
  return graph::Quantization{{scale}, {zero_point}, 0};
}

graph::Quantization weight_quantization(const TensorSpec& spec) {
  const int axis = spec.per_channel_axis;
  const size_t channels =
      axis >= 0 && static_cast<size_t>(axis) < spec.shape.size() ? spec.shape[axis] : 1;
  int64_t inner = 1;
  if (channels > 1 || axis >= 0) {
    for (size_t i = static_cast<size_t>(std::max(axis, 0)) + 1; i < spec.shape.size(); ++i) {
      inner *= spec.shape[i];
    }
  }
  std::vector<float> largest(channels, 0.0f);
  for (size_t i = 0; i < spec.values.size(); ++i) {
    const size_t channel = channels > 1 ? (i / inner) % channels : 0;
    largest[channel] = std::max(largest[channel], std::fabs(spec.values[i]));
  }
  graph::Quantization quantization;
  quantization.axis = std::max(axis, 0);
  for (float value : largest) {
    quantization.scales.push_back(value > 0.0f ? value / 127.0f : 1.0f);
    quantization.zero_points.push_back(0);
  }
  return quantization;
}

std::vector<uint8_t> encode_values(const Tensor& tensor, const TensorSpec& spec) {
  std::vector<uint8_t> bytes(tensor.bytes());
  if (bytes.empty()) return bytes;
  if (spec.data_type == DataType::kFloat32) {
    graph::encode_from_float(tensor, spec.values.data(), bytes.data());
  } else if (spec.data_type == DataType::kInt64) {
    std::memcpy(bytes.data(), spec.int_values.data(), bytes.size());
  } else if (spec.data_type == DataType::kInt32) {
    for (size_t i = 0; i < spec.int_values.size(); ++i) {
      const int32_t value = static_cast<int32_t>(spec.int_values[i]);
      std::memcpy(bytes.data() + 4 * i, &value, 4);
    }
  } else {
    for (size_t i = 0; i < spec.int_values.size() && i < bytes.size(); ++i) {
      bytes[i] = static_cast<uint8_t>(spec.int_values[i]);
    }
  }
  return bytes;
}

Status check_spec(const NodeSpec& spec) {
  for (const TensorSpec& tensor : spec.inputs) {
    if (tensor.name.empty()) continue;
    const size_t expected = static_cast<size_t>(graph::element_count(tensor.shape));
    const size_t given =
        tensor.data_type == DataType::kFloat32 ? tensor.values.size() : tensor.int_values.size();
    if (given != expected) {
      return invalid_argument("test spec: input '", tensor.name, "' has ", given,
                              " values for shape ", graph::shape_to_string(tensor.shape));
    }
  }
  return ok_status();
}

// Quantization of each input for an int8 run; biases need the scales of inputs 0 and 1.
std::vector<graph::Quantization> int8_input_quantizations(const NodeSpec& spec) {
  std::vector<graph::Quantization> result(spec.inputs.size());
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const TensorSpec& tensor = spec.inputs[i];
    if (tensor.name.empty() || !is_real_spec(tensor)) continue;
    if (tensor.role == QuantRole::kWeight) {
      result[i] = weight_quantization(tensor);
    } else if (tensor.role == QuantRole::kActivation) {
      result[i] = activation_quantization(tensor.values);
    }
  }
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (spec.inputs[i].name.empty() || spec.inputs[i].role != QuantRole::kBias) continue;
    const graph::Quantization& input_q = result.at(0);
    const graph::Quantization& weight_q = result.at(1);
    graph::Quantization bias_q;
    for (size_t c = 0; c < weight_q.scales.size(); ++c) {
      bias_q.scales.push_back(input_q.scales.at(0) * weight_q.scales[c]);
      bias_q.zero_points.push_back(0);
    }
    result[i] = bias_q;
  }
  return result;
}

std::vector<float> decode_values(const Tensor& tensor, const std::vector<uint8_t>& bytes) {
  std::vector<float> values(static_cast<size_t>(tensor.elements()));
  if (graph::is_real_valued(tensor)) {
    graph::decode_to_float(tensor, bytes.data(), values.data());
  } else if (tensor.data_type == DataType::kInt64) {
    const std::vector<int64_t> integers = from_bytes<int64_t>(bytes);
    values.assign(integers.begin(), integers.end());
  } else if (tensor.data_type == DataType::kInt32) {
    const std::vector<int32_t> integers = from_bytes<int32_t>(bytes);
    values.assign(integers.begin(), integers.end());
  } else if (tensor.data_type == DataType::kInt8) {
    const std::vector<int8_t> integers = from_bytes<int8_t>(bytes);
    values.assign(integers.begin(), integers.end());
  } else {
    values.assign(bytes.begin(), bytes.end());
  }
  return values;
}

// The input as the graph of a `precision` run stores it.
StoredTensor stored_input(const TensorSpec& spec, Precision precision,
                          const graph::Quantization& int8_quantization) {
  if (spec.name.empty()) return StoredTensor();
  Tensor tensor;
  tensor.shape = spec.shape;
  tensor.data_type = spec.data_type;
  if (is_real_spec(spec)) {
    if (precision == Precision::kFloat16) tensor.data_type = DataType::kFloat16;
    if (precision == Precision::kInt8) {
      tensor.quantization = int8_quantization;
      tensor.data_type = spec.role == QuantRole::kBias ? DataType::kInt32 : DataType::kInt8;
    }
  }
  std::vector<uint8_t> bytes = encode_values(tensor, spec);
  return StoredTensor{spec.name,        tensor.data_type,    spec.shape,
                      std::move(bytes), tensor.quantization, spec.constant};
}

StoredOutput stored_output(const NodeSpec& spec, size_t index, Precision precision,
                           const std::vector<graph::Quantization>& output_quantizations) {
  StoredOutput output;
  const bool integer =
      index < spec.integer_outputs.size() && spec.integer_outputs[index] != DataType::kFloat32;
  if (integer) {
    output.data_type = spec.integer_outputs[index];
  } else if (precision == Precision::kFloat16) {
    output.data_type = DataType::kFloat16;
  } else if (precision == Precision::kInt8) {
    output.data_type = DataType::kInt8;
    output.quantization = output_quantizations.at(index);
  }
  return output;
}

NodeRun run_node_impl(const NodeSpec& spec, Precision precision,
                      const std::vector<graph::Quantization>& output_quantizations) {
  NodeRun run;
  run.status = check_spec(spec);
  if (!run.status.ok()) return run;

  const std::vector<graph::Quantization> int8_quantizations =
      precision == Precision::kInt8 ? int8_input_quantizations(spec)
                                    : std::vector<graph::Quantization>(spec.inputs.size());
  std::vector<StoredTensor> inputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    inputs.push_back(stored_input(spec.inputs[i], precision, int8_quantizations[i]));
  }
  std::vector<StoredOutput> outputs;
  for (size_t i = 0; i < static_cast<size_t>(spec.output_count); ++i) {
    outputs.push_back(stored_output(spec, i, precision, output_quantizations));
  }
  StoredRun stored = run_stored(spec.op_type, inputs, spec.attributes, outputs);
  run.status = stored.status;
  if (!run.status.ok()) return run;
  run.output_shapes = stored.output_shapes;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor tensor;
    tensor.data_type = outputs[i].data_type;
    tensor.shape = stored.output_shapes[i];
    tensor.quantization = outputs[i].quantization;
    run.outputs.push_back(decode_values(tensor, stored.outputs[i]));
  }
  return run;
}

double max_magnitude(const std::vector<float>& values) {
  double largest = 0.0;
  for (float value : values) {
    if (std::isfinite(value)) largest = std::max(largest, static_cast<double>(std::fabs(value)));
  }
  return largest;
}

}  // namespace

NodeRun run_node(const NodeSpec& spec, Precision precision) {
  std::vector<graph::Quantization> output_quantizations;
  if (precision == Precision::kInt8) {
    NodeRun reference = run_node_impl(spec, Precision::kFloat32, {});
    if (!reference.status.ok()) return reference;
    for (const auto& values : reference.outputs) {
      output_quantizations.push_back(activation_quantization(values));
    }
  }
  return run_node_impl(spec, precision, output_quantizations);
}

NodeRun run_ok(const NodeSpec& spec, Precision precision) {
  NodeRun run = run_node(spec, precision);
  if (!run.status.ok()) {
    fail_msg("%s (%s) failed: %s", spec.op_type.c_str(), precision_name(precision),
             run.status.message().c_str());
  }
  return run;
}

void expect_error(const NodeSpec& spec, StatusCode code, const char* fragment) {
  NodeRun run = run_node(spec);
  if (run.status.code() != code) {
    fail_msg("%s: expected %s containing '%s', got %s (%s)", spec.op_type.c_str(),
             status_code_name(code), fragment, status_code_name(run.status.code()),
             run.status.message().c_str());
  }
  if (run.status.message().find(fragment) == std::string::npos) {
    fail_msg("message '%s' lacks '%s'", run.status.message().c_str(), fragment);
  }
}

void expect_invalid_model(const NodeSpec& spec, const char* fragment) {
  expect_error(spec, StatusCode::kInvalidModel, fragment);
}

StoredRun run_stored_ok(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                        const Attributes& attributes, const std::vector<StoredOutput>& outputs) {
  StoredRun run = run_stored(op_type, inputs, attributes, outputs);
  if (!run.status.ok()) {
    fail_msg("%s (stored) failed: %s", op_type.c_str(), run.status.message().c_str());
  }
  return run;
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  double tolerance) {
  if (actual.size() != expected.size()) {
    fail_msg("size mismatch: actual %zu values, expected %zu", actual.size(), expected.size());
  }
  const double bound = tolerance * std::max(1.0, max_magnitude(expected));
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(e) && std::isnan(a)) continue;
    if (std::isinf(e) && a == e) continue;
    if (!(std::fabs(a - e) <= bound)) {
      fail_msg("value %zu: actual %.9g, expected %.9g (allowed error %.3g)", i, a, e, bound);
    }
  }
}

void expect_shape(const Shape& actual, const Shape& expected) {
  if (actual != expected) {
    fail_msg("shape %s, expected %s", graph::shape_to_string(actual).c_str(),
             graph::shape_to_string(expected).c_str());
  }
}

void check_precisions_agree(const NodeSpec& spec, double float16_tolerance, double int8_tolerance) {
  NodeRun reference = run_node(spec, Precision::kFloat32);
  if (!reference.status.ok())
    fail_msg("float32 run failed: %s", reference.status.message().c_str());
  for (Precision precision : {Precision::kFloat16, Precision::kInt8}) {
    NodeRun run = run_node(spec, precision);
    if (!run.status.ok()) {
      fail_msg("%s run failed: %s", precision_name(precision), run.status.message().c_str());
    }
    const double tolerance = precision == Precision::kFloat16 ? float16_tolerance : int8_tolerance;
    for (size_t output = 0; output < reference.outputs.size(); ++output) {
      const std::vector<float>& expected = reference.outputs[output];
      const std::vector<float>& actual = run.outputs[output];
      if (actual.size() != expected.size())
        fail_msg("%s: output size differs", precision_name(precision));
      const double bound = tolerance * std::max(1e-6, max_magnitude(expected));
      double dot = 0, norm_a = 0, norm_e = 0;
      for (size_t i = 0; i < expected.size(); ++i) {
        if (!std::isfinite(expected[i])) continue;
        const double error = std::fabs(static_cast<double>(actual[i]) - expected[i]);
        if (!(error <= bound)) {
          fail_msg("%s output %zu value %zu: %.6g vs float32 %.6g (allowed %.3g)",
                   precision_name(precision), output, i, actual[i], expected[i], bound);
        }
        dot += static_cast<double>(actual[i]) * expected[i];
        norm_a += static_cast<double>(actual[i]) * actual[i];
        norm_e += static_cast<double>(expected[i]) * expected[i];
      }
      if (precision == Precision::kInt8 && expected.size() > 8 && norm_e > 0) {
        const double cosine = dot / std::sqrt(norm_a * norm_e + 1e-30);
        if (cosine < 0.99) fail_msg("int8 output %zu: cosine %.5f < 0.99", output, cosine);
      }
    }
  }
}

std::vector<float> random_values(size_t count, float low, float high, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

std::vector<float> iota_values(size_t count, float first) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

}  // namespace orknn::testing
