// The avx512 table's int8 depthwise on one channel's rows of codes (micro_kernels.h
// DepthwiseDotRows) with AVX-512 VNNI and VBMI, for CPUs that have both (Ice Lake and later,
// Zen 4). Sixteen outputs of one output row per zmm: per kernel row and group of 4 taps, one
// 64-byte load of the padded row, one vpermb that gives output k the 4 bytes its taps read
// (byte 4k + b is input byte k x stride + b x dilation) and one vpdpbusd with the 4 weights
// broadcast. A 3x3 layer costs 3 of each per 16 outputs, against 9 FMAs per 8 outputs and the
// transposes in and out of the lanes kernels; the outputs land in the channel's rows directly.
//
// Requantization as avx512_depthwise_lanes.cc: int32 to double is exact, vcvtpd2dq rounds half
// to even in the default MXCSR mode (nearbyint), |product| < 2^30 (small multipliers) keeps the
// zero point and clamp exact in int32, and the saturating narrowing sees values already within
// int8. vpdpbusd wraps modulo 2^32, so any order of the sums gives the reference's accumulator
// while that fits int32.
//
// Every function carries its instruction set as a target attribute (the file stays at the
// baseline ISA); no header inlines (see avx512_vnni_tiles.cc). GCC 12's unmasked forms of some
// AVX-512 intrinsics start from an "undefined" vector and trip -Wmaybe-uninitialized: the
// maskz forms with every lane set are used instead.
#include <immintrin.h>

#include "optimized/micro_kernels.h"

#define ORKNN_TARGET_AVX512_DOT \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr __mmask64 kAllBytes = ~static_cast<__mmask64>(0);
constexpr __mmask16 kAllLanes = 0xFFFF;

struct Requantization {
  __m512d multiplier;
  __m512i zero_point;
  __m512i minimum;
  __m512i maximum;
};

// Sixteen accumulators of one output row into codes, the first `count` (at most 16) stored:
// two halves of eight doubles each (product and rounding), then zero point, clamp and the
// narrowing on all sixteen. The narrowing goes to a register and a masked byte store writes it:
// Zen 4 runs vpmovsdb with a memory operand as slow microcode.
ORKNN_TARGET_AVX512_DOT inline void store_pixels(__m512i accumulators, const Requantization& k,
                                                 int8_t* out, size_t count) {
  const __m256i low = _mm512_maskz_cvtpd_epi32(
      0xFF, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(
                              0xFF, _mm512_maskz_extracti64x4_epi64(0xFF, accumulators, 0)),
                          k.multiplier));
  const __m256i high = _mm512_maskz_cvtpd_epi32(
      0xFF, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(
                              0xFF, _mm512_maskz_extracti64x4_epi64(0xFF, accumulators, 1)),
                          k.multiplier));
  __m512i rounded = _mm512_maskz_inserti64x4(
      0xFF, _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), low, 0), high, 1);
  rounded = _mm512_add_epi32(rounded, k.zero_point);
  rounded = _mm512_maskz_min_epi32(kAllLanes, _mm512_maskz_max_epi32(kAllLanes, rounded, k.minimum),
                                   k.maximum);
  const __m128i codes = _mm512_maskz_cvtsepi32_epi8(kAllLanes, rounded);
  if (count >= kDepthwiseDotPixels) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), codes);
  } else {
    _mm_mask_storeu_epi8(out, static_cast<__mmask16>((1u << count) - 1), codes);
  }
}

// store_pixels for fewer than 16 outputs (the several-rows vectors of narrow planes) on two
// halves of eight lanes: two shorter chains of zero point, clamp and narrowing. A channel of a
// 7x7 plane is only four vectors, so latency shows: in mobilenet_v2 (medians of 6 alternating
// runs) the 576 @14 stride-2 layer took 29 us this way and 38 with store_pixels' single 16-lane
// chain, the 960 @7 ones 40 and 43-44; the wide layers, many vectors per call, run 3-7% faster
// with the single chain.
ORKNN_TARGET_AVX512_DOT inline __m128i eight_codes(__m256i accumulators, const Requantization& k) {
  __m256i rounded = _mm512_maskz_cvtpd_epi32(
      0xFF, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xFF, accumulators), k.multiplier));
  rounded = _mm256_add_epi32(rounded, _mm512_maskz_extracti64x4_epi64(0xFF, k.zero_point, 0));
  rounded = _mm256_min_epi32(
      _mm256_max_epi32(rounded, _mm512_maskz_extracti64x4_epi64(0xFF, k.minimum, 0)),
      _mm512_maskz_extracti64x4_epi64(0xFF, k.maximum, 0));
  return _mm256_maskz_cvtsepi32_epi8(0xFF, rounded);
}
ORKNN_TARGET_AVX512_DOT inline void store_pixels_halves(__m512i accumulators,
                                                        const Requantization& k, int8_t* out,
                                                        size_t count) {
  const __m128i codes =
      _mm_unpacklo_epi64(eight_codes(_mm512_maskz_extracti64x4_epi64(0xFF, accumulators, 0), k),
                         eight_codes(_mm512_maskz_extracti64x4_epi64(0xFF, accumulators, 1), k));
  _mm_mask_storeu_epi8(out, static_cast<__mmask16>((1u << count) - 1), codes);
}

