// The int8 element-wise binary row (micro_kernels.h QuantizedBinaryRow) on 16 lanes of AVX-512
// F/BW/VL: avx2's row (x86/avx2_elementwise_rows.cc) step for step on twice the lanes, so the
// same bits as the float domain. Each code is decoded as float(code - zero_point) x scale, the
// operation rounds once, the result is divided by the output scale, clamped to +-1e9 and
// converted with vcvtps2dq (round half to even in the default MXCSR mode), the zero point
// added and the int32 saturated to int8 by vpmovsdb, which gives the two saturating packs'
// bytes. The tail takes masked loads and a masked store instead of avx2's padded copies.
// The element-wise rows are bound by their instruction count (about 20 per 8 outputs on avx2),
// so twice the lanes per instruction is what this buys (docs/cpu-kernels.md, session 7).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "optimized/binary_operation.h"
#include "optimized/micro_kernels.h"

#define ORKNN_TARGET_AVX512_BW __attribute__((target("avx512f,avx512bw,avx512vl")))

// GCC 12's unmasked forms of some AVX-512 conversions and min/max start from an undefined
// vector and trip -Wmaybe-uninitialized; their maskz forms with every lane set do not.

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr __mmask16 kAllLanes = 0xFFFF;

struct Constants {
  __m512i a_zero_point, b_zero_point, out_zero_point;
  __m512 a_scale, b_scale, a_broadcast, b_broadcast, out_scale, lowest, highest;
};

template <int kOperation>
ORKNN_TARGET_AVX512_BW inline __m512 binary16(__m512 a, __m512 b) {
  if constexpr (kOperation == 0) return _mm512_add_ps(a, b);
  if constexpr (kOperation == 1) return _mm512_sub_ps(a, b);
  if constexpr (kOperation == 2) return _mm512_mul_ps(a, b);
  return _mm512_div_ps(a, b);
}

// The codes of `lanes` decoded (lanes outside it read as code 0 and are never stored).
ORKNN_TARGET_AVX512_BW inline __m512 decode16(const int8_t* codes, __mmask16 lanes,
                                              __m512i zero_point, __m512 scale) {
  const __m128i raw = _mm_maskz_loadu_epi8(lanes, codes);
  const __m512i offsets = _mm512_sub_epi32(_mm512_maskz_cvtepi8_epi32(kAllLanes, raw), zero_point);
  return _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAllLanes, offsets), scale);
}

// vmaxps returns its second operand when either is NaN, as avx2's does; the NaN lanes (only a
// division makes them) then take the zero point.
template <bool kNonFinite>
ORKNN_TARGET_AVX512_BW inline void encode16(__m512 value, const Constants& k, __mmask16 lanes,
                                            int8_t* out) {
  const __m512 scaled = _mm512_div_ps(value, k.out_scale);
  const __m512 bounded =
      _mm512_maskz_min_ps(kAllLanes, _mm512_maskz_max_ps(kAllLanes, scaled, k.lowest), k.highest);
  __m512i code = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAllLanes, bounded), k.out_zero_point);
  if constexpr (kNonFinite) {
    const __mmask16 is_nan = _mm512_cmp_ps_mask(scaled, scaled, _CMP_UNORD_Q);
    code = _mm512_mask_mov_epi32(code, is_nan, k.out_zero_point);
  }
  _mm512_mask_cvtsepi32_storeu_epi8(out, lanes, code);
}

template <int kOperation, bool kAFull, bool kBFull>
ORKNN_TARGET_AVX512_BW void quantized_binary_loop(const QuantizedBinaryRow& row,
                                                  const Constants& k) {
  for (size_t i = 0; i < row.count; i += 16) {
    const size_t left = row.count - i;
    const __mmask16 lanes = left >= 16 ? kAllLanes : static_cast<__mmask16>((1u << left) - 1);
    const __m512 a =
        kAFull ? decode16(row.a.codes + i, lanes, k.a_zero_point, k.a_scale) : k.a_broadcast;
    const __m512 b =
        kBFull ? decode16(row.b.codes + i, lanes, k.b_zero_point, k.b_scale) : k.b_broadcast;
    // Decoded codes are finite and so are their sums, differences and products: only a
    // division can give an infinity or a NaN to encode.
    encode16<kOperation == 3>(binary16<kOperation>(a, b), k, lanes, row.out + i);
  }
}

float decode_one(const QuantizedOperand& operand) {
  return static_cast<float>(static_cast<int32_t>(operand.codes[0]) - operand.zero_point) *
         operand.scale;
}

template <int kOperation>
ORKNN_TARGET_AVX512_BW void quantized_binary_row_of(const QuantizedBinaryRow& row) {
  Constants k;
  k.a_zero_point = _mm512_set1_epi32(row.a.zero_point);
  k.b_zero_point = _mm512_set1_epi32(row.b.zero_point);
  k.out_zero_point = _mm512_set1_epi32(row.out_zero_point);
  k.a_scale = _mm512_set1_ps(row.a.scale);
  k.b_scale = _mm512_set1_ps(row.b.scale);
  k.a_broadcast = _mm512_set1_ps(decode_one(row.a));
  k.b_broadcast = _mm512_set1_ps(decode_one(row.b));
  k.out_scale = _mm512_set1_ps(row.out_scale);
  k.lowest = _mm512_set1_ps(-1e9f);
  k.highest = _mm512_set1_ps(1e9f);
  with_operand_steps(row.a.step != 0, row.b.step != 0, [&](auto a_full, auto b_full) {
    quantized_binary_loop<kOperation, decltype(a_full)::value, decltype(b_full)::value>(row, k);
  });
}

}  // namespace

void avx512_quantized_binary_row(const QuantizedBinaryRow& row) {
  with_binary_operation(row.operation, [&](auto operation) {
    quantized_binary_row_of<decltype(operation)::value>(row);
  });
}

}  // namespace orknn::kernels::cpu::optimized
