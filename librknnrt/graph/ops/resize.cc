// Shape and operand validation of ONNX Resize; see resize_attributes.h for the forms accepted.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/op_schema.h"
#include "graph/ops/node_error.h"
#include "graph/ops/resize_attributes.h"

namespace orknn::graph {
namespace {

using Mode = ResizeAttributes::Mode;
using Transform = ResizeAttributes::Transform;
using Rounding = ResizeAttributes::Rounding;

Result<std::vector<float>> read_floats(const Node& node, const Tensor& tensor) {
  if (!tensor.is_constant()) {
    return node_error(node, "scales ('", tensor.name, "') must be a constant");
  }
  const size_t count = static_cast<size_t>(tensor.elements());
  std::vector<float> values(count);
  if (tensor.data_type == DataType::kFloat32) {
    if (count > 0) std::memcpy(values.data(), tensor.constant_data, count * sizeof(float));
  } else if (tensor.data_type == DataType::kFloat16) {
    for (size_t i = 0; i < count; ++i) {
      Float16Bits half;
      std::memcpy(&half, tensor.constant_data + 2 * i, sizeof(half));
      values[i] = half_to_float(half);
    }
  } else {
    return node_error(node, "scales ('", tensor.name, "') must be FP32 or FP16, not ",
                      data_type_name(tensor.data_type));
  }
  return values;
}

Result<std::vector<int64_t>> read_ints(const Node& node, const Tensor& tensor) {
  if (!tensor.is_constant()) {
    return node_error(node, "sizes ('", tensor.name, "') must be a constant");
  }
  const size_t count = static_cast<size_t>(tensor.elements());
  std::vector<int64_t> values(count);
  if (tensor.data_type == DataType::kInt64) {
    if (count > 0) std::memcpy(values.data(), tensor.constant_data, count * sizeof(int64_t));
  } else if (tensor.data_type == DataType::kInt32) {
    for (size_t i = 0; i < count; ++i) {
      int32_t value;
      std::memcpy(&value, tensor.constant_data + 4 * i, sizeof(value));
      values[i] = value;
    }
  } else {
    return node_error(node, "sizes ('", tensor.name, "') must be INT64 or INT32, not ",
                      data_type_name(tensor.data_type));
  }
  return values;
}

// The string and numeric attributes but keep_aspect_ratio_policy.
Status parse_modes(const Node& node, bool resize10, ResizeAttributes* attributes) {
  ORKNN_ASSIGN_OR_RETURN(std::string mode, node.string_attribute("mode", "nearest"));
  if (mode == "nearest") {
    attributes->mode = Mode::kNearest;
  } else if (mode == "linear") {
    attributes->mode = Mode::kLinear;
  } else if (mode == "cubic") {
    attributes->mode = Mode::kCubic;
  } else {
    return node_error(node, "mode '", mode, "' is not one of nearest, linear, cubic");
  }

  ORKNN_ASSIGN_OR_RETURN(std::string transform,
                         node.string_attribute("coordinate_transformation_mode",
                                               resize10 ? "asymmetric" : "half_pixel"));
  if (transform == "half_pixel") {
    attributes->transform = Transform::kHalfPixel;
  } else if (transform == "pytorch_half_pixel") {
    attributes->transform = Transform::kPytorchHalfPixel;
  } else if (transform == "align_corners") {
    attributes->transform = Transform::kAlignCorners;
  } else if (transform == "asymmetric") {
    attributes->transform = Transform::kAsymmetric;
  } else if (transform == "half_pixel_symmetric") {
    attributes->transform = Transform::kHalfPixelSymmetric;
  } else if (transform == "tf_half_pixel_for_nn") {
    attributes->transform = Transform::kTfHalfPixelForNn;
  } else if (transform == "tf_crop_and_resize") {
    attributes->transform = Transform::kTfCropAndResize;
  } else {
    return node_error(node, "coordinate_transformation_mode '", transform, "' is unknown");
  }

  ORKNN_ASSIGN_OR_RETURN(
      std::string rounding,
      node.string_attribute("nearest_mode", resize10 ? "floor" : "round_prefer_floor"));
  if (rounding == "round_prefer_floor") {
    attributes->rounding = Rounding::kRoundPreferFloor;
  } else if (rounding == "round_prefer_ceil") {
    attributes->rounding = Rounding::kRoundPreferCeil;
  } else if (rounding == "floor") {
    attributes->rounding = Rounding::kFloor;
  } else if (rounding == "ceil") {
    attributes->rounding = Rounding::kCeil;
  } else {
    return node_error(node, "nearest_mode '", rounding,
                      "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
  }

  ORKNN_ASSIGN_OR_RETURN(int64_t antialias, node.int_attribute("antialias", 0));
  attributes->antialias = antialias != 0;
  if (attributes->antialias && attributes->mode == Mode::kNearest) {
    return node_error(node, "antialias applies to linear and cubic modes, not nearest");
  }
  ORKNN_ASSIGN_OR_RETURN(int64_t exclude_outside, node.int_attribute("exclude_outside", 0));
  attributes->exclude_outside = exclude_outside != 0;
  ORKNN_ASSIGN_OR_RETURN(attributes->cubic_coefficient,
                         node.float_attribute("cubic_coeff_a", -0.75f));
  ORKNN_ASSIGN_OR_RETURN(attributes->extrapolation_value,
                         node.float_attribute("extrapolation_value", 0.0f));
  return ok_status();
}

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

Result<AspectPolicy> parse_aspect_policy(const Node& node) {
  ORKNN_ASSIGN_OR_RETURN(std::string policy,
                         node.string_attribute("keep_aspect_ratio_policy", "stretch"));
  if (policy == "stretch") return AspectPolicy::kStretch;
  if (policy == "not_larger") return AspectPolicy::kNotLarger;
  if (policy == "not_smaller") return AspectPolicy::kNotSmaller;
  return node_error(node, "keep_aspect_ratio_policy '", policy,
                    "' is not one of stretch, not_larger, not_smaller");
}

// The roi of tf_crop_and_resize: starts then ends, one per resized axis, expanded to every
// dimension (0 and 1 elsewhere).
Status read_roi(const Node& node, const Tensor* roi, const std::vector<size_t>& axes, size_t rank,
                ResizeAttributes* attributes) {
  attributes->roi_start.assign(rank, 0.0f);
  attributes->roi_end.assign(rank, 1.0f);
  if (attributes->transform != Transform::kTfCropAndResize) return ok_status();
  if (!roi || roi->elements() == 0) {
    return node_error(node, "tf_crop_and_resize needs the roi input");
  }
  if (!roi->is_constant()) return node_error(node, "roi ('", roi->name, "') must be a constant");
  std::vector<float> values(static_cast<size_t>(roi->elements()));
  if (roi->data_type == DataType::kFloat32) {
    std::memcpy(values.data(), roi->constant_data, values.size() * sizeof(float));
  } else if (roi->data_type == DataType::kFloat16) {
    for (size_t i = 0; i < values.size(); ++i) {
      Float16Bits half;
      std::memcpy(&half, roi->constant_data + 2 * i, sizeof(half));
      values[i] = half_to_float(half);
    }
  } else {
    return node_error(node, "roi ('", roi->name, "') must be FP32 or FP16, not ",
                      data_type_name(roi->data_type));
  }
  if (values.size() != 2 * axes.size()) {
    return node_error(node, "roi has ", values.size(), " values, expected ", 2 * axes.size(),
                      " (a start and an end per resized axis)");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    attributes->roi_start[axes[i]] = values[i];
    attributes->roi_end[axes[i]] = values[axes.size() + i];
  }
  return ok_status();
}

// Whether the float32 kernels of the common modes (resize.h) compute the node as specified.
bool is_common_case(const ResizeAttributes& attributes, const Shape& input,
                    const std::vector<size_t>& axes) {
  if (attributes.mode == Mode::kCubic || attributes.antialias) return false;
  switch (attributes.transform) {
    case Transform::kHalfPixel:
    case Transform::kPytorchHalfPixel:
    case Transform::kAsymmetric:
      break;
    case Transform::kAlignCorners:
      // The specification divides by scale x length - 1, the common kernels by the output
      // length - 1: the same only when the scale is exact.
      for (size_t d : axes) {
        if (static_cast<double>(attributes.scales[d]) * static_cast<double>(input[d]) !=
            static_cast<double>(attributes.output_shape[d])) {
          return false;
        }
      }
      break;
    default:
      return false;
  }
  if (attributes.mode == Mode::kLinear) {
    for (size_t d = 0; d + 2 < input.size(); ++d) {
      if (attributes.output_shape[d] != input[d] ||
          (attributes.scales[d] != 1.0f && input[d] > 1)) {
        return false;  // the bilinear kernel resizes only the last two dimensions
      }
    }
  }
  return true;
}

// The dimensions that scales/sizes describe: all, or the `axes` attribute (opset 18).
Result<std::vector<size_t>> resized_axes(const Node& node, size_t rank) {
  std::vector<size_t> axes;
  if (!node.has_attribute("axes")) {
    for (size_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> given, node.ints_attribute("axes", {}));
  for (int64_t axis : given) {
    Result<int64_t> normalized = normalize_axis(axis, static_cast<int64_t>(rank));
    if (!normalized.ok()) return node_error(node, "axes: ", normalized.status().message());
    const size_t value = static_cast<size_t>(normalized.value());
    if (std::find(axes.begin(), axes.end(), value) != axes.end()) {
      return node_error(node, "axes lists axis ", axis, " twice");
    }
    axes.push_back(value);
  }
  return axes;
}

}  // namespace

int resize_roi_position(const Node& node) {
  return node.inputs.size() == 2 ? -1 : 1;
}
int resize_scales_position(const Node& node) {
  return node.inputs.size() == 2 ? 1 : 2;
}
int resize_sizes_position(const Node& node) {
  return node.inputs.size() == 2 ? -1 : 3;
}

Result<ResizeAttributes> parse_resize(const Node& node, const Shape& input, const Tensor* roi,
                                      const Tensor* scales, const Tensor* sizes) {
  const bool resize10 = node.inputs.size() == 2;
  const size_t rank = input.size();
  if (rank < 1 || rank > 8) return node_error(node, "input rank ", rank, " is not in 1..8");
  for (size_t d = 0; d < rank; ++d) {
    if (input[d] < 1) return node_error(node, "input shape ", shape_to_string(input), " is empty");
  }
  ResizeAttributes attributes;
  ORKNN_RETURN_IF_ERROR(parse_modes(node, resize10, &attributes));
  ORKNN_ASSIGN_OR_RETURN(std::vector<size_t> axes, resized_axes(node, rank));
  ORKNN_RETURN_IF_ERROR(read_roi(node, roi, axes, rank, &attributes));
  ORKNN_ASSIGN_OR_RETURN(AspectPolicy policy, parse_aspect_policy(node));

  // ONNX 13+ marks an unused scales operand with an empty tensor rather than omitting it.
  const bool has_scales = scales && scales->elements() > 0;
  const bool has_sizes = sizes && sizes->elements() > 0;
  if (has_scales == has_sizes) {
    return node_error(node, "exactly one of scales and sizes must be given (got ",
                      has_scales ? "both" : "neither", ")");
  }
  attributes.scales.assign(rank, 1.0f);
  attributes.output_shape = input;
  if (has_scales) {
    ORKNN_ASSIGN_OR_RETURN(std::vector<float> values, read_floats(node, *scales));
    if (values.size() != axes.size()) {
      return node_error(node, "scales has ", values.size(), " values, expected ", axes.size());
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = axes[i];
      if (!(values[i] > 0.0f) || !std::isfinite(values[i])) {
        return node_error(node, "scale ", values[i], " for axis ", d, " must be positive");
      }
      attributes.scales[d] = values[i];
      // float arithmetic as ONNX Runtime, so that e.g. 3 x 1.3333334 gives 4.
      attributes.output_shape[d] =
          static_cast<int64_t>(std::floor(static_cast<float>(input[d]) * values[i]));
      if (attributes.output_shape[d] < 1) {
        return node_error(node, "scale ", values[i], " makes axis ", d, " (length ", input[d],
                          ") empty");
      }
    }
  } else {
    ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, read_ints(node, *sizes));
    if (values.size() != axes.size()) {
      return node_error(node, "sizes has ", values.size(), " values, expected ", axes.size());
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = axes[i];
      if (values[i] < 1)
        return node_error(node, "size ", values[i], " for axis ", d, " must be >= 1");
      attributes.output_shape[d] = values[i];
      attributes.scales[d] = static_cast<float>(values[i]) / static_cast<float>(input[d]);
    }
    if (policy != AspectPolicy::kStretch) {
      // One scale for every resized axis (the smallest or largest), the sizes rounded from it.
      float common = attributes.scales[axes[0]];
      for (size_t d : axes) {
        common = policy == AspectPolicy::kNotLarger ? std::min(common, attributes.scales[d])
                                                    : std::max(common, attributes.scales[d]);
      }
      for (size_t d : axes) {
        attributes.scales[d] = common;
        attributes.output_shape[d] =
            static_cast<int64_t>(static_cast<double>(common) * static_cast<double>(input[d]) + 0.5);
        if (attributes.output_shape[d] < 1) {
          return node_error(node, "keep_aspect_ratio_policy makes axis ", d, " empty");
        }
      }
    }
  }

  attributes.common_case = is_common_case(attributes, input, axes);
  return attributes;
}

namespace {

const Tensor* optional_input(const ShapeInferenceContext& ctx, int position) {
  if (position < 0 || !ctx.has_input(static_cast<size_t>(position))) return nullptr;
  return &ctx.input(static_cast<size_t>(position));
}

Status resize_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Node& node = ctx.node();
  ORKNN_ASSIGN_OR_RETURN(
      ResizeAttributes attributes,
      parse_resize(node, ctx.input_shape(0), optional_input(ctx, resize_roi_position(node)),
                   optional_input(ctx, resize_scales_position(node)),
                   optional_input(ctx, resize_sizes_position(node))));
  out_shapes->assign(1, attributes.output_shape);
  return ok_status();
}

}  // namespace

std::vector<OpSchema> resize_op_schemas() {
  // Only X is required: roi (input 1) is optional since opset 13, and the shape function
  // requires exactly one of scales and sizes.
  return {{"Resize", 1, 4, 1, 1, resize_shape}};
}

}  // namespace orknn::graph
