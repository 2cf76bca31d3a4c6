// What the files of the AVX2 pair tiles share: avx2_dot_product_tiles.cc (the 6 x 16 tile, the
// column tile and the "avx2" dot-product table), avx2_pair_tile_ends.cc (the tiles' common end:
// corrections, then the int32 store or the requantization) and avx2_pair_packing.cc (the
// activation packers). The exactness argument is at the top of avx2_dot_product_tiles.cc.
//
// These files are compiled for the baseline x86-64 and carry their instruction set as function
// target attributes. The small helpers here are `static`, so each file keeps its own copy: an
// external inline compiled with AVX2 could be the copy the linker keeps for baseline callers
// (see avx512_vnni_tiles.cc).
#pragma once

#include <immintrin.h>

#include "optimized/dot_product_kernels.h"

#define ORKNN_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace orknn::kernels::cpu::optimized::avx2_pairs {

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

// Four packed bytes as one int32 lane value (the builtin, not std::memcpy: see the top of
// avx2_dot_product_tiles.cc).
[[maybe_unused]] static ORKNN_TARGET_AVX2 int32_t load_group(const int8_t* bytes) {
  int32_t value;
  __builtin_memcpy(&value, bytes, sizeof(value));
  return value;
}

// One depth group of 8 columns times one row's four weights: per int32 lane the sum of the
// four products (exact when both pair sums fit int16, see the top).
[[maybe_unused]] static ORKNN_TARGET_AVX2 __m256i group_products(__m256i b, __m256i a_group,
                                                                 __m256i ones) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(b, a_group), ones);
}

// Lanes j < count of a column vector (count 0..8), for vpmaskmovd.
[[maybe_unused]] static ORKNN_TARGET_AVX2 __m256i lane_mask(size_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(count)), lanes);
}

// The tile's end, sums[2r] and sums[2r + 1] being row r's two column vectors (kTileRows rows,
// in memory): the corrections are added, then the sums are stored to c (plus c when
// accumulating), or requantized into the tile's int8 output. Separate (and not inlined) so the
// tile's loop keeps its accumulators in registers; see avx2_pair_tile_ends.cc.
ORKNN_TARGET_AVX2 void store_tile_sums(const Int8DotTile& tile, __m256i* sums);
ORKNN_TARGET_AVX2 void requantize_tile_sums(const Int8DotTile& tile,
                                            const Int8TileRequantization& requantization,
                                            __m256i* sums);

// The activation packers of the "avx2" table (Int8GroupRows, Int8TapGroup; G = 4, NR = 16).
ORKNN_TARGET_AVX2 void pack_activation_quads(const Int8GroupRows& group);
ORKNN_TARGET_AVX2 void pack_activation_taps(const Int8TapGroup& group);

// pack_activation_taps reads strides 1 and 2; larger strides gather their im2col rows.
constexpr size_t kLargestTapStride = 2;

}  // namespace orknn::kernels::cpu::optimized::avx2_pairs
