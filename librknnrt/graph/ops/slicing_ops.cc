// Slice and Pad: ops that map every output coordinate to an input coordinate per axis.
#include <algorithm>

#include "graph/ops/data_movement_attributes.h"

namespace orknn::graph {
namespace {

// Slice's operands: inputs 1-4 (opset 10+) or the starts/ends/axes attributes (opsets 1-9).
struct SliceOperands {
  std::vector<int64_t> starts, ends, axes, steps;
  bool axes_given = false;
};

Result<SliceOperands> read_slice_operands(const NodeOperands& operands) {
  const Node& node = operands.node();
  SliceOperands values;
  if (operands.has(1) || operands.has(2)) {
    ORKNN_ASSIGN_OR_RETURN(values.starts, operands.constant_ints(1, "starts"));
    ORKNN_ASSIGN_OR_RETURN(values.ends, operands.constant_ints(2, "ends"));
    values.axes_given = operands.has(3);
    if (values.axes_given) {
      ORKNN_ASSIGN_OR_RETURN(values.axes, operands.constant_ints(3, "axes"));
    }
    if (operands.has(4)) {
      ORKNN_ASSIGN_OR_RETURN(values.steps, operands.constant_ints(4, "steps"));
    }
  } else {
    if (!node.has_attribute("starts") || !node.has_attribute("ends")) {
      return operands.error("needs starts and ends, as inputs 1 and 2 (opset 10+) or as ",
                            "attributes (opsets 1-9)");
    }
    ORKNN_ASSIGN_OR_RETURN(values.starts, node.ints_attribute("starts", {}));
    ORKNN_ASSIGN_OR_RETURN(values.ends, node.ints_attribute("ends", {}));
    values.axes_given = node.has_attribute("axes");
    ORKNN_ASSIGN_OR_RETURN(values.axes, node.ints_attribute("axes", {}));
  }
  const size_t count = values.starts.size();
  if (values.ends.size() != count) {
    return operands.error("starts has ", count, " values but ends has ", values.ends.size());
  }
  if (values.axes_given && values.axes.size() != count) {
    return operands.error("starts has ", count, " values but axes has ", values.axes.size());
  }
  if (values.steps.empty()) values.steps.assign(count, 1);
  if (values.steps.size() != count) {
    return operands.error("starts has ", count, " values but steps has ", values.steps.size());
  }
  if (!values.axes_given) {
    for (size_t i = 0; i < count; ++i) values.axes.push_back(static_cast<int64_t>(i));
  }
  return values;
}

}  // namespace

Result<SliceAttributes> parse_slice(const NodeOperands& operands) {
  ORKNN_ASSIGN_OR_RETURN(const SliceOperands values, read_slice_operands(operands));
  const Shape& input = operands.shape(0);
  const int64_t rank = operands.rank(0);
  if (static_cast<int64_t>(values.starts.size()) > rank) {
    return operands.error("starts has ", values.starts.size(), " values for an input of rank ",
                          rank);
  }
  ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                         normalize_axes(operands, values.axes, rank, "axes"));
  SliceAttributes attributes;
  attributes.starts.assign(input.size(), 0);
  attributes.steps.assign(input.size(), 1);
  attributes.output_shape = input;
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t axis = static_cast<size_t>(axes[i]);
    const int64_t dim = input[axis];
    int64_t step = values.steps[i];
    if (step == 0) return operands.error("steps[", i, "] is 0");
    // Any step longer than the dimension reads just the start; bounding it keeps the
    // arithmetic below and the kernel's strides far from overflow.
    step = std::clamp<int64_t>(step, -(dim + 1), dim + 1);
    // Negative starts and ends count from the end; then both are clamped as ONNX specifies.
    int64_t start = values.starts[i] < 0 ? values.starts[i] + dim : values.starts[i];
    int64_t end = values.ends[i] < 0 ? values.ends[i] + dim : values.ends[i];
    int64_t size = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? (end - start - 1) / step + 1 : 0;
    } else if (dim > 0) {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = start > end ? (start - end - 1) / -step + 1 : 0;
    } else {
      start = 0;
    }
    attributes.starts[axis] = start;
    attributes.steps[axis] = step;
    attributes.output_shape[axis] = size;
  }
  return attributes;
}

