// Reshape, Flatten, Squeeze and Unsqueeze: ops that keep the element order and only compute a
// new shape.
#include "graph/ops/data_movement_attributes.h"

namespace orknn::graph {
namespace {

// The axes of Squeeze/Unsqueeze: input 1 (opset 13+) or the `axes` attribute (before 13).
Result<std::vector<int64_t>> axes_operand(const NodeOperands& operands, bool* out_given) {
  *out_given = operands.has(1) || operands.node().has_attribute("axes");
  if (operands.has(1)) return operands.constant_ints(1, "axes");
  return operands.node().ints_attribute("axes", {});
}

}  // namespace

Result<Shape> reshape_output_shape(const NodeOperands& operands) {
  const Node& node = operands.node();
  std::vector<int64_t> target;
  if (operands.has(1)) {
    ORKNN_ASSIGN_OR_RETURN(target, operands.constant_ints(1, "shape"));
  } else if (node.has_attribute("shape")) {  // opsets 1-4
    ORKNN_ASSIGN_OR_RETURN(target, node.ints_attribute("shape", {}));
  } else {
    return operands.error("needs the target shape as input 1 (or the 'shape' attribute)");
  }
  ORKNN_ASSIGN_OR_RETURN(const int64_t allow_zero, node.int_attribute("allowzero", 0));
  const Shape& input = operands.shape(0);
  const int64_t input_elements = element_count(input);

  Shape output(target.size());
  int64_t inferred = -1;  // position of the -1 entry
  bool has_zero = false;
  int64_t known_elements = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t dim = target[i];
    if (dim == -1) {
      if (inferred >= 0) return operands.error("shape has more than one -1 entry");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (dim < -1) {
      return operands.error("shape[", i, "] = ", dim, "; only -1 and sizes >= 0 are allowed");
    }
    if (dim == 0) {
      has_zero = true;
      if (allow_zero == 0) {
        // 0 copies the input's dimension at the same position.
        if (i >= input.size()) {
          return operands.error("shape[", i, "] = 0 copies input dimension ", i,
                                ", but the input has rank ", input.size());
        }
        dim = input[i];
      }
    }
    output[i] = dim;
    if (__builtin_mul_overflow(known_elements, dim, &known_elements)) {
      return operands.error("shape ", shape_to_string(target), " has too many elements");
    }
  }
  if (allow_zero != 0 && has_zero && inferred >= 0) {
    return operands.error("with allowzero=1 the shape cannot contain both 0 and -1");
  }
  if (inferred >= 0) {
    if (known_elements == 0 || input_elements % known_elements != 0) {
      return operands.error("cannot infer the -1 in shape ", shape_to_string(target),
                            ": the input (", shape_to_string(input), ") has ", input_elements,
                            " elements, not a multiple of ", known_elements);
    }
    output[static_cast<size_t>(inferred)] = input_elements / known_elements;
  } else if (known_elements != input_elements) {
    return operands.error("cannot reshape ", shape_to_string(input), " (", input_elements,
                          " elements) to ", shape_to_string(output), " (", known_elements,
                          " elements)");
  }
  return output;
}

Result<Shape> flatten_output_shape(const NodeOperands& operands) {
  ORKNN_ASSIGN_OR_RETURN(int64_t axis, operands.node().int_attribute("axis", 1));
  const Shape& input = operands.shape(0);
  const int64_t rank = operands.rank(0);
  if (axis < -rank || axis > rank) {
    return operands.error("axis ", axis, " is out of range [", -rank, ", ", rank, "]");
  }
  if (axis < 0) axis += rank;
  Shape output{1, 1};
  for (int64_t k = 0; k < rank; ++k) output[k < axis ? 0 : 1] *= input[static_cast<size_t>(k)];
  return output;
}

Result<Shape> squeeze_output_shape(const NodeOperands& operands) {
  const Shape& input = operands.shape(0);
  bool given = false;
  ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, axes_operand(operands, &given));
  Shape output;
  if (!given || axes.empty()) {  // every dimension of size 1 goes
    for (int64_t dim : input) {
      if (dim != 1) output.push_back(dim);
    }
    return output;
  }
  ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> normalized,
                         normalize_axes(operands, axes, operands.rank(0), "axes"));
  std::vector<bool> removed(input.size(), false);
  for (int64_t axis : normalized) {
    if (input[static_cast<size_t>(axis)] != 1) {
      return operands.error("cannot squeeze axis ", axis, " of size ",
                            input[static_cast<size_t>(axis)], " (input ", shape_to_string(input),
                            "); only size-1 axes can be removed");
    }
    removed[static_cast<size_t>(axis)] = true;
  }
  for (size_t k = 0; k < input.size(); ++k) {
    if (!removed[k]) output.push_back(input[k]);
  }
  return output;
}

Result<Shape> unsqueeze_output_shape(const NodeOperands& operands) {
  const Shape& input = operands.shape(0);
  bool given = false;
  ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, axes_operand(operands, &given));
  if (!given) return operands.error("needs axes as input 1 (or the 'axes' attribute)");
  // Axes index the output, whose rank counts the inserted dimensions.
  const int64_t output_rank = operands.rank(0) + static_cast<int64_t>(axes.size());
  ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> normalized,
                         normalize_axes(operands, axes, output_rank, "axes"));
  Shape output(static_cast<size_t>(output_rank), 0);
  std::vector<bool> inserted(output.size(), false);
  for (int64_t axis : normalized) inserted[static_cast<size_t>(axis)] = true;
  size_t next_input = 0;
  for (size_t k = 0; k < output.size(); ++k) output[k] = inserted[k] ? 1 : input[next_input++];
  return output;
}

}  // namespace orknn::graph
