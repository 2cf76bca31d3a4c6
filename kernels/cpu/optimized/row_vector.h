// Products whose A is one row (Gemm and MatMul with M = 1: the fully connected layer at the end
// of every classifier, batch 1). The product then does as many multiply-adds as it reads weights,
// so its time is the time to stream the packed B from memory once: the drivers
// (optimized/matrix_product.cc, optimized/dot_product_matrix.cc) run each B panel over the whole
// depth in one tile call, panels in the order they are packed, so the weights are read as one
// sequential stream per task (the blocked path cut every panel into depth chunks and jumped
// from panel to panel between them, restarting the hardware prefetcher every few KiB). The
// tiles still add the depth in order, so the results are the blocked path's, bit for bit.
#pragma once

#include <cstddef>

#include "optimized/blocking.h"

namespace orknn::kernels::cpu::optimized {

// The columns of one task: whole panels, [first_column, first_column + columns).
struct RowVectorPart {
  size_t first_column = 0;
  size_t columns = 0;
};

// Tasks per product: one thread streams B alone; more threads split the panels into two
// contiguous ranges per thread (so a thread slowed by a neighbour leaves work to the other).
inline size_t row_vector_parts(size_t columns, size_t nr, size_t threads) {
  const size_t panels = divide_round_up(columns, nr);
  if (threads <= 1 || panels == 0) return 1;
  return panels < 2 * threads ? panels : 2 * threads;
}

inline RowVectorPart row_vector_part(size_t columns, size_t nr, size_t parts, size_t part) {
  const size_t panels = divide_round_up(columns, nr);
  const size_t first_panel = panels * part / parts;
  const size_t end_panel = panels * (part + 1) / parts;
  RowVectorPart result;
  result.first_column = first_panel * nr;
  const size_t end_column = end_panel * nr < columns ? end_panel * nr : columns;
  result.columns = end_column > result.first_column ? end_column - result.first_column : 0;
  return result;
}

}  // namespace orknn::kernels::cpu::optimized
