#include "common/op_test_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

// cmocka needs these before its header.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include "devices/cpu/cpu_kernel_registry.h"
#include "graph/op_schema.h"
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

TensorSpec omitted() { return TensorSpec(); }

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

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat32: return "float32";
    case Precision::kFloat16: return "float16";
    case Precision::kInt8: return "int8";
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

// Owns the graph, its constant bytes and the run buffers of one single-node run.
struct SingleNodeModel {
  graph::Graph graph;
  std::vector<std::vector<uint8_t>> constant_bytes;
  std::vector<std::vector<uint8_t>> input_bytes;  // per node input (empty for constants)
};

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
    const size_t given = tensor.data_type == DataType::kFloat32 ? tensor.values.size()
                                                                 : tensor.int_values.size();
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

Result<std::vector<std::vector<float>>> decode_outputs(const SingleNodeModel& model,
                                                       const graph::Node& node,
                                                       const std::vector<std::vector<uint8_t>>& buffers) {
  std::vector<std::vector<float>> outputs;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Tensor& tensor = model.graph.tensor(node.outputs[i]);
    std::vector<float> values(static_cast<size_t>(tensor.elements()));
    if (graph::is_real_valued(tensor)) {
      graph::decode_to_float(tensor, buffers[i].data(), values.data());
    } else if (tensor.data_type == DataType::kInt64) {
      for (size_t j = 0; j < values.size(); ++j) {
        int64_t value;
        std::memcpy(&value, buffers[i].data() + 8 * j, 8);
        values[j] = static_cast<float>(value);
      }
    } else if (tensor.data_type == DataType::kInt32) {
      for (size_t j = 0; j < values.size(); ++j) {
        int32_t value;
        std::memcpy(&value, buffers[i].data() + 4 * j, 4);
        values[j] = static_cast<float>(value);
      }
    } else if (tensor.data_type == DataType::kInt8) {
      for (size_t j = 0; j < values.size(); ++j) values[j] = static_cast<int8_t>(buffers[i][j]);
    } else {
      for (size_t j = 0; j < values.size(); ++j) values[j] = buffers[i][j];
    }
    outputs.push_back(std::move(values));
  }
  return outputs;
}

