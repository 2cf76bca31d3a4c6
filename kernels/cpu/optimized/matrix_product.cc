// Gemm and MatMul drivers, float32 and int8: C = A x B on packed panels, where B (usually the
// constant weights) is packed once at build and A is packed per task and depth chunk.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::FusedActivation;
using reference::GemmParams;
using reference::Int8Requantization;
using reference::MatMulParams;

// The matrices of one product: offsets (in whole matrices) of A, B and Y for each product of
// the batch; Gemm has one product.
struct Batch {
  std::vector<size_t> a_offsets;
  std::vector<size_t> b_offsets;
  size_t distinct_b = 1;  // B matrices that exist (max offset + 1)
};

Batch single_product() {
  Batch batch;
  batch.a_offsets = {0};
  batch.b_offsets = {0};
  return batch;
}

Batch matmul_batch(const MatMulParams& p) {
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

// Shape of one product and where its operands' elements are.
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
};

// A rows [first_row, first_row + rows) x depth [depth_begin, depth_begin + depth) into panels
// of MR rows: [panel][depth][MR] (Out float), or the int16-pair form holding a - zero_point.
void pack_a_float(const ProductShape& s, const float* a, size_t first_row, size_t rows,
                  size_t depth_begin, size_t depth, size_t mr, float* packed) {
  for (size_t row0 = 0; row0 < rows; row0 += mr) {
    float* panel = packed + (row0 / mr) * depth * mr;
    for (size_t r = 0; r < mr; ++r) {
      const size_t row = first_row + row0 + r;
      if (row0 + r >= rows) {
        for (size_t kk = 0; kk < depth; ++kk) panel[kk * mr + r] = 0.0f;
        continue;
      }
      for (size_t kk = 0; kk < depth; ++kk) {
        panel[kk * mr + r] = a[s.a_index(row, depth_begin + kk)];
      }
    }
  }
}

void pack_a_int16_pairs(const ProductShape& s, const int8_t* a, int32_t zero_point,
                        size_t first_row, size_t rows, size_t pair_begin, size_t pairs, size_t mr,
                        int16_t* packed) {
  for (size_t row0 = 0; row0 < rows; row0 += mr) {
    int16_t* panel = packed + (row0 / mr) * pairs * mr * 2;
    for (size_t r = 0; r < mr; ++r) {
      const size_t row = first_row + row0 + r;
      const bool real_row = row0 + r < rows;
      for (size_t pp = 0; pp < pairs; ++pp) {
        for (size_t half = 0; half < 2; ++half) {
          const size_t depth = 2 * (pair_begin + pp) + half;
          panel[(pp * mr + r) * 2 + half] =
              real_row && depth < s.k ? static_cast<int16_t>(a[s.a_index(row, depth)] - zero_point)
                                      : int16_t{0};
        }
      }
    }
  }
}

// B columns [first_column, first_column + columns) x depth [depth_begin, +depth) into panels
// of NR columns: [panel][depth][NR], or int16 pairs of b - zero_points[column].
void pack_b_float(const ProductShape& s, const float* b, size_t depth_begin, size_t depth,
                  size_t first_column, size_t columns, size_t nr, float* packed) {
  for (size_t column0 = 0; column0 < columns; column0 += nr) {
    float* panel = packed + (column0 / nr) * depth * nr;
    for (size_t kk = 0; kk < depth; ++kk) {
      for (size_t j = 0; j < nr; ++j) {
        panel[kk * nr + j] = column0 + j < columns
                                 ? b[s.b_index(depth_begin + kk, first_column + column0 + j)]
                                 : 0.0f;
      }
    }
  }
}

void pack_b_int16_pairs(const ProductShape& s, const int8_t* b, const int32_t* zero_points,
                        size_t pair_begin, size_t pairs, size_t first_column, size_t columns,
                        size_t nr, int16_t* packed) {
  for (size_t column0 = 0; column0 < columns; column0 += nr) {
    int16_t* panel = packed + (column0 / nr) * pairs * nr * 2;
    for (size_t pp = 0; pp < pairs; ++pp) {
      for (size_t j = 0; j < nr; ++j) {
        const size_t column = first_column + column0 + j;
        for (size_t half = 0; half < 2; ++half) {
          const size_t depth = 2 * (pair_begin + pp) + half;
          panel[(pp * nr + j) * 2 + half] =
              column0 + j < columns && depth < s.k
                  ? static_cast<int16_t>(b[s.b_index(depth, column)] - zero_points[column])
                  : int16_t{0};
        }
      }
    }
  }
}

// ---- float32 ------------------------------------------------------------------------------

