// The avx2 table's reproducible exp row and int8 SiLU epilogue (RequantizeSiluRow), bit for bit
// the scalar reproducible_exp and reference::requantize_silu.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "core/reproducible_exp.h"
#include "optimized/micro_kernels.h"
#include "x86/avx2_micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

// orknn::reproducible_exp (core/reproducible_exp.cc) on eight lanes, operation for operation in
// its order, each one IEEE float operation (this file is built without contraction), so the
// bits are the scalar function's. max/min return their second operand for a NaN lane, which
// keeps n finite; such lanes take x + x at the end, as the scalar code does.
// Inlined into their callers: called, the exp spilled its caller's vectors around every call
// (all ymm registers are caller-saved) and kept two SiLU groups from overlapping.
#define ORKNN_INLINE_LANES inline __attribute__((always_inline))

ORKNN_INLINE_LANES __m256 pow2_lanes(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

// G vectors at a time, each statement applied to every vector before the next: the exp is one
// long chain of dependent operations, and interleaved chains keep the core's schedulers fed
// with independent work (one at a time, the SiLU epilogue waited on each chain's latency).
#define ORKNN_EACH(g) _Pragma("GCC unroll 8") for (size_t g = 0; g < G; ++g)

// The exp's middle steps on x (clamped or known in range): n = round(x log2 e) and the
// polynomial y ~ e^(x - n ln 2), both in the scalar order; e^x is y x 2^n.
template <size_t G>
ORKNN_INLINE_LANES void reduced_exp_group(const __m256 (&x)[G], __m256 (&n)[G], __m256 (&y)[G]) {
  namespace c = reproducible_exp_constants;
  __m256 r[G];
  ORKNN_EACH(g) n[g] = _mm256_mul_ps(x[g], _mm256_set1_ps(c::kLog2E));
  ORKNN_EACH(g) n[g] = _mm256_add_ps(n[g], _mm256_set1_ps(c::kRoundingShift));
  ORKNN_EACH(g) n[g] = _mm256_sub_ps(n[g], _mm256_set1_ps(c::kRoundingShift));
  ORKNN_EACH(g) r[g] = _mm256_sub_ps(x[g], _mm256_mul_ps(n[g], _mm256_set1_ps(c::kLn2High)));
  ORKNN_EACH(g) r[g] = _mm256_sub_ps(r[g], _mm256_mul_ps(n[g], _mm256_set1_ps(c::kLn2Low)));
  ORKNN_EACH(g) y[g] = _mm256_set1_ps(c::kPolynomial5);
  const float coefficients[] = {c::kPolynomial4, c::kPolynomial3, c::kPolynomial2, c::kPolynomial1,
                                c::kPolynomial0};
  _Pragma("GCC unroll 5") for (const float coefficient : coefficients) {
    ORKNN_EACH(g) y[g] = _mm256_add_ps(_mm256_mul_ps(y[g], r[g]), _mm256_set1_ps(coefficient));
  }
  ORKNN_EACH(g) y[g] = _mm256_mul_ps(y[g], _mm256_mul_ps(r[g], r[g]));
  ORKNN_EACH(g) y[g] = _mm256_add_ps(y[g], r[g]);
  ORKNN_EACH(g) y[g] = _mm256_add_ps(y[g], _mm256_set1_ps(1.0f));
}

template <size_t G>
ORKNN_INLINE_LANES void reproducible_exp_group(__m256 (&v)[G]) {
  namespace c = reproducible_exp_constants;
  __m256 is_nan[G], x[G], n[G], p[G];
  ORKNN_EACH(g) is_nan[g] = _mm256_cmp_ps(v[g], v[g], _CMP_UNORD_Q);
  ORKNN_EACH(g) x[g] = _mm256_max_ps(v[g], _mm256_set1_ps(c::kLowest));
  ORKNN_EACH(g) x[g] = _mm256_min_ps(x[g], _mm256_set1_ps(c::kHighest));
  reduced_exp_group(x, n, p);
  ORKNN_EACH(g) {
    const __m256i k = _mm256_cvttps_epi32(n[g]);  // n is an integer already
    const __m256i first = _mm256_srai_epi32(k, 1);
    p[g] = _mm256_mul_ps(p[g], pow2_lanes(first));
    p[g] = _mm256_mul_ps(p[g], pow2_lanes(_mm256_sub_epi32(k, first)));
  }
  ORKNN_EACH(g) v[g] = _mm256_blendv_ps(p[g], _mm256_add_ps(v[g], v[g]), is_nan[g]);
}

// reproducible_exp for arguments known to lie in [-87, 0] (the finite SiLU rows below): the
// scalar steps without the clamps and the NaN test, and 2^n in one multiplication. n =
// round(x log2 e) is then at least -126, so 2^n is a normal float and y x 2^n rounds once, as
// the scalar code's (y x 2^floor(n/2)) x 2^(n - floor(n/2)) does (its first product is exact).
template <size_t G>
ORKNN_INLINE_LANES void bounded_exp_group(__m256 (&v)[G]) {
  __m256 n[G], p[G];
  reduced_exp_group(v, n, p);
  ORKNN_EACH(g) v[g] = _mm256_mul_ps(p[g], pow2_lanes(_mm256_cvttps_epi32(n[g])));
}

ORKNN_INLINE_LANES __m256 reproducible_exp_lanes(__m256 input) {
  __m256 v[1] = {input};
  reproducible_exp_group(v);
  return v[0];
}

struct SiluConstants {
  __m256d scale;
  __m256 float_scale;
  __m256 output_scale;
  __m256i zero_point;  // clamped to +-2^21, which cannot change a saturated result
  __m256i offset;      // added to every accumulator modulo 2^32 (vpaddd wraps)
};

// 8 x G outputs of reference::requantize_silu: real = float(double(acc) x double(D)), the
// sigmoid on e = e^-|real| (1 / (1 + e) for real >= 0, e / (1 + e) below), real x sigmoid, then
// the one quantization rule (vcvtps2dq rounds half to even in the default MXCSR mode).
//
// kFinite: a row of silu_row_is_finite (micro_kernels.h, which says why this form gives the
// same codes): no NaN tests, and reals below -87 raised to -87 for bounded_exp_group.
template <size_t G, bool kFinite>
ORKNN_INLINE_LANES void requantize_silu_group(const int32_t* accumulators, const SiluConstants& k,
                                              int8_t* output) {
  __m256i values[G];
  __m256i outside = _mm256_setzero_si256();
  ORKNN_EACH(g) {
    values[g] = _mm256_add_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators + 8 * g)), k.offset);
    // With every |acc| <= 2^24, acc and D are exact floats and their double product is exact
    // (24 + 24 bits), so rounding it to float is the one rounding of a float multiplication.
    const __m256i shifted = _mm256_add_epi32(values[g], _mm256_set1_epi32(1 << 24));
    outside = _mm256_or_si256(outside, _mm256_cmpgt_epi32(_mm256_setzero_si256(), shifted));
    outside = _mm256_or_si256(outside, _mm256_cmpgt_epi32(shifted, _mm256_set1_epi32(1 << 25)));
  }
  __m256 real[G];
  if (_mm256_testz_si256(outside, outside)) {
    ORKNN_EACH(g) real[g] = _mm256_mul_ps(_mm256_cvtepi32_ps(values[g]), k.float_scale);
  } else {
    ORKNN_EACH(g) {
      const __m128 low = _mm256_cvtpd_ps(
          _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values[g])), k.scale));
      const __m128 high = _mm256_cvtpd_ps(
          _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values[g], 1)), k.scale));
      real[g] = _mm256_insertf128_ps(_mm256_castps128_ps256(low), high, 1);
    }
  }
  __m256 e[G];
  if constexpr (kFinite) {
    ORKNN_EACH(g) real[g] = _mm256_max_ps(real[g], _mm256_set1_ps(-87.0f));
    ORKNN_EACH(g) e[g] = _mm256_or_ps(real[g], _mm256_set1_ps(-0.0f));
    ORKNN_EACH(g) e[g] = _mm256_max_ps(e[g], _mm256_set1_ps(-87.0f));
    bounded_exp_group(e);
  } else {
    ORKNN_EACH(g) e[g] = _mm256_or_ps(real[g], _mm256_set1_ps(-0.0f));
    reproducible_exp_group(e);
  }
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 scaled[G];
  ORKNN_EACH(g) {
    const __m256 numerator =
        _mm256_blendv_ps(one, e[g], _mm256_cmp_ps(real[g], _mm256_setzero_ps(), _CMP_LT_OQ));
    scaled[g] = _mm256_div_ps(numerator, _mm256_add_ps(one, e[g]));
  }
  ORKNN_EACH(g) scaled[g] = _mm256_div_ps(_mm256_mul_ps(real[g], scaled[g]), k.output_scale);
  ORKNN_EACH(g) {
    const __m256 bounded =
        _mm256_min_ps(_mm256_max_ps(scaled[g], _mm256_set1_ps(-1e6f)), _mm256_set1_ps(1e6f));
    __m256i code = _mm256_add_epi32(_mm256_cvtps_epi32(bounded), k.zero_point);
    if constexpr (!kFinite) {
      const __m256 is_nan = _mm256_cmp_ps(scaled[g], scaled[g], _CMP_UNORD_Q);
      code = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(k.zero_point), is_nan));
    }
    const __m128i words =
        _mm_packs_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(output + 8 * g), _mm_packs_epi16(words, words));
  }
}

