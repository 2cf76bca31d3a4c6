// The avx512 table's float 3x3 depthwise at stride 2 across (micro_kernels.h
// DepthwiseStride2Rows): 16 outputs of a row per vector, read in place. For each kernel row,
// two loads of 16 floats from input column 2 x0 are split into their even columns (tap column
// 1) and odd ones (tap column 2); tap column 0 is the odd ones one lane later, the previous
// block's last odd column first (none left of the row). So a kernel row costs two loads and
// three shuffles, where one load pair and shuffle per tap made the shuffle port the limit.
// Loads are masked at the row's right end; kernel rows above or below the input read nothing.
//
// The channels-in-lanes kernel this replaces copied every input once into lanes (and once more
// into column phases for the stride) and every output back: MobileNetV2's 3x3/2 layers ran at
// 10-15 GFLOPS.
//
// Each output is the same sequence of operations as avx2's 3x3 depthwise_plane (one chain per
// kernel row, added top, middle, bottom), a tap outside the input contributing weight x 0 as a
// padded zero does there.
//
// Compiled for the baseline x86-64 with function target attributes (and -ffp-contract=off);
// the dispatcher installs it only after cpu_features reported AVX-512 F/BW/VL (dispatch.cc).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "optimized/micro_kernels.h"
#include "x86/avx512_float_helpers.h"
#include "x86/avx512_stride2_columns.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::activate;
using avx512_float::column_pairs;
using avx512_float::ColumnPairs;
using avx512_float::columns_before;
using avx512_float::columns_inside;
using avx512_float::first_lanes;

constexpr size_t kLanes = 16;

// One kernel row's three tap columns for a block of 16 outputs.
struct RowTaps {
  __m512 left;    // input columns 2x - 1
  __m512 center;  // 2x
  __m512 right;   // 2x + 1
};

// `row` is the kernel row's input row (null: outside the input), `first` the block's first
// input column, `low` and `high` the lanes of its two 16-column halves inside the row;
// `previous_right` carries the previous block's right taps (zero before the first block).
ORKNN_TARGET_AVX512 RowTaps row_taps(const float* row, size_t first, __mmask16 low, __mmask16 high,
                                     __m512& previous_right) {
  if (row == nullptr) {
    const __m512 zero = _mm512_setzero_ps();
    return RowTaps{zero, zero, zero};
  }
  const ColumnPairs columns = column_pairs(row, first, low, high);
  const RowTaps taps{columns_before(columns.odd, previous_right), columns.even, columns.odd};
  previous_right = taps.right;
  return taps;
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_depthwise_stride2_rows(const DepthwiseStride2Rows& rows) {
  const size_t width = rows.input_width;
  const size_t input_plane = rows.input_height * width;
  const size_t output_width = rows.output_width;
  const FloatActivation* activation = rows.activation;
  for (size_t c = 0; c < rows.channels; ++c) {
    const float* w = rows.weights + c * 9;
    const __m512 w00 = _mm512_set1_ps(w[0]), w01 = _mm512_set1_ps(w[1]), w02 = _mm512_set1_ps(w[2]),
                 w10 = _mm512_set1_ps(w[3]), w11 = _mm512_set1_ps(w[4]), w12 = _mm512_set1_ps(w[5]),
                 w20 = _mm512_set1_ps(w[6]), w21 = _mm512_set1_ps(w[7]), w22 = _mm512_set1_ps(w[8]);
    const __m512 bias = _mm512_set1_ps(rows.bias ? rows.bias[c] : 0.0f);
    const float* plane = rows.input + c * input_plane;
    float* output = rows.output + c * rows.output_height * output_width;
    for (size_t y = 0; y < rows.output_height; ++y, output += output_width) {
      const float* kernel_rows[3];
      for (size_t i = 0; i < 3; ++i) {
        // Input row y x stride + i - pad_top, null above or below the input.
        const size_t row = y * rows.stride_height + i;
        kernel_rows[i] = row >= rows.pad_top && row - rows.pad_top < rows.input_height
                             ? plane + (row - rows.pad_top) * width
                             : nullptr;
      }
      __m512 right0 = _mm512_setzero_ps(), right1 = _mm512_setzero_ps(),
             right2 = _mm512_setzero_ps();
      for (size_t x = 0; x < output_width; x += kLanes) {
        const size_t first = 2 * x;
        const __mmask16 low = columns_inside(first, width);
        const __mmask16 high = columns_inside(first + kLanes, width);
        const RowTaps t = row_taps(kernel_rows[0], first, low, high, right0);
        const RowTaps m = row_taps(kernel_rows[1], first, low, high, right1);
        const RowTaps b = row_taps(kernel_rows[2], first, low, high, right2);
        __m512 top = _mm512_fmadd_ps(w00, t.left, bias);
        __m512 middle = _mm512_mul_ps(w10, m.left);
        __m512 bottom = _mm512_mul_ps(w20, b.left);
        top = _mm512_fmadd_ps(w01, t.center, top);
        middle = _mm512_fmadd_ps(w11, m.center, middle);
        bottom = _mm512_fmadd_ps(w21, b.center, bottom);
        top = _mm512_fmadd_ps(w02, t.right, top);
        middle = _mm512_fmadd_ps(w12, m.right, middle);
        bottom = _mm512_fmadd_ps(w22, b.right, bottom);
        __m512 result = _mm512_add_ps(_mm512_add_ps(top, middle), bottom);
        if (activation) result = activate(*activation, result);
        if (x + kLanes <= output_width) {
          _mm512_storeu_ps(output + x, result);
        } else {
          _mm512_mask_storeu_ps(output + x, first_lanes(output_width - x), result);
        }
      }
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
