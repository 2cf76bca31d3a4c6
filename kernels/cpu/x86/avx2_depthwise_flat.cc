// The avx2 table's float depthwise on flat planes (micro_kernels.h DepthwiseFlatPlanes): 8
// consecutive outputs of a plane per vector, whichever rows they are on, every tap one masked
// load (vmaskmovps, which does not fault on masked lanes) from the unpadded input. A tap's 8
// mask bits from the driver's tap_lanes table become a vector mask in three instructions; a
// vector whose taps are all on input rows expands one mask per kernel column (only the row's
// ends clear lanes there). The avx512 table's version (avx512_depthwise_flat.cc) says more.
//
// Each output is the same sequence of operations as depthwise_plane (avx2_depthwise_plane.cc):
// 3x3, one chain per kernel row added top, middle, bottom; otherwise even and odd taps of each
// kernel row in two chains; a masked tap contributes weight x 0 as a padded zero does there.
// Compiled with -mavx2 -mfma -ffp-contract=off; the rule of x86/avx2_micro_kernels.h applies.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"
#include "x86/avx2_micro_kernels.h"
#include "x86/depthwise_flat_geometry.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::VectorActivation;
using flat_depthwise::flat_geometry;
using flat_depthwise::FlatGeometry;

constexpr size_t kLanes = 8;

// Lane l set (all ones) where bit l of `bits` is.
__m256i lane_mask(uint16_t bits) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(bits), bit), bit);
}

// The 8 floats at `address` (an integer: a tap may point before the plane, where only masked
// lanes would read), masked lanes 0.
__m256 load_taps(uintptr_t address, __m256i lanes) {
  return _mm256_maskload_ps(reinterpret_cast<const float*>(address), lanes);
}

// Stores 8 outputs, or the first outputs - p of them.
void store_outputs(float* output, size_t p, size_t outputs, __m256 value) {
  if (p + kLanes <= outputs) {
    _mm256_storeu_ps(output + p, value);
    return;
  }
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i count = _mm256_set1_epi32(static_cast<int>(outputs - p));
  _mm256_maskstore_ps(output + p, _mm256_cmpgt_epi32(count, lanes), value);
}

struct Weights3x3 {
  __m256 w00, w01, w02, w10, w11, w12, w20, w21, w22, bias;
};
struct RowMasks {
  __m256i j0, j1, j2;
};

RowMasks row_masks(const uint16_t* m) {
  return RowMasks{lane_mask(m[0]), lane_mask(m[1]), lane_mask(m[2])};
}

__m256 outputs_3x3(const Weights3x3& w, uintptr_t at, const FlatGeometry& g, const RowMasks& m0,
                   const RowMasks& m1, const RowMasks& m2) {
  const uintptr_t row0 = at, row1 = at + g.row_step, row2 = row1 + g.row_step;
  const ptrdiff_t c1 = g.column_step, c2 = 2 * g.column_step;
  __m256 top = _mm256_fmadd_ps(w.w00, load_taps(row0, m0.j0), w.bias);
  __m256 middle = _mm256_mul_ps(w.w10, load_taps(row1, m1.j0));
  __m256 bottom = _mm256_mul_ps(w.w20, load_taps(row2, m2.j0));
  top = _mm256_fmadd_ps(w.w01, load_taps(row0 + c1, m0.j1), top);
  middle = _mm256_fmadd_ps(w.w11, load_taps(row1 + c1, m1.j1), middle);
  bottom = _mm256_fmadd_ps(w.w21, load_taps(row2 + c1, m2.j1), bottom);
  top = _mm256_fmadd_ps(w.w02, load_taps(row0 + c2, m0.j2), top);
  middle = _mm256_fmadd_ps(w.w12, load_taps(row1 + c2, m1.j2), middle);
  bottom = _mm256_fmadd_ps(w.w22, load_taps(row2 + c2, m2.j2), bottom);
  return _mm256_add_ps(_mm256_add_ps(top, middle), bottom);
}

