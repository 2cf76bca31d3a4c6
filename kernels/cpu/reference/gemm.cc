#include "reference/gemm.h"

#include <cstddef>

namespace orknn::kernels::reference {
namespace {

int64_t a_index(const GemmParams& p, int64_t row, int64_t depth) {
  return p.transpose_a ? depth * p.m + row : row * p.k + depth;
}
int64_t b_index(const GemmParams& p, int64_t depth, int64_t column) {
  return p.transpose_b ? column * p.k + depth : depth * p.n + column;
}

// Calls multiply(a_offset, b_offset, y_offset) with the element offsets of the operands and
// the result of every matrix product in the batch.
template <typename Multiply>
void for_each_matrix(const MatMulParams& p, Multiply&& multiply) {
  int64_t batches = 1;
  for (int64_t dimension : p.batch_shape) batches *= dimension;
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t a_offset = 0, b_offset = 0;
    int64_t rest = batch;
    for (size_t d = p.batch_shape.size(); d-- > 0;) {
      const int64_t coordinate = rest % p.batch_shape[d];
      rest /= p.batch_shape[d];
      a_offset += coordinate * p.a_batch_strides[d];
      b_offset += coordinate * p.b_batch_strides[d];
    }
    multiply(a_offset * p.m * p.k, b_offset * p.k * p.n, batch * p.m * p.n);
  }
}

// Each matrix of a MatMul is a Gemm without transposes, alpha or C.
GemmParams matrix_product(const MatMulParams& p) {
  GemmParams params;
  params.m = p.m;
  params.n = p.n;
  params.k = p.k;
  return params;
}

}  // namespace

void gemm(const GemmParams& p, const FusedActivation& activation, const float* a, const float* b,
          const float* c, float* y) {
  for (int64_t row = 0; row < p.m; ++row) {
    for (int64_t column = 0; column < p.n; ++column) {
      float sum = 0.0f;
      for (int64_t depth = 0; depth < p.k; ++depth) {
        sum += a[a_index(p, row, depth)] * b[b_index(p, depth, column)];
      }
      float value = p.alpha * sum;
      if (c) value += p.beta * c[row * p.c_row_stride + column * p.c_column_stride];
      y[row * p.n + column] = apply_fused_activation(activation, value);
    }
  }
}

void gemm_int8(const GemmParams& p, const Int8Requantization& q, const int8_t* a, const int8_t* b,
               const int32_t* c, int8_t* y) {
  for (int64_t row = 0; row < p.m; ++row) {
    for (int64_t column = 0; column < p.n; ++column) {
      const int32_t weight_zero_point = q.weight_zero_points[static_cast<size_t>(column)];
      int32_t accumulator = c ? c[row * p.c_row_stride + column * p.c_column_stride] : 0;
      for (int64_t depth = 0; depth < p.k; ++depth) {
        accumulator += (a[a_index(p, row, depth)] - q.input_zero_point) *
                       (b[b_index(p, depth, column)] - weight_zero_point);
      }
      y[row * p.n + column] = requantize(accumulator, q.multipliers[static_cast<size_t>(column)],
                                         q.output_zero_point, q.output_minimum, q.output_maximum);
    }
  }
}

void matmul(const MatMulParams& p, const FusedActivation& activation, const float* a,
            const float* b, float* y) {
  const GemmParams product = matrix_product(p);
  for_each_matrix(p, [&](int64_t a_offset, int64_t b_offset, int64_t y_offset) {
    gemm(product, activation, a + a_offset, b + b_offset, nullptr, y + y_offset);
  });
}

void matmul_int8(const MatMulParams& p, const Int8Requantization& q, const int8_t* a,
                 const int8_t* b, int8_t* y) {
  const GemmParams product = matrix_product(p);
  for_each_matrix(p, [&](int64_t a_offset, int64_t b_offset, int64_t y_offset) {
    gemm_int8(product, q, a + a_offset, b + b_offset, nullptr, y + y_offset);
  });
}

}  // namespace orknn::kernels::reference
