// CPU kernels of the pooling family, in the float domain (the registry converts fp16 and
// int8 tensors around them; MaxPool's int64 Indices output passes through unchanged), plus
// MaxPool on plain integer data. 1-D and 2-D windows run the 2-D kernels, more axes the N-D ones.
#include <type_traits>

#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/ops/window_2d.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "graph/ops/pooling_attributes.h"
#include "reference/pooling.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using graph::Shape;

Result<reference::Pool2DShape> pool_geometry(const KernelBuildContext& context,
                                             const graph::PoolAttributes& attributes) {
  const Shape& input = context.input(0)->shape;
  reference::Pool2DShape shape;
  shape.planes = input[0] * input[1];
  ORKNN_ASSIGN_OR_RETURN(shape.window, reference_window_2d(context, attributes.window, "pooling"));
  return shape;
}

bool has_volume_window(const KernelBuildContext& context) {
  return context.input(0)->shape.size() > 4;  // more than two spatial axes
}

Result<reference::PoolNDShape> pool_geometry_nd(const KernelBuildContext& context,
                                                const graph::PoolAttributes& attributes) {
  const Shape& input = context.input(0)->shape;
  reference::PoolNDShape shape;
  shape.planes = input[0] * input[1];
  ORKNN_ASSIGN_OR_RETURN(shape.window, reference_window_nd(context, attributes.window, "pooling"));
  return shape;
}

template <typename Element>
Result<std::unique_ptr<CpuKernel>> make_typed_max_pool_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::PoolAttributes attributes,
                         graph::parse_pool(context.node, context.input(0)->shape));
  const bool with_indices = context.outputs.size() > 1;
  if (with_indices && context.outputs[1]->data_type != DataType::kInt64) {
    return context.error("Indices output must be INT64, not ",
                         data_type_name(context.outputs[1]->data_type));
  }
  if (has_volume_window(context)) {
    if (with_indices && attributes.column_major_indices) {
      return unimplemented(context.node.describe(),
                           ": storage_order 1 (column-major indices) is supported in 1-D and 2-D");
    }
    ORKNN_ASSIGN_OR_RETURN(reference::PoolNDShape shape, pool_geometry_nd(context, attributes));
    return make_function_kernel(
        [shape, with_indices](const void* const* inputs, void* const* outputs) {
          reference::max_pool_nd(shape, static_cast<const Element*>(inputs[0]),
                                 static_cast<Element*>(outputs[0]),
                                 with_indices ? static_cast<int64_t*>(outputs[1]) : nullptr);
          return ok_status();
        });
  }
  ORKNN_ASSIGN_OR_RETURN(reference::Pool2DShape shape, pool_geometry(context, attributes));
  if (!with_indices) {
    if constexpr (std::is_same_v<Element, float>) {
      if (auto fast = optimized::make_max_pool2d_kernel(shape)) return fast;
    }
  }
  const bool column_major = attributes.column_major_indices;
  return make_function_kernel([shape, with_indices, column_major](const void* const* inputs,
                                                                  void* const* outputs) {
    reference::max_pool2d(shape, static_cast<const Element*>(inputs[0]),
                          static_cast<Element*>(outputs[0]),
                          with_indices ? static_cast<int64_t*>(outputs[1]) : nullptr, column_major);
    return ok_status();
  });
}

Result<std::unique_ptr<CpuKernel>> make_max_pool_kernel(const KernelBuildContext& context) {
  return make_typed_max_pool_kernel<float>(context);
}

// MaxPool on per-tensor int8 with the output's quantization equal to the input's: decoding is
// monotonic and encoding a decoded code gives it back, so the float domain's result is the
// maximum of the codes. Anything else is left to the float domain.
Result<std::unique_ptr<CpuKernel>> make_max_pool_int8_kernel(const KernelBuildContext& context) {
  const graph::Tensor* input = context.input(0);
  const bool same_codes = context.outputs.size() == 1 &&
                          context.outputs[0]->data_type == DataType::kInt8 &&
                          context.outputs[0]->quantization == input->quantization;
  if (same_codes && !has_volume_window(context)) {
    ORKNN_ASSIGN_OR_RETURN(graph::PoolAttributes attributes,
                           graph::parse_pool(context.node, input->shape));
    ORKNN_ASSIGN_OR_RETURN(reference::Pool2DShape shape, pool_geometry(context, attributes));
    if (auto fast = optimized::make_max_pool2d_int8_kernel(shape)) return fast;
  }
  return unimplemented(context.node.describe(), ": int8 codes differ; float domain");
}

