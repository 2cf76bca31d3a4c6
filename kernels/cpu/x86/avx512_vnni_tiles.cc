// The AVX-512 VNNI int8 tiles of the "avx512" variant (optimized/dot_product_kernels.h).
// VPDPBUSD multiplies four unsigned bytes by four signed bytes per int32 lane, sums the four
// products exactly and adds them to the lane modulo 2^32; the drivers pack the activations as
// x + 128 (sign bit flipped) and the weights as w - zw, and fold -(zx + 128) sum (w - zw) into
// the per-channel constant, so the accumulators equal the reference's.
//
// Every function carries its instruction set as a target attribute, so the file is compiled
// for the baseline x86-64 and the dispatcher calls it only after cpu_features reported
// AVX-512 F/BW/VL/VNNI with the OS saving the ZMM state (dispatch.cc). As in the AVX2 file: no
// standard-library templates or inline functions here, only intrinsics and this file's
// functions (a standard inline instantiated with these encodings could be kept by the linker
// for the whole program).
#include <immintrin.h>

#include "optimized/dot_product_kernels.h"
#include "x86/avx512_prefetch.h"

#define ORKNN_TARGET_AVX512_VNNI \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace orknn::kernels::cpu::optimized {
namespace {

// MR x NR = 8 x 32: 16 zmm accumulators (two per row), two B vectors and one broadcast of A per
// depth group, 16 VPDPBUSD (1024 multiply-adds) per 10 loads. Chosen by measurement
// (docs/cpu-kernels.md): 12 x 32 (24 accumulators) was within noise on the ResNet50 and
// MobileNetV2 layers (median +1-1.5%, from -12% to +7% per layer).
constexpr size_t kTileRows = 8;
// A last panel of 1-8 real columns runs on one ymm per row, 9-16 on one zmm, 17-24 on a zmm and
// a ymm. Zen 4 runs a ymm VPDPBUSD in half a zmm one's time: a 14x14 plane is six panels of 32
// pixels and one of 4, which now costs a quarter of a full one, not half; a 7x7 plane's second
// panel of 17 three quarters, not all.
static_assert(kTileRows == 8, "ORKNN_FOR_EACH_ROW and vnni_tile_lanes name 8 rows");
constexpr size_t kTileColumns = 32;
constexpr size_t kGroupDepth = 4;

// The accumulators are named variables (GCC keeps arrays of vectors in memory); rows past
// kRows are compiled out with `if constexpr`.
#define ORKNN_FOR_EACH_ROW(MACRO) \
  MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5) MACRO(6) MACRO(7)

// The end of a tile's depth loop with a ymm accumulator per row (vnni_tile_rows and
// vnni_direct_rows, kNarrowLow or kNarrowHigh): the ymm widened with zeros into the zmm it
// stands for, so that the ends work on zmm alone (lanes past the tile's columns are never
// stored).
#define ORKNN_WIDEN_NARROW(r)                  \
  if constexpr (kRows > r) {                   \
    const __m512i wide = widened(narrow##r);   \
    if constexpr (kNarrowLow) low##r = wide;   \
    if constexpr (kNarrowHigh) high##r = wide; \
  }

// Lanes of the two column vectors a tile writes: columns [0, 16) and [16, 32).
ORKNN_TARGET_AVX512_VNNI __mmask16 lane_mask(size_t columns) {
  if (columns >= 16) return static_cast<__mmask16>(0xFFFF);
  return static_cast<__mmask16>((1u << columns) - 1u);
}

// Four packed bytes as one int32 lane value (the builtin, not std::memcpy: see the top).
ORKNN_TARGET_AVX512_VNNI int32_t load_group(const int8_t* bytes) {
  int32_t value;
  __builtin_memcpy(&value, bytes, sizeof(value));
  return value;
}

// The low 256 bits of a zmm, which is no instruction (its ymm subregister). Not
// _mm512_castsi512_si256: GCC 12's trips -Wmaybe-uninitialized (see the top).
ORKNN_TARGET_AVX512_VNNI __m256i low_half(__m512i vector) {
  const __v16si lanes = reinterpret_cast<__v16si>(vector);
  return reinterpret_cast<__m256i>(__builtin_shufflevector(lanes, lanes, 0, 1, 2, 3, 4, 5, 6, 7));
}

// A ymm widened with zeros into a zmm.
ORKNN_TARGET_AVX512_VNNI __m512i widened(__m256i vector) {
  return _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), vector, 0);
}

// The output range and zero point of a requantized tile, as vectors.
struct RequantizationVectors {
  __m256i zero_point;
  __m256i minimum;
  __m256i maximum;
};

ORKNN_TARGET_AVX512_VNNI RequantizationVectors
requantization_vectors(const Int8TileRequantization& requantization) {
  RequantizationVectors vectors;
  vectors.zero_point = _mm256_set1_epi32(requantization.output_zero_point);
  // min(max(v, low), high) with low > high gives high, as the reference's clamp does.
  vectors.minimum = _mm256_set1_epi32(requantization.output_minimum <= requantization.output_maximum
                                          ? requantization.output_minimum
                                          : requantization.output_maximum);
  vectors.maximum = _mm256_set1_epi32(requantization.output_maximum);
  return vectors;
}

// Eight sums (with the row's constant added) requantized as requantize_offset_row does (below)
// and stored to the lanes of `mask`.
ORKNN_TARGET_AVX512_VNNI void requantize_eight(__m256i sums, __m512d factor,
                                               const RequantizationVectors& vectors, __mmask8 mask,
                                               int8_t* output) {
  __m256i rounded =
      _mm512_maskz_cvtpd_epi32(0xFF, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xFF, sums), factor));
  rounded = _mm256_add_epi32(rounded, vectors.zero_point);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, vectors.minimum), vectors.maximum);
  _mm256_mask_cvtsepi32_storeu_epi8(output, mask, rounded);
}

