// Concat, Split, Transpose and Cast parsing, the shared operand helpers, and the schemas of the
// whole data-movement family (the other parsers live in shape_ops.cc and slicing_ops.cc).
#include <climits>
#include <cstring>

#include "graph/ops/data_movement_attributes.h"
#include "graph/tensor_conversion.h"

namespace orknn::graph {

NodeOperands::NodeOperands(const ShapeInferenceContext& context) : node_(context.node()) {
  for (size_t i = 0; i < context.input_count(); ++i) {
    const bool present = context.has_input(i);
    tensors_.push_back(present ? &context.input(i) : nullptr);
    shapes_.push_back(present ? context.input_shape(i) : Shape());
  }
}

NodeOperands::NodeOperands(const Node& node, const std::vector<const Tensor*>& tensors)
    : node_(node), tensors_(tensors) {
  for (const Tensor* tensor : tensors) shapes_.push_back(tensor ? tensor->shape : Shape());
}

Result<std::vector<int64_t>> NodeOperands::constant_ints(size_t position, const char* what) const {
  if (!has(position)) return error(what, " (input ", position, ") is required");
  const Tensor& operand = tensor(position);
  const int64_t count = element_count(shape(position));
  const size_t width = element_size(operand.data_type);
  if (operand.data_type != DataType::kInt64 && operand.data_type != DataType::kInt32) {
    return error(what, " (input ", position, " '", operand.name, "') must be INT64 or INT32, not ",
                 data_type_name(operand.data_type));
  }
  if (count == 0) return std::vector<int64_t>();
  if (!operand.is_constant()) {
    return error(what, " (input ", position, " '", operand.name,
                 "') must be a constant; dynamic values are not supported");
  }
  if (operand.constant_size < static_cast<size_t>(count) * width) {
    return error(what, " (input ", position, " '", operand.name, "') holds ", operand.constant_size,
                 " bytes, ", count, " elements need ", static_cast<size_t>(count) * width);
  }
  std::vector<int64_t> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) {
    if (width == 8) {
      std::memcpy(&values[i], operand.constant_data + i * 8, 8);
    } else {
      int32_t value;
      std::memcpy(&value, operand.constant_data + i * 4, 4);
      values[i] = value;
    }
  }
  return values;
}

Status check_same_data_type(const NodeOperands& operands, const std::vector<size_t>& positions) {
  const Tensor* first = nullptr;
  size_t first_position = 0;
  for (size_t position : positions) {
    if (!operands.has(position)) continue;
    const Tensor& tensor = operands.tensor(position);
    if (!first) {
      first = &tensor;
      first_position = position;
      continue;
    }
    if (tensor.data_type == first->data_type) continue;
    if (is_real_valued(tensor) && is_real_valued(*first)) continue;
    return operands.error("input ", position, " ('", tensor.name, "') is ",
                          data_type_name(tensor.data_type), " but input ", first_position, " ('",
                          first->name, "') is ", data_type_name(first->data_type),
                          "; the inputs must share one element type");
  }
  return ok_status();
}

Result<std::vector<int64_t>> normalize_axes(const NodeOperands& operands,
                                            const std::vector<int64_t>& axes, int64_t rank,
                                            const char* what) {
  std::vector<int64_t> normalized;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < -rank || axes[i] >= rank) {
      return operands.error(what, "[", i, "] = ", axes[i], " is out of range for rank ", rank);
    }
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (seen[static_cast<size_t>(axis)]) {
      return operands.error(what, " names axis ", axis, " more than once");
    }
    seen[static_cast<size_t>(axis)] = true;
    normalized.push_back(axis);
  }
  return normalized;
}

