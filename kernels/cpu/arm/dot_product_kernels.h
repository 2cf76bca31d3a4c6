// The int8 GEMMs (convolution, Gemm, MatMul) of the ARM dot-product variants: "neon-dotprod"
// (ARMv8.2 SDOT, four int8 products summed into each int32 lane) and "neon-i8mm" (ARMv8.6 SMMLA, a
// 2x8 by 8x2 int8 matrix product into a 2x2 int32 block). Both read int8 operands, not the int16
// pairs of the plain NEON kernels, so the zero points are handled outside the products:
//   sum_k (x - zx)(w - zw) = sum_k x (w - zw)  -  zx sum_k (w - zw)
// The weights are packed once as w - zw (which must fit int8, checked when the kernel is
// built) and the second term is a per-output-channel constant computed then too; the inputs
// are packed raw. All sums wrap modulo 2^32 (SDOT and SMMLA do not saturate) and the true
// accumulator fits int32 (docs/quantization.md 4.2), so the result equals the reference's.
//
// Packed operands, G = group_depth (4 for SDOT, 8 for SMMLA): an A panel of MR rows holds
// element (r, k) at a[((k / G) * MR + r) * G + k % G]; a B panel of NR columns holds (k, j) at
// b[((k / G) * NR + j) * G + k % G]. Depth past the matrix, rows and columns past its edge are
// zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "dispatch.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::arm {

// One MR x NR block of C = A x B over `depth_groups` packed groups of G. Only rows x columns of
// it are real: c is written for r < rows, j < columns at c[r * c_stride + j], as C (accumulate
// false) or added to it (accumulate true).
struct Int8DotTile {
  size_t rows;
  size_t columns;
  size_t depth_groups;
  const int8_t* a;
  const int8_t* b;
  int32_t* c;
  size_t c_stride;
  bool accumulate;
};

struct DotProductKernels {
  const char* name;    // "neon-dotprod", "neon-i8mm"
  size_t rows;         // MR
  size_t columns;      // NR
  size_t group_depth;  // G
  void (*tile)(const Int8DotTile& tile);
  // The variant's other micro-kernels (the requantization row).
  const optimized::MicroKernels& (*base)();
};

// Defined only in AArch64 builds; call them only on a CPU with the instructions.
const DotProductKernels& sdot_kernels();
const DotProductKernels& i8mm_kernels();
// Plain C++ tiles of the same packed layout (group_depth 4 or 8) on the portable micro-kernels,
// in every build: they let the drivers below be tested natively, under the sanitizers.
const DotProductKernels& portable_dot_product_kernels(size_t group_depth);

// int8 convolution as GEMM on `kernels` (non-depthwise shapes): null when it does not apply,
// i.e. the weights are not constant, a weight offset w - zw does not fit int8, or the input zero
// point is not an int8 code (padding is packed as that code). The table's base requantization
// row finishes each output row.
std::unique_ptr<Conv2DInt8> make_dot_product_conv2d_int8(
    const DotProductKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);

// int8 Gemm / MatMul (output channels are B's columns) on `kernels`: null when B is not
// constant, a weight offset b - zb does not fit int8, or the input zero point is not an int8
// code.
std::unique_ptr<GemmInt8> make_dot_product_gemm_int8(
    const DotProductKernels& kernels, const reference::GemmParams& params,
    const reference::Int8Requantization& requantization, const int8_t* constant_b);
std::unique_ptr<MatMulInt8> make_dot_product_matmul_int8(
    const DotProductKernels& kernels, const reference::MatMulParams& params,
    const reference::Int8Requantization& requantization, const int8_t* constant_b);

}  // namespace orknn::kernels::cpu::arm
