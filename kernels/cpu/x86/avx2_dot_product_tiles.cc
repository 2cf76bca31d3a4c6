// The AVX2 int8 convolution tiles of the "avx2" dot-product table
// (optimized/dot_product_kernels.h): VPMADDUBSW + VPMADDWD (by ones) + VPADDD, the mix ONNX
// Runtime's u8s8 GEMM runs, which measured 1.3x the int16-pair GEMM's VPMADDWD + VPADDD on Zen 3
// (docs/cpu-kernels.md, session 9). Per int32 lane: VPMADDUBSW multiplies four unsigned activation
// bytes (x + 128, the packing flips their sign bits) by four signed weight bytes (w - zw) and adds
// the products of each pair (bytes 0-1, 2-3) into an int16 lane, with saturation; VPMADDWD by ones
// adds the two int16 pair sums exactly into int32; VPADDD accumulates modulo 2^32.
//
// Exactness: the saturation is the only inexact step, and it never fires. The convolution driver
// packs every pair of A so that its two weights have opposite signs or |w0| + |w1| <= 128
// (dot_product_pair_split.h): then a pair sum is at most 255 x 128 = 32640 in magnitude with
// same signs, and within [-128 x 255, 127 x 255] = [-32640, 32385] with opposite signs, inside
// int16 either way. What the split took off A comes as Int8PairCorrection: a row's group with
// weights each of magnitude at most 127 and alone in their pair (the other byte 0), so their
// pair sums are at most 255 x 127 and exact too; the tile adds their products with the same
// three instructions. Everything else is the avx512 tile's argument (dot_product_kernels.h): the
// group sums are exact, the accumulation wraps modulo 2^32 as the reference's int32 sum does.
//
// Every function carries its instruction set as a target attribute, so the file is compiled for
// the baseline x86-64 and the dispatcher calls it only after cpu_features reported AVX2 and FMA
// (with the OS saving the YMM state). No standard-library templates or inline functions here,
// only intrinsics and this file's functions (a standard inline instantiated with these encodings
// could be kept by the linker for the whole program; see avx512_vnni_tiles.cc).
#include <immintrin.h>

#include "optimized/dot_product_kernels.h"

#define ORKNN_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace orknn::kernels::cpu::optimized {
namespace {

// MR x NR = 6 x 16: 12 ymm accumulators (two per row), two B vectors (8 columns x 4 bytes each)
// per depth group, one broadcast of A per row, a temporary and the ones of VPMADDWD: 17 values
// for 16 registers, so GCC 12 keeps one accumulator on the stack (a load and a store per
// group; the forms without that spill measured slower, docs/cpu-kernels.md session 12). 6
// divides the driver's 144-row blocks and 16 its 192-column blocks. Per group: 2 + 6 loads,
// 12 VPMADDUBSW, 12 VPMADDWD, 12 VPADDD for 384 multiply-adds; about 174 GOPS on Zen 3 against
// 147 for the int16-pair tile (VPMADDWD + VPADDD), 1.18x.
constexpr size_t kTileRows = 6;
static_assert(kTileRows == 6, "ORKNN_FOR_EACH_ROW and pair_tile_vectors name 6 rows");
constexpr size_t kTileColumns = 16;
constexpr size_t kGroupDepth = 4;
constexpr size_t kPanelGroupBytes = kTileColumns * kGroupDepth;  // one depth group of a B panel

// The accumulators are named variables (GCC keeps arrays of vectors in memory); rows past
// kRows are compiled out with `if constexpr`.
#define ORKNN_FOR_EACH_ROW(MACRO) MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5)

// Four packed bytes as one int32 lane value (the builtin, not std::memcpy: see the top).
ORKNN_TARGET_AVX2 int32_t load_group(const int8_t* bytes) {
  int32_t value;
  __builtin_memcpy(&value, bytes, sizeof(value));
  return value;
}

// One depth group of 8 columns times one row's four weights: per int32 lane the sum of the
// four products (exact when both pair sums fit int16, see the top).
ORKNN_TARGET_AVX2 __m256i group_products(__m256i b, __m256i a_group, __m256i ones) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(b, a_group), ones);
}

// Lanes j < count of a column vector (count 0..8), for vpmaskmovd.
ORKNN_TARGET_AVX2 __m256i lane_mask(size_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(count)), lanes);
}

// Adds the tile's corrections (Int8PairCorrection) to its rows' sums, sums[2r] and
// sums[2r + 1] being row r's two column vectors: the correction's four weights broadcast
// against its group of this B panel (always NR columns wide), the tile's three instructions.
// Rare (a few percent of a row's groups), so kept out of the tile's loop; the row is dynamic,
// so they go through the tile's sums in memory, before those are stored to c (adding them to c
// after the store, with masked loads and stores for the last panel, measured 152 GOPS at 2% of
// the groups against 170 without; this form about 4% below the tile without corrections).
ORKNN_TARGET_AVX2 void add_corrections(const Int8DotTile& tile, __m256i* sums) {
  const __m256i ones = _mm256_set1_epi16(1);
  const Int8PairCorrection* correction = tile.corrections;
  const Int8PairCorrection* const end = correction + tile.correction_count;
  for (; correction != end; ++correction) {
    if (correction->row >= tile.rows) continue;  // A's padding rows have no real sums
    const int8_t* b = tile.b + (correction->group - tile.first_group) * kPanelGroupBytes;
    const __m256i a_group = _mm256_set1_epi32(load_group(correction->weights));
    __m256i* row = sums + 2 * correction->row;
    row[0] = _mm256_add_epi32(
        row[0],
        group_products(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)), a_group, ones));
    row[1] = _mm256_add_epi32(
        row[1], group_products(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32)),
                               a_group, ones));
  }
}

