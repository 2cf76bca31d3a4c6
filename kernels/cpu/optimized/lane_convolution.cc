// Float convolution with output channels in lanes, for small output planes (docs/cpu-kernels.md,
// "Session 8: float32 convolutions on small planes with output channels in lanes").
//
// The direct convolution (direct_convolution.cc) puts 32 output pixels in a tile's lanes, which a
// small plane does not fill: a 7x7 plane is 49 = 32 + 17 pixels, a 14x14 one 196 = 6 x 32 + 4. Here
// the lanes hold output channels (32 per tile, two vectors) and a tile's registers up to 14 output
// pixels, so the pixel count only decides how many pixels the last panel of a plane has: 7x7 is
// panels of 14, 14, 14 and 7 pixels, 14x14 fourteen panels of 14, and no lane is idle.
//
// Per image: the input planes are copied with their zero padding around them (when the layer has
// padding), and the im2col of each panel of 14 consecutive output pixels is packed as
// [depth][pixels] (depth k = channel x taps + tap, the weights' own order), once for every block
// of output channels to read. A pixel reads its (padded) plane at its own offset plus the tap's,
// the same for every channel, so the packing is one gather of the panel's offsets per channel and
// tap (micro_kernels.h LanePanelPacking). Then per block of 32 output channels (its packed weights,
// depth x 32 floats, stay in L2 while every panel reads them) every panel's tile runs the whole
// depth and writes its 32 x pixels outputs, transposed to NCHW, with bias and activation applied.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/fused_binary_rows.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;

constexpr size_t kPanelPixels = 14;    // a tile's pixels (LaneFloatTile)
constexpr size_t kBlockChannels = 32;  // a tile's output channels

class LaneConvolution final : public Conv2DFloat {
 public:
  LaneConvolution(const MicroKernels& kernels, LaneFloatTileFunction tile,
                  LanePanelPackingFunction pack, const Conv2DShape& shape,
                  const FusedActivation& activation, const float* weights)
      : kernels_(kernels), tile_(tile), pack_(pack), shape_(shape) {
    const reference::Window2D& window = shape.window;
    height_ = static_cast<size_t>(window.input_height);
    width_ = static_cast<size_t>(window.input_width);
    channels_ = static_cast<size_t>(shape.input_channels);
    rows_ = static_cast<size_t>(shape.output_channels);
    const auto output_height = static_cast<size_t>(window.output_height);
    const auto output_width = static_cast<size_t>(window.output_width);
    pixels_ = output_height * output_width;
    pad_top_ = static_cast<size_t>(window.pad_top);
    pad_left_ = static_cast<size_t>(window.pad_left);
    LanePlanes planes = lane_planes(window);
    padded_height_ = planes.height;
    padded_width_ = planes.width;
    padded_ = padded_height_ != height_ || padded_width_ != width_;
    padded_plane_ = planes.plane();
    tap_offsets_ = std::move(planes.tap_offsets);
    pixel_offsets_ = std::move(planes.pixel_offsets);
    depth_ = channels_ * tap_offsets_.size();

    pack_weights(weights);
    activation_ = to_float_activation(activation);
    has_activation_ = activation.kind != FusedActivation::Kind::kNone;
    padded_bytes_ = padded_ ? align_bytes(channels_ * padded_plane_ * sizeof(float)) : 0;
    std::snprintf(algorithm_, sizeof(algorithm_), "%s lanes %zux%zu", kernels.name, kBlockChannels,
                  kPanelPixels);
  }

