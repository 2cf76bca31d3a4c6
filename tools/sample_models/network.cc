#include "network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#ifndef ORKNN_SAMPLE_MODELS_VERSION
#define ORKNN_SAMPLE_MODELS_VERSION "0"
#endif

namespace orknn::sample_models {

using model::Attr;
using model::ModelBuilder;
using model::Quantization;

// ---- Random ---------------------------------------------------------------------------------

uint64_t Random::next() {
  state_ += 0x9e3779b97f4a7c15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float Random::uniform() {
  return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
}

float Random::uniform(float low, float high) {
  return low + (high - low) * uniform();
}

float Random::centered(float deviation) {
  // A uniform distribution on [-a, a] has standard deviation a / sqrt(3).
  const float half_width = deviation * 1.7320508f;
  return uniform(-half_width, half_width);
}

// ---- Network --------------------------------------------------------------------------------

namespace {

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += str_cat(i ? "," : "", shape[i]);
  return text + "]";
}

}  // namespace

int64_t Network::multiply_accumulates() const {
  int64_t total = 0;
  for (const NetworkNode& node : nodes) {
    if (node.op_type != "Conv" && node.op_type != "Gemm") continue;
    const std::vector<int64_t>& weights = tensors[node.inputs[1]].shape;
    const int64_t outputs = element_count(tensors[node.outputs[0]].shape);
    // Conv: each output sums C/group x kh x kw products; Gemm (transB): K products.
    const int64_t per_output =
        node.op_type == "Conv" ? element_count(weights) / weights[0] : weights[1];
    total += outputs * per_output;
  }
  return total;
}

// ---- NetworkBuilder -------------------------------------------------------------------------

NetworkBuilder::NetworkBuilder(std::string name, uint64_t seed) : random_(seed) {
  network_.name = std::move(name);
}

int NetworkBuilder::add_tensor(NetworkTensor tensor) {
  network_.tensors.push_back(std::move(tensor));
  return static_cast<int>(network_.tensors.size()) - 1;
}

int NetworkBuilder::activation(std::string name, std::vector<int64_t> shape) {
  NetworkTensor tensor;
  tensor.name = std::move(name);
  tensor.shape = std::move(shape);
  return add_tensor(std::move(tensor));
}

int NetworkBuilder::constant(std::string name, std::vector<int64_t> shape, TensorRole role,
                             std::vector<float> values) {
  NetworkTensor tensor;
  tensor.name = std::move(name);
  tensor.shape = std::move(shape);
  tensor.role = role;
  tensor.values = std::move(values);
  return add_tensor(std::move(tensor));
}

void NetworkBuilder::node(std::string op_type, std::string name, std::vector<int> inputs,
                          std::vector<int> outputs,
                          std::vector<model::proto::Attribute> attributes) {
  NetworkNode node;
  node.op_type = std::move(op_type);
  node.name = std::move(name);
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.attributes = std::move(attributes);
  network_.nodes.push_back(std::move(node));
}

int NetworkBuilder::input(std::string name, std::vector<int64_t> nchw_shape,
                          model::InputOptions options) {
  const int tensor = activation(std::move(name), std::move(nchw_shape));
  network_.inputs.push_back({tensor, std::move(options)});
  return tensor;
}

int NetworkBuilder::conv(int x, const ConvSpec& spec, const std::string& name) {
  const std::vector<int64_t> in = shape(x);
  const int64_t channels = in[1];
  const int64_t per_group = channels / spec.group;
  const int64_t pad = spec.kernel / 2;
  const int64_t out_h = (in[2] + 2 * pad - spec.kernel) / spec.stride + 1;
  const int64_t out_w = (in[3] + 2 * pad - spec.kernel) / spec.stride + 1;

  // He initialisation keeps the activations' spread roughly constant through Relu6 layers;
  // linear (projection) layers use the smaller LeCun spread.
  const int64_t fan_in = per_group * spec.kernel * spec.kernel;
  const float deviation = std::sqrt((spec.linear ? 1.0f : 2.0f) / static_cast<float>(fan_in));
  std::vector<float> weights(static_cast<size_t>(spec.output_channels * fan_in));
  for (float& w : weights) w = random_.centered(deviation);
  std::vector<float> bias(static_cast<size_t>(spec.output_channels));
  for (float& b : bias) b = random_.centered(0.1f);

  const int w =
      constant(name + ".weight", {spec.output_channels, per_group, spec.kernel, spec.kernel},
               TensorRole::kWeight, std::move(weights));
  const int b =
      constant(name + ".bias", {spec.output_channels}, TensorRole::kBias, std::move(bias));
  const int y = activation(name + ".out", {in[0], spec.output_channels, out_h, out_w});
  std::vector<model::proto::Attribute> attributes = {
      Attr::ints("kernel_shape", {spec.kernel, spec.kernel}),
      Attr::ints("strides", {spec.stride, spec.stride}),
      Attr::ints("pads", {pad, pad, pad, pad}),
      Attr::i("group", spec.group),
  };
  if (spec.fused_relu6) {
    attributes.push_back(Attr::s("activation", "Clip"));
    attributes.push_back(Attr::f("activation_min", 0.0f));
    attributes.push_back(Attr::f("activation_max", 6.0f));
  }
  node("Conv", name, {x, w, b}, {y}, std::move(attributes));
  return y;
}

int NetworkBuilder::relu(int x, const std::string& name) {
  const int y = activation(name + ".out", shape(x));
  node("Relu", name, {x}, {y});
  return y;
}

int NetworkBuilder::clip(int x, float minimum, float maximum, const std::string& name) {
  const int low = constant(name + ".min", {}, TensorRole::kConstant, {minimum});
  const int high = constant(name + ".max", {}, TensorRole::kConstant, {maximum});
  const int y = activation(name + ".out", shape(x));
  node("Clip", name, {x, low, high}, {y});
  return y;
}

int NetworkBuilder::add(int a, int b, const std::string& name) {
  // Numpy broadcasting, right-aligned.
  const std::vector<int64_t>& sa = shape(a);
  const std::vector<int64_t>& sb = shape(b);
  std::vector<int64_t> out(std::max(sa.size(), sb.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < sa.size() ? sa[sa.size() - 1 - i] : 1;
    const int64_t db = i < sb.size() ? sb[sb.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = std::max(da, db);
  }
  const int y = activation(name + ".out", out);
  node("Add", name, {a, b}, {y});
  return y;
}

int NetworkBuilder::mul_per_channel(int x, float low, float high, const std::string& name) {
  const int64_t channels = shape(x)[1];
  std::vector<float> factors(static_cast<size_t>(channels));
  for (float& f : factors) f = random_.uniform(low, high);
  const int factor =
      constant(name + ".factor", {1, channels, 1, 1}, TensorRole::kConstant, std::move(factors));
  const int y = activation(name + ".out", shape(x));
  node("Mul", name, {x, factor}, {y});
  return y;
}

int NetworkBuilder::sigmoid(int x, const std::string& name) {
  const int y = activation(name + ".out", shape(x));
  node("Sigmoid", name, {x}, {y});
  return y;
}

int NetworkBuilder::pool(const char* op_type, int x, int64_t kernel, int64_t stride,
                         const std::string& name) {
  const std::vector<int64_t> in = shape(x);
  const int y = activation(
      name + ".out", {in[0], in[1], (in[2] - kernel) / stride + 1, (in[3] - kernel) / stride + 1});
  node(op_type, name, {x}, {y},
       {Attr::ints("kernel_shape", {kernel, kernel}), Attr::ints("strides", {stride, stride}),
        Attr::ints("pads", {0, 0, 0, 0})});
  return y;
}

int NetworkBuilder::max_pool(int x, int64_t kernel, int64_t stride, const std::string& name) {
  return pool("MaxPool", x, kernel, stride, name);
}

int NetworkBuilder::average_pool(int x, int64_t kernel, int64_t stride, const std::string& name) {
  return pool("AveragePool", x, kernel, stride, name);
}

int NetworkBuilder::global_average_pool(int x, const std::string& name) {
  const std::vector<int64_t> in = shape(x);
  const int y = activation(name + ".out", {in[0], in[1], 1, 1});
  node("GlobalAveragePool", name, {x}, {y});
  return y;
}

int NetworkBuilder::concat(const std::vector<int>& xs, int64_t axis, const std::string& name) {
  std::vector<int64_t> out = shape(xs[0]);
  for (size_t i = 1; i < xs.size(); ++i) out[axis] += shape(xs[i])[axis];
  const int y = activation(name + ".out", out);
  node("Concat", name, xs, {y}, {Attr::i("axis", axis)});
  return y;
}

int NetworkBuilder::flatten(int x, const std::string& name) {
  const std::vector<int64_t> in = shape(x);
  int64_t inner = 1;
  for (size_t i = 1; i < in.size(); ++i) inner *= in[i];
  const int y = activation(name + ".out", {in[0], inner});
  node("Flatten", name, {x}, {y}, {Attr::i("axis", 1)});
  return y;
}

int NetworkBuilder::reshape(int x, std::vector<int64_t> target, const std::string& name) {
  // Resolve one -1 the way ONNX does, so the output tensor carries the concrete shape.
  std::vector<int64_t> resolved = target;
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (resolved[i] == -1) {
      unknown = static_cast<int>(i);
    } else {
      known *= resolved[i];
    }
  }
  if (unknown >= 0) resolved[unknown] = element_count(shape(x)) / known;
  NetworkTensor shape_tensor;
  shape_tensor.name = name + ".shape";
  shape_tensor.shape = {static_cast<int64_t>(target.size())};
  shape_tensor.role = TensorRole::kIndices;
  shape_tensor.int_values = std::move(target);
  const int s = add_tensor(std::move(shape_tensor));
  const int y = activation(name + ".out", resolved);
  node("Reshape", name, {x, s}, {y});
  return y;
}

int NetworkBuilder::gemm(int x, int64_t output_features, float weight_deviation,
                         float bias_deviation, const std::string& name) {
  const std::vector<int64_t> in = shape(x);
  const int64_t k = in[1];
  std::vector<float> weights(static_cast<size_t>(output_features * k));
  for (float& w : weights) w = random_.centered(weight_deviation);
  std::vector<float> bias(static_cast<size_t>(output_features));
  for (float& b : bias) b = random_.centered(bias_deviation);
  const int w =
      constant(name + ".weight", {output_features, k}, TensorRole::kWeight, std::move(weights));
  const int b = constant(name + ".bias", {output_features}, TensorRole::kBias, std::move(bias));
  const int y = activation(name + ".out", {in[0], output_features});
  node("Gemm", name, {x, w, b}, {y},
       {Attr::f("alpha", 1.0f), Attr::f("beta", 1.0f), Attr::i("transA", 0), Attr::i("transB", 1)});
  return y;
}

int NetworkBuilder::softmax(int x, const std::string& name) {
  const int y = activation(name + ".out", shape(x));
  node("Softmax", name, {x}, {y}, {Attr::i("axis", -1)});
  return y;
}

// ---- Emitter --------------------------------------------------------------------------------

namespace {

// Ops whose output lies within the input's range: in int8 models the output keeps the input's
// quantization. For the layout-only ops and MaxPool no requantization happens at all (and the
// layout-only ones run as plain byte moves); for the average pools it means an image brighter
// than every calibration image cannot saturate them (TFLite requires the same of its int8
// average pooling).
bool keeps_input_quantization(const std::string& op_type) {
  return op_type == "Reshape" || op_type == "Flatten" || op_type == "Squeeze" ||
         op_type == "Unsqueeze" || op_type == "Transpose" || op_type == "MaxPool" ||
         op_type == "AveragePool" || op_type == "GlobalAveragePool";
}

// Ops whose output always lies in [0, 1].
bool has_unit_range(const std::string& op_type) {
  return op_type == "Softmax" || op_type == "Sigmoid";
}

// Asymmetric int8 parameters covering [min(0, low), max(0, high)]: zero is exact.
Quantization asymmetric_int8(float low, float high) {
  low = std::min(low, 0.0f);
  high = std::max(high, 0.0f);
  double range = static_cast<double>(high) - low;
  if (!(range > 1e-12)) range = 1e-12;  // an all-zero tensor still needs a positive scale
  const double scale = range / 255.0;
  const double zero_point = std::nearbyint(-128.0 - low / scale);
  Quantization q;
  q.scales = {static_cast<float>(scale)};
  q.zero_points = {static_cast<int32_t>(std::clamp(zero_point, -128.0, 127.0))};
  return q;
}

float largest_magnitude(const float* values, size_t count) {
  float largest = 0.0f;
  for (size_t i = 0; i < count; ++i) largest = std::max(largest, std::fabs(values[i]));
  return largest;
}

// The smallest power of two >= `minimum` (1 for 0).
float power_of_two_scale(float minimum) {
  if (!(minimum > 0.0f)) return 1.0f;
  int exponent = 0;
  const float mantissa = std::frexp(minimum, &exponent);  // minimum = mantissa x 2^exponent
  return std::ldexp(1.0f, mantissa == 0.5f ? exponent - 1 : exponent);
}

int8_t to_int8(float value, float scale) {
  const double q = std::nearbyint(static_cast<double>(value) / scale);
  return static_cast<int8_t>(std::clamp(q, -127.0, 127.0));
}

struct QuantizedWeights {
  Quantization quantization;
  std::vector<int8_t> values;
};

// Symmetric per-channel int8 along the tensor's channel axis: scale[c] = max|w_c| / 127.
QuantizedWeights quantize_weights(const NetworkTensor& tensor) {
  const int axis = tensor.channel_axis;
  const int64_t channels = tensor.shape[axis];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < tensor.shape.size(); ++i) inner *= tensor.shape[i];
  const size_t count = tensor.values.size();
  std::vector<float> largest(static_cast<size_t>(channels), 0.0f);
  for (size_t i = 0; i < count; ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
    largest[c] = std::max(largest[c], std::fabs(tensor.values[i]));
  }
  QuantizedWeights result;
  result.quantization.axis = axis;
  for (float m : largest) {
    result.quantization.scales.push_back(m > 0.0f ? m / 127.0f : 1.0f);
    result.quantization.zero_points.push_back(0);
  }
  result.values.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
    result.values[i] = to_int8(tensor.values[i], result.quantization.scales[c]);
  }
  return result;
}

// The range a graph input takes for uint8 pixels 0..255 after (pixel - mean) / std.
ActivationRange input_range(const model::InputOptions& options, int64_t channels) {
  ActivationRange range{std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()};
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = options.mean.empty() ? 0.0f : options.mean[c];
    const float std_value = options.std.empty() ? 1.0f : options.std[c];
    for (float pixel : {0.0f, 255.0f}) {
      const float value = (pixel - mean) / std_value;
      range.minimum = std::min(range.minimum, value);
      range.maximum = std::max(range.maximum, value);
    }
  }
  return range;
}

