// The avx2 table's int8 depthwise on int16 tap pairs (micro_kernels.h InterleavePairs,
// DepthwisePairs; driver in optimized/depthwise_convolution.cc). Each 32-bit lane of a vector
// holds one of 8 channels' x - zx at two columns of a padded row, so vpmaddwd multiplies two
// taps of a kernel row and adds them in int32: exact, since |x - zx| and |w - zw| are at most
// 255 (no 2^24 float bound, no rounding). Against the float lanes (avx2_depthwise_rows.cc) the
// band holds int16 instead of float (half the bytes per column), stride 2 stores each column
// once (slot q = columns 2q, 2q + 1: a 3x3 kernel row is two vpmaddwd at consecutive slots), the
// interleave has no int-to-float conversion, and the requantization runs on the sums in
// registers (no float band of sums stored and read back).
//
// Every function carries its instruction set as a target attribute (the file is compiled for
// the baseline x86-64; the avx2 table, chosen when cpu_features reported AVX2 and FMA, points
// at it). No standard-library templates or inline functions here (see avx2_micro_kernels.h).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "optimized/micro_kernels.h"

#define ORKNN_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace orknn::kernels::cpu::optimized {
namespace {

// r[l] holds 8 16-bit elements (slots) of channel l in each 128-bit half (slots 0-7 and 8-15 of
// 16-slot blocks); afterwards r[q] holds slot q of the 8 channels, in each half.
ORKNN_TARGET_AVX2 inline void transpose8x8_words(__m256i r[8]) {
  const __m256i a0 = _mm256_unpacklo_epi16(r[0], r[1]);
  const __m256i a1 = _mm256_unpackhi_epi16(r[0], r[1]);
  const __m256i a2 = _mm256_unpacklo_epi16(r[2], r[3]);
  const __m256i a3 = _mm256_unpackhi_epi16(r[2], r[3]);
  const __m256i a4 = _mm256_unpacklo_epi16(r[4], r[5]);
  const __m256i a5 = _mm256_unpackhi_epi16(r[4], r[5]);
  const __m256i a6 = _mm256_unpacklo_epi16(r[6], r[7]);
  const __m256i a7 = _mm256_unpackhi_epi16(r[6], r[7]);
  const __m256i b0 = _mm256_unpacklo_epi32(a0, a2);
  const __m256i b1 = _mm256_unpackhi_epi32(a0, a2);
  const __m256i b2 = _mm256_unpacklo_epi32(a4, a6);
  const __m256i b3 = _mm256_unpackhi_epi32(a4, a6);
  const __m256i b4 = _mm256_unpacklo_epi32(a1, a3);
  const __m256i b5 = _mm256_unpackhi_epi32(a1, a3);
  const __m256i b6 = _mm256_unpacklo_epi32(a5, a7);
  const __m256i b7 = _mm256_unpackhi_epi32(a5, a7);
  r[0] = _mm256_unpacklo_epi64(b0, b2);
  r[1] = _mm256_unpackhi_epi64(b0, b2);
  r[2] = _mm256_unpacklo_epi64(b1, b3);
  r[3] = _mm256_unpackhi_epi64(b1, b3);
  r[4] = _mm256_unpacklo_epi64(b4, b6);
  r[5] = _mm256_unpackhi_epi64(b4, b6);
  r[6] = _mm256_unpacklo_epi64(b5, b7);
  r[7] = _mm256_unpackhi_epi64(b5, b7);
}

// The same on 8 slots: the unpacks work within 128-bit lanes, so the low halves of the 256-bit
// form are this transpose (the high ones are zeros and dropped).
ORKNN_TARGET_AVX2 inline void transpose8x8_words(__m128i r[8]) {
  __m256i wide[8];
  for (int l = 0; l < 8; ++l) wide[l] = _mm256_zextsi128_si256(r[l]);
  transpose8x8_words(wide);
  for (int l = 0; l < 8; ++l) r[l] = _mm256_castsi256_si128(wide[l]);
}

// Rows of at least 16 slots: blocks of 16, the transpose on both halves at once (the last block
// overlaps the one before). kStepTwo: one 32-byte load per channel; else two 16-byte loads (at
// the slot's two columns) whose byte interleave gives slots 0-7 and 8-15.
template <bool kStepTwo>
ORKNN_TARGET_AVX2 void interleave_pairs_16(const InterleavePairs& p) {
  const __m256i zero = _mm256_set1_epi16(static_cast<int16_t>(p.zero_point));
  const size_t slots = p.slots;
  for (size_t r = 0; r < p.rows; ++r) {
    int16_t* out = p.out + r * p.out_row_stride;
    const size_t offset = r * p.source_stride;
    for (size_t q = 0;; q += 16) {
      if (q + 16 > slots) q = slots - 16;
      __m256i v[8];
      for (size_t l = 0; l < 8; ++l) {
        const int8_t* column = p.sources[l] + offset + (kStepTwo ? 2 * q : q);
        if constexpr (kStepTwo) {
          v[l] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(column));
        } else {
          const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(column));
          const __m128i second =
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(column + p.dilation_width));
          v[l] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(first, second)),
                                         _mm_unpackhi_epi8(first, second), 1);
        }
      }
      transpose8x8_words(v);
      for (size_t k = 0; k < 8; ++k) {
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(out + (q + k) * 16),
            _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(v[k])), zero));
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(out + (q + 8 + k) * 16),
            _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(v[k], 1)), zero));
      }
      if (q + 16 == slots) break;
    }
  }
}