// 16 sums of one row (the row's constant added, modulo 2^32) requantized and stored to the
// lanes of `mask`. (The halves are taken with the maskz extracts: GCC 12's plain forms warn
// about their undefined source, see the top.)
ORKNN_TARGET_AVX512_VNNI void requantize_store(__m512i sums, float multiplier,
                                               const RequantizationVectors& vectors, __mmask16 mask,
                                               int8_t* output) {
  const __m512d factor = _mm512_set1_pd(static_cast<double>(multiplier));
  requantize_eight(_mm512_maskz_extracti64x4_epi64(0xFF, sums, 0), factor, vectors,
                   static_cast<__mmask8>(mask), output);
  if (mask > 0xFF) {
    requantize_eight(_mm512_maskz_extracti64x4_epi64(0xFF, sums, 1), factor, vectors,
                     static_cast<__mmask8>(mask >> 8), output + 8);
  }
}

// Eight sums times the multiplier, rounded as requantize_store does.
ORKNN_TARGET_AVX512_VNNI __m256i rounded_products(__m256i sums, __m512d factor) {
  return _mm512_maskz_cvtpd_epi32(0xFF,
                                  _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xFF, sums), factor));
}

// The zero point and the output range on 16-bit lanes (requantize_store_32).
struct WordRequantization {
  __m512i zero_point;
  __m512i minimum;
  __m512i maximum;
};

ORKNN_TARGET_AVX512_VNNI WordRequantization
word_requantization(const Int8TileRequantization& requantization) {
  WordRequantization words;
  words.zero_point = _mm512_set1_epi16(static_cast<int16_t>(requantization.output_zero_point));
  // min(max(v, low), high) with low > high gives high, as the reference's clamp does.
  words.minimum = _mm512_set1_epi16(
      static_cast<int16_t>(requantization.output_minimum <= requantization.output_maximum
                               ? requantization.output_minimum
                               : requantization.output_maximum));
  words.maximum = _mm512_set1_epi16(static_cast<int16_t>(requantization.output_maximum));
  return words;
}

// rounded_products on 16 sums: the two 8-lane halves (doubles hold 8 lanes).
ORKNN_TARGET_AVX512_VNNI __m512i rounded_products_16(__m512i sums, __m512d factor) {
  return _mm512_maskz_inserti64x4(
      0xFF,
      _mm512_maskz_inserti64x4(
          0xFF, _mm512_setzero_si512(),
          rounded_products(_mm512_maskz_extracti64x4_epi64(0xFF, sums, 0), factor), 0),
      rounded_products(_mm512_maskz_extracti64x4_epi64(0xFF, sums, 1), factor), 1);
}

// The end of requantize_store_32 and its float form: 32 outputs as int16 words (128-bit lane i
// holds columns 4i..4i+3, then 16 + 4i..16 + 4i + 3) clamped to the output range, narrowed to
// bytes and stored in column order (the first `columns`).
ORKNN_TARGET_AVX512_VNNI void store_clamped_words_32(__m512i words16,
                                                     const WordRequantization& words,
                                                     size_t columns, int8_t* output) {
  const __m512i clamped = _mm512_maskz_min_epi16(
      ~__mmask32{0}, _mm512_maskz_max_epi16(~__mmask32{0}, words16, words.minimum), words.maximum);
  // Lane i's bytes: dword 0 columns 4i..4i+3, dword 1 columns 16 + 4i.. (and the same again).
  const __m512i bytes = _mm512_maskz_packs_epi16(~__mmask64{0}, clamped, clamped);
  const __m512i order = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 13, 9, 5, 1, 12, 8, 4, 0);
  const __m512i ordered = _mm512_maskz_permutexvar_epi32(0xFF, order, bytes);
  const __mmask32 mask =
      columns >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((__mmask32{1} << columns) - 1);
  _mm256_mask_storeu_epi8(output, mask, _mm512_maskz_extracti64x4_epi64(0xFF, ordered, 0));
}

// 32 sums of one row (two vectors, the row's constant added) requantized into the 32 bytes at
// `output` under `columns` (1..32): the products rounded in four groups of eight
// doubles as requantize_store does, then zero point, clamp and narrowing on 16-bit lanes, 32 at
// a time: the int32 -> int16 narrowing saturates, the zero point is added with saturation and
// the clamp follows, which gives requantize_store's bytes because the output range lies within
// int8 and |zero point| <= 128 (a value the narrowing saturated stays beyond the range after the
// zero point, so the clamp ends it at the same bound). Two packs, a lane reorder and one masked
// store, where requantize_store does the zero point, clamp and a store per eight outputs.
ORKNN_TARGET_AVX512_VNNI void requantize_store_32(__m512i low, __m512i high, float multiplier,
                                                  const WordRequantization& words, size_t columns,
                                                  int8_t* output) {
  const __m512d factor = _mm512_set1_pd(static_cast<double>(multiplier));
  const __m512i first = rounded_products_16(low, factor);
  const __m512i second = rounded_products_16(high, factor);
  // 128-bit lane i: columns 4i..4i+3, then 16 + 4i..16 + 4i + 3.
  __m512i clamped = _mm512_maskz_packs_epi32(~__mmask32{0}, first, second);
  clamped = _mm512_maskz_adds_epi16(~__mmask32{0}, clamped, words.zero_point);
  store_clamped_words_32(clamped, words, columns, output);
}

// Int8TileRequantization::in_float: 16 sums (the row's constant added) times the multiplier,
// rounded half to even by one fused multiply-add into 1.5 x 2^23 + round(P), whose bits minus
// 1.5 x 2^23's are the rounded product; the zero point is subtracted from that bias too (the
// integers stay below 2^22 + 128, no wrap).
ORKNN_TARGET_AVX512_VNNI __m512i float_rounded_products(__m512i sums, __m512 multiplier,
                                                        __m512i bits_bias) {
  const __m512 shifted = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, sums), multiplier,
                                         _mm512_set1_ps(12582912.0f));  // 1.5 x 2^23
  return _mm512_sub_epi32(_mm512_castps_si512(shifted), bits_bias);
}

