// Which nodes the NPU claims and what they become. The rules mirror the CPU's int8 choices
// (devices/cpu/ops/convolution.cc, docs/quantization.md) so a claimed node computes exactly what
// the CPU would: a Conv the CPU would run in the float domain is not claimed either.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.h"
#include "core/logging.h"
#include "devices/cpu/cpu_kernel_registry.h"
#include "devices/npu/cbuf_plan.h"
#include "devices/npu/lowering_float16.h"
#include "devices/npu/npu_layer.h"
#include "graph/ops/convolution_attributes.h"
#include "graph/ops/elementwise_attributes.h"
#include "graph/ops/pooling_attributes.h"
#include "graph/tensor_conversion.h"
#include "reference/convolution.h"

namespace orknn::devices::npu {
namespace {

using graph::Shape;
using graph::Tensor;

// Register field widths of the programs we emit (npu_registers.h).
constexpr int64_t kMaxKernel = 31, kMaxStride = 7, kMaxDilation = 31, kMaxConvPad = 15;
constexpr int64_t kMaxPoolKernel = 16, kMaxPoolStride = 16, kMaxPoolPad = 7;
constexpr int64_t kMaxCubeDimension = 2047;  // 11-bit CNA DATA_SIZE fields
constexpr int64_t kMaxBatch = 64;            // images per run; each gets its own tasks
constexpr int64_t kChannelBlockSize = 16;

template <typename... Parts>
Status refuse(const graph::Node& node, const Parts&... parts) {
  return unimplemented(node.describe(), ": not on the NPU: ", parts...);
}

bool is_per_tensor_int8(const Tensor& tensor) {
  return tensor.data_type == DataType::kInt8 && tensor.quantization.is_quantized() &&
         !tensor.quantization.is_per_channel();
}

bool is_float16_activation(const Tensor& tensor) {
  return tensor.data_type == DataType::kFloat16 && !tensor.quantization.is_quantized() &&
         !tensor.is_constant();
}

// A node runs in float16 when its first input is a float16 activation; every feature map of
// the node must then be float16 (feature_shape checks).
bool runs_in_float16(const graph::Graph& graph, const graph::Node& node) {
  return !node.inputs.empty() && node.inputs[0] >= 0 &&
         is_float16_activation(graph.tensor(node.inputs[0]));
}

// [N, C, H, W] activation, per-tensor INT8 or (float16) FLOAT16 (N images, each run by its own
// tasks).
Result<FeatureShape> feature_shape(const graph::Node& node, const Tensor& tensor,
                                   const Shape& shape, bool float16 = false) {
  if (float16 && !is_float16_activation(tensor)) {
    return refuse(node, "'", tensor.name, "' is not a FLOAT16 activation");
  }
  if (!float16 && (!is_per_tensor_int8(tensor) || tensor.is_constant())) {
    return refuse(node, "'", tensor.name, "' is not a per-tensor INT8 activation");
  }
  if (shape.size() != 4 || shape[0] < 1 || shape[0] > kMaxBatch) {
    return refuse(node, "'", tensor.name, "' has shape ", graph::shape_to_string(shape),
                  "; the NPU programs take [N, C, H, W] with N in 1..", kMaxBatch);
  }
  for (size_t d = 1; d < 4; ++d) {
    if (shape[d] < 1 || shape[d] > kMaxCubeDimension) {
      return refuse(node, "'", tensor.name, "' dimension ", d, " = ", shape[d], " is outside 1..",
                    kMaxCubeDimension);
    }
  }
  return FeatureShape{shape[1], shape[2], shape[3], shape[0]};
}

// The 2-D window of a Conv or pooling node (height axis first).
void copy_window(const graph::SpatialWindow& window, NpuLayer* layer) {
  layer->kernel_height = window.kernel[0];
  layer->kernel_width = window.kernel[1];
  layer->stride_height = window.strides[0];
  layer->stride_width = window.strides[1];
  layer->dilation_height = window.dilations[0];
  layer->dilation_width = window.dilations[1];
  layer->pad_top = window.pads_begin[0];
  layer->pad_left = window.pads_begin[1];
  layer->pad_bottom = window.pads_end[0];
  layer->pad_right = window.pads_end[1];
}

template <typename T>
T of_channel(const std::vector<T>& values, int64_t channel) {
  return values.size() == 1 ? values[0] : values[static_cast<size_t>(channel)];
}

int64_t largest_offset(int32_t zero_point) {
  return std::max<int64_t>(127 - int64_t{zero_point}, int64_t{zero_point} + 128);
}

Status check_bias(const graph::Node& node, const Tensor& bias, const Tensor& input,
                  const graph::Quantization& weight_q, int64_t channels, int bias_axis) {
  const graph::Quantization& q = bias.quantization;
  if (bias.data_type != DataType::kInt32 || !q.is_quantized() || !bias.is_constant()) {
    return refuse(node, "bias '", bias.name, "' is not a quantized INT32 constant");
  }
  if (q.is_per_channel() &&
      (q.scales.size() != static_cast<size_t>(channels) || q.axis != bias_axis)) {
    return refuse(node, "bias '", bias.name, "' is not quantized per output channel");
  }
  const double input_scale = input.quantization.scales[0];
  for (int64_t c = 0; c < channels; ++c) {
    const double expected = input_scale * of_channel(weight_q.scales, c);
    const double scale = of_channel(q.scales, c);
    if (of_channel(q.zero_points, c) != 0 || std::fabs(scale - expected) > 1e-5 * expected) {
      return refuse(node, "bias '", bias.name, "' channel ", c, " is not at input x weight scale");
    }
  }
  return ok_status();
}

// The int8 constants of a product layer (a Conv, or a Gemm/MatMul as a 1x1 convolution):
// `stored` holds the weights [oc][ic / group][taps], quantized by `weight_q` per output channel
// or per tensor; the bias's per-channel axis is `bias_axis`.
Status lower_int8_product(const graph::Node& node, const Tensor& input, const Tensor& output,
                          const int8_t* stored, const graph::Quantization& weight_q,
                          const Tensor* bias, int bias_axis,
                          const graph::FusedActivationAttributes& activation, int64_t group,
                          NpuLayer* out_layer) {
  NpuLayer& layer = *out_layer;
  const int64_t channels_out = layer.output.channels, channels_in = layer.input.channels;
  for (int32_t zero_point : weight_q.zero_points) {
    if (zero_point != 0) return refuse(node, "weight zero point ", zero_point, " is not 0");
  }
  if (bias) {
    ORKNN_RETURN_IF_ERROR(check_bias(node, *bias, input, weight_q, channels_out, bias_axis));
  }
  using Kind = graph::FusedActivationAttributes::Kind;
  // Every kind is named so that a new one fails to compile here instead of being lowered as if
  // there were no activation.
  switch (activation.kind) {
    case Kind::kNone:
    case Kind::kRelu:
    case Kind::kClip:
      break;  // clamps of the requantized result
    case Kind::kSilu:
      layer.silu = true;  // the DPU's SiLU epilogue (docs/quantization.md 4.3)
      break;
    case Kind::kLeakyRelu:
      return refuse(node, "a fused LeakyRelu is not a clamp");
  }

  const int64_t group_in = channels_in / group, group_out = channels_out / group;
  const int64_t taps = layer.kernel_height * layer.kernel_width;
  layer.input_zero_point = input.quantization.zero_points[0];
  layer.output_zero_point = output.quantization.zero_points[0];
  const float output_scale = output.quantization.scales[0];
  int64_t largest_bias = 0;
  std::vector<int32_t> bias_values(static_cast<size_t>(channels_out), 0);
  if (bias) {
    std::memcpy(bias_values.data(), bias->constant_data, bias_values.size() * 4);
    for (int32_t value : bias_values)
      largest_bias = std::max<int64_t>(largest_bias, std::abs(int64_t{value}));
  }
  // The CPU accumulates in int32 and refuses (float domain) when the worst case overflows.
  const int64_t worst =
      group_in * taps * largest_offset(layer.input_zero_point) * 128 + largest_bias;
  if (worst > std::numeric_limits<int32_t>::max()) {
    return refuse(node, "the int32 accumulator could overflow");
  }

  layer.depthwise = group > 1 && group == channels_in && group == channels_out;
  const int64_t dense_in = layer.depthwise ? 1 : channels_in;
  layer.weights.assign(static_cast<size_t>(channels_out * dense_in * taps), 0);
  for (int64_t oc = 0; oc < channels_out; ++oc) {
    const int64_t first_in = (oc / group_out) * group_in;
    int64_t weight_sum = 0;
    for (int64_t ic = 0; ic < group_in; ++ic) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int8_t w = stored[(oc * group_in + ic) * taps + tap];
        weight_sum += w;
        const int64_t dense_ic = layer.depthwise ? 0 : first_in + ic;
        layer.weights[static_cast<size_t>((oc * dense_in + dense_ic) * taps + tap)] = w;
      }
    }
    // Padding reads the input zero point, so sum((x - zx) * w) = sum(x * w) - zx * sum(w).
    const int64_t folded = int64_t{bias_values[static_cast<size_t>(oc)]} -
                           int64_t{layer.input_zero_point} * weight_sum;
    if (folded < std::numeric_limits<int32_t>::min() ||
        folded > std::numeric_limits<int32_t>::max()) {
      return refuse(node, "the folded bias of channel ", oc, " does not fit 32 bits");
    }
    layer.folded_bias.push_back(static_cast<int32_t>(folded));
    // With SiLU the per-channel value takes the accumulator back to real values instead; the
    // epilogue quantizes with the output scale itself.
    const float input_scale = input.quantization.scales[0];
    const float weight_scale = of_channel(weight_q.scales, oc);
    layer.multipliers.push_back(
        layer.silu ? kernels::reference::silu_dequantization_scale(input_scale, weight_scale)
                   : kernels::reference::requantization_multiplier(input_scale, weight_scale,
                                                                   output_scale));
  }
  if (activation.kind == Kind::kRelu) {
    layer.clamp_low = std::max(-128, layer.output_zero_point);
  } else if (activation.kind == Kind::kClip) {
    layer.clamp_low = quantize_int8(activation.minimum, output_scale, layer.output_zero_point);
    layer.clamp_high = quantize_int8(activation.maximum, output_scale, layer.output_zero_point);
  }
  layer.kind = LayerKind::kConvolution;
  layer.conv_output_scale = output_scale;
  layer.macs = static_cast<uint64_t>(layer.output.height * layer.output.width * channels_out *
                                     group_in * taps);
  return ok_status();
}