// Stores one column vector of a row (adding c's when accumulating): a plain load and store when
// all 8 lanes are real, vpmaskmovd otherwise.
ORKNN_TARGET_AVX2 void store_vector(int32_t* c, __m256i sums, bool accumulate, bool whole,
                                    __m256i mask) {
  if (whole) {
    __m256i* target = reinterpret_cast<__m256i*>(c);
    if (accumulate) sums = _mm256_add_epi32(sums, _mm256_loadu_si256(target));
    _mm256_storeu_si256(target, sums);
  } else {
    if (accumulate) sums = _mm256_add_epi32(sums, _mm256_maskload_epi32(c, mask));
    _mm256_maskstore_epi32(c, mask, sums);
  }
}

// The tile's end: sums[2r] and sums[2r + 1] are row r's column vectors; the corrections are
// added to them, then they are stored to c under the real rows and columns (plus c when
// accumulating). A separate function, the sums through memory: with the stores inlined after
// the loop, GCC 12 kept copies of the accumulators for each store path and spilled six of them
// in every depth step of the 6 x 16 loop.
__attribute__((noinline)) ORKNN_TARGET_AVX2 void store_tile_sums(const Int8DotTile& tile,
                                                                 __m256i* sums) {
  if (tile.correction_count) add_corrections(tile, sums);
  const size_t columns = tile.columns < kTileColumns ? tile.columns : kTileColumns;
  const bool whole_low = columns >= 8, whole_high = columns == kTileColumns;
  const __m256i mask_low = lane_mask(columns < 8 ? columns : 8);
  const __m256i mask_high = lane_mask(columns > 8 ? columns - 8 : 0);
  const size_t rows = tile.rows < kTileRows ? tile.rows : kTileRows;
  for (size_t r = 0; r < rows; ++r) {
    int32_t* c = tile.c + r * tile.c_stride;
    store_vector(c, sums[2 * r], tile.accumulate, whole_low, mask_low);
    if (columns > 8) store_vector(c + 8, sums[2 * r + 1], tile.accumulate, whole_high, mask_high);
  }
}

// ---- The requantizing tile (Int8TileRequantization) ----
// Its results equal requantize_offset_row's / the reference's bit for bit: per row the sums (plus
// c when accumulating, plus the corrections) get the row's constant added modulo 2^32, then
//   clamp(round_half_to_even(double(acc) x double(m)) + zero point)
// on one of two paths, with the same bytes:
// - double (avx2_requantization.cc's requantize8_small): int32 -> double is exact, the product of
//   a 32-bit and a 24-bit significand is exact in double, vcvtpd2dq rounds it half to even in the
//   default MXCSR mode (nearbyint's rounding); the driver uses this tile only with small
//   multipliers (|m| <= 0.49, |zero point| < 2^20), so |product| < 2^30 and the zero point and
//   the clamp are exact in int32;
// - float, when Int8TileRequantization::in_float promises every |acc| <= 2^24 and |acc x m| <=
//   2^21, or when float_bounds says so for the row's real sums: fma(float(acc), m, 1.5 x 2^23)
//   rounds the exact product plus 1.5 x 2^23 (in [2^23, 2^24), where floats are the integers)
//   half to even, so its bits minus 1.5 x 2^23's are round_half_even(acc x m) (the proof at
//   Int8TileRequantization::in_float); the zero point is subtracted from that constant.
// Then two saturating narrowings and the clamp (min(max(v, low), high), with low > high giving
// high as the reference's clamp does) on the bytes, two rows at a time (clamp_two_rows).

// What a requantizing tile's rows share.
struct TileRequantization {
  __m256i zero_point;
  __m256i bits_bias;  // 1.5 x 2^23's bits less the zero point
  __m256i minimum;    // bytes: the clamp's bounds saturated to int8 (clamp_two_rows)
  __m256i maximum;
  __m256i mask_low;  // the real columns of the first vector
  __m256i mask_high;
};

