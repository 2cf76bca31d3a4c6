// Shapes and attribute validation of binary arithmetic (numpy broadcasting) and unary
// activations.
#include <string>

#include "graph/op_schema.h"
#include "graph/ops/elementwise_attributes.h"

namespace orknn::graph {

Result<UnaryAttributes> parse_unary_attributes(const Node& node) {
  UnaryAttributes attributes;
  const std::string& type = node.op_type;
  if (type == "LeakyRelu") {
    ORKNN_ASSIGN_OR_RETURN(attributes.alpha, node.float_attribute("alpha", 0.01f));
  } else if (type == "HardSigmoid") {
    ORKNN_ASSIGN_OR_RETURN(attributes.alpha, node.float_attribute("alpha", 0.2f));
    ORKNN_ASSIGN_OR_RETURN(attributes.beta, node.float_attribute("beta", 0.5f));
  } else if (type == "Swish") {
    ORKNN_ASSIGN_OR_RETURN(attributes.alpha, node.float_attribute("alpha", 1.0f));
  } else if (type == "SiLU") {
    attributes.alpha = 1.0f;
  }
  return attributes;
}

Result<ClipAttributes> parse_clip_attributes(const Node& node) {
  ClipAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(attributes.minimum,
                         node.float_attribute("min", std::numeric_limits<float>::lowest()));
  ORKNN_ASSIGN_OR_RETURN(attributes.maximum,
                         node.float_attribute("max", std::numeric_limits<float>::max()));
  attributes.minimum_from_input = node.has_input(1);
  attributes.maximum_from_input = node.has_input(2);
  // A bound given twice has no defined meaning; ONNX has either the attribute or the input.
  if (attributes.minimum_from_input && node.has_attribute("min")) {
    return invalid_model(node.describe(), ": 'min' is given both as attribute and as input 1");
  }
  if (attributes.maximum_from_input && node.has_attribute("max")) {
    return invalid_model(node.describe(), ": 'max' is given both as attribute and as input 2");
  }
  return attributes;
}

namespace {

Status binary_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  // Before opset 7 a `broadcast`/`axis` pair aligned B at an arbitrary axis; numpy rules differ.
  if (ctx.node().has_attribute("axis")) {
    return ctx.error("the legacy 'axis' broadcast attribute (opset < 7) is not supported");
  }
  Result<Shape> shape = broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1));
  if (!shape.ok()) return ctx.error(shape.status().message());
  out_shapes->assign(1, std::move(shape.value()));
  return ok_status();
}

Status prelu_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& x = ctx.input_shape(0);
  const Shape& slope = ctx.input_shape(1);
  Result<Shape> shape = broadcast_shapes(x, slope);
  if (!shape.ok() || shape.value() != x) {
    return ctx.error("slope shape ", shape_to_string(slope),
                     " does not broadcast to the input shape ", shape_to_string(x));
  }
  out_shapes->assign(1, x);
  return ok_status();
}

Status unary_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  Result<UnaryAttributes> attributes = parse_unary_attributes(ctx.node());
  if (!attributes.ok()) return attributes.take_status();
  out_shapes->assign(1, ctx.input_shape(0));
  return ok_status();
}

Status clip_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  Result<ClipAttributes> attributes = parse_clip_attributes(ctx.node());
  if (!attributes.ok()) return attributes.take_status();
  const char* names[] = {"", "min", "max"};
  for (size_t position = 1; position <= 2; ++position) {
    if (!ctx.has_input(position)) continue;
    if (element_count(ctx.input_shape(position)) != 1) {
      return ctx.error("'", names[position], "' (input ", position, ") must be a scalar, not ",
                       shape_to_string(ctx.input_shape(position)));
    }
  }
  out_shapes->assign(1, ctx.input_shape(0));
  return ok_status();
}

}  // namespace

std::vector<OpSchema> elementwise_op_schemas() {
  std::vector<OpSchema> schemas;
  for (const char* type : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    schemas.push_back(OpSchema{type, 2, 2, 1, 1, binary_shape});
  }
  schemas.push_back(OpSchema{"PRelu", 2, 2, 1, 1, prelu_shape});
  schemas.push_back(OpSchema{"Clip", 1, 3, 1, 1, clip_shape});
  for (const char* type : {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Swish",
                           "SiLU", "Tanh", "Exp", "Sqrt", "Neg", "Abs", "Reciprocal"}) {
    schemas.push_back(OpSchema{type, 1, 1, 1, 1, unary_shape});
  }
  return schemas;
}

}  // namespace orknn::graph
