// CPU kernels of the convolution family (Conv, ConvTranspose, Gemm, MatMul): float-domain
// kernels for every precision, and native int8 kernels (docs/quantization.md) when the operands
// are quantized the way the int8 rule expects. Anything else an int8 factory meets returns
// kUnimplemented, and the registry runs the float-domain kernel instead.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/thread_pool.h"
#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/ops/window_2d.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "dispatch.h"
#include "graph/ops/convolution_attributes.h"
#include "reference/convolution.h"
#include "reference/elementwise.h"
#include "reference/gemm.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using graph::Shape;
using graph::Tensor;

reference::FusedActivation to_reference(const graph::FusedActivationAttributes& attributes) {
  using Kind = graph::FusedActivationAttributes::Kind;
  reference::FusedActivation activation;
  activation.minimum = attributes.minimum;
  activation.maximum = attributes.maximum;
  activation.alpha = attributes.alpha;
  switch (attributes.kind) {
    case Kind::kNone:
      activation.kind = reference::FusedActivation::Kind::kNone;
      break;
    case Kind::kRelu:
      activation.kind = reference::FusedActivation::Kind::kRelu;
      break;
    case Kind::kClip:
      activation.kind = reference::FusedActivation::Kind::kClip;
      break;
    case Kind::kLeakyRelu:
      activation.kind = reference::FusedActivation::Kind::kLeakyRelu;
      break;
    case Kind::kSilu:  // not a clamp: the Conv kernels apply it themselves, or with_fused_silu
      activation.kind = reference::FusedActivation::Kind::kNone;
      break;
  }
  return activation;
}

// A fused SiLU runs as a second pass over the node's float result, inside the same kernel (no
// intermediate tensor, no rounding to the output type in between), with the kernel the SiLU op
// itself would use (the selected variant's, or the reference), so fusing changes nothing in
// float32. The optimized Conv kernels apply it themselves, region by region as they finish the
// output (applies_fused_silu; the same bits: dispatch.h prepare_conv2d_silu).
class SiluEpilogueKernel : public CpuKernel {
 public:
  SiluEpilogueKernel(std::unique_ptr<CpuKernel> inner, int64_t count)
      : inner_(std::move(inner)), count_(count) {
    silu_.operation = reference::UnaryOperation::kSwish;
    silu_.alpha = 1.0f;
    fast_silu_ = kernels::cpu::prepare_unary(silu_, count_);
  }
  Status run(const void* const* inputs, void* const* outputs) override {
    ORKNN_RETURN_IF_ERROR(inner_->run(inputs, outputs));
    auto* values = static_cast<float*>(outputs[0]);
    if (fast_silu_) {
      fast_silu_->run(values, values, 0.0f, 0.0f, ThreadPool::current_or_serial());
    } else {
      reference::unary(silu_, values, values, count_);
    }
    return ok_status();
  }

 private:
  std::unique_ptr<CpuKernel> inner_;
  int64_t count_;
  reference::UnaryParams silu_;
  std::unique_ptr<kernels::cpu::UnaryFloat> fast_silu_;  // null: the reference
};

template <Result<std::unique_ptr<CpuKernel>> (*kFactory)(const KernelBuildContext&)>
Result<std::unique_ptr<CpuKernel>> with_fused_silu(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::FusedActivationAttributes activation,
                         graph::parse_fused_activation(context.node));
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<CpuKernel> inner, kFactory(context));
  if (activation.kind != graph::FusedActivationAttributes::Kind::kSilu ||
      inner->applies_fused_silu()) {
    return inner;
  }
  return std::unique_ptr<CpuKernel>(
      new SiluEpilogueKernel(std::move(inner), context.outputs[0]->elements()));
}

const Shape* optional_shape(const KernelBuildContext& context, size_t position) {
  return context.input(position) ? &context.input(position)->shape : nullptr;
}

template <typename T>
const T* typed(const void* pointer) {
  return static_cast<const T*>(pointer);
}

// ---- Conv and ConvTranspose ------------------------------------------------------------------

Result<graph::ConvAttributes> parse_convolution(const KernelBuildContext& context, bool transpose) {
  const Shape& input = context.input(0)->shape;
  const Shape& weights = context.input(1)->shape;
  return transpose
             ? graph::parse_conv_transpose(context.node, input, weights, optional_shape(context, 2))
             : graph::parse_conv(context.node, input, weights, optional_shape(context, 2));
}

