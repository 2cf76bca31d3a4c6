// CPU kernels of the pooling family, in the float domain (the registry converts fp16 and
// int8 tensors around them; MaxPool's int64 Indices output passes through unchanged), plus
// MaxPool on plain integer data, and int8 MaxPool and GlobalAveragePool that give the float
// domain's bytes without decoding the tensor. 1-D and 2-D windows run the 2-D kernels, more axes
// the N-D ones.
#include <array>
#include <type_traits>

#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/ops/window_2d.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "graph/ops/pooling_attributes.h"
#include "graph/tensor_conversion.h"
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

// Some output of the window lies wholly in the padding: the reference gives it the lowest
// float, whose encoding need not be the re-encoded lowest code.
bool has_window_without_input(const reference::Window2D& w) {
  auto empty = [](int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
    for (int64_t tap = 0; tap < kernel; ++tap) {
      const int64_t position = start + tap * dilation;
      if (position >= 0 && position < size) return false;
    }
    return true;
  };
  for (int64_t oh = 0; oh < w.output_height; ++oh) {
    if (empty(oh * w.stride_height - w.pad_top, w.kernel_height, w.dilation_height,
              w.input_height)) {
      return true;
    }
  }
  for (int64_t ow = 0; ow < w.output_width; ++ow) {
    if (empty(ow * w.stride_width - w.pad_left, w.kernel_width, w.dilation_width, w.input_width)) {
      return true;
    }
  }
  return false;
}

// The max pool of the codes, then each code re-encoded into the output's quantization through
// a table (decode, encode: the float domain's path, so bit-exact by construction), applied in
// place by the optimized table lookup (on the pool; VBMI where the CPU has it).
class ReencodedMaxPool final : public CpuKernel {
 public:
  ReencodedMaxPool(std::unique_ptr<CpuKernel> codes_pool, std::unique_ptr<CpuKernel> reencode)
      : codes_pool_(std::move(codes_pool)), reencode_(std::move(reencode)) {}
  Status run(const void* const* inputs, void* const* outputs) override {
    ORKNN_RETURN_IF_ERROR(codes_pool_->run(inputs, outputs));
    const void* codes = outputs[0];
    return reencode_->run(&codes, outputs);
  }

 private:
  std::unique_ptr<CpuKernel> codes_pool_;
  std::unique_ptr<CpuKernel> reencode_;
};

