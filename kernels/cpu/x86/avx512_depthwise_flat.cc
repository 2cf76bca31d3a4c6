// The avx512 table's float depthwise on flat planes (micro_kernels.h DepthwiseFlatPlanes): 16
// consecutive outputs of a plane per vector, whichever rows they are on, every tap one
// zero-masked load from the unpadded input under its mask from the driver's tap_lanes table.
// AVX-512 suppresses faults on masked lanes, so a masked tap's address is never read.
//
// Masks computed in the loop (each lane's column against the row's ends, the rows against the
// input's) made it about 80 instructions per vector, 27 cycles. With the table, a vector whose
// taps are all on input rows loads one mask per kernel column, and a tap is a masked load and
// an FMA.
//
// Each output is the same sequence of operations as avx2's depthwise_plane (3x3: one chain per
// kernel row, added top, middle, bottom; otherwise even and odd taps of each kernel row in two
// chains), a masked tap contributing weight x 0 as a padded zero does there.
//
// Compiled for the baseline x86-64 with function target attributes (and -ffp-contract=off);
// the dispatcher installs it only after cpu_features reported AVX-512 F/BW/VL (dispatch.cc).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "optimized/micro_kernels.h"
#include "x86/avx512_float_helpers.h"
#include "x86/depthwise_flat_geometry.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::activate;
using avx512_float::first_lanes;
using flat_depthwise::flat_geometry;
using flat_depthwise::FlatGeometry;

constexpr size_t kLanes = 16;

// The 16 floats at `address` (an integer: a tap may point before the plane, where only masked
// lanes would read), masked lanes 0.
ORKNN_TARGET_AVX512 __m512 load_taps(uintptr_t address, __mmask16 lanes) {
  return _mm512_maskz_loadu_ps(lanes, reinterpret_cast<const float*>(address));
}

ORKNN_TARGET_AVX512 __mmask16 mask_at(const uint16_t* lanes) {
  return _load_mask16(reinterpret_cast<__mmask16*>(const_cast<uint16_t*>(lanes)));
}

ORKNN_TARGET_AVX512 void store_outputs(float* output, size_t p, size_t outputs, __m512 value) {
  if (p + kLanes <= outputs) {
    _mm512_storeu_ps(output + p, value);
  } else {
    _mm512_mask_storeu_ps(output + p, first_lanes(outputs - p), value);
  }
}

struct Weights3x3 {
  __m512 w00, w01, w02, w10, w11, w12, w20, w21, w22, bias;
};

// The 16 outputs whose tap (0, 0) is at `at`, taps of kernel row i masked by m_i (one mask per
// kernel column).
struct RowMasks {
  __mmask16 j0, j1, j2;
};
ORKNN_TARGET_AVX512 __m512 outputs_3x3(const Weights3x3& w, uintptr_t at, const FlatGeometry& g,
                                       RowMasks m0, RowMasks m1, RowMasks m2) {
  const uintptr_t row0 = at, row1 = at + g.row_step, row2 = row1 + g.row_step;
  const ptrdiff_t c1 = g.column_step, c2 = 2 * g.column_step;
  __m512 top = _mm512_fmadd_ps(w.w00, load_taps(row0, m0.j0), w.bias);
  __m512 middle = _mm512_mul_ps(w.w10, load_taps(row1, m1.j0));
  __m512 bottom = _mm512_mul_ps(w.w20, load_taps(row2, m2.j0));
  top = _mm512_fmadd_ps(w.w01, load_taps(row0 + c1, m0.j1), top);
  middle = _mm512_fmadd_ps(w.w11, load_taps(row1 + c1, m1.j1), middle);
  bottom = _mm512_fmadd_ps(w.w21, load_taps(row2 + c1, m2.j1), bottom);
  top = _mm512_fmadd_ps(w.w02, load_taps(row0 + c2, m0.j2), top);
  middle = _mm512_fmadd_ps(w.w12, load_taps(row1 + c2, m1.j2), middle);
  bottom = _mm512_fmadd_ps(w.w22, load_taps(row2 + c2, m2.j2), bottom);
  return _mm512_add_ps(_mm512_add_ps(top, middle), bottom);
}

ORKNN_TARGET_AVX512 RowMasks row_masks(const uint16_t* m) {
  return RowMasks{mask_at(m), mask_at(m + 1), mask_at(m + 2)};
}

// The 16 outputs from p of a vector with taps above or below the input: every tap's own mask.
ORKNN_TARGET_AVX512 void edge_3x3(const Weights3x3& w, uintptr_t input, size_t p,
                                  const FlatGeometry& g, const uint16_t* tap_lanes,
                                  const FloatActivation* activation, float* output) {
  const uint16_t* m = tap_lanes + p / kLanes * 9;
  __m512 result = outputs_3x3(w, input + p * sizeof(float), g, row_masks(m), row_masks(m + 3),
                              row_masks(m + 6));
  if (activation) result = activate(*activation, result);
  store_outputs(output, p, g.outputs, result);
}

