// The avx2 table's element-wise rows: float and int8 binary operations, the int8 Add on codes,
// the int8 table lookup, the max / add rows of pooling and the float activations.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "optimized/binary_operation.h"
#include "optimized/micro_kernels.h"
#include "x86/avx2_micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

template <int Operation>
__m256 binary_vector(__m256 a, __m256 b) {
  if constexpr (Operation == 0) return _mm256_add_ps(a, b);
  if constexpr (Operation == 1) return _mm256_sub_ps(a, b);
  if constexpr (Operation == 2) return _mm256_mul_ps(a, b);
  return _mm256_div_ps(a, b);
}

// A step-0 operand is broadcast once; the tail (fewer than 8 elements) runs scalar, which
// rounds exactly as the vector lanes do.
template <int Operation>
void binary_row_of(const BinaryRow& row) {
  const float* a = row.a;
  const float* b = row.b;
  float* out = row.out;
  const size_t a_step = row.a_step;
  const size_t b_step = row.b_step;
  const __m256 a_broadcast = _mm256_set1_ps(a[0]);
  const __m256 b_broadcast = _mm256_set1_ps(b[0]);
  size_t i = 0;
  if (a_step == 1 && b_step == 1) {
    for (; i + 16 <= row.count; i += 16) {
      _mm256_storeu_ps(out + i,
                       binary_vector<Operation>(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
      _mm256_storeu_ps(out + i + 8, binary_vector<Operation>(_mm256_loadu_ps(a + i + 8),
                                                             _mm256_loadu_ps(b + i + 8)));
    }
    for (; i + 8 <= row.count; i += 8) {
      _mm256_storeu_ps(out + i,
                       binary_vector<Operation>(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    }
  } else if (a_step == 1) {
    for (; i + 8 <= row.count; i += 8) {
      _mm256_storeu_ps(out + i, binary_vector<Operation>(_mm256_loadu_ps(a + i), b_broadcast));
    }
  } else if (b_step == 1) {
    for (; i + 8 <= row.count; i += 8) {
      _mm256_storeu_ps(out + i, binary_vector<Operation>(a_broadcast, _mm256_loadu_ps(b + i)));
    }
  } else {
    const __m256 value = binary_vector<Operation>(a_broadcast, b_broadcast);
    for (; i + 8 <= row.count; i += 8) _mm256_storeu_ps(out + i, value);
  }
  for (; i < row.count; ++i)
    out[i] = apply_binary_operation<Operation>(a[i * a_step], b[i * b_step]);
}

// The per-row constants of the quantized binary row, held in registers: the row's fields would
// otherwise be reloaded after every int8 store (a char store may alias them).
struct QuantizedConstants {
  __m256i a_zero_point, b_zero_point, out_zero_point;
  __m256 a_scale, b_scale, a_broadcast, b_broadcast, out_scale;
  __m256 lowest, highest;
};

// Eight codes decoded: float(code - zero_point) x scale.
inline __m256 decode8(const int8_t* codes, __m256i zero_point, __m256 scale) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
  const __m256i offsets = _mm256_sub_epi32(_mm256_cvtepi8_epi32(raw), zero_point);
  return _mm256_mul_ps(_mm256_cvtepi32_ps(offsets), scale);
}

// Encodes eight results as graph/tensor_conversion.cc does: vcvtps2dq rounds half to even in
// the default MXCSR mode, as nearbyint; the packs saturate to int8 after the int32 clamp. A NaN
// (only a division can give one) encodes as the zero point.
template <bool NonFinite>
inline void encode8(__m256 value, const QuantizedConstants& k, int8_t* out) {
  const __m256 scaled = _mm256_div_ps(value, k.out_scale);
  const __m256 bounded = _mm256_min_ps(_mm256_max_ps(scaled, k.lowest), k.highest);
  __m256i code = _mm256_add_epi32(_mm256_cvtps_epi32(bounded), k.out_zero_point);
  if constexpr (NonFinite) {
    const __m256 is_nan = _mm256_cmp_ps(scaled, scaled, _CMP_UNORD_Q);
    code = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(k.out_zero_point), is_nan));
  }
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packs_epi16(words, words));
}

float decode_one(const QuantizedOperand& operand) {
  return static_cast<float>(static_cast<int32_t>(operand.codes[0]) - operand.zero_point) *
         operand.scale;
}

