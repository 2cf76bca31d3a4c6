// CPU kernel of ONNX Resize, in the float domain (the registry converts fp16 and int8 tensors
// around it): the float32 kernels of the common modes, or the general separable resampler for
// the rest (cubic, antialias, tf_crop_and_resize, half_pixel_symmetric, linear over leading
// dimensions, align_corners with an inexact scale).
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "graph/ops/resize_attributes.h"
#include "graph/tensor_conversion.h"
#include "reference/resize.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using Attributes = graph::ResizeAttributes;

const graph::Tensor* operand(const KernelBuildContext& context, int position) {
  return position < 0 ? nullptr : context.input(static_cast<size_t>(position));
}

reference::CoordinateTransform to_reference(Attributes::Transform transform) {
  switch (transform) {
    case Attributes::Transform::kPytorchHalfPixel:
      return reference::CoordinateTransform::kPytorchHalfPixel;
    case Attributes::Transform::kAlignCorners:
      return reference::CoordinateTransform::kAlignCorners;
    case Attributes::Transform::kAsymmetric:
      return reference::CoordinateTransform::kAsymmetric;
    case Attributes::Transform::kHalfPixelSymmetric:
      return reference::CoordinateTransform::kHalfPixelSymmetric;
    case Attributes::Transform::kTfHalfPixelForNn:
      return reference::CoordinateTransform::kTfHalfPixelForNn;
    case Attributes::Transform::kTfCropAndResize:
      return reference::CoordinateTransform::kTfCropAndResize;
    default:
      return reference::CoordinateTransform::kHalfPixel;
  }
}

reference::NearestRounding to_reference(Attributes::Rounding rounding) {
  switch (rounding) {
    case Attributes::Rounding::kRoundPreferCeil:
      return reference::NearestRounding::kRoundPreferCeil;
    case Attributes::Rounding::kFloor:
      return reference::NearestRounding::kFloor;
    case Attributes::Rounding::kCeil:
      return reference::NearestRounding::kCeil;
    default:
      return reference::NearestRounding::kRoundPreferFloor;
  }
}

reference::InterpolationMode to_reference(Attributes::Mode mode) {
  switch (mode) {
    case Attributes::Mode::kLinear:
      return reference::InterpolationMode::kLinear;
    case Attributes::Mode::kCubic:
      return reference::InterpolationMode::kCubic;
    default:
      return reference::InterpolationMode::kNearest;
  }
}

Result<Attributes> parse_attributes(const KernelBuildContext& context) {
  const graph::Node& node = context.node;
  return graph::parse_resize(node, context.input(0)->shape,
                             operand(context, graph::resize_roi_position(node)),
                             operand(context, graph::resize_scales_position(node)),
                             operand(context, graph::resize_sizes_position(node)));
}

// The parameters of the float32 kernels of the common modes (reference/resize.h).
reference::ResizeParams common_case_params(const KernelBuildContext& context,
                                           const Attributes& attributes) {
  reference::ResizeParams params;
  params.input_shape = context.input(0)->shape;
  params.output_shape = attributes.output_shape;
  params.scales = attributes.scales;
  params.transform = to_reference(attributes.transform);
  params.rounding = to_reference(attributes.rounding);
  return params;
}

Result<std::unique_ptr<CpuKernel>> make_general_resize_kernel(const KernelBuildContext& context,
                                                              const Attributes& attributes) {
  reference::GeneralResizeOptions options;
  options.mode = to_reference(attributes.mode);
  options.transform = to_reference(attributes.transform);
  options.rounding = to_reference(attributes.rounding);
  options.scales.assign(attributes.scales.begin(), attributes.scales.end());
  options.roi_start.assign(attributes.roi_start.begin(), attributes.roi_start.end());
  options.roi_end.assign(attributes.roi_end.begin(), attributes.roi_end.end());
  options.cubic_coefficient = attributes.cubic_coefficient;
  options.antialias = attributes.antialias;
  options.exclude_outside = attributes.exclude_outside;
  options.extrapolation_value = attributes.extrapolation_value;
  reference::GeneralResizeParams params =
      reference::make_general_resize(options, context.input(0)->shape, attributes.output_shape);
  return make_function_kernel([params](const void* const* inputs, void* const* outputs) {
    reference::resize_general(params, static_cast<const float*>(inputs[0]),
                              static_cast<float*>(outputs[0]));
    return ok_status();
  });
}

Result<std::unique_ptr<CpuKernel>> make_resize_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(Attributes attributes, parse_attributes(context));
  if (!attributes.common_case) return make_general_resize_kernel(context, attributes);
  reference::ResizeParams params = common_case_params(context, attributes);
  const bool linear = attributes.mode == Attributes::Mode::kLinear;
  if (!linear) {
    if (auto fast = optimized::make_resize_nearest_kernel(params)) return fast;
  }
  if (linear && params.input_shape.size() == 1) {
    // Bilinear over [1, W] is linear over W.
    params.input_shape.insert(params.input_shape.begin(), 1);
    params.output_shape.insert(params.output_shape.begin(), 1);
    params.scales.insert(params.scales.begin(), 1.0f);
  }
  if (linear) {
    if (auto fast = optimized::make_resize_bilinear_kernel(params)) return fast;
  }
  return make_function_kernel([params, linear](const void* const* inputs, void* const* outputs) {
    const auto* input = static_cast<const float*>(inputs[0]);
    auto* output = static_cast<float*>(outputs[0]);
    if (linear) {
      reference::resize_bilinear(params, input, output);
    } else {
      reference::resize_nearest(params, input, output);
    }
    return ok_status();
  });
}