// A convolution the CBUF cannot hold even split (one output row of one weight block) stays
// on the CPU; the debug log says why.
Result<NpuLayer> fit_cbuf(const graph::Node& node, NpuLayer layer) {
  const Result<std::vector<TaskSlice>> tasks =
      split_for_cbuf(layer, {0, layer.output.channels, 0, layer.output.height});
  if (!tasks.ok()) {
    log_debug(node.describe(), " stays on the CPU: ", tasks.status().message());
    return refuse(node, tasks.status().message());
  }
  return layer;
}

Result<NpuLayer> lower_convolution(const graph::Graph& graph, const graph::Node& node,
                                   const std::vector<Shape>& shapes) {
  if (node.inputs.size() < 2 || node.inputs[0] < 0 || node.inputs[1] < 0) {
    return refuse(node, "missing operands");
  }
  const Tensor& input = graph.tensor(node.inputs[0]);
  const Tensor& weights = graph.tensor(node.inputs[1]);
  const Tensor* bias =
      node.inputs.size() > 2 && node.inputs[2] >= 0 ? &graph.tensor(node.inputs[2]) : nullptr;
  const Tensor& output = graph.tensor(node.outputs[0]);
  const Shape& input_shape = shapes[static_cast<size_t>(node.inputs[0])];
  const Shape& weight_shape = shapes[static_cast<size_t>(node.inputs[1])];
  NpuLayer layer;
  layer.float16 = runs_in_float16(graph, node);
  ORKNN_ASSIGN_OR_RETURN(layer.input, feature_shape(node, input, input_shape, layer.float16));
  ORKNN_ASSIGN_OR_RETURN(
      layer.output,
      feature_shape(node, output, shapes[static_cast<size_t>(node.outputs[0])], layer.float16));
  const Shape bias_shape = bias ? shapes[static_cast<size_t>(node.inputs[2])] : Shape{};
  ORKNN_ASSIGN_OR_RETURN(
      graph::ConvAttributes attributes,
      graph::parse_conv(node, input_shape, weight_shape, bias ? &bias_shape : nullptr));
  if (attributes.window.kernel.size() != 2) return refuse(node, "only 2-D convolution");
  copy_window(attributes.window, &layer);
  if (std::max(layer.kernel_height, layer.kernel_width) > kMaxKernel ||
      std::max(layer.stride_height, layer.stride_width) > kMaxStride ||
      std::max(layer.dilation_height, layer.dilation_width) > kMaxDilation ||
      std::max(layer.pad_top, layer.pad_left) > kMaxConvPad) {
    return refuse(node, "kernel, stride, dilation or padding beyond the register fields");
  }
  if (layer.float16) {
    if (!is_float16_constant(weights)) {
      return refuse(node, "weights '", weights.name, "' are not a FLOAT16 constant");
    }
    ORKNN_RETURN_IF_ERROR(lower_float16_product(node, weights.constant_data, bias,
                                                attributes.activation, attributes.group, &layer));
    return fit_cbuf(node, std::move(layer));
  }
  if (!weights.is_constant() || weights.data_type != DataType::kInt8 ||
      !weights.quantization.is_quantized()) {
    return refuse(node, "weights '", weights.name, "' are not a quantized INT8 constant");
  }
  const graph::Quantization& weight_q = weights.quantization;
  if (weight_q.is_per_channel() &&
      (weight_q.axis != 0 ||
       weight_q.scales.size() != static_cast<size_t>(layer.output.channels))) {
    return refuse(node, "weights are not quantized per output channel");
  }
  ORKNN_RETURN_IF_ERROR(lower_int8_product(
      node, input, output, reinterpret_cast<const int8_t*>(weights.constant_data), weight_q, bias,
      0, attributes.activation, attributes.group, &layer));
  return fit_cbuf(node, std::move(layer));
}

