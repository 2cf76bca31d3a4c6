// The end of a dot-product GEMM row (dot_product_kernels.h): the per-output constants (the
// bias or Gemm's C, and the zero-point term) added to the accumulators modulo 2^32, as the tile
// sums themselves, then the variant's requantization row; a convolution row takes the table's
// requantize_offset_row (or with SiLU, the base table's requantize_silu_offset_row) instead when
// it has one (the constant added inside that pass).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "optimized/blocking.h"
#include "optimized/dot_product_kernels.h"

namespace orknn::kernels::cpu::optimized {

inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// The largest |accumulator| (the bias and zero-point term added) with which a row of this
// multiplier requantizes in float with the reference's bits (Int8TileRequantization::in_float):
// at most 2^24, so the int32 -> float conversion is exact, and its product with the multiplier
// at most 2^21 (the proof is at Int8TileRequantization). Negative when none does (|m| > 1, NaN).
inline int64_t float_requantization_accumulator_limit(float multiplier) {
  constexpr double kLargestAccumulator = 16777216.0;  // 2^24: int32 -> float is exact
  constexpr double kLargestProduct = 2097152.0;       // 2^21
  const double magnitude = std::fabs(static_cast<double>(multiplier));
  if (!(magnitude <= 1.0)) return -1;  // also NaN; small multipliers are below 0.5 anyway
  double largest = kLargestAccumulator;
  if (magnitude > 0.0) largest = std::min(largest, std::floor(kLargestProduct / magnitude));
  return static_cast<int64_t>(largest);
}

// The per-row bound the tiles check their real sums against when the static limit below fails
// (Int8TileRequantization::float_bounds): one past the accumulator limit, 0 when no accumulator
// qualifies, so `|acc| >= bound` (unsigned) sends a row to the double path.
inline uint32_t float_requantization_bound(float multiplier) {
  const int64_t limit = float_requantization_accumulator_limit(multiplier);
  return limit < 0 ? 0u : static_cast<uint32_t>(limit + 1);
}

// The largest |bias| with which an output channel's accumulators may requantize in float
// whatever the input: every accumulator it can see, |bias| plus its reach (max |x - zx| x
// sum |w - zw|, `weight_offset_magnitudes` being that sum), must be within the accumulator limit
// above. Negative when no bias qualifies. Computed once at build; the bias arrives with the
// run, so requantizes_in_float checks it per block.
inline int64_t float_requantization_bias_limit(int64_t weight_offset_magnitudes,
                                               int32_t input_zero_point, float multiplier) {
  const int64_t largest_input_offset =
      std::max<int64_t>(127 - int64_t{input_zero_point}, int64_t{input_zero_point} + 128);
  const int64_t limit = float_requantization_accumulator_limit(multiplier);
  if (limit < 0) return -1;
  return limit - largest_input_offset * weight_offset_magnitudes;
}

// float_requantization_bias_limit of every output channel of constant weights [channels][depth]
// (the GEMM-like convolutions, whose weights are one contiguous row per output channel).
inline std::vector<int64_t> float_requantization_bias_limits(const int8_t* weights, size_t channels,
                                                             size_t depth,
                                                             const int32_t* weight_zero_points,
                                                             int32_t input_zero_point,
                                                             const float* multipliers) {
  std::vector<int64_t> limits(channels);
  for (size_t channel = 0; channel < channels; ++channel) {
    int64_t magnitudes = 0;
    for (size_t k = 0; k < depth; ++k) {
      const int64_t offset = int64_t{weights[channel * depth + k]} - weight_zero_points[channel];
      magnitudes += offset < 0 ? -offset : offset;
    }
    limits[channel] =
        float_requantization_bias_limit(magnitudes, input_zero_point, multipliers[channel]);
  }
  return limits;
}

// Whether `rows` output channels requantize in float with these biases (null: none).
inline bool requantizes_in_float(const int64_t* bias_limits, const int32_t* bias, size_t rows) {
  for (size_t r = 0; r < rows; ++r) {
    const int64_t magnitude = bias ? std::abs(int64_t{bias[r]}) : 0;
    if (magnitude > bias_limits[r]) return false;
  }
  return true;
}

// One row of `count` accumulators into `output`. Convolutions: one output channel per row
// (`per_column` false, multiplier and SiLU epilogue of `channel`); Gemm/MatMul: one per column
// (multipliers from `channel` on). `constant(j)` is what column j adds.
template <typename Constant>
void finish_row(const DotProductKernels& kernels, const reference::Int8Requantization& q,
                size_t channel, bool per_column, bool small_multipliers, int32_t* accumulators,
                size_t count, Constant&& constant, int8_t* output) {
  RequantizeRow row =
      requantize_row_of(q, channel, per_column, small_multipliers, accumulators, count, output);
  if (!per_column && !q.silu && small_multipliers && kernels.requantize_offset_row) {
    // One channel's row: its constant is added inside the requantization pass, which checks
    // the sums against the float bound (a division per row, rows of 49 and more outputs).
    row.float_bound = float_requantization_bound(q.multipliers[channel]);
    kernels.requantize_offset_row(row, constant(0));
    return;
  }
  const MicroKernels& base = kernels.base();
  if (!per_column && q.silu && base.requantize_silu_offset_row) {
    // The SiLU epilogue with the constant added as it loads the sums (no pass over them).
    base.requantize_silu_offset_row(silu_row_of(q, channel, row), constant(0));
    return;
  }
  for (size_t j = 0; j < count; ++j) accumulators[j] = wrapping_add(accumulators[j], constant(j));
  if (per_column) {
    base.requantize_row(row);
  } else {
    requantize_int8_row(base, q, channel, row);
  }
}

}  // namespace orknn::kernels::cpu::optimized
