// The reference kernels' broadcast walk: every output element of BroadcastParams in row-major
// order with its two operands' offsets. Shared by the float and the int8 element-wise kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reference/elementwise.h"

namespace orknn::kernels::reference {
namespace broadcast_detail {

// Visits output elements in row-major order, calling visit(a_offset, b_offset, output_offset)
// for each. Recursion keeps the walk allocation-free for any rank.
template <typename Visit>
void walk_dimension(const BroadcastParams& params, size_t dimension, int64_t a_offset,
                    int64_t b_offset, int64_t* output_offset, const Visit& visit) {
  const int64_t size = params.output_shape[dimension];
  const int64_t a_stride = params.a_strides[dimension];
  const int64_t b_stride = params.b_strides[dimension];
  if (dimension + 1 == params.output_shape.size()) {
    for (int64_t i = 0; i < size; ++i) {
      visit(a_offset + i * a_stride, b_offset + i * b_stride, (*output_offset)++);
    }
    return;
  }
  for (int64_t i = 0; i < size; ++i) {
    walk_dimension(params, dimension + 1, a_offset + i * a_stride, b_offset + i * b_stride,
                   output_offset, visit);
  }
}

}  // namespace broadcast_detail

template <typename Visit>
void broadcast_walk(const BroadcastParams& params, const Visit& visit) {
  if (params.output_shape.empty()) {  // a scalar output has exactly one element
    visit(0, 0, 0);
    return;
  }
  int64_t output_offset = 0;
  broadcast_detail::walk_dimension(params, 0, 0, 0, &output_offset, visit);
}

}  // namespace orknn::kernels::reference