// Slots of one padded row, in blocks of 8 (the last block ends at the row's last slot and may
// overlap the one before; rows of fewer than 8 slots get 8, the row's room). kStepTwo: slot q is
// the byte pair at column 2q of each row (one 16-byte load per channel and block).
template <bool kStepTwo>
ORKNN_TARGET_AVX2 void interleave_pairs_of(const InterleavePairs& p) {
  const __m256i zero = _mm256_set1_epi16(static_cast<int16_t>(p.zero_point));
  const size_t slots = p.slots < 8 ? 8 : p.slots;
  const size_t dilation = p.dilation_width;
  for (size_t r = 0; r < p.rows; ++r) {
    int16_t* out = p.out + r * p.out_row_stride;
    const size_t offset = r * p.source_stride;
    for (size_t q = 0;; q += 8) {
      if (q + 8 > slots) q = slots - 8;
      __m128i v[8];
      for (size_t l = 0; l < 8; ++l) {
        const int8_t* column = p.sources[l] + offset + (kStepTwo ? 2 * q : q);
        if constexpr (kStepTwo) {
          v[l] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(column));
        } else {
          v[l] = _mm_unpacklo_epi8(
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(column)),
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(column + dilation)));
        }
      }
      transpose8x8_words(v);
      for (size_t k = 0; k < 8; ++k) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (q + k) * 16),
                            _mm256_sub_epi16(_mm256_cvtepi8_epi16(v[k]), zero));
      }
      if (q + 8 == slots) break;
    }
  }
}

ORKNN_TARGET_AVX2 void interleave_pairs(const InterleavePairs& p) {
  if (p.slots >= 16) {
    if (p.slot_step == 2) return interleave_pairs_16<true>(p);
    return interleave_pairs_16<false>(p);
  }
  if (p.slot_step == 2) return interleave_pairs_of<true>(p);
  interleave_pairs_of<false>(p);
}

struct PairRequantization {
  __m256i bias;
  __m256d multipliers_low;
  __m256d multipliers_high;
  __m256 multipliers;
  __m256 magic;        // 1.5 x 2^23
  __m256i magic_bits;  // 0x4B400000 - zero point
  __m256i zero_point;
  __m256i minimum;
  __m256i maximum;
  bool in_float;
};

// One pixel's 8 lane sums (bias included) requantized, before the clamp: LaneRequantization's
// small-multiplier path (int32 to double is exact; vcvtpd2dq rounds half to even in the default
// MXCSR mode; |product| < 2^30, so adding the zero point stays exact), or its float path (the sum
// within 2^24 converts exactly, one FMA rounds the product half to even into the magic
// constant's mantissa, whose bits less magic_bits are the result plus the zero point).
ORKNN_TARGET_AVX2 inline __m256i requantize_pair_pixel(__m256i sum, const PairRequantization& k) {
  if (k.in_float) {
    return _mm256_sub_epi32(
        _mm256_castps_si256(_mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), k.multipliers, k.magic)),
        k.magic_bits);
  }
  const __m128i low = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(sum)), k.multipliers_low));
  const __m128i high = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(sum, 1)), k.multipliers_high));
  return _mm256_add_epi32(_mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1),
                          k.zero_point);
}