void flat_3x3(const DepthwiseFlatPlanes& planes) {
  const FlatGeometry g = flat_geometry(planes);
  const bool has_activation = planes.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*planes.activation);
  for (size_t c = 0; c < planes.channels; ++c) {
    const float* weights = planes.weights + c * 9;
    const Weights3x3 w{
        _mm256_set1_ps(weights[0]), _mm256_set1_ps(weights[1]),
        _mm256_set1_ps(weights[2]), _mm256_set1_ps(weights[3]),
        _mm256_set1_ps(weights[4]), _mm256_set1_ps(weights[5]),
        _mm256_set1_ps(weights[6]), _mm256_set1_ps(weights[7]),
        _mm256_set1_ps(weights[8]), _mm256_set1_ps(planes.bias ? planes.bias[c] : 0.0f)};
    const uintptr_t input = reinterpret_cast<uintptr_t>(planes.input + c * g.input_plane) +
                            static_cast<uintptr_t>(g.first_row);
    float* output = planes.output + c * g.outputs;
    for (size_t p = 0; p < g.outputs; p += kLanes) {
      const uint16_t* m = planes.tap_lanes + p / kLanes * 9;
      __m256 result;
      if (p >= planes.inner_begin && p < planes.inner_end) {
        const RowMasks inner = row_masks(m);
        result = outputs_3x3(w, input + p * sizeof(float), g, inner, inner, inner);
      } else {
        result = outputs_3x3(w, input + p * sizeof(float), g, row_masks(m), row_masks(m + 3),
                             row_masks(m + 6));
      }
      if (has_activation) result = activate(activation, result);
      store_outputs(output, p, g.outputs, result);
    }
  }
}

void flat_general(const DepthwiseFlatPlanes& planes) {
  const FlatGeometry g = flat_geometry(planes);
  const size_t kernel_width = planes.kernel_width;
  const bool has_activation = planes.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*planes.activation);
  for (size_t c = 0; c < planes.channels; ++c) {
    const float* weights = planes.weights + c * g.taps;
    const __m256 bias = _mm256_set1_ps(planes.bias ? planes.bias[c] : 0.0f);
    const uintptr_t input = reinterpret_cast<uintptr_t>(planes.input + c * g.input_plane) +
                            static_cast<uintptr_t>(g.first_row);
    float* output = planes.output + c * g.outputs;
    for (size_t p = 0; p < g.outputs; p += kLanes) {
      const uint16_t* m = planes.tap_lanes + p / kLanes * g.taps;
      const bool inner = p >= planes.inner_begin && p < planes.inner_end;
      __m256 even = bias;
      __m256 odd = _mm256_setzero_ps();
      uintptr_t row = input + p * sizeof(float);
      for (size_t i = 0; i < planes.kernel_height; ++i, row += g.row_step) {
        const float* row_weights = weights + i * kernel_width;
        const uint16_t* masks = inner ? m : m + i * kernel_width;
        size_t j = 0;
        for (; j + 2 <= kernel_width; j += 2) {
          const uintptr_t first = row + j * g.column_step;
          even = _mm256_fmadd_ps(_mm256_broadcast_ss(row_weights + j),
                                 load_taps(first, lane_mask(masks[j])), even);
          odd = _mm256_fmadd_ps(_mm256_broadcast_ss(row_weights + j + 1),
                                load_taps(first + g.column_step, lane_mask(masks[j + 1])), odd);
        }
        if (j < kernel_width) {
          even = _mm256_fmadd_ps(_mm256_broadcast_ss(row_weights + j),
                                 load_taps(row + j * g.column_step, lane_mask(masks[j])), even);
        }
      }
      __m256 sum = _mm256_add_ps(even, odd);
      if (has_activation) sum = activate(activation, sum);
      store_outputs(output, p, g.outputs, sum);
    }
  }
}

}  // namespace

void depthwise_flat(const DepthwiseFlatPlanes& planes) {
  if (planes.kernel_height == 3 && planes.kernel_width == 3) return flat_3x3(planes);
  flat_general(planes);
}

}  // namespace orknn::kernels::cpu::optimized::avx2