  // The padded planes and the packed panels, in thread 0's scratch (every thread reads them).
  size_t scratch_bytes() const override { return padded_bytes_ + panels_bytes(); }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float*, const float* bias, float* output,
           ThreadPool& pool) const override {
    run_blocks(input, bias, nullptr, output, pool);
  }

  // A residual Add on each block of 32 output channels as it is finished (ResidualAddition).
  bool takes_residual() const override { return true; }
  void run_with_residual(const float* input, const float*, const float* bias,
                         const ResidualAddition& addition, float* output,
                         ThreadPool& pool) const override {
    run_blocks(input, bias, &addition, output, pool);
  }

 private:
  void run_blocks(const float* input, const float* bias, const ResidualAddition* addition,
                  float* output, ThreadPool& pool) const {
    const ResidualRows residual_rows(kernels_, addition, output);
    uint8_t* scratch = pool.scratch(0, scratch_bytes());
    auto* padded = reinterpret_cast<float*>(scratch);
    auto* panels = reinterpret_cast<float*>(scratch + padded_bytes_);
    const size_t image_size = channels_ * height_ * width_;
    const size_t blocks = divide_round_up(rows_, kBlockChannels);
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const float* planes = input + image * image_size;
      if (padded_) {
        pool.parallel_for(channels_, [&](size_t channel, size_t) {
          pad_channel(planes + channel * height_ * width_, padded + channel * padded_plane_);
        });
        planes = padded;
      }
      pool.parallel_for(panel_count(), [&](size_t panel, size_t) {
        pack_panel(planes, panel, panels + panel * kPanelPixels * depth_);
      });
      float* image_output = output + image * rows_ * pixels_;
      // Block after block, each over the whole depth: a block's weights stream past once, in
      // order, while the panels stay in L2 or come from L3 (where depth chunks that kept both in
      // L2 measured slower: their weights are read in pieces, and the sums go through memory).
      // One task per block, claimed dynamically: a thread that is held up leaves its blocks to
      // the other (a static split per thread ran two threads no faster than one on this shared
      // machine).
      pool.parallel_for(blocks, [&](size_t block, size_t) {
        run_block(panels, bias, image_output, block, ThreadPool::likely_next_index(block));
        // The block's channels are whole planes, one contiguous piece of the output.
        const size_t first = block * kBlockChannels;
        residual_rows.apply(image_output + first * pixels_,
                            std::min(kBlockChannels, rows_ - first) * pixels_);
      });
    }
  }

  size_t panel_count() const { return divide_round_up(pixels_, kPanelPixels); }
  size_t panels_bytes() const {
    return align_bytes(panel_count() * kPanelPixels * depth_ * sizeof(float));
  }

  // Weights [M][C][kh][kw] -> per block of 32 output channels [depth][32] (zero past M).
  void pack_weights(const float* weights) {
    const size_t blocks = divide_round_up(rows_, kBlockChannels);
    packed_weights_.assign(blocks * depth_ * kBlockChannels, 0.0f);
    for (size_t row = 0; row < rows_; ++row) {
      float* out = packed_weights_.data() + (row / kBlockChannels) * depth_ * kBlockChannels +
                   row % kBlockChannels;
      for (size_t k = 0; k < depth_; ++k) out[k * kBlockChannels] = weights[row * depth_ + k];
    }
  }

  // One channel's plane inside its zero border.
  void pad_channel(const float* plane, float* out) const {
    std::fill(out, out + padded_plane_, 0.0f);
    for (size_t y = 0; y < height_; ++y) {
      std::copy(plane + y * width_, plane + (y + 1) * width_,
                out + (y + pad_top_) * padded_width_ + pad_left_);
    }
  }

  // The panel's im2col, [depth][pixels].
  void pack_panel(const float* planes, size_t panel, float* out) const {
    LanePanelPacking packing{};
    packing.planes = planes;
    packing.channels = channels_;
    packing.plane_stride = padded_plane_;
    packing.tap_offsets = tap_offsets_.data();
    packing.taps = tap_offsets_.size();
    packing.pixel_offsets = pixel_offsets_.data() + panel * kPanelPixels;
    packing.pixels = std::min(kPanelPixels, pixels_ - panel * kPanelPixels);
    packing.out = out;
    pack_(packing);
  }

  // One block of 32 output channels over every panel. Meanwhile the panels ask the weights of
  // block `next` (the one this thread most likely runs next) into L2, a slice each: the first
  // panel reads a block's weights from memory (a 3x3 over 512 channels has 590 KB per block, a
  // layer's 9 MB are in no cache when a model reaches it), and the hardware prefetchers stop at
  // every 4 KiB page. On two threads the worker runs the blocks downward from the last, so
  // "the block after this one" was the caller's: the worker's blocks all started from memory,
  // and resnet50 / resnet18 fp32 ran 1.6% / 2-3% slower at two threads (session 23).
  void run_block(const float* panels, const float* bias, float* output, size_t block,
                 size_t next) const {
    const size_t block_floats = depth_ * kBlockChannels;
    LaneFloatTile tile{};
    tile.channels = std::min(kBlockChannels, rows_ - block * kBlockChannels);
    tile.depth = depth_;
    tile.b = packed_weights_.data() + block * block_floats;
    tile.bias = bias ? bias + block * kBlockChannels : nullptr;
    tile.activation = has_activation_ ? &activation_ : nullptr;
    tile.c_stride = pixels_;
    const size_t blocks = divide_round_up(rows_, kBlockChannels);
    const size_t panels_count = panel_count();
    const size_t slice_bytes = divide_round_up(block_floats * sizeof(float), panels_count);
    for (size_t panel = 0; panel < panels_count; ++panel) {
      const size_t first = panel * kPanelPixels;
      tile.pixels = std::min(kPanelPixels, pixels_ - first);
      tile.a = panels + first * depth_;
      tile.c = output + block * kBlockChannels * pixels_ + first;
      if (next < blocks) {
        tile.prefetch = {
            reinterpret_cast<const char*>(packed_weights_.data() + next * block_floats) +
                panel * slice_bytes,
            slice_bytes};
      }
      tile_(tile);
    }
  }

  const MicroKernels& kernels_;
  const LaneFloatTileFunction tile_;
  const LanePanelPackingFunction pack_;
  const Conv2DShape shape_;
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
  bool padded_ = false;
  size_t padded_bytes_ = 0;
  std::vector<int32_t> tap_offsets_;    // per kernel tap, from a pixel's top-left input
  std::vector<int32_t> pixel_offsets_;  // per output pixel, its top-left input in the plane
  size_t depth_ = 0;
  std::vector<float, LargeAllocator<float>> packed_weights_;
  FloatActivation activation_{};
  bool has_activation_ = false;
  char algorithm_[64];
};

}  // namespace