Result<reference::Conv2DShape> conv_geometry(const KernelBuildContext& context,
                                             const graph::ConvAttributes& attributes) {
  const Shape& input = context.input(0)->shape;
  reference::Conv2DShape shape;
  shape.batch = input[0];
  shape.input_channels = input[1];
  shape.output_channels = attributes.output_shape[1];
  shape.groups = attributes.group;
  ORKNN_ASSIGN_OR_RETURN(shape.window,
                         reference_window_2d(context, attributes.window, "convolution"));
  return shape;
}

// A float32 reference convolution (conv2d, conv_transpose2d, conv_nd, conv_transpose_nd) as a
// CPU kernel.
template <typename ConvolutionShape>
using ReferenceConvolution = void (*)(const ConvolutionShape&, const reference::FusedActivation&,
                                      const float*, const float*, const float*, float*);

template <typename ConvolutionShape>
std::unique_ptr<CpuKernel> reference_convolution_kernel(
    ReferenceConvolution<ConvolutionShape> compute, const ConvolutionShape& shape,
    const reference::FusedActivation& activation, bool has_bias) {
  return make_function_kernel(
      [compute, shape, activation, has_bias](const void* const* inputs, void* const* outputs) {
        compute(shape, activation, typed<float>(inputs[0]), typed<float>(inputs[1]),
                has_bias ? typed<float>(inputs[2]) : nullptr, static_cast<float*>(outputs[0]));
        return ok_status();
      });
}

// More than two spatial axes: the N-D reference kernels.
template <bool kTranspose>
Result<std::unique_ptr<CpuKernel>> make_volume_convolution_kernel(
    const KernelBuildContext& context, const graph::ConvAttributes& attributes) {
  const Shape& input = context.input(0)->shape;
  reference::ConvNDShape shape;
  shape.batch = input[0];
  shape.input_channels = input[1];
  shape.output_channels = attributes.output_shape[1];
  shape.groups = attributes.group;
  ORKNN_ASSIGN_OR_RETURN(shape.window,
                         reference_window_nd(context, attributes.window, "convolution"));
  return reference_convolution_kernel<reference::ConvNDShape>(
      kTranspose ? reference::conv_transpose_nd : reference::conv_nd, shape,
      to_reference(attributes.activation), context.input(2) != nullptr);
}

template <bool kTranspose>
Result<std::unique_ptr<CpuKernel>> make_convolution_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::ConvAttributes attributes, parse_convolution(context, kTranspose));
  if (context.input(0)->shape.size() > 4) {
    return make_volume_convolution_kernel<kTranspose>(context, attributes);
  }
  ORKNN_ASSIGN_OR_RETURN(reference::Conv2DShape shape, conv_geometry(context, attributes));
  const reference::FusedActivation activation = to_reference(attributes.activation);
  const bool silu = attributes.activation.kind == graph::FusedActivationAttributes::Kind::kSilu;
  if (auto fast = kTranspose ? optimized::make_conv_transpose2d_kernel(context, shape, activation)
                             : optimized::make_conv2d_kernel(context, shape, activation, silu)) {
    return fast;
  }
  return reference_convolution_kernel<reference::Conv2DShape>(
      kTranspose ? reference::conv_transpose2d : reference::conv2d, shape, activation,
      context.input(2) != nullptr);
}

// ---- int8 operand checks ----------------------------------------------------------------------

bool is_per_tensor_int8(const Tensor& tensor) {
  return tensor.data_type == DataType::kInt8 && tensor.quantization.is_quantized() &&
         !tensor.quantization.is_per_channel();
}

// How an int8 product is quantized. `weight_axis` is the weights' output-channel axis (-1: only
// per-tensor weights are accepted), `bias_axis` likewise for the bias.
struct Int8Operands {
  const Tensor* input = nullptr;
  const Tensor* weights = nullptr;
  const Tensor* bias = nullptr;
  int weight_axis = -1;
  int bias_axis = 0;
  int64_t channels = 1;          // output channels
  int64_t reduction_length = 1;  // products per accumulator
  double alpha = 1.0;
  // Whether the kernel applies a fused SiLU epilogue (docs/quantization.md 4.3); the kernels
  // without one leave such a node to the float domain.
  bool silu_epilogue = false;
};

