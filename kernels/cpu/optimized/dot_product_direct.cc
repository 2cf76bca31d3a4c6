// int8 convolution without im2col on the tables with a direct tile (dot_product_kernels.h
// Int8DirectTile; VPDPBUSD's layout): the input is copied once per image into quad planes, four
// channels' bytes x + o per pixel (one VPDPBUSD lane), split into stride x stride phase planes
// for strided windows, each plane one output row wide. Output pixel n = (oy, ox) then reads tap
// (ky, kx) of quad q at a constant distance from n in the plane of the tap's phase, so a tile of
// 32 consecutive pixels (flattened over output rows: a 7x7 output fills its lanes too) loads
// one vector per quad and tap, masked where the window lies in the padding. The im2col GEMM
// copies each input byte once per tap into its B panels (nine times for a 3x3) and packs again
// per task; this copies it once. The zero-point algebra, the weights' values and the
// requantization are the GEMM's (dot_product_convolution.cc), so the outputs are the same bits.
//
// Small outputs put the output channels in the vector lanes instead (channels_in_lanes_wins):
// the pixels become the rows of A, packed once per image from the quad planes, and the weights
// the columns of B, and the table's Gemm tile (activations in A) computes pixels x channels,
// which the requantization reads back a channel at a time.
//
// A stride-2 window with an even kernel and even padding on a few channels (YOLOv5's 6x6/2 stem
// on RGB) runs as its space-to-depth form (session 7): a kh/2 x kw/2 stride-1 window over 4C
// channels of half the size, channel 4c + 2py + px being input channel c's pixels
// (2Y + py, 2X + px). Input row y = 2 oy - pad + ky with ky = 2 ty + py is row 2 (oy - pad/2 +
// ty) + py, so output (oy, ox) reads tap (ty, tx) of those channels at (oy - pad/2 + ty, ...),
// padding exactly where the original window's is. Its quads are one input channel's four pixel
// phases: no quad padded with a fourth channel, and three quarters of the depth groups of the
// stride-2 window on one padded quad (27 against 36 for the 6x6/2 stem on 3 channels).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
#include "optimized/dot_product_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::Int8Requantization;

constexpr size_t kQuad = 4;  // channels per plane pixel: one VPDPBUSD lane
// Rows (output channels) per pass over a block's pixel tiles: their weights (64 x depth) stay
// in L2 while the pixel tiles' planes are read from L1. (Chosen, not tuned; so is the chunk.)
constexpr size_t kRowPass = 64;
// Pixels per chunk: a chunk's plane rows stay in L2 across the row passes.
constexpr size_t kColumnChunk = 1024;
// Pixels whose int32 sums a task keeps for 8 rows when they are requantized outside the tile.
constexpr size_t kSumSpan = 256;
// No packing per task: a task costs little besides its multiply-adds (choose_output_blocks).
constexpr BlockLimits kDirectLimits{1, kRowPass, 32 * 4096, kRowPass * 4096, 4, 4};
// The quad planes of larger inputs are not made (they live in the calling thread's scratch).
constexpr size_t kLargestPlanes = size_t{64} << 20;
// Outputs of at most this many pixels may put the channels in lanes: their activations, packed
// as A (pixels x depth), are made once per image and read by every channel panel.
constexpr size_t kLargestChannelsInLanesOutput = 64;

// Whether a tile with the output channels in its lanes (the Gemm tile: pixels as rows, 16-lane
// vectors of channels) fills more lanes than one with the pixels in them: a 7x7 output is a 32-
// and a 17-pixel tile, 64 lanes for 49 pixels (77%), while 512 channels fill all of theirs and
// 49 pixels are 6 tiles of 8 rows and one of 1 (tiles with fewer rows compute only their rows).
// And only deep windows: the sums go through memory and are read back a channel at a time, a
// cost per output that the idle lanes' share of a short depth does not repay. ResNet50 at 7x7,
// one thread, minima of 8 alternating runs: 1x1 512 -> 2048 (depth 512) 1.04-1.12 of the time
// with pixels in lanes, 1x1 stride 2 1024 -> 2048 (depth 1024) 0.85, 1x1 2048 -> 512 0.91-0.98,
// 3x3 512 -> 512 (depth 4608, 68% of the VNNI peak with pixels in lanes) 0.83-0.91.
bool channels_in_lanes_wins(size_t pixels, size_t channels, size_t depth) {
  constexpr size_t kLanes = 16;
  constexpr size_t kSmallestDepth = 1024;
  if (pixels > kLargestChannelsInLanesOutput || depth < kSmallestDepth) return false;
  const size_t pixel_lanes = (pixels + kLanes - 1) / kLanes * kLanes;
  const size_t channel_lanes = (channels + kLanes - 1) / kLanes * kLanes;
  // channels / channel_lanes > pixels / pixel_lanes
  return channels * pixel_lanes > pixels * channel_lanes;
}

int64_t floor_divide(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return quotient * divisor > value ? quotient - 1 : quotient;
}