// Eight outputs from a (full or its broadcast value) and b at `index`.
template <int Operation, bool AFull, bool BFull>
inline void quantized_binary8(const int8_t* a, const int8_t* b, const QuantizedConstants& k,
                              int8_t* out) {
  const __m256 a_values = AFull ? decode8(a, k.a_zero_point, k.a_scale) : k.a_broadcast;
  const __m256 b_values = BFull ? decode8(b, k.b_zero_point, k.b_scale) : k.b_broadcast;
  // Decoded codes are finite, and so are their sums, differences and products (|value| <=
  // 255 x 255 x scale^2): only a division can give an infinity or a NaN to encode.
  encode8<Operation == 3>(binary_vector<Operation>(a_values, b_values), k, out);
}

// The last count % 8 elements go through the same vector code on copies padded to eight, so
// the tail rounds exactly as the rest (and no libm inline is needed here).
template <int Operation, bool AFull, bool BFull>
void quantized_binary_loop(const QuantizedBinaryRow& row, const QuantizedConstants& k) {
  const int8_t* a = row.a.codes;
  const int8_t* b = row.b.codes;
  int8_t* out = row.out;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    quantized_binary8<Operation, AFull, BFull>(a + (AFull ? i : 0), b + (BFull ? i : 0), k,
                                               out + i);
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  int8_t a_codes[8] = {};
  int8_t b_codes[8] = {};
  int8_t tail[8];
  for (size_t j = 0; j < rest; ++j) {
    a_codes[j] = a[AFull ? i + j : 0];
    b_codes[j] = b[BFull ? i + j : 0];
  }
  quantized_binary8<Operation, AFull, BFull>(a_codes, b_codes, k, tail);
  for (size_t j = 0; j < rest; ++j) out[i + j] = tail[j];
}

template <int Operation>
void quantized_binary_row_of(const QuantizedBinaryRow& row) {
  QuantizedConstants k;
  k.a_zero_point = _mm256_set1_epi32(row.a.zero_point);
  k.b_zero_point = _mm256_set1_epi32(row.b.zero_point);
  k.out_zero_point = _mm256_set1_epi32(row.out_zero_point);
  k.a_scale = _mm256_set1_ps(row.a.scale);
  k.b_scale = _mm256_set1_ps(row.b.scale);
  k.a_broadcast = _mm256_set1_ps(decode_one(row.a));
  k.b_broadcast = _mm256_set1_ps(decode_one(row.b));
  k.out_scale = _mm256_set1_ps(row.out_scale);
  k.lowest = _mm256_set1_ps(-1e9f);
  k.highest = _mm256_set1_ps(1e9f);
  with_operand_steps(row.a.step != 0, row.b.step != 0, [&](auto a_full, auto b_full) {
    quantized_binary_loop<Operation, decltype(a_full)::value, decltype(b_full)::value>(row, k);
  });
}

// The int8 table lookup (micro_kernels.h lookup_int8_row) on 32 codes at a time: vpshufb
// looks up 16-entry pieces of the table by each code's low four bits, and a tree of byte blends
// on the index's bits 4-7 (each shifted into its byte's top bit, which vpblendvb reads) picks
// the piece: 16 shuffles and 15 blends per 32 codes where the scalar loop takes a load each.
inline __m256i lookup32(const __m256i* pieces, __m256i codes) {
  const __m256i index = _mm256_xor_si256(codes, _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i low = _mm256_and_si256(index, _mm256_set1_epi8(0x0F));
  // Word shifts move each byte's bit 4, 5, 6 into its bit 7 (bits crossing into the next byte
  // land below its bit 7, which the blends ignore).
  const __m256i bit4 = _mm256_slli_epi16(index, 3);
  const __m256i bit5 = _mm256_slli_epi16(index, 2);
  const __m256i bit6 = _mm256_slli_epi16(index, 1);
  __m256i level[8];
  for (int j = 0; j < 8; ++j) {
    level[j] = _mm256_blendv_epi8(_mm256_shuffle_epi8(pieces[2 * j], low),
                                  _mm256_shuffle_epi8(pieces[2 * j + 1], low), bit4);
  }
  for (int j = 0; j < 4; ++j) level[j] = _mm256_blendv_epi8(level[2 * j], level[2 * j + 1], bit5);
  for (int j = 0; j < 2; ++j) level[j] = _mm256_blendv_epi8(level[2 * j], level[2 * j + 1], bit6);
  return _mm256_blendv_epi8(level[0], level[1], index);
}

// int8 Add/Sub on the codes (micro_kernels.h QuantizedAddRow): per 8 outputs two widenings,
// two conversions, two multiplies and a sum, where the float domain's row above also divides.
// vcvtps2dq rounds half to even (default MXCSR), as nearbyint; the row's precondition keeps
// every result inside int32 without a clamp.
struct QuantizedAddConstants {
  __m256i a_zero_point, b_zero_point, out_zero_point, out_minimum, out_maximum, byte_order;
  __m256 a_ratio, b_ratio, a_broadcast, b_broadcast;
};

inline __m256 code_offsets8(const int8_t* codes, __m256i zero_point) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(raw), zero_point));
}

