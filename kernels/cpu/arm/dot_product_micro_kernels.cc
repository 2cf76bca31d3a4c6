// The SDOT and SMMLA int8 tiles (optimized/dot_product_kernels.h). Each kernel function carries its
// instruction set as a target attribute, so this file is compiled for the baseline ARMv8.0 and
// one binary runs everywhere: the dispatcher calls a kernel only when HWCAP reports its
// instructions (dispatch.cc). GCC's arm_neon.h declares the intrinsics under
// "arch=armv8.2-a+dotprod" / "arch=armv8.2-a+i8mm" and refuses to inline them into a function
// whose target string differs, so those exact strings are used; clang names the features alone.
#include <arm_neon.h>

#include "optimized/dot_product_kernels.h"

#if defined(__clang__)
#define ORKNN_TARGET_DOTPROD __attribute__((target("dotprod")))
#define ORKNN_TARGET_I8MM __attribute__((target("i8mm")))
#else
#define ORKNN_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#define ORKNN_TARGET_I8MM __attribute__((target("arch=armv8.2-a+i8mm")))
#endif

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kRows = 8;
constexpr size_t kColumns = 8;

// Writes an 8 x 8 result (row r, columns 4h..4h+3 in result[r][h]) into the tile's real part.
// Plain NEON: both kernels call it after their own loops.
void store_tile(const Int8DotTile& tile, const int32x4_t (&result)[kRows][2]) {
  if (tile.rows == kRows && tile.columns == kColumns) {
    for (size_t r = 0; r < kRows; ++r) {
      int32_t* c = tile.c + r * tile.c_stride;
      int32x4_t low = result[r][0];
      int32x4_t high = result[r][1];
      if (tile.accumulate) {
        low = vaddq_s32(low, vld1q_s32(c));
        high = vaddq_s32(high, vld1q_s32(c + 4));
      }
      vst1q_s32(c, low);
      vst1q_s32(c + 4, high);
    }
    return;
  }
  int32_t block[kRows][kColumns];
  for (size_t r = 0; r < kRows; ++r) {
    vst1q_s32(block[r], result[r][0]);
    vst1q_s32(block[r] + 4, result[r][1]);
  }
  for (size_t r = 0; r < tile.rows; ++r) {
    int32_t* c = tile.c + r * tile.c_stride;
    for (size_t j = 0; j < tile.columns; ++j) {
      // Wrapping sums (see dot_product_kernels.h): add as unsigned.
      c[j] = tile.accumulate ? static_cast<int32_t>(static_cast<uint32_t>(c[j]) +
                                                    static_cast<uint32_t>(block[r][j]))
                             : block[r][j];
    }
  }
}

// Row r's two accumulators += its four-byte group (lane `lane` of a 4-row A vector) dotted with
// the four-byte groups of columns 0-3 (b_low) and 4-7 (b_high).
#define ORKNN_SDOT_ROW(r, a_vector, lane)                          \
  sums[r][0] = vdotq_laneq_s32(sums[r][0], b_low, a_vector, lane); \
  sums[r][1] = vdotq_laneq_s32(sums[r][1], b_high, a_vector, lane)

// SDOT: per group of 4 depths, two loads of A (rows 0-3, 4-7) and two of B (columns 0-3, 4-7),
// 16 SDOTs of 16 products each.
ORKNN_TARGET_DOTPROD void sdot_tile(const Int8DotTile& tile) {
  int32x4_t sums[kRows][2];
  for (size_t r = 0; r < kRows; ++r) sums[r][0] = sums[r][1] = vdupq_n_s32(0);
  const int8_t* a = tile.a;
  const int8_t* b = tile.b;
  for (size_t g = 0; g < tile.depth_groups; ++g, a += kRows * 4, b += kColumns * 4) {
    const int8x16_t a_low = vld1q_s8(a);
    const int8x16_t a_high = vld1q_s8(a + 16);
    const int8x16_t b_low = vld1q_s8(b);
    const int8x16_t b_high = vld1q_s8(b + 16);
    ORKNN_SDOT_ROW(0, a_low, 0);
    ORKNN_SDOT_ROW(1, a_low, 1);
    ORKNN_SDOT_ROW(2, a_low, 2);
    ORKNN_SDOT_ROW(3, a_low, 3);
    ORKNN_SDOT_ROW(4, a_high, 0);
    ORKNN_SDOT_ROW(5, a_high, 1);
    ORKNN_SDOT_ROW(6, a_high, 2);
    ORKNN_SDOT_ROW(7, a_high, 3);
  }
  store_tile(tile, sums);
}
#undef ORKNN_SDOT_ROW