// The 4 weights of tap group `group`, in every lane (no lambda: it would not inherit the target
// attribute).
ORKNN_TARGET_AVX512_DOT inline __m512i broadcast_weights(const int8_t* weights, size_t group) {
  int32_t four;
  __builtin_memcpy(&four, weights + 4 * group, sizeof(four));
  return _mm512_set1_epi32(four);
}

// The sums of one vector whose first input byte is `base`. kRows > 0: a kernel of kRows rows
// and one group of taps (3x3, 3x1, ...) with its weights in registers (`fixed`); 0: any kernel,
// weights broadcast as the loop reaches them.
template <size_t kRows>
ORKNN_TARGET_AVX512_DOT inline __m512i dot_vector(const DepthwiseDotRows& rows, const uint8_t* base,
                                                  __m512i index, const __m512i* fixed,
                                                  __m512i sum) {
  const size_t kernel_row_step = rows.dilation_height * rows.input_stride;
  if constexpr (kRows > 0) {
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) {
      const __m512i codes = _mm512_loadu_si512(base + i * kernel_row_step);
      sum = _mm512_dpbusd_epi32(sum, _mm512_maskz_permutexvar_epi8(kAllBytes, index, codes),
                                fixed[i]);
    }
  } else {
    const size_t group_step = 4 * rows.dilation_width;
    size_t group = 0;
    for (size_t i = 0; i < rows.kernel_height; ++i) {
      const uint8_t* tap = base + i * kernel_row_step;
      for (size_t g = 0; g < rows.tap_groups; ++g, ++group, tap += group_step) {
        const __m512i codes = _mm512_loadu_si512(tap);
        sum = _mm512_dpbusd_epi32(sum, _mm512_maskz_permutexvar_epi8(kAllBytes, index, codes),
                                  broadcast_weights(rows.weights, group));
      }
    }
  }
  return sum;
}

template <size_t kRows>
ORKNN_TARGET_AVX512_DOT void dot_rows(const DepthwiseDotRows& rows) {
  const __m512i index = _mm512_loadu_si512(rows.gather);
  const Requantization k{
      _mm512_set1_pd(static_cast<double>(rows.multiplier)),
      _mm512_set1_epi32(rows.output_zero_point),
      // min(max(v, low), high) with low > high gives high, as the
      // reference's clamp does.
      _mm512_set1_epi32(rows.output_minimum <= rows.output_maximum ? rows.output_minimum
                                                                   : rows.output_maximum),
      _mm512_set1_epi32(rows.output_maximum)};
  const __m512i offset = _mm512_set1_epi32(rows.offset);
  __m512i fixed[kRows > 0 ? kRows : 1];
  for (size_t i = 0; i < kRows; ++i) fixed[i] = broadcast_weights(rows.weights, i);

  const size_t width = rows.output_width;
  const size_t height = rows.output_height;
  const size_t row_step = rows.stride_height * rows.input_stride;
  if (rows.rows_per_vector > 1) {
    // Whole rows per vector: their outputs are consecutive.
    const size_t vector_rows = rows.rows_per_vector;
    for (size_t r = 0; r < height; r += vector_rows) {
      const __m512i sum = dot_vector<kRows>(rows, rows.input + r * row_step, index, fixed, offset);
      const size_t count = (height - r < vector_rows ? height - r : vector_rows) * width;
      store_pixels_halves(sum, k, rows.output + r * rows.output_stride, count);
    }
    return;
  }
  const size_t pixel_step = kDepthwiseDotPixels * rows.stride_width;
  for (size_t r = 0; r < height; ++r) {
    const uint8_t* base = rows.input + r * row_step;
    int8_t* out = rows.output + r * rows.output_stride;
    for (size_t o = 0; o < width; o += kDepthwiseDotPixels, base += pixel_step) {
      store_pixels(dot_vector<kRows>(rows, base, index, fixed, offset), k, out + o, width - o);
    }
  }
}

}  // namespace

ORKNN_TARGET_AVX512_DOT void avx512_depthwise_dot_rows(const DepthwiseDotRows& rows) {
  if (rows.tap_groups == 1 && rows.kernel_height == 3) return dot_rows<3>(rows);
  dot_rows<0>(rows);
}

// 64 bytes per masked load, xor and masked store: the rows are short (7 to 114 bytes in
// MobileNetV2), and a plain loop spent most of its time in its scalar tail.
ORKNN_TARGET_AVX512_DOT void avx512_flip_sign_rows(const FlipSignRows& rows) {
  const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80));
  const int8_t* source = rows.source;
  uint8_t* out = rows.out;
  for (size_t r = 0; r < rows.rows; ++r, source += rows.source_stride, out += rows.out_stride) {
    for (size_t c = 0; c < rows.count; c += 64) {
      const size_t left = rows.count - c;
      const __mmask64 mask = left >= 64 ? kAllBytes : (static_cast<__mmask64>(1) << left) - 1;
      const __m512i codes = _mm512_maskz_loadu_epi8(mask, source + c);
      _mm512_mask_storeu_epi8(out + c, mask, _mm512_xor_si512(codes, sign));
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
