// The avx512 table's float activations built on exp, Sigmoid and Swish / SiLU (micro_kernels.h
// UnaryRow), on 16 lanes of AVX-512 F: avx2's rows (x86/avx2_elementwise_rows.cc) on twice the
// lanes with the same bits: step for step, but for steps that give the same result in fewer
// instructions (two of the exp's, exp_of_nonpositive says why; -|x| as one OR; no product by an
// alpha of 1). The other operations go to avx2's row.
//
// Why: YOLOv5s float32 runs a SiLU pass over the output of nearly every convolution (a fused
// SiLU is a second pass inside the node, devices/cpu/ops/convolution.cc). On 8 lanes that pass
// took about 0.55 ns per element on a Sapphire Rapids class core, a third of the 1x1 64->64
// @160 layer's time; the row is bound by its instruction count (about 25 per vector and a
// division): here 0.30-0.33 ns (bench_kernels --filter activation), SiLU 0.31 since session 19
// dropped two of them (0.34 before). Its division is not the bound: a reciprocal estimate and a
// Newton step in its place (other bits) ran at 0.38 ns.
//
// Compiled without floating-point contraction (kernels/cpu/CMakeLists.txt), as avx2's file is:
// the exp's explicit FMAs are the only fused steps. Every function carries its instruction set
// as a target attribute (the file is compiled for the baseline x86-64; the table calls it only
// on a CPU with AVX-512 F/BW/VL). GCC 12's unmasked min/max start from an undefined vector and
// trip -Wmaybe-uninitialized, so this file uses their maskz forms with every lane set (and those
// of the rounding and the scaling).
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_micro_kernels.h"
#include "x86/avx512_float_helpers.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::first_lanes;
using avx512_float::kAllLanes;

// UnaryRow::operation codes (elementwise_unary.cc unary_code).
constexpr int kSigmoid = 3;
constexpr int kSwish = 5;

// avx2's exp_lanes for x <= 0 or NaN (the sigmoid's argument -|x|): the clamp at -87.3365 with
// x first (a NaN lane takes the bound, as vmaxps gives its second operand; avx2's clamp at
// 88.3762 never applies), n = round(x log2 e) to nearest even, r = x - n ln2 in two FMAs, the
// degree-6 polynomial, then p x 2^n with one vscalefps where avx2 builds 2^n in the exponent
// bits and multiplies: n >= -126, so 2^n is a normal float and both round the exact p x 2^n
// once (subnormal results included, in the default MXCSR mode).
ORKNN_TARGET_AVX512 __m512 exp_of_nonpositive(__m512 x) {
  x = _mm512_maskz_max_ps(kAllLanes, x, _mm512_set1_ps(-87.3365f));
  const __m512 n =
      _mm512_maskz_roundscale_ps(kAllLanes, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_scalef_ps(kAllLanes, p, n);
}

// avx2's sigmoid_lanes: 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = e^-|x|.
// -|x| is x with the sign bit set: one OR where avx2 takes |x| and subtracts it from zero, with
// the same result but at x = 0 (-0 here, +0 there), where the exp gives 1 either way.
ORKNN_TARGET_AVX512 __m512 sigmoid_lanes(__m512 x) {
  const __m512 negative_absolute = _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int32_t>(0x80000000u))));
  const __m512 e = exp_of_nonpositive(negative_absolute);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_div_ps(_mm512_mask_blend_ps(negative, one, e), _mm512_add_ps(one, e));
}

template <int kOperation>
ORKNN_TARGET_AVX512 __m512 activation_lanes(const UnaryRow& row, __m512 x) {
  if constexpr (kOperation == kSigmoid) {
    return sigmoid_lanes(x);
  } else {
    // SiLU (alpha 1) skips the product alpha x, which is x.
    const __m512 scaled = row.alpha == 1.0f ? x : _mm512_mul_ps(_mm512_set1_ps(row.alpha), x);
    return _mm512_mul_ps(x, sigmoid_lanes(scaled));
  }
}

// Two vectors per step (independent chains for the out-of-order core); the tail takes a masked
// load and store (its lanes past the row compute on zeros and are not stored).
template <int kOperation>
ORKNN_TARGET_AVX512 void sigmoid_row(const UnaryRow& row) {
  const float* const in = row.in;
  float* const out = row.out;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m512 first = activation_lanes<kOperation>(row, _mm512_loadu_ps(in + i));
    const __m512 second = activation_lanes<kOperation>(row, _mm512_loadu_ps(in + i + 16));
    _mm512_storeu_ps(out + i, first);
    _mm512_storeu_ps(out + i + 16, second);
  }
  for (; i < count; i += 16) {
    const __mmask16 lanes = first_lanes(count - i);
    _mm512_mask_storeu_ps(out + i, lanes,
                          activation_lanes<kOperation>(row, _mm512_maskz_loadu_ps(lanes, in + i)));
  }
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_unary_row(const UnaryRow& row) {
  if (row.operation == kSigmoid) return sigmoid_row<kSigmoid>(row);
  if (row.operation == kSwish) return sigmoid_row<kSwish>(row);
  avx2::unary_row(row);
}

}  // namespace orknn::kernels::cpu::optimized
