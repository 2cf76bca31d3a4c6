// The AVX2 + FMA tile of the direct float convolution (micro_kernels.h DirectFloatTile): the
// driver's tile is 12 output channels x 32 output pixels, and AVX2 has 16 ymm registers, so the
// tile runs as up to four register blocks of 6 rows x 16 columns (12 accumulators, 2 for B, 1
// broadcast of A; the avx2 GEMM tile's shape). The blocks go column half by column half: both
// row blocks of one half read the same 16 B columns of every depth step, which the first
// leaves in L1 for the second where they fit (up to 256 steps of 16 unaligned floats: up to
// 32 KB of lines, so on deep chunks the second probably reads many of them from L2). A (12
// floats per step) is read by all four blocks. A 12 x 8 register block (B read once per tile,
// A four times) and the two row blocks interleaved over short depth segments (partial sums in
// an L1 buffer) measured slower (session 9); avx2_direct_convolution_preferred picks the layers
// where this tile beat the GEMM.
//
// B is read straight from the input planes with vmaskmovps: a lane whose bit in the tap's mask
// is clear is neither read (so an address before or after a plane cannot fault) nor nonzero.
// A tap whose 16 lanes are all inside the plane takes plain loads instead. Per output the
// depth runs tap by tap, channels inside, one FMA each, as in the AVX-512 tile: same order.
//
// Every function carries its instruction set as a target attribute (the file is compiled for
// the baseline x86-64; dispatch.cc calls it only when cpu_features reported AVX2 and FMA). No
// standard-library templates or inline functions here (see avx2_micro_kernels.h).
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"

#define ORKNN_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kTileRows = 12;     // rows of A per depth step (the packing's stride)
constexpr size_t kTileColumns = 32;  // a pixel block
constexpr size_t kBlockRows = 6;     // one register block
constexpr size_t kBlockColumns = 16;

// clang-format off
#define ORKNN_FOR_EACH_ROW(MACRO) MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5)
// clang-format on

// Lane j of the result is all ones when bit j of `bits` (8 bits) is set: a vmaskmovps mask.
ORKNN_TARGET_AVX2 __m256i lane_mask(uint32_t bits) {
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i selected = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), lane_bit);
  return _mm256_cmpeq_epi32(selected, lane_bit);
}

// The first `count` lanes (0..8).
ORKNN_TARGET_AVX2 __m256i first_lanes(size_t count) {
  return lane_mask(count >= 8 ? 0xFFu : (1u << count) - 1u);
}

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::VectorActivation;

