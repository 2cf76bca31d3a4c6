#include "evaluation/constant_evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "evaluation/runtime_node.h"
#include "graph/ops/data_movement_attributes.h"

namespace orknn::convert {
namespace {

// Values of a tensor in the widest form of their kind: integers (and bools) as int64, reals as
// double. Enough for every shape computation and exact for int64 shape values.
struct Values {
  DataType type = DataType::kFloat32;
  ir::Shape shape;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  bool is_real() const { return type == DataType::kFloat32 || type == DataType::kFloat16; }
  size_t size() const { return static_cast<size_t>(ir::element_count(shape)); }
  double real(size_t i) const { return is_real() ? reals[i] : static_cast<double>(ints[i]); }
  int64_t integer(size_t i) const { return is_real() ? static_cast<int64_t>(reals[i]) : ints[i]; }
};

Values values_of(const ir::Tensor& tensor) {
  Values values;
  values.type = tensor.type;
  values.shape = tensor.shape;
  if (values.is_real()) {
    std::vector<float> floats = ir::constant_as_floats(tensor);
    values.reals.assign(floats.begin(), floats.end());
  } else {
    values.ints = ir::constant_as_ints(tensor);
  }
  return values;
}

Values make_values(DataType type, ir::Shape shape) {
  Values values;
  values.type = type;
  values.shape = std::move(shape);
  if (values.is_real()) {
    values.reals.assign(values.size(), 0.0);
  } else {
    values.ints.assign(values.size(), 0);
  }
  return values;
}

void set_value(Values* values, size_t i, double real, int64_t integer) {
  if (values->is_real()) {
    values->reals[i] = real;
  } else {
    values->ints[i] = integer;
  }
}

ir::Tensor tensor_of(const Values& values, const std::string& name) {
  ir::Tensor tensor;
  tensor.name = name;
  tensor.type = values.type;
  tensor.shape = values.shape;
  tensor.shape_known = true;
  const size_t count = values.size();
  ir::Bytes bytes(count * element_size(values.type));
  for (size_t i = 0; i < count; ++i) {
    uint8_t* out = bytes.data() + i * element_size(values.type);
    switch (values.type) {
      case DataType::kFloat32: {
        const float v = static_cast<float>(values.reals[i]);
        std::memcpy(out, &v, 4);
        break;
      }
      case DataType::kFloat16: {
        const Float16Bits v = float_to_half(static_cast<float>(values.reals[i]));
        std::memcpy(out, &v, 2);
        break;
      }
      case DataType::kInt64:
        std::memcpy(out, &values.ints[i], 8);
        break;
      case DataType::kInt32: {
        const int32_t v = static_cast<int32_t>(values.ints[i]);
        std::memcpy(out, &v, 4);
        break;
      }
      case DataType::kInt16: {
        const int16_t v = static_cast<int16_t>(values.ints[i]);
        std::memcpy(out, &v, 2);
        break;
      }
      case DataType::kInt8:
        *out = static_cast<uint8_t>(static_cast<int8_t>(values.ints[i]));
        break;
      case DataType::kUInt8:
        *out = static_cast<uint8_t>(values.ints[i]);
        break;
      case DataType::kBool:
        *out = values.ints[i] ? 1 : 0;
        break;
    }
  }
  tensor.data = std::make_shared<const ir::Bytes>(std::move(bytes));
  return tensor;
}

template <typename... Parts>
Status node_error(const ir::Node& node, const Parts&... parts) {
  return invalid_model(node.describe(), ": ", parts...);
}

Result<ir::Shape> broadcast(const ir::Node& node, const ir::Shape& a, const ir::Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  ir::Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return node_error(node, "shapes ", ir::shape_to_string(a), " and ", ir::shape_to_string(b),
                        " do not broadcast");
    }
    result[i] = da == 1 ? db : da;
  }
  return result;
}

// Flat index into a tensor of `shape` broadcast to `out_shape`, for output element `index`.
size_t broadcast_source(size_t index, const ir::Shape& out_shape, const ir::Shape& shape) {
  size_t source = 0;
  size_t stride = 1;
  size_t remaining = index;
  const size_t offset = out_shape.size() - shape.size();
  for (size_t axis = out_shape.size(); axis-- > 0;) {
    const size_t extent = static_cast<size_t>(out_shape[axis]);
    const size_t coordinate = remaining % extent;
    remaining /= extent;
    if (axis < offset) continue;
    const size_t dim = static_cast<size_t>(shape[axis - offset]);
    if (dim != 1) source += coordinate * stride;
    stride *= dim;
  }
  return source;
}

