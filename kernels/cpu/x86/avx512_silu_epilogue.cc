// The int8 SiLU epilogue (docs/quantization.md 4.3) and the reproducible exp it uses (4.5) on
// sixteen AVX-512 lanes, for the "avx512" variant: its micro-kernel table is avx2's with these
// two rows replaced. Bit for bit the scalar functions' results; where an operation differs from
// the scalar steps, the comment says why the result is the same:
//   * n = round_half_to_even(x * log2 e) with vrndscaleps instead of (t + 1.5 x 2^23) - 1.5 x
//     2^23: both round |t| < 2^22 to the nearest integer, ties to even (they may differ only in
//     the sign of a zero n: then x - n x C1 - n x C2 is x for x != 0, and +0 for x = +-0, with
//     either sign of n);
//   * y x 2^n with one vscalefps instead of (y x 2^floor(n/2)) x 2^(n - floor(n/2)): the first
//     scalar product is exact and the second rounds once, so both are y x 2^n rounded once to
//     nearest even, subnormal and infinite results included (the default MXCSR, no FTZ/DAZ).
// The epilogue's exp argument is -|real| <= 0, so it skips the clamp at 89 (no effect there) and
// the exp's NaN result (a NaN real ends as the zero point whatever e is).
//
// Compiled without floating-point contraction (kernels/cpu/CMakeLists.txt): each multiply and
// add rounds on its own, as the scalar code does. Every function carries its instruction set as
// a target attribute; no standard-library templates or inline functions here (see
// avx512_vnni_tiles.cc). GCC 12's unmasked AVX-512 intrinsics start from an "undefined" vector
// and trip -Wmaybe-uninitialized, so this file uses their maskz forms with every lane set.
#include <immintrin.h>

#include <cstdint>

#include "core/reproducible_exp.h"
#include "optimized/micro_kernels.h"
#include "x86/avx512_float_helpers.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::first_lanes;
using avx512_float::kAllLanes;

// reproducible_exp on 16 lanes after its NaN test: the clamp to [-104, 89] (kClampHigh false:
// the caller knows x <= 89 or NaN; max returns its second operand for a NaN lane, which keeps n
// finite), then the scalar steps in order.
template <bool kClampHigh>
ORKNN_TARGET_AVX512 __m512 exp_lanes_after_nan_test(__m512 x) {
  namespace c = reproducible_exp_constants;
  x = _mm512_maskz_max_ps(kAllLanes, x, _mm512_set1_ps(c::kLowest));
  if constexpr (kClampHigh) x = _mm512_maskz_min_ps(kAllLanes, x, _mm512_set1_ps(c::kHighest));
  const __m512 n =
      _mm512_maskz_roundscale_ps(kAllLanes, _mm512_mul_ps(x, _mm512_set1_ps(c::kLog2E)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(c::kLn2High)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(c::kLn2Low)));
  __m512 p = _mm512_set1_ps(c::kPolynomial5);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c::kPolynomial4));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c::kPolynomial3));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c::kPolynomial2));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c::kPolynomial1));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c::kPolynomial0));
  __m512 y = _mm512_mul_ps(p, _mm512_mul_ps(r, r));
  y = _mm512_add_ps(y, r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(kAllLanes, y, n);
}

ORKNN_TARGET_AVX512 void reproducible_exp_row(const float* in, float* out, size_t count) {
  for (size_t i = 0; i < count; i += 16) {
    const __mmask16 lanes = first_lanes(count - i);
    const __m512 x = _mm512_maskz_loadu_ps(lanes, in + i);
    const __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    const __m512 y = _mm512_mask_add_ps(exp_lanes_after_nan_test<true>(x), is_nan, x, x);
    _mm512_mask_storeu_ps(out + i, lanes, y);
  }
}

// float(double(acc) x double(D)) on eight lanes: int32 to double is exact, one double product,
// one rounding to float.
ORKNN_TARGET_AVX512 __m256 product_to_float(__m256i accumulators, __m512d scale) {
  return _mm512_maskz_cvtpd_ps(0xFF,
                               _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xFF, accumulators), scale));
}

// float(double(acc) x double(D)) on 16 lanes. When every |acc| <= 2^24, acc and D are exact
// floats whose product is exact in double (24 + 24 bits), so one float multiplication rounds it
// the same way; otherwise the double products, eight lanes at a time.
ORKNN_TARGET_AVX512 __m512 dequantize_lanes(__m512i accumulators, __m512 float_scale,
                                            __m512d scale) {
  // |INT32_MIN| stays INT32_MIN, 2^31 as the unsigned compare reads it.
  const __m512i magnitude = _mm512_maskz_abs_epi32(kAllLanes, accumulators);
  if (_mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(1 << 24)) == 0) {
    return _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAllLanes, accumulators), float_scale);
  }
  const __m256 low =
      product_to_float(_mm512_maskz_extracti64x4_epi64(0xFF, accumulators, 0), scale);
  const __m256 high =
      product_to_float(_mm512_maskz_extracti64x4_epi64(0xFF, accumulators, 1), scale);
  const __m512d halves =
      _mm512_maskz_insertf64x4(0xFF, _mm512_setzero_pd(), _mm256_castps_pd(low), 0);
  return _mm512_castpd_ps(_mm512_maskz_insertf64x4(0xFF, halves, _mm256_castps_pd(high), 1));
}