// Eight rounded sums of a's and b's offsets times their ratios (or a broadcast product), the
// output zero point not yet added.
template <bool AFull, bool BFull>
inline __m256i quantized_sums8(const int8_t* a, const int8_t* b, const QuantizedAddConstants& k) {
  const __m256 a_products =
      AFull ? _mm256_mul_ps(code_offsets8(a, k.a_zero_point), k.a_ratio) : k.a_broadcast;
  const __m256 b_products =
      BFull ? _mm256_mul_ps(code_offsets8(b, k.b_zero_point), k.b_ratio) : k.b_broadcast;
  return _mm256_cvtps_epi32(_mm256_add_ps(a_products, b_products));
}

// 32 outputs: the sums saturated to int16, the zero point added with int16 saturation, then
// saturated to int8, clamped and stored. The same codes as adding the zero point in int32
// first: |zero point| <= 128, so a sum that either int16 saturation changes lies far outside
// int8 on the same side, where the int8 saturation gives the same bound. The packs interleave
// 128-bit halves; one dword permutation puts the eight groups of four back in order. (The zero
// point's add on 16 words at a time instead of 8 dwords, and one pack sequence per 32 outputs
// instead of per 16, take 7 of 29 instructions per 16 outputs.)
template <bool AFull, bool BFull>
inline void quantized_add32(const int8_t* a, const int8_t* b, const QuantizedAddConstants& k,
                            int8_t* out) {
  constexpr size_t kA = AFull ? 8 : 0;
  constexpr size_t kB = BFull ? 8 : 0;
  const __m256i words01 =
      _mm256_adds_epi16(_mm256_packs_epi32(quantized_sums8<AFull, BFull>(a, b, k),
                                           quantized_sums8<AFull, BFull>(a + kA, b + kB, k)),
                        k.out_zero_point);
  const __m256i words23 = _mm256_adds_epi16(
      _mm256_packs_epi32(quantized_sums8<AFull, BFull>(a + 2 * kA, b + 2 * kB, k),
                         quantized_sums8<AFull, BFull>(a + 3 * kA, b + 3 * kB, k)),
      k.out_zero_point);
  // Dwords: sums 0-3 of each group of 8 in the low half, 4-7 in the high, groups interleaved.
  const __m256i bytes =
      _mm256_permutevar8x32_epi32(_mm256_packs_epi16(words01, words23), k.byte_order);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_min_epi8(_mm256_max_epi8(bytes, k.out_minimum), k.out_maximum));
}

// The last count % 32 elements run through the same vector code on copies padded to 32.
template <bool AFull, bool BFull>
void quantized_add_loop(const QuantizedAddRow& row, const QuantizedAddConstants& k) {
  const int8_t* a = row.a.codes;
  const int8_t* b = row.b.codes;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    quantized_add32<AFull, BFull>(a + (AFull ? i : 0), b + (BFull ? i : 0), k, row.out + i);
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  int8_t a_codes[32] = {};
  int8_t b_codes[32] = {};
  int8_t tail[32];
  for (size_t j = 0; j < rest; ++j) {
    a_codes[j] = a[AFull ? i + j : 0];
    b_codes[j] = b[BFull ? i + j : 0];
  }
  quantized_add32<AFull, BFull>(a_codes, b_codes, k, tail);
  for (size_t j = 0; j < rest; ++j) row.out[i + j] = tail[j];
}

// exp(x) for float lanes: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for an exact
// n ln2), e^r by the degree-6 Cephes expf polynomial, 2^n through the exponent bits. About
// 1 ulp; x is clamped to [-87.3, 88.3] so 2^n stays a normal float.
__m256 exp_lanes(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3365f)), _mm256_set1_ps(88.3762f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}

