// Plain C++ tiles of the dot-product packed layout (dot_product_kernels.h), for every build:
// the drivers run on them in the native tests (with the sanitizers), and they state the layout
// the SDOT, SMMLA and VPDPBUSD tiles implement, element by element. The pair-limited table sums
// byte pairs with int16 saturation, as VPMADDUBSW does, so the tests see what a missing or wrong
// pair correction does to the AVX2 tile's sums.
#include "optimized/dot_product_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kRows = 8;
constexpr size_t kColumns = 8;

// A byte of a packed operand as the instruction reads it: signed, or (VPDPBUSD's activations)
// unsigned.
template <bool kUnsigned>
int32_t operand(int8_t byte) {
  return kUnsigned ? int32_t{static_cast<uint8_t>(byte)} : int32_t{byte};
}

// One group's products of weights `a` and activation bytes `b` (VPMADDUBSW + VPMADDWD on
// pair-limited tables: each pair's sum saturated to int16 first).
template <size_t kGroupDepth, bool kUnsignedA, bool kUnsignedB, bool kPairLimited>
uint32_t group_products(const int8_t* a, const int8_t* b) {
  uint32_t sum = 0;
  for (size_t d = 0; d < kGroupDepth; d += 2) {
    int32_t pair = operand<kUnsignedA>(a[d]) * operand<kUnsignedB>(b[d]) +
                   operand<kUnsignedA>(a[d + 1]) * operand<kUnsignedB>(b[d + 1]);
    if (kPairLimited) pair = pair < -32768 ? -32768 : pair > 32767 ? 32767 : pair;
    sum += static_cast<uint32_t>(pair);
  }
  return sum;
}

template <size_t kGroupDepth, bool kUnsignedA, bool kUnsignedB, bool kPairLimited = false>
void portable_tile(const Int8DotTile& tile) {
  for (size_t r = 0; r < tile.rows; ++r) {
    for (size_t j = 0; j < tile.columns; ++j) {
      // Wrapping int32 sums, as the instructions compute them (dot_product_kernels.h).
      uint32_t sum = tile.accumulate ? static_cast<uint32_t>(tile.c[r * tile.c_stride + j]) : 0;
      for (size_t g = 0; g < tile.depth_groups; ++g) {
        sum += group_products<kGroupDepth, kUnsignedA, kUnsignedB, kPairLimited>(
            tile.a + (g * kRows + r) * kGroupDepth, tile.b + (g * kColumns + j) * kGroupDepth);
      }
      tile.c[r * tile.c_stride + j] = static_cast<int32_t>(sum);
    }
  }
  if (!kPairLimited) return;
  for (size_t i = 0; i < tile.correction_count; ++i) {
    const Int8PairCorrection& correction = tile.corrections[i];
    const size_t g = correction.group - tile.first_group;
    for (size_t j = 0; j < tile.columns; ++j) {
      int32_t& sum = tile.c[correction.row * tile.c_stride + j];
      sum =
          static_cast<int32_t>(static_cast<uint32_t>(sum) +
                               group_products<4, false, true, true>(
                                   correction.weights, tile.b + (g * kColumns + j) * kGroupDepth));
    }
  }
}

// The unsigned-activation tile (VPDPBUSD's) into a local block, then the constants and the
// portable requantization row.
template <bool kPairLimited>
void portable_requantized_tile(const Int8DotTile& tile,
                               const Int8TileRequantization& requantization) {
  int32_t sums[kRows * kColumns];
  Int8DotTile local = tile;
  local.c = sums;
  local.c_stride = kColumns;
  for (size_t r = 0; r < tile.rows && tile.accumulate; ++r) {
    for (size_t j = 0; j < tile.columns; ++j)
      sums[r * kColumns + j] = tile.c[r * tile.c_stride + j];
  }
  portable_tile<4, false, true, kPairLimited>(local);
  for (size_t r = 0; r < tile.rows; ++r) {
    int32_t* row_sums = sums + r * kColumns;
    for (size_t j = 0; j < tile.columns; ++j) {
      row_sums[j] = static_cast<int32_t>(static_cast<uint32_t>(row_sums[j]) +
                                         static_cast<uint32_t>(requantization.constants[r]));
    }
    RequantizeRow row{};
    row.accumulators = row_sums;
    row.count = tile.columns;
    row.multipliers = requantization.multipliers + r;
    row.output_zero_point = requantization.output_zero_point;
    row.output_minimum = requantization.output_minimum;
    row.output_maximum = requantization.output_maximum;
    row.output = requantization.output + r * requantization.output_stride;
    row.small_multipliers = true;
    portable_micro_kernels().requantize_row(row);
  }
}

}  // namespace

void portable_pack_activation_groups(const Int8GroupRows& group) {
  const size_t g_depth = group.group_depth;
  const size_t nr = group.panel_columns;
  for (size_t first = 0, q = 0; first < group.columns; first += nr, ++q) {
    int8_t* out = group.out + q * group.panel_stride;
    for (size_t j = 0; j < nr; ++j) {
      const size_t column = first + j;
      for (size_t d = 0; d < g_depth; ++d) {
        out[j * g_depth + d] =
            column < group.columns ? static_cast<int8_t>(group.rows[d][column] ^ group.flip) : 0;
      }
    }
  }
}