// An [M, K] matrix activation as the 1 x M feature map of K channels the executable lays it
// out as (NC1HWC2 with W = M, npu_executable.cc).
Result<FeatureShape> matrix_shape(const graph::Node& node, const Tensor& tensor, const Shape& shape,
                                  bool float16) {
  if (shape.size() != 2 || shape[0] < 1 || shape[0] > kMaxCubeDimension || shape[1] < 1) {
    return refuse(node, "'", tensor.name, "' has shape ", graph::shape_to_string(shape),
                  "; the NPU takes [M, K] matrices with M in 1..", kMaxCubeDimension);
  }
  ORKNN_RETURN_IF_ERROR(feature_shape(node, tensor, {1, shape[1], 1, shape[0]}, float16).status());
  return FeatureShape{shape[1], 1, shape[0], 1};
}

// Gemm (no transposed A, alpha 1, beta 1, C along N) and MatMul with a constant 2-D B:
// Y[M, N] = A[M, K] B (+ C) as a 1x1 convolution of K input and N output channels.
Result<NpuLayer> lower_matrix_product(const graph::Graph& graph, const graph::Node& node,
                                      const std::vector<Shape>& shapes) {
  if (node.inputs.size() < 2 || node.inputs[0] < 0 || node.inputs[1] < 0) {
    return refuse(node, "missing operands");
  }
  const Tensor& a = graph.tensor(node.inputs[0]);
  const Tensor& b = graph.tensor(node.inputs[1]);
  const bool gemm = node.op_type == "Gemm";
  const Tensor* c = gemm && node.inputs.size() > 2 && node.inputs[2] >= 0
                        ? &graph.tensor(node.inputs[2])
                        : nullptr;
  const Shape& a_shape = shapes[static_cast<size_t>(node.inputs[0])];
  const Shape& b_shape = shapes[static_cast<size_t>(node.inputs[1])];
  if (a_shape.size() != 2 || b_shape.size() != 2 || !b.is_constant()) {
    return refuse(node, "only a 2-D A times a constant 2-D B");
  }
  graph::FusedActivationAttributes activation;
  bool transpose_b = false;
  int bias_axis = 0;
  if (gemm) {
    const Shape c_shape = c ? shapes[static_cast<size_t>(node.inputs[2])] : Shape{};
    ORKNN_ASSIGN_OR_RETURN(graph::GemmAttributes attributes,
                           graph::parse_gemm(node, a_shape, b_shape, c ? &c_shape : nullptr));
    if (attributes.transpose_a || attributes.alpha != 1.0f || attributes.beta != 1.0f) {
      return refuse(node, "Gemm with transA, alpha or beta other than 1");
    }
    if (c && (attributes.c_columns != attributes.n || c->elements() != attributes.n)) {
      return refuse(node, "C is not one value per output column");
    }
    activation = attributes.activation;
    transpose_b = attributes.transpose_b;
    bias_axis = c && !c_shape.empty() ? static_cast<int>(c_shape.size()) - 1 : 0;
  } else {
    ORKNN_ASSIGN_OR_RETURN(graph::MatMulAttributes attributes,
                           graph::parse_matmul(node, a_shape, b_shape));
    activation = attributes.activation;
  }
  NpuLayer layer;
  layer.float16 = runs_in_float16(graph, node);
  ORKNN_ASSIGN_OR_RETURN(layer.input, matrix_shape(node, a, a_shape, layer.float16));
  ORKNN_ASSIGN_OR_RETURN(layer.output,
                         matrix_shape(node, graph.tensor(node.outputs[0]),
                                      shapes[static_cast<size_t>(node.outputs[0])], layer.float16));
  const int64_t k = layer.input.channels, n = layer.output.channels;
  // B as [N][K], the dense [oc][ic] layout of a 1x1 convolution.
  const size_t element = layer.float16 ? 2 : 1;
  std::vector<uint8_t> dense(static_cast<size_t>(n * k) * element);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t column = 0; column < k; ++column) {
      const int64_t from = transpose_b ? row * k + column : column * n + row;
      std::memcpy(&dense[static_cast<size_t>(row * k + column) * element],
                  b.constant_data + static_cast<size_t>(from) * element, element);
    }
  }
  if (layer.float16) {
    if (!is_float16_constant(b)) return refuse(node, "B '", b.name, "' is not a FLOAT16 constant");
    ORKNN_RETURN_IF_ERROR(lower_float16_product(node, dense.data(), c, activation, 1, &layer));
    return fit_cbuf(node, std::move(layer));
  }
  if (b.data_type != DataType::kInt8 || !b.quantization.is_quantized()) {
    return refuse(node, "B '", b.name, "' is not a quantized INT8 constant");
  }
  // The CPU runs a Gemm/MatMul with a fused SiLU in the float domain (docs/quantization.md 4.1).
  if (activation.kind == graph::FusedActivationAttributes::Kind::kSilu) {
    return refuse(node, "an int8 Gemm/MatMul with a fused SiLU runs in the float domain");
  }
  graph::Quantization weight_q = b.quantization;
  if (weight_q.is_per_channel()) {
    if (weight_q.axis != (transpose_b ? 0 : 1) ||
        weight_q.scales.size() != static_cast<size_t>(n)) {
      return refuse(node, "B is not quantized per output column");
    }
    weight_q.axis = 0;  // the output channels of the dense layout
  }
  ORKNN_RETURN_IF_ERROR(lower_int8_product(node, a, graph.tensor(node.outputs[0]),
                                           reinterpret_cast<const int8_t*>(dense.data()), weight_q,
                                           c, bias_axis, activation, 1, &layer));
  return fit_cbuf(node, std::move(layer));
}