// One register block: kRows (1..6) rows from `row` of the tile, kVectors (1: columns 0-7 of
// the half, 2: 0-15) columns from `column` (0 or 16). `columns` is the block's real columns
// (1..16); lanes past them are not loaded from C nor stored.
template <size_t kRows, size_t kVectors, bool kPrefetch>
ORKNN_TARGET_AVX2 void direct_block(const DirectFloatTile& tile, size_t row, size_t column,
                                    size_t columns) {
  float* c = tile.c + row * tile.c_stride + column;
  const size_t c_stride = tile.c_stride;
  const bool partial = columns < kVectors * 8;
  const __m256i store_low = first_lanes(columns);
  const __m256i store_high = first_lanes(columns > 8 ? columns - 8 : 0);

#define ORKNN_DECLARE(r)               \
  __m256 low##r = _mm256_setzero_ps(); \
  __m256 high##r = _mm256_setzero_ps();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  if (tile.accumulate) {
    if (partial) {
#define ORKNN_LOAD(r)                                                                            \
  if constexpr (kRows > r) {                                                                     \
    low##r = _mm256_maskload_ps(c + r * c_stride, store_low);                                    \
    if constexpr (kVectors == 2) high##r = _mm256_maskload_ps(c + r * c_stride + 8, store_high); \
  }
      ORKNN_FOR_EACH_ROW(ORKNN_LOAD)
#undef ORKNN_LOAD
    } else {
#define ORKNN_LOAD(r)                                                             \
  if constexpr (kRows > r) {                                                      \
    low##r = _mm256_loadu_ps(c + r * c_stride);                                   \
    if constexpr (kVectors == 2) high##r = _mm256_loadu_ps(c + r * c_stride + 8); \
  }
      ORKNN_FOR_EACH_ROW(ORKNN_LOAD)
#undef ORKNN_LOAD
    }
  } else if (tile.row_bias) {
    const float* row_bias = tile.row_bias + row;
#define ORKNN_INIT(r)                     \
  if constexpr (kRows > r) {              \
    low##r = _mm256_set1_ps(row_bias[r]); \
    high##r = low##r;                     \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_INIT)
#undef ORKNN_INIT
  }

  // One depth step: B's 8 or 16 columns in b_low / b_high, then a broadcast of A and one or two
  // FMAs per row.
#define ORKNN_STEP(r)                                                               \
  if constexpr (kRows > r) {                                                        \
    const __m256 a_row = _mm256_broadcast_ss(a + r);                                \
    low##r = _mm256_fmadd_ps(a_row, b_low, low##r);                                 \
    if constexpr (kVectors == 2) high##r = _mm256_fmadd_ps(a_row, b_high, high##r); \
  }
  // The first row block of a column half asks for B's columns of a later pixel block (the
  // contract's prefetch, split between the halves: each prefetches its own 64 bytes).
#define ORKNN_PREFETCH_B                                                           \
  if (kPrefetch) {                                                                 \
    const char* ahead = reinterpret_cast<const char*>(b + tile.prefetch_distance); \
    _mm_prefetch(ahead, _MM_HINT_T0);                                              \
    _mm_prefetch(ahead + 60, _MM_HINT_T0);                                         \
  }

  const float* a = tile.a + row;
  const size_t channel_stride = tile.channel_stride;
  const uint32_t all_lanes = kVectors == 2 ? 0xFFFFu : 0xFFu;
  for (size_t tap = 0; tap < tile.taps; ++tap) {
    const uint32_t bits = (tile.masks[tap] >> column) & all_lanes;
    const float* b = tile.inputs[tap] + column;
    const size_t steps = tile.tap_channels ? tile.tap_channels[tap] : tile.channels;
    if (bits == all_lanes) {
      // Every lane's input exists (most taps of a large plane): plain loads.
      for (size_t channel = steps; channel > 0; --channel) {
        ORKNN_PREFETCH_B
        const __m256 b_low = _mm256_loadu_ps(b);
        const __m256 b_high = kVectors == 2 ? _mm256_loadu_ps(b + 8) : b_low;
        ORKNN_FOR_EACH_ROW(ORKNN_STEP)
        a += kTileRows;
        b += channel_stride;
      }
    } else {
      const __m256i mask_low = lane_mask(bits & 0xFFu);
      const __m256i mask_high = lane_mask(bits >> 8);
      for (size_t channel = steps; channel > 0; --channel) {
        ORKNN_PREFETCH_B
        const __m256 b_low = _mm256_maskload_ps(b, mask_low);
        const __m256 b_high = kVectors == 2 ? _mm256_maskload_ps(b + 8, mask_high) : b_low;
        ORKNN_FOR_EACH_ROW(ORKNN_STEP)
        a += kTileRows;
        b += channel_stride;
      }
    }
  }
#undef ORKNN_PREFETCH_B
#undef ORKNN_STEP

  if (tile.activation) {
    const VectorActivation activation = broadcast_activation(*tile.activation);
#define ORKNN_ACTIVATE(r)                                                 \
  if constexpr (kRows > r) {                                              \
    low##r = activate(activation, low##r);                                \
    if constexpr (kVectors == 2) high##r = activate(activation, high##r); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_ACTIVATE)
#undef ORKNN_ACTIVATE
  }
  if (partial) {
#define ORKNN_STORE(r)                                                                           \
  if constexpr (kRows > r) {                                                                     \
    _mm256_maskstore_ps(c + r * c_stride, store_low, low##r);                                    \
    if constexpr (kVectors == 2) _mm256_maskstore_ps(c + r * c_stride + 8, store_high, high##r); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
  } else {
#define ORKNN_STORE(r)                                                            \
  if constexpr (kRows > r) {                                                      \
    _mm256_storeu_ps(c + r * c_stride, low##r);                                   \
    if constexpr (kVectors == 2) _mm256_storeu_ps(c + r * c_stride + 8, high##r); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
  }
}

template <size_t kVectors, bool kPrefetch>
ORKNN_TARGET_AVX2 void direct_block_rows(const DirectFloatTile& tile, size_t row, size_t rows,
                                         size_t column, size_t columns) {
  switch (rows) {
    case 1:
      return direct_block<1, kVectors, kPrefetch>(tile, row, column, columns);
    case 2:
      return direct_block<2, kVectors, kPrefetch>(tile, row, column, columns);
    case 3:
      return direct_block<3, kVectors, kPrefetch>(tile, row, column, columns);
    case 4:
      return direct_block<4, kVectors, kPrefetch>(tile, row, column, columns);
    case 5:
      return direct_block<5, kVectors, kPrefetch>(tile, row, column, columns);
    default:
      return direct_block<kBlockRows, kVectors, kPrefetch>(tile, row, column, columns);
  }
}

// One column half (16 pixels from `column`) for both row blocks; only the first row block
// prefetches B (the second reads what the first brought in).
template <size_t kVectors>
ORKNN_TARGET_AVX2 void direct_half(const DirectFloatTile& tile, size_t column, size_t columns) {
  if (tile.prefetch_distance != 0) {
    direct_block_rows<kVectors, true>(tile, 0, tile.rows < kBlockRows ? tile.rows : kBlockRows,
                                      column, columns);
  } else {
    direct_block_rows<kVectors, false>(tile, 0, tile.rows < kBlockRows ? tile.rows : kBlockRows,
                                       column, columns);
  }
  if (tile.rows > kBlockRows) {
    direct_block_rows<kVectors, false>(tile, kBlockRows, tile.rows - kBlockRows, column, columns);
  }
}

}  // namespace

ORKNN_TARGET_AVX2 void avx2_direct_float_tile(const DirectFloatTile& tile) {
  if (!tile.accumulate) {
    // The output lines are written once, at the end of each block, and a large layer's output
    // is in no cache: ask for this pixel block's lines and the next block's (the next 32 pixels
    // of the same rows), as the AVX-512 tile does (session 7: 4-15% on large layers there).
    // Without prfchw in the target GCC emits _MM_HINT_ET0 as prefetcht0, in both tiles.
    for (size_t r = 0; r < tile.rows; ++r) {
      const char* row_output = reinterpret_cast<const char*>(tile.c + r * tile.c_stride);
      _mm_prefetch(row_output, _MM_HINT_ET0);
      _mm_prefetch(row_output + kTileColumns * sizeof(float), _MM_HINT_ET0);
      if (tile.columns > kBlockColumns) {
        _mm_prefetch(row_output + 64, _MM_HINT_ET0);
        _mm_prefetch(row_output + kTileColumns * sizeof(float) + 64, _MM_HINT_ET0);
      }
    }
  }
  for (size_t column = 0; column < tile.columns; column += kBlockColumns) {
    const size_t left = tile.columns - column;
    const size_t columns = left < kBlockColumns ? left : kBlockColumns;
    if (columns <= 8) {
      direct_half<1>(tile, column, columns);
    } else {
      direct_half<2>(tile, column, columns);
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