// Two rows' 16 int32 results each (zero point added), `first`'s in `a`, then `b`: narrowed
// with saturation, clamped and put in column order, row a's 16 bytes in the low half and row
// b's in the high half. The clamp runs on the saturated bytes against bounds saturated the
// same way: saturation is monotone, so it commutes with min and max and this equals the
// reference's clamp on int32 followed by the narrowing (low > high still gives high). Two rows
// share the packs, the clamp and the one permutation (the one-row form took five shuffles and
// four int32 min/max per row).
ORKNN_TARGET_AVX2 __m256i clamp_two_rows(__m256i first_a, __m256i second_a, __m256i first_b,
                                         __m256i second_b, const TileRequantization& k) {
  // packs works within 128-bit lanes. In 4-byte units (columns of four):
  // [a0-3 a8-11 b0-3 b8-11 | a4-7 a12-15 b4-7 b12-15].
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(first_a, second_a),
                                           _mm256_packs_epi32(first_b, second_b));
  const __m256i clamped = _mm256_min_epi8(_mm256_max_epi8(bytes, k.minimum), k.maximum);
  return _mm256_permutevar8x32_epi32(clamped, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Eight sums: round_half_even(acc x m) + zero point through one FMA (the float path).
ORKNN_TARGET_AVX2 __m256i float_rounded(__m256i sums, __m256 multiplier, __m256i bits_bias) {
  const __m256 shifted = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), multiplier,
                                         _mm256_set1_ps(12582912.0f));  // 1.5 x 2^23
  return _mm256_sub_epi32(_mm256_castps_si256(shifted), bits_bias);
}

// Eight sums: round_half_even(acc x m) + zero point in double (four lanes at a time).
ORKNN_TARGET_AVX2 __m256i double_rounded(__m256i sums, __m256d multiplier, __m256i zero_point) {
  const __m128i low = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(sums)), multiplier));
  const __m128i high = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(sums, 1)), multiplier));
  return _mm256_add_epi32(_mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1),
                          zero_point);
}

// Whether row r's sums (its constant added) take the float path: promised for the block
// (in_float), or every real column's |sum| below the row's float bound (float_bounds; 0: none).
// The lanes past the real columns are zeroed first (they hold the constant alone or padding
// sums, and are not stored). Unsigned, because |INT32_MIN| stays INT32_MIN: 2^31, beyond every
// bound.
ORKNN_TARGET_AVX2 bool row_in_float(const Int8TileRequantization& requantization, size_t r,
                                    __m256i low, __m256i high, const TileRequantization& k) {
  if (requantization.in_float) return true;
  if (!requantization.float_bounds) return false;
  const uint32_t bound = requantization.float_bounds[r];
  if (bound == 0) return false;
  const __m256i limit = _mm256_set1_epi32(static_cast<int32_t>(bound - 1));
  const __m256i largest = _mm256_max_epu32(_mm256_and_si256(_mm256_abs_epi32(low), k.mask_low),
                                           _mm256_and_si256(_mm256_abs_epi32(high), k.mask_high));
  // largest <= limit in every lane: max(largest, limit) == limit.
  const __m256i within = _mm256_cmpeq_epi32(_mm256_max_epu32(largest, limit), limit);
  return _mm256_movemask_epi8(within) == -1;
}

// Loads one column vector of c (vpmaskmovd when partial: nothing past the real columns read).
ORKNN_TARGET_AVX2 __m256i load_vector(const int32_t* c, bool whole, __m256i mask) {
  return whole ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c))
               : _mm256_maskload_epi32(c, mask);
}

// Row r's 16 requantized results before the narrowing: its sums (constant included) plus c
// when accumulating, on the float path when row_in_float allows, else in double.
ORKNN_TARGET_AVX2 void requantize_row_sums(const Int8DotTile& tile,
                                           const Int8TileRequantization& requantization,
                                           const TileRequantization& k, size_t r,
                                           const __m256i* sums, __m256i& first, __m256i& second) {
  const size_t columns = tile.columns < kTileColumns ? tile.columns : kTileColumns;
  __m256i low = sums[2 * r];
  __m256i high = sums[2 * r + 1];
  if (tile.accumulate) {
    const int32_t* c = tile.c + r * tile.c_stride;
    low = _mm256_add_epi32(low, load_vector(c, columns >= 8, k.mask_low));
    if (columns > 8) {
      high = _mm256_add_epi32(high, load_vector(c + 8, columns == kTileColumns, k.mask_high));
    }
  }
  const float multiplier = requantization.multipliers[r];
  if (row_in_float(requantization, r, low, high, k)) {
    const __m256 factor = _mm256_set1_ps(multiplier);
    first = float_rounded(low, factor, k.bits_bias);
    second = float_rounded(high, factor, k.bits_bias);
  } else {
    const __m256d factor = _mm256_set1_pd(static_cast<double>(multiplier));
    first = double_rounded(low, factor, k.zero_point);
    second = columns > 8 ? double_rounded(high, factor, k.zero_point) : first;
  }
}

// Stores one row's 16 bytes: whole, or its real columns through a staging copy.
ORKNN_TARGET_AVX2 void store_row_bytes(int8_t* out, __m128i bytes, size_t columns) {
  if (columns == kTileColumns) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    alignas(16) int8_t staging[kTileColumns];
    _mm_store_si128(reinterpret_cast<__m128i*>(staging), bytes);
    __builtin_memcpy(out, staging, columns);
  }
}