std::vector<int64_t> strides_of(const ir::Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Result<Values> input_values(const ir::Graph& graph, const ir::Node& node, size_t position) {
  if (!node.has_input(position)) return node_error(node, "input ", position, " is required");
  const ir::Tensor& tensor = graph.tensor(node.inputs[position]);
  if (!tensor.is_constant()) return node_error(node, "input ", position, " is not constant");
  return values_of(tensor);
}

// ---- ops ------------------------------------------------------------------------------------

using Evaluator = std::function<Result<std::vector<Values>>(const ir::Graph&, const ir::Node&)>;

Result<std::vector<Values>> evaluate_shape(const ir::Graph& graph, const ir::Node& node) {
  const ir::Shape& shape = graph.tensor(node.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp_axis = [&](int64_t axis) {
    if (axis < 0) axis += rank;
    return std::min(std::max<int64_t>(axis, 0), rank);
  };
  Values result = make_values(DataType::kInt64, {});
  if (node.op_type == "Size") {
    result.ints = {ir::element_count(shape)};
    return std::vector<Values>{result};
  }
  const int64_t start = clamp_axis(ir::int_attribute(node, "start", 0));
  const int64_t end = clamp_axis(ir::int_attribute(node, "end", rank));
  for (int64_t axis = start; axis < end; ++axis)
    result.ints.push_back(shape[static_cast<size_t>(axis)]);
  result.shape = {static_cast<int64_t>(result.ints.size())};
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_constant_of_shape(const ir::Graph& graph,
                                                       const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values shape, input_values(graph, node, 0));
  ir::Shape dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape.integer(i) < 0) return node_error(node, "negative dimension ", shape.integer(i));
    dims.push_back(shape.integer(i));
  }
  Values fill;
  auto value = node.tensor_attributes.find("value");
  if (value != node.tensor_attributes.end()) {
    fill = values_of(value->second);
    if (fill.size() != 1) return node_error(node, "'value' must hold one element");
  } else {
    fill = make_values(DataType::kFloat32, {});
    fill.reals = {0.0};
  }
  Values result = make_values(fill.type, dims);
  for (size_t i = 0; i < result.size(); ++i) set_value(&result, i, fill.real(0), fill.integer(0));
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_gather(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  ORKNN_ASSIGN_OR_RETURN(Values indices, input_values(graph, node, 1));
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  int64_t axis = ir::int_attribute(node, "axis", 0);
  if (axis < -rank || axis >= rank) return node_error(node, "axis ", axis, " out of range");
  if (axis < 0) axis += rank;
  const int64_t extent = data.shape[static_cast<size_t>(axis)];
  ir::Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
  out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
  out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data.shape[static_cast<size_t>(i)];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= data.shape[static_cast<size_t>(i)];
  Values result = make_values(data.type, out_shape);
  const int64_t count = static_cast<int64_t>(indices.size());
  size_t out = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < count; ++k) {
      int64_t index = indices.integer(static_cast<size_t>(k));
      if (index < -extent || index >= extent) {
        return node_error(node, "index ", index, " is out of range for dimension ", extent);
      }
      if (index < 0) index += extent;
      for (int64_t i = 0; i < inner; ++i) {
        const size_t source = static_cast<size_t>((o * extent + index) * inner + i);
        set_value(&result, out++, data.real(source), data.integer(source));
      }
    }
  }
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_range(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values start, input_values(graph, node, 0));
  ORKNN_ASSIGN_OR_RETURN(Values limit, input_values(graph, node, 1));
  ORKNN_ASSIGN_OR_RETURN(Values delta, input_values(graph, node, 2));
  const double step = delta.real(0);
  if (step == 0) return node_error(node, "delta is 0");
  const double count_real = std::ceil((limit.real(0) - start.real(0)) / step);
  const int64_t count = std::max<int64_t>(0, static_cast<int64_t>(count_real));
  if (count > (int64_t{1} << 28))
    return node_error(node, "range of ", count, " values is too large");
  Values result = make_values(start.type, {count});
  for (int64_t i = 0; i < count; ++i) {
    set_value(&result, static_cast<size_t>(i), start.real(0) + step * static_cast<double>(i),
              start.integer(0) + delta.integer(0) * i);
  }
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_expand(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  ORKNN_ASSIGN_OR_RETURN(Values shape, input_values(graph, node, 1));
  ORKNN_ASSIGN_OR_RETURN(ir::Shape out_shape, broadcast(node, data.shape, shape.ints));
  Values result = make_values(data.type, out_shape);
  for (size_t i = 0; i < result.size(); ++i) {
    const size_t source = broadcast_source(i, out_shape, data.shape);
    set_value(&result, i, data.real(source), data.integer(source));
  }
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_tile(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  ORKNN_ASSIGN_OR_RETURN(Values repeats, input_values(graph, node, 1));
  if (repeats.size() != data.shape.size()) {
    return node_error(node, "repeats has ", repeats.size(), " values for rank ", data.shape.size());
  }
  ir::Shape out_shape = data.shape;
  for (size_t i = 0; i < out_shape.size(); ++i) out_shape[i] *= repeats.integer(i);
  Values result = make_values(data.type, out_shape);
  const std::vector<int64_t> out_strides = strides_of(out_shape);
  const std::vector<int64_t> in_strides = strides_of(data.shape);
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t remaining = static_cast<int64_t>(i);
    int64_t source = 0;
    for (size_t axis = 0; axis < out_shape.size(); ++axis) {
      const int64_t coordinate = remaining / out_strides[axis];
      remaining %= out_strides[axis];
      source += (coordinate % data.shape[axis]) * in_strides[axis];
    }
    set_value(&result, i, data.real(static_cast<size_t>(source)),
              data.integer(static_cast<size_t>(source)));
  }
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_concat(const ir::Graph& graph, const ir::Node& node) {
  std::vector<Values> parts;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    ORKNN_ASSIGN_OR_RETURN(Values part, input_values(graph, node, i));
    parts.push_back(std::move(part));
  }
  const int64_t rank = static_cast<int64_t>(parts[0].shape.size());
  int64_t axis = ir::int_attribute(node, "axis", 0);
  if (axis < -rank || axis >= rank) return node_error(node, "axis ", axis, " out of range");
  if (axis < 0) axis += rank;
  ir::Shape out_shape = parts[0].shape;
  out_shape[static_cast<size_t>(axis)] = 0;
  for (const Values& part : parts) {
    if (part.shape.size() != static_cast<size_t>(rank)) return node_error(node, "ranks differ");
    out_shape[static_cast<size_t>(axis)] += part.shape[static_cast<size_t>(axis)];
  }
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= out_shape[static_cast<size_t>(i)];
  Values result = make_values(parts[0].type, out_shape);
  size_t out = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Values& part : parts) {
      const size_t block = part.size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
      for (size_t i = 0; i < block; ++i) {
        const size_t source = static_cast<size_t>(o) * block + i;
        set_value(&result, out++, part.real(source), part.integer(source));
      }
    }
  }
  return std::vector<Values>{result};
}