// int8 nearest Resize (per-tensor input and output): every output is one input value, so the
// float domain's result for it is encode(decode(code)) of the code it copies. A 256-entry table
// built with those same conversions (the identity when the quantizations agree) and a gather of
// codes give that result bit for bit. Rows that read the same input row as the previous output
// row are copied from it; with the identity table the codes are copied as they are. Other int8
// Resizes take the float domain.
Result<std::unique_ptr<CpuKernel>> make_resize_int8_kernel(const KernelBuildContext& context) {
  const graph::Node& node = context.node;
  ORKNN_ASSIGN_OR_RETURN(Attributes attributes, parse_attributes(context));
  if (!attributes.common_case || attributes.mode != Attributes::Mode::kNearest ||
      attributes.output_shape.empty()) {
    return unimplemented(node.describe(), ": int8 Resize gathers codes in nearest mode only");
  }
  reference::ResizeParams params = common_case_params(context, attributes);

  std::array<int8_t, 256> codes;
  for (int i = 0; i < 256; ++i) codes[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  graph::Tensor table_input = *context.input(0);
  table_input.shape = {256};
  table_input.constant_data = nullptr;
  graph::Tensor table_output = *context.outputs[0];
  table_output.shape = {256};
  table_output.constant_data = nullptr;
  std::array<float, 256> reals;
  graph::decode_to_float(table_input, codes.data(), reals.data());
  std::array<int8_t, 256> table;  // indexed by code + 128
  graph::encode_from_float(table_output, reals.data(), table.data());

  // Per output row (every dimension but the last), the offset of the input row it reads; per
  // output column, the input column.
  const size_t rank = params.output_shape.size();
  const int64_t output_width = params.output_shape[rank - 1];
  std::vector<int64_t> columns(static_cast<size_t>(output_width));
  for (int64_t o = 0; o < output_width; ++o) {
    columns[static_cast<size_t>(o)] = reference::nearest_index(params, rank - 1, o);
  }
  std::vector<int64_t> row_sources;
  std::vector<int64_t> position(rank - 1, 0);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= params.output_shape[d];
  row_sources.reserve(static_cast<size_t>(rows));
  for (int64_t row = 0; row < rows; ++row) {
    int64_t source = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      source = source * params.input_shape[d] + reference::nearest_index(params, d, position[d]);
    }
    row_sources.push_back(source * params.input_shape[rank - 1]);
    for (size_t d = rank - 1; d-- > 0;) {  // the next row, last dimension fastest
      if (++position[d] < params.output_shape[d]) break;
      position[d] = 0;
    }
  }
  // The common upsampling (YOLO necks: the same quantization in and out, every column twice)
  // copies each code into two bytes without the table (yolov5s int8's two Resizes, one thread:
  // 472 us with the table on every code).
  bool identity = true;
  for (size_t i = 0; i < table.size(); ++i) {
    identity = identity && table[i] == static_cast<int8_t>(static_cast<int>(i) - 128);
  }
  bool doubles = identity;
  for (size_t o = 0; o < columns.size(); ++o) {
    doubles = doubles && columns[o] == static_cast<int64_t>(o / 2);
  }
  return make_function_kernel([table, columns, row_sources, identity, doubles](
                                  const void* const* inputs, void* const* outputs) {
    const auto* input = static_cast<const int8_t*>(inputs[0]);
    auto* output = static_cast<int8_t*>(outputs[0]);
    const size_t width = columns.size();
    for (size_t row = 0; row < row_sources.size(); ++row) {
      int8_t* out = output + row * width;
      if (row > 0 && row_sources[row] == row_sources[row - 1]) {
        std::memcpy(out, out - width, width);
        continue;
      }
      const int8_t* source = input + row_sources[row];
      if (doubles) {
        for (size_t j = 0; j < width / 2; ++j) {
          // The code in both bytes of a 16-bit word.
          const auto pair = static_cast<uint16_t>(static_cast<uint8_t>(source[j]) * 0x0101u);
          std::memcpy(out + 2 * j, &pair, sizeof(pair));
        }
        if (width % 2 != 0) out[width - 1] = source[width / 2];
      } else if (identity) {
        for (size_t j = 0; j < width; ++j) out[j] = source[columns[j]];
      } else {
        for (size_t j = 0; j < width; ++j) {
          out[j] = table[static_cast<size_t>(source[columns[j]] + 128)];
        }
      }
    }
    return ok_status();
  });
}

}  // namespace

std::vector<CpuOpDefinition> resize_cpu_ops() {
  return {{"Resize", DtypeHandling::kFloatDomain, make_resize_kernel, make_resize_int8_kernel}};
}

}  // namespace orknn::devices::cpu
