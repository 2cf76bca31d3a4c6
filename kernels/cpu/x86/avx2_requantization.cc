// The avx2 table's requantization row (RequantizeRow): int32 accumulators to int8 codes as
// reference::requantize does, in double, in int32 for small multipliers, or in float.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_micro_kernels.h"
#include "x86/avx2_small_requantization.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

// Requantizes 8 accumulators exactly as reference::requantize does, in double.
struct RequantizeConstants {
  __m256d lower_bound;
  __m256d upper_bound;
  __m256d zero_point;
  __m256d minimum;
  __m256d maximum;
};

inline __m128i requantize_half(__m256d scaled, const RequantizeConstants& k) {
  // std::min(std::max(scaled, -1e9), 1e9), NaN-preserving like the reference.
  scaled = _mm256_min_pd(k.upper_bound, _mm256_max_pd(k.lower_bound, scaled));
  // nearbyint in the default environment: round half to even.
  __m256d value = _mm256_round_pd(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // Integers below 2^53 add exactly in double, so this equals the reference's int64 sum.
  value = _mm256_add_pd(value, k.zero_point);
  value = _mm256_min_pd(k.maximum, _mm256_max_pd(k.minimum, value));
  return _mm256_cvtpd_epi32(value);  // integral and within [-128, 127]
}

inline void requantize8(const int32_t* accumulators, const float* multipliers, bool per_element,
                        __m256d uniform, const RequantizeConstants& k, int8_t* output) {
  const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators));
  __m256d multiplier_low = uniform;
  __m256d multiplier_high = uniform;
  if (per_element) {
    multiplier_low = _mm256_cvtps_pd(_mm_loadu_ps(multipliers));
    multiplier_high = _mm256_cvtps_pd(_mm_loadu_ps(multipliers + 4));
  }
  const __m256d low =
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values)), multiplier_low);
  const __m256d high =
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values, 1)), multiplier_high);
  const __m128i words = _mm_packs_epi32(requantize_half(low, k), requantize_half(high, k));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(output), _mm_packs_epi16(words, words));
}

// The same when |accumulator x multiplier| < 2^30 (RequantizeRow::small_multipliers): the bound
// is moot, cvtpd_epi32 rounds half to even in the default MXCSR mode exactly as nearbyint does,
// and the zero point and clamp are exact in int32.
inline void requantize8_small(const int32_t* accumulators, const float* multipliers,
                              bool per_element, __m256d uniform, const SmallRequantizeConstants& k,
                              int8_t* output) {
  const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators));
  __m256d multiplier_low = uniform;
  __m256d multiplier_high = uniform;
  if (per_element) {
    multiplier_low = _mm256_cvtps_pd(_mm_loadu_ps(multipliers));
    multiplier_high = _mm256_cvtps_pd(_mm_loadu_ps(multipliers + 4));
  }
  _mm_storel_epi64(reinterpret_cast<__m128i*>(output),
                   requantize8_small_codes(values, multiplier_low, multiplier_high, k));
}

// RequantizeRow::in_float on 16 accumulators: float(acc) x m + 1.5 x 2^23 in one FMA is
// 1.5 x 2^23 + round_half_even(acc x m) (the proof is at Int8TileRequantization::in_float), so
// its bits minus 0x4B400000 are the rounded product; the zero point is subtracted from that
// constant. The int32 -> int16 saturation keeps every value outside [-128, 127] outside it, so
// the clamp on 16-bit lanes is the reference's. Per 16 outputs two conversions, two FMAs and
// two subtractions, where the int32 path takes four conversions to and from double, four
// double products and an insert.
struct FloatRequantizeConstants {
  __m256 multiplier;
  __m256 magic;        // 1.5 x 2^23
  __m256i magic_bits;  // 0x4B400000 - zero point
  __m256i minimum;     // int16 lanes
  __m256i maximum;
};

inline void requantize16_in_float(const int32_t* accumulators, const FloatRequantizeConstants& k,
                                  int8_t* output) {
  const __m256 low =
      _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators)));
  const __m256 high =
      _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators + 8)));
  const __m256i rounded_low = _mm256_sub_epi32(
      _mm256_castps_si256(_mm256_fmadd_ps(low, k.multiplier, k.magic)), k.magic_bits);
  const __m256i rounded_high = _mm256_sub_epi32(
      _mm256_castps_si256(_mm256_fmadd_ps(high, k.multiplier, k.magic)), k.magic_bits);
  // packs works within 128-bit lanes: [l0-3 h0-3 | l4-7 h4-7] -> [l0-7 | h0-7].
  __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(rounded_low, rounded_high), 0xD8);
  words = _mm256_min_epi16(_mm256_max_epi16(words, k.minimum), k.maximum);
  const __m128i bytes =
      _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(output), bytes);
}

// The 16-output steps of an in_float row; returns how many outputs they wrote.
size_t requantize_row_in_float(const RequantizeRow& row) {
  const FloatRequantizeConstants k{_mm256_set1_ps(row.multipliers[0]), _mm256_set1_ps(12582912.0f),
                                   _mm256_set1_epi32(0x4B400000 - row.output_zero_point),
                                   _mm256_set1_epi16(static_cast<int16_t>(row.output_minimum)),
                                   _mm256_set1_epi16(static_cast<int16_t>(row.output_maximum))};
  const int32_t* const accumulators = row.accumulators;
  int8_t* const output = row.output;
  const size_t whole = row.count / 16 * 16;
  for (size_t i = 0; i < whole; i += 16) requantize16_in_float(accumulators + i, k, output + i);
  return whole;
}