Result<NpuLayer> lower_add(const graph::Graph& graph, const graph::Node& node,
                           const std::vector<Shape>& shapes) {
  if (node.inputs.size() != 2 || node.inputs[0] < 0 || node.inputs[1] < 0) {
    return refuse(node, "Add needs two operands");
  }
  const Shape& a = shapes[static_cast<size_t>(node.inputs[0])];
  const Shape& b = shapes[static_cast<size_t>(node.inputs[1])];
  if (a != b)
    return refuse(node, "broadcasting Add (", graph::shape_to_string(a), " + ",
                  graph::shape_to_string(b), ")");
  NpuLayer layer;
  layer.kind = LayerKind::kAdd;
  layer.float16 = runs_in_float16(graph, node);
  const Tensor& first = graph.tensor(node.inputs[0]);
  const Tensor& second = graph.tensor(node.inputs[1]);
  const Tensor& output = graph.tensor(node.outputs[0]);
  ORKNN_ASSIGN_OR_RETURN(layer.input, feature_shape(node, first, a, layer.float16));
  ORKNN_RETURN_IF_ERROR(feature_shape(node, second, b, layer.float16).status());
  ORKNN_ASSIGN_OR_RETURN(
      layer.output,
      feature_shape(node, output, shapes[static_cast<size_t>(node.outputs[0])], layer.float16));
  layer.operand_tensor = node.inputs[1];
  if (layer.float16) return layer;  // the sum in fp32, rounded to float16
  layer.input_scale = first.quantization.scales[0];
  layer.input_zero_point = first.quantization.zero_points[0];
  layer.operand_scale = second.quantization.scales[0];
  layer.operand_zero_point = second.quantization.zero_points[0];
  layer.output_scale = output.quantization.scales[0];
  layer.output_zero_point = output.quantization.zero_points[0];
  return layer;
}

