// Gemm and MatMul, one driver for float32 and int8 (tile_arithmetic.h): C = A x B on packed
// panels, where B (usually the constant weights) is packed once at build and A is packed per
// task and depth chunk.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"
#include "optimized/product_batch.h"
#include "optimized/row_vector.h"
#include "optimized/tile_arithmetic.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::FusedActivation;
using reference::GemmParams;
using reference::Int8Requantization;
using reference::MatMulParams;

// A rows [first_row, first_row + rows) x depth steps [step_begin, +steps) into panels of MR
// rows as the tiles read them (tile_arithmetic.h), holding a - zero_point for int8. Each row is
// one walk along its depth: an index computed and both edges checked per element took about
// 2 ns an element, a fifth of a float32 512 x 512 x 512 Gemm's time (the walk: 12% of the samples
// there; the panel written in order from MR row pointers instead measured slower).
template <typename Arithmetic>
void pack_a(const ProductShape& s, const typename Arithmetic::Element* a, int32_t zero_point,
            size_t first_row, size_t rows, size_t step_begin, size_t steps, size_t mr,
            typename Arithmetic::Packed* packed) {
  using Element = typename Arithmetic::Element;
  using Packed = typename Arithmetic::Packed;
  constexpr size_t kStep = Arithmetic::kStepDepth;
  const size_t depth_begin = step_begin * kStep;
  const size_t depth = steps * kStep;  // packed, zeros past the matrix included
  const size_t real_depth = std::min(s.k, depth_begin + depth) - std::min(s.k, depth_begin);
  const size_t depth_stride = s.a_depth_stride();
  for (size_t row0 = 0; row0 < rows; row0 += mr) {
    Packed* panel = packed + (row0 / mr) * steps * mr * kStep;
    for (size_t r = 0; r < mr; ++r) {
      // Depth d of this row goes to out[(d / kStep) * mr * kStep + d % kStep].
      Packed* out = panel + r * kStep;
      size_t d = 0;
      if (row0 + r < rows) {
        const Element* source =
            a + (first_row + row0 + r) * s.a_row_stride() + depth_begin * depth_stride;
        for (; d < real_depth; ++d, source += depth_stride) {
          out[(d / kStep) * mr * kStep + d % kStep] = Arithmetic::offset(*source, zero_point);
        }
      }
      for (; d < depth; ++d) out[(d / kStep) * mr * kStep + d % kStep] = Packed{0};
    }
  }
}

// A's only row over the whole depth into the first row of an MR-row panel (the tiles of some
// variants compute every row of the panel, so the others are zero), holding a - zero_point.
template <typename Arithmetic>
void pack_a_row(const ProductShape& s, const typename Arithmetic::Element* a, int32_t zero_point,
                size_t steps, size_t mr, typename Arithmetic::Packed* packed) {
  constexpr size_t kStep = Arithmetic::kStepDepth;
  std::memset(packed, 0, steps * mr * kStep * sizeof(*packed));
  for (size_t depth = 0; depth < s.k; ++depth) {
    packed[(depth / kStep) * mr * kStep + depth % kStep] =
        Arithmetic::offset(a[s.a_index(0, depth)], zero_point);
  }
}

// B columns [first_column, first_column + columns) x depth steps [step_begin, +steps) into
// panels of NR columns, holding b - zero_points[column] for int8: per depth, one walk along the
// panel's columns (a row of B as stored, or a column of a transposed B).
template <typename Arithmetic>
void pack_b(const ProductShape& s, const typename Arithmetic::Element* b,
            const int32_t* zero_points, size_t step_begin, size_t steps, size_t first_column,
            size_t columns, size_t nr, typename Arithmetic::Packed* packed) {
  using Element = typename Arithmetic::Element;
  using Packed = typename Arithmetic::Packed;
  constexpr size_t kStep = Arithmetic::kStepDepth;
  const size_t depth_begin = step_begin * kStep;
  const size_t depth = steps * kStep;
  const size_t real_depth = std::min(s.k, depth_begin + depth) - std::min(s.k, depth_begin);
  const size_t column_stride = s.b_column_stride();
  for (size_t column0 = 0; column0 < columns; column0 += nr) {
    Packed* panel = packed + (column0 / nr) * steps * nr * kStep;
    const size_t real_columns = std::min(nr, columns - column0);
    const int32_t* panel_zero_points = zero_points ? zero_points + first_column + column0 : nullptr;
    for (size_t d = 0; d < depth; ++d) {
      // Column j of this depth goes to out[j * kStep].
      Packed* out = panel + (d / kStep) * nr * kStep + d % kStep;
      size_t j = 0;
      if (d < real_depth) {
        const Element* source =
            b + (depth_begin + d) * s.b_depth_stride() + (first_column + column0) * column_stride;
        for (; j < real_columns; ++j, source += column_stride) {
          out[j * kStep] =
              Arithmetic::offset(*source, panel_zero_points ? panel_zero_points[j] : 0);
        }
      }
      for (; j < nr; ++j) out[j * kStep] = Packed{0};
    }
  }
}

