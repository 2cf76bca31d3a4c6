// Choosing a product layer's int8 weights from its calibration inputs instead of rounding each
// weight to the nearest code on its own.
//
// Error-compensated rounding (the GPTQ/OBQ method): the weights of an output channel are
// quantized one input column at a time, and each column's rounding error is spread over the
// columns not yet quantized, weighted by the inverse of H = X^T X (X: the layer's calibration
// inputs, one im2col row per output position), so the errors cancel in the layer's output
// W x instead of adding up. The scales stay those of nearest rounding (max |w| / 127).
//
// Bias correction: what remains of the weight error still shifts each output channel's mean by
// sum_k (w_q - w)[c, k] * mean(x_k); the converter subtracts that from the channel's bias.
#pragma once

#include <cstdint>
#include <vector>

namespace orknn::convert {

// A layer's calibration inputs: `rows` x `columns`, row-major. Columns follow the weights'
// reduction index (Conv: (input_channel * kernel_h + y) * kernel_w + x; Gemm: k).
struct LayerInputRows {
  int64_t columns = 0;
  std::vector<float> values;
  int64_t rows() const { return columns > 0 ? static_cast<int64_t>(values.size()) / columns : 0; }
};

struct CompensatedRoundingSettings {
  // H is used in diagonal blocks of at most this many columns: the solve costs
  // columns x block^2, so a 4608-column layer (ResNet50's 3x3x512) stays a few seconds.
  int64_t max_block_columns = 1024;
  // Added to H's diagonal, relative to its mean diagonal: keeps H invertible when the samples
  // do not span every column (fewer rows than columns, inputs that are always zero).
  double relative_damping = 0.01;
  // Columns go in their natural order: quantizing the largest-input columns first (GPTQ's
  // "act order") lowered yolov5n_320's cosine here (0.9825 -> 0.9797 mmse/channel).
};

// Nearest rounding, the runtime's rule (docs/quantization.md 2) with zero point 0.
// `weights` is outputs x columns, row-major; `scales` one per output or one for all.
std::vector<int8_t> round_weights_to_nearest(const std::vector<float>& weights, int64_t outputs,
                                             const std::vector<float>& scales);

// Error-compensated rounding of the same weights (see the top of this file). Falls back to
// nearest rounding for a block whose H cannot be factored even with more damping, and when
// `inputs` has no rows or the wrong column count.
std::vector<int8_t> round_weights_with_compensation(const std::vector<float>& weights,
                                                    int64_t outputs,
                                                    const std::vector<float>& scales,
                                                    const LayerInputRows& inputs,
                                                    const CompensatedRoundingSettings& settings);

// Per output: the mean over the rows of W_q x_q - W x, where x_q are the rows the quantized
// model feeds the layer and x the float model's rows at the same positions (row r of one pairs
// with row r of the other): how far the quantized layer's mean output is from the float one,
// whatever caused it (its weights, or the error its inputs already carry). With the same rows
// for both it is the mean of (W_q - W) x, what the quantized weights alone add to the output,
// which bias correction subtracts. Zeros when the sizes do not match.
std::vector<double> mean_output_shift(const std::vector<float>& weights,
                                      const std::vector<int8_t>& codes, int64_t outputs,
                                      const std::vector<float>& scales,
                                      const LayerInputRows& quantized_inputs,
                                      const LayerInputRows& float_inputs);

}  // namespace orknn::convert
