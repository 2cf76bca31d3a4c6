// Direct float convolution: an implicit GEMM in NCHW that reads B straight from the input
// instead of gathering im2col rows (docs/cpu-kernels.md, "Session 6: a float32 convolution
// without im2col").
//
// Output pixels are numbered row after row, p = oy * output_width + ox, and taken 32 at a time
// (a block may cross output rows, so 7x7 and 14x14 planes fill the lanes too). When the input
// plane has the output's width, the im2col row of tap (ky, kx) and channel c is the plane read at
// a constant offset from p: lane j of the block starting at p0 reads
//   plane_c[p0 + j + (ky * dilation - pad_top) * width + (kx * dilation - pad_left)]
// where the pixel exists, and zero where it is padding (a lane mask per tap and block, computed
// once per block and fixed across the channel loop, because the packed weights' depth runs tap
// by tap: k = tap * channels + c). A stride s > 1 convolution reads s x s phase planes instead
// (phase (py, px) holds input[y * s + py][x * s + px]; one de-interleave pass per run): tap
// (ky, kx) reads phase ((ky * d - pad) mod s, ...) at a row and column offset of
// floor((ky * d - pad) / s), ..., and the phase planes have the output's width when
// output_width == ceil(input_width / s), which "same"-padded layers satisfy. The phase planes
// hold zeros where their input does not exist (a last row or column of an odd-sized input), so
// a lane mask depends only on the plane offset a tap reads at: the taps of every phase that read
// at the same offset, when their planes follow each other, are one run of planes (a 6x6/2 stem
// on 3 channels is 9 runs of 12 planes instead of 36 taps of 3: the tile's depth loop and the
// block's masks are per run).
//
// Per task (a block of output channels x a range of pixels), in passes of rows whose packed
// weights fit half of L2: for each block of 32 pixels, for each chunk of input channels (its
// input lines stay in L1 while every row group of 12 output channels reads them), every row
// group's tile; the output is accumulated over the chunks with bias and activation fused into
// the first and the last.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;

// The tile's shape (micro_kernels.h DirectFloatTile): rows of A per depth step, lanes of a
// pixel block (one bit each in a uint32_t mask).
constexpr size_t kTileRows = 12;
constexpr size_t kTileColumns = 32;

int64_t floor_divide(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return quotient * divisor > value ? quotient - 1 : quotient;
}

// Input channels per depth chunk: about 256 depth steps of taps x channels, so that a chunk's
// input lines for one pixel block (for a 3x3 kernel, 28 channels x 3 rows of 32-34 floats) stay
// in L1 while every row group reads them.
size_t chunk_channels(size_t channels, size_t taps) {
  return std::clamp<size_t>(256 / taps, 1, channels);
}

// How far ahead the first row group's tile prefetches B (floats: four pixel blocks). The
// planes' pixel blocks come from L2 or memory with no stream a hardware prefetcher follows;
// without it 1x1 layers ran 20-45% slower (1x1 64->64 @56 73 -> 89-99 GFLOPS, 144->24 @56
// 62 -> 81-106, distances of 32-128 floats).
constexpr size_t kPrefetchDistance = 128;

// Planes of a multiple of this many floats (1 KB) alias in L1 (DirectConvolution's constructor).
constexpr size_t kAliasingPlane = 256;

// The smallest stride of at least `plane` floats that is an odd multiple of 32 floats (128
// bytes): successive planes then start 2 x odd cache lines apart modulo 4 KB, which steps
// through 32 of the 64 L1 sets before it repeats.
size_t spaced_plane_stride(size_t plane) {
  return plane + (32 + 64 - plane % 64) % 64;
}

// A run of consecutive input planes read at one offset: one kernel tap's channels, or (strided
// layers of few channels) the taps of several phases whose planes follow each other.
struct Tap {
  size_t phase;         // the first phase plane it reads
  size_t phase_count;   // phases, each with all the chunk's channels, one after the other
  size_t kernel_taps;   // where its kernel taps (ky * kernel_width + kx, one per phase) start
  ptrdiff_t offset;     // from a pixel's number to its input in the first plane
  size_t row_index;     // into row_offsets_: plane row = output row + that offset
  size_t column_index;  // into column_offsets_
};

// Lanes first .. first + count - 1 of a pixel block (count >= 1).
uint32_t lane_bits(size_t first, size_t count) {
  const uint32_t low = count >= kTileColumns ? ~0u : (1u << count) - 1u;
  return low << first;
}