// Reshape, Flatten, Squeeze, Unsqueeze: data unchanged, shape from the runtime's shape function.
Result<std::vector<Values>> evaluate_reshape(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  ORKNN_ASSIGN_OR_RETURN(std::vector<ir::Shape> shapes, runtime_output_shapes(graph, node));
  data.shape = shapes[0];
  return std::vector<Values>{data};
}

Result<std::vector<Values>> evaluate_transpose(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  const size_t rank = data.shape.size();
  std::vector<int64_t> perm;
  for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  perm = ir::ints_attribute(node, "perm", perm);
  if (perm.size() != rank) return node_error(node, "perm has ", perm.size(), " values");
  ir::Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = data.shape[static_cast<size_t>(perm[i])];
  const std::vector<int64_t> in_strides = strides_of(data.shape);
  const std::vector<int64_t> out_strides = strides_of(out_shape);
  Values result = make_values(data.type, out_shape);
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t remaining = static_cast<int64_t>(i);
    int64_t source = 0;
    for (size_t axis = 0; axis < rank; ++axis) {
      const int64_t coordinate = remaining / out_strides[axis];
      remaining %= out_strides[axis];
      source += coordinate * in_strides[static_cast<size_t>(perm[axis])];
    }
    set_value(&result, i, data.real(static_cast<size_t>(source)),
              data.integer(static_cast<size_t>(source)));
  }
  return std::vector<Values>{result};
}

