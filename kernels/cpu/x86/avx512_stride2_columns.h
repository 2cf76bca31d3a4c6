// What the AVX-512 stride-2 row kernels (the 3x3 depthwise and max pooling) share: the input
// columns of a block of 16 outputs at stride 2 across, split in registers. Included only by
// files compiled for the baseline x86-64 whose callers check AVX-512 F/BW/VL first; `static`
// for the reason avx512_float_helpers.h gives.
#pragma once

#include <immintrin.h>

#include <cstddef>

#include "x86/avx512_float_helpers.h"

namespace orknn::kernels::cpu::optimized::avx512_float {

// The block's input columns 2x (even) and 2x + 1 (odd) for its 16 outputs x: two loads of 16
// floats from row[first], first = 2 x0, lanes outside `low` and `high` (the two halves'
// columns inside the row) 0 and never read.
struct ColumnPairs {
  __m512 even;
  __m512 odd;
};
[[maybe_unused]] static ORKNN_TARGET_AVX512 ColumnPairs column_pairs(const float* row, size_t first,
                                                                     __mmask16 low,
                                                                     __mmask16 high) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 a = _mm512_maskz_loadu_ps(low, row + first);
  const __m512 b = _mm512_maskz_loadu_ps(high, row + first + 16);
  return ColumnPairs{_mm512_permutex2var_ps(a, even, b), _mm512_permutex2var_ps(a, odd, b)};
}

// The columns 2x - 1: lane l is odd[l - 1], lane 0 the previous block's odd[15] (the maskz form
// with every lane: GCC 12's plain one warns about its undefined source).
[[maybe_unused]] static ORKNN_TARGET_AVX512 __m512 columns_before(__m512 odd, __m512 previous_odd) {
  return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kAllLanes, _mm512_castps_si512(odd),
                                                       _mm512_castps_si512(previous_odd), 15));
}

// The lanes of a block's 16 columns from `first` that are inside a row of `width`.
[[maybe_unused]] static ORKNN_TARGET_AVX512 __mmask16 columns_inside(size_t first, size_t width) {
  return first < width ? first_lanes(width - first) : static_cast<__mmask16>(0);
}

}  // namespace orknn::kernels::cpu::optimized::avx512_float