// 1.5 x 2^23's bits less the zero point: float_rounded_products then gives round(P) + zero point.
ORKNN_TARGET_AVX512_VNNI __m512i float_bits_bias(const Int8TileRequantization& requantization) {
  return _mm512_set1_epi32(0x4B400000 - requantization.output_zero_point);
}

// requantize_store_32 in float (Int8TileRequantization::in_float): the same bytes. The values
// with the zero point are exact int32 (below 2^22 + 128), so the saturating narrowing to 16 bits
// and the clamp give what requantize_store_32's narrowing, saturating zero point and clamp give.
ORKNN_TARGET_AVX512_VNNI void requantize_store_32_in_float(__m512i low, __m512i high,
                                                           float multiplier, __m512i bits_bias,
                                                           const WordRequantization& words,
                                                           size_t columns, int8_t* output) {
  const __m512 factor = _mm512_set1_ps(multiplier);
  const __m512i first = float_rounded_products(low, factor, bits_bias);
  const __m512i second = float_rounded_products(high, factor, bits_bias);
  // 128-bit lane i: columns 4i..4i+3, then 16 + 4i..16 + 4i + 3 (as requantize_store_32).
  __m512i clamped = _mm512_maskz_packs_epi32(~__mmask32{0}, first, second);
  store_clamped_words_32(clamped, words, columns, output);
}

// requantize_store in float (one vector of at most 16 columns), the same bytes: the clamp on
// int32, then the (now exact) narrowing. (The maskz forms with every lane set: GCC 12's plain
// forms warn about their undefined source, see the top.)
ORKNN_TARGET_AVX512_VNNI void requantize_store_in_float(
    __m512i sums, float multiplier, __m512i bits_bias, const Int8TileRequantization& requantization,
    __mmask16 mask, int8_t* output) {
  __m512i values = float_rounded_products(sums, _mm512_set1_ps(multiplier), bits_bias);
  const int32_t minimum = requantization.output_minimum <= requantization.output_maximum
                              ? requantization.output_minimum
                              : requantization.output_maximum;
  values = _mm512_maskz_min_epi32(
      0xFFFF, _mm512_maskz_max_epi32(0xFFFF, values, _mm512_set1_epi32(minimum)),
      _mm512_set1_epi32(requantization.output_maximum));
  _mm_mask_storeu_epi8(output, mask, _mm512_maskz_cvtsepi32_epi8(0xFFFF, values));
}

// What a requantizing tile's rows share (requantize_tile_row).
struct TileEnd {
  RequantizationVectors vectors;
  WordRequantization words;
  __m512i bits_bias;
  __mmask16 mask_low;   // the real columns of the first vector
  __mmask16 mask_high;  // and of the second
};

ORKNN_TARGET_AVX512_VNNI TileEnd tile_end(const Int8TileRequantization& requantization,
                                          size_t columns) {
  TileEnd end;
  end.vectors = requantization_vectors(requantization);
  end.words = word_requantization(requantization);
  end.bits_bias = float_bits_bias(requantization);
  end.mask_low = lane_mask(columns);
  end.mask_high = lane_mask(columns > 16 ? columns - 16 : 0);
  return end;
}

// Whether row r's sums (its constant added) requantize in float: proven for the whole block
// (in_float), or, with float_bounds, every real column's |sum| below the row's bound. Two
// operations per 16 sums (an absolute value that zeroes the columns past the tile's, which hold
// the constant alone or the padding's sums and are not stored, and an unsigned comparison), two
// mask moves, an OR and a branch, where the double path takes eight per 16 (an extract, two
// conversions to double, two products, two conversions back, an insert) and the float path three.
// Unsigned because |INT32_MIN| wraps to itself: 2^31 as unsigned, beyond every bound. (The maskz
// form: GCC 12's plain one warns about its undefined source, see the top.)
template <size_t kVectors>
ORKNN_TARGET_AVX512_VNNI bool row_in_float(const Int8TileRequantization& requantization, size_t r,
                                           __m512i low, __m512i high, const TileEnd& end) {
  if (requantization.in_float) return true;
  if (!requantization.float_bounds) return false;
  const __m512i bound = _mm512_set1_epi32(static_cast<int32_t>(requantization.float_bounds[r]));
  __mmask16 beyond = _mm512_cmpge_epu32_mask(_mm512_maskz_abs_epi32(end.mask_low, low), bound);
  if constexpr (kVectors > 1) {
    beyond = static_cast<__mmask16>(
        beyond | _mm512_cmpge_epu32_mask(_mm512_maskz_abs_epi32(end.mask_high, high), bound));
  }
  return beyond == 0;
}

// Row r of a requantizing tile: low and high are its two column vectors (high unused with one
// vector), plus c when the tile accumulates; the row's constant is added here, then the row is
// requantized in float (row_in_float) or in double, the same bytes either way. Inlined: GCC 12
// otherwise calls it once per row from the direct tile, where the code was inline before.
template <size_t kVectors>
__attribute__((always_inline)) inline ORKNN_TARGET_AVX512_VNNI void requantize_tile_row(
    __m512i low, __m512i high, size_t r, const Int8TileRequantization& requantization,
    const TileEnd& end, size_t columns) {
  int8_t* out = requantization.output + r * requantization.output_stride;
  const __m512i offset = _mm512_set1_epi32(requantization.constants[r]);
  low = _mm512_add_epi32(low, offset);
  if constexpr (kVectors > 1) high = _mm512_add_epi32(high, offset);
  const float multiplier = requantization.multipliers[r];
  if (row_in_float<kVectors>(requantization, r, low, high, end)) {
    if constexpr (kVectors > 1) {
      requantize_store_32_in_float(low, high, multiplier, end.bits_bias, end.words, columns, out);
    } else {
      requantize_store_in_float(low, multiplier, end.bits_bias, requantization, end.mask_low, out);
    }
  } else if constexpr (kVectors > 1) {
    requantize_store_32(low, high, multiplier, end.words, columns, out);
  } else {
    requantize_store(low, multiplier, end.vectors, end.mask_low, out);
  }
}