// MaxPool on plain integer data (ONNX allows int8 and uint8): the maximum of integers is exact
// in their own type.
Result<std::unique_ptr<CpuKernel>> make_integer_max_pool_kernel(const KernelBuildContext& context) {
  const DataType type = context.input(0)->data_type;
  if (context.outputs[0]->data_type != type) {
    return context.error("output 0 must have the input's type ", data_type_name(type), ", not ",
                         data_type_name(context.outputs[0]->data_type));
  }
  switch (type) {
    case DataType::kInt8:
      return make_typed_max_pool_kernel<int8_t>(context);
    case DataType::kUInt8:
      return make_typed_max_pool_kernel<uint8_t>(context);
    case DataType::kInt16:
      return make_typed_max_pool_kernel<int16_t>(context);
    case DataType::kInt32:
      return make_typed_max_pool_kernel<int32_t>(context);
    case DataType::kInt64:
      return make_typed_max_pool_kernel<int64_t>(context);
    default:
      return unimplemented(context.node.describe(), ": MaxPool on ", data_type_name(type),
                           " is not supported");
  }
}

Result<std::unique_ptr<CpuKernel>> make_average_pool_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(graph::PoolAttributes attributes,
                         graph::parse_pool(context.node, context.input(0)->shape));
  const bool count_include_pad = attributes.count_include_pad;
  if (has_volume_window(context)) {
    ORKNN_ASSIGN_OR_RETURN(reference::PoolNDShape shape, pool_geometry_nd(context, attributes));
    return make_function_kernel(
        [shape, count_include_pad](const void* const* inputs, void* const* outputs) {
          reference::average_pool_nd(shape, count_include_pad, static_cast<const float*>(inputs[0]),
                                     static_cast<float*>(outputs[0]));
          return ok_status();
        });
  }
  ORKNN_ASSIGN_OR_RETURN(reference::Pool2DShape shape, pool_geometry(context, attributes));
  if (auto fast = optimized::make_average_pool2d_kernel(shape, count_include_pad)) return fast;
  return make_function_kernel(
      [shape, count_include_pad](const void* const* inputs, void* const* outputs) {
        reference::average_pool2d(shape, count_include_pad, static_cast<const float*>(inputs[0]),
                                  static_cast<float*>(outputs[0]));
        return ok_status();
      });
}

template <bool kMax>
Result<std::unique_ptr<CpuKernel>> make_global_pool_kernel(const KernelBuildContext& context) {
  const Shape& input = context.input(0)->shape;
  if (input.size() < 3) return context.error("input must have rank >= 3");
  const int64_t planes = input[0] * input[1];
  const int64_t plane_size = graph::element_count(input) / std::max<int64_t>(planes, 1);
  if constexpr (!kMax) {
    if (auto fast = optimized::make_global_average_pool_kernel(planes, plane_size)) return fast;
  }
  return make_function_kernel(
      [planes, plane_size](const void* const* inputs, void* const* outputs) {
        const auto* input = static_cast<const float*>(inputs[0]);
        auto* output = static_cast<float*>(outputs[0]);
        if constexpr (kMax) {
          reference::global_max_pool(planes, plane_size, input, output);
        } else {
          reference::global_average_pool(planes, plane_size, input, output);
        }
        return ok_status();
      });
}

}  // namespace

std::vector<CpuOpDefinition> pooling_cpu_ops() {
  return {
      {"MaxPool", DtypeHandling::kFloatDomain, make_max_pool_kernel, make_max_pool_int8_kernel,
       make_integer_max_pool_kernel},
      {"AveragePool", DtypeHandling::kFloatDomain, make_average_pool_kernel, nullptr},
      {"GlobalAveragePool", DtypeHandling::kFloatDomain, make_global_pool_kernel<false>, nullptr},
      {"GlobalMaxPool", DtypeHandling::kFloatDomain, make_global_pool_kernel<true>, nullptr},
  };
}

}  // namespace orknn::devices::cpu