// 8 pixels' requantized lanes (v[p]: pixel p's 8 channels, int32) as codes in 8 channel rows:
// two saturating packs per pair of pixels give, per 128-bit half, 4 pixels x 4 channels of
// bytes (saturating to int8 then clamping to [minimum, maximum] within int8 is the clamp then
// the saturation, the range being within int8), clamped once per 32 codes; a byte shuffle
// transposes each 4 x 4 and 32-bit unpacks join pixels 0-3 and 4-7: channels 0, 1, 4, 5 in
// `even`, 2, 3, 6, 7 in `odd`, 8 codes each.
ORKNN_TARGET_AVX2 inline void pack_pair_pixels(const __m256i v[8], const PairRequantization& k,
                                               __m256i* even, __m256i* odd) {
  const __m256i p01 = _mm256_packs_epi32(v[0], v[1]);
  const __m256i p23 = _mm256_packs_epi32(v[2], v[3]);
  const __m256i p45 = _mm256_packs_epi32(v[4], v[5]);
  const __m256i p67 = _mm256_packs_epi32(v[6], v[7]);
  __m256i first = _mm256_packs_epi16(p01, p23);  // [pixel 0-3][channel 0-3 | 4-7]
  __m256i second = _mm256_packs_epi16(p45, p67);
  first = _mm256_min_epi8(_mm256_max_epi8(first, k.minimum), k.maximum);
  second = _mm256_min_epi8(_mm256_max_epi8(second, k.minimum), k.maximum);
  const __m256i transpose = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                             0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  first = _mm256_shuffle_epi8(first, transpose);  // [channel 0-3 | 4-7][pixel 0-3]
  second = _mm256_shuffle_epi8(second, transpose);
  *even = _mm256_unpacklo_epi32(first, second);  // channel 0, 1 | 4, 5: pixels 0-7 each
  *odd = _mm256_unpackhi_epi32(first, second);   // channel 2, 3 | 6, 7
}

// The kernel's weight vectors (one per kernel row and tap pair): in registers for the fixed
// shapes (kRows and kPairs; 0: the call's shape, read from memory at each use).
template <size_t kRows, size_t kPairs>
struct PairWeights {
  __m256i w[kRows * kPairs];
};
template <>
struct PairWeights<0, 0> {
  const int16_t* weights;
};

// One pixel's 8 lane sums at input position `base` (bias first): a pixel at a time, its tap
// pairs summed in any order (int32 wraps, so every order gives the same bits). Independent
// pixels overlap in the out-of-order core; summing 8 pixels side by side instead made GCC
// compute every product first and spill them.
template <size_t kRows, size_t kPairs>
ORKNN_TARGET_AVX2 inline __m256i pair_sum(const DepthwisePairs& d,
                                          const PairWeights<kRows, kPairs>& w, const int16_t* base,
                                          __m256i bias) {
  const size_t rows = kRows ? kRows : d.kernel_height;
  const size_t pairs = kPairs ? kPairs : d.pairs;
  const size_t row_step = d.dilation_height * d.input_stride;
  const size_t pair_step = d.pair_step * 16;
  __m256i sum = bias;
  for (size_t i = 0; i < rows; ++i) {
    for (size_t k = 0; k < pairs; ++k) {
      __m256i weight;
      if constexpr (kRows != 0) {
        weight = w.w[i * kPairs + k];
      } else {
        weight =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.weights + (i * pairs + k) * 16));
      }
      const __m256i x =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + i * row_step + k * pair_step));
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(x, weight));
    }
  }
  return sum;
}

