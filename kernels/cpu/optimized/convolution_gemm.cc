// Convolution as GEMM, one driver for float32 and int8 (tile_arithmetic.h): per image and
// group, output = W x im2col(input), where A is the group's weights (rows = output channels,
// packed at build), B the im2col panels packed per task and depth chunk, and C the output rows
// (pixels contiguous). float32 tiles write the output with bias and activation fused; int8 tiles
// write exact int32 accumulators (docs/quantization.md) that the requantization micro-kernel
// turns into the output, bit-exact with the reference.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
#include "optimized/fused_binary_rows.h"
#include "optimized/optimized_kernels.h"
#include "optimized/tile_arithmetic.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;
using reference::Int8Requantization;

template <typename Arithmetic>
constexpr bool kIsInt8 = std::is_same_v<Arithmetic, Int16PairArithmetic>;

// The interface, the per-node parameters and the blocking of each arithmetic.
template <typename Arithmetic>
struct ConvolutionTraits;
template <>
struct ConvolutionTraits<FloatArithmetic> {
  using Interface = Conv2DFloat;
  using Parameters = FusedActivation;
  static BlockLimits limits(size_t mr, size_t nr) {
    return float_convolution_limits(cpu_cache_sizes(), mr, nr);
  }
};
template <>
struct ConvolutionTraits<Int16PairArithmetic> {
  using Interface = Conv2DInt8;
  using Parameters = Int8Requantization;
  static BlockLimits limits(size_t, size_t) { return kInt16ConvolutionLimits; }
};

template <typename Arithmetic>
class GemmConvolution : public ConvolutionTraits<Arithmetic>::Interface {
  using Traits = ConvolutionTraits<Arithmetic>;
  using Element = typename Arithmetic::Element;
  using Bias = typename Arithmetic::Bias;
  using Packed = typename Arithmetic::Packed;
  static constexpr size_t kStep = Arithmetic::kStepDepth;