// Whether every accumulator of a row with one multiplier is within the float path's promise
// (RequantizeRow::in_float: |acc| <= 2^24 and |acc x m| <= 2^21; the limit as
// float_requantization_accumulator_limit computes it, written out here because this file calls
// no header inlines): the row's real sums, checked in one pass of loads, when the caller's
// worst case (from the weights alone) could not promise it.
bool accumulators_within_float_limit(const RequantizeRow& row) {
  const double multiplier = __builtin_fabs(static_cast<double>(row.multipliers[0]));
  if (!(multiplier <= 1.0)) return false;
  double limit = 16777216.0;
  if (multiplier > 0.0 && __builtin_floor(2097152.0 / multiplier) < limit) {
    limit = __builtin_floor(2097152.0 / multiplier);
  }
  const auto bound = static_cast<uint32_t>(limit);
  __m256i largest = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= row.count; i += 8) {
    const __m256i values =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.accumulators + i));
    largest = _mm256_max_epu32(largest, _mm256_abs_epi32(values));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), largest);
  uint32_t result = 0;
  for (uint32_t lane : lanes) result = lane > result ? lane : result;
  for (; i < row.count; ++i) {
    const auto value = static_cast<uint32_t>(row.accumulators[i]);
    const uint32_t magnitude = row.accumulators[i] < 0 ? 0u - value : value;
    result = magnitude > result ? magnitude : result;
  }
  return result <= bound;
}

}  // namespace

void requantize_row(const RequantizeRow& row) {
  const RequantizeConstants k{_mm256_set1_pd(-1e9), _mm256_set1_pd(1e9),
                              _mm256_set1_pd(static_cast<double>(row.output_zero_point)),
                              _mm256_set1_pd(static_cast<double>(row.output_minimum)),
                              _mm256_set1_pd(static_cast<double>(row.output_maximum))};
  // min(max(v, low), high) with low > high gives high, as the reference's clamp does.
  const int32_t minimum =
      row.output_minimum <= row.output_maximum ? row.output_minimum : row.output_maximum;
  const SmallRequantizeConstants small{_mm256_set1_epi32(row.output_zero_point),
                                       _mm256_set1_epi32(minimum),
                                       _mm256_set1_epi32(row.output_maximum)};
  const __m256d uniform = _mm256_set1_pd(static_cast<double>(row.multipliers[0]));
  // Locals, and one loop per case: the int8 stores may alias anything, so fields read through
  // `row` would be reloaded (and per_element tested) on every step.
  const int32_t* const accumulators_in = row.accumulators;
  const float* const multipliers_in = row.multipliers;
  int8_t* const output_out = row.output;
  const size_t whole = row.count / 8 * 8;
  // An in_float row's 16-output steps first (their clamp runs on 16-bit lanes: the output range
  // must be int8's); the rest, fewer than 16, on the paths below, which give the same bytes.
  // Rows of 16 or more that the caller could not promise are checked on their real sums.
  const bool in_float = !row.per_element && row.output_minimum >= -128 &&
                        row.output_maximum <= 127 && row.output_minimum <= row.output_maximum &&
                        row.output_zero_point >= -128 && row.output_zero_point <= 127 &&
                        (row.in_float || (row.count >= 16 && accumulators_within_float_limit(row)));
  size_t i = in_float ? requantize_row_in_float(row) : 0;
  if (row.small_multipliers && row.per_element) {
    for (; i < whole; i += 8) {
      requantize8_small(accumulators_in + i, multipliers_in + i, true, uniform, small,
                        output_out + i);
    }
  } else if (row.small_multipliers) {
    for (; i < whole; i += 8) {
      requantize8_small(accumulators_in + i, multipliers_in, false, uniform, small, output_out + i);
    }
  } else {
    for (; i < whole; i += 8) {
      requantize8(accumulators_in + i, multipliers_in + (row.per_element ? i : 0), row.per_element,
                  uniform, k, output_out + i);
    }
  }
  if (i == row.count) return;
  if (row.count >= 8) {
    // One more vector ending at the row's end: it recomputes a few outputs with the same
    // inputs (the same values), instead of a staged copy.
    const size_t last = row.count - 8;
    if (row.small_multipliers) {
      requantize8_small(accumulators_in + last, multipliers_in + (row.per_element ? last : 0),
                        row.per_element, uniform, small, output_out + last);
    } else {
      requantize8(accumulators_in + last, multipliers_in + (row.per_element ? last : 0),
                  row.per_element, uniform, k, output_out + last);
    }
    return;
  }
  alignas(32) int32_t accumulators[8] = {};
  alignas(32) float multipliers[8] = {};
  alignas(16) int8_t output[8];
  const size_t rest = row.count - i;
  for (size_t t = 0; t < rest; ++t) {
    accumulators[t] = row.accumulators[i + t];
    if (row.per_element) multipliers[t] = row.multipliers[i + t];
  }
  if (row.small_multipliers) {
    requantize8_small(accumulators, multipliers, row.per_element, uniform, small, output);
  } else {
    requantize8(accumulators, multipliers, row.per_element, uniform, k, output);
  }
  for (size_t t = 0; t < rest; ++t) row.output[i + t] = output[t];
}

}  // namespace orknn::kernels::cpu::optimized::avx2
