// One matrix product's shape and where its operands' elements are, and the matrices of a
// batched product (Gemm: one; MatMul: numpy broadcasting over the batch dimensions) as offsets
// in whole matrices, shared by the Gemm/MatMul drivers of every variant
// (optimized/matrix_product.cc, optimized/dot_product_matrix.cc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "reference/gemm.h"

namespace orknn::kernels::cpu::optimized {

// Y[m][n] = A[m][k] x B[k][n], A and B possibly stored transposed.
struct ProductShape {
  size_t m = 0;
  size_t n = 0;
  size_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;

  size_t a_index(size_t row, size_t depth) const {
    return transpose_a ? depth * m + row : row * k + depth;
  }
  size_t b_index(size_t depth, size_t column) const {
    return transpose_b ? column * k + depth : depth * n + column;
  }
  // The same as steps between elements: a_index(row, depth) = row * a_row_stride() + depth *
  // a_depth_stride(), and likewise for B.
  size_t a_row_stride() const { return transpose_a ? 1 : k; }
  size_t a_depth_stride() const { return transpose_a ? m : 1; }
  size_t b_depth_stride() const { return transpose_b ? 1 : n; }
  size_t b_column_stride() const { return transpose_b ? k : 1; }
};

inline ProductShape gemm_shape(const reference::GemmParams& p) {
  return ProductShape{static_cast<size_t>(p.m), static_cast<size_t>(p.n), static_cast<size_t>(p.k),
                      p.transpose_a, p.transpose_b};
}

inline ProductShape matmul_shape(const reference::MatMulParams& p) {
  return ProductShape{static_cast<size_t>(p.m), static_cast<size_t>(p.n), static_cast<size_t>(p.k),
                      false, false};
}

struct Batch {
  std::vector<size_t> a_offsets;
  std::vector<size_t> b_offsets;
  size_t distinct_b = 1;  // B matrices that exist (max offset + 1)
};

inline Batch single_product() {
  Batch batch;
  batch.a_offsets = {0};
  batch.b_offsets = {0};
  return batch;
}

// Product i of the output batch (the last dimension fastest) reads A and B at these offsets.
inline Batch matmul_batch(const reference::MatMulParams& p) {
  size_t products = 1;
  for (int64_t dimension : p.batch_shape) products *= static_cast<size_t>(dimension);
  Batch batch;
  for (size_t product = 0; product < products; ++product) {
    size_t a_offset = 0, b_offset = 0, rest = product;
    for (size_t d = p.batch_shape.size(); d-- > 0;) {
      const size_t extent = static_cast<size_t>(p.batch_shape[d]);
      const size_t coordinate = rest % extent;
      rest /= extent;
      a_offset += coordinate * static_cast<size_t>(p.a_batch_strides[d]);
      b_offset += coordinate * static_cast<size_t>(p.b_batch_strides[d]);
    }
    batch.a_offsets.push_back(a_offset);
    batch.b_offsets.push_back(b_offset);
    batch.distinct_b = std::max(batch.distinct_b, b_offset + 1);
  }
  return batch;
}

}  // namespace orknn::kernels::cpu::optimized