// The requantizing tile's end (vnni_tile_rows with kRequantize): sums[2r] and sums[2r + 1] are
// row r's two column vectors, plus c when the tile accumulates, requantized into the output.
template <size_t kRows, size_t kVectors>
__attribute__((noinline)) ORKNN_TARGET_AVX512_VNNI void requantize_tile_sums(
    const Int8DotTile& tile, const Int8TileRequantization& requantization, const __m512i* sums) {
  const TileEnd end = tile_end(requantization, tile.columns);
  for (size_t r = 0; r < kRows; ++r) {
    __m512i low = sums[2 * r];
    __m512i high = kVectors > 1 ? sums[2 * r + 1] : _mm512_setzero_si512();
    const int32_t* c = tile.c + r * tile.c_stride;
    if (tile.accumulate) {
      low = _mm512_add_epi32(low, _mm512_maskz_loadu_epi32(end.mask_low, c));
      if (kVectors > 1) {
        high = _mm512_add_epi32(high, _mm512_maskz_loadu_epi32(end.mask_high, c + 16));
      }
    }
    requantize_tile_row<kVectors>(low, high, r, requantization, end, tile.columns);
  }
}

// kRows real rows (1..kTileRows) by kLanes columns (tile_lanes: 32 on two zmm per row, 24 on a
// zmm and a ymm, 16 on a zmm, 8 on a ymm). kActivationsInB: B holds the activations
// (convolutions) and is VPDPBUSD's unsigned operand; otherwise A does (Gemm/MatMul). With
// kRequantize the sums (plus c when accumulating) are requantized into requantization's int8
// output instead of stored to c.
template <size_t kRows, size_t kLanes, bool kActivationsInB, bool kRequantize = false>
ORKNN_TARGET_AVX512_VNNI void vnni_tile_rows(const Int8DotTile& tile,
                                             const Int8TileRequantization* requantization) {
  constexpr size_t kVectors = kLanes > 16 ? 2 : 1;
  // The ymm accumulators: the only ones with 8 lanes, the second vector's with 24.
  constexpr bool kNarrowLow = kLanes == 8;
  constexpr bool kNarrowHigh = kLanes == 24;
#define ORKNN_DECLARE(r)                    \
  __m512i low##r = _mm512_setzero_si512();  \
  __m512i high##r = _mm512_setzero_si512(); \
  __m256i narrow##r = _mm256_setzero_si256();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  const int8_t* a = tile.a;
  const int8_t* b = tile.b;
  PrefetchCursor prefetch = prefetch_cursor(tile.prefetch);
  for (size_t g = 0; g < tile.depth_groups;
       ++g, a += kTileRows * kGroupDepth, b += kTileColumns * kGroupDepth) {
    prefetch_line(prefetch);
    // Columns 0-15 of the group are the panel's first 64 bytes, 16-31 the next 64.
    __m512i b_low = _mm512_setzero_si512();
    __m512i b_high = _mm512_setzero_si512();
    __m256i b_narrow = _mm256_setzero_si256();
    if constexpr (kNarrowLow) b_narrow = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    if constexpr (!kNarrowLow) b_low = _mm512_loadu_si512(b);
    if constexpr (kNarrowHigh) {
      b_narrow = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64));
    }
    if constexpr (kLanes == 32) b_high = _mm512_loadu_si512(b + 64);
#define ORKNN_DOT(SIZE, sums, b_vector, a_vector)                       \
  (kActivationsInB ? _mm##SIZE##_dpbusd_epi32(sums, b_vector, a_vector) \
                   : _mm##SIZE##_dpbusd_epi32(sums, a_vector, b_vector))
#define ORKNN_MULTIPLY(r)                                                             \
  if constexpr (kRows > r) {                                                          \
    const int32_t group = load_group(a + 4 * r);                                      \
    if constexpr (kNarrowLow) {                                                       \
      narrow##r = ORKNN_DOT(256, narrow##r, b_narrow, _mm256_set1_epi32(group));      \
    } else {                                                                          \
      /* One broadcast: the ymm's is the zmm's low half. */                           \
      const __m512i a_group = _mm512_set1_epi32(group);                               \
      low##r = ORKNN_DOT(512, low##r, b_low, a_group);                                \
      if constexpr (kLanes == 32) high##r = ORKNN_DOT(512, high##r, b_high, a_group); \
      if constexpr (kNarrowHigh) {                                                    \
        narrow##r = ORKNN_DOT(256, narrow##r, b_narrow, low_half(a_group));           \
      }                                                                               \
    }                                                                                 \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_MULTIPLY)
#undef ORKNN_MULTIPLY
#undef ORKNN_DOT
  }
  if constexpr (kNarrowLow || kNarrowHigh) {
    ORKNN_FOR_EACH_ROW(ORKNN_WIDEN_NARROW)
  }
  // Masked loads and stores write exactly the real columns (and read nothing past them).
  const __mmask16 mask_low = lane_mask(tile.columns);
  const __mmask16 mask_high = lane_mask(tile.columns > 16 ? tile.columns - 16 : 0);
