// The avx2 table's depthwise rows: the int8 input widened to float offsets and the float sums
// narrowed back to int32 accumulators (WidenInt8Row, float_sums_to_accumulators), and the float
// depthwise with 8 channels in lanes (DepthwiseLanes).
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

// Eight values from in[0], in[step], ... (step 1 or 2) as float offsets from the zero point.
inline __m256 widen8(const int8_t* in, size_t step, __m256i zero_point) {
  __m128i raw;
  if (step == 1) {
    raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in));
  } else {
    const __m128i evens = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    raw = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)), evens);
  }
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(raw), zero_point));
}

// kPixels output pixels of a depthwise_lanes band, each at its own input position `base##p`
// (pixels run on across output rows, so a narrow plane still fills the 8-pixel blocks): one
// accumulator per pixel (named, as in the tiles), each tap's weight vector loaded once. k3x3:
// a 3x3 kernel with dilation 1, its taps unrolled.
#define ORKNN_FOR_EACH_PIXEL(MACRO) \
  MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5) MACRO(6) MACRO(7)

template <size_t kPixels, bool k3x3>
void depthwise_lane_pixels(const DepthwiseLanes& lanes, const float* const* bases, float* out,
                           const VectorActivation* activation) {
  const __m256 bias = _mm256_loadu_ps(lanes.bias);
#define ORKNN_INIT(p)                    \
  [[maybe_unused]] __m256 sum##p = bias; \
  [[maybe_unused]] const float* base##p = kPixels > p ? bases[p] : nullptr;
  ORKNN_FOR_EACH_PIXEL(ORKNN_INIT)
#undef ORKNN_INIT
#define ORKNN_TAP(p)         \
  if constexpr (kPixels > p) \
    sum##p = _mm256_fmadd_ps(weight, _mm256_loadu_ps(base##p + offset), sum##p);
  if constexpr (k3x3) {
    const size_t stride = lanes.input_stride;
#pragma GCC unroll 3
    for (size_t i = 0; i < 3; ++i) {
#pragma GCC unroll 3
      for (size_t j = 0; j < 3; ++j) {
        const __m256 weight = _mm256_loadu_ps(lanes.weights + (i * 3 + j) * kDepthwiseLanes);
        const size_t offset = i * stride + j * kDepthwiseLanes;
        ORKNN_FOR_EACH_PIXEL(ORKNN_TAP)
      }
    }
  } else {
    const float* weights = lanes.weights;
    for (size_t i = 0; i < lanes.kernel_height; ++i) {
      for (size_t j = 0; j < lanes.kernel_width; ++j, weights += kDepthwiseLanes) {
        const __m256 weight = _mm256_loadu_ps(weights);
        const size_t offset = i * lanes.dilation_height * lanes.input_stride +
                              j * lanes.dilation_width * kDepthwiseLanes;
        ORKNN_FOR_EACH_PIXEL(ORKNN_TAP)
      }
    }
  }
#undef ORKNN_TAP
#define ORKNN_STORE(p)                                      \
  if constexpr (kPixels > p) {                              \
    if (activation) sum##p = activate(*activation, sum##p); \
    _mm256_storeu_ps(out + p * kDepthwiseLanes, sum##p);    \
  }
  ORKNN_FOR_EACH_PIXEL(ORKNN_STORE)
#undef ORKNN_STORE
}
#undef ORKNN_FOR_EACH_PIXEL

template <bool k3x3>
void depthwise_lanes_of(const DepthwiseLanes& lanes) {
  VectorActivation activation{};
  if (lanes.activation) activation = broadcast_activation(*lanes.activation);
  const VectorActivation* active = lanes.activation ? &activation : nullptr;
  const size_t width = lanes.output_width;
  const size_t pixels = lanes.output_height * width;
  const size_t row_step = lanes.stride_height * lanes.input_stride;
  const size_t pixel_step = lanes.stride_width * kDepthwiseLanes;
  // The next pixel's input position, walking the band row by row.
  size_t row = 0, column = 0;
  auto next_base = [&]() {
    const float* base = lanes.input + row * row_step + column * pixel_step;
    if (++column == width) {
      column = 0;
      ++row;
    }
    return base;
  };
  const float* bases[8];
  float* out = lanes.output;
  size_t done = 0;
  // Eight chains of FMAs keep both FMA pipes busy through their latency.
  for (; done + 8 <= pixels; done += 8, out += 8 * kDepthwiseLanes) {
    for (size_t p = 0; p < 8; ++p) bases[p] = next_base();
    depthwise_lane_pixels<8, k3x3>(lanes, bases, out, active);
  }
  const size_t rest = pixels - done;
  for (size_t p = 0; p < rest; ++p) bases[p] = next_base();
  size_t p = 0;
  if (rest - p >= 4) {
    depthwise_lane_pixels<4, k3x3>(lanes, bases + p, out + p * kDepthwiseLanes, active);
    p += 4;
  }
  if (rest - p >= 2) {
    depthwise_lane_pixels<2, k3x3>(lanes, bases + p, out + p * kDepthwiseLanes, active);
    p += 2;
  }
  if (rest - p >= 1) {
    depthwise_lane_pixels<1, k3x3>(lanes, bases + p, out + p * kDepthwiseLanes, active);
  }
}

}  // namespace

void widen_int8_row(const WidenInt8Row& row) {
  const int8_t* const in = row.in;
  float* const out = row.out;
  const size_t step = row.in_step;
  const size_t count = row.count;
  const __m256i zero_point = _mm256_set1_epi32(row.zero_point);
  // A vector at i reads in[step * i] up to in[step * i + 7] (step 1) or in[2i + 15] (step 2),
  // inside the row while i + 8 <= count (step 1) or i + 9 <= count (step 2). The last vector
  // is placed at the end and may overlap the previous one (it rewrites the same values).
  const size_t span = step == 1 ? 8 : 9;
  size_t done = 0;
  if ((step == 1 || step == 2) && count >= span) {
    for (size_t i = 0; i + span <= count; i += 8) {
      _mm256_storeu_ps(out + i, widen8(in + step * i, step, zero_point));
    }
    const size_t last = count - span;
    _mm256_storeu_ps(out + last, widen8(in + step * last, step, zero_point));
    done = last + 8;
  }
  for (size_t i = done; i < count; ++i) {
    out[i] = static_cast<float>(in[i * step] - row.zero_point);
  }
}

void float_sums_to_accumulators(const float* sums, int32_t bias, int32_t* out, size_t count) {
  const __m256i broadcast_bias = _mm256_set1_epi32(bias);
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i values = _mm256_cvttps_epi32(_mm256_loadu_ps(sums + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_add_epi32(values, broadcast_bias));
  }
  for (; i < count; ++i) out[i] = static_cast<int32_t>(sums[i]) + bias;
}

void depthwise_lanes(const DepthwiseLanes& lanes) {
  if (lanes.kernel_height == 3 && lanes.kernel_width == 3 && lanes.dilation_height == 1 &&
      lanes.dilation_width == 1) {
    return depthwise_lanes_of<true>(lanes);
  }
  depthwise_lanes_of<false>(lanes);
}

}  // namespace orknn::kernels::cpu::optimized::avx2