// MaxPool on per-tensor int8: decoding and encoding are non-decreasing, so the float domain's
// result is the re-encoded maximum code (the code itself when both tensors share one
// quantization). Windows wholly in the padding and anything else go to the float domain.
Result<std::unique_ptr<CpuKernel>> make_max_pool_int8_kernel(const KernelBuildContext& context) {
  const graph::Tensor* input = context.input(0);
  const graph::Tensor* output = context.outputs[0];
  const bool positive_scales =
      input->quantization.scales[0] > 0.0f && output->quantization.scales[0] > 0.0f;
  if (context.outputs.size() != 1 || has_volume_window(context) || !positive_scales) {
    return unimplemented(context.node.describe(), ": no int8 max pool; float domain");
  }
  ORKNN_ASSIGN_OR_RETURN(graph::PoolAttributes attributes,
                         graph::parse_pool(context.node, input->shape));
  ORKNN_ASSIGN_OR_RETURN(reference::Pool2DShape shape, pool_geometry(context, attributes));
  std::unique_ptr<CpuKernel> codes_pool = optimized::make_max_pool2d_int8_kernel(shape);
  if (!codes_pool ||
      (!(output->quantization == input->quantization) && has_window_without_input(shape.window))) {
    return unimplemented(context.node.describe(), ": no int8 max pool; float domain");
  }
  if (output->quantization == input->quantization) return codes_pool;
  std::array<int8_t, 256> codes;
  for (int i = 0; i < 256; ++i) codes[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  graph::Tensor table_input = *input;
  table_input.shape = {256};
  graph::Tensor table_output = *output;
  table_output.shape = {256};
  std::array<float, 256> reals;
  std::array<int8_t, 256> table;
  graph::decode_to_float(table_input, codes.data(), reals.data());
  graph::encode_from_float(table_output, reals.data(), table.data());
  std::unique_ptr<CpuKernel> reencode =
      optimized::make_lookup_int8_kernel(table.data(), output->elements());
  if (!reencode) return unimplemented(context.node.describe(), ": no int8 max pool; float domain");
  return std::unique_ptr<CpuKernel>(
      std::make_unique<ReencodedMaxPool>(std::move(codes_pool), std::move(reencode)));
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

// GlobalAveragePool from per-tensor int8 codes to per-tensor int8 codes: the averages of the
// decoded codes (the float domain's decode table, summed by the kernel without decoding the
// tensor first), then the float domain's own encoding of those few values: the float domain's
// bytes by construction.
class Int8GlobalAveragePool final : public CpuKernel {
 public:
  Int8GlobalAveragePool(std::unique_ptr<CpuKernel> averages, graph::Tensor output)
      : averages_(std::move(averages)),
        output_(std::move(output)),
        reals_(static_cast<size_t>(output_.elements())) {}
  Status run(const void* const* inputs, void* const* outputs) override {
    void* reals = reals_.data();
    ORKNN_RETURN_IF_ERROR(averages_->run(inputs, &reals));
    graph::encode_from_float(output_, reals_.data(), outputs[0]);
    return ok_status();
  }

 private:
  std::unique_ptr<CpuKernel> averages_;
  graph::Tensor output_;
  std::vector<float> reals_;  // one average per plane
};

Result<std::unique_ptr<CpuKernel>> make_global_average_pool_int8_kernel(
    const KernelBuildContext& context) {
  const graph::Tensor* input = context.input(0);
  const graph::Tensor* output = context.outputs[0];
  const Shape& shape = input->shape;
  if (context.outputs.size() != 1 || shape.size() < 3 || input->data_type != DataType::kInt8 ||
      output->data_type != DataType::kInt8 || input->quantization.is_per_channel() ||
      output->quantization.is_per_channel()) {
    return unimplemented(context.node.describe(), ": no int8 global average pool; float domain");
  }
  const int64_t planes = shape[0] * shape[1];
  const int64_t plane_size = graph::element_count(shape) / std::max<int64_t>(planes, 1);
  if (output->elements() != planes) return context.error("output must have one value per plane");
  std::array<int8_t, 256> codes;
  for (int i = 0; i < 256; ++i) codes[static_cast<size_t>(i)] = static_cast<int8_t>(i);
  graph::Tensor table_input = *input;
  table_input.shape = {256};
  std::array<float, 256> decoded;
  graph::decode_to_float(table_input, codes.data(), decoded.data());
  std::unique_ptr<CpuKernel> averages =
      optimized::make_global_average_pool_int8_kernel(planes, plane_size, decoded.data());
  if (!averages) {
    return unimplemented(context.node.describe(), ": no int8 global average pool; float domain");
  }
  return std::unique_ptr<CpuKernel>(
      std::make_unique<Int8GlobalAveragePool>(std::move(averages), *output));
}

}  // namespace

std::vector<CpuOpDefinition> pooling_cpu_ops() {
  return {
      {"MaxPool", DtypeHandling::kFloatDomain, make_max_pool_kernel, make_max_pool_int8_kernel,
       make_integer_max_pool_kernel},
      {"AveragePool", DtypeHandling::kFloatDomain, make_average_pool_kernel, nullptr},
      {"GlobalAveragePool", DtypeHandling::kFloatDomain, make_global_pool_kernel<false>,
       make_global_average_pool_int8_kernel},
      {"GlobalMaxPool", DtypeHandling::kFloatDomain, make_global_pool_kernel<true>, nullptr},
  };
}

}  // namespace orknn::devices::cpu