class Emitter {
 public:
  Emitter(const Network& network, const EmitOptions& options)
      : network_(network), options_(options) {}

  Result<ModelBuilder> emit() {
    ModelBuilder builder;
    builder.set_producer("orknn-sample-models", ORKNN_SAMPLE_MODELS_VERSION);
    builder.set_target_platform(options_.target_platform);
    builder.set_custom_string(network_.custom_string);
    builder.set_source_framework("ONNX");
    if (options_.precision == EmitPrecision::kInt8) ORKNN_RETURN_IF_ERROR(plan_int8());
    for (size_t i = 0; i < network_.tensors.size(); ++i) {
      ORKNN_ASSIGN_OR_RETURN(const int index, emit_tensor(static_cast<int>(i), &builder));
      if (index != static_cast<int>(i)) {
        return internal_failure("ModelBuilder numbered tensor ", i, " as ", index);
      }
    }
    for (const NetworkNode& node : network_.nodes) {
      builder.add_node(node.op_type, node.inputs, node.outputs, node.attributes, node.name);
    }
    for (const NetworkInput& input : network_.inputs)
      builder.add_input(input.tensor, input.options);
    std::set<int> declared;
    for (int output : network_.outputs) {
      builder.add_output(output);
      declared.insert(output);
    }
    if (options_.out_extra_outputs) {
      options_.out_extra_outputs->clear();
      for (const NetworkNode& node : network_.nodes) {
        for (int output : node.outputs) {
          if (!declared.insert(output).second) continue;
          builder.add_output(output);
          options_.out_extra_outputs->push_back(output);
        }
      }
    }
    return builder;
  }

