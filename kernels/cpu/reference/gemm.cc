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

// Offsets (in matrices) of the A and B operands of output batch `batch`.
void batch_offsets(const MatMulParams& p, int64_t batch, int64_t* a_offset, int64_t* b_offset) {
  *a_offset = 0;
  *b_offset = 0;
  for (size_t d = p.batch_shape.size(); d-- > 0;) {
    const int64_t coordinate = batch % p.batch_shape[d];
    batch /= p.batch_shape[d];
    *a_offset += coordinate * p.a_batch_strides[d];
    *b_offset += coordinate * p.b_batch_strides[d];
  }
}

int64_t batch_count(const MatMulParams& p) {
  int64_t count = 1;
  for (int64_t dimension : p.batch_shape) count *= dimension;
  return count;
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
  const int64_t batches = batch_count(p);
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t a_offset, b_offset;
    batch_offsets(p, batch, &a_offset, &b_offset);
    const float* a_matrix = a + a_offset * p.m * p.k;
    const float* b_matrix = b + b_offset * p.k * p.n;
    float* y_matrix = y + batch * p.m * p.n;
    for (int64_t row = 0; row < p.m; ++row) {
      for (int64_t column = 0; column < p.n; ++column) {
        float sum = 0.0f;
        for (int64_t depth = 0; depth < p.k; ++depth) {
          sum += a_matrix[row * p.k + depth] * b_matrix[depth * p.n + column];
        }
        y_matrix[row * p.n + column] = apply_fused_activation(activation, sum);
      }
    }
  }
}

void matmul_int8(const MatMulParams& p, const Int8Requantization& q, const int8_t* a,
                 const int8_t* b, int8_t* y) {
  const int64_t batches = batch_count(p);
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t a_offset, b_offset;
    batch_offsets(p, batch, &a_offset, &b_offset);
    const int8_t* a_matrix = a + a_offset * p.m * p.k;
    const int8_t* b_matrix = b + b_offset * p.k * p.n;
    int8_t* y_matrix = y + batch * p.m * p.n;
    for (int64_t row = 0; row < p.m; ++row) {
      for (int64_t column = 0; column < p.n; ++column) {
        const int32_t weight_zero_point = q.weight_zero_points[static_cast<size_t>(column)];
        int32_t accumulator = 0;
        for (int64_t depth = 0; depth < p.k; ++depth) {
          accumulator += (a_matrix[row * p.k + depth] - q.input_zero_point) *
                         (b_matrix[depth * p.n + column] - weight_zero_point);
        }
        y_matrix[row * p.n + column] =
            requantize(accumulator, q.multipliers[static_cast<size_t>(column)], q.output_zero_point,
                       q.output_minimum, q.output_maximum);
      }
    }
  }
}

}  // namespace orknn::kernels::reference
