// What the AVX-512 float files (the direct and lane convolutions' tiles, the SiLU epilogue, the
// Sigmoid rows) share: the target attribute, a lane mask and the fused activation.
// Included only by files compiled for the baseline x86-64 whose callers check AVX-512 F/BW/VL
// first. The functions are `static` so that every file keeps its own copy: an inline function
// with external linkage, compiled with these instructions, could be the copy the linker keeps
// for baseline code too (see avx512_vnni_tiles.cc); [[maybe_unused]] because not every file
// calls every one.
#pragma once

#include <immintrin.h>

#include "optimized/micro_kernels.h"

#define ORKNN_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace orknn::kernels::cpu::optimized::avx512_float {

constexpr __mmask16 kAllLanes = 0xFFFF;

// Lanes 0 .. count - 1 (all 16 from 16 on).
[[maybe_unused]] static ORKNN_TARGET_AVX512 __mmask16 first_lanes(size_t count) {
  if (count >= 16) return kAllLanes;
  return static_cast<__mmask16>((1u << count) - 1u);
}

// As avx512_float_tiles.cc's activate(): the leaky slope on negatives, then max(minimum, value)
// and min(maximum, value) with the value second (a NaN value stays, as with std::max/min). The
// maskz forms with every lane set avoid GCC 12's -Wmaybe-uninitialized on the unmasked ones.
[[maybe_unused]] static ORKNN_TARGET_AVX512 __m512 activate(const FloatActivation& activation,
                                                            __m512 value) {
  if (activation.leaky) {
    const __mmask16 negative = _mm512_cmp_ps_mask(value, _mm512_setzero_ps(), _CMP_LT_OQ);
    value = _mm512_mask_mul_ps(value, negative, value, _mm512_set1_ps(activation.leaky_alpha));
  }
  value = _mm512_maskz_max_ps(kAllLanes, _mm512_set1_ps(activation.minimum), value);
  return _mm512_maskz_min_ps(kAllLanes, _mm512_set1_ps(activation.maximum), value);
}

}  // namespace orknn::kernels::cpu::optimized::avx512_float