template <bool kFinite>
void requantize_silu_rows(const RequantizeSiluRow& row, int32_t offset) {
  constexpr int32_t kZeroPointBound = 1 << 21;
  int32_t zero_point = row.output_zero_point;
  zero_point = zero_point < -kZeroPointBound ? -kZeroPointBound : zero_point;
  zero_point = zero_point > kZeroPointBound ? kZeroPointBound : zero_point;
  const SiluConstants k{_mm256_set1_pd(static_cast<double>(row.scale)), _mm256_set1_ps(row.scale),
                        _mm256_set1_ps(row.output_scale), _mm256_set1_epi32(zero_point),
                        _mm256_set1_epi32(offset)};
  // 64 outputs per step, then 32, then 8: one thread, 6400 outputs (bench_kernels --filter
  // micro, three interleaved runs), 2.07-2.68 ns per output one vector at a time, 1.6-1.8 with
  // two, 1.27-1.55 with four, 1.09-1.14 with eight, 1.66 with sixteen (spilled).
  constexpr size_t kGroups = 8;
  size_t i = 0;
  for (; i + 8 * kGroups <= row.count; i += 8 * kGroups) {
    requantize_silu_group<kGroups, kFinite>(row.accumulators + i, k, row.output + i);
  }
  for (; i + 32 <= row.count; i += 32) {
    requantize_silu_group<4, kFinite>(row.accumulators + i, k, row.output + i);
  }
  for (; i + 8 <= row.count; i += 8) {
    requantize_silu_group<1, kFinite>(row.accumulators + i, k, row.output + i);
  }
  const size_t rest = row.count - i;
  if (rest == 0) return;
  int32_t accumulators[8] = {};
  int8_t output[8];
  for (size_t j = 0; j < rest; ++j) accumulators[j] = row.accumulators[i + j];
  requantize_silu_group<1, kFinite>(accumulators, k, output);
  for (size_t j = 0; j < rest; ++j) row.output[i + j] = output[j];
}

}  // namespace

void reproducible_exp_row(const float* in, float* out, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, reproducible_exp_lanes(_mm256_loadu_ps(in + i)));
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  float staging[8] = {};
  for (size_t j = 0; j < rest; ++j) staging[j] = in[i + j];
  _mm256_storeu_ps(staging, reproducible_exp_lanes(_mm256_loadu_ps(staging)));
  for (size_t j = 0; j < rest; ++j) out[i + j] = staging[j];
}

// The row with `offset` added to every accumulator: the dot-product drivers' per-channel
// constant, without a pass of its own over the sums.
void requantize_silu_offset_row(const RequantizeSiluRow& row, int32_t offset) {
  if (silu_row_is_finite(row)) {
    requantize_silu_rows<true>(row, offset);
  } else {
    requantize_silu_rows<false>(row, offset);
  }
}

void requantize_silu_row(const RequantizeSiluRow& row) {
  requantize_silu_offset_row(row, 0);
}

}  // namespace orknn::kernels::cpu::optimized::avx2
