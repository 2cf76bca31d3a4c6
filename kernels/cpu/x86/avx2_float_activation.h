// What the AVX2 float kernels share (the GEMM tile in avx2_gemm_tiles.cc, the depthwise plane
// and lanes in avx2_depthwise_plane.cc and avx2_depthwise_rows.cc, the lane transposes in
// avx2_lane_interleave.cc, the direct tile in avx2_direct_tiles.cc, the lane tile in
// avx2_lane_tiles.cc): the fused activation (the leaky slope on negatives, then
// max(minimum, value) and min(maximum, value) with the value second, so a NaN value stays NaN
// as with the reference's std::max / std::min) and an 8 x 8 transpose in registers. The
// functions carry their instruction set as a target
// attribute (avx2_direct_tiles.cc is compiled for the baseline x86-64) and are `static`, so each
// file keeps its own copy (an external inline compiled with AVX2 could be the one the linker
// keeps for baseline callers; see avx512_vnni_tiles.cc). [[maybe_unused]]: a file may take only
// the transpose (avx2_lane_interleave.cc).
#pragma once

#include <immintrin.h>

#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2_float {

struct VectorActivation {
  __m256 minimum;
  __m256 maximum;
  __m256 leaky_alpha;
  bool leaky;
};

[[maybe_unused]] static __attribute__((target("avx2,fma"))) VectorActivation broadcast_activation(
    const FloatActivation& activation) {
  return VectorActivation{_mm256_set1_ps(activation.minimum), _mm256_set1_ps(activation.maximum),
                          _mm256_set1_ps(activation.leaky_alpha), activation.leaky};
}

[[maybe_unused]] static __attribute__((target("avx2,fma"))) __m256 activate(
    const VectorActivation& activation, __m256 value) {
  if (activation.leaky) {
    const __m256 negative = _mm256_cmp_ps(value, _mm256_setzero_ps(), _CMP_LT_OQ);
    value = _mm256_blendv_ps(value, _mm256_mul_ps(value, activation.leaky_alpha), negative);
  }
  value = _mm256_max_ps(activation.minimum, value);
  return _mm256_min_ps(activation.maximum, value);
}

// r[k] lane l -> r[l] lane k.
static inline __attribute__((target("avx2,fma"))) void transpose8x8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]);
  const __m256 t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]);
  const __m256 t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]);
  const __m256 t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]);
  const __m256 t7 = _mm256_unpackhi_ps(r[6], r[7]);
  // Per 128-bit lane: q0 holds element 0 of rows 0-3, q1 element 1, ... (rows 4-7 in q4-q7).
  const __m256 q0 = _mm256_shuffle_ps(t0, t2, 0x44);
  const __m256 q1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 q2 = _mm256_shuffle_ps(t1, t3, 0x44);
  const __m256 q3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 q4 = _mm256_shuffle_ps(t4, t6, 0x44);
  const __m256 q5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 q6 = _mm256_shuffle_ps(t5, t7, 0x44);
  const __m256 q7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(q0, q4, 0x20);
  r[1] = _mm256_permute2f128_ps(q1, q5, 0x20);
  r[2] = _mm256_permute2f128_ps(q2, q6, 0x20);
  r[3] = _mm256_permute2f128_ps(q3, q7, 0x20);
  r[4] = _mm256_permute2f128_ps(q0, q4, 0x31);
  r[5] = _mm256_permute2f128_ps(q1, q5, 0x31);
  r[6] = _mm256_permute2f128_ps(q2, q6, 0x31);
  r[7] = _mm256_permute2f128_ps(q3, q7, 0x31);
}

}  // namespace orknn::kernels::cpu::optimized::avx2_float
