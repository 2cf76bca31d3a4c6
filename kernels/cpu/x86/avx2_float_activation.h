// The fused activation of the AVX2 float tiles (the GEMM tile in avx2_micro_kernels.cc, the
// direct tile in avx2_direct_tiles.cc): the leaky slope on negatives, then max(minimum, value)
// and min(maximum, value) with the value second, so a NaN value stays NaN as with the
// reference's std::max / std::min. The functions carry their instruction set as a target
// attribute (avx2_direct_tiles.cc is compiled for the baseline x86-64) and are `static`, so each
// file keeps its own copy (an external inline compiled with AVX2 could be the one the linker
// keeps for baseline callers; see avx512_vnni_tiles.cc).
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

static __attribute__((target("avx2,fma"))) VectorActivation broadcast_activation(
    const FloatActivation& activation) {
  return VectorActivation{_mm256_set1_ps(activation.minimum), _mm256_set1_ps(activation.maximum),
                          _mm256_set1_ps(activation.leaky_alpha), activation.leaky};
}

static __attribute__((target("avx2,fma"))) __m256 activate(const VectorActivation& activation,
                                                           __m256 value) {
  if (activation.leaky) {
    const __m256 negative = _mm256_cmp_ps(value, _mm256_setzero_ps(), _CMP_LT_OQ);
    value = _mm256_blendv_ps(value, _mm256_mul_ps(value, activation.leaky_alpha), negative);
  }
  value = _mm256_max_ps(activation.minimum, value);
  return _mm256_min_ps(activation.maximum, value);
}

}  // namespace orknn::kernels::cpu::optimized::avx2_float