// reference::requantize_silu on the accumulators of `lanes`: the sigmoid on
// e = e^-|real| (1 / (1 + e) for real >= 0, e / (1 + e) below), real x sigmoid, then the one
// quantization rule (vcvtps2dq rounds half to even in the default MXCSR mode; the zero point is
// clamped to +-2^21, so the int32 sum cannot overflow, and vpmovsdb saturates as the clamp).
ORKNN_TARGET_AVX512 void requantize_silu16(const int32_t* accumulators, __mmask16 lanes,
                                           __m512i offset, __m512 float_scale, __m512d scale,
                                           __m512 output_scale, __m512i zero_point,
                                           int8_t* output) {
  const __m512i sums = _mm512_add_epi32(_mm512_maskz_loadu_epi32(lanes, accumulators), offset);
  const __m512 real = dequantize_lanes(sums, float_scale, scale);
  const __m512 negative_magnitude =
      _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(real), _mm512_set1_epi32(INT32_MIN)));
  const __m512 e = exp_lanes_after_nan_test<false>(negative_magnitude);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __mmask16 below_zero = _mm512_cmp_ps_mask(real, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 numerator = _mm512_mask_mov_ps(one, below_zero, e);
  const __m512 activated = _mm512_mul_ps(real, _mm512_div_ps(numerator, _mm512_add_ps(one, e)));
  const __m512 scaled = _mm512_div_ps(activated, output_scale);
  const __mmask16 is_nan = _mm512_cmp_ps_mask(scaled, scaled, _CMP_UNORD_Q);
  const __m512 bounded =
      _mm512_maskz_min_ps(kAllLanes, _mm512_maskz_max_ps(kAllLanes, scaled, _mm512_set1_ps(-1e6f)),
                          _mm512_set1_ps(1e6f));
  __m512i code = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAllLanes, bounded), zero_point);
  code = _mm512_mask_mov_epi32(code, is_nan, zero_point);
  _mm512_mask_cvtsepi32_storeu_epi8(output, lanes, code);
}

// The row with `offset` added to every accumulator (vpaddd wraps modulo 2^32, as the drivers'
// constant pass does).
ORKNN_TARGET_AVX512 void requantize_silu_offset_row(const RequantizeSiluRow& row, int32_t offset) {
  constexpr int32_t kZeroPointBound = 1 << 21;
  int32_t zero_point = row.output_zero_point;
  zero_point = zero_point < -kZeroPointBound ? -kZeroPointBound : zero_point;
  zero_point = zero_point > kZeroPointBound ? kZeroPointBound : zero_point;
  const __m512i offsets = _mm512_set1_epi32(offset);
  const __m512 float_scale = _mm512_set1_ps(row.scale);
  const __m512d scale = _mm512_set1_pd(static_cast<double>(row.scale));
  const __m512 output_scale = _mm512_set1_ps(row.output_scale);
  const __m512i zero_points = _mm512_set1_epi32(zero_point);
  // The row's fields in locals: the int8 stores could alias `row`, which would make the
  // compiler reload them every step.
  const int32_t* accumulators = row.accumulators;
  int8_t* output = row.output;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    requantize_silu16(accumulators + i, kAllLanes, offsets, float_scale, scale, output_scale,
                      zero_points, output + i);
  }
  if (i < count) {
    requantize_silu16(accumulators + i, first_lanes(count - i), offsets, float_scale, scale,
                      output_scale, zero_points, output + i);
  }
}

ORKNN_TARGET_AVX512 void requantize_silu_row(const RequantizeSiluRow& row) {
  requantize_silu_offset_row(row, 0);
}

MicroKernels make_avx512_micro_kernels() {
  MicroKernels kernels = avx2_micro_kernels();
  kernels.name = "avx512";
  kernels.requantize_silu_row = requantize_silu_row;
  kernels.requantize_silu_offset_row = requantize_silu_offset_row;
  kernels.reproducible_exp_row = reproducible_exp_row;
  // The float GEMM tile: 12 x 32 on zmm registers (avx512_float_tiles.cc).
  kernels.float_rows = avx512_float_tile_rows();
  kernels.float_columns = avx512_float_tile_columns();
  kernels.float_tile = avx512_float_tile;
  kernels.float_column_tiles = nullptr;  // avx2's, for its 6-row panels
  kernels.float_tile_adds_residual = true;
  // VBMI is not part of the avx512 variant's requirement (F/BW/VL/VNNI: Cascade Lake has those
  // but no VBMI), so the table lookup keeps avx2's vpshufb row where it is missing.
  if (cpu_has_avx512_vbmi()) kernels.lookup_int8_row = avx512_vbmi_lookup_int8_row;
  kernels.requantize_lanes = avx512_requantize_lanes;
  kernels.quantized_binary_row = avx512_quantized_binary_row;
  kernels.unary_row = avx512_unary_row;
  kernels.depthwise_flat = avx512_depthwise_flat;
  kernels.depthwise_flat_lanes = avx512_depthwise_flat_lanes();
  kernels.depthwise_flat_widest = SIZE_MAX;  // faster than the plane kernel at every width
  kernels.depthwise_stride2_rows = avx512_depthwise_stride2_rows;
  kernels.depthwise_stride2_narrowest = 0;  // faster than the lanes at every width
  kernels.max_pool_stride2_rows = avx512_max_pool_stride2_rows;
  // The int8 depthwise dot-product rows need VBMI's byte permute (vpermb) besides VNNI.
  if (cpu_has_avx512_vbmi()) {
    kernels.depthwise_dot_rows = avx512_depthwise_dot_rows;
    kernels.flip_sign_rows = avx512_flip_sign_rows;
  }
  return kernels;
}

}  // namespace

const MicroKernels& avx512_micro_kernels() {
  static const MicroKernels kernels = make_avx512_micro_kernels();
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