#define ORKNN_STORE(r)                                                                    \
  if constexpr (kRows > r) {                                                              \
    int32_t* c = tile.c + r * tile.c_stride;                                              \
    if (tile.accumulate) {                                                                \
      low##r = _mm512_add_epi32(low##r, _mm512_maskz_loadu_epi32(mask_low, c));           \
      if constexpr (kVectors > 1) {                                                       \
        high##r = _mm512_add_epi32(high##r, _mm512_maskz_loadu_epi32(mask_high, c + 16)); \
      }                                                                                   \
    }                                                                                     \
    _mm512_mask_storeu_epi32(c, mask_low, low##r);                                        \
    if constexpr (kVectors > 1) _mm512_mask_storeu_epi32(c + 16, mask_high, high##r);     \
  }
#define ORKNN_SAVE(r)                                      \
  if constexpr (kRows > r) {                               \
    sums[2 * r] = low##r;                                  \
    if constexpr (kVectors > 1) sums[2 * r + 1] = high##r; \
  }
  if constexpr (kRequantize) {
    // Through memory to a separate function: with the requantization inlined here, GCC 12
    // copied every accumulator between two registers in each depth step and spilled two (about
    // 36 extra instructions per 16 VPDPBUSD; in ResNet50 this tile took a quarter of the time).
    alignas(64) __m512i sums[2 * kTileRows];
    ORKNN_FOR_EACH_ROW(ORKNN_SAVE)
    requantize_tile_sums<kRows, kVectors>(tile, *requantization, sums);
  } else {
    ORKNN_FOR_EACH_ROW(ORKNN_STORE)
  }
#undef ORKNN_SAVE
#undef ORKNN_STORE
}

template <size_t kLanes, bool kActivationsInB, bool kRequantize>
ORKNN_TARGET_AVX512_VNNI void vnni_tile_lanes(const Int8DotTile& tile,
                                              const Int8TileRequantization* requantization) {
  switch (tile.rows) {
    case 1:
      return vnni_tile_rows<1, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    case 2:
      return vnni_tile_rows<2, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    case 3:
      return vnni_tile_rows<3, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    case 4:
      return vnni_tile_rows<4, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    case 5:
      return vnni_tile_rows<5, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    case 6:
      return vnni_tile_rows<6, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    case 7:
      return vnni_tile_rows<7, kLanes, kActivationsInB, kRequantize>(tile, requantization);
    default:
      return vnni_tile_rows<kTileRows, kLanes, kActivationsInB, kRequantize>(tile, requantization);
  }
}

// A last panel's lanes: the fewest ymm halves that hold its real columns (see kTileRows).
template <bool kActivationsInB, bool kRequantize = false>
ORKNN_TARGET_AVX512_VNNI void vnni_tile_with(const Int8DotTile& tile,
                                             const Int8TileRequantization* requantization) {
  if (tile.columns <= 8) {
    vnni_tile_lanes<8, kActivationsInB, kRequantize>(tile, requantization);
  } else if (tile.columns <= 16) {
    vnni_tile_lanes<16, kActivationsInB, kRequantize>(tile, requantization);
  } else if (tile.columns <= 24) {
    vnni_tile_lanes<24, kActivationsInB, kRequantize>(tile, requantization);
  } else {
    vnni_tile_lanes<32, kActivationsInB, kRequantize>(tile, requantization);
  }
}

template <bool kActivationsInB>
ORKNN_TARGET_AVX512_VNNI void vnni_tile(const Int8DotTile& tile) {
  vnni_tile_with<kActivationsInB>(tile, nullptr);
}

// The convolution tile of a last depth chunk, requantized in registers (Int8TileRequantization).
ORKNN_TARGET_AVX512_VNNI void vnni_requantized_tile(const Int8DotTile& tile,
                                                    const Int8TileRequantization& requantization) {
  vnni_tile_with<true, true>(tile, &requantization);
}

// Four rows of one 32-column panel (already flipped) interleaved into the panel's layout.
ORKNN_TARGET_AVX512_VNNI void store_quads(__m256i r0, __m256i r1, __m256i r2, __m256i r3,
                                          int8_t* out) {
  const __m256i pairs01_low = _mm256_unpacklo_epi8(r0, r1);   // columns 0-7 | 16-23
  const __m256i pairs01_high = _mm256_unpackhi_epi8(r0, r1);  // 8-15 | 24-31
  const __m256i pairs23_low = _mm256_unpacklo_epi8(r2, r3);
  const __m256i pairs23_high = _mm256_unpackhi_epi8(r2, r3);
  const __m256i quads0 = _mm256_unpacklo_epi16(pairs01_low, pairs23_low);    // 0-3 | 16-19
  const __m256i quads1 = _mm256_unpackhi_epi16(pairs01_low, pairs23_low);    // 4-7 | 20-23
  const __m256i quads2 = _mm256_unpacklo_epi16(pairs01_high, pairs23_high);  // 8-11 | 24-27
  const __m256i quads3 = _mm256_unpackhi_epi16(pairs01_high, pairs23_high);  // 12-15 | 28-31
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permute2x128_si256(quads0, quads1, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32),
                      _mm256_permute2x128_si256(quads2, quads3, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 64),
                      _mm256_permute2x128_si256(quads0, quads1, 0x31));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 96),
                      _mm256_permute2x128_si256(quads2, quads3, 0x31));
}

// The real columns of the panel starting at `first`.
ORKNN_TARGET_AVX512_VNNI __mmask32 column_mask(size_t columns, size_t first) {
  const size_t left = columns - first;
  return left >= 32 ? static_cast<__mmask32>(0xFFFFFFFFu)
                    : static_cast<__mmask32>((1u << left) - 1u);
}

