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

// The string attributes; valid ONNX values we do not run set `unsupported`.
Status parse_modes(const Node& node, bool resize10, ResizeAttributes* attributes) {
  ORKNN_ASSIGN_OR_RETURN(std::string mode, node.string_attribute("mode", "nearest"));
  if (mode == "nearest") {
    attributes->mode = Mode::kNearest;
  } else if (mode == "linear") {
    attributes->mode = Mode::kLinear;
  } else if (mode == "cubic") {
    attributes->mode = Mode::kCubic;
    attributes->unsupported = "mode 'cubic' is not supported (nearest, linear)";
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
  } else if (transform == "tf_half_pixel_for_nn" || transform == "tf_crop_and_resize" ||
             transform == "half_pixel_symmetric") {
    attributes->transform = Transform::kOther;
    if (attributes->unsupported.empty()) {
      attributes->unsupported = str_cat("coordinate_transformation_mode '", transform,
                                        "' is not supported (half_pixel, pytorch_half_pixel, "
                                        "align_corners, asymmetric)");
    }
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
  ORKNN_ASSIGN_OR_RETURN(std::string policy,
                         node.string_attribute("keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return node_error(node, "keep_aspect_ratio_policy '", policy, "' is unknown");
  }
  if (attributes->unsupported.empty() && antialias != 0) {
    attributes->unsupported = "antialias is not supported";
  }
  if (attributes->unsupported.empty() && policy != "stretch") {
    attributes->unsupported =
        str_cat("keep_aspect_ratio_policy '", policy, "' is not supported (stretch)");
  }
  return ok_status();
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

int resize_scales_position(const Node& node) {
  return node.inputs.size() == 2 ? 1 : 2;
}
int resize_sizes_position(const Node& node) {
  return node.inputs.size() == 2 ? -1 : 3;
}

Result<ResizeAttributes> parse_resize(const Node& node, const Shape& input, const Tensor* scales,
                                      const Tensor* sizes) {
  const bool resize10 = node.inputs.size() == 2;
  const size_t rank = input.size();
  if (rank < 1) return node_error(node, "input must have rank >= 1");
  for (size_t d = 0; d < rank; ++d) {
    if (input[d] < 1) return node_error(node, "input shape ", shape_to_string(input), " is empty");
  }
  ResizeAttributes attributes;
  ORKNN_RETURN_IF_ERROR(parse_modes(node, resize10, &attributes));
  ORKNN_ASSIGN_OR_RETURN(std::vector<size_t> axes, resized_axes(node, rank));

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
  }

  if (attributes.unsupported.empty() && attributes.mode == Mode::kLinear) {
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (attributes.output_shape[d] != input[d] ||
          (attributes.scales[d] != 1.0f && input[d] > 1)) {
        attributes.unsupported = str_cat(
            "linear mode resizes only the last two dimensions; "
            "axis ",
            d, " changes (", input[d], " -> ", attributes.output_shape[d], ")");
        break;
      }
    }
  }
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
      parse_resize(node, ctx.input_shape(0), optional_input(ctx, resize_scales_position(node)),
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
