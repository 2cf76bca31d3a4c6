// The avx2 table's float depthwise plane (DepthwisePlane): one channel's output plane, 8 outputs
// per vector, from the driver's phase-split input rows.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"
#include "x86/avx2_micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::VectorActivation;

// Stores 8 outputs, or the first `count` of them through a staging copy.
inline void store_outputs(float* output, __m256 value, size_t count) {
  if (count >= 8) {
    _mm256_storeu_ps(output, value);
    return;
  }
  alignas(32) float staging[8];
  _mm256_store_ps(staging, value);
  for (size_t t = 0; t < count; ++t) output[t] = staging[t];
}

// 3x3, dilation 1: nine weights in registers, one partial sum per kernel row (three short FMA
// chains instead of one of nine), two vectors of outputs per step.
void depthwise_plane_3x3(const DepthwisePlane& plane) {
  const bool has_activation = plane.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*plane.activation);
  const __m256 w00 = _mm256_broadcast_ss(plane.weights + 0);
  const __m256 w01 = _mm256_broadcast_ss(plane.weights + 1);
  const __m256 w02 = _mm256_broadcast_ss(plane.weights + 2);
  const __m256 w10 = _mm256_broadcast_ss(plane.weights + 3);
  const __m256 w11 = _mm256_broadcast_ss(plane.weights + 4);
  const __m256 w12 = _mm256_broadcast_ss(plane.weights + 5);
  const __m256 w20 = _mm256_broadcast_ss(plane.weights + 6);
  const __m256 w21 = _mm256_broadcast_ss(plane.weights + 7);
  const __m256 w22 = _mm256_broadcast_ss(plane.weights + 8);
  const __m256 bias = _mm256_set1_ps(plane.bias);
  const size_t s = plane.stride_width;
  // Tap column j reads phase j % s at offset j / s.
  const size_t phase1 = (1 % s) * plane.phase_stride, offset1 = 1 / s;
  const size_t phase2 = (2 % s) * plane.phase_stride, offset2 = 2 / s;
  const size_t width = plane.output_width;
  for (size_t oh = 0; oh < plane.output_height; ++oh) {
    const float* row0 = plane.input + oh * plane.stride_height * plane.input_stride;
    const float* row1 = row0 + plane.input_stride;
    const float* row2 = row1 + plane.input_stride;
    float* out = plane.output + oh * plane.output_stride;
#define ORKNN_DEPTHWISE_VECTOR(o, result)                                                  \
  __m256 result;                                                                           \
  {                                                                                        \
    __m256 top = _mm256_fmadd_ps(w00, _mm256_loadu_ps(row0 + (o)), bias);                  \
    __m256 middle = _mm256_mul_ps(w10, _mm256_loadu_ps(row1 + (o)));                       \
    __m256 bottom = _mm256_mul_ps(w20, _mm256_loadu_ps(row2 + (o)));                       \
    top = _mm256_fmadd_ps(w01, _mm256_loadu_ps(row0 + phase1 + offset1 + (o)), top);       \
    middle = _mm256_fmadd_ps(w11, _mm256_loadu_ps(row1 + phase1 + offset1 + (o)), middle); \
    bottom = _mm256_fmadd_ps(w21, _mm256_loadu_ps(row2 + phase1 + offset1 + (o)), bottom); \
    top = _mm256_fmadd_ps(w02, _mm256_loadu_ps(row0 + phase2 + offset2 + (o)), top);       \
    middle = _mm256_fmadd_ps(w12, _mm256_loadu_ps(row1 + phase2 + offset2 + (o)), middle); \
    bottom = _mm256_fmadd_ps(w22, _mm256_loadu_ps(row2 + phase2 + offset2 + (o)), bottom); \
    result = _mm256_add_ps(_mm256_add_ps(top, middle), bottom);                            \
    if (has_activation) result = activate(activation, result);                             \
  }
    size_t o = 0;
    for (; o + 16 <= width; o += 16) {
      ORKNN_DEPTHWISE_VECTOR(o, first)
      ORKNN_DEPTHWISE_VECTOR(o + 8, second)
      _mm256_storeu_ps(out + o, first);
      _mm256_storeu_ps(out + o + 8, second);
    }
    for (; o < width; o += 8) {
      ORKNN_DEPTHWISE_VECTOR(o, last)
      store_outputs(out + o, last, width - o);
    }
#undef ORKNN_DEPTHWISE_VECTOR
  }
}

// Any kernel size, stride and dilation (the phases make every tap a contiguous load).
void depthwise_plane_general(const DepthwisePlane& plane) {
  const bool has_activation = plane.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*plane.activation);
  const __m256 bias = _mm256_set1_ps(plane.bias);
  const size_t s = plane.stride_width;
  const size_t width = plane.output_width;
  for (size_t oh = 0; oh < plane.output_height; ++oh) {
    float* out = plane.output + oh * plane.output_stride;
    for (size_t o = 0; o < width; o += 8) {
      __m256 even = bias;
      __m256 odd = _mm256_setzero_ps();
      for (size_t i = 0; i < plane.kernel_height; ++i) {
        const float* row =
            plane.input +
            (oh * plane.stride_height + i * plane.dilation_height) * plane.input_stride + o;
        const float* weights = plane.weights + i * plane.kernel_width;
        size_t j = 0;
        for (; j + 2 <= plane.kernel_width; j += 2) {
          const size_t first = j * plane.dilation_width;
          const size_t second = first + plane.dilation_width;
          even = _mm256_fmadd_ps(
              _mm256_broadcast_ss(weights + j),
              _mm256_loadu_ps(row + (first % s) * plane.phase_stride + first / s), even);
          odd = _mm256_fmadd_ps(
              _mm256_broadcast_ss(weights + j + 1),
              _mm256_loadu_ps(row + (second % s) * plane.phase_stride + second / s), odd);
        }
        if (j < plane.kernel_width) {
          const size_t column = j * plane.dilation_width;
          even = _mm256_fmadd_ps(
              _mm256_broadcast_ss(weights + j),
              _mm256_loadu_ps(row + (column % s) * plane.phase_stride + column / s), even);
        }
      }
      __m256 sum = _mm256_add_ps(even, odd);
      if (has_activation) sum = activate(activation, sum);
      store_outputs(out + o, sum, width - o);
    }
  }
}

}  // namespace

void depthwise_plane(const DepthwisePlane& plane) {
  if (plane.kernel_height == 3 && plane.kernel_width == 3 && plane.dilation_height == 1 &&
      plane.dilation_width == 1) {
    return depthwise_plane_3x3(plane);
  }
  depthwise_plane_general(plane);
}

}  // namespace orknn::kernels::cpu::optimized::avx2