// What happens after A x B. Fused when alpha = 1 and C is absent or one row added with beta = 1:
// the tiles start from C and apply the activation. Otherwise a pass computes
// alpha * sum + beta * C, then the activation, as reference::gemm does.
struct FloatEpilogue {
  float alpha = 1.0f;
  float beta = 1.0f;
  size_t c_row_stride = 0;
  size_t c_column_stride = 0;
  FusedActivation activation;
};

class FloatProduct {
 public:
  FloatProduct(const MicroKernels& kernels, const ProductShape& shape, Batch batch,
               const FloatEpilogue& epilogue, const float* constant_b)
      : kernels_(kernels),
        shape_(shape),
        batch_(std::move(batch)),
        epilogue_(epilogue),
        activation_(to_float_activation(epilogue.activation)),
        has_activation_(epilogue.activation.kind != FusedActivation::Kind::kNone) {
    mr_ = kernels.float_rows;
    nr_ = kernels.float_columns;
    const size_t depth_block = std::min(kFloatMatrixLimits.depth_block, shape.k);
    const size_t row_block = std::min(kFloatMatrixLimits.row_block, round_up(shape.m, mr_));
    const size_t column_block = std::min(kFloatMatrixLimits.column_block, round_up(shape.n, nr_));
    b_block_offset_ = align_bytes(row_block * depth_block * sizeof(float));
    task_bytes_ = b_block_offset_;
    if (constant_b) {
      packed_b_size_ = round_up(shape.n, nr_) * shape.k;
      packed_b_.resize(batch_.distinct_b * packed_b_size_);
      for (size_t matrix = 0; matrix < batch_.distinct_b; ++matrix) {
        pack_b_float(shape, constant_b + matrix * shape.k * shape.n, 0, shape.k, 0, shape.n, nr_,
                     packed_b_.data() + matrix * packed_b_size_);
      }
    } else {
      task_bytes_ += align_bytes(depth_block * column_block * sizeof(float));
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s gemm %zux%zu", kernels.name, mr_, nr_);
  }

  size_t scratch_bytes() const { return task_bytes_; }
  const char* algorithm() const { return algorithm_; }

  void run(const float* a, const float* b, const float* c, float* y, ThreadPool& pool) const {
    const bool fused = epilogue_.alpha == 1.0f &&
                       (c == nullptr || (epilogue_.beta == 1.0f && epilogue_.c_row_stride == 0 &&
                                         epilogue_.c_column_stride == 1));
    const size_t products = batch_.a_offsets.size();
    const OutputBlocks blocks = choose_output_blocks(
        shape_.m, shape_.n, products, pool.thread_count(), mr_, nr_, kFloatMatrixLimits);
    const size_t tasks = products * blocks.row_blocks * blocks.column_blocks;
    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      const size_t column_block = task % blocks.column_blocks;
      task /= blocks.column_blocks;
      const size_t row_block = task % blocks.row_blocks;
      const size_t product = task / blocks.row_blocks;
      run_block(a, b, c, y, fused, product, row_block * blocks.row_block, blocks.row_block,
                column_block * blocks.column_block, blocks.column_block,
                pool.scratch(thread, task_bytes_));
    });
  }

 private:
  void run_block(const float* a, const float* b, const float* c, float* y, bool fused,
                 size_t product, size_t first_row, size_t row_block, size_t first_column,
                 size_t column_block, uint8_t* scratch) const {
    const ProductShape& s = shape_;
    if (first_row >= s.m || first_column >= s.n) return;
    const size_t rows = std::min(row_block, s.m - first_row);
    const size_t columns = std::min(column_block, s.n - first_column);
    const float* matrix_a = a + batch_.a_offsets[product] * s.m * s.k;
    const size_t b_matrix = batch_.b_offsets[product];
    float* matrix_y = y + product * s.m * s.n;
    auto* packed_a = reinterpret_cast<float*>(scratch);
    auto* packed_b_block = reinterpret_cast<float*>(scratch + b_block_offset_);
    const size_t panels = divide_round_up(columns, nr_);
    const bool fused_bias = fused && c != nullptr;

    for (size_t depth_begin = 0; depth_begin < s.k; depth_begin += kFloatMatrixLimits.depth_block) {
      const size_t depth = std::min(kFloatMatrixLimits.depth_block, s.k - depth_begin);
      pack_a_float(s, matrix_a, first_row, rows, depth_begin, depth, mr_, packed_a);
      if (packed_b_.empty()) {
        pack_b_float(s, b + b_matrix * s.k * s.n, depth_begin, depth, first_column, columns, nr_,
                     packed_b_block);
      }
      const bool last = depth_begin + depth == s.k;
      FloatTile tile{};
      tile.depth = depth;
      tile.b_stride = nr_;
      tile.c_stride = s.n;
      tile.accumulate = depth_begin > 0;
      tile.activation = last && fused && has_activation_ ? &activation_ : nullptr;
      for (size_t panel = 0; panel < panels; ++panel) {
        const size_t column = first_column + panel * nr_;
        tile.columns = std::min(nr_, columns - panel * nr_);
        tile.b = packed_b_.empty() ? packed_b_block + panel * depth * nr_
                                   : packed_b_.data() + b_matrix * packed_b_size_ +
                                         ((column / nr_) * s.k + depth_begin) * nr_;
        tile.column_bias = !tile.accumulate && fused_bias ? c + column : nullptr;
        for (size_t row = 0; row < rows; row += mr_) {
          tile.rows = std::min(mr_, rows - row);
          tile.a = packed_a + (row / mr_) * depth * mr_;
          tile.c = matrix_y + (first_row + row) * s.n + column;
          kernels_.float_tile(tile);
        }
      }
    }
    if (fused) return;
    for (size_t r = 0; r < rows; ++r) {
      const size_t row = first_row + r;
      float* out = matrix_y + row * s.n;
      for (size_t column = first_column; column < first_column + columns; ++column) {
        float value = epilogue_.alpha * out[column];
        if (c) {
          value +=
              epilogue_.beta * c[row * epilogue_.c_row_stride + column * epilogue_.c_column_stride];
        }
        out[column] = reference::apply_fused_activation(epilogue_.activation, value);
      }
    }
  }

  const MicroKernels& kernels_;
  const ProductShape shape_;
  const Batch batch_;
  const FloatEpilogue epilogue_;
  const FloatActivation activation_;
  const bool has_activation_;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t b_block_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t packed_b_size_ = 0;
  std::vector<float> packed_b_;
  char algorithm_[64];
};