Result<std::vector<Values>> evaluate_slice(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.inputs.size() > 1) {
    ORKNN_ASSIGN_OR_RETURN(Values v, input_values(graph, node, 1));
    starts = v.ints;
    ORKNN_ASSIGN_OR_RETURN(Values e, input_values(graph, node, 2));
    ends = e.ints;
    if (node.has_input(3)) {
      ORKNN_ASSIGN_OR_RETURN(Values a, input_values(graph, node, 3));
      axes = a.ints;
    }
    if (node.has_input(4)) {
      ORKNN_ASSIGN_OR_RETURN(Values s, input_values(graph, node, 4));
      steps = s.ints;
    }
  } else {
    starts = ir::ints_attribute(node, "starts", {});
    ends = ir::ints_attribute(node, "ends", {});
    axes = ir::ints_attribute(node, "axes", {});
  }
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return node_error(node, "starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
  ir::Shape out_shape = data.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return node_error(node, "axis ", axes[i], " out of range");
    const int64_t dim = data.shape[static_cast<size_t>(axis)];
    const int64_t s = steps[i];
    if (s == 0) return node_error(node, "step 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (s > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      out_shape[static_cast<size_t>(axis)] = std::max<int64_t>(0, (end - start + s - 1) / s);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      out_shape[static_cast<size_t>(axis)] = std::max<int64_t>(0, (start - end + (-s) - 1) / (-s));
    }
    begin[static_cast<size_t>(axis)] = start;
    step[static_cast<size_t>(axis)] = s;
  }
  const std::vector<int64_t> in_strides = strides_of(data.shape);
  const std::vector<int64_t> out_strides = strides_of(out_shape);
  Values result = make_values(data.type, out_shape);
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t remaining = static_cast<int64_t>(i);
    int64_t source = 0;
    for (size_t axis = 0; axis < static_cast<size_t>(rank); ++axis) {
      const int64_t coordinate = remaining / out_strides[axis];
      remaining %= out_strides[axis];
      source += (begin[axis] + coordinate * step[axis]) * in_strides[axis];
    }
    set_value(&result, i, data.real(static_cast<size_t>(source)),
              data.integer(static_cast<size_t>(source)));
  }
  return std::vector<Values>{result};
}

// The runtime's table, widened for constants: folding may meet types the .rknn format lacks,
// held in our widest type of the same kind.
Result<DataType> cast_target(const ir::Node& node) {
  const int64_t to = ir::int_attribute(node, "to", 1);
  if (const std::optional<DataType> type = graph::data_type_from_onnx(to)) return *type;
  switch (to) {
    case 11:
      return DataType::kFloat32;  // DOUBLE: our widest float
    case 12:
    case 13:
      return DataType::kInt64;  // UINT32, UINT64
    default:
      return node_error(node, "cast to ONNX type ", to, " is not supported");
  }
}

Result<std::vector<Values>> evaluate_cast(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  ORKNN_ASSIGN_OR_RETURN(DataType target, cast_target(node));
  Values result = make_values(target, data.shape);
  for (size_t i = 0; i < data.size(); ++i) {
    const double real = data.real(i);
    int64_t integer = data.is_real() ? static_cast<int64_t>(std::trunc(real)) : data.ints[i];
    if (target == DataType::kBool) integer = real != 0.0 ? 1 : 0;
    set_value(&result, i, real, integer);
  }
  return std::vector<Values>{result};
}

DataType comparison_type() {
  return DataType::kBool;
}