// 3x3 at any dilation: nine weights in registers, one chain per kernel row.
ORKNN_TARGET_AVX512 void flat_3x3(const DepthwiseFlatPlanes& planes) {
  const FlatGeometry g = flat_geometry(planes);
  const FloatActivation* activation = planes.activation;
  for (size_t c = 0; c < planes.channels; ++c) {
    const float* weights = planes.weights + c * 9;
    Weights3x3 w;
    w.w00 = _mm512_set1_ps(weights[0]);
    w.w01 = _mm512_set1_ps(weights[1]);
    w.w02 = _mm512_set1_ps(weights[2]);
    w.w10 = _mm512_set1_ps(weights[3]);
    w.w11 = _mm512_set1_ps(weights[4]);
    w.w12 = _mm512_set1_ps(weights[5]);
    w.w20 = _mm512_set1_ps(weights[6]);
    w.w21 = _mm512_set1_ps(weights[7]);
    w.w22 = _mm512_set1_ps(weights[8]);
    w.bias = _mm512_set1_ps(planes.bias ? planes.bias[c] : 0.0f);
    const uintptr_t input = reinterpret_cast<uintptr_t>(planes.input + c * g.input_plane) +
                            static_cast<uintptr_t>(g.first_row);
    float* output = planes.output + c * g.outputs;
    size_t p = 0;
    for (; p < planes.inner_begin && p < g.outputs; p += kLanes) {
      edge_3x3(w, input, p, g, planes.tap_lanes, activation, output);
    }
    for (; p < planes.inner_end; p += kLanes) {
      const RowMasks m = row_masks(planes.tap_lanes + p / kLanes * 9);
      __m512 result = outputs_3x3(w, input + p * sizeof(float), g, m, m, m);
      if (activation) result = activate(*activation, result);
      _mm512_storeu_ps(output + p, result);
    }
    for (; p < g.outputs; p += kLanes) {
      edge_3x3(w, input, p, g, planes.tap_lanes, activation, output);
    }
  }
}

// Any kernel size and dilation: even and odd taps of each kernel row in two chains.
ORKNN_TARGET_AVX512 void flat_general(const DepthwiseFlatPlanes& planes) {
  const FlatGeometry g = flat_geometry(planes);
  const size_t kernel_width = planes.kernel_width;
  const FloatActivation* activation = planes.activation;
  for (size_t c = 0; c < planes.channels; ++c) {
    const float* weights = planes.weights + c * g.taps;
    const __m512 bias = _mm512_set1_ps(planes.bias ? planes.bias[c] : 0.0f);
    const uintptr_t input = reinterpret_cast<uintptr_t>(planes.input + c * g.input_plane) +
                            static_cast<uintptr_t>(g.first_row);
    float* output = planes.output + c * g.outputs;
    for (size_t p = 0; p < g.outputs; p += kLanes) {
      const uint16_t* m = planes.tap_lanes + p / kLanes * g.taps;
      // Inside, every kernel row takes kernel row 0's masks.
      const bool inner = p >= planes.inner_begin && p < planes.inner_end;
      __m512 even = bias;
      __m512 odd = _mm512_setzero_ps();
      uintptr_t row = input + p * sizeof(float);
      for (size_t i = 0; i < planes.kernel_height; ++i, row += g.row_step) {
        const float* row_weights = weights + i * kernel_width;
        const uint16_t* row_masks = inner ? m : m + i * kernel_width;
        size_t j = 0;
        for (; j + 2 <= kernel_width; j += 2) {
          const uintptr_t first = row + j * g.column_step;
          even = _mm512_fmadd_ps(_mm512_set1_ps(row_weights[j]),
                                 load_taps(first, mask_at(row_masks + j)), even);
          odd = _mm512_fmadd_ps(_mm512_set1_ps(row_weights[j + 1]),
                                load_taps(first + g.column_step, mask_at(row_masks + j + 1)), odd);
        }
        if (j < kernel_width) {
          even = _mm512_fmadd_ps(_mm512_set1_ps(row_weights[j]),
                                 load_taps(row + j * g.column_step, mask_at(row_masks + j)), even);
        }
      }
      __m512 sum = _mm512_add_ps(even, odd);
      if (activation) sum = activate(*activation, sum);
      store_outputs(output, p, g.outputs, sum);
    }
  }
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_depthwise_flat(const DepthwiseFlatPlanes& planes) {
  if (planes.kernel_height == 3 && planes.kernel_width == 3) return flat_3x3(planes);
  flat_general(planes);
}

size_t avx512_depthwise_flat_lanes() {
  return kLanes;
}

}  // namespace orknn::kernels::cpu::optimized