// The requantizing tile's end (pair_tile_rows with kRequantize): sums[2r] and sums[2r + 1] are
// row r's column vectors, which started from the row's constant; the corrections and c (when
// accumulating) are added, then the rows are requantized two at a time (clamp_two_rows) into
// the output's real columns. Through memory and a separate function, as store_tile_sums.
__attribute__((noinline)) ORKNN_TARGET_AVX2 void requantize_tile_sums(
    const Int8DotTile& tile, const Int8TileRequantization& requantization, __m256i* sums) {
  if (tile.correction_count) add_corrections(tile, sums);
  const size_t columns = tile.columns < kTileColumns ? tile.columns : kTileColumns;
  TileRequantization k;
  k.zero_point = _mm256_set1_epi32(requantization.output_zero_point);
  k.bits_bias = _mm256_set1_epi32(0x4B400000 - requantization.output_zero_point);
  const auto saturate = [](int32_t v) { return v < -128 ? -128 : v > 127 ? 127 : v; };
  k.minimum = _mm256_set1_epi8(static_cast<int8_t>(saturate(requantization.output_minimum)));
  k.maximum = _mm256_set1_epi8(static_cast<int8_t>(saturate(requantization.output_maximum)));
  k.mask_low = lane_mask(columns < 8 ? columns : 8);
  k.mask_high = lane_mask(columns > 8 ? columns - 8 : 0);
  const size_t rows = tile.rows < kTileRows ? tile.rows : kTileRows;
  for (size_t r = 0; r < rows; r += 2) {
    __m256i first_a, second_a, first_b, second_b;
    requantize_row_sums(tile, requantization, k, r, sums, first_a, second_a);
    const bool pair = r + 1 < rows;
    if (pair) {
      requantize_row_sums(tile, requantization, k, r + 1, sums, first_b, second_b);
    } else {
      first_b = first_a;
      second_b = second_a;
    }
    const __m256i bytes = clamp_two_rows(first_a, second_a, first_b, second_b, k);
    int8_t* out = requantization.output + r * requantization.output_stride;
    store_row_bytes(out, _mm256_castsi256_si128(bytes), columns);
    if (pair) {
      store_row_bytes(out + requantization.output_stride, _mm256_extracti128_si256(bytes, 1),
                      columns);
    }
  }
}

// kRows real rows (1..kTileRows) and kVectors column vectors (1: at most 8 real columns): the
// sums of the depth groups in registers, then store_tile_sums, or with kRequantize
// requantize_tile_sums into requantization's int8 output (c is not written).
template <size_t kRows, size_t kVectors, bool kRequantize>
ORKNN_TARGET_AVX2 void pair_tile_rows(const Int8DotTile& tile,
                                      const Int8TileRequantization* requantization) {
  // The requantizing tile starts each row from its constant (the bias and zero-point term,
  // added modulo 2^32 like every other term), which saves two additions per row at the end.
#define ORKNN_DECLARE(r)                                      \
  __m256i low##r = _mm256_setzero_si256();                    \
  if constexpr (kRequantize && kRows > r) {                   \
    low##r = _mm256_set1_epi32(requantization->constants[r]); \
  }                                                           \
  __m256i high##r = low##r;
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* a = tile.a;
  const int8_t* b = tile.b;
  for (size_t g = 0; g < tile.depth_groups;
       ++g, a += kTileRows * kGroupDepth, b += kPanelGroupBytes) {
    const __m256i b_low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b_high = kVectors > 1
                               ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32))
                               : _mm256_setzero_si256();
#define ORKNN_MULTIPLY(r)                                                         \
  if constexpr (kRows > r) {                                                      \
    const __m256i a_group = _mm256_set1_epi32(load_group(a + 4 * r));             \
    low##r = _mm256_add_epi32(low##r, group_products(b_low, a_group, ones));      \
    if constexpr (kVectors > 1) {                                                 \
      high##r = _mm256_add_epi32(high##r, group_products(b_high, a_group, ones)); \
    }                                                                             \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_MULTIPLY)
#undef ORKNN_MULTIPLY
  }
  alignas(32) __m256i sums[2 * kTileRows];
#define ORKNN_SAVE(r)          \
  if constexpr (kRows > r) {   \
    sums[2 * r] = low##r;      \
    sums[2 * r + 1] = high##r; \
  }
  ORKNN_FOR_EACH_ROW(ORKNN_SAVE)
#undef ORKNN_SAVE
  if constexpr (kRequantize) {
    requantize_tile_sums(tile, *requantization, sums);
  } else {
    store_tile_sums(tile, sums);
  }
}

template <size_t kVectors, bool kRequantize>
ORKNN_TARGET_AVX2 void pair_tile_vectors(const Int8DotTile& tile,
                                         const Int8TileRequantization* requantization) {
  switch (tile.rows) {
    case 1:
      return pair_tile_rows<1, kVectors, kRequantize>(tile, requantization);
    case 2:
      return pair_tile_rows<2, kVectors, kRequantize>(tile, requantization);
    case 3:
      return pair_tile_rows<3, kVectors, kRequantize>(tile, requantization);
    case 4:
      return pair_tile_rows<4, kVectors, kRequantize>(tile, requantization);
    case 5:
      return pair_tile_rows<5, kVectors, kRequantize>(tile, requantization);
    default:
      return pair_tile_rows<kTileRows, kVectors, kRequantize>(tile, requantization);
  }
}

