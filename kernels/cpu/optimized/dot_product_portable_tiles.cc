// Plain C++ tiles of the dot-product packed layout (dot_product_kernels.h), for every build:
// the drivers run on them in the native tests (with the sanitizers), and they state the layout
// the SDOT, SMMLA and VPDPBUSD tiles implement, element by element.
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

template <size_t kGroupDepth, bool kUnsignedA, bool kUnsignedB>
void portable_tile(const Int8DotTile& tile) {
  for (size_t r = 0; r < tile.rows; ++r) {
    for (size_t j = 0; j < tile.columns; ++j) {
      // Wrapping int32 sums, as the instructions compute them (dot_product_kernels.h).
      uint32_t sum = tile.accumulate ? static_cast<uint32_t>(tile.c[r * tile.c_stride + j]) : 0;
      for (size_t g = 0; g < tile.depth_groups; ++g) {
        const int8_t* a = tile.a + (g * kRows + r) * kGroupDepth;
        const int8_t* b = tile.b + (g * kColumns + j) * kGroupDepth;
        for (size_t d = 0; d < kGroupDepth; ++d) {
          sum += static_cast<uint32_t>(operand<kUnsignedA>(a[d]) * operand<kUnsignedB>(b[d]));
        }
      }
      tile.c[r * tile.c_stride + j] = static_cast<int32_t>(sum);
    }
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

const DotProductKernels& portable_dot_product_kernels(size_t group_depth,
                                                      bool unsigned_activations) {
  static const DotProductKernels quads{"portable-dot4",
                                       kRows,
                                       kColumns,
                                       4,
                                       0,
                                       portable_tile<4, false, false>,
                                       portable_tile<4, false, false>,
                                       portable_pack_activation_groups,
                                       nullptr,
                                       portable_micro_kernels};
  static const DotProductKernels octets{"portable-dot8",
                                        kRows,
                                        kColumns,
                                        8,
                                        0,
                                        portable_tile<8, false, false>,
                                        portable_tile<8, false, false>,
                                        portable_pack_activation_groups,
                                        nullptr,
                                        portable_micro_kernels};
  static const DotProductKernels unsigned_quads{"portable-dot4u",
                                                kRows,
                                                kColumns,
                                                4,
                                                128,
                                                portable_tile<4, false, true>,
                                                portable_tile<4, true, false>,
                                                portable_pack_activation_groups,
                                                nullptr,
                                                portable_micro_kernels};
  if (unsigned_activations) return unsigned_quads;
  return group_depth == 8 ? octets : quads;
}

}  // namespace orknn::kernels::cpu::optimized