class PackedGemm final : public GemmFloat {
 public:
  PackedGemm(const MicroKernels& kernels, const ProductShape& shape, const FloatEpilogue& epilogue,
             const float* constant_b)
      : product_(kernels, shape, single_product(), epilogue, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const float* a, const float* b, const float* c, float* y,
           ThreadPool& pool) const override {
    product_.run(a, b, c, y, pool);
  }

 private:
  FloatProduct product_;
};

class PackedMatMul final : public MatMulFloat {
 public:
  PackedMatMul(const MicroKernels& kernels, const ProductShape& shape, Batch batch,
               const FloatEpilogue& epilogue, const float* constant_b)
      : product_(kernels, shape, std::move(batch), epilogue, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const float* a, const float* b, float* y, ThreadPool& pool) const override {
    product_.run(a, b, nullptr, y, pool);
  }

 private:
  FloatProduct product_;
};

// ---- int8 ---------------------------------------------------------------------------------

// C (Gemm's int32 bias) is added at tile init when it is one row (per column), otherwise to
// the accumulators before requantization; output channels are the columns.
struct Int8Bias {
  size_t c_row_stride = 0;
  size_t c_column_stride = 0;
};

class Int8Product {
 public:
  Int8Product(const MicroKernels& kernels, const ProductShape& shape, Batch batch,
              const Int8Requantization& q, const Int8Bias& bias, const int8_t* constant_b)
      : kernels_(kernels), shape_(shape), batch_(std::move(batch)), q_(q), bias_(bias) {
    mr_ = kernels.int16_rows;
    nr_ = kernels.int16_columns;
    depth_pairs_ = divide_round_up(shape.k, 2);
    const size_t pair_block = std::min(kInt16MatrixLimits.depth_block, depth_pairs_);
    const size_t row_block = std::min(kInt16MatrixLimits.row_block, round_up(shape.m, mr_));
    const size_t column_block = std::min(kInt16MatrixLimits.column_block, round_up(shape.n, nr_));
    accumulators_offset_ = align_bytes(row_block * pair_block * 2 * sizeof(int16_t));
    b_block_offset_ =
        accumulators_offset_ + align_bytes(row_block * column_block * sizeof(int32_t));
    task_bytes_ = b_block_offset_;
    if (constant_b) {
      packed_b_size_ = round_up(shape.n, nr_) * depth_pairs_ * 2;
      packed_b_.resize(batch_.distinct_b * packed_b_size_);
      for (size_t matrix = 0; matrix < batch_.distinct_b; ++matrix) {
        pack_b_int16_pairs(shape, constant_b + matrix * shape.k * shape.n,
                           q_.weight_zero_points.data(), 0, depth_pairs_, 0, shape.n, nr_,
                           packed_b_.data() + matrix * packed_b_size_);
      }
    } else {
      task_bytes_ += align_bytes(pair_block * 2 * column_block * sizeof(int16_t));
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 gemm %zux%zu", kernels.name, mr_, nr_);
  }

  size_t scratch_bytes() const { return task_bytes_; }
  const char* algorithm() const { return algorithm_; }

  void run(const int8_t* a, const int8_t* b, const int32_t* c, int8_t* y, ThreadPool& pool) const {
    const size_t products = batch_.a_offsets.size();
    const OutputBlocks blocks = choose_output_blocks(
        shape_.m, shape_.n, products, pool.thread_count(), mr_, nr_, kInt16MatrixLimits);
    const size_t tasks = products * blocks.row_blocks * blocks.column_blocks;
    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      const size_t column_block = task % blocks.column_blocks;
      task /= blocks.column_blocks;
      const size_t row_block = task % blocks.row_blocks;
      const size_t product = task / blocks.row_blocks;
      run_block(a, b, c, y, product, row_block * blocks.row_block, blocks.row_block,
                column_block * blocks.column_block, blocks.column_block,
                pool.scratch(thread, task_bytes_));
    });
  }

 private:
  void run_block(const int8_t* a, const int8_t* b, const int32_t* c, int8_t* y, size_t product,
                 size_t first_row, size_t row_block, size_t first_column, size_t column_block,
                 uint8_t* scratch) const {
    const ProductShape& s = shape_;
    if (first_row >= s.m || first_column >= s.n) return;
    const size_t rows = std::min(row_block, s.m - first_row);
    const size_t columns = std::min(column_block, s.n - first_column);
    const int8_t* matrix_a = a + batch_.a_offsets[product] * s.m * s.k;
    const size_t b_matrix = batch_.b_offsets[product];
    int8_t* matrix_y = y + product * s.m * s.n;
    auto* packed_a = reinterpret_cast<int16_t*>(scratch);
    auto* accumulators = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
    auto* packed_b_block = reinterpret_cast<int16_t*>(scratch + b_block_offset_);
    const size_t accumulator_stride = round_up(columns, nr_);
    const size_t panels = divide_round_up(columns, nr_);
    const bool bias_per_column = c && bias_.c_row_stride == 0 && bias_.c_column_stride == 1;

    for (size_t pair_begin = 0; pair_begin < depth_pairs_;
         pair_begin += kInt16MatrixLimits.depth_block) {
      const size_t pairs = std::min(kInt16MatrixLimits.depth_block, depth_pairs_ - pair_begin);
      pack_a_int16_pairs(s, matrix_a, q_.input_zero_point, first_row, rows, pair_begin, pairs, mr_,
                         packed_a);
      if (packed_b_.empty()) {
        pack_b_int16_pairs(s, b + b_matrix * s.k * s.n, q_.weight_zero_points.data(), pair_begin,
                           pairs, first_column, columns, nr_, packed_b_block);
      }
      Int16PairTile tile{};
      tile.depth_pairs = pairs;
      tile.c_stride = accumulator_stride;
      tile.accumulate = pair_begin > 0;
      for (size_t panel = 0; panel < panels; ++panel) {
        const size_t column = first_column + panel * nr_;
        tile.columns = std::min(nr_, columns - panel * nr_);
        tile.b = packed_b_.empty() ? packed_b_block + panel * pairs * nr_ * 2
                                   : packed_b_.data() + b_matrix * packed_b_size_ +
                                         ((column / nr_) * depth_pairs_ + pair_begin) * nr_ * 2;
        tile.column_bias = !tile.accumulate && bias_per_column ? c + column : nullptr;
        for (size_t row = 0; row < rows; row += mr_) {
          tile.rows = std::min(mr_, rows - row);
          tile.a = packed_a + (row / mr_) * pairs * mr_ * 2;
          tile.c = accumulators + row * accumulator_stride + panel * nr_;
          kernels_.int16_pair_tile(tile);
        }
      }
    }
    for (size_t r = 0; r < rows; ++r) {
      const size_t row = first_row + r;
      int32_t* accumulator_row = accumulators + r * accumulator_stride;
      if (c && !bias_per_column) {
        for (size_t j = 0; j < columns; ++j) {
          accumulator_row[j] +=
              c[row * bias_.c_row_stride + (first_column + j) * bias_.c_column_stride];
        }
      }
      RequantizeRow requantize{};
      requantize.accumulators = accumulator_row;
      requantize.count = columns;
      requantize.multipliers = q_.multipliers.data() + first_column;
      requantize.per_element = true;
      requantize.output_zero_point = q_.output_zero_point;
      requantize.output_minimum = q_.output_minimum;
      requantize.output_maximum = q_.output_maximum;
      requantize.small_multipliers = small_multipliers_;
      requantize.output = matrix_y + row * s.n + first_column;
      kernels_.requantize_row(requantize);
    }
  }

  const MicroKernels& kernels_;
  const ProductShape shape_;
  const Batch batch_;
  const Int8Requantization q_;
  const bool small_multipliers_ =
      small_multipliers(q_.multipliers.data(), q_.multipliers.size(), q_.output_zero_point);
  const Int8Bias bias_;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t depth_pairs_ = 0;
  size_t accumulators_offset_ = 0;
  size_t b_block_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t packed_b_size_ = 0;
  std::vector<int16_t> packed_b_;
  char algorithm_[64];
};