NodeRun run_node_impl(const NodeSpec& spec, Precision precision,
                      const std::vector<graph::Quantization>& output_quantizations) {
  NodeRun run;
  run.status = check_spec(spec);
  if (!run.status.ok()) return run;

  SingleNodeModel model;
  graph::Graph& graph = model.graph;
  graph::Node node;
  node.name = "node_under_test";
  node.op_type = spec.op_type;
  node.attributes = spec.attributes;
  const std::vector<graph::Quantization> int8_quantizations =
      precision == Precision::kInt8 ? int8_input_quantizations(spec)
                                    : std::vector<graph::Quantization>(spec.inputs.size());

  model.constant_bytes.reserve(spec.inputs.size());
  model.input_bytes.resize(spec.inputs.size());
  std::vector<graph::Shape> shapes;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const TensorSpec& tensor_spec = spec.inputs[i];
    if (tensor_spec.name.empty()) {
      node.inputs.push_back(-1);
      continue;
    }
    Tensor tensor;
    tensor.name = tensor_spec.name;
    tensor.shape = tensor_spec.shape;
    tensor.data_type = tensor_spec.data_type;
    if (is_real_spec(tensor_spec)) {
      if (precision == Precision::kFloat16) tensor.data_type = DataType::kFloat16;
      if (precision == Precision::kInt8) {
        tensor.quantization = int8_quantizations[i];
        tensor.data_type =
            tensor_spec.role == QuantRole::kBias ? DataType::kInt32 : DataType::kInt8;
      }
    }
    std::vector<uint8_t> bytes = encode_values(tensor, tensor_spec);
    if (tensor_spec.constant) {
      model.constant_bytes.push_back(std::move(bytes));
      tensor.constant = true;
      tensor.constant_data = model.constant_bytes.back().data();
      tensor.constant_size = model.constant_bytes.back().size();
    } else {
      model.input_bytes[i] = std::move(bytes);
      graph.inputs.push_back(graph::GraphInput{static_cast<int32_t>(graph.tensors.size())});
    }
    node.inputs.push_back(static_cast<int32_t>(graph.tensors.size()));
    shapes.push_back(tensor.shape);
    graph.tensors.push_back(std::move(tensor));
  }

  const graph::OpSchema* schema = graph::find_op_schema(spec.op_type);
  if (!schema) {
    run.status = unimplemented("no schema for op type ", spec.op_type);
    return run;
  }
  for (int i = 0; i < spec.output_count; ++i) {
    node.outputs.push_back(static_cast<int32_t>(graph.tensors.size() + i));
  }
  std::vector<graph::Shape> output_shapes;
  // Output tensors are appended after shape inference; the context only reads input shapes.
  graph::ShapeInferenceContext shape_context(graph, node, shapes);
  run.status = schema->infer_shapes(shape_context, &output_shapes);
  if (!run.status.ok()) return run;
  if (output_shapes.size() != static_cast<size_t>(spec.output_count)) {
    run.status = internal_failure("shape function gave ", output_shapes.size(), " outputs, spec ",
                                  "expects ", spec.output_count);
    return run;
  }
  for (int i = 0; i < spec.output_count; ++i) {
    Tensor tensor;
    tensor.name = str_cat("output", i);
    tensor.shape = output_shapes[i];
    const bool integer = static_cast<size_t>(i) < spec.integer_outputs.size() &&
                         spec.integer_outputs[i] != DataType::kFloat32;
    if (integer) {
      tensor.data_type = spec.integer_outputs[i];
    } else if (precision == Precision::kFloat16) {
      tensor.data_type = DataType::kFloat16;
    } else if (precision == Precision::kInt8) {
      tensor.data_type = DataType::kInt8;
      tensor.quantization = output_quantizations.at(i);
    }
    shapes.push_back(tensor.shape);
    graph.outputs.push_back(static_cast<int32_t>(graph.tensors.size()));
    graph.tensors.push_back(std::move(tensor));
  }
  graph.nodes.push_back(node);

  auto kernel = devices::cpu::build_cpu_kernel(graph, graph.nodes[0], shapes);
  if (!kernel.ok()) {
    run.status = kernel.take_status();
    return run;
  }
  std::vector<const void*> input_pointers;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] < 0) {
      input_pointers.push_back(nullptr);
    } else {
      const Tensor& tensor = graph.tensor(node.inputs[i]);
      input_pointers.push_back(tensor.is_constant() ? tensor.constant_data
                                                    : model.input_bytes[i].data());
    }
  }
  std::vector<std::vector<uint8_t>> output_buffers;
  std::vector<void*> output_pointers;
  for (int32_t index : node.outputs) {
    // One extra guard byte pattern would not be seen by ASan; exact sizes let ASan catch
    // overruns.
    output_buffers.emplace_back(graph.tensor(index).bytes());
  }
  for (auto& buffer : output_buffers) output_pointers.push_back(buffer.data());
  run.status = kernel.value()->run(input_pointers.data(), output_pointers.data());
  if (!run.status.ok()) return run;
  run.output_shapes = output_shapes;
  auto decoded = decode_outputs(model, node, output_buffers);
  run.outputs = std::move(decoded.value());
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

void check_precisions_agree(const NodeSpec& spec, double float16_tolerance,
                            double int8_tolerance) {
  NodeRun reference = run_node(spec, Precision::kFloat32);
  if (!reference.status.ok()) fail_msg("float32 run failed: %s", reference.status.message().c_str());
  for (Precision precision : {Precision::kFloat16, Precision::kInt8}) {
    NodeRun run = run_node(spec, precision);
    if (!run.status.ok()) {
      fail_msg("%s run failed: %s", precision_name(precision), run.status.message().c_str());
    }
    const double tolerance =
        precision == Precision::kFloat16 ? float16_tolerance : int8_tolerance;
    for (size_t output = 0; output < reference.outputs.size(); ++output) {
      const std::vector<float>& expected = reference.outputs[output];
      const std::vector<float>& actual = run.outputs[output];
      if (actual.size() != expected.size()) fail_msg("%s: output size differs", precision_name(precision));
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

}  // namespace orknn::testing
