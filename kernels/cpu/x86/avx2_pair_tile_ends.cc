// The AVX2 pair tiles' common end (avx2_pair_tile_parts.h): a tile's sums leave its registers
// through memory (the tile's loop would otherwise keep copies of its accumulators for every
// store path and spill them), get the tile's pair corrections, and are stored as int32 or
// requantized into int8.
#include "x86/avx2_pair_tile_parts.h"

namespace orknn::kernels::cpu::optimized::avx2_pairs {
namespace {

// Adds the tile's corrections (Int8PairCorrection) to its rows' sums, sums[2r] and
// sums[2r + 1] being row r's two column vectors: the correction's four weights broadcast
// against its group of this B panel (always NR columns wide), the tile's three instructions.
// Rare (a few percent of a row's groups), so kept out of the tile's loop; the row is dynamic,
// so they go through the tile's sums in memory, before those are stored to c (adding them to c
// after the store, with masked loads and stores for the last panel, measured 152 GOPS at 2% of
// the groups against 170 without; this form about 4% below the tile without corrections).
// Sorting a tile's corrections by row and adding each row's in registers before its store
// (session 15) took the end to 0.72-0.86x in a program that reran the same 64 tiles, but to
// about 1.1x in ResNet50 int8 (the end's share of the samples 7.7-8.2% -> 8.9%): leaving each
// row's run is a data-dependent branch, and in a model no tile repeats for the predictor.
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

}  // namespace

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

}  // namespace orknn::kernels::cpu::optimized::avx2_pairs