 private:
  // Quantization of every activation, then of every weight (biases derive from both).
  Status plan_int8() {
    const size_t count = network_.tensors.size();
    activation_q_.assign(count, Quantization{});
    weight_q_.assign(count, QuantizedWeights{});
    for (const NetworkInput& input : network_.inputs) {
      const NetworkTensor& tensor = network_.tensors[input.tensor];
      const int64_t channels = tensor.shape.size() >= 2 ? tensor.shape[1] : 1;
      const ActivationRange range = input_range(input.options, channels);
      activation_q_[input.tensor] = asymmetric_int8(range.minimum, range.maximum);
    }
    for (const NetworkNode& node : network_.nodes) {
      for (int output : node.outputs) {
        if (keeps_input_quantization(node.op_type)) {
          activation_q_[output] = activation_q_[node.inputs[0]];
          continue;
        }
        if (has_unit_range(node.op_type)) {
          // Outputs in [0, 1]: the fixed parameters TFLite also uses (scale 1/256, zero point
          // -128), rather than the calibrated maximum, which an image more confident than all
          // calibration images would exceed.
          activation_q_[output].scales = {1.0f / 256.0f};
          activation_q_[output].zero_points = {-128};
          continue;
        }
        const ActivationRange* range = nullptr;
        if (options_.ranges) {
          const auto found = options_.ranges->find(output);
          if (found != options_.ranges->end()) range = &found->second;
        }
        if (!range) {
          return invalid_argument("int8 emission of ", network_.name, ": no calibrated range for ",
                                  network_.tensors[output].name);
        }
        activation_q_[output] = asymmetric_int8(range->minimum, range->maximum);
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (network_.tensors[i].role == TensorRole::kWeight) {
        weight_q_[i] = quantize_weights(network_.tensors[i]);
      }
    }
    return ok_status();
  }

  // The Conv or Gemm node that uses `bias` as its third input.
  const NetworkNode* bias_user(int bias) const {
    for (const NetworkNode& node : network_.nodes) {
      if (node.inputs.size() > 2 && node.inputs[2] == bias) return &node;
    }
    return nullptr;
  }

  Result<int> emit_bias_int32(int index, ModelBuilder* builder) {
    const NetworkTensor& tensor = network_.tensors[index];
    const NetworkNode* user = bias_user(index);
    if (!user) return invalid_argument("bias ", tensor.name, " has no Conv or Gemm user");
    const float input_scale = activation_q_[user->inputs[0]].scales[0];
    const Quantization& weight_q = weight_q_[user->inputs[1]].quantization;
    Quantization q;
    q.axis = 0;
    std::vector<int32_t> values(tensor.values.size());
    for (size_t c = 0; c < values.size(); ++c) {
      const float weight_scale =
          weight_q.scales.size() == 1 ? weight_q.scales[0] : weight_q.scales[c];
      const float scale = input_scale * weight_scale;
      q.scales.push_back(scale);
      q.zero_points.push_back(0);
      const double v = std::nearbyint(static_cast<double>(tensor.values[c]) / scale);
      values[c] = static_cast<int32_t>(std::clamp(v, -2147483647.0, 2147483647.0));
    }
    return builder->add_constant(tensor.name, DataType::kInt32, tensor.shape, values.data(),
                                 values.size() * sizeof(int32_t), q);
  }

  Result<int> emit_tensor(int index, ModelBuilder* builder) {
    const NetworkTensor& tensor = network_.tensors[index];
    const EmitPrecision precision = options_.precision;
    const size_t expected = static_cast<size_t>(element_count(tensor.shape));
    if (tensor.role == TensorRole::kIndices) {
      return builder->add_constant_i64(tensor.name, tensor.shape, tensor.int_values);
    }
    if (tensor.role != TensorRole::kActivation && tensor.values.size() != expected) {
      return internal_failure("constant ", tensor.name, " has ", tensor.values.size(),
                              " values for shape ", shape_text(tensor.shape));
    }
    if (tensor.role == TensorRole::kActivation) {
      switch (precision) {
        case EmitPrecision::kFloat32:
          return builder->add_tensor(tensor.name, DataType::kFloat32, tensor.shape);
        case EmitPrecision::kFloat16:
          return builder->add_tensor(tensor.name, DataType::kFloat16, tensor.shape);
        case EmitPrecision::kInt8:
          return builder->add_tensor(tensor.name, DataType::kInt8, tensor.shape,
                                     activation_q_[index]);
      }
      return internal_failure("unknown precision");
    }
    if (precision == EmitPrecision::kFloat32) {
      return builder->add_constant_f32(tensor.name, tensor.shape, tensor.values);
    }
    if (precision == EmitPrecision::kFloat16) {
      std::vector<Float16Bits> half(tensor.values.size());
      for (size_t i = 0; i < half.size(); ++i) half[i] = float_to_half(tensor.values[i]);
      return builder->add_constant(tensor.name, DataType::kFloat16, tensor.shape, half.data(),
                                   half.size() * sizeof(Float16Bits));
    }
    if (tensor.role == TensorRole::kWeight) {
      const QuantizedWeights& weights = weight_q_[index];
      return builder->add_constant(tensor.name, DataType::kInt8, tensor.shape,
                                   weights.values.data(), weights.values.size(),
                                   weights.quantization);
    }
    if (tensor.role == TensorRole::kBias) return emit_bias_int32(index, builder);
    // Other constants (Clip bounds, Mul factors): symmetric per-tensor int8 with a power-of-two
    // scale, so that round numbers such as Relu6's 0 and 6 stay exact.
    const float scale =
        power_of_two_scale(largest_magnitude(tensor.values.data(), tensor.values.size()) / 127.0f);
    std::vector<int8_t> values(tensor.values.size());
    for (size_t i = 0; i < values.size(); ++i) values[i] = to_int8(tensor.values[i], scale);
    Quantization q;
    q.scales = {scale};
    q.zero_points = {0};
    return builder->add_constant(tensor.name, DataType::kInt8, tensor.shape, values.data(),
                                 values.size(), q);
  }

  const Network& network_;
  const EmitOptions& options_;
  std::vector<Quantization> activation_q_;
  std::vector<QuantizedWeights> weight_q_;
};

}  // namespace

Result<std::vector<uint8_t>> emit_network(const Network& network, const EmitOptions& options) {
  ORKNN_ASSIGN_OR_RETURN(ModelBuilder builder, Emitter(network, options).emit());
  Result<std::vector<uint8_t>> bytes = builder.serialize();
  if (!bytes.ok()) return bytes.take_status().add_context(str_cat("sample model ", network.name));
  return bytes;
}

Status emit_network_to_file(const Network& network, const EmitOptions& options,
                            const std::string& path) {
  ORKNN_ASSIGN_OR_RETURN(ModelBuilder builder, Emitter(network, options).emit());
  return builder.write_file(path);
}

}  // namespace orknn::sample_models
