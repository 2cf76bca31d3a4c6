// CPU kernel of ONNX Resize, in the float domain (the registry converts fp16 and int8 tensors
// around it). What the reference kernels cannot do (cubic, other coordinate modes, linear over
// leading dimensions, antialias) is refused here with kUnimplemented.
#include "reference/resize.h"
#include "devices/cpu/cpu_kernel.h"
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

Result<std::unique_ptr<CpuKernel>> make_resize_kernel(const KernelBuildContext& context) {
  const graph::Node& node = context.node;
  ORKNN_ASSIGN_OR_RETURN(Attributes attributes,
                         graph::parse_resize(node, context.input(0)->shape,
                                             operand(context, graph::resize_scales_position(node)),
                                             operand(context, graph::resize_sizes_position(node))));
  if (!attributes.unsupported.empty()) {
    return unimplemented(node.describe(), ": ", attributes.unsupported);
  }
  reference::ResizeParams params;
  params.input_shape = context.input(0)->shape;
  params.output_shape = attributes.output_shape;
  params.scales = attributes.scales;
  params.transform = to_reference(attributes.transform);
  params.rounding = to_reference(attributes.rounding);
  const bool linear = attributes.mode == Attributes::Mode::kLinear;
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