 public:
  // `epilogue`: float only (RegionEpilogue), applied to each task's block once it is final.
  GemmConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                  const typename Traits::Parameters& parameters, const Element* constant_weights,
                  RegionEpilogue epilogue = {})
      : kernels_(kernels),
        shape_(shape),
        parameters_(parameters),
        epilogue_(epilogue),
        geometry_(im2col_geometry(shape)) {
    mr_ = Arithmetic::tile_rows(kernels);
    nr_ = Arithmetic::tile_columns(kernels);
    limits_ = Traits::limits(mr_, nr_);
    group_rows_ = static_cast<size_t>(shape.output_channels / shape.groups);
    depth_ = static_cast<size_t>(geometry_.depth());
    steps_ = divide_round_up(depth_, kStep);
    columns_ = static_cast<size_t>(geometry_.columns());
    group_weights_size_ = divide_round_up(group_rows_, mr_) * steps_ * mr_ * kStep;
    const size_t step_block = std::min(limits_.depth_block, steps_);
    const size_t column_block = std::min(limits_.column_block, round_up(columns_, nr_));
    segments_offset_ = align_bytes(step_block * kStep * column_block * sizeof(Packed));
    task_bytes_ = segments_offset_ + align_bytes(max_segments(column_block) * sizeof(Segment));
    if constexpr (kIsInt8<Arithmetic>) {
      // A task's int32 accumulators, and two int8 im2col rows for the pair packing.
      const size_t task_rows = std::min(limits_.task_rows, round_up(group_rows_, mr_));
      accumulators_offset_ = task_bytes_;
      rows_offset_ = accumulators_offset_ + align_bytes(task_rows * column_block * sizeof(int32_t));
      task_bytes_ = rows_offset_ + align_bytes(2 * column_block);
      small_multipliers_ =
          small_multipliers(parameters.multipliers.data(), parameters.multipliers.size(),
                            parameters.output_zero_point);
    } else {
      activation_ = to_float_activation(parameters);
      has_activation_ = parameters.kind != FusedActivation::Kind::kNone;
    }
    const size_t weights_size = static_cast<size_t>(shape.groups) * group_weights_size_;
    if (constant_weights) {
      packed_weights_.resize(weights_size);
      pack_weights(constant_weights, packed_weights_.data());
      if constexpr (kIsInt8<Arithmetic>) set_bias_limits(constant_weights);
    } else {
      dynamic_weights_bytes_ = align_bytes(weights_size * sizeof(Packed));
    }
    // A pointwise float convolution's B is the input itself (one row of pixels per channel).
    // With few output channels and a deep input, copying it costs more than it saves, so full
    // panels are read in place (only a partial last panel is packed): 144->24 and 256->64 layers
    // ran 5-25% faster so. A short depth is copied unless the output is small: each in-place
    // tile reads its depth rows a whole plane apart (a separate prefetch stream per row), and
    // the panels-outer order below writes every output row a line at a time; 16->96 @112,
    // 32->64 @112 and the 160x160 layers ran 1.0-2.2x slower in place, 64->64 and 64->48 @80
    // even. Outputs of at most 64 x 56 x 56 floats (784 KB) ran faster in place (session 16,
    // bench_kernels in one process, 1 and 2 threads): 32->16 and 16->8 @112 0.78-0.89x, 96->24
    // @56 0.84-0.88x, 64->64 @56 0.93-0.96x. (int8 always packs: B holds x - zx.)
    const bool pointwise = geometry_.single_row_pointwise();
    constexpr size_t kSmallInPlaceOutput = 64 * 56 * 56;  // floats
    in_place_b_ = !kIsInt8<Arithmetic> && pointwise && group_rows_ <= 96 &&
                  (depth_ >= 128 || group_rows_ * columns_ <= kSmallInPlaceOutput);
    // Tile order (TileGrid::panels_inner): float tiles write the output rows themselves, and
    // walking a row group across every panel writes MR sequential streams the prefetchers
    // follow, where panels-outer writes one short piece of every row of the block per panel
    // (up to 252 streams: each output line a demand miss; short-depth 1x1 layers, whose tiles
    // are mostly stores, ran at 35-50% of peak). B then comes from L2 per row group, which the
    // copied block is sized for; a deep in-place B, strided over the input rows, keeps panels
    // outer (each panel then stays in L1 across the row block).
    panels_inner_ = !kIsInt8<Arithmetic> && !in_place_b_;
    std::snprintf(algorithm_, sizeof(algorithm_), "%s%s gemm %zux%zu%s", kernels.name,
                  kIsInt8<Arithmetic> ? " int8" : "", mr_, nr_,
                  in_place_b_ ? " pointwise in place"
                  : pointwise ? " pointwise"
                              : " im2col");
  }

  size_t scratch_bytes() const override { return task_bytes_ + dynamic_weights_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const Element* input, const Element* weights, const Bias* bias, Element* output,
           ThreadPool& pool) const override {
    run_blocks(input, weights, bias, nullptr, output, pool);
  }

 protected:
  // `addition` (float32 only, else null): a residual Add on each block of rows as it is done.
  void run_blocks(const Element* input, const Element* weights, const Bias* bias,
                  const ResidualAddition* addition, Element* output, ThreadPool& pool) const {
    // float32's residual Add, on each row group as the last depth chunk finishes it.
    std::optional<ResidualRows> residual;
    if constexpr (!kIsInt8<Arithmetic>) {
      if (addition) residual.emplace(kernels_, addition, output);
    }
    const ResidualRows* residual_rows = residual ? &*residual : nullptr;
    const Packed* packed = packed_weights_.data();
    if (packed_weights_.empty()) {
      // Weights computed by the graph: packed into thread 0's scratch, after its task area.
      auto* area = reinterpret_cast<Packed*>(pool.scratch(0, scratch_bytes()) + task_bytes_);
      pack_weights(weights, area);
      packed = area;
    }
    const size_t images = static_cast<size_t>(shape_.batch);
    const size_t groups = static_cast<size_t>(shape_.groups);
    const OutputBlocks blocks = choose_output_blocks(group_rows_, columns_, images * groups,
                                                     pool.thread_count(), mr_, nr_, limits_);
    pool.parallel_for(block_task_count(images * groups, blocks), [&](size_t task, size_t thread) {
      const BlockTask block = block_task(task, blocks);
      run_block(input, packed, bias, residual_rows, output, block.independent / groups,
                block.independent % groups, block.first_row, blocks.row_block, block.first_column,
                blocks.column_block, pool.scratch(thread, task_bytes_));
    });
  }

 private:
  // The piece of a row group's residual (rows x columns at the output's row stride, from the
  // output row `first`) that tile `tile` of `tiles` asks into L2 while the group's tiles run
  // the last depth chunk, so that rows_done finds the residual in L2, where an Add after the
  // row group waited on memory for it: a slice of one row each (whole rows when tiles are
  // few, and the rows past `tiles` left to the hardware prefetchers).
  PrefetchRange residual_slice(const ResidualRows& residual, const float* first, size_t rows,
                               size_t columns, size_t tile, size_t tiles) const {
    const size_t slices_per_row = std::max<size_t>(1, tiles / rows);
    const size_t row = tile / slices_per_row;
    if (row >= rows) return {};
    const size_t slice = divide_round_up(columns * sizeof(float), slices_per_row);
    const auto* start = reinterpret_cast<const char*>(residual.residual_at(first + row * columns_));
    return {start + tile % slices_per_row * slice, slice};
  }

  // Weights [M][C/g][kh][kw] -> per group, panels of MR output channels (tile_arithmetic.h).
  void pack_weights(const Element* weights, Packed* packed) const {
    for (size_t group = 0; group < static_cast<size_t>(shape_.groups); ++group) {
      const size_t first_channel = group * group_rows_;
      const int32_t* zero_points = nullptr;
      if constexpr (kIsInt8<Arithmetic>) {
        zero_points = parameters_.weight_zero_points.data() + first_channel;
      }
      pack_row_panels<Arithmetic>(weights + first_channel * depth_, zero_points, group_rows_,
                                  depth_, mr_, packed + group * group_weights_size_);
    }
  }

  // Per output channel, the largest |bias| with which its accumulators requantize in float
  // (RequantizeRow::in_float): with 1x1 and small 3x3 layers every accumulator is far below
  // 2^24, and the float rounding takes a third of the double path's operations. Constant
  // weights only (the reach is the sum of |w - zw|); the bias is checked per block.
  void set_bias_limits(const Element* weights) {
    bias_limits_ = float_requantization_bias_limits(
        weights, static_cast<size_t>(shape_.output_channels), depth_,
        parameters_.weight_zero_points.data(), parameters_.input_zero_point,
        parameters_.multipliers.data());
  }

  // Packs B for depth steps [step_begin, +steps): float im2col rows (read with a row stride) or
  // int16-pair panels, or for an in-place pointwise B only the partial last panel (reading it
  // in place would run past the input).
  void pack_b(const Element* group_input, size_t first_column, size_t step_begin, size_t steps,
              const Segment* segments, size_t segment_count, size_t columns, uint8_t* scratch,
              Packed* packed_b) const {
    if constexpr (kIsInt8<Arithmetic>) {
      pack_im2col_int16_pairs(kernels_, geometry_, group_input, parameters_.input_zero_point,
                              first_column, step_begin, steps, segments, segment_count, columns,
                              reinterpret_cast<int8_t*>(scratch + rows_offset_), packed_b);
    } else if (!in_place_b_) {
      gather_im2col_rows_float(geometry_, group_input, step_begin, steps, segments, segment_count,
                               columns, round_up(columns, nr_), packed_b);
    } else if (columns % nr_ != 0) {
      const size_t full_columns = columns / nr_ * nr_;
      const size_t tail = columns - full_columns;
      const Element* source = group_input + step_begin * columns_ + first_column + full_columns;
      for (size_t kk = 0; kk < steps; ++kk) {
        Packed* out = packed_b + kk * nr_;
        for (size_t j = 0; j < nr_; ++j) out[j] = j < tail ? source[kk * columns_ + j] : 0.0f;
      }
    }
  }

  void run_block(const Element* input, const Packed* packed_weights, const Bias* bias,
                 const ResidualRows* residual, Element* output, size_t image, size_t group,
                 size_t first_row, size_t row_block, size_t first_column, size_t column_block,
                 uint8_t* scratch) const {
    if (first_row >= group_rows_ || first_column >= columns_) return;
    TileGrid grid;
    grid.first_row = first_row;
    grid.rows = std::min(row_block, group_rows_ - first_row);
    grid.columns = std::min(column_block, columns_ - first_column);
    grid.row_block = limits_.row_block;
    grid.mr = mr_;
    grid.nr = nr_;
    grid.panels_inner = panels_inner_;
    auto* packed_b = reinterpret_cast<Packed*>(scratch);
    auto* segments = reinterpret_cast<Segment*>(scratch + segments_offset_);
    // Float gathers whole im2col rows first (segments cut only at output rows); int8 packs
    // straight into panels, so its segments are cut at the panels its pair layout needs.
    size_t segment_panel = grid.columns;
    if constexpr (kIsInt8<Arithmetic>) {
      segment_panel = int16_pair_segment_panel(parameters_.input_zero_point, grid.columns, nr_);
    }
    const size_t segment_count =
        build_segments(geometry_, first_column, grid.columns, segment_panel, segments);

    const size_t input_channels = static_cast<size_t>(shape_.input_channels);
    const size_t group_channels = input_channels / static_cast<size_t>(shape_.groups);
    const size_t plane =
        static_cast<size_t>(shape_.window.input_height * shape_.window.input_width);
    const Element* group_input = input + (image * input_channels + group * group_channels) * plane;
    const size_t first_channel = group * group_rows_;
    Element* group_output =
        output + (image * static_cast<size_t>(shape_.output_channels) + first_channel) * columns_;
    const Packed* group_weights = packed_weights + group * group_weights_size_;
    const Bias* group_bias = bias ? bias + first_channel : nullptr;

    // Where the tiles write: the output rows (float) or the task's accumulators (int8).
    typename Arithmetic::Tile tile{};
    size_t c_first_row = 0;
    size_t c_stride = columns_;
    if constexpr (kIsInt8<Arithmetic>) {
      c_first_row = first_row;
      c_stride = round_up(grid.columns, nr_);
    }
    using C = std::remove_pointer_t<decltype(tile.c)>;
    C* c_base = nullptr;
    if constexpr (kIsInt8<Arithmetic>) {
      c_base = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
    } else {
      c_base = group_output + first_column;
    }
    tile.c_stride = c_stride;
    const size_t full_panels = in_place_b_ ? grid.columns / nr_ : 0;

    for (size_t step_begin = 0; step_begin < steps_; step_begin += limits_.depth_block) {
      const size_t steps = std::min(limits_.depth_block, steps_ - step_begin);
      pack_b(group_input, first_column, step_begin, steps, segments, segment_count, grid.columns,
             scratch, packed_b);
      Arithmetic::set_steps(tile, steps);
      tile.accumulate = step_begin > 0;
      const bool last_chunk = step_begin + steps == steps_;
      if constexpr (!kIsInt8<Arithmetic>) {
        tile.activation = last_chunk && has_activation_ ? &activation_ : nullptr;
      }
      const size_t panels = divide_round_up(grid.columns, nr_);
      // Rows the last chunk finished: the residual Add while they are in cache.
      auto rows_done = [&](size_t row, size_t rows) {
        if constexpr (!kIsInt8<Arithmetic>) {
          if (!residual || !last_chunk || residual->in_tile()) return;
          Element* first = group_output + row * columns_ + first_column;
          if (grid.columns == columns_) {
            residual->apply(first, rows * columns_);  // whole rows: one piece
            return;
          }
          for (size_t r = 0; r < rows; ++r) residual->apply(first + r * columns_, grid.columns);
        }
      };
      for_each_tile<Arithmetic>(
          kernels_, grid, tile,
          [&](auto& t, size_t row, size_t panel) {
            if constexpr (!kIsInt8<Arithmetic>) {
              if (panel < full_panels) {
                t.b = group_input + step_begin * columns_ + first_column + panel * nr_;
                t.b_stride = columns_;
              } else if (!in_place_b_) {
                t.b = packed_b + panel * nr_;
                t.b_stride = round_up(grid.columns, nr_);
              } else {
                t.b = packed_b;  // the partial last panel
                t.b_stride = nr_;
              }
            } else {
              t.b = packed_b + panel * steps * nr_ * kStep;
            }
            t.a = group_weights + ((row / mr_) * steps_ + step_begin) * mr_ * kStep;
            t.c = c_base + (row - c_first_row) * c_stride + panel * nr_;
            t.row_bias = !t.accumulate && group_bias ? group_bias + row : nullptr;
            if constexpr (!kIsInt8<Arithmetic>) {
              // A row's first tile asks for the next row's piece of A: on the first pass the
              // weights come from memory (a model's layer finds its weights in no cache).
              t.prefetch = {t.a + steps_ * mr_, panel == 0 ? steps * mr_ * sizeof(float) : 0};
              t.residual = nullptr;
              if (residual && last_chunk && residual->in_tile()) {
                t.residual = residual->residual_at(t.c);
                t.after = residual->tile_after();
              } else if (residual && last_chunk && panel > 0) {
                t.prefetch = residual_slice(*residual, c_base + row * c_stride, t.rows,
                                            grid.columns, panel - 1, panels - 1);
              }
            }
          },
          rows_done);
    }

    if constexpr (!kIsInt8<Arithmetic>) {
      if (epilogue_) {
        epilogue_.apply(group_output + first_row * columns_ + first_column, grid.rows, grid.columns,
                        columns_);
      }
    }
    if constexpr (kIsInt8<Arithmetic>) {
      const bool in_float =
          !bias_limits_.empty() &&
          requantizes_in_float(bias_limits_.data() + first_channel + first_row,
                               group_bias ? group_bias + first_row : nullptr, grid.rows);
      for (size_t r = 0; r < grid.rows; ++r) {
        const size_t channel = first_channel + first_row + r;
        RequantizeRow row = requantize_row_of(
            parameters_, channel, false, small_multipliers_, c_base + r * c_stride, grid.columns,
            group_output + (first_row + r) * columns_ + first_column);
        row.in_float = in_float;
        requantize_int8_row(kernels_, parameters_, channel, row);
      }
    }
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const typename Traits::Parameters parameters_;
  const RegionEpilogue epilogue_;
  const Im2colGeometry geometry_;
  BlockLimits limits_{};
  bool panels_inner_ = false;
  FloatActivation activation_{};
  bool has_activation_ = false;
  bool small_multipliers_ = false;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t group_rows_ = 0;
  size_t depth_ = 0;
  size_t steps_ = 0;
  size_t columns_ = 0;
  size_t group_weights_size_ = 0;
  bool in_place_b_ = false;
  size_t segments_offset_ = 0;
  size_t accumulators_offset_ = 0;
  size_t rows_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t dynamic_weights_bytes_ = 0;
  std::vector<Packed, LargeAllocator<Packed>> packed_weights_;
  // int8 with constant weights: per output channel, float_requantization_bias_limit.
  std::vector<int64_t> bias_limits_;
  char algorithm_[64];
};