template <size_t kRows, size_t kPairs>
ORKNN_TARGET_AVX2 void depthwise_pairs_of(const DepthwisePairs& d) {
  const LaneRequantization& q = d.requantization;
  PairRequantization k;
  k.bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.bias));
  k.multipliers_low = _mm256_cvtps_pd(_mm_loadu_ps(q.multipliers));
  k.multipliers_high = _mm256_cvtps_pd(_mm_loadu_ps(q.multipliers + 4));
  k.multipliers = _mm256_loadu_ps(q.multipliers);
  k.magic = _mm256_set1_ps(12582912.0f);
  k.magic_bits = _mm256_set1_epi32(0x4B400000 - q.output_zero_point);
  k.zero_point = _mm256_set1_epi32(q.output_zero_point);
  const int32_t minimum =
      q.output_minimum <= q.output_maximum ? q.output_minimum : q.output_maximum;
  // The clamp on the saturated codes: the range's ends within int8.
  auto code = [](int32_t value) {
    return static_cast<char>(value < -128 ? -128 : (value > 127 ? 127 : value));
  };
  k.minimum = _mm256_set1_epi8(code(minimum));
  k.maximum = _mm256_set1_epi8(code(q.output_maximum));
  // The zero point goes into the constant subtracted from the FMA's bits (no int32 overflow for
  // zero points within int8's codes); otherwise the double path.
  k.in_float = q.in_float && q.output_zero_point >= -128 && q.output_zero_point <= 127;

  const size_t width = d.output_width;
  const size_t pixels = d.output_height * width;
  const size_t row_step = d.stride_height * d.input_stride;
  const size_t pixel_step = d.pixel_step * 16;
  int8_t* const* rows = q.rows;
  PairWeights<kRows, kPairs> w;
  if constexpr (kRows != 0) {
    for (size_t i = 0; i < kRows * kPairs; ++i) {
      w.w[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d.weights + i * 16));
    }
  } else {
    w.weights = d.weights;
  }
  const int16_t* bases[8];
  __m256i v[8];
  __m256i even, odd;
  if (pixels < 8) {
    // Pixels past the last repeat it (valid reads); only the real ones are stored.
    for (size_t p = 0; p < 8; ++p) {
      const size_t c = p < pixels ? p : pixels - 1;
      bases[p] = d.input + c / width * row_step + c % width * pixel_step;
      v[p] = requantize_pair_pixel(pair_sum(d, w, bases[p], k.bias), k);
    }
    pack_pair_pixels(v, k, &even, &odd);
    alignas(32) int8_t staging[2][32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(staging[0]), even);
    _mm256_store_si256(reinterpret_cast<__m256i*>(staging[1]), odd);
    for (size_t l = 0; l < 8; ++l) {
      // Channel l: staging[l / 2 % 2] at byte 16 x (l / 4) + 8 x (l % 2).
      const int8_t* codes = staging[l / 2 % 2] + 16 * (l / 4) + 8 * (l % 2);
      for (size_t c = 0; c < pixels; ++c) rows[l][c] = codes[c];
    }
    return;
  }
  // Blocks of 8 pixels walking the band row by row; the last block ends at the band's last
  // pixel and may overlap the one before (the same codes again).
  size_t row = 0, column = 0;
  for (size_t c = 0;; c += 8) {
    if (c + 8 > pixels) {
      c = pixels - 8;
      row = c / width;
      column = c % width;
    }
    for (size_t p = 0; p < 8; ++p) {
      bases[p] = d.input + row * row_step + column * pixel_step;
      if (++column == width) {
        column = 0;
        ++row;
      }
    }
    for (size_t p = 0; p < 8; ++p) {
      v[p] = requantize_pair_pixel(pair_sum(d, w, bases[p], k.bias), k);
    }
    pack_pair_pixels(v, k, &even, &odd);
    const __m128i even_low = _mm256_castsi256_si128(even);        // channels 0, 1
    const __m128i even_high = _mm256_extracti128_si256(even, 1);  // 4, 5
    const __m128i odd_low = _mm256_castsi256_si128(odd);          // 2, 3
    const __m128i odd_high = _mm256_extracti128_si256(odd, 1);    // 6, 7
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[0] + c), even_low);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[1] + c),
                     _mm_unpackhi_epi64(even_low, even_low));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[2] + c), odd_low);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[3] + c), _mm_unpackhi_epi64(odd_low, odd_low));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[4] + c), even_high);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[5] + c),
                     _mm_unpackhi_epi64(even_high, even_high));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[6] + c), odd_high);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[7] + c),
                     _mm_unpackhi_epi64(odd_high, odd_high));
    if (c + 8 == pixels) return;
  }
}

ORKNN_TARGET_AVX2 void depthwise_pairs(const DepthwisePairs& d) {
  if (d.kernel_height == 3 && d.pairs == 2) return depthwise_pairs_of<3, 2>(d);
  if (d.kernel_height == 5 && d.pairs == 3) return depthwise_pairs_of<5, 3>(d);
  depthwise_pairs_of<0, 0>(d);
}

}  // namespace

void avx2_interleave_pairs(const InterleavePairs& pairs) {
  interleave_pairs(pairs);
}
void avx2_depthwise_pairs(const DepthwisePairs& pairs) {
  depthwise_pairs(pairs);
}

}  // namespace orknn::kernels::cpu::optimized