// SMMLA: per group of 8 depths, four loads of A (row pairs) and four of B (column pairs), 16
// SMMLAs of 32 products each. Accumulator [p][q] holds the 2 x 2 block rows 2p, 2p + 1 by
// columns 2q, 2q + 1 row-major; zipping the 64-bit halves of two neighbours gives row vectors.
ORKNN_TARGET_I8MM void i8mm_tile(const Int8DotTile& tile) {
  int32x4_t sums[kRows / 2][kColumns / 2];
  for (size_t p = 0; p < kRows / 2; ++p) {
    for (size_t q = 0; q < kColumns / 2; ++q) sums[p][q] = vdupq_n_s32(0);
  }
  const int8_t* a = tile.a;
  const int8_t* b = tile.b;
  for (size_t g = 0; g < tile.depth_groups; ++g, a += kRows * 8, b += kColumns * 8) {
    int8x16_t a_pairs[kRows / 2];
    int8x16_t b_pairs[kColumns / 2];
    for (size_t p = 0; p < kRows / 2; ++p) a_pairs[p] = vld1q_s8(a + 16 * p);
    for (size_t q = 0; q < kColumns / 2; ++q) b_pairs[q] = vld1q_s8(b + 16 * q);
    for (size_t p = 0; p < kRows / 2; ++p) {
      for (size_t q = 0; q < kColumns / 2; ++q) {
        sums[p][q] = vmmlaq_s32(sums[p][q], a_pairs[p], b_pairs[q]);
      }
    }
  }
  int32x4_t rows[kRows][2];
  for (size_t p = 0; p < kRows / 2; ++p) {
    for (size_t h = 0; h < 2; ++h) {
      const int64x2_t left = vreinterpretq_s64_s32(sums[p][2 * h]);
      const int64x2_t right = vreinterpretq_s64_s32(sums[p][2 * h + 1]);
      rows[2 * p][h] = vreinterpretq_s32_s64(vzip1q_s64(left, right));
      rows[2 * p + 1][h] = vreinterpretq_s32_s64(vzip2q_s64(left, right));
    }
  }
  store_tile(tile, rows);
}

}  // namespace

// Signed x signed: the same tile whichever operand holds the activations.
const DotProductKernels& sdot_kernels() {
  static const DotProductKernels kernels{"neon-dotprod",
                                         kRows,
                                         kColumns,
                                         4,
                                         0,
                                         sdot_tile,
                                         sdot_tile,
                                         portable_pack_activation_groups,
                                         nullptr,
                                         0,
                                         nullptr,
                                         nullptr,
                                         neon_micro_kernels,
                                         nullptr,
                                         nullptr,
                                         0};
  return kernels;
}

const DotProductKernels& i8mm_kernels() {
  static const DotProductKernels kernels{"neon-i8mm",
                                         kRows,
                                         kColumns,
                                         8,
                                         0,
                                         i8mm_tile,
                                         i8mm_tile,
                                         portable_pack_activation_groups,
                                         nullptr,
                                         0,
                                         nullptr,
                                         nullptr,
                                         neon_micro_kernels,
                                         nullptr,
                                         nullptr,
                                         0};
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
