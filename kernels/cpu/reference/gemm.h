// Reference kernels for matrix products: ONNX Gemm and MatMul, float32 and int8. The int8
// arithmetic (Int8Requantization, FusedActivation) is shared with the convolutions and specified
// in docs/quantization.md.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/convolution.h"

namespace orknn::kernels::reference {

// Y[m][n] = alpha * sum_k A'[m][k] * B'[k][n] + beta * C[m][n], where A' is A ([M][K], or
// [K][M] when transposed) and B' is B ([K][N], or [N][K] when transposed). C is read at
// m * c_row_stride + n * c_column_stride, so a stride of 0 broadcasts it along that dimension.
struct GemmParams {
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  bool transpose_a = false;
  bool transpose_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  int64_t c_row_stride = 0;
  int64_t c_column_stride = 0;
};

// `c` may be null (no addend).
void gemm(const GemmParams& params, const FusedActivation& activation, const float* a,
          const float* b, const float* c, float* y);

// int8: alpha is folded into the multipliers and beta must be 1; `c` is the int32 bias at scale
// a_scale x b_scale[n] and may be null. Output channels are the columns n.
void gemm_int8(const GemmParams& params, const Int8Requantization& requantization, const int8_t* a,
               const int8_t* b, const int32_t* c, int8_t* y);

// A batch of [M][K] x [K][N] products with numpy broadcasting over the batch dimensions. The
// strides count whole matrices and are 0 where an operand is broadcast. 1-D operands are
// described as [1][K] or [K][1] matrices by the caller.
struct MatMulParams {
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  std::vector<int64_t> batch_shape;  // output batch dimensions, outermost first
  std::vector<int64_t> a_batch_strides;
  std::vector<int64_t> b_batch_strides;
};

void matmul(const MatMulParams& params, const FusedActivation& activation, const float* a,
            const float* b, float* y);
// int8: output channels are the columns n of B.
void matmul_int8(const MatMulParams& params, const Int8Requantization& requantization,
                 const int8_t* a, const int8_t* b, int8_t* y);

}  // namespace orknn::kernels::reference