// Binary and variadic elementwise ops with numpy broadcasting.
Result<std::vector<Values>> evaluate_elementwise(const ir::Graph& graph, const ir::Node& node) {
  const std::string& op = node.op_type;
  std::vector<Values> operands;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    ORKNN_ASSIGN_OR_RETURN(Values operand, input_values(graph, node, i));
    operands.push_back(std::move(operand));
  }
  static const std::set<std::string> comparisons = {
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  if (op == "Where") {
    ORKNN_ASSIGN_OR_RETURN(ir::Shape shape, broadcast(node, operands[0].shape, operands[1].shape));
    ORKNN_ASSIGN_OR_RETURN(shape, broadcast(node, shape, operands[2].shape));
    Values result = make_values(operands[1].type, shape);
    for (size_t i = 0; i < result.size(); ++i) {
      const bool take_x = operands[0].integer(broadcast_source(i, shape, operands[0].shape)) != 0;
      const Values& chosen = take_x ? operands[1] : operands[2];
      const size_t source = broadcast_source(i, shape, chosen.shape);
      set_value(&result, i, chosen.real(source), chosen.integer(source));
    }
    return std::vector<Values>{result};
  }
  Values accumulated = operands[0];
  for (size_t k = 1; k < operands.size(); ++k) {
    const Values& right = operands[k];
    ORKNN_ASSIGN_OR_RETURN(ir::Shape shape, broadcast(node, accumulated.shape, right.shape));
    const DataType type = comparisons.count(op) ? comparison_type() : accumulated.type;
    Values result = make_values(type, shape);
    const bool real = accumulated.is_real() || right.is_real();
    for (size_t i = 0; i < result.size(); ++i) {
      const size_t ia = broadcast_source(i, shape, accumulated.shape);
      const size_t ib = broadcast_source(i, shape, right.shape);
      const double a = accumulated.real(ia);
      const double b = right.real(ib);
      const int64_t x = accumulated.integer(ia);
      const int64_t y = right.integer(ib);
      double r = 0;
      int64_t n = 0;
      if (op == "Add" || op == "Sum") {
        r = a + b, n = x + y;
      } else if (op == "Sub") {
        r = a - b, n = x - y;
      } else if (op == "Mul") {
        r = a * b, n = x * y;
      } else if (op == "Div") {
        if (!real && y == 0) return node_error(node, "integer division by zero");
        r = a / b;
        n = real ? 0 : x / y;  // C++ truncates toward zero, as ONNX integer Div
      } else if (op == "Mod") {
        if (!real && y == 0) return node_error(node, "integer modulo by zero");
        const bool fmod = ir::int_attribute(node, "fmod", 0) != 0;
        r = std::fmod(a, b);
        n = real ? 0 : x % y;
        if (!fmod && !real && n != 0 && ((n < 0) != (y < 0))) n += y;  // sign of the divisor
      } else if (op == "Pow") {
        r = std::pow(a, b);
        n = static_cast<int64_t>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      } else if (op == "Min") {
        r = std::min(a, b), n = std::min(x, y);
      } else if (op == "Max") {
        r = std::max(a, b), n = std::max(x, y);
      } else if (op == "Equal") {
        n = real ? a == b : x == y;
      } else if (op == "Less") {
        n = real ? a < b : x < y;
      } else if (op == "Greater") {
        n = real ? a > b : x > y;
      } else if (op == "LessOrEqual") {
        n = real ? a <= b : x <= y;
      } else if (op == "GreaterOrEqual") {
        n = real ? a >= b : x >= y;
      } else if (op == "And") {
        n = (x != 0) && (y != 0);
      } else if (op == "Or") {
        n = (x != 0) || (y != 0);
      } else if (op == "Xor") {
        n = (x != 0) != (y != 0);
      }
      set_value(&result, i, r, n);
    }
    accumulated = std::move(result);
  }
  return std::vector<Values>{accumulated};
}

Result<std::vector<Values>> evaluate_unary(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(Values data, input_values(graph, node, 0));
  const std::string& op = node.op_type;
  Values result = make_values(op == "Not" ? DataType::kBool : data.type, data.shape);
  for (size_t i = 0; i < data.size(); ++i) {
    const double a = data.real(i);
    const int64_t x = data.integer(i);
    double r = a;
    int64_t n = x;
    if (op == "Neg") {
      r = -a, n = -x;
    } else if (op == "Abs") {
      r = std::fabs(a), n = x < 0 ? -x : x;
    } else if (op == "Floor") {
      r = std::floor(a);
    } else if (op == "Ceil") {
      r = std::ceil(a);
    } else if (op == "Round") {
      r = std::nearbyint(a);
    } else if (op == "Sqrt") {
      r = std::sqrt(a);
    } else if (op == "Reciprocal") {
      r = 1.0 / a;
    } else if (op == "Exp") {
      r = std::exp(a);
    } else if (op == "Sign") {
      r = (a > 0) - (a < 0), n = (x > 0) - (x < 0);
    } else if (op == "Not") {
      n = x == 0;
    } else if (op == "Relu") {
      r = std::max(a, 0.0), n = std::max<int64_t>(x, 0);
    }
    set_value(&result, i, r, n);
  }
  return std::vector<Values>{result};
}