// The index of value in values, appended when new.
size_t index_of(std::vector<int64_t>& values, int64_t value) {
  const auto found = std::find(values.begin(), values.end(), value);
  if (found != values.end()) return static_cast<size_t>(found - values.begin());
  values.push_back(value);
  return values.size() - 1;
}

class DirectConvolution final : public Conv2DFloat {
 public:
  DirectConvolution(const char* variant, DirectFloatTileFunction tile, const Conv2DShape& shape,
                    const FusedActivation& activation, const float* weights,
                    RegionEpilogue epilogue)
      : tile_(tile), shape_(shape), epilogue_(epilogue) {
    const reference::Window2D& window = shape.window;
    height_ = static_cast<size_t>(window.input_height);
    width_ = static_cast<size_t>(window.input_width);
    stride_height_ = static_cast<size_t>(window.stride_height);
    stride_width_ = static_cast<size_t>(window.stride_width);
    output_width_ = static_cast<size_t>(window.output_width);
    kernel_height_ = static_cast<size_t>(window.kernel_height);
    kernel_width_ = static_cast<size_t>(window.kernel_width);
    pixels_ = static_cast<size_t>(window.output_height) * output_width_;
    channels_ = static_cast<size_t>(shape.input_channels);
    rows_ = static_cast<size_t>(shape.output_channels);
    phased_ = stride_height_ > 1 || stride_width_ > 1;
    phase_height_ = divide_round_up(height_, stride_height_);
    phase_width_ = divide_round_up(width_, stride_width_);  // == output_width_ (factory)
    // Planes a multiple of 1 KB apart put every channel's block at one of at most four offsets
    // within 4 KB, so the 28 channels a chunk reads at one tap share a few L1 sets and evict each
    // other (160x160 planes: all in the same sets). The phase planes are spaced so that channels
    // fall 32 sets apart instead, and so are copies of the input planes of such sizes for
    // kernels larger than 1x1 (a pointwise layer does too little per input element to pay for
    // the copy: 1x1 128->64 @80 ran 1.17x slower with it).
    const size_t plane = phase_height_ * phase_width_;
    copied_ = !phased_ && plane % kAliasingPlane == 0 && kernel_height_ * kernel_width_ > 1;
    channel_stride_ = phased_ || copied_ ? spaced_plane_stride(plane) : plane;

    kernel_tap_count_ = kernel_height_ * kernel_width_;
    chunk_channels_ = chunk_channels(channels_, kernel_tap_count_);
    make_taps(window);
    pack_weights(weights);
    activation_ = to_float_activation(activation);
    has_activation_ = activation.kind != FusedActivation::Kind::kNone;
    limits_ = float_convolution_limits(cpu_cache_sizes(), kTileRows, kTileColumns);
    const size_t row_bytes = channels_ * taps_.size() * sizeof(float);
    pass_rows_ =
        std::max(kTileRows, cpu_cache_sizes().level2 / 2 / row_bytes / kTileRows * kTileRows);
    // A task gathers nothing: splitting rows costs only re-reading the input lines. Splitting
    // columns costs more than it looks: every column block streams all of its rows' weights,
    // from L3 once they outgrow L2. With the default row cost, resnet's 512 x 49-pixel layers
    // were cut into a 32- and a 17-pixel block at two threads, each streaming 9.4 MB of
    // weights and one doing twice the other's work; halving the rows instead took 30% off
    // those layers' two-thread time (session 7). Re-reading the input lines is not free either:
    // at a column cost of 1, resnet50's 1x1 256->64 @56 (3.2 MB of input, 64 KB of weights)
    // split its rows 36 + 28 and each thread read all of the input, mostly from L3; at 4 it
    // splits the pixels and ran in 0.8x the time at two threads in the model (session 19).
    limits_.column_cost = 4;
    limits_.row_cost = 16;

    task_bytes_ = align_bytes(2 * taps_.size() * sizeof(const float*)) +
                  align_bytes((taps_.size() + row_offsets_.size() + column_offsets_.size()) *
                              sizeof(uint32_t));
    phase_bytes_ =
        phased_ || copied_ ? phase_rows_.size() * channels_ * channel_stride_ * sizeof(float) : 0;
    choose_bands(cpu_cache_sizes());
    std::snprintf(algorithm_, sizeof(algorithm_), "%s direct %zux%zu%s", variant, kTileRows,
                  kTileColumns,
                  band_rows_ != 0 ? " phases in bands"
                  : phased_       ? " phases"
                  : copied_       ? " spaced planes"
                                  : "");
  }

