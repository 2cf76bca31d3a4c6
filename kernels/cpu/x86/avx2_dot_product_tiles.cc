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
//
// The tile's end (corrections, stores, requantization) is in avx2_pair_tile_ends.cc, the
// activation packers in avx2_pair_packing.cc; avx2_pair_tile_parts.h holds what they share.
#include "x86/avx2_pair_tile_parts.h"

namespace orknn::kernels::cpu::optimized {

using namespace avx2_pairs;

namespace {

// The accumulators are named variables (GCC keeps arrays of vectors in memory); rows past
// kRows are compiled out with `if constexpr`.
#define ORKNN_FOR_EACH_ROW(MACRO) MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5)

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