// A float16 Relu or Clip: the stand-alone DPU op with its final clamp (other float16
// activations have no NPU program: the DPU's table is an int8 table here).
Result<NpuLayer> lower_float16_clamp(const graph::Graph& graph, const graph::Node& node,
                                     const std::vector<Shape>& shapes) {
  NpuLayer layer;
  layer.kind = LayerKind::kLookupTable;
  layer.float16 = true;
  ORKNN_ASSIGN_OR_RETURN(layer.input,
                         feature_shape(node, graph.tensor(node.inputs[0]),
                                       shapes[static_cast<size_t>(node.inputs[0])], true));
  ORKNN_ASSIGN_OR_RETURN(layer.output,
                         feature_shape(node, graph.tensor(node.outputs[0]),
                                       shapes[static_cast<size_t>(node.outputs[0])], true));
  if (node.op_type == "Relu") {
    layer.final_low = 0.0f;
    return layer;
  }
  if (node.op_type != "Clip") {
    return refuse(node, "float16 ", node.op_type, " has no NPU program (only Relu and Clip)");
  }
  ORKNN_ASSIGN_OR_RETURN(graph::ClipAttributes clip, graph::parse_clip_attributes(node));
  layer.final_low = clip.minimum;
  layer.final_high = clip.maximum;
  float* bounds[] = {&layer.final_low, &layer.final_high};
  for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
    if (node.inputs[i] < 0) continue;
    const Tensor& bound = graph.tensor(node.inputs[i]);
    if (bound.elements() != 1 ||
        (bound.data_type != DataType::kFloat32 && bound.data_type != DataType::kFloat16)) {
      return refuse(node, "Clip bound '", bound.name, "' is not one float");
    }
    graph::decode_to_float(bound, bound.constant_data, bounds[i - 1]);
  }
  return layer;
}

