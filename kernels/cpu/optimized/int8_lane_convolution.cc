// int8 convolution with output channels in lanes, for small output planes (docs/cpu-kernels.md,
// "Session 10: int8 convolutions on small planes with output channels in lanes").
//
// The im2col GEMM (convolution_gemm.cc) puts output pixels in the int16-pair tile's columns (16
// on avx2), which a small plane does not fill: a 7x7 plane is 49 = 3 x 16 + 1 pixels, so its
// fourth panel runs a whole tile for one pixel, and the deep weights (3x3 512->512: 4.7 MB as
// int16 pairs) stream past once per panel. Here the roles are swapped and the same tile computes
// C' = pixels x channels: A is a panel of MR output pixels of the image's im2col, packed once per
// image, and B a panel of NR output channels of the weights, packed once at build. A plane's
// pixel count then only decides the rows of its last tile (7x7: eight tiles of 6 pixels and one
// of 1, which the tile runs with one row of registers), and every channel block's weights are
// read once per image.
//
// The sums are the GEMM's, sum (x - zx)(w - zw) + bias in int32, so the requantization is the
// GEMM's too: per output channel its row of pixels is gathered from C' and requantized by the
// table's requantize_row, bit-exact with the reference.
//
// Per image: the input planes are widened to x - zx (int16) inside a border of zeros (padding is
// the input zero point, whose offset is 0), so that any zero point works and every tap of every
// pixel is one load at (the tap's offset + the pixel's offset) in its plane. Each panel of MR
// pixels is packed as the tile's A ([depth pair][pixel][2]). Then per block of output channels
// (one task each; the threads claim blocks), per depth chunk: per weight panel of the block (its
// chunk stays in L1), every pixel panel's tile (their chunks come from L2).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
#include "optimized/optimized_kernels.h"
#include "optimized/tile_arithmetic.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::Int8Requantization;

