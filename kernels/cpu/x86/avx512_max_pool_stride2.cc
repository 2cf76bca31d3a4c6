// The avx512 table's 3x3 float max pooling at stride 2 across (micro_kernels.h
// MaxPoolStride2Rows): 16 outputs of a row per vector, read in place, each kernel row's three
// tap columns from two loads and three shuffles (avx512_stride2_columns.h). The generic driver
// (pooling.cc) takes three passes over a band (rows combined, then split into column phases,
// then the taps), ResNet's 64x112x112 pooling at half ONNX Runtime's speed.
//
// vmaxps(tap, best) is (tap > best) ? tap : best, the reference's rule: a NaN tap never
// replaces, a NaN best is never replaced. Each output starts from its first tap inside the
// input (the first kernel row inside, its left column where inside, else the centre, else the
// right) and then takes the others in order, masked to the columns inside the row.
//
// Compiled for the baseline x86-64 with function target attributes; the dispatcher installs it
// only after cpu_features reported AVX-512 F/BW/VL (dispatch.cc).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "optimized/micro_kernels.h"
#include "x86/avx512_float_helpers.h"
#include "x86/avx512_stride2_columns.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::column_pairs;
using avx512_float::ColumnPairs;
using avx512_float::columns_before;
using avx512_float::columns_inside;
using avx512_float::first_lanes;

constexpr size_t kLanes = 16;

// The lanes of outputs x0 .. x0 + 15 whose tap column (2x - 1, 2x, 2x + 1) is inside the row.
struct TapColumns {
  __mmask16 left;
  __mmask16 center;
  __mmask16 right;
};

// Lanes l with x0 + l < bound.
ORKNN_TARGET_AVX512 __mmask16 outputs_below(size_t bound, size_t x0) {
  return bound > x0 ? first_lanes(bound - x0) : static_cast<__mmask16>(0);
}

ORKNN_TARGET_AVX512 TapColumns tap_columns(size_t x0, size_t width) {
  // Column 2x + d is inside when 0 <= 2x + d < width: 0 < x <= width / 2 for d = -1,
  // x < (width + 1) / 2 for d = 0, x < width / 2 for d = 1.
  __mmask16 left = outputs_below(width / 2 + 1, x0);
  if (x0 == 0) left = static_cast<__mmask16>(left & ~1u);
  return TapColumns{left, outputs_below((width + 1) / 2, x0), outputs_below(width / 2, x0)};
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_max_pool_stride2_rows(const MaxPoolStride2Rows& rows) {
  const size_t width = rows.input_width;
  const size_t input_plane = rows.input_height * width;
  const size_t output_width = rows.output_width;
  for (size_t p = 0; p < rows.planes; ++p) {
    const float* plane = rows.input + p * input_plane;
    float* output = rows.output + p * rows.output_height * output_width;
    for (size_t y = 0; y < rows.output_height; ++y, output += output_width) {
      // Kernel rows inside the input: [first, end) of 3.
      const size_t top = y * rows.stride_height;  // padded row of kernel row 0
      size_t first = 0, end = 3;
      while (first < end && top + first < rows.pad_top) ++first;
      while (end > first && top + end - 1 >= rows.pad_top + rows.input_height) --end;
      __m512 previous_odd[3] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (size_t x = 0; x < output_width; x += kLanes) {
        const size_t column = 2 * x;
        const __mmask16 low = columns_inside(column, width);
        const __mmask16 high = columns_inside(column + kLanes, width);
        const TapColumns inside = tap_columns(x, width);
        __m512 best = _mm512_setzero_ps();
        for (size_t i = first; i < end; ++i) {
          const float* row = plane + (top + i - rows.pad_top) * width;
          const ColumnPairs pairs = column_pairs(row, column, low, high);
          const __m512 left = columns_before(pairs.odd, previous_odd[i]);
          previous_odd[i] = pairs.odd;
          if (i == first) {
            // The first tap inside: left, else centre, else right.
            best = _mm512_mask_mov_ps(pairs.odd, inside.center, pairs.even);
            best = _mm512_mask_mov_ps(best, inside.left, left);
          } else {
            best = _mm512_mask_max_ps(best, inside.left, left, best);
          }
          best = _mm512_mask_max_ps(best, inside.center, pairs.even, best);
          best = _mm512_mask_max_ps(best, inside.right, pairs.odd, best);
        }
        if (x + kLanes <= output_width) {
          _mm512_storeu_ps(output + x, best);
        } else {
          _mm512_mask_storeu_ps(output + x, first_lanes(output_width - x), best);
        }
      }
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