// What happens after A x B (float32). Fused when alpha = 1 and C is absent or one row added
// with beta = 1: the tiles start from C and apply the activation. Otherwise a pass computes
// alpha * sum + beta * C, then the activation, as reference::gemm does.
struct FloatEpilogue {
  float alpha = 1.0f;
  float beta = 1.0f;
  size_t c_row_stride = 0;
  size_t c_column_stride = 0;
  FusedActivation activation;
};

// int8: the requantization, and Gemm's int32 C, added at tile init when it is one row (per
// column), otherwise to the accumulators before requantization; output channels are columns.
struct Int8Epilogue {
  Int8Requantization requantization;
  size_t c_row_stride = 0;
  size_t c_column_stride = 0;
};

template <typename Arithmetic>
constexpr bool kIsInt8 = std::is_same_v<Arithmetic, Int16PairArithmetic>;

template <typename Arithmetic>
struct ProductTraits;
template <>
struct ProductTraits<FloatArithmetic> {
  using Epilogue = FloatEpilogue;
  static constexpr const BlockLimits& kLimits = kFloatMatrixLimits;
};
template <>
struct ProductTraits<Int16PairArithmetic> {
  using Epilogue = Int8Epilogue;
  static constexpr const BlockLimits& kLimits = kInt16MatrixLimits;
};

// C = A x B for every product of a batch, one driver for float32 and int8.
template <typename Arithmetic>
class Product {
  using Element = typename Arithmetic::Element;
  using Bias = typename Arithmetic::Bias;
  using Packed = typename Arithmetic::Packed;
  using Epilogue = typename ProductTraits<Arithmetic>::Epilogue;
  static constexpr size_t kStep = Arithmetic::kStepDepth;
  static constexpr const BlockLimits& kLimits = ProductTraits<Arithmetic>::kLimits;

 public:
  Product(const MicroKernels& kernels, const ProductShape& shape, Batch batch,
          const Epilogue& epilogue, const Element* constant_b)
      : kernels_(kernels), shape_(shape), batch_(std::move(batch)), epilogue_(epilogue) {
    mr_ = Arithmetic::tile_rows(kernels);
    nr_ = Arithmetic::tile_columns(kernels);
    steps_ = divide_round_up(shape.k, kStep);
    // One row against constant weights (row_vector.h): a task is a range of whole panels over
    // the whole depth.
    row_vector_ = constant_b != nullptr && shape.m == 1;
    depth_block_ = row_vector_ ? std::max<size_t>(steps_, 1) : kLimits.depth_block;
    const size_t step_block = std::min(depth_block_, steps_);
    const size_t row_block = std::min(kLimits.row_block, round_up(shape.m, mr_));
    const size_t column_block = row_vector_
                                    ? round_up(shape.n, nr_)
                                    : std::min(kLimits.column_block, round_up(shape.n, nr_));
    task_bytes_ = align_bytes(row_block * step_block * kStep * sizeof(Packed));
    if constexpr (kIsInt8<Arithmetic>) {
      accumulators_offset_ = task_bytes_;
      task_bytes_ += align_bytes(row_block * column_block * sizeof(int32_t));
      const Int8Requantization& q = epilogue.requantization;
      small_multipliers_ =
          small_multipliers(q.multipliers.data(), q.multipliers.size(), q.output_zero_point);
    } else {
      activation_ = to_float_activation(epilogue.activation);
      has_activation_ = epilogue.activation.kind != FusedActivation::Kind::kNone;
    }
    b_block_offset_ = task_bytes_;
    if (constant_b) {
      packed_b_size_ = round_up(shape.n, nr_) * steps_ * kStep;
      packed_b_.resize(batch_.distinct_b * packed_b_size_);
      for (size_t matrix = 0; matrix < batch_.distinct_b; ++matrix) {
        pack_b<Arithmetic>(shape, constant_b + matrix * shape.k * shape.n, b_zero_points(), 0,
                           steps_, 0, shape.n, nr_, packed_b_.data() + matrix * packed_b_size_);
      }
    } else {
      task_bytes_ += align_bytes(step_block * kStep * column_block * sizeof(Packed));
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s%s gemm %zux%zu%s", kernels.name,
                  kIsInt8<Arithmetic> ? " int8" : "", mr_, nr_, row_vector_ ? " row" : "");
  }

  size_t scratch_bytes() const { return task_bytes_; }
  const char* algorithm() const { return algorithm_; }