// An element-wise activation on int8 is a function of 256 codes: the table is what the CPU
// kernel of the node computes for each of them, so it is the CPU's result by construction.
Result<NpuLayer> lower_table(const graph::Graph& graph, const graph::Node& node,
                             const std::vector<Shape>& shapes) {
  if (node.inputs.empty() || node.inputs[0] < 0 || node.outputs.size() != 1) {
    return refuse(node, "an activation has one input and one output");
  }
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] >= 0 && !graph.tensor(node.inputs[i]).is_constant()) {
      return refuse(node, "operand ", i, " is not a constant");
    }
  }
  if (runs_in_float16(graph, node)) return lower_float16_clamp(graph, node, shapes);
  NpuLayer layer;
  layer.kind = LayerKind::kLookupTable;
  const Shape& shape = shapes[static_cast<size_t>(node.inputs[0])];
  ORKNN_ASSIGN_OR_RETURN(layer.input, feature_shape(node, graph.tensor(node.inputs[0]), shape));
  ORKNN_ASSIGN_OR_RETURN(layer.output, feature_shape(node, graph.tensor(node.outputs[0]),
                                                     shapes[static_cast<size_t>(node.outputs[0])]));
  std::vector<Shape> table_shapes = shapes;
  table_shapes[static_cast<size_t>(node.inputs[0])] = {256};
  table_shapes[static_cast<size_t>(node.outputs[0])] = {256};
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<cpu::CpuKernel> kernel,
                         cpu::build_cpu_kernel(graph, node, table_shapes));
  std::array<int8_t, 256> codes;
  for (int i = 0; i < 256; ++i) codes[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  std::vector<const void*> inputs;
  for (int32_t index : node.inputs) {
    inputs.push_back(index < 0                 ? nullptr
                     : index == node.inputs[0] ? static_cast<const void*>(codes.data())
                                               : graph.tensor(index).constant_data);
  }
  void* outputs[] = {layer.lut.data()};
  ORKNN_RETURN_IF_ERROR(kernel->run(inputs.data(), outputs));
  layer.use_lut = true;
  return layer;
}