template <typename... Parts>
Status not_int8(const KernelBuildContext& context, const Parts&... parts) {
  return unimplemented(context.node.describe(), ": no int8 kernel: ", parts...);
}

// The scale (or zero point) of channel c of a per-tensor or per-channel quantization.
template <typename T>
T of_channel(const std::vector<T>& values, int64_t channel) {
  return values.size() == 1 ? values[0] : values[static_cast<size_t>(channel)];
}

Status check_bias(const KernelBuildContext& context, const Int8Operands& operands) {
  const Tensor& bias = *operands.bias;
  const graph::Quantization& q = bias.quantization;
  if (bias.data_type != DataType::kInt32 || !q.is_quantized() || !bias.is_constant()) {
    return not_int8(context, "bias '", bias.name, "' is not a quantized INT32 constant");
  }
  if (q.is_per_channel() &&
      (q.scales.size() != static_cast<size_t>(operands.channels) || q.axis != operands.bias_axis)) {
    return not_int8(context, "bias '", bias.name, "' is not quantized per output channel");
  }
  const double input_scale = operands.input->quantization.scales[0];
  const graph::Quantization& weight_q = operands.weights->quantization;
  for (int64_t c = 0; c < operands.channels; ++c) {
    const double expected = input_scale * of_channel(weight_q.scales, c);
    const double scale = of_channel(q.scales, c);
    if (of_channel(q.zero_points, c) != 0 || std::fabs(scale - expected) > 1e-5 * expected) {
      return not_int8(context, "bias '", bias.name, "' channel ", c, " has scale ", scale,
                      " and zero point ", of_channel(q.zero_points, c),
                      ", expected input scale x weight scale = ", expected, " and 0");
    }
  }
  return ok_status();
}

int64_t largest_bias_magnitude(const Tensor& bias) {
  int64_t largest = 0;
  for (int64_t i = 0; i < bias.elements(); ++i) {
    int32_t value;
    std::memcpy(&value, bias.constant_data + 4 * i, sizeof(value));
    largest = std::max<int64_t>(largest, std::abs(static_cast<int64_t>(value)));
  }
  return largest;
}

// Largest |q - zero_point| over int8 codes q.
int64_t largest_offset(int32_t zero_point) {
  return std::max<int64_t>(127 - static_cast<int64_t>(zero_point),
                           static_cast<int64_t>(zero_point) + 128);
}

// The quantized-domain clamp that a fused Relu or Clip becomes, or the SiLU epilogue.
Status fused_activation(const KernelBuildContext& context, const Int8Operands& operands,
                        const graph::FusedActivationAttributes& activation, float output_scale,
                        reference::Int8Requantization* q) {
  using Kind = graph::FusedActivationAttributes::Kind;
  if (activation.kind == Kind::kLeakyRelu) {
    return not_int8(context, "a fused LeakyRelu is not a clamp");
  }
  if (activation.kind == Kind::kSilu) {
    if (!operands.silu_epilogue) {
      return not_int8(context, "a fused SiLU is computed in float before quantizing the output");
    }
    // The multipliers become dequantization scales: the accumulator is taken back to real
    // values, SiLU applied in float, and the result quantized once.
    const double input_scale = operands.input->quantization.scales[0];
    const std::vector<float>& weight_scales = operands.weights->quantization.scales;
    for (int64_t c = 0; c < operands.channels; ++c) {
      q->multipliers[static_cast<size_t>(c)] =
          reference::silu_dequantization_scale(input_scale, of_channel(weight_scales, c));
    }
    q->silu = true;
    q->output_scale = output_scale;
    return ok_status();
  }
  if (activation.kind == Kind::kRelu) q->output_minimum = std::max(-128, q->output_zero_point);
  if (activation.kind == Kind::kClip) {
    q->output_minimum = quantize_int8(activation.minimum, output_scale, q->output_zero_point);
    q->output_maximum = quantize_int8(activation.maximum, output_scale, q->output_zero_point);
  }
  return ok_status();
}

