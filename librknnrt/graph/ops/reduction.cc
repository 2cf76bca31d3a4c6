// Shapes and attribute validation of ReduceSum/Mean/Max/Min and ArgMax/ArgMin.
#include <cstring>

#include "graph/op_schema.h"
#include "graph/ops/reduction_attributes.h"

namespace orknn::graph {
namespace {

Result<std::vector<int64_t>> read_axes_operand(const Node& node, const Tensor& tensor) {
  const int64_t count = tensor.elements();
  std::vector<int64_t> axes;
  if (count == 0) return axes;  // an empty constant may have no bytes at all
  if (tensor.shape.size() > 1) {
    return invalid_model(node.describe(), ": axes (input 1) must be 1-D, not ",
                         shape_to_string(tensor.shape));
  }
  if (!tensor.is_constant()) {
    return invalid_model(node.describe(), ": axes (input 1, '", tensor.name,
                         "') must be a constant");
  }
  const size_t width = element_size(tensor.data_type);
  if (tensor.data_type != DataType::kInt64 && tensor.data_type != DataType::kInt32) {
    return invalid_model(node.describe(), ": axes (input 1) must be INT64 or INT32, not ",
                         data_type_name(tensor.data_type));
  }
  if (tensor.constant_size < static_cast<size_t>(count) * width) {
    return invalid_model(node.describe(), ": axes (input 1) holds ", tensor.constant_size,
                         " bytes, fewer than its shape needs");
  }
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* source = tensor.constant_data + static_cast<size_t>(i) * width;
    if (width == 8) {
      int64_t value;
      std::memcpy(&value, source, 8);
      axes.push_back(value);
    } else {
      int32_t value;
      std::memcpy(&value, source, 4);
      axes.push_back(value);
    }
  }
  return axes;
}

}  // namespace

Result<ReduceAttributes> parse_reduce_attributes(const Node& node, const Tensor* axes_operand,
                                                 int64_t rank) {
  ReduceAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(int64_t keep_dims, node.int_attribute("keepdims", 1));
  ORKNN_ASSIGN_OR_RETURN(int64_t noop, node.int_attribute("noop_with_empty_axes", 0));
  attributes.keep_dims = keep_dims != 0;
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, node.ints_attribute("axes", {}));
  if (axes_operand) {
    if (node.has_attribute("axes")) {
      return invalid_model(node.describe(), ": axes given both as attribute and as input 1");
    }
    ORKNN_ASSIGN_OR_RETURN(axes, read_axes_operand(node, *axes_operand));
  }
  attributes.reduced.assign(static_cast<size_t>(rank), axes.empty() && noop == 0);
  for (int64_t axis : axes) {
    Result<int64_t> normalized = normalize_axis(axis, rank);
    if (!normalized.ok()) {
      return invalid_model(node.describe(), ": axes: ", normalized.status().message());
    }
    const size_t index = static_cast<size_t>(normalized.value());
    if (attributes.reduced[index]) {
      return invalid_model(node.describe(), ": axes: axis ", axis, " is listed twice");
    }
    attributes.reduced[index] = true;
  }
  return attributes;
}

Shape reduced_shape(const Shape& input, const ReduceAttributes& attributes) {
  Shape shape;
  for (size_t i = 0; i < input.size(); ++i) {
    if (!attributes.reduced[i]) {
      shape.push_back(input[i]);
    } else if (attributes.keep_dims) {
      shape.push_back(1);
    }
  }
  return shape;
}

Result<ArgReduceAttributes> parse_arg_reduce_attributes(const Node& node, const Shape& shape) {
  ArgReduceAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(int64_t axis, node.int_attribute("axis", 0));
  ORKNN_ASSIGN_OR_RETURN(int64_t keep_dims, node.int_attribute("keepdims", 1));
  ORKNN_ASSIGN_OR_RETURN(int64_t select_last_index, node.int_attribute("select_last_index", 0));
  Result<int64_t> normalized = normalize_axis(axis, static_cast<int64_t>(shape.size()));
  if (!normalized.ok()) return invalid_model(node.describe(), ": ", normalized.status().message());
  attributes.axis = normalized.value();
  if (shape[static_cast<size_t>(attributes.axis)] == 0) {
    return invalid_model(node.describe(), ": axis ", axis,
                         " has size 0; there is no index to pick");
  }
  attributes.keep_dims = keep_dims != 0;
  attributes.select_last_index = select_last_index != 0;
  return attributes;
}

namespace {

Status reduce_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& input = ctx.input_shape(0);
  const Tensor* axes_operand = ctx.has_input(1) ? &ctx.input(1) : nullptr;
  ORKNN_ASSIGN_OR_RETURN(
      ReduceAttributes attributes,
      parse_reduce_attributes(ctx.node(), axes_operand, static_cast<int64_t>(input.size())));
  out_shapes->assign(1, reduced_shape(input, attributes));
  return ok_status();
}

Status arg_reduce_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& input = ctx.input_shape(0);
  ORKNN_ASSIGN_OR_RETURN(ArgReduceAttributes attributes,
                         parse_arg_reduce_attributes(ctx.node(), input));
  Shape output = input;
  const auto axis = static_cast<std::ptrdiff_t>(attributes.axis);
  if (attributes.keep_dims) {
    output[static_cast<size_t>(axis)] = 1;
  } else {
    output.erase(output.begin() + axis);
  }
  out_shapes->assign(1, std::move(output));
  return ok_status();
}

}  // namespace

std::vector<OpSchema> reduction_op_schemas() {
  std::vector<OpSchema> schemas;
  for (const char* type : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    schemas.push_back(OpSchema{type, 1, 2, 1, 1, reduce_shape});
  }
  for (const char* type : {"ArgMax", "ArgMin"}) {
    schemas.push_back(OpSchema{type, 1, 1, 1, 1, arg_reduce_shape});
  }
  return schemas;
}

}  // namespace orknn::graph
