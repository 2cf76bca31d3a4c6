#include "graph/op_schema.h"

#include <cstring>

namespace orknn::graph {

Result<std::vector<int64_t>> ShapeInferenceContext::constant_ints(size_t position) const {
  if (!has_input(position)) return error("input ", position, " is required");
  const Tensor& tensor = input(position);
  if (!tensor.is_constant()) {
    return error("input ", position, " ('", tensor.name, "') must be a constant");
  }
  const int64_t count = tensor.elements();
  std::vector<int64_t> values(static_cast<size_t>(count));
  if (tensor.data_type == DataType::kInt64) {
    std::memcpy(values.data(), tensor.constant_data, values.size() * sizeof(int64_t));
  } else if (tensor.data_type == DataType::kInt32) {
    for (int64_t i = 0; i < count; ++i) {
      int32_t value;
      std::memcpy(&value, tensor.constant_data + i * 4, sizeof(value));
      values[static_cast<size_t>(i)] = value;
    }
  } else {
    return error("input ", position, " ('", tensor.name, "') must be INT64 or INT32, not ",
                 data_type_name(tensor.data_type));
  }
  return values;
}

Result<std::vector<float>> ShapeInferenceContext::constant_floats(size_t position) const {
  if (!has_input(position)) return error("input ", position, " is required");
  const Tensor& tensor = input(position);
  if (!tensor.is_constant()) {
    return error("input ", position, " ('", tensor.name, "') must be a constant");
  }
  const size_t count = static_cast<size_t>(tensor.elements());
  std::vector<float> values(count);
  if (tensor.data_type == DataType::kFloat32) {
    std::memcpy(values.data(), tensor.constant_data, count * sizeof(float));
  } else if (tensor.data_type == DataType::kFloat16) {
    for (size_t i = 0; i < count; ++i) {
      Float16Bits half;
      std::memcpy(&half, tensor.constant_data + i * 2, sizeof(half));
      values[i] = half_to_float(half);
    }
  } else {
    return error("input ", position, " ('", tensor.name, "') must be FP32 or FP16, not ",
                 data_type_name(tensor.data_type));
  }
  return values;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return invalid_model("axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return invalid_model("shapes ", shape_to_string(a), " and ", shape_to_string(b),
                           " cannot be broadcast (dimension ", i, ": ", da, " vs ", db, ")");
    }
    result[i] = da == 1 ? db : da;
  }
  return result;
}

}  // namespace orknn::graph