// A row's first tile (`first`) asks for the next A panel, which follows its own: a layer's
// weights are in no cache when a model reaches it, and the next row's tile would start on
// misses (resnet50 int8's 14x14 and 7x7 layers stream 0.3-2.4 MB of them).
void ask_next_panel(Int8DirectTile& tile, size_t panel_bytes, bool first) {
  tile.prefetch = {tile.a + panel_bytes, first ? panel_bytes : 0};
}

// Where the quad planes of a window are: which stride phases its taps read, each a plane of
// rows x output_width pixels, and each tap's phase and offset in output pixels.
struct QuadPlanes {
  struct Phase {
    int64_t row = 0;  // first input row and column of the phase
    int64_t column = 0;
    int64_t rows = 0;  // input rows and columns it holds
    int64_t columns = 0;
  };
  std::vector<Phase> phases;
  std::vector<size_t> tap_phase;
  std::vector<int64_t> tap_pixel_offset;  // (row offset) x output_width + column offset
  int64_t plane_rows = 0;
  size_t plane_bytes = 0;  // one phase of one quad
  bool fits = true;        // every phase's columns fit one output row

  explicit QuadPlanes(const reference::Window2D& w) {
    for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
      for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
        const int64_t y = ky * w.dilation_height - w.pad_top;
        const int64_t x = kx * w.dilation_width - w.pad_left;
        Phase phase;
        phase.row = y - floor_divide(y, w.stride_height) * w.stride_height;
        phase.column = x - floor_divide(x, w.stride_width) * w.stride_width;
        size_t index = 0;
        while (index < phases.size() &&
               (phases[index].row != phase.row || phases[index].column != phase.column)) {
          ++index;
        }
        if (index == phases.size()) {
          phase.rows = std::max<int64_t>(
              0, (w.input_height - phase.row + w.stride_height - 1) / w.stride_height);
          phase.columns = std::max<int64_t>(
              0, (w.input_width - phase.column + w.stride_width - 1) / w.stride_width);
          fits = fits && phase.columns <= w.output_width;
          plane_rows = std::max(plane_rows, phase.rows);
          phases.push_back(phase);
        }
        tap_phase.push_back(index);
        tap_pixel_offset.push_back(floor_divide(y, w.stride_height) * w.output_width +
                                   floor_divide(x, w.stride_width));
      }
    }
    plane_bytes = align_bytes(static_cast<size_t>(plane_rows * w.output_width) * kQuad);
  }
};

