#include "quantize/layer_weights.h"

namespace orknn::convert {

std::optional<LayerWeightMatrix> layer_weight_matrix(const ir::Node& node,
                                                     const ir::Tensor& weights, int64_t columns) {
  const std::vector<float> values = ir::constant_as_floats(weights);
  if (columns <= 0 || values.empty() || static_cast<int64_t>(values.size()) % columns != 0) {
    return std::nullopt;
  }
  LayerWeightMatrix matrix;
  matrix.columns = columns;
  matrix.outputs = static_cast<int64_t>(values.size()) / columns;
  matrix.transposed = node.op_type == "Gemm" && ir::int_attribute(node, "transB", 0) == 0;
  if (!matrix.transposed) {
    matrix.values = values;
    return matrix;
  }
  matrix.values.resize(values.size());
  for (int64_t k = 0; k < columns; ++k) {
    for (int64_t n = 0; n < matrix.outputs; ++n)
      matrix.values[static_cast<size_t>(n * columns + k)] =
          values[static_cast<size_t>(k * matrix.outputs + n)];
  }
  return matrix;
}

RoundedLayer round_layer(const LayerWeightMatrix& matrix, const std::vector<float>& scales,
                         const LayerInputRows& rounding_inputs, const LayerInputRows& float_inputs,
                         WeightRounding rounding, bool bias_correction) {
  RoundedLayer result;
  std::vector<int8_t> codes =
      rounding == WeightRounding::kErrorCompensated
          ? round_weights_with_compensation(matrix.values, matrix.outputs, scales, rounding_inputs,
                                            CompensatedRoundingSettings{})
          : round_weights_to_nearest(matrix.values, matrix.outputs, scales);
  if (bias_correction) {
    result.bias_shift = mean_output_shift(matrix.values, codes, matrix.outputs, scales,
                                          rounding_inputs, float_inputs);
  }
  if (!matrix.transposed) {
    result.codes = std::move(codes);
    return result;
  }
  result.codes.resize(codes.size());
  for (int64_t n = 0; n < matrix.outputs; ++n) {
    for (int64_t k = 0; k < matrix.columns; ++k)
      result.codes[static_cast<size_t>(k * matrix.outputs + n)] =
          codes[static_cast<size_t>(n * matrix.columns + k)];
  }
  return result;
}

}  // namespace orknn::convert