  // Every thread's mask and address tables; the phase planes live after thread 0's, or every
  // thread's band of them after its tables.
  size_t scratch_bytes() const override {
    return task_bytes_ + (band_rows_ != 0 ? band_bytes_ : phase_bytes_);
  }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float*, const float* bias, float* output,
           ThreadPool& pool) const override {
    const OutputBlocks blocks = choose_output_blocks(rows_, pixels_, 1, pool.thread_count(),
                                                     kTileRows, kTileColumns, limits_);
    const size_t image_size = channels_ * height_ * width_;
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const float* planes = input + image * image_size;
      float* image_output = output + image * rows_ * pixels_;
      if (band_rows_ != 0) {
        run_bands(planes, bias, image_output, pool);
        continue;
      }
      if (phased_ || copied_) {
        auto* phases = reinterpret_cast<float*>(pool.scratch(0, scratch_bytes()) + task_bytes_);
        const size_t plane = height_ * width_;
        pool.parallel_for(channels_, [&](size_t channel, size_t) {
          if (copied_) {
            std::copy(planes + channel * plane, planes + (channel + 1) * plane,
                      phases + channel * channel_stride_);
          } else {
            split_channel(planes + channel * plane, phases + channel * channel_stride_,
                          channels_ * channel_stride_, 0, phase_height_);
          }
        });
        planes = phases;
      }
      const PlaneView view{planes, channel_stride_, 0};
      pool.parallel_for(block_task_count(1, blocks), [&](size_t task, size_t thread) {
        const BlockTask block = block_task(task, blocks);
        run_block(view, bias, image_output, block.first_row,
                  std::min(blocks.row_block, rows_ - std::min(rows_, block.first_row)),
                  block.first_column,
                  std::min(blocks.column_block, pixels_ - std::min(pixels_, block.first_column)),
                  pool.scratch(thread, task_bytes_));
      });
    }
  }

 private:
  // Where run_pass reads the input: pixel p's input for a tap of phase f and channel c is at
  // planes + f * channels * channel_stride + c * channel_stride + p - pixel_shift + tap offset
  // (pixel_shift: 0 for whole planes, a band's first phase row times the plane width).
  struct PlaneView {
    const float* planes;
    size_t channel_stride;
    size_t pixel_shift;
  };

  // Strided layers whose input is larger than L2 and several times their weights split their
  // phase planes band by band: each task de-interleaves the phase rows of a band of output rows
  // into its own scratch and runs every output channel over them while they are in L2, where
  // whole phase planes make a second copy of the input that goes out to L3 or memory and is
  // read back (yolov5s's 3x3/2 32->64 from 320x320: 13 MB). Bands hold as many output rows as
  // half of L2 takes with their halo of phase rows; each task reads all of the weights, hence
  // the bound on them.
  void choose_bands(const CpuCacheSizes& caches) {
    constexpr size_t kInputToWeights = 4;
    const size_t input_bytes = channels_ * height_ * width_ * sizeof(float);
    const size_t weight_bytes = packed_weights_.size() * sizeof(float);
    if (!phased_ || input_bytes <= caches.level2 || input_bytes < kInputToWeights * weight_bytes) {
      return;
    }
    const auto [low, high] = std::minmax_element(row_offsets_.begin(), row_offsets_.end());
    const auto halo = static_cast<size_t>(*high - *low);
    const size_t phase_row_bytes = phase_rows_.size() * channels_ * phase_width_ * sizeof(float);
    const size_t fitting = caches.level2 / 2 / phase_row_bytes;
    // A band must cover its halo twice over, or the copies' overlap costs more than L2 saves.
    if (fitting < 3 * halo + 1) return;
    lowest_row_offset_ = *low;
    highest_row_offset_ = *high;
    const size_t output_height = pixels_ / output_width_;
    band_rows_ = std::min(fitting - halo, output_height);
    band_channel_stride_ = spaced_plane_stride((band_rows_ + halo) * phase_width_);
    band_bytes_ = phase_rows_.size() * channels_ * band_channel_stride_ * sizeof(float);
  }

  // Bands of whole output rows, at most band_rows_ each and their count a multiple of the
  // threads, claimed one by one.
  void run_bands(const float* planes, const float* bias, float* output, ThreadPool& pool) const {
    const size_t output_height = pixels_ / output_width_;
    const size_t bands = std::min(
        output_height, round_up(divide_round_up(output_height, band_rows_), pool.thread_count()));
    const size_t plane = height_ * width_;
    pool.parallel_for(bands, [&](size_t band, size_t thread) {
      const size_t first_row = band * output_height / bands;
      const size_t end_row = (band + 1) * output_height / bands;
      if (first_row == end_row) return;
      // The phase rows the band's taps read: output row + row offset, inside the planes.
      const auto band_phase_row = [&](size_t row, int64_t offset) {
        return static_cast<size_t>(std::clamp<int64_t>(static_cast<int64_t>(row) + offset, 0,
                                                       static_cast<int64_t>(phase_height_)));
      };
      const size_t first_phase_row = band_phase_row(first_row, lowest_row_offset_);
      const size_t end_phase_row = band_phase_row(end_row, highest_row_offset_);
      uint8_t* scratch = pool.scratch(thread, scratch_bytes());
      auto* phases = reinterpret_cast<float*>(scratch + task_bytes_);
      for (size_t channel = 0; channel < channels_; ++channel) {
        split_channel(planes + channel * plane, phases + channel * band_channel_stride_,
                      channels_ * band_channel_stride_, first_phase_row, end_phase_row);
      }
      const PlaneView view{phases, band_channel_stride_, first_phase_row * phase_width_};
      run_block(view, bias, output, 0, rows_, first_row * output_width_,
                (end_row - first_row) * output_width_, scratch);
    });
  }

  // The kernel taps as runs of planes (Tap), the phase planes they read (only those are
  // de-interleaved, numbered row-major so that phases next to each other in a row follow each
  // other) and the distinct plane offsets the lane masks are computed for.
  void make_taps(const reference::Window2D& window) {
    struct KernelTap {
      size_t phase;
      int64_t phase_row, phase_column;  // offsets in the (phase) plane
    };
    std::vector<KernelTap> kernel_taps;
    std::vector<bool> used(stride_height_ * stride_width_, false);
    for (int64_t ky = 0; ky < window.kernel_height; ++ky) {
      for (int64_t kx = 0; kx < window.kernel_width; ++kx) {
        const int64_t row_offset = ky * window.dilation_height - window.pad_top;
        const int64_t column_offset = kx * window.dilation_width - window.pad_left;
        KernelTap tap;
        tap.phase_row = floor_divide(row_offset, window.stride_height);
        tap.phase_column = floor_divide(column_offset, window.stride_width);
        const auto py = static_cast<size_t>(row_offset - tap.phase_row * window.stride_height);
        const auto px = static_cast<size_t>(column_offset - tap.phase_column * window.stride_width);
        tap.phase = py * stride_width_ + px;
        used[tap.phase] = true;
        kernel_taps.push_back(tap);
      }
    }
    std::vector<size_t> phase_number(used.size(), SIZE_MAX);
    for (size_t phase = 0; phase < used.size(); ++phase) {
      if (!used[phase]) continue;
      phase_number[phase] = phase_rows_.size();
      phase_rows_.push_back(phase / stride_width_);
      phase_columns_.push_back(phase % stride_width_);
    }
    // Runs of several phases need every channel in one chunk (the planes of a phase's channels,
    // then the next phase's, follow each other only whole).
    const bool runs_of_phases = phased_ && chunk_channels_ == channels_;
    std::vector<bool> taken(kernel_taps.size(), false);
    for (size_t first = 0; first < kernel_taps.size(); ++first) {
      if (taken[first]) continue;
      const KernelTap& base = kernel_taps[first];
      Tap tap;
      tap.phase = phase_number[base.phase];
      tap.phase_count = 0;
      tap.kernel_taps = tap_kernel_taps_.size();
      tap.offset = static_cast<ptrdiff_t>(base.phase_row * static_cast<int64_t>(phase_width_) +
                                          base.phase_column);
      tap.row_index = index_of(row_offsets_, base.phase_row);
      tap.column_index = index_of(column_offsets_, base.phase_column);
      // Extend with the kernel taps that read the next phase plane at the same offset.
      for (size_t next = first; next < kernel_taps.size();) {
        taken[next] = true;
        tap_kernel_taps_.push_back(next);
        ++tap.phase_count;
        const size_t wanted = tap.phase + tap.phase_count;
        next = kernel_taps.size();
        if (!runs_of_phases) break;
        for (size_t other = first + 1; other < kernel_taps.size(); ++other) {
          const KernelTap& candidate = kernel_taps[other];
          if (!taken[other] && phase_number[candidate.phase] == wanted &&
              candidate.phase_row == base.phase_row &&
              candidate.phase_column == base.phase_column) {
            next = other;
            break;
          }
        }
      }
      taps_.push_back(tap);
    }
    grouped_ = taps_.size() < kernel_taps.size();
    for (const Tap& tap : taps_) tap_steps_.push_back(tap.phase_count * chunk_channels_);
  }

  // Weights [M][C][kh][kw] -> per group of 12 output channels and chunk of input channels,
  // [tap][phase][channel][12] (rows past M are zero).
  void pack_weights(const float* weights) {
    const size_t depth = channels_ * kernel_tap_count_;
    const size_t row_groups = divide_round_up(rows_, kTileRows);
    packed_weights_.assign(row_groups * depth * kTileRows, 0.0f);
    for (size_t group = 0; group < row_groups; ++group) {
      float* out = packed_weights_.data() + group * depth * kTileRows;
      for (size_t first = 0; first < channels_; first += chunk_channels_) {
        const size_t count = std::min(chunk_channels_, channels_ - first);
        for (const Tap& tap : taps_) {
          for (size_t phase = 0; phase < tap.phase_count; ++phase) {
            const size_t kernel_tap = tap_kernel_taps_[tap.kernel_taps + phase];
            for (size_t c = first; c < first + count; ++c) {
              for (size_t r = 0; r < kTileRows; ++r) {
                const size_t row = group * kTileRows + r;
                if (row < rows_) {
                  out[r] = weights[(row * channels_ + c) * kernel_tap_count_ + kernel_tap];
                }
              }
              out += kTileRows;
            }
          }
        }
      }
    }
  }

  // Phase rows [first_row, end_row) of one channel's phase planes: phase (py, px) at out +
  // phase * phase_stride holds plane[y * sh + py][x * sw + px] at [y - first_row][x] where that
  // input exists, and zero where it does not (the last row or column of a phase when the input's
  // size is not a multiple of the stride: a run of phases shares one lane mask). Each input row
  // is read once, for all the phases it feeds.
  void split_channel(const float* plane, float* out, size_t phase_stride, size_t first_row,
                     size_t end_row) const {
    const size_t end_input_row = std::min(height_, end_row * stride_height_);
    for (size_t iy = first_row * stride_height_; iy < end_input_row; ++iy) {
      const float* row = plane + iy * width_;
      const size_t y = iy / stride_height_ - first_row;
      for (size_t phase = 0; phase < phase_rows_.size(); ++phase) {
        if (phase_rows_[phase] != iy % stride_height_) continue;
        const size_t px = phase_columns_[phase];
        float* out_row = out + phase * phase_stride + y * phase_width_;
        const size_t count = divide_round_up(width_ - std::min(width_, px), stride_width_);
        if (stride_width_ == 2) {
          for (size_t x = 0; x < count; ++x) out_row[x] = row[2 * x + px];
        } else {
          for (size_t x = 0; x < count; ++x) out_row[x] = row[x * stride_width_ + px];
        }
        std::fill(out_row + count, out_row + phase_width_, 0.0f);
      }
    }
    for (size_t phase = 0; phase < phase_rows_.size(); ++phase) {
      const size_t rows =
          divide_round_up(height_ - std::min(height_, phase_rows_[phase]), stride_height_);
      const size_t first_empty = std::clamp(rows, first_row, end_row);
      float* plane_out = out + phase * phase_stride;
      std::fill(plane_out + (first_empty - first_row) * phase_width_,
                plane_out + (end_row - first_row) * phase_width_, 0.0f);
    }
  }

  // The lane masks of the taps for the block of `columns` pixels from first_pixel: bit j of
  // masks[tap] says whether pixel first_pixel + j reads inside the (phase) plane there. A tap's
  // mask is its plane row offset's and its column offset's, and those are computed per segment
  // of the block in one output row (a range of lanes each), not per lane: the per-lane tests
  // were 9% of a 6x6/2 stem's time.
  void block_masks(size_t first_pixel, size_t columns, uint32_t* row_masks, uint32_t* column_masks,
                   uint32_t* masks) const {
    std::fill(row_masks, row_masks + row_offsets_.size(), 0u);
    std::fill(column_masks, column_masks + column_offsets_.size(), 0u);
    const auto plane_height = static_cast<int64_t>(phase_height_);
    const auto plane_width = static_cast<int64_t>(phase_width_);
    auto oy = static_cast<int64_t>(first_pixel / output_width_);
    auto ox = static_cast<int64_t>(first_pixel % output_width_);
    for (size_t lane = 0; lane < columns; ++oy, ox = 0) {
      const size_t count = std::min(columns - lane, output_width_ - static_cast<size_t>(ox));
      const uint32_t lanes = lane_bits(lane, count);
      for (size_t i = 0; i < row_offsets_.size(); ++i) {
        const int64_t y = oy + row_offsets_[i];
        if (y >= 0 && y < plane_height) row_masks[i] |= lanes;
      }
      for (size_t i = 0; i < column_offsets_.size(); ++i) {
        // Output columns ox .. ox + count - 1 read plane columns from ox + offset.
        const int64_t begin = std::max(ox, -column_offsets_[i]);
        const int64_t end =
            std::min(ox + static_cast<int64_t>(count), plane_width - column_offsets_[i]);
        if (begin < end) {
          column_masks[i] |=
              lane_bits(lane + static_cast<size_t>(begin - ox), static_cast<size_t>(end - begin));
        }
      }
      lane += count;
    }
    for (size_t t = 0; t < taps_.size(); ++t) {
      masks[t] = row_masks[taps_[t].row_index] & column_masks[taps_[t].column_index];
    }
  }

  // A task's rows in passes whose packed weights fit half of L2: every pixel block reads all of
  // a pass's weights, which must not come from L3 or memory again for each block (3x3
  // 512->512 @7: 9.4 MB of weights, read once per pixel block without passes). The epilogue
  // follows each pass over its output, still in L2.
  void run_block(const PlaneView& view, const float* bias, float* output, size_t first_row,
                 size_t rows, size_t first_pixel, size_t pixels, uint8_t* scratch) const {
    for (size_t row = first_row; row < first_row + rows; row += pass_rows_) {
      const size_t pass_rows = std::min(pass_rows_, first_row + rows - row);
      run_pass(view, bias, output, row, pass_rows, first_pixel, pixels, scratch);
      if (epilogue_)
        epilogue_.apply(output + row * pixels_ + first_pixel, pass_rows, pixels, pixels_);
    }
  }

  void run_pass(const PlaneView& view, const float* bias, float* output, size_t first_row,
                size_t rows, size_t first_pixel, size_t pixels, uint8_t* scratch) const {
    if (rows == 0 || pixels == 0) return;
    const size_t taps = taps_.size();
    auto* inputs = reinterpret_cast<const float**>(scratch);
    const float** chunk_inputs = inputs + taps;
    auto* masks =
        reinterpret_cast<uint32_t*>(scratch + align_bytes(2 * taps * sizeof(const float*)));
    uint32_t* row_masks = masks + taps;
    uint32_t* column_masks = row_masks + row_offsets_.size();
    const size_t phase_stride = channels_ * view.channel_stride;

    DirectFloatTile tile{};
    tile.taps = taps;
    tile.inputs = chunk_inputs;
    tile.masks = masks;
    tile.tap_channels = grouped_ ? tap_steps_.data() : nullptr;
    tile.channel_stride = view.channel_stride;
    tile.c_stride = pixels_;
    for (size_t block = first_pixel; block < first_pixel + pixels; block += kTileColumns) {
      tile.columns = std::min(kTileColumns, first_pixel + pixels - block);
      block_masks(block, tile.columns, row_masks, column_masks, masks);
      for (size_t t = 0; t < taps; ++t) {
        const Tap& tap = taps_[t];
        // Lanes outside the plane are masked out; the address is only ever offset from.
        inputs[t] = view.planes + tap.phase * phase_stride +
                    (static_cast<ptrdiff_t>(block) - static_cast<ptrdiff_t>(view.pixel_shift)) +
                    tap.offset;
      }
      for (size_t first = 0; first < channels_; first += chunk_channels_) {
        tile.channels = std::min(chunk_channels_, channels_ - first);
        for (size_t t = 0; t < taps; ++t) {
          chunk_inputs[t] = inputs[t] + first * view.channel_stride;
        }
        tile.accumulate = first > 0;
        const bool last = first + tile.channels == channels_;
        tile.activation = last && has_activation_ ? &activation_ : nullptr;
        for (size_t row = first_row; row < first_row + rows; row += kTileRows) {
          tile.rows = std::min(kTileRows, first_row + rows - row);
          tile.a = packed_weights_.data() +
                   (row / kTileRows * channels_ + first) * kernel_tap_count_ * kTileRows;
          tile.c = output + row * pixels_ + block;
          tile.row_bias = !tile.accumulate && bias ? bias + row : nullptr;
          tile.prefetch_distance = row == first_row ? kPrefetchDistance : 0;
          tile_(tile);
        }
      }
    }
  }

  const DirectFloatTileFunction tile_;
  const Conv2DShape shape_;
  const RegionEpilogue epilogue_;
  size_t height_ = 0;
  size_t width_ = 0;
  size_t stride_height_ = 1;
  size_t stride_width_ = 1;
  size_t output_width_ = 0;
  size_t kernel_height_ = 1;
  size_t kernel_width_ = 1;
  size_t pixels_ = 0;
  size_t channels_ = 0;
  size_t rows_ = 0;
  bool phased_ = false;
  bool copied_ = false;  // stride 1, the input planes copied at a spaced stride
  size_t phase_height_ = 0;
  size_t phase_width_ = 0;
  size_t channel_stride_ = 0;
  size_t kernel_tap_count_ = 1;
  std::vector<Tap> taps_;
  std::vector<size_t> tap_kernel_taps_;  // Tap::kernel_taps indexes this
  std::vector<size_t> tap_steps_;        // per tap: depth steps (phases x channels)
  bool grouped_ = false;                 // some tap is a run of several phases
  std::vector<int64_t> row_offsets_;     // distinct plane row offsets of the taps
  std::vector<int64_t> column_offsets_;
  std::vector<size_t> phase_rows_;
  std::vector<size_t> phase_columns_;
  size_t chunk_channels_ = 1;
  size_t pass_rows_ = kTileRows;
  std::vector<float, LargeAllocator<float>> packed_weights_;
  FloatActivation activation_{};
  bool has_activation_ = false;
  BlockLimits limits_{};
  size_t task_bytes_ = 0;
  size_t phase_bytes_ = 0;
  size_t band_rows_ = 0;           // output rows per band, 0: whole phase planes (choose_bands)
  int64_t lowest_row_offset_ = 0;  // of row_offsets_, for the bands' phase rows
  int64_t highest_row_offset_ = 0;
  size_t band_channel_stride_ = 0;
  size_t band_bytes_ = 0;
  char algorithm_[64];
};

}  // namespace

