// Shared pieces of the optimized drivers: cache blocking, the split of an output into tasks for
// the thread pool, the im2col packing of convolution inputs into B panels, and scratch layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu_caches.h"
#include "optimized/micro_kernels.h"
#include "reference/convolution.h"
#include "reference/window_geometry.h"

namespace orknn::kernels::cpu::optimized {

inline size_t divide_round_up(size_t value, size_t divisor) {
  return (value + divisor - 1) / divisor;
}
inline size_t round_up(size_t value, size_t multiple) {
  return divide_round_up(value, multiple) * multiple;
}
// The largest |x - zero_point| over int8 codes x.
inline int64_t largest_int8_offset(int64_t zero_point) {
  return 127 - zero_point > zero_point + 128 ? 127 - zero_point : zero_point + 128;
}
// A requantization row of `count` accumulators with q's output range: multipliers from
// q.multipliers[first_multiplier], one for the row or (per_element) one per accumulator.
inline RequantizeRow requantize_row_of(const reference::Int8Requantization& q,
                                       size_t first_multiplier, bool per_element,
                                       bool small_multipliers, const int32_t* accumulators,
                                       size_t count, int8_t* output) {
  RequantizeRow row{};
  row.accumulators = accumulators;
  row.count = count;
  row.multipliers = q.multipliers.data() + first_multiplier;
  row.per_element = per_element;
  row.output_zero_point = q.output_zero_point;
  row.output_minimum = q.output_minimum;
  row.output_maximum = q.output_maximum;
  row.small_multipliers = small_multipliers;
  row.output = output;
  return row;
}
// The SiLU epilogue's row of output channel `channel` for `row`'s accumulators and outputs.
inline RequantizeSiluRow silu_row_of(const reference::Int8Requantization& q, size_t channel,
                                     const RequantizeRow& row) {
  return {row.accumulators, row.count,           q.multipliers[channel],
          q.output_scale,   q.output_zero_point, row.output};
}
// The requantization micro-kernel, or with a fused SiLU the SiLU epilogue's.
inline void requantize_int8_row(const MicroKernels& kernels, const reference::Int8Requantization& q,
                                size_t channel, const RequantizeRow& row) {
  if (!q.silu) {
    kernels.requantize_row(row);
    return;
  }
  kernels.requantize_silu_row(silu_row_of(q, channel, row));
}
// Scratch regions start on cache lines.
inline size_t align_bytes(size_t bytes) {
  return round_up(bytes, 64);
}

// Cache blocking of C = A x B (rows x columns, depth): depth chunks of `depth_block` (a B panel
// of depth_block x NR stays in L1 while the A panels of a row block stream from L2), tasks of at
// most task_rows x column_block outputs, each packing its B block once per depth chunk and
// walking its rows in row blocks.
struct BlockLimits {
  size_t depth_block;   // in depth steps (float) or pairs (int16)
  size_t row_block;     // multiple of every MR
  size_t column_block;  // multiple of every NR
  size_t task_rows;     // multiple of row_block
  // What a task costs besides its multiply-adds, per unit of depth and counted in
  // multiply-adds, for splitting an output over threads (choose_output_blocks): per column of
  // B it covers (a convolution gathers its im2col block per task: measured at about 25
  // multiply-adds per element for float32, more for int8) and per row of A (a convolution
  // streams its packed weights; Gemm and MatMul pack A per task).
  size_t column_cost = 24;
  size_t row_cost = 2;
};
// Float convolutions, from the CPU's caches (core/cpu_caches.h) and the tile (MR x NR): a B
// panel (depth_block x NR floats) in half of L1; a task's packed B (depth_block x column_block)
// in half of L2, the A block of a row block (row_block x depth_block) in a quarter. On 32 KiB
// L1 and 512 KiB L2 (Zen3) with 6x16 tiles: 256 x 126 x 256; with a 1 MiB L2 (Zen4) 256 x 252 x
// 512. A is the packed weights, so a task may take every row (half of SIZE_MAX: no limit that
// overflows divide_round_up, and it fits 32-bit targets too).
BlockLimits float_convolution_limits(const CpuCacheSizes& caches, size_t mr, size_t nr);
// int8 convolutions keep a task's int32 accumulators (task_rows x column_block) in scratch.
constexpr BlockLimits kInt16ConvolutionLimits{256, 144, 192, 288};
// Gemm/MatMul pack A per task: one row block per task.
constexpr BlockLimits kFloatMatrixLimits{256, 144, 256, 144, 2, 24};
constexpr BlockLimits kInt16MatrixLimits{256, 144, 192, 144, 2, 24};

struct OutputBlocks {
  size_t row_block = 0;  // rows per task, a multiple of MR (not of BlockLimits::row_block)
  size_t column_block = 0;
  size_t row_blocks = 0;
  size_t column_blocks = 0;
};

// Splits rows x columns into blocks within `limits` (times `independent`, the images x groups
// that also become separate tasks). With one thread: the largest blocks the limits allow. With
// more: of the splits into at most 4 tasks per thread, the one whose tasks, handed out in order
// to the first free thread, finish first by the cost model of BlockLimits (multiply-adds of the
// padded tiles plus column_cost and row_cost): so a split re-packs B per row block only when
// that pays, and its tasks share out evenly (9 equal tasks keep one of 2 threads busy a task
// longer than the other).
OutputBlocks choose_output_blocks(size_t rows, size_t columns, size_t independent, size_t threads,
                                  size_t mr, size_t nr, const BlockLimits& limits);
// The time the split's tasks take on `threads` threads by the model above, in multiply-adds per
// unit of depth (for tests and choose_output_blocks).
size_t modelled_split_time(size_t rows, size_t columns, size_t independent, size_t threads,
                           size_t mr, size_t nr, const BlockLimits& limits,
                           const OutputBlocks& blocks);

// Task `task` of the parallel_for over independent x row_blocks x column_blocks tasks that
// every blocked driver runs (columns fastest, so neighbouring tasks share their rows of A).
struct BlockTask {
  size_t independent = 0;  // image x group (convolutions) or product (batched matrices)
  size_t first_row = 0;
  size_t first_column = 0;
};
inline size_t block_task_count(size_t independent, const OutputBlocks& blocks) {
  return independent * blocks.row_blocks * blocks.column_blocks;
}
inline BlockTask block_task(size_t task, const OutputBlocks& blocks) {
  BlockTask block;
  block.first_column = task % blocks.column_blocks * blocks.column_block;
  task /= blocks.column_blocks;
  block.first_row = task % blocks.row_blocks * blocks.row_block;
  block.independent = task / blocks.row_blocks;
  return block;
}

inline FloatActivation to_float_activation(const reference::FusedActivation& activation) {
  using Kind = reference::FusedActivation::Kind;
  constexpr float kInfinity = __builtin_huge_valf();
  FloatActivation result{-kInfinity, kInfinity, false, 0.0f};
  switch (activation.kind) {
    case Kind::kNone:
      break;
    case Kind::kRelu:
      result.minimum = 0.0f;
      break;
    case Kind::kClip:
      result.minimum = activation.minimum;
      result.maximum = activation.maximum;
      break;
    case Kind::kLeakyRelu:
      result.leaky = true;
      result.leaky_alpha = activation.alpha;
      break;
  }
  return result;
}

// ---- im2col packing ----------------------------------------------------------------------

// One image and one group of a convolution, as the im2col matrix sees it: row k of the matrix
// is (channel, kernel row, kernel column) = (k / (kh * kw), k / kw % kh, k % kw), column n is
// output pixel n. A pointwise convolution (1x1, stride 1, no padding) is described as one row
// of height x width pixels, so packing it copies whole panels.
struct Im2colGeometry {
  int64_t channels = 1;  // input channels of one group
  reference::Window2D window;