Result<ConcatAttributes> parse_concat(const NodeOperands& operands) {
  const Node& node = operands.node();
  if (!node.has_attribute("axis")) return operands.error("attribute 'axis' is required");
  ORKNN_ASSIGN_OR_RETURN(const int64_t axis, node.int_attribute("axis", 0));
  if (operands.count() == 0) return operands.error("needs at least one input");
  std::vector<size_t> positions;
  for (size_t i = 0; i < operands.count(); ++i) {
    if (!operands.has(i)) return operands.error("input ", i, " is missing");
    positions.push_back(i);
  }
  const Shape& first = operands.shape(0);
  const int64_t rank = operands.rank(0);
  if (axis < -rank || axis >= rank) {
    return operands.error("axis ", axis, " is out of range for inputs of rank ", rank);
  }
  ConcatAttributes attributes;
  attributes.axis = axis < 0 ? axis + rank : axis;
  attributes.output_shape = first;
  attributes.output_shape[static_cast<size_t>(attributes.axis)] = 0;
  for (size_t i = 0; i < operands.count(); ++i) {
    const Shape& shape = operands.shape(i);
    if (operands.rank(i) != rank) {
      return operands.error("input ", i, " has rank ", shape.size(), " but input 0 has rank ",
                            rank);
    }
    for (size_t k = 0; k < shape.size(); ++k) {
      if (static_cast<int64_t>(k) != attributes.axis && shape[k] != first[k]) {
        return operands.error("input ", i, " has shape ", shape_to_string(shape),
                              ", which differs from input 0 (", shape_to_string(first),
                              ") in dimension ", k, " (only axis ", attributes.axis,
                              " may differ)");
      }
    }
    attributes.output_shape[static_cast<size_t>(attributes.axis)] +=
        shape[static_cast<size_t>(attributes.axis)];
  }
  ORKNN_RETURN_IF_ERROR(check_same_data_type(operands, positions));
  return attributes;
}

Result<SplitAttributes> parse_split(const NodeOperands& operands, size_t output_count) {
  const Node& node = operands.node();
  const int64_t rank = operands.rank(0);
  ORKNN_ASSIGN_OR_RETURN(const int64_t axis, node.int_attribute("axis", 0));
  if (axis < -rank || axis >= rank) {
    return operands.error("axis ", axis, " is out of range for an input of rank ", rank);
  }
  if (output_count == 0) return operands.error("needs at least one output");
  SplitAttributes attributes;
  attributes.axis = axis < 0 ? axis + rank : axis;
  const Shape& shape = operands.shape(0);
  const int64_t dim = shape[static_cast<size_t>(attributes.axis)];
  const int64_t outputs = static_cast<int64_t>(output_count);

  std::vector<int64_t> sizes;
  if (operands.has(1)) {
    ORKNN_ASSIGN_OR_RETURN(sizes, operands.constant_ints(1, "split"));
  } else {
    ORKNN_ASSIGN_OR_RETURN(sizes, node.ints_attribute("split", {}));
  }
  if (!sizes.empty()) {
    if (node.has_attribute("num_outputs")) {
      return operands.error("'split' sizes and the 'num_outputs' attribute are both given");
    }
    if (sizes.size() != output_count) {
      return operands.error("split has ", sizes.size(), " sizes for ", output_count, " outputs");
    }
    int64_t sum = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0 || sizes[i] > dim) {
        return operands.error("split[", i, "] = ", sizes[i], " is outside [0, ", dim, "]");
      }
      sum += sizes[i];
    }
    if (sum != dim) {
      return operands.error("split sizes sum to ", sum, " but dimension ", attributes.axis,
                            " of the input is ", dim);
    }
  } else if (node.has_attribute("num_outputs")) {
    // Opset 18: chunks of ceil(dim / n), the last one smaller.
    ORKNN_ASSIGN_OR_RETURN(const int64_t parts, node.int_attribute("num_outputs", 0));
    if (parts != outputs) {
      return operands.error("num_outputs is ", parts, " but the node has ", outputs, " outputs");
    }
    const int64_t chunk = (dim + parts - 1) / parts;
    const int64_t last = dim - chunk * (parts - 1);
    if (last < 0) {
      return operands.error("dimension ", attributes.axis, " of size ", dim,
                            " cannot be split into ", parts, " chunks of ", chunk);
    }
    sizes.assign(output_count, chunk);
    sizes.back() = last;
  } else {
    if (dim % outputs != 0) {
      return operands.error("dimension ", attributes.axis, " of size ", dim,
                            " does not split into ", outputs,
                            " equal parts; give 'split' sizes or num_outputs");
    }
    sizes.assign(output_count, dim / outputs);
  }
  attributes.sizes = sizes;
  for (int64_t size : sizes) {
    Shape output = shape;
    output[static_cast<size_t>(attributes.axis)] = size;
    attributes.output_shapes.push_back(std::move(output));
  }
  return attributes;
}

