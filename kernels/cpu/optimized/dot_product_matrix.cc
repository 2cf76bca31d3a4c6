// int8 Gemm and MatMul on the dot-product tiles (dot_product_kernels.h): Y = A x B with the
// rows of A (activations, codes a + o) packed per task and depth chunk, and the constant B
// (the weights; output channels are its columns) packed once as b - zb. The zero-point term is
// then one constant per output column, -(za + o) sum_k (b - zb), computed per B matrix at build
// and added with Gemm's C before the requantization. Blocking as the int16-pair driver
// (optimized/matrix_product.cc): a task is one row block by one column block of one product.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
#include "optimized/dot_product_kernels.h"
#include "optimized/product_batch.h"
#include "optimized/row_vector.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Int8Requantization;

constexpr size_t kDepthBlock = 256;  // matrix depth per chunk
// A is packed per task (its rows cost), B is the packed weights (streamed).
constexpr BlockLimits kLimits{kDepthBlock, 144, 192, 144, 2, 24};

// Where Gemm's C is: element (row, column) at c[row * c_row_stride + column * c_column_stride].
struct CLayout {
  size_t row_stride = 0;
  size_t column_stride = 0;
};

class DotProductProduct {
 public:
  DotProductProduct(const DotProductKernels& kernels, const ProductShape& shape, Batch batch,
                    CLayout c_layout, const Int8Requantization& requantization,
                    const int8_t* constant_b)
      : kernels_(kernels),
        shape_(shape),
        batch_(std::move(batch)),
        c_layout_(c_layout),
        requantization_(requantization) {
    mr_ = kernels.rows;
    nr_ = kernels.columns;
    group_depth_ = kernels.group_depth;
    depth_groups_ = divide_round_up(shape_.k, group_depth_);
    // One row (row_vector.h): a task is a range of whole panels over the whole depth.
    row_vector_ = shape_.m == 1;
    chunk_groups_ = row_vector_ ? std::max<size_t>(depth_groups_, 1) : kDepthBlock / group_depth_;
    pack_b(constant_b);
    const size_t row_block = std::min(kLimits.row_block, round_up(shape_.m, mr_));
    const size_t column_block = row_vector_
                                    ? round_up(shape_.n, nr_)
                                    : std::min(kLimits.column_block, round_up(shape_.n, nr_));
    const size_t chunk_depth = std::min(chunk_groups_, depth_groups_) * group_depth_;
    accumulators_offset_ = align_bytes(row_block * chunk_depth);
    task_bytes_ = accumulators_offset_ + align_bytes(row_block * column_block * sizeof(int32_t));
    small_multipliers_ =
        small_multipliers(requantization.multipliers.data(), requantization.multipliers.size(),
                          requantization.output_zero_point);
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 gemm %zux%zu%s", kernels.name, mr_, nr_,
                  row_vector_ ? " row" : "");
  }

  size_t scratch_bytes() const { return task_bytes_; }
  const char* algorithm() const { return algorithm_; }

  void run(const int8_t* a, const int32_t* c, int8_t* y, ThreadPool& pool) const {
    const size_t products = batch_.a_offsets.size();
    if (row_vector_) {
      const size_t parts = row_vector_parts(shape_.n, nr_, pool.thread_count());
      pool.parallel_for(products * parts, [&](size_t task, size_t thread) {
        const RowVectorPart part = row_vector_part(shape_.n, nr_, parts, task % parts);
        if (part.columns == 0) return;
        run_block(a, c, y, task / parts, 0, 1, part.first_column, part.columns,
                  pool.scratch(thread, task_bytes_));
      });
      return;
    }
    const OutputBlocks blocks =
        choose_output_blocks(shape_.m, shape_.n, products, pool.thread_count(), mr_, nr_, kLimits);
    const size_t tasks = block_task_count(products, blocks);
    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      const BlockTask block = block_task(task, blocks);
      const size_t first_row = block.first_row;
      const size_t first_column = block.first_column;
      if (first_row >= shape_.m || first_column >= shape_.n) return;
      run_block(a, c, y, block.independent, first_row,
                std::min(blocks.row_block, shape_.m - first_row), first_column,
                std::min(blocks.column_block, shape_.n - first_column),
                pool.scratch(thread, task_bytes_));
    });
  }

 private:
  // Every distinct B into panels of NR columns of b - zb over the whole depth, and per matrix
  // and column the zero-point term.
  void pack_b(const int8_t* b) {
    const ProductShape& s = shape_;
    const size_t panels = divide_round_up(s.n, nr_);
    packed_b_size_ = panels * depth_groups_ * nr_ * group_depth_;
    packed_b_.assign(batch_.distinct_b * packed_b_size_, 0);
    zero_point_terms_.assign(batch_.distinct_b * s.n, 0);
    for (size_t matrix = 0; matrix < batch_.distinct_b; ++matrix) {
      const int8_t* source = b + matrix * s.k * s.n;
      int8_t* packed = packed_b_.data() + matrix * packed_b_size_;
      for (size_t column = 0; column < s.n; ++column) {
        const int32_t zero_point = requantization_.weight_zero_points[column];
        int8_t* panel = packed + (column / nr_) * depth_groups_ * nr_ * group_depth_;
        int64_t sum = 0;
        for (size_t depth = 0; depth < s.k; ++depth) {
          const int32_t offset = source[s.b_index(depth, column)] - zero_point;  // fits int8
          sum += offset;
          panel[((depth / group_depth_) * nr_ + column % nr_) * group_depth_ +
                depth % group_depth_] = static_cast<int8_t>(offset);
        }
        const int64_t packed_zero_point =
            int64_t{requantization_.input_zero_point} + kernels_.activation_offset;
        zero_point_terms_[matrix * s.n + column] =
            static_cast<int32_t>(static_cast<uint32_t>(-packed_zero_point * sum));
      }
    }
  }

  // A rows [first_row, + rows) x depth groups [group_begin, + groups) into panels of MR rows,
  // as a + o (zero past the matrix).
  void pack_a(const int8_t* a, size_t first_row, size_t rows, size_t group_begin, size_t groups,
              int8_t* packed) const {
    const ProductShape& s = shape_;
    const int8_t flip = activation_sign_flip(kernels_);
    if (row_vector_) {
      // The only row over the whole depth; the panel's other rows zero (some tiles compute
      // every row of a panel).
      std::memset(packed, 0, groups * mr_ * group_depth_);
      for (size_t depth = 0; depth < s.k; ++depth) {
        packed[(depth / group_depth_) * mr_ * group_depth_ + depth % group_depth_] =
            static_cast<int8_t>(a[s.a_index(0, depth)] ^ flip);
      }
      return;
    }
    for (size_t row0 = 0; row0 < rows; row0 += mr_) {
      int8_t* panel = packed + (row0 / mr_) * groups * mr_ * group_depth_;
      for (size_t r = 0; r < mr_; ++r) {
        const bool real_row = row0 + r < rows;
        const size_t row = first_row + row0 + r;
        for (size_t g = 0; g < groups; ++g) {
          int8_t* out = panel + (g * mr_ + r) * group_depth_;
          for (size_t d = 0; d < group_depth_; ++d) {
            const size_t depth = (group_begin + g) * group_depth_ + d;
            out[d] = real_row && depth < s.k ? static_cast<int8_t>(a[s.a_index(row, depth)] ^ flip)
                                             : int8_t{0};
          }
        }
      }
    }
  }

  void run_block(const int8_t* a, const int32_t* c, int8_t* y, size_t product, size_t first_row,
                 size_t rows, size_t first_column, size_t columns, uint8_t* scratch) const {
    const ProductShape& s = shape_;
    auto* packed_a = reinterpret_cast<int8_t*>(scratch);
    auto* accumulators = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
    const int8_t* matrix_a = a + batch_.a_offsets[product] * s.m * s.k;
    const size_t b_matrix = batch_.b_offsets[product];
    const int8_t* matrix_b = packed_b_.data() + b_matrix * packed_b_size_;
    const size_t c_stride = round_up(columns, nr_);
    const size_t panels = divide_round_up(columns, nr_);

    Int8DotTile tile{};
    tile.c_stride = c_stride;
    for (size_t group_begin = 0; group_begin < depth_groups_; group_begin += chunk_groups_) {
      const size_t groups = std::min(chunk_groups_, depth_groups_ - group_begin);
      pack_a(matrix_a, first_row, rows, group_begin, groups, packed_a);
      tile.depth_groups = groups;
      tile.accumulate = group_begin > 0;
      for (size_t q = 0; q < panels; ++q) {
        const size_t column = first_column + q * nr_;
        tile.columns = std::min(nr_, columns - q * nr_);
        tile.b = matrix_b + ((column / nr_) * depth_groups_ + group_begin) * nr_ * group_depth_;
        for (size_t row = 0; row < rows; row += mr_) {
          tile.rows = std::min(mr_, rows - row);
          tile.a = packed_a + (row / mr_) * groups * mr_ * group_depth_;
          tile.c = accumulators + row * c_stride + q * nr_;
          kernels_.tile_activations_in_a(tile);
        }
      }
    }

    const int32_t* terms = zero_point_terms_.data() + b_matrix * s.n + first_column;
    int8_t* matrix_y = y + product * s.m * s.n;
    for (size_t r = 0; r < rows; ++r) {
      const size_t row = first_row + r;
      finish_row(
          kernels_, requantization_, first_column, true, small_multipliers_,
          accumulators + r * c_stride, columns,
          [&](size_t j) {
            return c ? wrapping_add(terms[j], c[row * c_layout_.row_stride +
                                                (first_column + j) * c_layout_.column_stride])
                     : terms[j];
          },
          matrix_y + row * s.n + first_column);
    }
  }

  const DotProductKernels& kernels_;
  const ProductShape shape_;
  const Batch batch_;
  const CLayout c_layout_;
  const Int8Requantization requantization_;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t group_depth_ = 0;
  size_t depth_groups_ = 0;
  size_t chunk_groups_ = 0;
  size_t accumulators_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t packed_b_size_ = 0;
  bool small_multipliers_ = false;
  bool row_vector_ = false;
  std::vector<int8_t, LargeAllocator<int8_t>> packed_b_;
  std::vector<int32_t> zero_point_terms_;
  char algorithm_[64];
};