class Int8LaneConvolution final : public Conv2DInt8 {
 public:
  Int8LaneConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                      const Int8Requantization& q, const int8_t* weights)
      : kernels_(kernels), shape_(shape), q_(q) {
    const reference::Window2D& window = shape.window;
    mr_ = kernels.int16_rows;
    nr_ = kernels.int16_columns;
    block_channels_ = kBlockPanels * nr_;
    height_ = static_cast<size_t>(window.input_height);
    width_ = static_cast<size_t>(window.input_width);
    channels_ = static_cast<size_t>(shape.input_channels);
    rows_ = static_cast<size_t>(shape.output_channels);
    const auto output_width = static_cast<size_t>(window.output_width);
    pixels_ = static_cast<size_t>(window.output_height) * output_width;
    pad_top_ = static_cast<size_t>(window.pad_top);
    pad_left_ = static_cast<size_t>(window.pad_left);
    LanePlanes planes = lane_planes(window);
    padded_height_ = planes.height;
    padded_width_ = planes.width;
    padded_plane_ = planes.plane();
    pixel_offsets_ = std::move(planes.pixel_offsets);

    // Depth k = channel x taps + tap (the weights' order): its offset in the padded planes.
    const size_t taps = planes.tap_offsets.size();
    depth_ = channels_ * taps;
    pairs_ = divide_round_up(depth_, 2);
    for (size_t channel = 0; channel < channels_; ++channel) {
      for (size_t tap = 0; tap < taps; ++tap) {
        depth_offsets_.push_back(static_cast<int32_t>(
            channel * padded_plane_ + static_cast<size_t>(planes.tap_offsets[tap])));
      }
    }

    // Weights [M][C][kh][kw] -> panels of NR output channels, as the tile reads B.
    weight_panels_ = divide_round_up(rows_, nr_);
    packed_weights_.resize(weight_panels_ * pairs_ * nr_ * 2);
    pack_row_panels<Int16PairArithmetic>(weights, q.weight_zero_points.data(), rows_, depth_, nr_,
                                         packed_weights_.data());
    set_bias_limits(weights);
    small_multipliers_ =
        small_multipliers(q.multipliers.data(), q.multipliers.size(), q.output_zero_point);

    planes_bytes_ = align_bytes(channels_ * padded_plane_ * sizeof(int16_t));
    panels_bytes_ = align_bytes(pixel_panels() * pairs_ * mr_ * 2 * sizeof(int16_t));
    sums_bytes_ = align_bytes(pixel_panels() * mr_ * block_channels_ * sizeof(int32_t));
    row_bytes_ = align_bytes(pixels_ * sizeof(int32_t));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 lanes %zux%zu", kernels.name, nr_, mr_);
  }

  // Thread 0's scratch holds the image's padded planes and pixel panels (every thread reads
  // them); each thread's task area (its block's sums and one channel's row) follows them.
  size_t scratch_bytes() const override { return shared_bytes() + sums_bytes_ + row_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    uint8_t* scratch = pool.scratch(0, scratch_bytes());
    auto* planes = reinterpret_cast<int16_t*>(scratch);
    auto* panels = reinterpret_cast<int16_t*>(scratch + planes_bytes_);
    const size_t image_size = channels_ * height_ * width_;
    const size_t blocks = divide_round_up(rows_, block_channels_);
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const int8_t* codes = input + image * image_size;
      pool.parallel_for(channels_, [&](size_t channel, size_t) {
        widen_channel(codes + channel * height_ * width_, planes + channel * padded_plane_);
      });
      pool.parallel_for(pixel_panels(), [&](size_t panel, size_t) {
        pack_pixel_panel(planes, panel, panels + panel * pairs_ * mr_ * 2);
      });
      int8_t* image_output = output + image * rows_ * pixels_;
      pool.parallel_for(blocks, [&](size_t block, size_t thread) {
        uint8_t* task = pool.scratch(thread, scratch_bytes()) + shared_bytes();
        run_block(panels, bias, image_output, block, reinterpret_cast<int32_t*>(task),
                  reinterpret_cast<int32_t*>(task + sums_bytes_));
      });
    }
  }

 private:
  // Weight panels per task (64 output channels on avx2) and depth pairs per chunk: a weight
  // panel's chunk (16 KB on avx2) stays in L1 while the pixel panels' chunks come from L2. Blocks
  // of 1, 2 and 8 panels, chunks of 128 and 512 pairs or the whole depth, and the pixel panels
  // outer measured the same or slower on the 7x7 layers (within the machine's noise).
  static constexpr size_t kBlockPanels = 4;
  static constexpr size_t kDepthChunk = 256;

  size_t pixel_panels() const { return divide_round_up(pixels_, mr_); }
  size_t shared_bytes() const { return planes_bytes_ + panels_bytes_; }

  // Per output channel, the largest |bias| with which its sums requantize in float
  // (RequantizeRow::in_float), as convolution_gemm.cc computes it.
  void set_bias_limits(const int8_t* weights) {
    bias_limits_ =
        float_requantization_bias_limits(weights, rows_, depth_, q_.weight_zero_points.data(),
                                         q_.input_zero_point, q_.multipliers.data());
  }

  // One channel's plane as x - zx inside its border of zeros.
  void widen_channel(const int8_t* plane, int16_t* out) const {
    std::fill(out, out + padded_plane_, int16_t{0});
    const int32_t zero_point = q_.input_zero_point;
    for (size_t y = 0; y < height_; ++y) {
      const int8_t* row = plane + y * width_;
      int16_t* out_row = out + (y + pad_top_) * padded_width_ + pad_left_;
      for (size_t x = 0; x < width_; ++x) {
        out_row[x] = static_cast<int16_t>(int32_t{row[x]} - zero_point);
      }
    }
  }

  // Pixels [panel x MR, +MR) of the im2col as the tile's A: pair p, pixel r at
  // out[(p * MR + r) * 2 + k % 2]; zero past the pixels and past the depth.
  void pack_pixel_panel(const int16_t* planes, size_t panel, int16_t* out) const {
    const size_t first = panel * mr_;
    const size_t pixels = std::min(mr_, pixels_ - first);
    const int32_t* pixel_offsets = pixel_offsets_.data() + first;
    const size_t full_pairs = depth_ / 2;
    for (size_t p = 0; p < full_pairs; ++p) {
      const int16_t* even = planes + depth_offsets_[2 * p];
      const int16_t* odd = planes + depth_offsets_[2 * p + 1];
      int16_t* step = out + p * mr_ * 2;
      size_t r = 0;
      for (; r < pixels; ++r) {
        step[2 * r] = even[pixel_offsets[r]];
        step[2 * r + 1] = odd[pixel_offsets[r]];
      }
      for (; r < mr_; ++r) step[2 * r] = step[2 * r + 1] = 0;
    }
    if (full_pairs < pairs_) {  // an odd depth: the last pair's second member is zero
      const int16_t* even = planes + depth_offsets_[2 * full_pairs];
      int16_t* step = out + full_pairs * mr_ * 2;
      for (size_t r = 0; r < mr_; ++r) {
        step[2 * r] = r < pixels ? even[pixel_offsets[r]] : int16_t{0};
        step[2 * r + 1] = 0;
      }
    }
  }

  // One block of output channels: the sums of every pixel, then per channel its requantized row.
  void run_block(const int16_t* panels, const int32_t* bias, int8_t* output, size_t block,
                 int32_t* sums, int32_t* row) const {
    const size_t first_channel = block * block_channels_;
    const size_t channels = std::min(block_channels_, rows_ - first_channel);
    const size_t first_panel = first_channel / nr_;
    const size_t panels_in_block = divide_round_up(channels, nr_);
    const size_t chunk = kDepthChunk;
    Int16PairTile tile{};
    tile.c_stride = block_channels_;
    tile.row_bias = nullptr;
    for (size_t pair_begin = 0; pair_begin < pairs_; pair_begin += chunk) {
      tile.depth_pairs = std::min(chunk, pairs_ - pair_begin);
      tile.accumulate = pair_begin > 0;
      auto run_tile = [&](size_t weight_panel, size_t pixel_panel) {
        const size_t channel = weight_panel * nr_;
        tile.columns = std::min(nr_, channels - channel);
        tile.rows = std::min(mr_, pixels_ - pixel_panel * mr_);
        tile.a = panels + (pixel_panel * pairs_ + pair_begin) * mr_ * 2;
        tile.b =
            packed_weights_.data() + ((first_panel + weight_panel) * pairs_ + pair_begin) * nr_ * 2;
        tile.c = sums + pixel_panel * mr_ * block_channels_ + channel;
        tile.column_bias = !tile.accumulate && bias ? bias + first_channel + channel : nullptr;
        kernels_.int16_pair_tile(tile);
      };
      for (size_t w = 0; w < panels_in_block; ++w) {
        for (size_t p = 0; p < pixel_panels(); ++p) run_tile(w, p);
      }
    }

    const bool in_float = requantizes_in_float(bias_limits_.data() + first_channel,
                                               bias ? bias + first_channel : nullptr, channels);
    for (size_t j = 0; j < channels; ++j) {
      for (size_t pixel = 0; pixel < pixels_; ++pixel)
        row[pixel] = sums[pixel * block_channels_ + j];
      const size_t channel = first_channel + j;
      RequantizeRow requantize = requantize_row_of(q_, channel, false, small_multipliers_, row,
                                                   pixels_, output + channel * pixels_);
      requantize.in_float = in_float;
      requantize_int8_row(kernels_, q_, channel, requantize);
    }
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization q_;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t block_channels_ = 0;
  size_t height_ = 0;
  size_t width_ = 0;
  size_t channels_ = 0;
  size_t rows_ = 0;
  size_t pixels_ = 0;
  size_t pad_top_ = 0;
  size_t pad_left_ = 0;
  size_t padded_height_ = 0;
  size_t padded_width_ = 0;
  size_t padded_plane_ = 0;
  size_t depth_ = 0;
  size_t pairs_ = 0;
  size_t weight_panels_ = 0;
  std::vector<int32_t> depth_offsets_;  // per depth k, its tap of its channel's padded plane
  std::vector<int32_t> pixel_offsets_;  // per output pixel, its top-left input in the plane
  std::vector<int16_t, LargeAllocator<int16_t>> packed_weights_;
  std::vector<int64_t> bias_limits_;
  bool small_multipliers_ = false;
  size_t planes_bytes_ = 0;
  size_t panels_bytes_ = 0;
  size_t sums_bytes_ = 0;
  size_t row_bytes_ = 0;
  char algorithm_[64];
};

}  // namespace