// Four activation rows into 32-column panels (Int8GroupRows, G = 4, NR = 32): per panel one
// (masked) 32-byte load per row, the sign flip, and byte then 16-bit unpacks that put column
// j's four bytes together; the unpacks work within 128-bit lanes, so the last step reorders
// the lanes into columns 0-7, 8-15, 16-23, 24-31.
ORKNN_TARGET_AVX512_VNNI void pack_activation_quads(const Int8GroupRows& group) {
  const __m256i flip = _mm256_set1_epi8(group.flip);
  for (size_t first = 0, q = 0; first < group.columns; first += kTileColumns, ++q) {
    const __mmask32 mask = column_mask(group.columns, first);
    // Masked-off lanes load as 0 and stay 0 (the flip is masked too).
    const __m256i lane_flip = _mm256_maskz_mov_epi8(mask, flip);
    const __m256i r0 =
        _mm256_xor_si256(_mm256_maskz_loadu_epi8(mask, group.rows[0] + first), lane_flip);
    const __m256i r1 =
        _mm256_xor_si256(_mm256_maskz_loadu_epi8(mask, group.rows[1] + first), lane_flip);
    const __m256i r2 =
        _mm256_xor_si256(_mm256_maskz_loadu_epi8(mask, group.rows[2] + first), lane_flip);
    const __m256i r3 =
        _mm256_xor_si256(_mm256_maskz_loadu_epi8(mask, group.rows[3] + first), lane_flip);
    store_quads(r0, r1, r2, r3, group.out + q * group.panel_stride);
  }
}

// Row d of a tap group in panel q: the padding code, then each piece's lanes loaded from the
// plane (masked loads read only the piece's bytes and never fault on the others). Stride 2
// loads the piece's bytes of the 64 the 32 lanes span and keeps the even ones (vpmovwb
// truncates 16-bit words to their low byte).
template <size_t kStride>
ORKNN_TARGET_AVX512_VNNI __m256i tap_row(const Int8TapGroup& group, size_t d, size_t q,
                                         __m256i padding) {
  __m256i row = padding;
  const int8_t* plane = group.planes[d];
  const uint32_t end = group.first_piece[d][q + 1];
  for (uint32_t p = group.first_piece[d][q]; p < end; ++p) {
    const Int8TapPiece& piece = group.pieces[p];
    const auto lanes = static_cast<__mmask32>(piece.lanes);
    const int8_t* source = plane + piece.source;
    if constexpr (kStride == 1) {
      row = _mm256_mask_loadu_epi8(row, lanes, source);
    } else {
      const auto bytes = static_cast<__mmask64>(piece.bytes);
      row = _mm512_mask_cvtepi16_epi8(row, lanes, _mm512_maskz_loadu_epi8(bytes, source));
    }
  }
  return row;
}

template <size_t kStride>
ORKNN_TARGET_AVX512_VNNI void pack_taps_with_stride(const Int8TapGroup& group) {
  const __m256i flip = _mm256_set1_epi8(group.flip);
  const __m256i padding = _mm256_set1_epi8(group.pad);
  for (size_t first = 0, q = 0; first < group.columns; first += kTileColumns, ++q) {
    // Columns past the block are 0 after the flip.
    const __mmask32 mask = column_mask(group.columns, first);
    const __m256i r0 = _mm256_xor_si256(tap_row<kStride>(group, 0, q, padding), flip);
    const __m256i r1 = _mm256_xor_si256(tap_row<kStride>(group, 1, q, padding), flip);
    const __m256i r2 = _mm256_xor_si256(tap_row<kStride>(group, 2, q, padding), flip);
    const __m256i r3 = _mm256_xor_si256(tap_row<kStride>(group, 3, q, padding), flip);
    store_quads(_mm256_maskz_mov_epi8(mask, r0), _mm256_maskz_mov_epi8(mask, r1),
                _mm256_maskz_mov_epi8(mask, r2), _mm256_maskz_mov_epi8(mask, r3),
                group.out + q * group.panel_stride);
  }
}

// Int8TapGroup for G = 4, NR = 32, strides 1 and 2.
ORKNN_TARGET_AVX512_VNNI void pack_activation_taps(const Int8TapGroup& group) {
  if (group.stride == 1) {
    pack_taps_with_stride<1>(group);
  } else {
    pack_taps_with_stride<2>(group);
  }
}