  void run(const Element* a, const Element* b, const Bias* c, Element* y, ThreadPool& pool) const {
    const size_t products = batch_.a_offsets.size();
    if (row_vector_) {
      const size_t parts = row_vector_parts(shape_.n, nr_, pool.thread_count());
      pool.parallel_for(products * parts, [&](size_t task, size_t thread) {
        const RowVectorPart part = row_vector_part(shape_.n, nr_, parts, task % parts);
        run_block(a, b, c, y, task / parts, 0, 1, part.first_column, part.columns,
                  pool.scratch(thread, task_bytes_));
      });
      return;
    }
    const OutputBlocks blocks =
        choose_output_blocks(shape_.m, shape_.n, products, pool.thread_count(), mr_, nr_, kLimits);
    pool.parallel_for(block_task_count(products, blocks), [&](size_t task, size_t thread) {
      const BlockTask block = block_task(task, blocks);
      run_block(a, b, c, y, block.independent, block.first_row, blocks.row_block,
                block.first_column, blocks.column_block, pool.scratch(thread, task_bytes_));
    });
  }

 private:
  const int32_t* b_zero_points() const {
    if constexpr (kIsInt8<Arithmetic>) {
      return epilogue_.requantization.weight_zero_points.data();
    } else {
      return nullptr;
    }
  }
  int32_t a_zero_point() const {
    if constexpr (kIsInt8<Arithmetic>) {
      return epilogue_.requantization.input_zero_point;
    } else {
      return 0;
    }
  }

  // C can start the tiles as a per-column bias: float when fused (alpha = 1, beta = 1, C one
  // row), int8 whenever C is one row.
  bool c_is_column_bias(const Bias* c) const {
    if (!c || epilogue_.c_row_stride != 0 || epilogue_.c_column_stride != 1) return false;
    if constexpr (kIsInt8<Arithmetic>) {
      return true;
    } else {
      return epilogue_.alpha == 1.0f && epilogue_.beta == 1.0f;
    }
  }

  void run_block(const Element* a, const Element* b, const Bias* c, Element* y, size_t product,
                 size_t first_row, size_t row_block, size_t first_column, size_t column_block,
                 uint8_t* scratch) const {
    const ProductShape& s = shape_;
    if (first_row >= s.m || first_column >= s.n) return;
    TileGrid grid;
    grid.rows = std::min(row_block, s.m - first_row);
    grid.columns = std::min(column_block, s.n - first_column);
    grid.row_block = grid.rows;  // a task is one row block
    grid.mr = mr_;
    grid.nr = nr_;
    const Element* matrix_a = a + batch_.a_offsets[product] * s.m * s.k;
    const size_t b_matrix = batch_.b_offsets[product];
    Element* matrix_y = y + product * s.m * s.n;
    auto* packed_a = reinterpret_cast<Packed*>(scratch);
    auto* packed_b_block = reinterpret_cast<Packed*>(scratch + b_block_offset_);
    const bool column_bias = c_is_column_bias(c);
    // float: the tiles write Y (and the epilogue is fused unless C or alpha say otherwise);
    // int8: the task's accumulators.
    bool fused = true;
    typename Arithmetic::Tile tile{};
    using C = std::remove_pointer_t<decltype(tile.c)>;
    C* c_base = nullptr;
    if constexpr (kIsInt8<Arithmetic>) {
      c_base = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
      tile.c_stride = round_up(grid.columns, nr_);
    } else {
      fused = epilogue_.alpha == 1.0f && (c == nullptr || column_bias);
      c_base = matrix_y + first_row * s.n + first_column;
      tile.c_stride = s.n;
    }

    for (size_t step_begin = 0; step_begin < steps_; step_begin += depth_block_) {
      const size_t steps = std::min(depth_block_, steps_ - step_begin);
      if (row_vector_) {
        pack_a_row<Arithmetic>(s, matrix_a, a_zero_point(), steps, mr_, packed_a);
      } else {
        pack_a<Arithmetic>(s, matrix_a, a_zero_point(), first_row, grid.rows, step_begin, steps,
                           mr_, packed_a);
      }
      if (packed_b_.empty()) {
        pack_b<Arithmetic>(s, b + b_matrix * s.k * s.n, b_zero_points(), step_begin, steps,
                           first_column, grid.columns, nr_, packed_b_block);
      }
      Arithmetic::set_steps(tile, steps);
      tile.accumulate = step_begin > 0;
      if constexpr (!kIsInt8<Arithmetic>) {
        tile.b_stride = nr_;
        const bool last = step_begin + steps == steps_;
        tile.activation = last && fused && has_activation_ ? &activation_ : nullptr;
      }
      for_each_tile<Arithmetic>(kernels_, grid, tile, [&](auto& t, size_t row, size_t panel) {
        const size_t column = first_column + panel * nr_;
        t.b = packed_b_.empty() ? packed_b_block + panel * steps * nr_ * kStep
                                : packed_b_.data() + b_matrix * packed_b_size_ +
                                      ((column / nr_) * steps_ + step_begin) * nr_ * kStep;
        t.column_bias = !t.accumulate && column_bias ? c + column : nullptr;
        t.a = packed_a + (row / mr_) * steps * mr_ * kStep;
        t.c = c_base + row * t.c_stride + panel * nr_;
      });
    }
    if constexpr (kIsInt8<Arithmetic>) {
      finish_int8(c, column_bias, c_base, tile.c_stride, matrix_y, first_row, grid.rows,
                  first_column, grid.columns);
    } else if (!fused) {
      finish_float(c, matrix_y, first_row, grid.rows, first_column, grid.columns);
    }
  }