namespace {

Result<PadMode> parse_pad_mode(const NodeOperands& operands) {
  ORKNN_ASSIGN_OR_RETURN(const std::string mode,
                         operands.node().string_attribute("mode", "constant"));
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "wrap") return PadMode::kWrap;
  return operands.error("mode '", mode, "' is not one of constant, edge, reflect, wrap");
}

// Pads: input 1 (opset 11+), the `pads` attribute (opsets 2-10) or `paddings` (opset 1).
Result<std::vector<int64_t>> read_pads(const NodeOperands& operands) {
  const Node& node = operands.node();
  if (operands.has(1)) return operands.constant_ints(1, "pads");
  if (node.has_attribute("pads")) return node.ints_attribute("pads", {});
  if (node.has_attribute("paddings")) return node.ints_attribute("paddings", {});
  return operands.error("needs pads as input 1 (opset 11+) or the 'pads' attribute");
}

}  // namespace

Result<PadAttributes> parse_pad(const NodeOperands& operands) {
  const Node& node = operands.node();
  const Shape& input = operands.shape(0);
  const int64_t rank = operands.rank(0);
  PadAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(attributes.mode, parse_pad_mode(operands));
  ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, read_pads(operands));

  std::vector<int64_t> axes;
  if (operands.has(3)) {  // opset 18
    ORKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> given, operands.constant_ints(3, "axes"));
    ORKNN_ASSIGN_OR_RETURN(axes, normalize_axes(operands, given, rank, "axes"));
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  if (pads.size() != 2 * axes.size()) {
    return operands.error("pads has ", pads.size(), " values, expected ", 2 * axes.size(),
                          " (a begin and an end for each of ", axes.size(), " axes)");
  }
  attributes.begin.assign(input.size(), 0);
  attributes.end.assign(input.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    attributes.begin[static_cast<size_t>(axes[i])] = pads[i];
    attributes.end[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }

  attributes.output_shape = input;
  for (size_t k = 0; k < input.size(); ++k) {
    const int64_t dim = input[k], begin = attributes.begin[k], end = attributes.end[k];
    // Bounding the pads keeps the sums below from overflowing.
    constexpr int64_t kLargestPad = int64_t{1} << 40;
    if (begin < -kLargestPad || begin > kLargestPad || end < -kLargestPad || end > kLargestPad) {
      return operands.error("axis ", k, ": pads ", begin, " and ", end, " are too large");
    }
    const int64_t output_dim = dim + begin + end;
    if (output_dim < 0) {
      return operands.error("axis ", k, ": pads ", begin, " and ", end,
                            " crop more than the dimension ", dim);
    }
    attributes.output_shape[k] = output_dim;
    if (attributes.mode == PadMode::kConstant || (begin <= 0 && end <= 0)) continue;
    // Edge and reflect read the part that survives cropping (as ONNX Runtime does).
    const int64_t kept = dim + std::min<int64_t>(begin, 0) + std::min<int64_t>(end, 0);
    if (kept == 0) {
      return operands.error("axis ", k, ": mode ",
                            attributes.mode == PadMode::kEdge      ? "edge"
                            : attributes.mode == PadMode::kReflect ? "reflect"
                                                                   : "wrap",
                            " cannot pad an empty dimension");
    }
    if (attributes.mode == PadMode::kReflect && std::max(begin, end) > kept - 1) {
      return operands.error("axis ", k, ": reflect pads ", begin, " and ", end,
                            " reach beyond the dimension (", kept, " elements allow at most ",
                            kept - 1, ", as in numpy)");
    }
  }

  if (operands.has(2)) {
    attributes.value_source = PadValueSource::kInput;
    if (element_count(operands.shape(2)) != 1) {
      return operands.error("constant_value (input 2) must hold one element, not ",
                            shape_to_string(operands.shape(2)));
    }
    ORKNN_RETURN_IF_ERROR(check_same_data_type(operands, {0, 2}));
  } else if (node.has_attribute("value")) {
    attributes.value_source = PadValueSource::kAttribute;
    ORKNN_ASSIGN_OR_RETURN(attributes.attribute_value, node.float_attribute("value", 0.0f));
  }
  return attributes;
}

}  // namespace orknn::graph