const std::map<std::string, Evaluator>& evaluators() {
  static const std::map<std::string, Evaluator> table = [] {
    std::map<std::string, Evaluator> t;
    t["Shape"] = evaluate_shape;
    t["Size"] = evaluate_shape;
    t["ConstantOfShape"] = evaluate_constant_of_shape;
    t["Gather"] = evaluate_gather;
    t["Range"] = evaluate_range;
    t["Expand"] = evaluate_expand;
    t["Tile"] = evaluate_tile;
    t["Concat"] = evaluate_concat;
    t["Transpose"] = evaluate_transpose;
    t["Slice"] = evaluate_slice;
    t["Cast"] = evaluate_cast;
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) t[op] = evaluate_reshape;
    for (const char* op :
         {"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Min", "Max", "Sum", "Equal", "Less", "Greater",
          "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where"}) {
      t[op] = evaluate_elementwise;
    }
    for (const char* op : {"Neg", "Abs", "Floor", "Ceil", "Round", "Sqrt", "Reciprocal", "Exp",
                           "Sign", "Not", "Relu"}) {
      t[op] = evaluate_unary;
    }
    return t;
  }();
  return table;
}

}  // namespace

bool has_constant_evaluator(const std::string& op_type) {
  return evaluators().count(op_type) != 0;
}

bool can_evaluate_without_runtime(const ir::Graph& graph, const ir::Node& node) {
  if (!node.domain.empty() || !node.unrepresentable.empty()) return false;
  if (!evaluators().count(node.op_type)) return false;
  if (node.op_type == "Shape" || node.op_type == "Size") {
    if (!node.has_input(0)) return false;
    const ir::Tensor& input = graph.tensor(node.inputs[0]);
    if (!input.shape_known) return false;
    for (int64_t dimension : input.shape) {
      if (dimension < 0) return false;
    }
    return true;
  }
  for (const std::string& input : node.inputs) {
    if (input.empty()) continue;
    if (!graph.has_tensor(input) || !graph.tensor(input).is_constant()) return false;
  }
  return true;
}

Result<std::vector<ir::Tensor>> evaluate_constant_node(const ir::Graph& graph,
                                                       const ir::Node& node) {
  auto evaluator = evaluators().find(node.op_type);
  if (evaluator == evaluators().end()) {
    return internal_failure(node.describe(), ": no constant evaluator");
  }
  ORKNN_ASSIGN_OR_RETURN(std::vector<Values> values, evaluator->second(graph, node));
  std::vector<ir::Tensor> tensors;
  for (size_t i = 0; i < node.outputs.size() && i < values.size(); ++i) {
    tensors.push_back(tensor_of(values[i], node.outputs[i]));
  }
  return tensors;
}

std::optional<DataType> known_output_type(const ir::Graph& graph, const ir::Node& node,
                                          size_t output) {
  const std::string& op = node.op_type;
  auto input_type = [&](size_t position) -> std::optional<DataType> {
    if (!node.has_input(position) || !graph.has_tensor(node.inputs[position])) return std::nullopt;
    return graph.tensor(node.inputs[position]).type;
  };
  if (op == "Shape" || op == "Size" || op == "ArgMax" || op == "ArgMin") return DataType::kInt64;
  if (op == "MaxPool" && output == 1) return DataType::kInt64;
  if (op == "Cast") {
    Result<DataType> target = cast_target(node);
    if (target.ok()) return target.value();
    return std::nullopt;
  }
  if (op == "DequantizeLinear") return DataType::kFloat32;
  if (op == "QuantizeLinear") {
    if (node.has_input(2)) return input_type(2);
    return DataType::kUInt8;
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
      op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor" || op == "Not") {
    return DataType::kBool;
  }
  if (op == "ConstantOfShape") {
    auto value = node.tensor_attributes.find("value");
    return value == node.tensor_attributes.end() ? DataType::kFloat32 : value->second.type;
  }
  if (op == "Where") return input_type(1);
  return input_type(0);
}

}  // namespace orknn::convert