Result<NpuLayer> lower_pooling(const graph::Graph& graph, const graph::Node& node,
                               const std::vector<Shape>& shapes) {
  if (node.inputs.empty() || node.inputs[0] < 0 || node.outputs.size() != 1) {
    return refuse(node, "pooling with an Indices output");
  }
  const Tensor& input = graph.tensor(node.inputs[0]);
  const Tensor& output = graph.tensor(node.outputs[0]);
  const Shape& input_shape = shapes[static_cast<size_t>(node.inputs[0])];
  NpuLayer layer;
  layer.kind = LayerKind::kPooling;
  layer.float16 = runs_in_float16(graph, node);
  ORKNN_ASSIGN_OR_RETURN(layer.input, feature_shape(node, input, input_shape, layer.float16));
  ORKNN_ASSIGN_OR_RETURN(
      layer.output,
      feature_shape(node, output, shapes[static_cast<size_t>(node.outputs[0])], layer.float16));
  if (node.op_type == "GlobalAveragePool") {
    // Summing the plane row by row is the global average's own order (reference/pooling.cc).
    layer.kernel_height = layer.input.height;
    layer.kernel_width = layer.input.width;
  } else {
    ORKNN_ASSIGN_OR_RETURN(graph::PoolAttributes attributes, graph::parse_pool(node, input_shape));
    const graph::SpatialWindow& window = attributes.window;
    if (window.kernel.size() != 2) return refuse(node, "only 2-D pooling");
    if (window.dilations[0] != 1 || window.dilations[1] != 1)
      return refuse(node, "dilated pooling");
    layer.maximum = node.op_type == "MaxPool";
    layer.count_include_pad = attributes.count_include_pad;
    copy_window(window, &layer);
  }
  if (std::max(layer.kernel_height, layer.kernel_width) > kMaxPoolKernel ||
      std::max(layer.stride_height, layer.stride_width) > kMaxPoolStride ||
      std::max({layer.pad_top, layer.pad_left, layer.pad_bottom, layer.pad_right}) > kMaxPoolPad) {
    return refuse(node, "pooling window beyond the PPU register fields");
  }
  if (layer.float16) return layer;  // decoded to fp32, rounded to float16 once
  layer.input_scale = input.quantization.scales[0];
  layer.input_zero_point = input.quantization.zero_points[0];
  layer.output_scale = output.quantization.scales[0];
  layer.output_zero_point = output.quantization.zero_points[0];
  return layer;
}

bool is_table_op(const std::string& type) {
  static const char* const kTypes[] = {"Relu",      "Clip",  "LeakyRelu", "Sigmoid", "HardSigmoid",
                                       "HardSwish", "Swish", "SiLU",      "Tanh"};
  return std::any_of(std::begin(kTypes), std::end(kTypes),
                     [&](const char* name) { return type == name; });
}

}  // namespace

