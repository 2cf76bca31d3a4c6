// The avx2 table's requantization of the depthwise lanes (RequantizeLanes): eight channels'
// float sums per pixel to int8 codes, transposed back to the channel rows.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_micro_kernels.h"
#include "x86/avx2_small_requantization.h"
#include "x86/byte_transpose.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

// One pixel's eight lane sums requantized (the small-multiplier path of requantize8_small) into
// the low 8 bytes.
inline __m128i requantize_lane_pixel(const float* sums, __m256i bias, __m256d multipliers_low,
                                     __m256d multipliers_high, const SmallRequantizeConstants& k) {
  const __m256i values = _mm256_add_epi32(_mm256_cvttps_epi32(_mm256_loadu_ps(sums)), bias);
  return requantize8_small_codes(values, multipliers_low, multipliers_high, k);
}

// The same for LaneRequantization::in_float (requantize16_in_float's rounding): the sum plus the
// bias is exact in float within 2^24, and one FMA rounds its product half to even.
struct FloatLaneConstants {
  __m256 bias;
  __m256 multipliers;
  __m256 magic;        // 1.5 x 2^23
  __m256i magic_bits;  // 0x4B400000 - zero point
};

inline __m128i requantize_lane_pixel_in_float(const float* sums, const FloatLaneConstants& f,
                                              const SmallRequantizeConstants& k) {
  const __m256 value = _mm256_add_ps(_mm256_loadu_ps(sums), f.bias);
  __m256i rounded = _mm256_sub_epi32(
      _mm256_castps_si256(_mm256_fmadd_ps(value, f.multipliers, f.magic)), f.magic_bits);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, k.minimum), k.maximum);
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
  return _mm_packs_epi16(words, words);
}

}  // namespace

void requantize_lanes(const RequantizeLanes& lanes) {
  const LaneRequantization& q = lanes.requantization;
  const int32_t minimum =
      q.output_minimum <= q.output_maximum ? q.output_minimum : q.output_maximum;
  const SmallRequantizeConstants k{_mm256_set1_epi32(q.output_zero_point),
                                   _mm256_set1_epi32(minimum), _mm256_set1_epi32(q.output_maximum)};
  const __m256i bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.bias));
  const __m256d multipliers_low = _mm256_cvtps_pd(_mm_loadu_ps(q.multipliers));
  const __m256d multipliers_high = _mm256_cvtps_pd(_mm_loadu_ps(q.multipliers + 4));
  // The zero point goes into the constant subtracted from the FMA's bits (int32, no overflow
  // for zero points within int8's codes); otherwise the int32 path.
  const bool in_float = q.in_float && q.output_zero_point >= -128 && q.output_zero_point <= 127;
  const FloatLaneConstants f{_mm256_cvtepi32_ps(bias), _mm256_loadu_ps(q.multipliers),
                             _mm256_set1_ps(12582912.0f),
                             _mm256_set1_epi32(0x4B400000 - q.output_zero_point)};
  auto pixel = [&](const float* sums) {
    return in_float ? requantize_lane_pixel_in_float(sums, f, k)
                    : requantize_lane_pixel(sums, bias, multipliers_low, multipliers_high, k);
  };
  const size_t count = lanes.count;
  int8_t* const* rows = q.rows;
  __m128i r[8];
  if (count < 8) {
    for (size_t c = 0; c < 8; ++c) {
      r[c] = c < count ? pixel(lanes.sums + c * 8) : _mm_setzero_si128();
    }
    store_first_pixel_codes(r, rows, count);
    return;
  }
  // The last block ends at the row's end and may overlap the one before (same values).
  for (size_t c = 0;; c += 8) {
    if (c + 8 > count) c = count - 8;
    for (size_t p = 0; p < 8; ++p) r[p] = pixel(lanes.sums + (c + p) * 8);
    store_pixel_codes(r, rows, c);
    if (c + 8 == count) return;
  }
}

}  // namespace orknn::kernels::cpu::optimized::avx2