  // float32, not fused: y = activation(alpha * y + beta * C), as reference::gemm.
  void finish_float(const Bias* c, Element* matrix_y, size_t first_row, size_t rows,
                    size_t first_column, size_t columns) const {
    for (size_t row = first_row; row < first_row + rows; ++row) {
      Element* out = matrix_y + row * shape_.n;
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

  // int8: C (when not added at tile init), then requantization into y.
  void finish_int8(const Bias* c, bool column_bias, int32_t* accumulators, size_t stride,
                   Element* matrix_y, size_t first_row, size_t rows, size_t first_column,
                   size_t columns) const {
    if constexpr (kIsInt8<Arithmetic>) {
      const Int8Requantization& q = epilogue_.requantization;
      for (size_t r = 0; r < rows; ++r) {
        const size_t row = first_row + r;
        int32_t* accumulator_row = accumulators + r * stride;
        if (c && !column_bias) {
          for (size_t j = 0; j < columns; ++j) {
            accumulator_row[j] +=
                c[row * epilogue_.c_row_stride + (first_column + j) * epilogue_.c_column_stride];
          }
        }
        kernels_.requantize_row(requantize_row_of(q, first_column, true, small_multipliers_,
                                                  accumulator_row, columns,
                                                  matrix_y + row * shape_.n + first_column));
      }
    }
  }

  const MicroKernels& kernels_;
  const ProductShape shape_;
  const Batch batch_;
  const Epilogue epilogue_;
  FloatActivation activation_{};
  bool has_activation_ = false;
  bool small_multipliers_ = false;
  bool row_vector_ = false;
  size_t depth_block_ = 0;  // depth steps per chunk
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t steps_ = 0;
  size_t accumulators_offset_ = 0;
  size_t b_block_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t packed_b_size_ = 0;
  std::vector<Packed, LargeAllocator<Packed>> packed_b_;
  char algorithm_[64];
};

// The four interfaces on the one driver.
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
  Product<FloatArithmetic> product_;
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
  Product<FloatArithmetic> product_;
};

class PackedGemmInt8 final : public GemmInt8 {
 public:
  PackedGemmInt8(const MicroKernels& kernels, const ProductShape& shape,
                 const Int8Epilogue& epilogue, const int8_t* constant_b)
      : product_(kernels, shape, single_product(), epilogue, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const int8_t* a, const int8_t* b, const int32_t* c, int8_t* y,
           ThreadPool& pool) const override {
    product_.run(a, b, c, y, pool);
  }

 private:
  Product<Int16PairArithmetic> product_;
};

class PackedMatMulInt8 final : public MatMulInt8 {
 public:
  PackedMatMulInt8(const MicroKernels& kernels, const ProductShape& shape, Batch batch,
                   const Int8Epilogue& epilogue, const int8_t* constant_b)
      : product_(kernels, shape, std::move(batch), epilogue, constant_b) {}
  size_t scratch_bytes() const override { return product_.scratch_bytes(); }
  const char* algorithm() const override { return product_.algorithm(); }
  void run(const int8_t* a, const int8_t* b, int8_t* y, ThreadPool& pool) const override {
    product_.run(a, b, nullptr, y, pool);
  }

 private:
  Product<Int16PairArithmetic> product_;
};

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
  Int8Epilogue epilogue;
  epilogue.requantization = requantization;
  epilogue.c_row_stride = static_cast<size_t>(params.c_row_stride);
  epilogue.c_column_stride = static_cast<size_t>(params.c_column_stride);
  return std::make_unique<PackedGemmInt8>(kernels, gemm_shape(params), epilogue, constant_b);
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
  Int8Epilogue epilogue;
  epilogue.requantization = requantization;
  return std::make_unique<PackedMatMulInt8>(kernels, matmul_shape(params), matmul_batch(params),
                                            epilogue, constant_b);
}

}  // namespace orknn::kernels::cpu::optimized