Result<reference::Int8Requantization> plan_int8(
    const KernelBuildContext& context, const Int8Operands& operands,
    const graph::FusedActivationAttributes& activation) {
  const Tensor& input = *operands.input;
  const Tensor& weights = *operands.weights;
  const Tensor& output = *context.outputs[0];
  if (!is_per_tensor_int8(input) || !is_per_tensor_int8(output)) {
    return not_int8(context, "input and output must be per-tensor INT8");
  }
  const graph::Quantization& weight_q = weights.quantization;
  if (weights.data_type != DataType::kInt8 || !weight_q.is_quantized()) {
    return not_int8(context, "weights '", weights.name, "' are not quantized INT8");
  }
  if (weight_q.is_per_channel() &&
      (operands.weight_axis < 0 || weight_q.axis != operands.weight_axis ||
       weight_q.scales.size() != static_cast<size_t>(operands.channels))) {
    return not_int8(context, "weights '", weights.name,
                    "' are not quantized per output channel along axis ", operands.weight_axis);
  }
  if (operands.bias) ORKNN_RETURN_IF_ERROR(check_bias(context, operands));

  reference::Int8Requantization q;
  q.input_zero_point = input.quantization.zero_points[0];
  q.output_zero_point = output.quantization.zero_points[0];
  const double input_scale = input.quantization.scales[0];
  const double output_scale = output.quantization.scales[0];
  int64_t largest_weight_offset = 0;
  for (int64_t c = 0; c < operands.channels; ++c) {
    const int32_t weight_zero_point = of_channel(weight_q.zero_points, c);
    q.weight_zero_points.push_back(weight_zero_point);
    q.multipliers.push_back(reference::requantization_multiplier(
        input_scale, of_channel(weight_q.scales, c), output_scale, operands.alpha));
    largest_weight_offset = std::max(largest_weight_offset, largest_offset(weight_zero_point));
  }
  // The rule accumulates in int32; refuse shapes whose worst case would not fit.
  const int64_t worst =
      operands.reduction_length * largest_offset(q.input_zero_point) * largest_weight_offset +
      (operands.bias ? largest_bias_magnitude(*operands.bias) : 0);
  if (worst > std::numeric_limits<int32_t>::max()) {
    return not_int8(context, "the int32 accumulator could overflow (", operands.reduction_length,
                    " products per output)");
  }
  ORKNN_RETURN_IF_ERROR(
      fused_activation(context, operands, activation, static_cast<float>(output_scale), &q));
  return q;
}

template <bool kTranspose>
Result<std::unique_ptr<CpuKernel>> make_convolution_int8_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::ConvAttributes attributes, parse_convolution(context, kTranspose));
  ORKNN_ASSIGN_OR_RETURN(reference::Conv2DShape shape, conv_geometry(context, attributes));
  Int8Operands operands;
  operands.input = context.input(0);
  operands.weights = context.input(1);
  operands.bias = context.input(2);
  // Transposed weights are [C, M / group, ...]: their axis 1 is the output channel only when
  // there is one group.
  operands.weight_axis = !kTranspose ? 0 : (shape.groups == 1 ? 1 : -1);
  operands.channels = shape.output_channels;
  operands.reduction_length =
      shape.input_channels / shape.groups * shape.window.kernel_height * shape.window.kernel_width;
  operands.silu_epilogue = !kTranspose;
  ORKNN_ASSIGN_OR_RETURN(reference::Int8Requantization q,
                         plan_int8(context, operands, attributes.activation));
  if (auto fast = kTranspose ? nullptr : optimized::make_conv2d_int8_kernel(context, shape, q))
    return fast;
  const bool has_bias = operands.bias != nullptr;
  return make_function_kernel(
      [shape, q, has_bias](const void* const* inputs, void* const* outputs) {
        const int32_t* bias = has_bias ? typed<int32_t>(inputs[2]) : nullptr;
        auto* output = static_cast<int8_t*>(outputs[0]);
        if constexpr (kTranspose) {
          reference::conv_transpose2d_int8(shape, q, typed<int8_t>(inputs[0]),
                                           typed<int8_t>(inputs[1]), bias, output);
        } else {
          reference::conv2d_int8(shape, q, typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]), bias,
                                 output);
        }
        return ok_status();
      });
}

// ---- Gemm and MatMul ----------------------------------------------------------------------