// The float32 driver, which also takes a residual Add (the int8 interface has none).
class FloatGemmConvolution final : public GemmConvolution<FloatArithmetic> {
 public:
  using GemmConvolution::GemmConvolution;
  bool takes_residual() const override { return true; }
  void run_with_residual(const float* input, const float* weights, const float* bias,
                         const ResidualAddition& addition, float* output,
                         ThreadPool& pool) const override {
    run_blocks(input, weights, bias, &addition, output, pool);
  }
};

}  // namespace

std::unique_ptr<Conv2DFloat> make_gemm_conv2d(const MicroKernels& kernels, const Conv2DShape& shape,
                                              const FusedActivation& activation,
                                              const float* constant_weights,
                                              RegionEpilogue epilogue) {
  return std::make_unique<FloatGemmConvolution>(kernels, shape, activation, constant_weights,
                                                epilogue);
}

std::unique_ptr<Conv2DInt8> make_gemm_conv2d_int8(const MicroKernels& kernels,
                                                  const Conv2DShape& shape,
                                                  const Int8Requantization& requantization,
                                                  const int8_t* constant_weights) {
  if (!int16_pair_offsets_fit(requantization.input_zero_point, requantization.weight_zero_points)) {
    return nullptr;
  }
  return std::make_unique<GemmConvolution<Int16PairArithmetic>>(kernels, shape, requantization,
                                                                constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