// ---- The column tile: a last panel of a few real columns ----
// The 6 x 16 tile's one-vector form still runs 8 columns: on a 7x7 plane (49 = 3 x 16 + 1
// pixels) the last panel costs a seventh of the layer's multiplies for one pixel in 49. The column
// tile puts A's rows in the lanes instead: a panel's four depth groups are 96 contiguous bytes
// of A (6 rows x 4 bytes per group), three vectors whose int32 lane i holds row i % 6 of group
// (8v + i) / 6; the column's four B groups are spread to match (vpermd) and the same three
// instructions per vector give every (row, group) its four products, the same byte pairs as the
// 6 x 16 tile (so the same pair split keeps them exact). Per column and four groups: 6
// multiplies against the one-vector form's 48 (it computes 8 columns), plus the B spread. The
// lanes of one row are summed at the end (modulo 2^32, as every other sum) and the tile's
// common end (corrections, c, requantization) runs on them as on any tile of those columns.
// Measured on bench_kernels' 7x7 pointwise layers: 0.96-1.01x the time with the one-vector form
// (docs/cpu-kernels.md, "Session 13: int8 pointwise convolutions on 7x7 and 14x14 planes"), far
// from the seventh the multiplies promise: the last panel was not where those layers lost time.

// Columns up to this many take the column tile (one: 7x7 planes; the 4 of 14x14 planes would
// need 24 multiplies per four groups against the one-vector form's 48, plus four B spreads).
constexpr size_t kColumnTileColumns = 1;

// Int32 lane i of the three vectors of four groups reads B group (8v + i) / 6.
ORKNN_TARGET_AVX2 void spread_groups(__m128i groups, __m256i& first, __m256i& second,
                                     __m256i& third) {
  const __m256i wide = _mm256_castsi128_si256(groups);
  first = _mm256_permutevar8x32_epi32(wide, _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 1, 1));
  second = _mm256_permutevar8x32_epi32(wide, _mm256_setr_epi32(1, 1, 1, 1, 2, 2, 2, 2));
  third = _mm256_permutevar8x32_epi32(wide, _mm256_setr_epi32(2, 2, 3, 3, 3, 3, 3, 3));
}

// Column j's sums of the tile's groups: sums[r] for tile rows r < 6 (A's padding rows are 0).
ORKNN_TARGET_AVX2 void column_sums(const Int8DotTile& tile, size_t j, int32_t* sums) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i first = _mm256_setzero_si256();
  __m256i second = _mm256_setzero_si256();
  __m256i third = _mm256_setzero_si256();
  const int8_t* a = tile.a;
  const int8_t* b = tile.b + j * kGroupDepth;
  constexpr size_t kStep = 4;  // groups per three vectors of A
  constexpr size_t kStepBytes = kStep * kTileRows * kGroupDepth;
  size_t g = 0;
  for (; g + kStep <= tile.depth_groups;
       g += kStep, a += kStepBytes, b += kStep * kPanelGroupBytes) {
    __m128i groups = _mm_cvtsi32_si128(load_group(b));
    groups = _mm_insert_epi32(groups, load_group(b + kPanelGroupBytes), 1);
    groups = _mm_insert_epi32(groups, load_group(b + 2 * kPanelGroupBytes), 2);
    groups = _mm_insert_epi32(groups, load_group(b + 3 * kPanelGroupBytes), 3);
    __m256i b0, b1, b2;
    spread_groups(groups, b0, b1, b2);
    first = _mm256_add_epi32(
        first, group_products(b0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)), ones));
    second = _mm256_add_epi32(
        second,
        group_products(b1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32)), ones));
    third = _mm256_add_epi32(
        third,
        group_products(b2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64)), ones));
  }
  if (g < tile.depth_groups) {
    // The last 1-3 groups: B's missing groups are 0 and A is read under a mask (nothing past
    // the panel's groups: the last panel ends the packed weights).
    const size_t left = tile.depth_groups - g;
    __m128i groups = _mm_cvtsi32_si128(load_group(b));
    if (left > 1) groups = _mm_insert_epi32(groups, load_group(b + kPanelGroupBytes), 1);
    if (left > 2) groups = _mm_insert_epi32(groups, load_group(b + 2 * kPanelGroupBytes), 2);
    __m256i b0, b1, b2;
    spread_groups(groups, b0, b1, b2);
    const size_t lanes = left * kTileRows;  // int32 lanes of A to read
    const auto a32 = reinterpret_cast<const int*>(a);
    first = _mm256_add_epi32(
        first,
        group_products(b0, _mm256_maskload_epi32(a32, lane_mask(lanes < 8 ? lanes : 8)), ones));
    if (lanes > 8) {
      second = _mm256_add_epi32(
          second,
          group_products(
              b1, _mm256_maskload_epi32(a32 + 8, lane_mask(lanes - 8 < 8 ? lanes - 8 : 8)), ones));
    }
    if (lanes > 16) {
      third = _mm256_add_epi32(
          third, group_products(b2, _mm256_maskload_epi32(a32 + 16, lane_mask(lanes - 16)), ones));
    }
  }
  alignas(32) uint32_t lanes[3 * 8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), first);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 8), second);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 16), third);
  for (size_t r = 0; r < kTileRows; ++r) {
    sums[r] = static_cast<int32_t>(lanes[r] + lanes[r + 6] + lanes[r + 12] + lanes[r + 18]);
  }
}