bool direct_convolution_preferred(const Conv2DShape& shape) {
  const reference::Window2D& window = shape.window;
  // Strided layers read phase planes that one pass over the input writes first: with 32 or
  // more input channels the layer then ran 1.0-1.2x the GEMM's speed (3x3/2 128->128 @56,
  // 32->64 @320, 128->256 @80); a strided pointwise layer (one phase: the same copy as the GEMM's
  // im2col) ran at 0.9-0.98x and the 3-channel stems at 0.81-0.91x (7x7/2 3->64 @224, 3x3/2
  // 3->32: a tap's channel loop is 3 steps long).
  // Since session 7 a strided layer of few channels reads runs of phase planes (a 6x6/2 stem on
  // 3 channels: 9 runs of 12 planes): the 6x6/2 and 7x7/2 stems then ran 0.83-0.94x the GEMM's
  // time (with the tile's output prefetch); the 3x3/2 3->32 stem (9 taps, 5 runs) ran as fast as
  // the GEMM and stays on it.
  const bool pointwise = window.kernel_height == 1 && window.kernel_width == 1;
  if (window.stride_height != 1 || window.stride_width != 1) {
    const bool large_kernel = window.kernel_height * window.kernel_width >= 25;
    return !pointwise && (shape.input_channels / shape.groups >= 32 || large_kernel);
  }
  // Pointwise layers (interleaved runs against the GEMM, bench_kernels, thread CPU time): 7x7
  // planes ran 1.16-1.37x faster (the GEMM's 49 columns are a 32-column panel and a 17-column
  // one), and so did the deep layers with few output channels whose GEMM reads B in place
  // (256->64 @56 1.10-1.46, 144->24 @56 1.09-1.39); 14x14 and 28x28 planes ran at 0.8-1.02x,
  // and short-depth ones over 56x56 planes and up slower (64->256 @56 0.67-0.8): the direct tiles
  // read every input plane a block at a time, where the GEMM's copied panels read long runs.
  // Since session 7's output prefetch, pointwise layers on planes of 80x80 and more with no more
  // outputs than inputs ran 0.54-0.95x the GEMM's time (yolov5s's 256->64 and 128->64 @80
  // 0.54-0.61, 64->32 and 32->32 @160 0.78-0.82, 64->64 @160 0.95, 32->16 @112 0.9), while more
  // outputs than inputs ran 1.02-1.12x (32->64 @160, 128->255 @80, 16->96 @112).
  if (!pointwise) return true;
  const int64_t pixels = window.output_height * window.output_width;
  const bool gemm_in_place = shape.input_channels >= 128 && shape.output_channels <= 96;
  const bool large_narrowing = pixels >= 80 * 80 && shape.output_channels <= shape.input_channels;
  return pixels <= 7 * 7 || (gemm_in_place && pixels <= 56 * 56) || large_narrowing;
}