Result<std::pair<graph::GemmAttributes, reference::GemmParams>> gemm_params(
    const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::GemmAttributes attributes,
                         graph::parse_gemm(context.node, context.input(0)->shape,
                                           context.input(1)->shape, optional_shape(context, 2)));
  reference::GemmParams params;
  params.m = attributes.m;
  params.n = attributes.n;
  params.k = attributes.k;
  params.transpose_a = attributes.transpose_a;
  params.transpose_b = attributes.transpose_b;
  params.alpha = attributes.alpha;
  params.beta = attributes.beta;
  params.c_row_stride = attributes.c_rows > 1 ? attributes.c_columns : 0;
  params.c_column_stride = attributes.c_columns > 1 ? 1 : 0;
  return std::make_pair(attributes, params);
}

Result<std::unique_ptr<CpuKernel>> make_gemm_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(auto parsed, gemm_params(context));
  const reference::GemmParams params = parsed.second;
  const reference::FusedActivation activation = to_reference(parsed.first.activation);
  if (auto fast = optimized::make_gemm_kernel(context, params, activation)) return fast;
  const bool has_c = context.input(2) != nullptr;
  return make_function_kernel(
      [params, activation, has_c](const void* const* inputs, void* const* outputs) {
        reference::gemm(params, activation, typed<float>(inputs[0]), typed<float>(inputs[1]),
                        has_c ? typed<float>(inputs[2]) : nullptr, static_cast<float*>(outputs[0]));
        return ok_status();
      });
}

Result<std::unique_ptr<CpuKernel>> make_gemm_int8_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(auto parsed, gemm_params(context));
  const graph::GemmAttributes& attributes = parsed.first;
  const reference::GemmParams params = parsed.second;
  const Tensor* c = context.input(2);
  if (c && (attributes.alpha != 1.0f || attributes.beta != 1.0f)) {
    return not_int8(context, "alpha and beta must be 1 when C is given");
  }
  Int8Operands operands;
  operands.input = context.input(0);
  operands.weights = context.input(1);
  operands.bias = c;
  operands.weight_axis = attributes.transpose_b ? 0 : 1;
  operands.bias_axis = c && !c->shape.empty() ? static_cast<int>(c->shape.size()) - 1 : 0;
  operands.channels = attributes.n;
  operands.reduction_length = attributes.k;
  operands.alpha = attributes.alpha;
  if (c && c->quantization.is_per_channel() && attributes.c_columns != attributes.n) {
    return not_int8(context, "C is quantized per channel but not laid out along N");
  }
  ORKNN_ASSIGN_OR_RETURN(reference::Int8Requantization q,
                         plan_int8(context, operands, attributes.activation));
  if (auto fast = optimized::make_gemm_int8_kernel(context, params, q)) return fast;
  const bool has_c = c != nullptr;
  return make_function_kernel([params, q, has_c](const void* const* inputs, void* const* outputs) {
    reference::gemm_int8(params, q, typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]),
                         has_c ? typed<int32_t>(inputs[2]) : nullptr,
                         static_cast<int8_t*>(outputs[0]));
    return ok_status();
  });
}

Result<std::pair<graph::MatMulAttributes, reference::MatMulParams>> matmul_params(
    const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(
      graph::MatMulAttributes attributes,
      graph::parse_matmul(context.node, context.input(0)->shape, context.input(1)->shape));
  reference::MatMulParams params;
  params.m = attributes.m;
  params.n = attributes.n;
  params.k = attributes.k;
  params.batch_shape = attributes.batch_shape;
  // Row-major strides over each operand's own batch dimensions, 0 where it is broadcast.
  const size_t rank = attributes.batch_shape.size();
  params.a_batch_strides.assign(rank, 0);
  params.b_batch_strides.assign(rank, 0);
  int64_t a_stride = 1, b_stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (attributes.a_batch[d] != 1) params.a_batch_strides[d] = a_stride;
    if (attributes.b_batch[d] != 1) params.b_batch_strides[d] = b_stride;
    a_stride *= attributes.a_batch[d];
    b_stride *= attributes.b_batch[d];
  }
  return std::make_pair(attributes, params);
}

Result<std::unique_ptr<CpuKernel>> make_matmul_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(auto parsed, matmul_params(context));
  const reference::MatMulParams params = parsed.second;
  const reference::FusedActivation activation = to_reference(parsed.first.activation);
  if (auto fast = optimized::make_matmul_kernel(context, params, activation)) return fast;
  return make_function_kernel(
      [params, activation](const void* const* inputs, void* const* outputs) {
        reference::matmul(params, activation, typed<float>(inputs[0]), typed<float>(inputs[1]),
                          static_cast<float*>(outputs[0]));
        return ok_status();
      });
}