class DirectConvolution final : public Conv2DInt8 {
 public:
  // `space_to_depth`: `shape` and `weights` are a stride-2 window's space-to-depth form (above),
  // whose input is read from the original layout.
  DirectConvolution(const DotProductKernels& kernels, const Conv2DShape& shape,
                    const Int8Requantization& requantization, const int8_t* weights,
                    const QuadPlanes& planes, bool space_to_depth)
      : kernels_(kernels),
        shape_(shape),
        requantization_(requantization),
        planes_(planes),
        space_to_depth_(space_to_depth) {
    const reference::Window2D& w = shape.window;
    mr_ = kernels.rows;
    nr_ = kernels.direct_columns;
    channels_ = static_cast<size_t>(shape.input_channels);
    output_channels_ = static_cast<size_t>(shape.output_channels);
    quads_ = divide_round_up(channels_, kQuad);
    taps_ = static_cast<size_t>(w.kernel_height * w.kernel_width);
    depth_groups_ = taps_ * quads_;
    columns_ = static_cast<size_t>(w.output_height * w.output_width);
    quad_stride_ = planes_.phases.size() * planes_.plane_bytes;
    planes_bytes_ = align_bytes(quads_ * quad_stride_);
    channels_in_lanes_ = kernels.tile_activations_in_a != nullptr &&
                         channels_in_lanes_wins(columns_, output_channels_, channels_ * taps_);
    // Channels in lanes: the weights are B's panels of NR columns, the pixels A's of MR rows.
    weight_panel_ = channels_in_lanes_ ? kernels.columns : mr_;
    pixel_panels_ = divide_round_up(columns_, mr_);
    shared_bytes_ =
        planes_bytes_ +
        (channels_in_lanes_ ? align_bytes(pixel_panels_ * depth_groups_ * mr_ * kQuad) : 0);
    for (size_t t = 0; t < taps_; ++t) {
      tap_offsets_.push_back(
          static_cast<int32_t>(planes_.tap_phase[t] * planes_.plane_bytes +
                               planes_.tap_pixel_offset[t] * static_cast<int64_t>(kQuad)));
    }
    contiguous_rows_ = !space_to_depth && w.stride_height == 1 && w.stride_width == 1 &&
                       planes_.phases.size() == 1 && planes_.phases[0].row == 0 &&
                       planes_.phases[0].column == 0 && w.input_width == w.output_width;
    // A missing channel's rows: one input row, or a whole plane when rows are copied as one run.
    padding_row_.assign(
        static_cast<size_t>(contiguous_rows_ ? w.input_height * w.input_width : w.input_width),
        static_cast<int8_t>(requantization.input_zero_point));
    const uint32_t padding_byte =
        static_cast<uint8_t>(requantization.input_zero_point ^ activation_sign_flip(kernels));
    padding_ = static_cast<int32_t>(padding_byte * 0x01010101u);
    pack_weights(weights);

    lanes_offset_ = 0;
    row_valid_offset_ =
        lanes_offset_ + align_bytes(taps_ * divide_round_up(kSumSpan, nr_) * sizeof(uint32_t));
    column_valid_offset_ =
        row_valid_offset_ + align_bytes(static_cast<size_t>(w.kernel_height) * sizeof(uint32_t));
    constants_offset_ =
        column_valid_offset_ + align_bytes(static_cast<size_t>(w.kernel_width) * sizeof(uint32_t));
    sums_offset_ = constants_offset_ + align_bytes(output_channels_ * sizeof(int32_t));
    // Channels in lanes: a channel panel's sums (pixels x NR) and one channel's row of them.
    const size_t sums = channels_in_lanes_
                            ? pixel_panels_ * mr_ * kernels.columns + round_up(columns_, 16)
                            : mr_ * kSumSpan;
    task_bytes_ = sums_offset_ + align_bytes(sums * sizeof(int32_t));
    small_multipliers_ =
        small_multipliers(requantization.multipliers.data(), requantization.multipliers.size(),
                          requantization.output_zero_point);
    requantizes_in_tile_ = small_multipliers_ && !requantization.silu;
    if (channels_in_lanes_) {
      std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 direct channels in lanes %zux%zu",
                    kernels.name, mr_, kernels.columns);
    } else {
      std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 direct %zux%zu%s", kernels.name, mr_,
                    nr_, space_to_depth ? " space-to-depth" : "");
    }
  }

  // The quad planes (and with channels in lanes the packed activations) come first, in the
  // calling thread's scratch (every thread reads them), then each thread's task scratch.
  size_t scratch_bytes() const override { return shared_bytes_ + task_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const size_t bytes = scratch_bytes();
    // Thread 0 is the caller: its scratch is stable while the tasks read it.
    int8_t* planes = reinterpret_cast<int8_t*>(pool.scratch(0, bytes));
    const size_t image_input =
        channels_ * static_cast<size_t>(shape_.window.input_height * shape_.window.input_width);
    const size_t image_output = output_channels_ * columns_;
    const OutputBlocks blocks = choose_output_blocks(output_channels_, columns_, 1,
                                                     pool.thread_count(), mr_, nr_, kDirectLimits);
    const size_t tasks = block_task_count(1, blocks);
    const CopySplit copy = copy_split(pool.thread_count());
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const int8_t* image_input_codes = input + image * image_input;
      pool.parallel_for(copy.tasks, [&](size_t task, size_t) {
        copy_task(image_input_codes, copy, task, planes);
      });
      if (channels_in_lanes_) {
        run_channels_in_lanes(planes, bias, output + image * image_output, pool);
        continue;
      }
      pool.parallel_for(tasks, [&](size_t task, size_t thread) {
        const BlockTask position = block_task(task, blocks);
        if (position.first_row >= output_channels_ || position.first_column >= columns_) return;
        const size_t rows = std::min(blocks.row_block, output_channels_ - position.first_row);
        const size_t columns = std::min(blocks.column_block, columns_ - position.first_column);
        run_block(planes, bias, output + image * image_output, position.first_row, rows,
                  position.first_column, columns, pool.scratch(thread, bytes) + shared_bytes_);
      });
    }
  }

 private:
  // Weights [M][C][kh][kw] -> panels of weight_panel_ output channels (A's MR rows, or with
  // channels in lanes B's NR columns: the same layout) of w - zw, depth groups (tap, quad)
  // tap-major, channels past C zero; and per output channel the zero-point term
  // -(zx + o) sum (w - zw), modulo 2^32 (the GEMM's: the padding channels add nothing).
  void pack_weights(const int8_t* weights) {
    const size_t panel = weight_panel_;
    const size_t panel_bytes = depth_groups_ * panel * kQuad;
    packed_weights_.assign(divide_round_up(output_channels_, panel) * panel_bytes, 0);
    zero_point_terms_.assign(output_channels_, 0);
    bias_limits_.assign(output_channels_, -1);
    float_bounds_.assign(output_channels_, 0);
    const int64_t packed_zero_point =
        int64_t{requantization_.input_zero_point} + kernels_.activation_offset;
    for (size_t m = 0; m < output_channels_; ++m) {
      const int32_t zero_point = requantization_.weight_zero_points[m];
      int8_t* packed = packed_weights_.data() + (m / panel) * panel_bytes;
      int64_t sum = 0;
      int64_t magnitudes = 0;
      for (size_t c = 0; c < channels_; ++c) {
        for (size_t t = 0; t < taps_; ++t) {
          const int32_t offset = weights[(m * channels_ + c) * taps_ + t] - zero_point;
          sum += offset;
          magnitudes += offset < 0 ? -offset : offset;
          const size_t group = t * quads_ + c / kQuad;
          packed[(group * panel + m % panel) * kQuad + c % kQuad] = static_cast<int8_t>(offset);
        }
      }
      zero_point_terms_[m] = static_cast<int32_t>(static_cast<uint32_t>(-packed_zero_point * sum));
      bias_limits_[m] = float_requantization_bias_limit(
          magnitudes, requantization_.input_zero_point, requantization_.multipliers[m]);
      float_bounds_[m] = float_requantization_bound(requantization_.multipliers[m]);
    }
  }

  // The quad-plane copy's tasks: with at least kCopyTasksPerThread planes (quad x phase) per
  // thread, ranges of whole planes, about that many per thread; with fewer, every plane cut into
  // bands of rows, so a one-quad input (an RGB image) still spreads over the threads. A task per
  // plane cost more than the copy at two threads: ResNet50's 2048 -> 512 @7 layers copied 512
  // planes of 49 pixels in 45 us on one thread and 127 on two (a claim, a line the other core
  // wrote, for every few planes; session 8).
  struct CopySplit {
    size_t tasks;
    size_t bands;  // per plane (1 when a task is a range of planes)
  };
  static constexpr size_t kCopyTasksPerThread = 8;

  CopySplit copy_split(size_t threads) const {
    const size_t planes = quads_ * planes_.phases.size();
    const size_t wanted = kCopyTasksPerThread * threads;
    if (planes >= wanted) return CopySplit{wanted, 1};
    const size_t bands =
        std::clamp<size_t>(divide_round_up(wanted, planes), 1,
                           static_cast<size_t>(std::max<int64_t>(planes_.plane_rows, 1)));
    return CopySplit{planes * bands, bands};
  }

  void copy_task(const int8_t* input, const CopySplit& split, size_t task, int8_t* planes) const {
    const size_t plane_count = quads_ * planes_.phases.size();
    if (split.bands > 1 || split.tasks == plane_count) {
      copy_band(input, task / split.bands, task % split.bands, split.bands, planes);
      return;
    }
    const size_t end = plane_count * (task + 1) / split.tasks;
    for (size_t plane = plane_count * task / split.tasks; plane < end; ++plane) {
      copy_band(input, plane, 0, 1, planes);
    }
  }

  // Band `band` of `bands` of plane `plane` (quad x phase): its input rows interleaved.
  void copy_band(const int8_t* input, size_t plane, size_t band, size_t bands,
                 int8_t* planes) const {
    const reference::Window2D& w = shape_.window;
    const size_t quad = plane / planes_.phases.size();
    const size_t phase_index = plane % planes_.phases.size();
    const QuadPlanes::Phase& phase = planes_.phases[phase_index];
    const auto rows = static_cast<size_t>(phase.rows);
    const size_t first = rows * band / bands;
    const size_t end = rows * (band + 1) / bands;
    const size_t plane_size = static_cast<size_t>(w.input_height * w.input_width);
    Int8QuadRow row{};
    row.count = static_cast<size_t>(phase.columns);
    row.stride = static_cast<size_t>(w.stride_width);
    row.flip = activation_sign_flip(kernels_);
    if (row.count == 0) return;
    int8_t* out = planes + quad * quad_stride_ + phase_index * planes_.plane_bytes;
    if (space_to_depth_) {
      // Quad c holds input channel c's pixels (2Y + d / 2, 2X + d % 2) (one stride-1 phase).
      const auto width = static_cast<size_t>(2 * w.input_width);
      row.stride = 2;
      for (size_t i = first; i < end; ++i) {
        const int8_t* channel = input + quad * kQuad * plane_size + 2 * i * width;
        for (size_t d = 0; d < kQuad; ++d) row.rows[d] = channel + (d / 2) * width + d % 2;
        row.out = out + i * static_cast<size_t>(w.output_width) * kQuad;
        kernels_.interleave_quad_row(row);
      }
      return;
    }
    if (contiguous_rows_) {
      // Stride 1 and rows as wide as the output's: the band's rows are one run in the input and
      // in the plane, so one call copies them (a 7x7 plane's rows were seven calls of seven).
      const size_t width = row.count;
      row.count = (end - first) * width;
      for (size_t d = 0; d < kQuad; ++d) {
        const size_t channel = quad * kQuad + d;
        row.rows[d] = channel < channels_ ? input + channel * plane_size + first * width
                                          : padding_row_.data();
      }
      row.out = out + first * width * kQuad;
      if (row.count > 0) kernels_.interleave_quad_row(row);
      return;
    }
    for (size_t i = first; i < end; ++i) {
      const size_t y = i * static_cast<size_t>(w.stride_height) + static_cast<size_t>(phase.row);
      for (size_t d = 0; d < kQuad; ++d) {
        const size_t channel = quad * kQuad + d;
        // Channels past the input read the zero point's code (their weights are zero).
        row.rows[d] = channel < channels_
                          ? input + channel * plane_size + y * static_cast<size_t>(w.input_width) +
                                static_cast<size_t>(phase.column)
                          : padding_row_.data();
      }
      row.out = out + i * static_cast<size_t>(w.output_width) * kQuad;
      kernels_.interleave_quad_row(row);
    }
  }

  // The lanes of the tile of `count` pixels from `first` whose window position of each tap lies
  // inside the input (the others read the padding code).
  void tap_lanes(size_t first, size_t count, uint32_t* row_valid, uint32_t* column_valid,
                 uint32_t* lanes) const {
    const reference::Window2D& w = shape_.window;
    std::fill(row_valid, row_valid + w.kernel_height, 0u);
    std::fill(column_valid, column_valid + w.kernel_width, 0u);
    const auto width = static_cast<size_t>(w.output_width);
    size_t oy = first / width;
    size_t ox = first % width;
    for (size_t lane = 0; lane < count; ++lane) {
      const uint32_t bit = uint32_t{1} << lane;
      const int64_t y = static_cast<int64_t>(oy) * w.stride_height - w.pad_top;
      for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
        const int64_t row = y + ky * w.dilation_height;
        if (row >= 0 && row < w.input_height) row_valid[ky] |= bit;
      }
      const int64_t x = static_cast<int64_t>(ox) * w.stride_width - w.pad_left;
      for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
        const int64_t column = x + kx * w.dilation_width;
        if (column >= 0 && column < w.input_width) column_valid[kx] |= bit;
      }
      if (++ox == width) {
        ox = 0;
        ++oy;
      }
    }
    for (size_t t = 0; t < taps_; ++t) {
      lanes[t] = row_valid[t / static_cast<size_t>(w.kernel_width)] &
                 column_valid[t % static_cast<size_t>(w.kernel_width)];
    }
  }

  void run_block(const int8_t* planes, const int32_t* bias, int8_t* output, size_t first_row,
                 size_t rows, size_t first_column, size_t columns, uint8_t* scratch) const {
    auto* lanes = reinterpret_cast<uint32_t*>(scratch + lanes_offset_);
    auto* row_valid = reinterpret_cast<uint32_t*>(scratch + row_valid_offset_);
    auto* column_valid = reinterpret_cast<uint32_t*>(scratch + column_valid_offset_);
    auto* constants = reinterpret_cast<int32_t*>(scratch + constants_offset_);
    auto* sums = reinterpret_cast<int32_t*>(scratch + sums_offset_);
    for (size_t r = 0; r < rows; ++r) {
      const size_t channel = first_row + r;
      constants[r] = wrapping_add(bias ? bias[channel] : 0, zero_point_terms_[channel]);
    }
    const size_t panel_bytes = depth_groups_ * mr_ * kQuad;
    Int8DirectTile tile{};
    tile.taps = taps_;
    tile.quads = quads_;
    tile.quad_stride = quad_stride_;
    tile.tap_offsets = tap_offsets_.data();
    tile.tap_lanes = lanes;
    tile.padding = padding_;
    Int8TileRequantization requantization{};
    requantization.output_zero_point = requantization_.output_zero_point;
    requantization.output_minimum = requantization_.output_minimum;
    requantization.output_maximum = requantization_.output_maximum;
    requantization.output_stride = columns_;
    requantization.in_float =
        requantizes_in_tile_ && requantizes_in_float(bias_limits_.data() + first_row,
                                                     bias ? bias + first_row : nullptr, rows);

    const size_t end_column = first_column + columns;
    const size_t end_row = first_row + rows;
    if (!requantizes_in_tile_) {
      // The int32 sums of 8 rows x a span of pixels, then the rows' requantization (the SiLU
      // epilogue's fixed cost per call is paid per span, not per 32 pixels).
      tile.c_stride = kSumSpan;
      for (size_t span = first_column; span < end_column; span += kSumSpan) {
        const size_t span_end = std::min(end_column, span + kSumSpan);
        for (size_t pixel = span, t = 0; pixel < span_end; pixel += nr_, ++t) {
          tap_lanes(pixel, std::min(nr_, span_end - pixel), row_valid, column_valid,
                    lanes + t * taps_);
        }
        for (size_t row = first_row; row < end_row; row += mr_) {
          tile.rows = std::min(mr_, end_row - row);
          tile.a = packed_weights_.data() + (row / mr_) * panel_bytes;
          for (size_t pixel = span, t = 0; pixel < span_end; pixel += nr_, ++t) {
            ask_next_panel(tile, panel_bytes, pixel == first_column);
            tile.columns = std::min(nr_, span_end - pixel);
            tile.tap_lanes = lanes + t * taps_;
            tile.planes = planes + pixel * kQuad;
            tile.c = sums + (pixel - span);
            kernels_.tile_direct(tile, nullptr);
          }
          for (size_t r = 0; r < tile.rows; ++r) {
            const int32_t constant = constants[row - first_row + r];
            finish_row(
                kernels_, requantization_, row + r, false, small_multipliers_, sums + r * kSumSpan,
                span_end - span, [constant](size_t) { return constant; },
                output + (row + r) * columns_ + span);
          }
        }
      }
      return;
    }
    for (size_t chunk = first_column; chunk < end_column; chunk += kColumnChunk) {
      const size_t chunk_end = std::min(end_column, chunk + kColumnChunk);
      for (size_t pass = first_row; pass < end_row; pass += kRowPass) {
        const size_t pass_end = std::min(end_row, pass + kRowPass);
        for (size_t pixel = chunk; pixel < chunk_end; pixel += nr_) {
          tile.columns = std::min(nr_, chunk_end - pixel);
          tap_lanes(pixel, tile.columns, row_valid, column_valid, lanes);
          tile.planes = planes + pixel * kQuad;
          for (size_t row = pass; row < pass_end; row += mr_) {
            tile.rows = std::min(mr_, pass_end - row);
            tile.a = packed_weights_.data() + (row / mr_) * panel_bytes;
            ask_next_panel(tile, panel_bytes, pixel == chunk);
            requantization.constants = constants + (row - first_row);
            requantization.multipliers = requantization_.multipliers.data() + row;
            requantization.float_bounds = float_bounds_.data() + row;
            requantization.output = output + row * columns_ + pixel;
            kernels_.tile_direct(tile, &requantization);
          }
        }
      }
    }
  }

  // Channels in lanes, one image: the pixels packed as A's rows, then per panel of NR output
  // channels the Gemm tile over every pixel panel and the requantization, channel by channel.
  void run_channels_in_lanes(const int8_t* planes, const int32_t* bias, int8_t* output,
                             ThreadPool& pool) const {
    const size_t bytes = scratch_bytes();
    int8_t* activations = reinterpret_cast<int8_t*>(pool.scratch(0, bytes)) + planes_bytes_;
    pool.parallel_for(pixel_panels_, [&](size_t panel, size_t thread) {
      pack_pixel_panel(planes, panel, pool.scratch(thread, bytes) + shared_bytes_, activations);
    });
    const size_t nr = kernels_.columns;
    pool.parallel_for(divide_round_up(output_channels_, nr), [&](size_t panel, size_t thread) {
      run_channel_panel(activations, bias, output, panel, ThreadPool::likely_next_index(panel),
                        pool.scratch(thread, bytes) + shared_bytes_);
    });
  }

  // Pixels [panel x MR, + MR) as an A panel: group (tap, quad) holds each pixel's four bytes of
  // the quad at the tap's window position, the padding code where that lies outside the input
  // (the lanes the direct tile would mask).
  void pack_pixel_panel(const int8_t* planes, size_t panel, uint8_t* scratch,
                        int8_t* activations) const {
    auto* lanes = reinterpret_cast<uint32_t*>(scratch + lanes_offset_);
    auto* row_valid = reinterpret_cast<uint32_t*>(scratch + row_valid_offset_);
    auto* column_valid = reinterpret_cast<uint32_t*>(scratch + column_valid_offset_);
    const size_t first = panel * mr_;
    const size_t count = std::min(mr_, columns_ - first);
    tap_lanes(first, count, row_valid, column_valid, lanes);
    int8_t* out = activations + panel * depth_groups_ * mr_ * kQuad;
    const uint32_t all_rows = count == 32 ? ~0u : (1u << count) - 1u;
    for (size_t t = 0; t < taps_; ++t) {
      const int8_t* source =
          planes + static_cast<ptrdiff_t>(tap_offsets_[t]) + static_cast<ptrdiff_t>(first * kQuad);
      if (count == mr_ && (lanes[t] & all_rows) == all_rows) {
        // Every pixel reads inside the input: the quad plane's pixels are the panel's rows.
        for (size_t q = 0; q < quads_; ++q, source += quad_stride_, out += mr_ * kQuad) {
          std::memcpy(out, source, mr_ * kQuad);
        }
        continue;
      }
      for (size_t q = 0; q < quads_; ++q, source += quad_stride_, out += mr_ * kQuad) {
        for (size_t r = 0; r < mr_; ++r) {
          int32_t value = padding_;
          if (r < count && (lanes[t] >> r & 1u) != 0) {
            std::memcpy(&value, source + r * kQuad, kQuad);
          }
          std::memcpy(out + r * kQuad, &value, kQuad);
        }
      }
    }
  }

  // Output channels [panel x NR, + NR): pixels x channels sums in scratch, then each channel's
  // column of them as a row, requantized (finish_row: the GEMM's rows, any requantization).
  void run_channel_panel(const int8_t* activations, const int32_t* bias, int8_t* output,
                         size_t panel, size_t next_panel, uint8_t* scratch) const {
    const size_t nr = kernels_.columns;
    auto* sums = reinterpret_cast<int32_t*>(scratch + sums_offset_);
    int32_t* row = sums + pixel_panels_ * mr_ * nr;
    const size_t first_channel = panel * nr;
    Int8DotTile tile{};
    tile.columns = std::min(nr, output_channels_ - first_channel);
    tile.depth_groups = depth_groups_;
    const size_t panel_bytes = depth_groups_ * nr * kQuad;
    tile.b = packed_weights_.data() + panel * panel_bytes;
    tile.c_stride = nr;
    // The pixel panels ask the weights of the channel panel this thread most likely runs next
    // into L2, a slice each: in a model the first pixel panel reads this panel's from memory
    // (ResNet50's 7x7 layers hold 1-2 MB of weights, in no cache when the model reaches them).
    const bool prefetch = next_panel < divide_round_up(output_channels_, nr);
    const int8_t* next_weights = packed_weights_.data() + (prefetch ? next_panel : 0) * panel_bytes;
    const size_t slice = divide_round_up(panel_bytes, pixel_panels_);
    for (size_t p = 0; p < pixel_panels_; ++p) {
      tile.rows = std::min(mr_, columns_ - p * mr_);
      tile.a = activations + p * depth_groups_ * mr_ * kQuad;
      tile.c = sums + p * mr_ * nr;
      if (prefetch) tile.prefetch = {next_weights + p * slice, slice};
      kernels_.tile_activations_in_a(tile);
    }
    for (size_t j = 0; j < tile.columns; ++j) {
      const size_t channel = first_channel + j;
      for (size_t pixel = 0; pixel < columns_; ++pixel) row[pixel] = sums[pixel * nr + j];
      const int32_t constant = wrapping_add(bias ? bias[channel] : 0, zero_point_terms_[channel]);
      finish_row(
          kernels_, requantization_, channel, false, small_multipliers_, row, columns_,
          [constant](size_t) { return constant; }, output + channel * columns_);
    }
  }

  const DotProductKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization requantization_;
  const QuadPlanes planes_;
  const bool space_to_depth_;
  bool contiguous_rows_ = false;  // copy_band copies a band's rows as one run
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t channels_ = 0;
  size_t output_channels_ = 0;
  size_t quads_ = 0;
  size_t taps_ = 0;
  size_t depth_groups_ = 0;
  size_t columns_ = 0;
  size_t quad_stride_ = 0;
  size_t planes_bytes_ = 0;
  size_t shared_bytes_ = 0;  // the planes, then with channels in lanes the packed pixels
  bool channels_in_lanes_ = false;
  size_t weight_panel_ = 0;  // output channels per packed weight panel
  size_t pixel_panels_ = 0;  // output pixels / MR, rounded up
  size_t lanes_offset_ = 0;
  size_t row_valid_offset_ = 0;
  size_t column_valid_offset_ = 0;
  size_t constants_offset_ = 0;
  size_t sums_offset_ = 0;
  size_t task_bytes_ = 0;
  bool small_multipliers_ = false;
  bool requantizes_in_tile_ = false;
  int32_t padding_ = 0;
  std::vector<int32_t> tap_offsets_;
  std::vector<int8_t> padding_row_;
  std::vector<int8_t, LargeAllocator<int8_t>> packed_weights_;
  std::vector<int32_t> zero_point_terms_;
  std::vector<int64_t> bias_limits_;    // per output channel, float_requantization_bias_limit
  std::vector<uint32_t> float_bounds_;  // per output channel, float_requantization_bound
  char algorithm_[64];
};

