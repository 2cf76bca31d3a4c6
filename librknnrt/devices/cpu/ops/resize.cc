// CPU kernel of ONNX Resize, in the float domain (the registry converts fp16 and int8 tensors
// around it): the float32 kernels of the common modes, or the general separable resampler for
// the rest (cubic, antialias, tf_crop_and_resize, half_pixel_symmetric, linear over leading
// dimensions, align_corners with an inexact scale).
#include "reference/resize.h"
#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "graph/ops/resize_attributes.h"

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
  const graph::Node& node = context.node;
  ORKNN_ASSIGN_OR_RETURN(Attributes attributes,
                         graph::parse_resize(node, context.input(0)->shape,
                                             operand(context, graph::resize_roi_position(node)),
                                             operand(context, graph::resize_scales_position(node)),
                                             operand(context, graph::resize_sizes_position(node))));
  if (!attributes.common_case) return make_general_resize_kernel(context, attributes);
  reference::ResizeParams params;
  params.input_shape = context.input(0)->shape;
  params.output_shape = attributes.output_shape;
  params.scales = attributes.scales;
  params.transform = to_reference(attributes.transform);
  params.rounding = to_reference(attributes.rounding);
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

}  // namespace

std::vector<CpuOpDefinition> resize_cpu_ops() {
  return {{"Resize", DtypeHandling::kFloatDomain, make_resize_kernel, nullptr}};
}

}  // namespace orknn::devices::cpu