Result<std::unique_ptr<CpuKernel>> make_matmul_int8_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(auto parsed, matmul_params(context));
  const graph::MatMulAttributes& attributes = parsed.first;
  const reference::MatMulParams params = parsed.second;
  Int8Operands operands;
  operands.input = context.input(0);
  operands.weights = context.input(1);
  const size_t b_rank = operands.weights->shape.size();
  // A non-constant B is an activation and therefore per-tensor (the registry checked it).
  operands.weight_axis = b_rank >= 2 ? static_cast<int>(b_rank) - 1 : -1;
  operands.channels = attributes.n;
  operands.reduction_length = attributes.k;
  ORKNN_ASSIGN_OR_RETURN(reference::Int8Requantization q,
                         plan_int8(context, operands, attributes.activation));
  if (auto fast = optimized::make_matmul_int8_kernel(context, params, q)) return fast;
  return make_function_kernel([params, q](const void* const* inputs, void* const* outputs) {
    reference::matmul_int8(params, q, typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]),
                           static_cast<int8_t*>(outputs[0]));
    return ok_status();
  });
}

bool is_float32(const Tensor* tensor) {
  return tensor && tensor->data_type == DataType::kFloat32;
}

}  // namespace

Result<std::unique_ptr<CpuKernel>> make_residual_convolution_kernel(
    const KernelBuildContext& convolution, const KernelBuildContext& add,
    const KernelBuildContext* activation) {
  auto not_fused = [&] {
    return unimplemented(convolution.node.describe(), ": no residual Add fused with ",
                         add.node.describe());
  };
  if (convolution.node.op_type != "Conv" || add.node.op_type != "Add" ||
      convolution.outputs.size() != 1 || add.inputs.size() != 2 || add.outputs.size() != 1) {
    return not_fused();
  }
  const Tensor* result = convolution.outputs[0];
  const Tensor* output = add.outputs[0];
  for (const Tensor* tensor :
       {convolution.input(0), convolution.input(1), result, add.input(0), add.input(1), output}) {
    if (!is_float32(tensor)) return not_fused();
  }
  // Both operands have the convolution's output shape: no broadcast.
  if (result->shape.size() != 4 || add.input(0)->shape != result->shape ||
      add.input(1)->shape != result->shape || output->shape != result->shape) {
    return not_fused();
  }
  ORKNN_ASSIGN_OR_RETURN(graph::ConvAttributes attributes, parse_convolution(convolution, false));
  // SiLU runs after the convolution's kernel (with_fused_silu), not in its driver.
  if (attributes.activation.kind == graph::FusedActivationAttributes::Kind::kSilu) {
    return not_fused();
  }
  ORKNN_ASSIGN_OR_RETURN(reference::Conv2DShape shape, conv_geometry(convolution, attributes));
  kernels::cpu::ResidualAddition addition;
  // Add(conv, residual) or Add(residual, conv): the operands stay in the graph's order.
  addition.residual_first = add.node.inputs[1] == convolution.node.outputs[0];
  if (activation) {
    ORKNN_ASSIGN_OR_RETURN(const std::optional<reference::UnaryParams> after,
                           fused_float_activation(*activation));
    if (!after || !kernels::cpu::residual_activation_supported(*after)) return not_fused();
    addition.has_after = true;
    addition.after = *after;
  }
  if (auto fast = optimized::make_conv2d_residual_kernel(
          convolution, shape, to_reference(attributes.activation), addition)) {
    return fast;
  }
  return not_fused();
}

std::vector<CpuOpDefinition> convolution_cpu_ops() {
  return {
      {"Conv", DtypeHandling::kFloatDomain, with_fused_silu<make_convolution_kernel<false>>,
       make_convolution_int8_kernel<false>},
      {"ConvTranspose", DtypeHandling::kFloatDomain, with_fused_silu<make_convolution_kernel<true>>,
       make_convolution_int8_kernel<true>},
      {"Gemm", DtypeHandling::kFloatDomain, with_fused_silu<make_gemm_kernel>,
       make_gemm_int8_kernel},
      {"MatMul", DtypeHandling::kFloatDomain, with_fused_silu<make_matmul_kernel>,
       make_matmul_int8_kernel},
  };
}

}  // namespace orknn::devices::cpu