// The tile of at most kColumnTileColumns real columns: column_sums per column into the lanes of
// the 6 x 16 tile's sums (the requantizing form's started from the row constants), then its end.
template <bool kRequantize>
ORKNN_TARGET_AVX2 void column_tile(const Int8DotTile& tile,
                                   const Int8TileRequantization* requantization) {
  alignas(32) int32_t rows[kTileRows][kTileColumns] = {};
  for (size_t j = 0; j < tile.columns; ++j) {
    int32_t sums[kTileRows];
    column_sums(tile, j, sums);
    for (size_t r = 0; r < kTileRows; ++r) {
      const int32_t start = kRequantize && r < tile.rows ? requantization->constants[r] : 0;
      rows[r][j] =
          static_cast<int32_t>(static_cast<uint32_t>(sums[r]) + static_cast<uint32_t>(start));
    }
  }
  alignas(32) __m256i vectors[2 * kTileRows];
  for (size_t r = 0; r < kTileRows; ++r) {
    vectors[2 * r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(rows[r]));
    vectors[2 * r + 1] = _mm256_load_si256(reinterpret_cast<const __m256i*>(rows[r] + 8));
  }
  if constexpr (kRequantize) {
    requantize_tile_sums(tile, *requantization, vectors);
  } else {
    store_tile_sums(tile, vectors);
  }
}

// A last panel of at most 8 real columns runs on one vector per row, of at most
// kColumnTileColumns on the column tile (unless kColumnTiles is false: the benchmark's form).
template <bool kRequantize, bool kColumnTiles = true>
ORKNN_TARGET_AVX2 void pair_tile_with(const Int8DotTile& tile,
                                      const Int8TileRequantization* requantization) {
  if (kColumnTiles && tile.columns <= kColumnTileColumns) {
    column_tile<kRequantize>(tile, requantization);
  } else if (tile.columns <= 8) {
    pair_tile_vectors<1, kRequantize>(tile, requantization);
  } else {
    pair_tile_vectors<2, kRequantize>(tile, requantization);
  }
}

// The convolution tile (activations in B).
ORKNN_TARGET_AVX2 void pair_tile(const Int8DotTile& tile) {
  pair_tile_with<false>(tile, nullptr);
}

// The convolution tile of a last depth chunk, requantized (Int8TileRequantization).
ORKNN_TARGET_AVX2 void pair_requantized_tile(const Int8DotTile& tile,
                                             const Int8TileRequantization& requantization) {
  pair_tile_with<true>(tile, &requantization);
}

// The same two without the column tile (avx2_pair_kernels_before_small_planes).
ORKNN_TARGET_AVX2 void pair_tile_vectors_only(const Int8DotTile& tile) {
  pair_tile_with<false, false>(tile, nullptr);
}
ORKNN_TARGET_AVX2 void pair_requantized_tile_vectors_only(
    const Int8DotTile& tile, const Int8TileRequantization& requantization) {
  pair_tile_with<true, false>(tile, &requantization);
}

// Four rows of 32 columns (already flipped) interleaved into two 16-column panels' layout:
// column j's four bytes together. The unpacks work within 128-bit lanes, so the low lane holds
// the first panel's columns and the high lane the second's; the lane permutes put each panel's
// 64 bytes in column order.
ORKNN_TARGET_AVX2 void store_two_panels(__m256i r0, __m256i r1, __m256i r2, __m256i r3,
                                        int8_t* first, int8_t* second, bool has_second) {
  const __m256i pairs01_low = _mm256_unpacklo_epi8(r0, r1);   // columns 0-7 | 16-23
  const __m256i pairs01_high = _mm256_unpackhi_epi8(r0, r1);  // 8-15 | 24-31
  const __m256i pairs23_low = _mm256_unpacklo_epi8(r2, r3);
  const __m256i pairs23_high = _mm256_unpackhi_epi8(r2, r3);
  const __m256i quads0 = _mm256_unpacklo_epi16(pairs01_low, pairs23_low);    // 0-3 | 16-19
  const __m256i quads1 = _mm256_unpackhi_epi16(pairs01_low, pairs23_low);    // 4-7 | 20-23
  const __m256i quads2 = _mm256_unpacklo_epi16(pairs01_high, pairs23_high);  // 8-11 | 24-27
  const __m256i quads3 = _mm256_unpackhi_epi16(pairs01_high, pairs23_high);  // 12-15 | 28-31
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(first),
                      _mm256_permute2x128_si256(quads0, quads1, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(first + 32),
                      _mm256_permute2x128_si256(quads2, quads3, 0x20));
  if (!has_second) return;
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(second),
                      _mm256_permute2x128_si256(quads0, quads1, 0x31));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(second + 32),
                      _mm256_permute2x128_si256(quads2, quads3, 0x31));
}

// 32 bytes of a row from `first` (the flip applied), fewer than 32 real: a local copy whose bytes
// past the row hold the flip itself, so they come out as 0 after it (nothing past the row read).
ORKNN_TARGET_AVX2 __m256i load_row_tail(const int8_t* row, size_t count, __m256i flip) {
  alignas(32) int8_t staging[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(staging), flip);
  __builtin_memcpy(staging, row, count);
  return _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(staging)), flip);
}

