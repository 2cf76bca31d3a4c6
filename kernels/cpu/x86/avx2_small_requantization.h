// What the two int32 requantization paths of the avx2 table share (avx2_requantization.cc's
// requantize_row with RequantizeRow::small_multipliers, and avx2_lane_requantization.cc's
// requantize_lanes): the zero point and the clamp as int32 lanes, held in registers, and the
// requantization of eight values. Included by AVX2 files only; the function is `static`, so
// each file keeps its own copy (the rule of avx2_micro_kernels.h).
#pragma once

#include <immintrin.h>

namespace orknn::kernels::cpu::optimized::avx2 {

struct SmallRequantizeConstants {
  __m256i zero_point;
  __m256i minimum;
  __m256i maximum;
};

// Eight int32 values (|value x multiplier| < 2^30) as eight codes in the low 8 bytes: the
// products in double (exact: 32 by 24 significant bits), vcvtpd2dq rounding them half to even in
// the default MXCSR mode as nearbyint does, then the zero point and the clamp, exact in int32.
static inline __m128i requantize8_small_codes(__m256i values, __m256d multipliers_low,
                                              __m256d multipliers_high,
                                              const SmallRequantizeConstants& k) {
  const __m128i low = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values)), multipliers_low));
  const __m128i high = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values, 1)), multipliers_high));
  __m256i rounded = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
  rounded = _mm256_add_epi32(rounded, k.zero_point);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, k.minimum), k.maximum);
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
  return _mm_packs_epi16(words, words);
}

}  // namespace orknn::kernels::cpu::optimized::avx2