void portable_pack_activation_taps(const Int8TapGroup& group) {
  const size_t g_depth = group.group_depth;
  const size_t nr = group.panel_columns;
  const auto padding = static_cast<int8_t>(group.pad ^ group.flip);
  for (size_t first = 0, q = 0; first < group.columns; first += nr, ++q) {
    int8_t* out = group.out + q * group.panel_stride;
    for (size_t d = 0; d < g_depth; ++d) {
      for (size_t j = 0; j < nr; ++j)
        out[j * g_depth + d] = first + j < group.columns ? padding : 0;
      const int8_t* plane = group.planes[d];
      for (uint32_t p = group.first_piece[d][q]; p < group.first_piece[d][q + 1]; ++p) {
        const Int8TapPiece& piece = group.pieces[p];
        for (size_t lane = 0; lane < nr; ++lane) {
          if (!(piece.lanes >> lane & 1)) continue;
          const int8_t code = plane[piece.source + static_cast<ptrdiff_t>(lane * group.stride)];
          out[lane * g_depth + d] = static_cast<int8_t>(code ^ group.flip);
        }
      }
    }
  }
}

void portable_interleave_quad_row(const Int8QuadRow& row) {
  for (size_t j = 0; j < row.count; ++j) {
    for (size_t d = 0; d < 4; ++d) {
      row.out[j * 4 + d] = static_cast<int8_t>(row.rows[d][j * row.stride] ^ row.flip);
    }
  }
}

void portable_direct_tile(const Int8DirectTile& tile,
                          const Int8TileRequantization* requantization) {
  constexpr size_t kLanes = 32;
  int32_t sums[kRows * kLanes];
  uint8_t padding[4];
  __builtin_memcpy(padding, &tile.padding, sizeof(padding));
  for (size_t r = 0; r < tile.rows; ++r) {
    for (size_t j = 0; j < tile.columns; ++j) {
      // Wrapping int32 sums, as VPDPBUSD computes them (unsigned activations).
      uint32_t sum = 0;
      for (size_t t = 0; t < tile.taps; ++t) {
        const bool real = tile.tap_lanes[t] >> j & 1;
        for (size_t q = 0; q < tile.quads; ++q) {
          const int8_t* a = tile.a + ((t * tile.quads + q) * kRows + r) * 4;
          // A padding lane's address may lie outside the planes: not formed.
          const int8_t* b = real ? tile.planes + tile.tap_offsets[t] +
                                       static_cast<ptrdiff_t>(q * tile.quad_stride + j * 4)
                                 : nullptr;
          for (size_t d = 0; d < 4; ++d) {
            const uint32_t x = real ? static_cast<uint8_t>(b[d]) : padding[d];
            sum += static_cast<uint32_t>(a[d] * static_cast<int32_t>(x));
          }
        }
      }
      sums[r * kLanes + j] = static_cast<int32_t>(sum);
    }
  }
  if (!requantization) {
    for (size_t r = 0; r < tile.rows; ++r) {
      for (size_t j = 0; j < tile.columns; ++j)
        tile.c[r * tile.c_stride + j] = sums[r * kLanes + j];
    }
    return;
  }
  for (size_t r = 0; r < tile.rows; ++r) {
    int32_t* row_sums = sums + r * kLanes;
    for (size_t j = 0; j < tile.columns; ++j) {
      row_sums[j] = static_cast<int32_t>(static_cast<uint32_t>(row_sums[j]) +
                                         static_cast<uint32_t>(requantization->constants[r]));
    }
    RequantizeRow row{};
    row.accumulators = row_sums;
    row.count = tile.columns;
    row.multipliers = requantization->multipliers + r;
    row.output_zero_point = requantization->output_zero_point;
    row.output_minimum = requantization->output_minimum;
    row.output_maximum = requantization->output_maximum;
    row.output = requantization->output + r * requantization->output_stride;
    row.small_multipliers = true;
    portable_micro_kernels().requantize_row(row);
  }
}

const DotProductKernels& portable_dot_product_kernels(size_t group_depth, bool unsigned_activations,
                                                      bool pair_sums_limited) {
  static const DotProductKernels quads{"portable-dot4",
                                       kRows,
                                       kColumns,
                                       4,
                                       0,
                                       portable_tile<4, false, false>,
                                       portable_tile<4, false, false>,
                                       portable_pack_activation_groups,
                                       nullptr,
                                       0,
                                       nullptr,
                                       nullptr,
                                       portable_micro_kernels,
                                       nullptr,
                                       nullptr,
                                       0};
  static const DotProductKernels octets{"portable-dot8",
                                        kRows,
                                        kColumns,
                                        8,
                                        0,
                                        portable_tile<8, false, false>,
                                        portable_tile<8, false, false>,
                                        portable_pack_activation_groups,
                                        nullptr,
                                        0,
                                        nullptr,
                                        nullptr,
                                        portable_micro_kernels,
                                        nullptr,
                                        nullptr,
                                        0};
  static const DotProductKernels unsigned_quads{"portable-dot4u",
                                                kRows,
                                                kColumns,
                                                4,
                                                128,
                                                portable_tile<4, false, true>,
                                                portable_tile<4, true, false>,
                                                portable_pack_activation_groups,
                                                portable_pack_activation_taps,
                                                8,
                                                nullptr,
                                                portable_requantized_tile<false>,
                                                portable_micro_kernels,
                                                portable_direct_tile,
                                                portable_interleave_quad_row,
                                                32};
  static const DotProductKernels pair_limited_quads{"portable-dot4p",
                                                    kRows,
                                                    kColumns,
                                                    4,
                                                    128,
                                                    portable_tile<4, false, true, true>,
                                                    nullptr,
                                                    portable_pack_activation_groups,
                                                    portable_pack_activation_taps,
                                                    8,
                                                    nullptr,
                                                    portable_requantized_tile<true>,
                                                    portable_micro_kernels,
                                                    nullptr,
                                                    nullptr,
                                                    0,
                                                    true};
  if (pair_sums_limited) return pair_limited_quads;
  if (unsigned_activations) return unsigned_quads;
  return group_depth == 8 ? octets : quads;
}

}  // namespace orknn::kernels::cpu::optimized