// Whether `shape` takes the space-to-depth form (file comment): a stride-2 window with an even
// kernel and even padding over even input sides, on fewer than 8 channels (deeper inputs fill
// their quads anyway).
bool space_to_depth_stem(const Conv2DShape& shape) {
  const reference::Window2D& w = shape.window;
  return shape.groups == 1 && shape.input_channels < 8 && w.stride_height == 2 &&
         w.stride_width == 2 && w.dilation_height == 1 && w.dilation_width == 1 &&
         w.kernel_height % 2 == 0 && w.kernel_width % 2 == 0 && w.pad_top >= 0 && w.pad_left >= 0 &&
         w.pad_top % 2 == 0 && w.pad_left % 2 == 0 && w.input_height % 2 == 0 &&
         w.input_width % 2 == 0;
}

// The space-to-depth form's shape: 4C channels of half the size, a kh/2 x kw/2 stride-1 window
// with half the padding before, the same output.
Conv2DShape space_to_depth_shape(const Conv2DShape& shape) {
  Conv2DShape form = shape;
  reference::Window2D& w = form.window;
  form.input_channels = 4 * shape.input_channels;
  w.input_height /= 2;
  w.input_width /= 2;
  w.kernel_height /= 2;
  w.kernel_width /= 2;
  w.stride_height = w.stride_width = 1;
  w.pad_top /= 2;
  w.pad_left /= 2;
  // The far side: what keeps the output size (windows past the input read padding in both).
  w.pad_bottom = w.output_height - 1 + w.kernel_height - w.pad_top - w.input_height;
  w.pad_right = w.output_width - 1 + w.kernel_width - w.pad_left - w.input_width;
  return form;
}