// Four activation rows into 16-column panels (Int8GroupRows, G = 4, NR = 16), two panels per
// step: one 32-byte load per row, the sign flip, and byte then 16-bit unpacks. The last step
// (fewer than 32 columns left) reads the rows through a local copy and writes only the panels
// that hold real columns, zero past `columns`.
ORKNN_TARGET_AVX2 void pack_activation_quads(const Int8GroupRows& group) {
  const __m256i flip = _mm256_set1_epi8(group.flip);
  const size_t columns = group.columns;
  const size_t stride = group.panel_stride;
  size_t first = 0;
  int8_t* out = group.out;
  for (; first + 2 * kTileColumns <= columns; first += 2 * kTileColumns, out += 2 * stride) {
    const __m256i r0 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[0] + first)), flip);
    const __m256i r1 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[1] + first)), flip);
    const __m256i r2 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[2] + first)), flip);
    const __m256i r3 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[3] + first)), flip);
    store_two_panels(r0, r1, r2, r3, out, out + stride, true);
  }
  if (first == columns) return;
  const size_t left = columns - first;
  store_two_panels(load_row_tail(group.rows[0] + first, left, flip),
                   load_row_tail(group.rows[1] + first, left, flip),
                   load_row_tail(group.rows[2] + first, left, flip),
                   load_row_tail(group.rows[3] + first, left, flip), out, out + stride,
                   left > kTileColumns);
}

// Byte shifts of a 16-byte vector by a run-time count (0..16) through VPSHUFB: the control is
// a 16-byte window of this table, whose 0x80 bytes give 0.
alignas(16) constexpr int8_t kShiftControl[48] = {
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128};

// Byte i of the result is v[i - count] (0 below count).
ORKNN_TARGET_AVX2 __m128i shift_bytes_up(__m128i v, size_t count) {
  return _mm_shuffle_epi8(
      v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kShiftControl + 16 - count)));
}

// Byte i of the result is v[i + count] (0 from 16 - count).
ORKNN_TARGET_AVX2 __m128i shift_bytes_down(__m128i v, size_t count) {
  return _mm_shuffle_epi8(
      v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kShiftControl + 16 + count)));
}

// Bytes [0, count) of `bytes` (count 1..16) in bytes [0, count) of a vector, the others
// unspecified, reading only those bytes: one load for 16, else two overlapping loads of 8 or 4
// bytes (the second shifted into place), else up to three single bytes.
ORKNN_TARGET_AVX2 __m128i load_span(const int8_t* bytes, size_t count) {
  if (count >= 8) {
    if (count == 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
    const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
    const __m128i high = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + count - 8));
    return _mm_or_si128(low, shift_bytes_up(high, count - 8));
  }
  if (count >= 4) {
    const __m128i low = _mm_cvtsi32_si128(load_group(bytes));
    const __m128i high = _mm_cvtsi32_si128(load_group(bytes + count - 4));
    return _mm_or_si128(low, shift_bytes_up(high, count - 4));
  }
  const size_t middle = count / 2;
  const uint32_t value =
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[0])) |
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[middle])) << (8 * middle) |
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[count - 1])) << (8 * (count - 1));
  return _mm_cvtsi32_si128(static_cast<int32_t>(value));
}

// The bytes of a 16-lane mask (bit j set: byte j is 0xFF).
ORKNN_TARGET_AVX2 __m128i lane_bytes(uint32_t lanes) {
  const __m128i bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const __m128i spread =
      _mm_shuffle_epi8(_mm_cvtsi32_si128(static_cast<int32_t>(lanes)),
                       _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  return _mm_cmpeq_epi8(_mm_and_si128(spread, bits), bits);
}

// One tap piece's lanes of a panel row (Int8TapPiece, 16 lanes, stride 1 or 2), the other lanes
// unspecified: the bytes from its first lane's to its last lane's, which all lie in the plane,
// are read exactly (load_span; stride 2 spans up to 31 bytes, two loads, and keeps the even
// ones: the words masked to their low bytes and packed), then moved up to the first lane.
template <size_t kStride>
ORKNN_TARGET_AVX2 __m128i piece_lanes(const int8_t* plane, const Int8TapPiece& piece) {
  const auto first = static_cast<size_t>(__builtin_ctz(piece.lanes));
  const auto last = static_cast<size_t>(31 - __builtin_clz(piece.lanes));
  const int8_t* bytes =
      plane + (static_cast<ptrdiff_t>(piece.source) + static_cast<ptrdiff_t>(first * kStride));
  const size_t count = (last - first) * kStride + 1;
  __m128i span;
  if constexpr (kStride == 1) {
    span = load_span(bytes, count);
  } else {
    __m128i low, high;
    if (count > 16) {
      low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
      high = shift_bytes_down(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + count - 16)),
                              32 - count);
    } else {
      low = load_span(bytes, count);
      high = _mm_setzero_si128();
    }
    const __m128i words = _mm_set1_epi16(0x00FF);
    span = _mm_packus_epi16(_mm_and_si128(low, words), _mm_and_si128(high, words));
  }
  return first ? shift_bytes_up(span, first) : span;
}

