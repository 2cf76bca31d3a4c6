// Plain C++ tiles of the dot-product packed layout (dot_product_kernels.h), for every build:
// the drivers run on them in the native tests (with the sanitizers), and they state the layout
// the SDOT and SMMLA tiles implement, element by element.
#include "arm/dot_product_kernels.h"

namespace orknn::kernels::cpu::arm {
namespace {

constexpr size_t kRows = 8;
constexpr size_t kColumns = 8;

template <size_t kGroupDepth>
void portable_tile(const Int8DotTile& tile) {
  for (size_t r = 0; r < tile.rows; ++r) {
    for (size_t j = 0; j < tile.columns; ++j) {
      // Wrapping int32 sums, as the instructions compute them (dot_product_kernels.h).
      uint32_t sum = tile.accumulate ? static_cast<uint32_t>(tile.c[r * tile.c_stride + j]) : 0;
      for (size_t g = 0; g < tile.depth_groups; ++g) {
        const int8_t* a = tile.a + (g * kRows + r) * kGroupDepth;
        const int8_t* b = tile.b + (g * kColumns + j) * kGroupDepth;
        for (size_t d = 0; d < kGroupDepth; ++d) {
          sum += static_cast<uint32_t>(int32_t{a[d]} * int32_t{b[d]});
        }
      }
      tile.c[r * tile.c_stride + j] = static_cast<int32_t>(sum);
    }
  }
}

}  // namespace

const DotProductKernels& portable_dot_product_kernels(size_t group_depth) {
  static const DotProductKernels quads{
      "portable-dot4", kRows, kColumns, 4, portable_tile<4>, optimized::portable_micro_kernels};
  static const DotProductKernels octets{
      "portable-dot8", kRows, kColumns, 8, portable_tile<8>, optimized::portable_micro_kernels};
  return group_depth == 8 ? octets : quads;
}

}  // namespace orknn::kernels::cpu::arm