class DotProductGemm final : public GemmInt8 {
 public:
  DotProductGemm(const DotProductKernels& kernels, const ProductShape& shape, CLayout c_layout,
                 const Int8Requantization& requantization, const int8_t* constant_b)
      : product_(kernels, shape, single_product(), c_layout, requantization, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const int8_t* a, const int8_t*, const int32_t* c, int8_t* y,
           ThreadPool& pool) const override {
    product_.run(a, c, y, pool);
  }

 private:
  DotProductProduct product_;
};

class DotProductMatMul final : public MatMulInt8 {
 public:
  DotProductMatMul(const DotProductKernels& kernels, const ProductShape& shape, Batch batch,
                   const Int8Requantization& requantization, const int8_t* constant_b)
      : product_(kernels, shape, std::move(batch), CLayout{}, requantization, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const int8_t* a, const int8_t*, int8_t* y, ThreadPool& pool) const override {
    product_.run(a, nullptr, y, pool);
  }

 private:
  DotProductProduct product_;
};

// The products apply: constant B, an int8 input zero point, every b - zb within int8.
bool applies(const ProductShape& shape, const Batch& batch, const Int8Requantization& q,
             const int8_t* b) {
  if (!b || shape.m == 0 || shape.n == 0 || batch.a_offsets.empty()) return false;
  if (q.input_zero_point < -128 || q.input_zero_point > 127) return false;
  if (q.weight_zero_points.size() < shape.n || q.multipliers.size() < shape.n) return false;
  const size_t values = batch.distinct_b * shape.k * shape.n;
  for (size_t i = 0; i < values; ++i) {
    const size_t column = shape.transpose_b ? i / shape.k % shape.n : i % shape.n;
    const int32_t offset = b[i] - q.weight_zero_points[column];
    if (offset < -128 || offset > 127) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<GemmInt8> make_dot_product_gemm_int8(const DotProductKernels& kernels,
                                                     const reference::GemmParams& params,
                                                     const Int8Requantization& requantization,
                                                     const int8_t* constant_b) {
  // Gemm and MatMul have no pair corrections (dot_product_kernels.h): the int16 pairs run.
  if (kernels.pair_sums_limited) return nullptr;
  const ProductShape shape = gemm_shape(params);
  if (!applies(shape, single_product(), requantization, constant_b)) return nullptr;
  const CLayout c_layout{static_cast<size_t>(params.c_row_stride),
                         static_cast<size_t>(params.c_column_stride)};
  return std::make_unique<DotProductGemm>(kernels, shape, c_layout, requantization, constant_b);
}

std::unique_ptr<MatMulInt8> make_dot_product_matmul_int8(const DotProductKernels& kernels,
                                                         const reference::MatMulParams& params,
                                                         const Int8Requantization& requantization,
                                                         const int8_t* constant_b) {
  if (kernels.pair_sums_limited) return nullptr;  // as Gemm
  const ProductShape shape = matmul_shape(params);
  Batch batch = matmul_batch(params);
  if (!applies(shape, batch, requantization, constant_b)) return nullptr;
  return std::make_unique<DotProductMatMul>(kernels, shape, std::move(batch), requantization,
                                            constant_b);
}

}  // namespace orknn::kernels::cpu::optimized
