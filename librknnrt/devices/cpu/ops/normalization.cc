// CPU kernels of the normalization family, all in the float domain.
#include <string>

#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "graph/ops/normalization_attributes.h"
#include "reference/elementwise.h"
#include "reference/normalization.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using graph::Shape;
using graph::Tensor;

Status require_float_tensors(const KernelBuildContext& context) {
  auto check = [&](const Tensor* tensor, const char* role, size_t position) {
    if (!tensor || tensor->data_type == DataType::kFloat32) return ok_status();
    return unimplemented(context.node.describe(), ": ", role, " ", position, " ('", tensor->name,
                         "') is ", data_type_name(tensor->data_type),
                         "; only real-valued (float or quantized) tensors are supported");
  };
  for (size_t i = 0; i < context.inputs.size(); ++i) {
    ORKNN_RETURN_IF_ERROR(check(context.inputs[i], "input", i));
  }
  for (size_t i = 0; i < context.outputs.size(); ++i) {
    ORKNN_RETURN_IF_ERROR(check(context.outputs[i], "output", i));
  }
  return ok_status();
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i) result *= shape[i];
  return result;
}

// [N, C, rest] view of an N x C x D1 x ... tensor.
reference::ChannelLayout channel_layout(const Shape& shape) {
  return reference::ChannelLayout{shape[0], shape[1], product(shape, 2, shape.size())};
}

Result<graph::NormalizationAttributes> parse(const KernelBuildContext& context) {
  ORKNN_RETURN_IF_ERROR(require_float_tensors(context));
  return graph::parse_normalization_attributes(
      context.node, static_cast<int64_t>(context.input(0)->shape.size()));
}

Result<std::unique_ptr<CpuKernel>> make_batch_normalization(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::NormalizationAttributes attributes, parse(context));
  const reference::ChannelLayout layout = channel_layout(context.input(0)->shape);
  const float epsilon = attributes.epsilon;
  return make_function_kernel([layout, epsilon](const void* const* inputs, void* const* outputs) {
    auto in = [&](size_t i) { return static_cast<const float*>(inputs[i]); };
    reference::batch_normalization(layout, epsilon, in(0), in(1), in(2), in(3), in(4),
                                   static_cast<float*>(outputs[0]));
    return ok_status();
  });
}

Result<std::unique_ptr<CpuKernel>> make_instance_normalization(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::NormalizationAttributes attributes, parse(context));
  const reference::ChannelLayout layout = channel_layout(context.input(0)->shape);
  const float epsilon = attributes.epsilon;
  return make_function_kernel([layout, epsilon](const void* const* inputs, void* const* outputs) {
    auto in = [&](size_t i) { return static_cast<const float*>(inputs[i]); };
    reference::instance_normalization(layout, epsilon, in(0), in(1), in(2),
                                      static_cast<float*>(outputs[0]));
    return ok_status();
  });
}

// Scale or bias of LayerNormalization as one value per normalized element: used in place when
// it already has that many elements, otherwise expanded into `scratch` at run time.
struct RowOperand {
  bool present = false;
  bool expand = false;
  reference::BroadcastParams broadcast;
  std::vector<float> scratch;

  // Precondition when present: inputs has an entry at `position`.
  const float* resolve(const void* const* inputs, size_t position) {
    if (!present) return nullptr;
    const auto* data = static_cast<const float*>(inputs[position]);
    if (!expand) return data;
    reference::broadcast_to(broadcast, data, scratch.data());
    return scratch.data();
  }
};

RowOperand row_operand(const Tensor* tensor, const Shape& normalized_shape) {
  RowOperand operand;
  if (!tensor) return operand;
  operand.present = true;
  const int64_t row_size = graph::element_count(normalized_shape);
  if (tensor->elements() == row_size) return operand;
  operand.expand = true;
  operand.broadcast = reference::make_broadcast_params(tensor->shape, normalized_shape);
  operand.scratch.resize(static_cast<size_t>(row_size));
  return operand;
}

Result<std::unique_ptr<CpuKernel>> make_layer_normalization(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::NormalizationAttributes attributes, parse(context));
  const Shape& shape = context.input(0)->shape;
  const size_t axis = static_cast<size_t>(attributes.axis);
  const Shape normalized_shape(shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
  const int64_t rows = product(shape, 0, axis);
  const int64_t row_size = graph::element_count(normalized_shape);
  const float epsilon = attributes.epsilon;
  const size_t output_count = context.outputs.size();
  return make_function_kernel([rows, row_size, epsilon, output_count,
                               scale = row_operand(context.input(1), normalized_shape),
                               bias = row_operand(context.input(2), normalized_shape)](
                                  const void* const* inputs, void* const* outputs) mutable {
    auto out = [&](size_t i) {
      return i < output_count ? static_cast<float*>(outputs[i]) : nullptr;
    };
    reference::layer_normalization(rows, row_size, epsilon, static_cast<const float*>(inputs[0]),
                                   scale.resolve(inputs, 1), bias.resolve(inputs, 2), out(0),
                                   out(1), out(2));
    return ok_status();
  });
}

Result<std::unique_ptr<CpuKernel>> make_softmax(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::NormalizationAttributes attributes, parse(context));
  const Shape& shape = context.input(0)->shape;
  const size_t axis = static_cast<size_t>(attributes.axis);
  reference::ChannelLayout layout;
  layout.outer = product(shape, 0, axis);
  if (attributes.legacy_coerce_2d) {
    layout.channels = product(shape, axis, shape.size());
    layout.inner = 1;
  } else {
    layout.channels = shape[axis];
    layout.inner = product(shape, axis + 1, shape.size());
  }
  if (auto fast = optimized::make_softmax_kernel(layout)) return fast;
  return make_function_kernel([layout](const void* const* inputs, void* const* outputs) {
    reference::softmax(layout, static_cast<const float*>(inputs[0]),
                       static_cast<float*>(outputs[0]));
    return ok_status();
  });
}

}  // namespace

std::vector<CpuOpDefinition> normalization_cpu_ops() {
  return {
      {"BatchNormalization", DtypeHandling::kFloatDomain, make_batch_normalization, nullptr},
      {"InstanceNormalization", DtypeHandling::kFloatDomain, make_instance_normalization, nullptr},
      {"LayerNormalization", DtypeHandling::kFloatDomain, make_layer_normalization, nullptr},
      {"Softmax", DtypeHandling::kFloatDomain, make_softmax, nullptr},
  };
}

}  // namespace orknn::devices::cpu
