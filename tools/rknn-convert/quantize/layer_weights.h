// A product layer's (Conv, Gemm) float weights as the outputs x columns matrix that weight
// rounding works on (quantize/weight_rounding.h), and the choice of its int8 codes and bias
// shift from calibration rows. Shared by the one-shot rewrite (quantize/int8_rewrite.cc, float
// rows) and the sequential refinement (quantize/sequential_refinement.h, the quantized model's
// rows), so both round the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "options/convert_options.h"
#include "quantize/weight_rounding.h"

namespace orknn::convert {

struct LayerWeightMatrix {
  std::vector<float> values;  // outputs x columns, row-major
  int64_t outputs = 0;
  int64_t columns = 0;
  bool transposed = false;  // Gemm with transB 0: B is [K, N], `values` its transpose
};

// The matrix of `weights` (a float constant of `node`, a Conv or Gemm) with `columns` input
// columns (the calibration rows' width); nothing when the sizes do not divide.
std::optional<LayerWeightMatrix> layer_weight_matrix(const ir::Node& node,
                                                     const ir::Tensor& weights, int64_t columns);

struct RoundedLayer {
  std::vector<int8_t> codes;       // in the weight tensor's layout
  std::vector<double> bias_shift;  // per output channel, to subtract from the bias; may be empty
};

// Rounds `matrix` with `scales` as `rounding` says, the compensation driven by
// `rounding_inputs`. With `bias_correction`, the shift is the
// mean of W_q x_q - W x over the rows, x_q from `rounding_inputs` and x from `float_inputs`
// (the same rows for the one-shot rewrite: the weights' own mean error).
RoundedLayer round_layer(const LayerWeightMatrix& matrix, const std::vector<float>& scales,
                         const LayerInputRows& rounding_inputs, const LayerInputRows& float_inputs,
                         WeightRounding rounding, bool bias_correction);

}  // namespace orknn::convert