bool int8_lane_convolution_preferred(const Conv2DShape& shape) {
  const reference::Window2D& window = shape.window;
  // Measured against the avx2 im2col GEMM on Zen 3 (bench_kernels --int8-lanes-vs-gemm at one
  // and two threads, and resnet18 / resnet50 int8 per layer; docs/cpu-kernels.md "Session 10"):
  // 7x7 outputs of 3x3 windows ran 0.67-0.86x its time (3x3 512->512; 3x3/2 256->512 and
  // 512->512 from 14x14, whose GEMM gathers a strided im2col), and so did a deep strided 1x1
  // (1x1/2 1024->2048 from 14x14: 0.73-0.86x). Not taken: 1x1/2 256->512 (0.92-1.03x), stride-1
  // pointwise layers at 7x7 (2048->512 and 512->2048: 0.92-1.03x; the GEMM packs their B as
  // plain rows, and its last panel of one pixel runs on one vector of 8, so its lanes are 88%
  // full against the lanes' 91%), and 14x14 outputs (3x3 256->256 1.01-1.06x, 1x1 256<->1024
  // 1.19-1.29x, 3x3/2 128->256 0.88-1.04x: 196 pixels fill 96% of the GEMM's lanes).
  const int64_t pixels = window.output_height * window.output_width;
  const bool pointwise = window.kernel_height == 1 && window.kernel_width == 1;
  const bool strided = window.stride_height > 1 || window.stride_width > 1;
  if (pixels > 7 * 7) return false;
  return !pointwise || (strided && shape.input_channels >= 512);
}

std::unique_ptr<Conv2DInt8> make_int8_lane_conv2d(const MicroKernels& kernels,
                                                  const Conv2DShape& shape,
                                                  const Int8Requantization& requantization,
                                                  const int8_t* constant_weights) {
  const reference::Window2D& window = shape.window;
  if (!constant_weights || shape.groups != 1 || !kernels.int16_pair_tile) return nullptr;
  if (!lane_window_readable(window)) return nullptr;
  if (!int16_pair_offsets_fit(requantization.input_zero_point, requantization.weight_zero_points)) {
    return nullptr;
  }
  // The packing's offsets (channel planes and taps) are int32.
  const int64_t padded_plane = lane_padded_plane(window);
  if (padded_plane * shape.input_channels >= (int64_t{1} << 30)) return nullptr;
  return std::make_unique<Int8LaneConvolution>(kernels, shape, requantization, constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