// Weights [M][C][kh][kw] as the form's [M][4C][kh/2][kw/2]: channel 4c + 2py + px, tap
// (ty, tx) is tap (2ty + py, 2tx + px) of channel c.
std::vector<int8_t> space_to_depth_weights(const Conv2DShape& shape, const int8_t* weights) {
  const reference::Window2D& w = shape.window;
  const int64_t half_height = w.kernel_height / 2;
  const int64_t half_width = w.kernel_width / 2;
  std::vector<int8_t> form(static_cast<size_t>(shape.output_channels * shape.input_channels *
                                               w.kernel_height * w.kernel_width));
  size_t index = 0;
  for (int64_t m = 0; m < shape.output_channels; ++m) {
    for (int64_t c = 0; c < shape.input_channels; ++c) {
      for (int64_t phase = 0; phase < 4; ++phase) {
        for (int64_t ty = 0; ty < half_height; ++ty) {
          for (int64_t tx = 0; tx < half_width; ++tx) {
            const int64_t ky = 2 * ty + phase / 2;
            const int64_t kx = 2 * tx + phase % 2;
            form[index++] =
                weights[((m * shape.input_channels + c) * w.kernel_height + ky) * w.kernel_width +
                        kx];
          }
        }
      }
    }
  }
  return form;
}

}  // namespace