bool avx2_direct_convolution_preferred(const Conv2DShape& shape) {
  // The avx2 tile runs the 12 x 32 tile as 6 x 16 register blocks and wins where the direct path
  // saves the most copying (3x3 layers of moderate depth on mid-sized planes); elsewhere the GEMM's
  // packed panels do (why is not established: 12 x 8 blocks and row blocks interleaved over depth
  // segments, which cut B's re-reads, were no faster). Measured on Zen 3 (bench_kernels
  // --direct-vs-gemm --variant avx2: one thread, direct / GEMM time, three runs;
  // docs/cpu-kernels.md "Session 9"): stride-1 3x3 64->64 @56 0.75-0.83, 128->128 @28 0.84-0.92,
  // 64->64 @80 0.86-0.97, 128->128 @40 0.92-0.97 (direct); 256->256 @14 0.96-1.00, 256->256 @20
  // 0.99-1.08, 512->512 @7 0.99-1.09, 32->32 @160 1.30-1.61 (GEMM). Pointwise layers: narrowing
  // deep ones on 80x80 planes won (256->64 0.85-0.87, 128->64 0.81-0.93), the rest were even or
  // lost (256->64 @56 0.96-1.04, 144->24 @56 1.07-1.19, 64->32 @160 1.38-1.64, 7x7 planes
  // 1.16-1.43). Strided layers were even or lost (3x3/2 with 64-128 inputs 0.95-1.10, 256-512
  // inputs 1.08-1.18, the 7x7/2 stem 0.85-1.01, the 6x6/2 stem 1.29-1.49; 1x1/2 256->512 @56
  // 0.91-0.95 but 1024->2048 @14 1.16-1.37) and stay on the GEMM.
  // Session 10 spaced the planes the tile reads (DirectConvolution: planes 1 KB multiples apart
  // had evicted each other in L1), which turned the large planes around (same benchmark, two
  // runs): 3x3 32->32 @160 1.72 -> 0.86-0.88, the 6x6/2 stem 3->32 @640 1.52 -> 0.89, 3x3/2
  // 32->64 @320 1.26 -> 0.94-0.97; 3x3/2 64->128 @160 (80x80 outputs) stayed even (0.98-1.01)
  // and the pointwise layers of 160x160 planes (not copied) on the GEMM.
  const reference::Window2D& window = shape.window;
  if (window.dilation_height != 1 || window.dilation_width != 1) return false;
  const int64_t pixels = window.output_height * window.output_width;
  const bool pointwise = window.kernel_height == 1 && window.kernel_width == 1;
  if (window.stride_height != 1 || window.stride_width != 1) {
    return !pointwise && pixels >= 160 * 160;
  }
  if (window.kernel_height * window.kernel_width > 9) return false;  // unmeasured
  if (pointwise) {
    return shape.input_channels >= 128 && 2 * shape.output_channels <= shape.input_channels &&
           pixels >= 80 * 80 && pixels < 160 * 160;
  }
  return shape.input_channels <= 128 && shape.output_channels <= 128 && pixels >= 28 * 28 &&
         pixels <= 160 * 160;
}

std::unique_ptr<Conv2DFloat> make_direct_conv2d(const char* variant, DirectFloatTileFunction tile,
                                                const Conv2DShape& shape,
                                                const FusedActivation& activation,
                                                const float* constant_weights,
                                                RegionEpilogue epilogue) {
  const reference::Window2D& window = shape.window;
  if (!tile || !constant_weights || shape.groups != 1) return nullptr;
  if (window.stride_height < 1 || window.stride_width < 1 || window.output_height < 1 ||
      window.output_width < 1 || window.input_height < 1 || window.input_width < 1) {
    return nullptr;
  }
  // Pixels numbered across output rows keep a constant input offset only when the (phase)
  // plane has the output's width.
  const int64_t phase_width = (window.input_width + window.stride_width - 1) / window.stride_width;
  if (phase_width != window.output_width) return nullptr;
  return std::make_unique<DirectConvolution>(variant, tile, shape, activation, constant_weights,
                                             epilogue);
}

}  // namespace orknn::kernels::cpu::optimized