__m256 select_if_less(__m256 x, __m256 bound, __m256 replacement) {
  return _mm256_blendv_ps(x, replacement, _mm256_cmp_ps(x, bound, _CMP_LT_OQ));
}

// The reference's two forms: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below, with
// e = e^-|x| <= 1 in both, so the result is relative-accurate even for very negative x.
__m256 sigmoid_lanes(__m256 x) {
  const __m256 absolute = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 e = exp_lanes(_mm256_sub_ps(_mm256_setzero_ps(), absolute));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 denominator = _mm256_add_ps(one, e);
  const __m256 numerator =
      _mm256_blendv_ps(one, e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_div_ps(numerator, denominator);
}

// tanh |x| = (1 - e) / (1 + e) with e = e^-2|x| where 1 - e keeps its relative accuracy
// (|x| >= 0.4); below, the odd Taylor series to x^9 (next term under 1e-6 relative).
__m256 tanh_lanes(__m256 x) {
  const __m256 sign = _mm256_and_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 absolute = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp_lanes(_mm256_mul_ps(absolute, _mm256_set1_ps(-2.0f)));
  const __m256 large = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  const __m256 square = _mm256_mul_ps(absolute, absolute);
  __m256 series = _mm256_set1_ps(62.0f / 2835.0f);
  series = _mm256_fmadd_ps(series, square, _mm256_set1_ps(-17.0f / 315.0f));
  series = _mm256_fmadd_ps(series, square, _mm256_set1_ps(2.0f / 15.0f));
  series = _mm256_fmadd_ps(series, square, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(series, square), absolute, absolute);
  const __m256 magnitude =
      _mm256_blendv_ps(large, small, _mm256_cmp_ps(absolute, _mm256_set1_ps(0.4f), _CMP_LT_OQ));
  return _mm256_or_ps(magnitude, sign);
}

// Relu, Clip, LeakyRelu and HardSwish use the reference's comparisons and one IEEE operation
// per step (no fused multiply-add), so they give its bits. The operation is a template
// parameter so each row loop has no per-vector dispatch (an indirect jump per 8 elements, with
// the row's fields reloaded around it, made the SiLU pass about 1.4x slower).
template <int Operation>
__m256 unary_lanes(const UnaryRow& row, __m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  if constexpr (Operation == 0) {
    return select_if_less(x, zero, zero);
  } else if constexpr (Operation == 1) {
    const __m256 low = select_if_less(x, _mm256_set1_ps(row.minimum), _mm256_set1_ps(row.minimum));
    const __m256 maximum = _mm256_set1_ps(row.maximum);
    return _mm256_blendv_ps(low, maximum, _mm256_cmp_ps(low, maximum, _CMP_GT_OQ));
  } else if constexpr (Operation == 2) {
    return select_if_less(x, zero, _mm256_mul_ps(_mm256_set1_ps(row.alpha), x));
  } else if constexpr (Operation == 3) {
    return sigmoid_lanes(x);
  } else if constexpr (Operation == 4) {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 gate =
        _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f));
    gate = select_if_less(gate, zero, zero);
    gate = _mm256_blendv_ps(gate, one, _mm256_cmp_ps(gate, one, _CMP_GT_OQ));
    return _mm256_mul_ps(x, gate);
  } else if constexpr (Operation == 5) {
    return _mm256_mul_ps(x, sigmoid_lanes(_mm256_mul_ps(_mm256_set1_ps(row.alpha), x)));
  } else {
    return tanh_lanes(x);
  }
}

// Two vectors per step (independent chains for the out-of-order core); the tail runs on a copy
// padded to eight lanes, so every element takes the same path.
template <int Operation>
void unary_row_of(const UnaryRow& row) {
  const float* const in = row.in;
  float* const out = row.out;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256 first = unary_lanes<Operation>(row, _mm256_loadu_ps(in + i));
    const __m256 second = unary_lanes<Operation>(row, _mm256_loadu_ps(in + i + 8));
    _mm256_storeu_ps(out + i, first);
    _mm256_storeu_ps(out + i + 8, second);
  }
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, unary_lanes<Operation>(row, _mm256_loadu_ps(in + i)));
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  float padded_in[8] = {};
  float padded_out[8];
  for (size_t j = 0; j < rest; ++j) padded_in[j] = in[i + j];
  _mm256_storeu_ps(padded_out, unary_lanes<Operation>(row, _mm256_loadu_ps(padded_in)));
  for (size_t j = 0; j < rest; ++j) out[i + j] = padded_out[j];
}

}  // namespace