// A channel Concat whose inputs start on 16-channel blocks: each input is copied through a
// table into its place in the output (the CPU moves bytes when quantizations agree and goes
// through the float domain otherwise; both are functions of the 256 codes).
Result<std::vector<NpuLayer>> lower_concat(const graph::Graph& graph, const graph::Node& node,
                                           const std::vector<Shape>& shapes) {
  const Tensor& output = graph.tensor(node.outputs[0]);
  const Shape& output_shape = shapes[static_cast<size_t>(node.outputs[0])];
  const bool float16 = runs_in_float16(graph, node);
  // A float16 part is a plain copy (the stand-alone DPU op with no clamp).
  const int64_t block = float16 ? kChannelBlockSize / 2 : kChannelBlockSize;
  ORKNN_ASSIGN_OR_RETURN(FeatureShape whole, feature_shape(node, output, output_shape, float16));
  ORKNN_ASSIGN_OR_RETURN(int64_t axis, node.int_attribute("axis", 1));
  if (axis != 1 && axis != -3) return refuse(node, "Concat along axis ", axis, ", not channels");
  std::vector<NpuLayer> parts;
  int64_t offset = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] < 0) return refuse(node, "omitted Concat input");
    const Tensor& input = graph.tensor(node.inputs[i]);
    NpuLayer part;
    ORKNN_ASSIGN_OR_RETURN(
        part.input,
        feature_shape(node, input, shapes[static_cast<size_t>(node.inputs[i])], float16));
    if (part.input.batch != whole.batch) {
      return refuse(node, "input ", i, " batch ", part.input.batch, " differs from output batch ",
                    whole.batch);
    }
    if (offset % block != 0) {
      return refuse(node, "input ", i, " starts at channel ", offset, ", not on a ", block,
                    "-channel block");
    }
    part.kind = LayerKind::kLookupTable;
    part.concat_part = true;
    part.input_tensor = node.inputs[i];
    part.output_tensor = node.outputs[0];
    part.output = part.input;
    part.output_channel_offset = offset;
    part.output_buffer_channels = whole.channels;
    part.float16 = float16;
    part.use_lut = !float16;
    if (float16) {
      // copied as it is
    } else if (input.quantization == output.quantization) {
      for (int code = 0; code < 256; ++code)
        part.lut[size_t(code)] = static_cast<int8_t>(code - 128);
    } else {
      std::array<int8_t, 256> codes;
      std::array<float, 256> reals;
      for (int code = 0; code < 256; ++code) codes[size_t(code)] = static_cast<int8_t>(code - 128);
      Tensor from = input, to = output;
      from.shape = to.shape = {256};
      from.constant = to.constant = false;
      graph::decode_to_float(from, codes.data(), reals.data());
      graph::encode_from_float(to, reals.data(), part.lut.data());
    }
    offset += part.input.channels;
    parts.push_back(std::move(part));
  }
  if (offset != whole.channels) return refuse(node, "Concat channels do not add up");
  return parts;
}

Result<std::vector<NpuLayer>> lower_node(const graph::Graph& graph, size_t node_index,
                                         const std::vector<Shape>& shapes) {
  const graph::Node& node = graph.nodes[node_index];
  if (node.op_type == "Concat" && node.outputs.size() == 1) {
    ORKNN_ASSIGN_OR_RETURN(std::vector<NpuLayer> parts, lower_concat(graph, node, shapes));
    for (NpuLayer& part : parts) part.node_index = node_index;
    return parts;
  }
  Result<NpuLayer> layer = refuse(node, "op type ", node.op_type, " has no NPU program");
  if (node.outputs.size() != 1 && node.op_type != "MaxPool") return layer.status();
  if (node.op_type == "Conv") {
    layer = lower_convolution(graph, node, shapes);
  } else if (node.op_type == "Gemm" || node.op_type == "MatMul") {
    layer = lower_matrix_product(graph, node, shapes);
  } else if (node.op_type == "Add") {
    layer = lower_add(graph, node, shapes);
  } else if (node.op_type == "MaxPool" || node.op_type == "AveragePool" ||
             node.op_type == "GlobalAveragePool") {
    layer = lower_pooling(graph, node, shapes);
  } else if (is_table_op(node.op_type)) {
    layer = lower_table(graph, node, shapes);
  }
  if (!layer.ok()) return layer.status();
  if (layer->input.batch != layer->output.batch) {
    return refuse(node, "input batch ", layer->input.batch, " differs from output batch ",
                  layer->output.batch);
  }
  layer->node_index = node_index;
  layer->input_tensor = node.inputs[0];
  layer->output_tensor = node.outputs[0];
  return std::vector<NpuLayer>{std::move(*layer)};
}

}  // namespace orknn::devices::npu