  int64_t depth() const { return channels * window.kernel_height * window.kernel_width; }
  int64_t columns() const { return window.output_height * window.output_width; }
  // Im2col row k is input row k itself (columns(), contiguous): one row of pixels, a 1x1
  // kernel, stride 1 and no padding. (Not just any one-row window: a taller kernel reads zero
  // rows, a right pad columns past the input.)
  bool single_row_pointwise() const {
    return window.input_height == 1 && window.output_height == 1 && window.kernel_height == 1 &&
           window.kernel_width == 1 && window.stride_width == 1 && window.pad_left == 0 &&
           window.output_width == window.input_width;
  }
};
Im2colGeometry im2col_geometry(const reference::Conv2DShape& shape);

// What the lane convolutions (lane_convolution.cc, int8_lane_convolution.cc) can read: positive
// strides, dilations and sizes, no negative leading pad. They copy the input into zero-bordered
// planes, one per channel, addressed by int32 offsets.
bool lane_window_readable(const reference::Window2D& window);
// The size of such a plane: the input with its pads and a kernel's reach past them.
int64_t lane_padded_plane(const reference::Window2D& window);
// The zero-bordered plane a lane convolution copies each input channel into: it holds every
// position a tap reads, from -pad to the last output's last tap; and where, from a plane's
// start, each kernel tap (ky, kx) reads relative to a pixel and each output pixel's top-left
// tap lies (a panel of consecutive pixels takes consecutive entries). For windows
// lane_window_readable accepts.
struct LanePlanes {
  size_t height = 0;
  size_t width = 0;
  std::vector<int32_t> tap_offsets;    // per kernel tap, row-major
  std::vector<int32_t> pixel_offsets;  // per output pixel, row-major
  size_t plane() const { return height * width; }
};
LanePlanes lane_planes(const reference::Window2D& window);
// Whether x - zx and every w - zw fit int16 without reaching -32768 (pmaddwd's one overflowing
// pair), as the int16-pair convolutions need.
bool int16_pair_offsets_fit(int32_t input_zero_point,
                            const std::vector<int32_t>& weight_zero_points);

// A run of consecutive output pixels in one output row and one B panel.
struct Segment {
  uint32_t panel;
  uint32_t lane;  // first column inside the panel
  uint32_t length;
  int32_t input_row;     // output_row * stride - pad_top
  int32_t input_column;  // output_column * stride - pad_left
};
// At most this many segments describe `columns` pixels.
inline size_t max_segments(size_t columns) {
  return columns + 1;
}
size_t build_segments(const Im2colGeometry& geometry, size_t first_column, size_t columns,
                      size_t panel_columns, Segment* segments);

// Im2col rows [depth_begin, depth_begin + depth) of one image and group (`input` at the group's
// first channel) as a row-major matrix the float tiles read with FloatTile::b_stride =
// row_stride: row kk at packed + kk * row_stride, gathered along `segments` (built with
// panel_columns >= columns: cut only at output rows, few long copies), zero from `columns` to
// row_stride. Panel p is then the 16 (NR) columns at packed + p * NR. The float GEMM used to
// gather each row into scratch and copy it into NR-wide panels; reading the rows in place skips
// that second copy (a third of the packing) and runs the tiles as fast or faster (measured on
// ResNet50 and YOLOv5s layers, docs/cpu-kernels.md).
void gather_im2col_rows_float(const Im2colGeometry& geometry, const float* input,
                              size_t depth_begin, size_t depth, const Segment* segments,
                              size_t segment_count, size_t columns, size_t row_stride,
                              float* packed);

// The same into int16-pair B panels of x - zero_point (padding is 0, i.e. x == zero_point),
// for depth pairs [pair_begin, pair_begin + pairs); rows past the matrix depth are zero. The
// block starts at output pixel first_column; `rows` is scratch for two int8 rows of `columns`.
// The panel width pack_im2col_int16_pairs needs its segments built with: an int8 zero point
// gathers each im2col row into one contiguous int8 row first, so segments need not stop at
// panel edges (one "panel" as wide as the block, fewer and longer copies); any other zero point
// converts straight into the panels of `panel_columns`.
inline size_t int16_pair_segment_panel(int32_t zero_point, size_t columns, size_t panel_columns) {
  return zero_point >= -128 && zero_point <= 127 ? columns : panel_columns;
}
void pack_im2col_int16_pairs(const MicroKernels& kernels, const Im2colGeometry& geometry,
                             const int8_t* input, int32_t zero_point, size_t first_column,
                             size_t pair_begin, size_t pairs, const Segment* segments,
                             size_t segment_count, size_t columns, int8_t* rows, int16_t* packed);

// Im2col row k of one image and group as int8 codes (padding = `pad`, the input zero point) for
// the block `segments` describe, built with panel_columns >= the block's columns (one run per
// output row): the gather of pack_im2col_int16_pairs, for the dot-product convolution.
void gather_im2col_int8_row(const Im2colGeometry& geometry, const int8_t* input, int64_t k,
                            const Segment* segments, size_t segment_count, int8_t pad, int8_t* row);

// ---- depthwise planes ----------------------------------------------------------------------

// The zero-padded input plane a depthwise kernel slides over, split into stride_width column
// phases (micro_kernels.h DepthwisePlane): exactly the rows the outputs read, and per phase the
// columns they read plus 8 of slack for vector over-reads.
struct PaddedPlane {
  size_t height = 0;
  size_t width = 0;   // row stride of a phase, a multiple of 8
  size_t phases = 1;  // stride_width
  size_t pad_top = 0;
  size_t pad_left = 0;
  size_t phase_size() const { return height * width; }
  size_t size() const { return phases * phase_size(); }
};
inline PaddedPlane padded_plane(const reference::Window2D& window) {
  PaddedPlane plane;
  plane.phases = static_cast<size_t>(window.stride_width);
  plane.height = static_cast<size_t>((window.output_height - 1) * window.stride_height +
                                     (window.kernel_height - 1) * window.dilation_height + 1);
  const size_t largest_offset =
      static_cast<size_t>((window.kernel_width - 1) * window.dilation_width / window.stride_width);
  plane.width = round_up(static_cast<size_t>(window.output_width) + largest_offset + 8, 8);
  plane.pad_top = static_cast<size_t>(window.pad_top);
  plane.pad_left = static_cast<size_t>(window.pad_left);
  return plane;
}

// The plane description of a depthwise window over `padded` (weights, bias, activation and
// output left for the caller).
inline DepthwisePlane plane_description(const reference::Window2D& window, const PaddedPlane& plane,
                                        const float* padded) {
  DepthwisePlane description{};
  description.input = padded;
  description.input_stride = plane.width;
  description.phase_stride = plane.phase_size();
  description.kernel_height = static_cast<size_t>(window.kernel_height);
  description.kernel_width = static_cast<size_t>(window.kernel_width);
  description.stride_height = static_cast<size_t>(window.stride_height);
  description.stride_width = static_cast<size_t>(window.stride_width);
  description.dilation_height = static_cast<size_t>(window.dilation_height);
  description.dilation_width = static_cast<size_t>(window.dilation_width);
  description.output_height = static_cast<size_t>(window.output_height);
  description.output_width = static_cast<size_t>(window.output_width);
  description.output_stride = static_cast<size_t>(window.output_width);
  return description;
}

}  // namespace orknn::kernels::cpu::optimized