bool direct_convolution_wins(const Conv2DShape& shape, const Int8Requantization& requantization) {
  // Measured per layer against the im2col GEMM (docs/cpu-kernels.md, session 6), one thread:
  // every kernel larger than 1x1 on 8 or more channels (ResNet50's 3x3 layers 0.83-0.91 of the
  // GEMM's time, 0.71-0.86 at 7x7; YOLOv5s's, with the SiLU epilogue, 0.84-0.92, stride 2
  // 0.89-0.99); 1x1 kernels only on small outputs with the requantizing tile (7x7: 0.74-0.97;
  // stride 2 to 14x14 and 7x7: 0.70-0.79): on large ones the copy costs what the GEMM's in-place
  // packing saves (56x56: 1.07-1.20). Not 3-channel inputs: one quad, a quarter of it padding (the
  // 7x7 stem 1.10).
  const reference::Window2D& w = shape.window;
  // Stems in their space-to-depth form: YOLOv5s's 6x6/2 on 3 channels measured 0.88 of the
  // GEMM's time in the model, with its SiLU epilogue (docs/cpu-kernels.md, session 7).
  if (space_to_depth_stem(shape)) return true;
  if (w.kernel_height * w.kernel_width > 1) return shape.input_channels / shape.groups >= 8;
  const bool requantizes_in_tile =
      !requantization.silu &&
      small_multipliers(requantization.multipliers.data(), requantization.multipliers.size(),
                        requantization.output_zero_point);
  // And only large ones: MobileNetV2's 7x7 1x1 layers below 2^18 weights measured 1.05-1.11
  // (about 3 us more on 40-60 us; not analysed, the copy's own pass over the pool probably).
  const int64_t columns = w.output_height * w.output_width;
  return requantizes_in_tile &&
         shape.input_channels * shape.output_channels >= (int64_t{1} << 18) &&
         (columns <= 64 || (w.stride_height * w.stride_width > 1 && columns <= 196));
}