// Row d of a tap group in panel q (16 lanes, before the flip): the padding code, then each
// piece's lanes.
template <size_t kStride>
ORKNN_TARGET_AVX2 __m128i tap_row(const Int8TapGroup& group, size_t d, size_t q, __m128i padding) {
  __m128i row = padding;
  const int8_t* plane = group.planes[d];
  const uint32_t end = group.first_piece[d][q + 1];
  for (uint32_t p = group.first_piece[d][q]; p < end; ++p) {
    const Int8TapPiece& piece = group.pieces[p];
    if (piece.lanes == 0) continue;
    const __m128i lanes = piece_lanes<kStride>(plane, piece);
    row = piece.lanes == 0xFFFFu ? lanes : _mm_blendv_epi8(row, lanes, lane_bytes(piece.lanes));
  }
  return row;
}

// Four 16-column rows (flipped, zero past the block) interleaved into one panel's layout.
ORKNN_TARGET_AVX2 void store_panel(__m128i r0, __m128i r1, __m128i r2, __m128i r3, int8_t* out) {
  const __m128i pairs01_low = _mm_unpacklo_epi8(r0, r1);   // columns 0-7
  const __m128i pairs01_high = _mm_unpackhi_epi8(r0, r1);  // 8-15
  const __m128i pairs23_low = _mm_unpacklo_epi8(r2, r3);
  const __m128i pairs23_high = _mm_unpackhi_epi8(r2, r3);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(pairs01_low, pairs23_low));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16),
                   _mm_unpackhi_epi16(pairs01_low, pairs23_low));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32),
                   _mm_unpacklo_epi16(pairs01_high, pairs23_high));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48),
                   _mm_unpackhi_epi16(pairs01_high, pairs23_high));
}

// Per panel: the group's four rows (tap_row), flipped, zero past the block, interleaved.
template <size_t kStride>
ORKNN_TARGET_AVX2 void pack_taps_with_stride(const Int8TapGroup& group) {
  const __m128i flip = _mm_set1_epi8(group.flip);
  const __m128i padding = _mm_set1_epi8(group.pad);
  const __m128i lane_numbers = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (size_t first = 0, q = 0; first < group.columns; first += kTileColumns, ++q) {
    // Columns past the block are 0 after the flip.
    const size_t left = group.columns - first;
    const __m128i real =
        left >= kTileColumns
            ? _mm_set1_epi8(-1)
            : _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<int8_t>(left)), lane_numbers);
    const __m128i r0 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 0, q, padding), flip), real);
    const __m128i r1 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 1, q, padding), flip), real);
    const __m128i r2 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 2, q, padding), flip), real);
    const __m128i r3 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 3, q, padding), flip), real);
    store_panel(r0, r1, r2, r3, group.out + q * group.panel_stride);
  }
}

// Int8TapGroup for G = 4, NR = 16, strides 1 and 2 (largest_tap_stride below).
ORKNN_TARGET_AVX2 void pack_activation_taps(const Int8TapGroup& group) {
  if (group.stride == 1) {
    pack_taps_with_stride<1>(group);
  } else {
    pack_taps_with_stride<2>(group);
  }
}

}  // namespace

// A correction costs about what its group's products do again, so where many (output channel,
// depth group) blocks need one (small depths over many output channels: MobileNetV2's 24 -> 144
// expansion, 16% after the depth order) the int16-pair GEMM is faster: 1.16x at 16%
// (docs/cpu-kernels.md, "Session 12"); ResNet50's 64 -> 256 layers (9%) gain.
constexpr double kLargestCorrectionShare = 0.12;

// Depth chunks of about 1024 on 7x7 and 14x14 planes (DotProductKernels::small_plane_depth_block;
// B blocks of at most 64 and 192 columns, 64 and 192 KB): on bench_kernels' pointwise layers
// there of depth 960 and more, 1024-deep and whole-depth chunks measured 0.83-0.91x the time of
// 256-deep ones, 512-deep ones in between (docs/cpu-kernels.md, "Session 13: int8 pointwise
// convolutions on 7x7 and 14x14 planes").
constexpr size_t kSmallPlaneDepthBlock = 1024;

// pack_activation_taps reads strides 1 and 2; larger strides gather their im2col rows.
constexpr size_t kLargestTapStride = 2;

const DotProductKernels& avx2_pair_kernels() {
  static const DotProductKernels kernels{"avx2",
                                         kTileRows,
                                         kTileColumns,
                                         kGroupDepth,
                                         128,
                                         pair_tile,
                                         nullptr,
                                         pack_activation_quads,
                                         pack_activation_taps,
                                         kLargestTapStride,
                                         nullptr,
                                         pair_requantized_tile,
                                         avx2_micro_kernels,
                                         nullptr,
                                         nullptr,
                                         0,
                                         true,
                                         kLargestCorrectionShare,
                                         kSmallPlaneDepthBlock};
  return kernels;
}

const DotProductKernels& avx2_pair_kernels_before_small_planes() {
  static const DotProductKernels kernels = [] {
    DotProductKernels table = avx2_pair_kernels();
    table.tile_activations_in_b = pair_tile_vectors_only;
    table.tile_requantized_activations_in_b = pair_requantized_tile_vectors_only;
    table.small_plane_depth_block = 0;
    return table;
  }();
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