class PackedGemmInt8 final : public GemmInt8 {
 public:
  PackedGemmInt8(const MicroKernels& kernels, const ProductShape& shape,
                 const Int8Requantization& q, const Int8Bias& bias, const int8_t* constant_b)
      : product_(kernels, shape, single_product(), q, bias, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const int8_t* a, const int8_t* b, const int32_t* c, int8_t* y,
           ThreadPool& pool) const override {
    product_.run(a, b, c, y, pool);
  }

 private:
  Int8Product product_;
};

class PackedMatMulInt8 final : public MatMulInt8 {
 public:
  PackedMatMulInt8(const MicroKernels& kernels, const ProductShape& shape, Batch batch,
                   const Int8Requantization& q, const int8_t* constant_b)
      : product_(kernels, shape, std::move(batch), q, Int8Bias{}, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const int8_t* a, const int8_t* b, int8_t* y, ThreadPool& pool) const override {
    product_.run(a, b, nullptr, y, pool);
  }

 private:
  Int8Product product_;
};

ProductShape gemm_shape(const GemmParams& p) {
  return ProductShape{static_cast<size_t>(p.m), static_cast<size_t>(p.n), static_cast<size_t>(p.k),
                      p.transpose_a, p.transpose_b};
}

ProductShape matmul_shape(const MatMulParams& p) {
  return ProductShape{static_cast<size_t>(p.m), static_cast<size_t>(p.n), static_cast<size_t>(p.k),
                      false, false};
}