std::unique_ptr<Conv2DInt8> make_direct_dot_product_conv2d_int8(
    const DotProductKernels& kernels, const Conv2DShape& shape,
    const Int8Requantization& requantization, const int8_t* constant_weights) {
  // Pair-limited tables have no direct tile: its corrections are unwritten.
  if (!kernels.tile_direct || kernels.pair_sums_limited || !kernels.interleave_quad_row ||
      kernels.group_depth != kQuad || kernels.activation_offset != 128 ||
      kernels.direct_columns == 0 || kernels.direct_columns > 32) {
    return nullptr;
  }
  const reference::Window2D& w = shape.window;
  if (!constant_weights || shape.groups != 1 || shape.batch <= 0 || shape.output_channels <= 0 ||
      shape.input_channels <= 0 || w.output_height <= 0 || w.output_width <= 0 ||
      w.stride_height <= 0 || w.stride_width <= 0) {
    return nullptr;
  }
  if (requantization.input_zero_point < -128 || requantization.input_zero_point > 127 ||
      requantization.weight_zero_points.size() < static_cast<size_t>(shape.output_channels)) {
    return nullptr;
  }
  // A stem runs as its space-to-depth form (file comment): that shape and its weights below.
  const bool space_to_depth = space_to_depth_stem(shape);
  const Conv2DShape form = space_to_depth ? space_to_depth_shape(shape) : shape;
  std::vector<int8_t> form_weights;
  if (space_to_depth) form_weights = space_to_depth_weights(shape, constant_weights);
  const int8_t* weights = space_to_depth ? form_weights.data() : constant_weights;
  const reference::Window2D& fw = form.window;
  const QuadPlanes planes(fw);
  const size_t quads = divide_round_up(static_cast<size_t>(form.input_channels), kQuad);
  const size_t planes_bytes = quads * planes.phases.size() * planes.plane_bytes;
  if (!planes.fits || planes_bytes > kLargestPlanes) return nullptr;
  // Every tap offset (and the lane addresses built from it) fits int32.
  for (int64_t offset : planes.tap_pixel_offset) {
    if (offset * static_cast<int64_t>(kQuad) < -(int64_t{1} << 30) ||
        offset * static_cast<int64_t>(kQuad) > (int64_t{1} << 30)) {
      return nullptr;
    }
  }
  for (int64_t m = 0; m < form.output_channels; ++m) {
    const int32_t zero_point = requantization.weight_zero_points[static_cast<size_t>(m)];
    const int64_t depth = form.input_channels * fw.kernel_height * fw.kernel_width;
    for (int64_t k = 0; k < depth; ++k) {
      const int32_t offset = weights[m * depth + k] - zero_point;
      if (offset < -128 || offset > 127) return nullptr;
    }
  }
  return std::make_unique<DirectConvolution>(kernels, form, requantization, weights, planes,
                                             space_to_depth);
}

}  // namespace orknn::kernels::cpu::optimized