bool lane_convolution_preferred(const Conv2DShape& shape) {
  const reference::Window2D& window = shape.window;
  // Measured against the direct convolution and the GEMM (bench_kernels, one and two threads,
  // per-layer minima of interleaved runs; docs/cpu-kernels.md "Session 8"): 7x7 outputs ran
  // 0.87-0.92x their time (3x3 512->512, 1x1 2048->512 and 512->2048, 320->1280), the strided
  // 14 -> 7 layers 0.70-0.94x (1x1/2 1024->2048 on the GEMM's im2col, 3x3/2 512->512 and
  // 256->512 on phase planes). Not taken: a stride-1 3x3 over 14x14 (256->256: as fast as the
  // direct tiles, whose 196 pixels leave only 28 of 224 lanes idle), pointwise layers over 14x14
  // (1024->256: 1.01x at one thread, 1.11x at two; 256->1024 1.03x; resnet50's 1x1/2 512->1024
  // 1.08x in the model), 20x20 and larger planes (1.06-1.5x: yolov5s 3x3 256->256 @20, 1x1
  // 512->512 @20, resnet50 3x3 128->128 @28), and fewer than 256 output channels (mobilenet_v2's
  // 1x1 960->160 @7: 0.96x at one thread, 1.27x at two, its 5 blocks of 32 split 3 + 2).
  const int64_t pixels = window.output_height * window.output_width;
  const bool pointwise = window.kernel_height == 1 && window.kernel_width == 1;
  const bool strided = window.stride_height > 1 || window.stride_width > 1;
  if (pixels > 14 * 14 || shape.output_channels < 256) return false;
  return pixels <= 7 * 7 || (strided && !pointwise);
}

bool avx2_lane_convolution_preferred(const Conv2DShape& shape) {
  const reference::Window2D& window = shape.window;
  // Measured against the avx2 GEMM and direct convolution on Zen 3 (bench_kernels --variant
  // avx2 --direct-vs-gemm, one thread, medians of 9 interleaved runs; docs/cpu-kernels.md
  // "Session 10"): 7x7 outputs ran 0.89-0.95x the GEMM's time (the direct tiles there are
  // 1.02-1.30x the GEMM): 3x3 512->512, 1x1 2048->512, 512->2048, 320->1280, and the strided
  // 14 -> 7 layers 1x1/2 1024->2048, 3x3/2 512->512 and 256->512. Not taken: 14x14 outputs
  // (3x3 256->256 1.06x, 1x1 1024->256 1.10x, 256->1024 1.23x, 3x3/2 128->256 from 28x28
  // 1.09x; on AVX2 the tile runs the panel's pixels as 3-pixel groups over depth chunks, and a
  // 14x14 layer's 1-2 MB of panels come from L3 for every block), 20x20 and larger (1.08-1.49x),
  // and fewer than 256 output channels (mobilenet_v2's 1x1 960->160 @7, 0.94x at one thread:
  // 5 blocks of 32 split 3 + 2 on two threads, 1.27x on AVX-512, see lane_convolution_preferred),
  // nor a depth (input channels x taps) of 256 or less: resnet18's 1x1/2 256->512 14 -> 7, 1.08x
  // in bench_kernels and 1.22x in the model (194 -> 237 us; mobilenet_v2's 1x1 320->1280 @7,
  // depth 320, 0.90-0.95x). Since session 15 the GEMM runs the one-column last panel of a 7x7
  // plane as column tiles, and the lanes measured 0.98-1.03x its time on the 1x1 layers above
  // (about even; the rule is unchanged).
  const int64_t pixels = window.output_height * window.output_width;
  const int64_t depth = shape.input_channels * window.kernel_height * window.kernel_width;
  return pixels <= 7 * 7 && shape.output_channels >= 256 && depth > 256;
}

std::unique_ptr<Conv2DFloat> make_lane_conv2d(
    const MicroKernels& kernels, LaneFloatTileFunction tile, LanePanelPackingFunction pack,
    const Conv2DShape& shape, const FusedActivation& activation, const float* constant_weights) {
  const reference::Window2D& window = shape.window;
  if (!tile || !pack || !constant_weights || shape.groups != 1) return nullptr;
  if (!lane_window_readable(window)) return nullptr;
  // The packing's offsets are int32 within one padded plane.
  const int64_t padded_plane = lane_padded_plane(window);
  if (padded_plane >= (int64_t{1} << 30)) return nullptr;
  return std::make_unique<LaneConvolution>(kernels, tile, pack, shape, activation,
                                           constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