bool int8_offsets_fit(const Int8Requantization& q) {
  auto fits = [](int64_t zero_point) { return zero_point >= -32639 && zero_point <= 32639; };
  if (!fits(q.input_zero_point)) return false;
  for (int32_t zero_point : q.weight_zero_points) {
    if (!fits(zero_point)) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<GemmFloat> make_gemm(const MicroKernels& kernels, const GemmParams& params,
                                     const FusedActivation& activation, const float* constant_b) {
  FloatEpilogue epilogue;
  epilogue.alpha = params.alpha;
  epilogue.beta = params.beta;
  epilogue.c_row_stride = static_cast<size_t>(params.c_row_stride);
  epilogue.c_column_stride = static_cast<size_t>(params.c_column_stride);
  epilogue.activation = activation;
  return std::make_unique<PackedGemm>(kernels, gemm_shape(params), epilogue, constant_b);
}

std::unique_ptr<GemmInt8> make_gemm_int8(const MicroKernels& kernels, const GemmParams& params,
                                         const Int8Requantization& requantization,
                                         const int8_t* constant_b) {
  if (!int8_offsets_fit(requantization)) return nullptr;
  Int8Bias bias;
  bias.c_row_stride = static_cast<size_t>(params.c_row_stride);
  bias.c_column_stride = static_cast<size_t>(params.c_column_stride);
  return std::make_unique<PackedGemmInt8>(kernels, gemm_shape(params), requantization, bias,
                                          constant_b);
}

std::unique_ptr<MatMulFloat> make_matmul(const MicroKernels& kernels, const MatMulParams& params,
                                         const FusedActivation& activation,
                                         const float* constant_b) {
  FloatEpilogue epilogue;
  epilogue.activation = activation;
  return std::make_unique<PackedMatMul>(kernels, matmul_shape(params), matmul_batch(params),
                                        epilogue, constant_b);
}

std::unique_ptr<MatMulInt8> make_matmul_int8(const MicroKernels& kernels,
                                             const MatMulParams& params,
                                             const Int8Requantization& requantization,
                                             const int8_t* constant_b) {
  if (!int8_offsets_fit(requantization)) return nullptr;
  return std::make_unique<PackedMatMulInt8>(kernels, matmul_shape(params), matmul_batch(params),
                                            requantization, constant_b);
}

}  // namespace orknn::kernels::cpu::optimized
