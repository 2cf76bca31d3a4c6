// Shapes and attribute validation of BatchNormalization (inference form),
// InstanceNormalization, LayerNormalization and Softmax.
#include <string>

#include "graph/op_schema.h"
#include "graph/ops/normalization_attributes.h"

namespace orknn::graph {

Result<NormalizationAttributes> parse_normalization_attributes(const Node& node, int64_t rank) {
  NormalizationAttributes attributes;
  const std::string& type = node.op_type;
  auto fail = [&](const auto&... parts) { return invalid_model(node.describe(), ": ", parts...); };
  if (type == "Softmax") {
    ORKNN_ASSIGN_OR_RETURN(int64_t legacy, node.int_attribute("legacy_coerce_2d", 0));
    if (legacy != 0 && legacy != 1) return fail("legacy_coerce_2d must be 0 or 1, not ", legacy);
    attributes.legacy_coerce_2d = legacy == 1;
    ORKNN_ASSIGN_OR_RETURN(int64_t axis,
                           node.int_attribute("axis", attributes.legacy_coerce_2d ? 1 : -1));
    Result<int64_t> normalized = normalize_axis(axis, rank);
    if (!normalized.ok()) return fail(normalized.status().message());
    attributes.axis = normalized.value();
    return attributes;
  }

  ORKNN_ASSIGN_OR_RETURN(attributes.epsilon, node.float_attribute("epsilon", 1e-5f));
  if (!(attributes.epsilon >= 0.0f)) return fail("epsilon ", attributes.epsilon, " is negative");
  if (type == "BatchNormalization") {
    ORKNN_ASSIGN_OR_RETURN(int64_t training_mode, node.int_attribute("training_mode", 0));
    if (training_mode != 0) return fail("training_mode=1 is not supported (inference only)");
    ORKNN_ASSIGN_OR_RETURN(int64_t spatial, node.int_attribute("spatial", 1));
    if (spatial != 1) return fail("spatial=0 (per-element statistics, opset < 9) is not supported");
    if (node.outputs.size() > 1) {
      return fail("only output Y is supported; the running mean/variance outputs are for training");
    }
    if (rank < 2) return fail("input rank ", rank, " < 2 (expected N x C x ...)");
  } else if (type == "InstanceNormalization") {
    if (rank < 3) return fail("input rank ", rank, " < 3 (expected N x C x D1 x ...)");
  } else if (type == "LayerNormalization") {
    ORKNN_ASSIGN_OR_RETURN(int64_t axis, node.int_attribute("axis", -1));
    Result<int64_t> normalized = normalize_axis(axis, rank);
    if (!normalized.ok()) return fail(normalized.status().message());
    attributes.axis = normalized.value();
  }
  return attributes;
}

namespace {

// Every per-channel operand from `first` on holds exactly one value per channel of input 0.
Status check_per_channel_operands(const ShapeInferenceContext& ctx, size_t first,
                                  const char* const* names, size_t count) {
  const int64_t channels = ctx.input_shape(0)[1];
  for (size_t i = 0; i < count; ++i) {
    const Shape& shape = ctx.input_shape(first + i);
    if (shape.size() != 1 || shape[0] != channels) {
      return ctx.error(names[i], " (input ", first + i, ") has shape ", shape_to_string(shape),
                       ", expected ", channels, " (one value per channel)");
    }
  }
  return ok_status();
}

Status batch_normalization_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& x = ctx.input_shape(0);
  ORKNN_RETURN_IF_ERROR(
      parse_normalization_attributes(ctx.node(), static_cast<int64_t>(x.size())).status());
  const char* const names[] = {"scale", "B", "mean", "var"};
  ORKNN_RETURN_IF_ERROR(check_per_channel_operands(ctx, 1, names, 4));
  out_shapes->assign(1, x);
  return ok_status();
}

Status instance_normalization_shape(const ShapeInferenceContext& ctx,
                                    std::vector<Shape>* out_shapes) {
  const Shape& x = ctx.input_shape(0);
  ORKNN_RETURN_IF_ERROR(
      parse_normalization_attributes(ctx.node(), static_cast<int64_t>(x.size())).status());
  const char* const names[] = {"scale", "B"};
  ORKNN_RETURN_IF_ERROR(check_per_channel_operands(ctx, 1, names, 2));
  out_shapes->assign(1, x);
  return ok_status();
}

Status layer_normalization_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& x = ctx.input_shape(0);
  ORKNN_ASSIGN_OR_RETURN(
      NormalizationAttributes attributes,
      parse_normalization_attributes(ctx.node(), static_cast<int64_t>(x.size())));
  const size_t axis = static_cast<size_t>(attributes.axis);
  const Shape normalized_shape(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end());
  const char* const names[] = {"", "Scale", "B"};
  for (size_t position = 1; position <= 2; ++position) {
    if (!ctx.has_input(position)) continue;
    const Shape& shape = ctx.input_shape(position);
    Result<Shape> broadcast = broadcast_shapes(normalized_shape, shape);
    if (!broadcast.ok() || broadcast.value() != normalized_shape) {
      return ctx.error(names[position], " (input ", position, ") shape ", shape_to_string(shape),
                       " does not broadcast to the normalized shape ",
                       shape_to_string(normalized_shape));
    }
  }
  // Mean and InvStdDev keep the leading dimensions and reduce the normalized ones to 1.
  Shape statistics_shape = x;
  for (size_t i = axis; i < statistics_shape.size(); ++i) statistics_shape[i] = 1;
  out_shapes->assign(ctx.node().outputs.size(), statistics_shape);
  (*out_shapes)[0] = x;
  return ok_status();
}

Status softmax_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& x = ctx.input_shape(0);
  ORKNN_RETURN_IF_ERROR(
      parse_normalization_attributes(ctx.node(), static_cast<int64_t>(x.size())).status());
  out_shapes->assign(1, x);
  return ok_status();
}

}  // namespace

std::vector<OpSchema> normalization_op_schemas() {
  return {
      // Up to 5 outputs so training-form models get a clear message instead of a count error.
      OpSchema{"BatchNormalization", 5, 5, 1, 5, batch_normalization_shape},
      OpSchema{"InstanceNormalization", 3, 3, 1, 1, instance_normalization_shape},
      OpSchema{"LayerNormalization", 2, 3, 1, 3, layer_normalization_shape},
      OpSchema{"Softmax", 1, 1, 1, 1, softmax_shape},
  };
}

}  // namespace orknn::graph