// The direct convolution's tile (Int8DirectTile): kRows output channels by kLanes pixels (as
// vnni_tile_rows). Per tap the lanes' mask and plane offset are fixed, then per quad one masked
// load per vector (padding lanes keep the padding code) and one broadcast of A per row: the
// loads of the im2col tile, without the packing. The depth is never chunked, so the sums stay
// in registers until they are requantized (or stored, for the SiLU and large-multiplier rows).
template <size_t kRows, size_t kLanes>
ORKNN_TARGET_AVX512_VNNI void vnni_direct_rows(const Int8DirectTile& tile,
                                               const Int8TileRequantization* requantization) {
  constexpr size_t kVectors = kLanes > 16 ? 2 : 1;
  constexpr bool kNarrowLow = kLanes == 8;  // as in vnni_tile_rows
  constexpr bool kNarrowHigh = kLanes == 24;
#define ORKNN_DECLARE(r)                    \
  __m512i low##r = _mm512_setzero_si512();  \
  __m512i high##r = _mm512_setzero_si512(); \
  __m256i narrow##r = _mm256_setzero_si256();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  const __m512i padding = _mm512_set1_epi32(tile.padding);
  const __m256i narrow_padding = _mm256_set1_epi32(tile.padding);
  const int8_t* a = tile.a;
  PrefetchCursor prefetch = prefetch_cursor(tile.prefetch);
  for (size_t t = 0; t < tile.taps; ++t) {
    const int8_t* b = tile.planes + tile.tap_offsets[t];
    const auto lanes_low = static_cast<__mmask16>(tile.tap_lanes[t]);
    const auto lanes_high = static_cast<__mmask16>(tile.tap_lanes[t] >> 16);
    // The lanes of the ymm: the first 8 (kNarrowLow) or columns 16-23 (kNarrowHigh).
    const auto lanes_narrow = static_cast<__mmask8>(kNarrowLow ? lanes_low : lanes_high);
    // A tap whose lanes are all inside the plane loads B plainly, the same values from the same
    // addresses: a merge-masked load also takes a blend on the vector ports the dot products
    // use (as the float direct tile's masked loads did, session 19).
    const bool full =
        (kNarrowLow || lanes_low == 0xFFFF) &&
        (kLanes == 16 || (kLanes == 32 ? lanes_high == 0xFFFF : lanes_narrow == 0xFF));
    const int8_t* narrow_b = kNarrowLow ? b : b + 64;
    for (size_t q = 0; q < tile.quads;
         ++q, a += kTileRows * kGroupDepth, b += tile.quad_stride, narrow_b += tile.quad_stride) {
      prefetch_line(prefetch);
      __m512i b_low = padding;
      __m512i b_high = padding;
      __m256i b_narrow = narrow_padding;
      if constexpr (!kNarrowLow) {
        b_low = full ? _mm512_loadu_si512(b) : _mm512_mask_loadu_epi32(padding, lanes_low, b);
      }
      if constexpr (kLanes == 32) {
        b_high = full ? _mm512_loadu_si512(b + 64)
                      : _mm512_mask_loadu_epi32(padding, lanes_high, b + 64);
      }
      if constexpr (kNarrowLow || kNarrowHigh) {
        b_narrow = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(narrow_b))
                        : _mm256_mask_loadu_epi32(narrow_padding, lanes_narrow, narrow_b);
      }
#define ORKNN_MULTIPLY(r)                                                                  \
  if constexpr (kRows > r) {                                                               \
    const int32_t group = load_group(a + 4 * r);                                           \
    if constexpr (kNarrowLow) {                                                            \
      narrow##r = _mm256_dpbusd_epi32(narrow##r, b_narrow, _mm256_set1_epi32(group));      \
    } else {                                                                               \
      const __m512i a_group = _mm512_set1_epi32(group); /* the ymm's is its low half */    \
      low##r = _mm512_dpbusd_epi32(low##r, b_low, a_group);                                \
      if constexpr (kLanes == 32) high##r = _mm512_dpbusd_epi32(high##r, b_high, a_group); \
      if constexpr (kNarrowHigh) {                                                         \
        narrow##r = _mm256_dpbusd_epi32(narrow##r, b_narrow, low_half(a_group));           \
      }                                                                                    \
    }                                                                                      \
  }
      ORKNN_FOR_EACH_ROW(ORKNN_MULTIPLY)
#undef ORKNN_MULTIPLY
    }
  }
  if constexpr (kNarrowLow || kNarrowHigh) {
    ORKNN_FOR_EACH_ROW(ORKNN_WIDEN_NARROW)
  }
  const __mmask16 mask_low = lane_mask(tile.columns);
  const __mmask16 mask_high = lane_mask(tile.columns > 16 ? tile.columns - 16 : 0);
  if (requantization) {
    const TileEnd end = tile_end(*requantization, tile.columns);
#define ORKNN_REQUANTIZE(r)                                                                \
  if constexpr (kRows > r) {                                                               \
    requantize_tile_row<kVectors>(low##r, high##r, r, *requantization, end, tile.columns); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_REQUANTIZE)
#undef ORKNN_REQUANTIZE
    return;
  }
#define ORKNN_STORE(r)                                                                \
  if constexpr (kRows > r) {                                                          \
    int32_t* c = tile.c + r * tile.c_stride;                                          \
    _mm512_mask_storeu_epi32(c, mask_low, low##r);                                    \
    if constexpr (kVectors > 1) _mm512_mask_storeu_epi32(c + 16, mask_high, high##r); \
  }
  ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
}

template <size_t kLanes>
ORKNN_TARGET_AVX512_VNNI void vnni_direct_lanes(const Int8DirectTile& tile,
                                                const Int8TileRequantization* requantization) {
  switch (tile.rows) {
    case 1:
      return vnni_direct_rows<1, kLanes>(tile, requantization);
    case 2:
      return vnni_direct_rows<2, kLanes>(tile, requantization);
    case 3:
      return vnni_direct_rows<3, kLanes>(tile, requantization);
    case 4:
      return vnni_direct_rows<4, kLanes>(tile, requantization);
    case 5:
      return vnni_direct_rows<5, kLanes>(tile, requantization);
    case 6:
      return vnni_direct_rows<6, kLanes>(tile, requantization);
    case 7:
      return vnni_direct_rows<7, kLanes>(tile, requantization);
    default:
      return vnni_direct_rows<kTileRows, kLanes>(tile, requantization);
  }
}

ORKNN_TARGET_AVX512_VNNI void vnni_direct_tile(const Int8DirectTile& tile,
                                               const Int8TileRequantization* requantization) {
  if (tile.columns <= 8) {
    vnni_direct_lanes<8>(tile, requantization);
  } else if (tile.columns <= 16) {
    vnni_direct_lanes<16>(tile, requantization);
  } else if (tile.columns <= 24) {
    vnni_direct_lanes<24>(tile, requantization);
  } else {
    vnni_direct_lanes<32>(tile, requantization);
  }
}

// Int8QuadRow: 32 pixels per step, one (masked) load per channel row (stride 2: the 64 bytes
// the pixels span, the even ones kept by vpmovwb), the sign flip, and store_quads' unpacks,
// stored under the byte mask of the real pixels. Other strides take the plain C++ loop.
ORKNN_TARGET_AVX512_VNNI void interleave_quad_row(const Int8QuadRow& row) {
  if (row.stride > 2) {
    portable_interleave_quad_row(row);
    return;
  }
  const __m256i flip = _mm256_set1_epi8(row.flip);
  alignas(64) int8_t staging[4 * kTileColumns];
  for (size_t first = 0; first < row.count; first += kTileColumns) {
    const size_t left = row.count - first;
    const __mmask32 mask = column_mask(row.count, first);
    __m256i r[4];
    for (size_t d = 0; d < 4; ++d) {
      const int8_t* source = row.rows[d] + first * row.stride;
      if (row.stride == 1) {
        r[d] = _mm256_maskz_loadu_epi8(mask, source);
      } else {
        // Bytes 2j for the real pixels j (the odd byte after the last one is not read).
        const __mmask64 bytes =
            (left >= kTileColumns ? ~__mmask64{0} : (__mmask64{1} << (2 * left)) - 1) &
            0x5555555555555555ull;
        r[d] = _mm512_maskz_cvtepi16_epi8(~__mmask32{0}, _mm512_maskz_loadu_epi8(bytes, source));
      }
      r[d] = _mm256_xor_si256(r[d], flip);
    }
    int8_t* out = row.out + first * 4;
    if (left >= kTileColumns) {
      store_quads(r[0], r[1], r[2], r[3], out);
    } else {
      store_quads(r[0], r[1], r[2], r[3], staging);
      const size_t bytes = left * 4;  // < 128
      const __mmask64 first_mask = bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
      _mm512_mask_storeu_epi8(out, first_mask, _mm512_load_si512(staging));
      if (bytes > 64) {
        _mm512_mask_storeu_epi8(out + 64, (__mmask64{1} << (bytes - 64)) - 1,
                                _mm512_load_si512(staging + 64));
      }
    }
  }
}

// requantize_row's small-multiplier path (x86/avx2_requantization.cc) with the channel's
// constant added first, 16 sums at a time, with masked loads and stores for the tail (the maskz
// forms with every lane set: GCC 12's plain forms warn about their undefined source). When the
// 16 real sums are below row.float_bound in magnitude (two operations, as the tiles'
// row_in_float), in float as Int8TileRequantization::in_float proves exact: one FMA rounds the
// product half to even, the values (zero point included) are exact int32 below 2^22 + 128, then
// the clamp and the narrowing. Otherwise on two halves of eight doubles: int32 to double is
// exact, one double product, vcvtpd2dq rounds half to even in the default MXCSR mode
// (nearbyint), |product| < 2^30 so the zero point and clamp are exact in int32, and the
// saturating narrowing (vpmovsdb) sees values already within int8.
ORKNN_TARGET_AVX512_VNNI void requantize_offset_row(const RequantizeRow& row, int32_t offset) {
  const __m512i constant = _mm512_set1_epi32(offset);
  const float multiplier = row.multipliers[0];
  const __m512d factor = _mm512_set1_pd(static_cast<double>(multiplier));
  const __m512 float_factor = _mm512_set1_ps(multiplier);
  const __m512i bound = _mm512_set1_epi32(static_cast<int32_t>(row.float_bound));
  const __m512i bits_bias = _mm512_set1_epi32(0x4B400000 - row.output_zero_point);
  const __m256i zero_point = _mm256_set1_epi32(row.output_zero_point);
  // min(max(v, low), high) with low > high gives high, as the reference's clamp does.
  const int32_t low =
      row.output_minimum <= row.output_maximum ? row.output_minimum : row.output_maximum;
  const __m512i minimum = _mm512_set1_epi32(low);
  const __m512i maximum = _mm512_set1_epi32(row.output_maximum);
  const __m256i minimum8 = _mm256_set1_epi32(low);
  const __m256i maximum8 = _mm256_set1_epi32(row.output_maximum);
  const int32_t* accumulators = row.accumulators;
  int8_t* output = row.output;
  const size_t count = row.count;
  for (size_t i = 0; i < count; i += 16) {
    const size_t left = count - i;
    const __mmask16 mask =
        left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
    const __m512i sums =
        _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, accumulators + i), constant);
    // The lanes past the row are zeroed (the constant alone there must not send it to double).
    if (_mm512_cmpge_epu32_mask(_mm512_maskz_abs_epi32(mask, sums), bound) == 0) {
      __m512i values = float_rounded_products(sums, float_factor, bits_bias);
      values =
          _mm512_maskz_min_epi32(0xFFFF, _mm512_maskz_max_epi32(0xFFFF, values, minimum), maximum);
      _mm_mask_storeu_epi8(output + i, mask, _mm512_maskz_cvtsepi32_epi8(0xFFFF, values));
      continue;
    }
    for (size_t half = 0; half < 2; ++half) {
      const auto lanes = static_cast<__mmask8>(mask >> (8 * half));
      if (lanes == 0) break;
      const __m256i eight = half == 0 ? _mm512_maskz_extracti64x4_epi64(0xFF, sums, 0)
                                      : _mm512_maskz_extracti64x4_epi64(0xFF, sums, 1);
      __m256i rounded = _mm512_maskz_cvtpd_epi32(
          0xFF, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xFF, eight), factor));
      rounded = _mm256_add_epi32(rounded, zero_point);
      rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, minimum8), maximum8);
      _mm256_mask_cvtsepi32_storeu_epi8(output + i + 8 * half, lanes, rounded);
    }
  }
}

}  // namespace

const DotProductKernels& avx512_vnni_kernels() {
  static const DotProductKernels kernels{"avx512",
                                         kTileRows,
                                         kTileColumns,
                                         kGroupDepth,
                                         128,
                                         vnni_tile<true>,
                                         vnni_tile<false>,
                                         pack_activation_quads,
                                         pack_activation_taps,
                                         2,
                                         requantize_offset_row,
                                         vnni_requantized_tile,
                                         avx512_micro_kernels,
                                         vnni_direct_tile,
                                         interleave_quad_row,
                                         kTileColumns};
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