Result<TransposeAttributes> parse_transpose(const NodeOperands& operands) {
  const int64_t rank = operands.rank(0);
  std::vector<int64_t> reversed;
  for (int64_t k = rank - 1; k >= 0; --k) reversed.push_back(k);
  TransposeAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(attributes.perm, operands.node().ints_attribute("perm", reversed));
  if (static_cast<int64_t>(attributes.perm.size()) != rank) {
    return operands.error("perm has ", attributes.perm.size(), " entries for an input of rank ",
                          rank);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : attributes.perm) {
    if (axis < 0 || axis >= rank || seen[static_cast<size_t>(axis)]) {
      return operands.error("perm is not a permutation of 0..", rank - 1, " (entry ", axis, ")");
    }
    seen[static_cast<size_t>(axis)] = true;
    attributes.output_shape.push_back(operands.shape(0)[static_cast<size_t>(axis)]);
  }
  return attributes;
}

std::optional<DataType> data_type_from_onnx(int64_t onnx_type) {
  switch (onnx_type) {  // ONNX TensorProto.DataType numbers
    case 1:
      return DataType::kFloat32;
    case 2:
      return DataType::kUInt8;
    case 3:
      return DataType::kInt8;
    case 5:
      return DataType::kInt16;
    case 6:
      return DataType::kInt32;
    case 7:
      return DataType::kInt64;
    case 9:
      return DataType::kBool;
    case 10:
      return DataType::kFloat16;
    default:
      return std::nullopt;
  }
}

Result<DataType> parse_cast_target(const NodeOperands& operands) {
  if (!operands.node().has_attribute("to")) return operands.error("attribute 'to' is required");
  ORKNN_ASSIGN_OR_RETURN(const int64_t to, operands.node().int_attribute("to", 0));
  const std::optional<DataType> target = data_type_from_onnx(to);
  if (!target) {
    return operands.error("to=", to,
                          " is not a supported type (supported: 1 FLOAT, 2 UINT8, 3 INT8, "
                          "5 INT16, 6 INT32, 7 INT64, 9 BOOL, 10 FLOAT16)");
  }
  return *target;
}

namespace {

Status infer_concat(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(ConcatAttributes attributes, parse_concat(NodeOperands(context)));
  *out_shapes = {attributes.output_shape};
  return ok_status();
}

Status infer_split(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(SplitAttributes attributes,
                         parse_split(NodeOperands(context), context.node().outputs.size()));
  *out_shapes = attributes.output_shapes;
  return ok_status();
}

Status infer_slice(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(SliceAttributes attributes, parse_slice(NodeOperands(context)));
  *out_shapes = {attributes.output_shape};
  return ok_status();
}

Status infer_transpose(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(TransposeAttributes attributes, parse_transpose(NodeOperands(context)));
  *out_shapes = {attributes.output_shape};
  return ok_status();
}

Status infer_pad(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(PadAttributes attributes, parse_pad(NodeOperands(context)));
  *out_shapes = {attributes.output_shape};
  return ok_status();
}

Status infer_cast(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_RETURN_IF_ERROR(parse_cast_target(NodeOperands(context)).status());
  *out_shapes = {context.input_shape(0)};
  return ok_status();
}

template <Result<Shape> (*parse)(const NodeOperands&)>
Status infer_reshaped(const ShapeInferenceContext& context, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(Shape shape, parse(NodeOperands(context)));
  *out_shapes = {std::move(shape)};
  return ok_status();
}

}  // namespace

std::vector<OpSchema> data_movement_op_schemas() {
  return {
      {"Concat", 1, INT_MAX, 1, 1, infer_concat},
      {"Split", 1, 2, 1, INT_MAX, infer_split},
      {"Slice", 1, 5, 1, 1, infer_slice},
      {"Reshape", 1, 2, 1, 1, infer_reshaped<reshape_output_shape>},
      {"Flatten", 1, 1, 1, 1, infer_reshaped<flatten_output_shape>},
      {"Transpose", 1, 1, 1, 1, infer_transpose},
      {"Squeeze", 1, 2, 1, 1, infer_reshaped<squeeze_output_shape>},
      {"Unsqueeze", 1, 2, 1, 1, infer_reshaped<unsqueeze_output_shape>},
      {"Pad", 1, 4, 1, 1, infer_pad},
      {"Cast", 1, 1, 1, 1, infer_cast},
  };
}

}  // namespace orknn::graph
