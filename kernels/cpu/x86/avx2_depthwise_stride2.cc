// The avx2 table's float 3x3 depthwise at stride 2 across (micro_kernels.h
// DepthwiseStride2Rows): 8 outputs of a row per vector, read in place, as the avx512 table's
// (avx512_depthwise_stride2.cc, which says more). Per kernel row, two loads of 8 floats from
// input column 2 x0 become the even columns (tap column 1) and the odd ones (tap column 2) in a
// shuffle and a lane permute each; tap column 0 is the odd ones rotated by one lane, the
// previous block's last odd column blended into lane 0. Loads are masked (vmaskmovps) only at
// the row's right end; kernel rows above or below the input read nothing.
//
// Each output is the same sequence of operations as depthwise_plane's 3x3 (one chain per kernel
// row, added top, middle, bottom). Compiled with -mavx2 -mfma -ffp-contract=off; the rule of
// x86/avx2_micro_kernels.h applies.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"
#include "x86/avx2_micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::VectorActivation;

constexpr size_t kLanes = 8;

// Lanes whose column, from `first` on, is inside a row of `width`.
__m256i columns_inside(size_t first, size_t width) {
  const int inside =
      first < width ? static_cast<int>(width - first < kLanes ? width - first : kLanes) : 0;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(inside), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__m256 load_columns(const float* address, size_t first, size_t width) {
  if (first + kLanes <= width) return _mm256_loadu_ps(address);
  return _mm256_maskload_ps(address, columns_inside(first, width));
}

// One kernel row's three tap columns for a block of 8 outputs; `previous` carries the previous
// block's odd columns rotated by one lane (zero before the first block).
struct RowTaps {
  __m256 left, center, right;
};
RowTaps row_taps(const float* row, size_t first, size_t width, __m256& previous) {
  if (row == nullptr) {
    const __m256 zero = _mm256_setzero_ps();
    return RowTaps{zero, zero, zero};
  }
  const __m256 a = load_columns(row + first, first, width);
  const __m256 b = load_columns(row + first + kLanes, first + kLanes, width);
  // shuffle_ps keeps 128-bit halves apart: [a0 a2 b0 b2 | a4 a6 b4 b6], then 64-bit pairs
  // reordered to [a0 a2 a4 a6 b0 b2 b4 b6].
  const __m256 even = _mm256_castpd_ps(
      _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  const __m256 odd = _mm256_castpd_ps(
      _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
  // Lane l of left is odd[l - 1]; lane 0 the previous block's odd[7].
  const __m256 rotated = _mm256_permutevar8x32_ps(odd, _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6));
  const RowTaps taps{_mm256_blend_ps(rotated, previous, 0x01), even, odd};
  previous = rotated;
  return taps;
}

void store_outputs(float* output, size_t x, size_t width, __m256 value) {
  if (x + kLanes <= width) {
    _mm256_storeu_ps(output + x, value);
  } else {
    _mm256_maskstore_ps(output + x, columns_inside(x, width), value);
  }
}

}  // namespace

void depthwise_stride2_rows(const DepthwiseStride2Rows& rows) {
  const size_t width = rows.input_width;
  const size_t input_plane = rows.input_height * width;
  const size_t output_width = rows.output_width;
  const bool has_activation = rows.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*rows.activation);
  for (size_t c = 0; c < rows.channels; ++c) {
    const float* w = rows.weights + c * 9;
    const __m256 w00 = _mm256_broadcast_ss(w + 0), w01 = _mm256_broadcast_ss(w + 1),
                 w02 = _mm256_broadcast_ss(w + 2), w10 = _mm256_broadcast_ss(w + 3),
                 w11 = _mm256_broadcast_ss(w + 4), w12 = _mm256_broadcast_ss(w + 5),
                 w20 = _mm256_broadcast_ss(w + 6), w21 = _mm256_broadcast_ss(w + 7),
                 w22 = _mm256_broadcast_ss(w + 8);
    const __m256 bias = _mm256_set1_ps(rows.bias ? rows.bias[c] : 0.0f);
    const float* plane = rows.input + c * input_plane;
    float* output = rows.output + c * rows.output_height * output_width;
    for (size_t y = 0; y < rows.output_height; ++y, output += output_width) {
      const float* kernel_rows[3];
      for (size_t i = 0; i < 3; ++i) {
        const size_t row = y * rows.stride_height + i;
        kernel_rows[i] = row >= rows.pad_top && row - rows.pad_top < rows.input_height
                             ? plane + (row - rows.pad_top) * width
                             : nullptr;
      }
      __m256 previous0 = _mm256_setzero_ps(), previous1 = _mm256_setzero_ps(),
             previous2 = _mm256_setzero_ps();
      for (size_t x = 0; x < output_width; x += kLanes) {
        const size_t first = 2 * x;
        const RowTaps t = row_taps(kernel_rows[0], first, width, previous0);
        const RowTaps m = row_taps(kernel_rows[1], first, width, previous1);
        const RowTaps b = row_taps(kernel_rows[2], first, width, previous2);
        __m256 top = _mm256_fmadd_ps(w00, t.left, bias);
        __m256 middle = _mm256_mul_ps(w10, m.left);
        __m256 bottom = _mm256_mul_ps(w20, b.left);
        top = _mm256_fmadd_ps(w01, t.center, top);
        middle = _mm256_fmadd_ps(w11, m.center, middle);
        bottom = _mm256_fmadd_ps(w21, b.center, bottom);
        top = _mm256_fmadd_ps(w02, t.right, top);
        middle = _mm256_fmadd_ps(w12, m.right, middle);
        bottom = _mm256_fmadd_ps(w22, b.right, bottom);
        __m256 result = _mm256_add_ps(_mm256_add_ps(top, middle), bottom);
        if (has_activation) result = activate(activation, result);
        store_outputs(output, x, output_width, result);
      }
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized::avx2