void binary_row(const BinaryRow& row) {
  with_binary_operation(row.operation,
                        [&](auto operation) { binary_row_of<decltype(operation)::value>(row); });
}

void quantized_binary_row(const QuantizedBinaryRow& row) {
  with_binary_operation(row.operation, [&](auto operation) {
    quantized_binary_row_of<decltype(operation)::value>(row);
  });
}

void lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count) {
  __m256i pieces[16];
  for (int k = 0; k < 16; ++k) {
    pieces[k] = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  }
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), lookup32(pieces, codes));
  }
  for (; i < count; ++i) out[i] = table[in[i] + 128];
}

void quantized_add_row(const QuantizedAddRow& row) {
  QuantizedAddConstants k;
  k.a_zero_point = _mm256_set1_epi32(row.a.zero_point);
  k.b_zero_point = _mm256_set1_epi32(row.b.zero_point);
  k.out_zero_point = _mm256_set1_epi16(static_cast<int16_t>(row.out_zero_point));
  k.out_minimum = _mm256_set1_epi8(row.out_minimum);
  k.out_maximum = _mm256_set1_epi8(row.out_maximum);
  k.byte_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  k.a_ratio = _mm256_set1_ps(row.a.scale);
  k.b_ratio = _mm256_set1_ps(row.b.scale);
  // One IEEE product each, as the vector lanes compute them.
  k.a_broadcast = _mm256_mul_ps(
      _mm256_set1_ps(static_cast<float>(int32_t{row.a.codes[0]} - row.a.zero_point)), k.a_ratio);
  k.b_broadcast = _mm256_mul_ps(
      _mm256_set1_ps(static_cast<float>(int32_t{row.b.codes[0]} - row.b.zero_point)), k.b_ratio);
  with_operand_steps(row.a.step != 0, row.b.step != 0, [&](auto a_full, auto b_full) {
    quantized_add_loop<decltype(a_full)::value, decltype(b_full)::value>(row, k);
  });
}

// _mm256_max_ps(row, accumulator) returns the accumulator unless row is larger, as the scalar
// tail does.
void max_row_float(float* accumulator, const float* row, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(accumulator + i,
                     _mm256_max_ps(_mm256_loadu_ps(row + i), _mm256_loadu_ps(accumulator + i)));
  }
  // Short rows (a 20-wide plane) are mostly tail: one 4-lane step before the scalar rest.
  if (i + 4 <= count) {
    _mm_storeu_ps(accumulator + i,
                  _mm_max_ps(_mm_loadu_ps(row + i), _mm_loadu_ps(accumulator + i)));
    i += 4;
  }
  for (; i < count; ++i) accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
}

void max_row_int8(int8_t* accumulator, const int8_t* row, size_t count) {
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    auto* target = reinterpret_cast<__m256i*>(accumulator + i);
    _mm256_storeu_si256(
        target, _mm256_max_epi8(_mm256_loadu_si256(target),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i))));
  }
  if (i + 16 <= count) {
    auto* target = reinterpret_cast<__m128i*>(accumulator + i);
    _mm_storeu_si128(target,
                     _mm_max_epi8(_mm_loadu_si128(target),
                                  _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
    i += 16;
  }
  if (i + 8 <= count) {
    auto* target = reinterpret_cast<__m128i*>(accumulator + i);
    _mm_storel_epi64(target,
                     _mm_max_epi8(_mm_loadl_epi64(target),
                                  _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i))));
    i += 8;
  }
  for (; i < count; ++i) accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
}

void add_row_float(float* accumulator, const float* row, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(accumulator + i,
                     _mm256_add_ps(_mm256_loadu_ps(accumulator + i), _mm256_loadu_ps(row + i)));
  }
  for (; i < count; ++i) accumulator[i] += row[i];
}

void unary_row(const UnaryRow& row) {
  switch (row.operation) {
    case 0:
      return unary_row_of<0>(row);
    case 1:
      return unary_row_of<1>(row);
    case 2:
      return unary_row_of<2>(row);
    case 3:
      return unary_row_of<3>(row);
    case 4:
      return unary_row_of<4>(row);
    case 5:
      return unary_row_of<5>(row);
    default:
      return unary_row_of<6>(row);
  }
}

}  // namespace orknn::kernels::cpu::optimized::avx2
