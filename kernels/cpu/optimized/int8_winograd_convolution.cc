// int8 3x3 stride-1 convolutions as Winograd F(2x2, 3x3), exact (docs/cpu-kernels.md, "Session
// 11: int8 Winograd F(2x2, 3x3)").
//
// Every 2x2 block of outputs ("tile") is computed from the 4x4 input patch d under it as
//   Y = A^T [(G' g G'^T) . (B^T d B)] A / 4
// with g the 3x3 kernel of one (output, input) channel pair, "." the element-wise product summed
// over input channels, and integer matrices
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G' = 2G = [2 0 0; 1 1 1; 1 -1 1; 0 0 2],
//   A^T = [1 1 1 0; 0 1 -1 -1]
// (Lavin's F(2, 3) with G scaled by 2 so that the transformed weights are integers; the 2 on each
// side makes every result 4 times the true sum). The 16 products per tile replace the direct
// form's 36: per tile position xi of the 4x4 transform, a GEMM of the transformed weights
// V_xi [outputs x inputs] by the transformed inputs U_xi [inputs x tiles], on the table's exact
// int16-pair tile.
//
// Why it is exact: d holds x - zx (|d| <= 255, zero for padding), so |U| <= 4 x 255, and g holds
// w - zw, so |V| <= 9 x 255: both fit int16. The GEMM sums products in int32, and the build
// refuses (returns null for) weights whose bounds on |M_xi| or |sum| could leave int32 or the
// division by 4 (4 x |sum| < 2^31); within them every M_xi and every step of the output
// transform is the exact integer, so Y / 4 is the reference's sum, and bias plus requantization
// give its bytes (the same requantize_row as the GEMM).
//
// Per image: (1) the input transform, one task per pair of input channels: four padded rows of
// a tile row at a time, widened to x - zx with even and odd columns apart (so the column
// transform reads consecutive int16), the row transform, the column transform, stored as each
// band's B panels [xi][tile panel][channel pair][16 tiles][2]; (2) per task of (band of tile
// rows, block of output channels): per xi and weight panel, the tiles of every tile panel of the
// band into M [xi][channel][tile]; then per channel the output transform, the bias and the
// requantization of the band's output rows.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::Int8Requantization;

constexpr size_t kPositions = 16;  // the 4x4 transform
constexpr int64_t kInt32Limit = (int64_t{1} << 31) - 1;

// One 3x3 kernel g (w - zw) transformed: V = G' g G'^T, row-major 4x4.
void transform_kernel(const int32_t g[9], int32_t v[kPositions]) {
  int32_t rows[4][3];  // G' g
  for (size_t j = 0; j < 3; ++j) {
    rows[0][j] = 2 * g[j];
    rows[1][j] = g[j] + g[3 + j] + g[6 + j];
    rows[2][j] = g[j] - g[3 + j] + g[6 + j];
    rows[3][j] = 2 * g[6 + j];
  }
  for (size_t i = 0; i < 4; ++i) {
    v[i * 4 + 0] = 2 * rows[i][0];
    v[i * 4 + 1] = rows[i][0] + rows[i][1] + rows[i][2];
    v[i * 4 + 2] = rows[i][0] - rows[i][1] + rows[i][2];
    v[i * 4 + 3] = 2 * rows[i][2];
  }
}

class Int8WinogradConvolution final : public Conv2DInt8 {
 public:
  Int8WinogradConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                          const Int8Requantization& q, std::vector<int16_t> transformed_weights,
                          size_t tile_rows_per_band)
      : kernels_(kernels),
        input_run_(kernels.winograd_input_run ? kernels.winograd_input_run
                                              : portable_winograd_input_run),
        output_run_(kernels.winograd_output_run ? kernels.winograd_output_run
                                                : portable_winograd_output_run),
        shape_(shape),
        q_(q),
        mr_(kernels.int16_rows),
        nr_(kernels.int16_columns),
        channels_(static_cast<size_t>(shape.input_channels)),
        rows_(static_cast<size_t>(shape.output_channels)),
        pairs_(divide_round_up(channels_, 2)),
        row_panels_(divide_round_up(rows_, mr_)) {
    const reference::Window2D& window = shape.window;
    height_ = static_cast<size_t>(window.input_height);
    width_ = static_cast<size_t>(window.input_width);
    output_height_ = static_cast<size_t>(window.output_height);
    output_width_ = static_cast<size_t>(window.output_width);
    pad_top_ = window.pad_top;
    pad_left_ = window.pad_left;
    tiles_high_ = divide_round_up(output_height_, 2);
    tiles_wide_ = divide_round_up(output_width_, 2);
    band_tile_rows_ = tile_rows_per_band;
    bands_ = divide_round_up(tiles_high_, band_tile_rows_);
    band_panels_ = divide_round_up(band_tile_rows_ * tiles_wide_, nr_);
    band_slots_ = band_panels_ * nr_;
    band_elements_ = kPositions * band_panels_ * pairs_ * nr_ * 2;
    packed_weights_.assign(transformed_weights.begin(), transformed_weights.end());

    // Output channels per task: M [16][block][band slots] int32 stays within about 128 KB of L2
    // beside the band's transformed input.
    const size_t fitting = (size_t{128} << 10) / (kPositions * band_slots_ * sizeof(int32_t) * mr_);
    block_rows_ = std::min(std::max<size_t>(fitting, 1), size_t{16}) * mr_;
    block_rows_ = std::min(block_rows_, round_up(rows_, mr_));

    small_multipliers_ =
        small_multipliers(q.multipliers.data(), q.multipliers.size(), q.output_zero_point);
    for (float multiplier : q.multipliers) {
      accumulator_limits_.push_back(float_requantization_accumulator_limit(multiplier));
    }
    // The whole image's transformed input (the band schedule needs one band's, less).
    input_bytes_ = align_bytes(bands_ * band_elements_ * sizeof(int16_t));
    // int16 of one parity of a padded row, both channels (2 x (tiles_wide_ + 1)), with the 16
    // of slack WinogradInputRun may read past the last lane, rounded to whole vectors.
    row_length_ = round_up(2 * (tiles_wide_ + 1), 16) + 16;
    // The input transform's area: two widened rows and a band's split rows (2 per padded row).
    transform_bytes_ = (2 + 2 * (2 * band_tile_rows_ + 2)) * row_length_ * sizeof(int16_t);
    // M's positions an odd number of cache lines apart: 16 streams a multiple of 4 KB apart
    // would share a few L1 sets (the output transform reads all 16 at once).
    const size_t position_lines = divide_round_up(block_rows_ * band_slots_ * sizeof(int32_t), 64);
    position_step_ = (position_lines | 1) * (64 / sizeof(int32_t));
    products_bytes_ = align_bytes(kPositions * position_step_ * sizeof(int32_t));
    sums_bytes_ = align_bytes(2 * band_tile_rows_ * 2 * tiles_wide_ * sizeof(int32_t));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 winograd F(2x2,3x3) %zux%zu",
                  kernels.name, mr_, nr_);
  }

  // Two schedules (run): with enough bands, each task is a band whose transformed input it
  // makes itself, in its own scratch, and then keeps in its L2 for every block of output
  // channels; otherwise the input transform of the whole image first (into thread 0's scratch),
  // then tasks of (band, block of output channels). The scratch serves either: the transformed
  // input (the image's, or one band's) first, then the task area: the input transform's rows,
  // or a block's products and sums.
  size_t scratch_bytes() const override {
    return input_bytes_ + align_bytes(transform_bytes_) + products_bytes_ + sums_bytes_;
  }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const size_t image_size = channels_ * height_ * width_;
    const size_t output_size = rows_ * output_height_ * output_width_;
    // Bands per thread for the band schedule: fewer leave threads idle at the end (a band is a
    // large task), and the whole-image schedule splits finer.
    const bool band_tasks = bands_ >= 3 * pool.thread_count();
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const int8_t* codes = input + image * image_size;
      int8_t* image_output = output + image * output_size;
      if (band_tasks) {
        pool.parallel_for(bands_, [&](size_t band, size_t thread) {
          uint8_t* scratch = pool.scratch(thread, scratch_bytes());
          auto* band_panels = reinterpret_cast<int16_t*>(scratch);
          uint8_t* area = scratch + input_bytes_;
          for (size_t pair = 0; pair < pairs_; ++pair) {
            transform_band_pair(codes, band, pair, reinterpret_cast<int16_t*>(area), band_panels);
          }
          for (size_t first_row = 0; first_row < rows_; first_row += block_rows_) {
            run_task(band_panels, bias, image_output, band, first_row,
                     std::min(block_rows_, rows_ - first_row), task_products(area),
                     task_sums(area));
          }
        });
        continue;
      }
      auto* transformed = reinterpret_cast<int16_t*>(pool.scratch(0, scratch_bytes()));
      pool.parallel_for(pairs_, [&](size_t pair, size_t thread) {
        auto* area =
            reinterpret_cast<int16_t*>(pool.scratch(thread, scratch_bytes()) + input_bytes_);
        for (size_t band = 0; band < bands_; ++band) {
          transform_band_pair(codes, band, pair, area, transformed + band * band_elements_);
        }
      });
      const size_t block_rows = balanced_block_rows(pool.thread_count());
      const size_t blocks = divide_round_up(rows_, block_rows);
      pool.parallel_for(bands_ * blocks, [&](size_t task, size_t thread) {
        uint8_t* area = pool.scratch(thread, scratch_bytes()) + input_bytes_;
        const size_t band = task / blocks;
        const size_t first_row = (task % blocks) * block_rows;
        run_task(transformed + band * band_elements_, bias, image_output, band, first_row,
                 std::min(block_rows, rows_ - first_row), task_products(area), task_sums(area));
      });
    }
  }

 private:
  // Output channels per task of the whole-image schedule on `threads` threads: at most
  // block_rows_ (the products' scratch), and with few bands (small planes) small enough for
  // about 4 equal tasks per thread, so that no thread waits long for the last one (7x7 planes
  // are one band).
  size_t balanced_block_rows(size_t threads) const {
    const size_t panels = divide_round_up(rows_, mr_);
    const size_t wanted = divide_round_up(4 * threads, bands_);
    const size_t blocks = std::max(divide_round_up(rows_, block_rows_), std::min(wanted, panels));
    return divide_round_up(panels, blocks) * mr_;
  }

  int32_t* task_products(uint8_t* area) const {
    return reinterpret_cast<int32_t*>(area + align_bytes(transform_bytes_));
  }
  int32_t* task_sums(uint8_t* area) const {
    return reinterpret_cast<int32_t*>(area + align_bytes(transform_bytes_) + products_bytes_);
  }
  size_t band_first_tile_row(size_t band) const { return band * band_tile_rows_; }
  size_t band_tile_rows(size_t band) const {
    return std::min(tiles_high_, band_first_tile_row(band) + band_tile_rows_) -
           band_first_tile_row(band);
  }
  size_t band_tiles(size_t band) const { return band_tile_rows(band) * tiles_wide_; }

  // Padded rows [first_row, first_row + count) of channels 2 x pair and the next as x - zx inside
  // a border of zeros (padding is the input zero point, whose offset is 0; a missing second
  // channel is zero too; padded row 0 is pad_top rows above the input), split by column parity:
  // row first_row + y, column X's two channels at
  // split[(y * 2 + X % 2) * row_length_ + (X / 2) * 2 + member]. `widened` holds one padded row
  // per channel. Whole-row loops the compiler vectorizes.
  void widen_pair(const int8_t* codes, size_t pair, size_t first_row, size_t count,
                  int16_t* widened, int16_t* split) const {
    const auto padded_columns = static_cast<int64_t>(row_length_);
    const int64_t first = std::min<int64_t>(pad_left_, padded_columns);
    const int64_t last =
        std::min<int64_t>(static_cast<int64_t>(width_) + pad_left_, padded_columns);
    const auto zero_point = static_cast<int16_t>(q_.input_zero_point);
    const size_t units = row_length_ / 2;  // column pairs (2k, 2k + 1) of a padded row
    for (size_t y = 0; y < count; ++y) {
      int16_t* even = split + 2 * y * row_length_;
      int16_t* odd = even + row_length_;
      const int64_t source_row = static_cast<int64_t>(first_row + y) - pad_top_;
      if (source_row < 0 || source_row >= static_cast<int64_t>(height_)) {
        std::fill(even, even + 2 * row_length_, int16_t{0});
        continue;
      }
      for (size_t member = 0; member < 2; ++member) {
        int16_t* out = widened + member * row_length_;
        const size_t channel = 2 * pair + member;
        std::fill(out, out + row_length_, int16_t{0});
        if (channel >= channels_) continue;
        const int8_t* source =
            codes + (channel * height_ + static_cast<size_t>(source_row)) * width_;
        for (int64_t column = first; column < last; ++column) {
          out[column] = static_cast<int16_t>(source[column - pad_left_] - zero_point);
        }
      }
      const int16_t* first_channel = widened;
      const int16_t* second_channel = widened + row_length_;
      for (size_t k = 0; k < units; ++k) {
        even[2 * k] = first_channel[2 * k];
        even[2 * k + 1] = second_channel[2 * k];
        odd[2 * k] = first_channel[2 * k + 1];
        odd[2 * k + 1] = second_channel[2 * k + 1];
      }
    }
  }

  // The input transform of one pair of input channels over one band's tile rows into its B
  // panels (`band_panels`). `area` holds widen_pair's rows and split rows.
  void transform_band_pair(const int8_t* codes, size_t band, size_t pair, int16_t* area,
                           int16_t* band_panels) const {
    const size_t first_tile_row = band_first_tile_row(band);
    const size_t tile_rows = band_tile_rows(band);
    int16_t* split = area + 2 * row_length_;
    widen_pair(codes, pair, 2 * first_tile_row, 2 * tile_rows + 2, area, split);
    const size_t panel_step = pairs_ * nr_ * 2;  // int16 from one tile panel to the next
    for (size_t tile_row = 0; tile_row < tile_rows; ++tile_row) {
      const size_t first_tile = tile_row * tiles_wide_;
      const int16_t* rows = split + 2 * (2 * tile_row) * row_length_;
      // Segments of the tile row within one tile panel.
      for (size_t begin = 0; begin < tiles_wide_;) {
        const size_t tile = first_tile + begin;
        const size_t end = std::min(tiles_wide_, begin + (nr_ - tile % nr_));
        int16_t* out = band_panels + (tile / nr_) * panel_step + pair * nr_ * 2 + (tile % nr_) * 2;
        input_run_(
            {rows + 2 * begin, row_length_, 2 * (end - begin), out, band_panels_ * panel_step});
        begin = end;
      }
    }
    // The panel's columns past the band's tiles are zero (the tile reads whole panels).
    const size_t tiles = band_tiles(band);
    if (tiles % nr_ != 0) {
      for (size_t position = 0; position < kPositions; ++position) {
        int16_t* step =
            band_panels + (position * band_panels_ + tiles / nr_) * panel_step + pair * nr_ * 2;
        std::fill(step + (tiles % nr_) * 2, step + nr_ * 2, int16_t{0});
      }
    }
  }

  // One band's tiles for output channels [first_row, + rows): M, then per channel the output
  // transform and requantization of the band's output rows.
  void run_task(const int16_t* band_panels, const int32_t* bias, int8_t* output, size_t band,
                size_t first_row, size_t rows, int32_t* products, int32_t* sums) const {
    const size_t tiles = band_tiles(band);
    const size_t panels = divide_round_up(tiles, nr_);
    const size_t weight_step = pairs_ * mr_ * 2;
    const size_t panel_step = pairs_ * nr_ * 2;
    Int16PairTile tile{};
    tile.depth_pairs = pairs_;
    tile.c_stride = band_slots_;
    tile.accumulate = false;
    for (size_t position = 0; position < kPositions; ++position) {
      for (size_t r = 0; r < rows; r += mr_) {
        tile.rows = std::min(mr_, rows - r);
        tile.a =
            packed_weights_.data() + (position * row_panels_ + (first_row + r) / mr_) * weight_step;
        for (size_t panel = 0; panel < panels; ++panel) {
          tile.columns = std::min(nr_, tiles - panel * nr_);
          tile.b = band_panels + (position * band_panels_ + panel) * panel_step;
          tile.c = products + position * position_step_ + r * band_slots_ + panel * nr_;
          kernels_.int16_pair_tile(tile);
        }
      }
    }

    const size_t first_output_row = 2 * band_first_tile_row(band);
    const size_t output_rows =
        std::min(output_height_, first_output_row + 2 * band_tile_rows_) - first_output_row;
    const size_t plane = output_height_ * output_width_;
    for (size_t r = 0; r < rows; ++r) {
      const size_t channel = first_row + r;
      const int32_t channel_bias = bias ? bias[channel] : 0;
      uint32_t largest = 0;
      transform_output(products + r * band_slots_, tiles, channel_bias, sums, &largest);
      // The float requantization path, checked on the real sums (their worst case, from the
      // weights alone, rules it out for most deep layers).
      const bool in_float = static_cast<int64_t>(largest) <= accumulator_limits_[channel];
      int8_t* destination = output + channel * plane + first_output_row * output_width_;
      const size_t sums_width = 2 * tiles_wide_;
      // Whole rows when the sums' rows are the output's; else one requantization per row.
      const bool contiguous = sums_width == output_width_;
      const size_t runs = contiguous ? 1 : output_rows;
      const size_t count = contiguous ? output_rows * output_width_ : output_width_;
      for (size_t run = 0; run < runs; ++run) {
        RequantizeRow requantize =
            requantize_row_of(q_, channel, false, small_multipliers_, sums + run * sums_width,
                              count, destination + run * output_width_);
        requantize.in_float = in_float;
        requantize_int8_row(kernels_, q_, channel, requantize);
      }
    }
  }

  // Y = A^T M A / 4 + bias of one channel's tiles of a band (m: its row of M, position xi at
  // m[xi * position_step_]) into rows of 2 x tiles_wide_ sums, a tile row per run.
  void transform_output(const int32_t* m, size_t tiles, int32_t bias, int32_t* sums,
                        uint32_t* largest) const {
    const size_t sums_width = 2 * tiles_wide_;
    for (size_t first = 0; first < tiles; first += tiles_wide_) {
      int32_t* top = sums + 2 * (first / tiles_wide_) * sums_width;
      output_run_({m + first, position_step_, tiles_wide_, bias, top, top + sums_width, largest});
    }
  }

  const MicroKernels& kernels_;
  void (*const input_run_)(const WinogradInputRun& run);
  void (*const output_run_)(const WinogradOutputRun& run);
  const Conv2DShape shape_;
  const Int8Requantization q_;
  const size_t mr_;
  const size_t nr_;
  const size_t channels_;
  const size_t rows_;
  const size_t pairs_;
  const size_t row_panels_;
  size_t height_ = 0;
  size_t width_ = 0;
  size_t output_height_ = 0;
  size_t output_width_ = 0;
  int64_t pad_top_ = 0;
  int64_t pad_left_ = 0;
  size_t tiles_high_ = 0;
  size_t tiles_wide_ = 0;
  size_t band_tile_rows_ = 0;
  size_t bands_ = 0;
  size_t band_panels_ = 0;
  size_t band_slots_ = 0;
  size_t band_elements_ = 0;
  size_t block_rows_ = 0;  // output channels per task at most
  size_t row_length_ = 0;
  // [xi][weight panel][pair][MR][2]: V_xi as the tile's A panels.
  std::vector<int16_t, LargeAllocator<int16_t>> packed_weights_;
  // Per output channel, the largest |accumulator| that requantizes in float with the
  // reference's bits (float_requantization_accumulator_limit).
  std::vector<int64_t> accumulator_limits_;
  bool small_multipliers_ = false;
  size_t input_bytes_ = 0;
  size_t transform_bytes_ = 0;
  size_t position_step_ = 0;  // int32 from one position's M to the next
  size_t products_bytes_ = 0;
  size_t sums_bytes_ = 0;
  char algorithm_[64];
};

// The transformed weights as A panels ([xi][panel][pair][MR][2]), or empty when a bound of the
// exactness argument fails for some output channel: with D = max |x - zx| and S = sum over its
// inputs and taps of |w - zw|, the true sum needs 4 x D x S < 2^31 (Y before the division), and
// every M_xi needs (4 D) x sum over inputs of |V_xi| < 2^31; and 4 D and every |V_xi| must fit
// int16 (zero points far outside int8 can break that).
std::vector<int16_t> transform_weights(const int8_t* weights, const Int8Requantization& q,
                                       size_t rows, size_t channels, size_t mr) {
  const size_t pairs = divide_round_up(channels, 2);
  const size_t panels = divide_round_up(rows, mr);
  const int64_t largest_input = largest_int8_offset(q.input_zero_point);
  // The transformed input (at most 4 x the largest |x - zx|) must fit int16.
  if (4 * largest_input > INT16_MAX) return {};
  std::vector<int16_t> packed(kPositions * panels * pairs * mr * 2, 0);
  for (size_t row = 0; row < rows; ++row) {
    int64_t tap_magnitudes = 0;
    int64_t position_magnitudes[kPositions] = {};
    int64_t largest_transformed[kPositions] = {};
    const int32_t zero_point = q.weight_zero_points[row];
    for (size_t channel = 0; channel < channels; ++channel) {
      int32_t g[9];
      for (size_t tap = 0; tap < 9; ++tap) {
        g[tap] = int32_t{weights[(row * channels + channel) * 9 + tap]} - zero_point;
        tap_magnitudes += g[tap] < 0 ? -g[tap] : g[tap];
      }
      int32_t v[kPositions];
      transform_kernel(g, v);
      const size_t pair = channel / 2;
      for (size_t position = 0; position < kPositions; ++position) {
        const int64_t magnitude = v[position] < 0 ? -v[position] : v[position];
        position_magnitudes[position] += magnitude;
        largest_transformed[position] = std::max(largest_transformed[position], magnitude);
        packed[(((position * panels + row / mr) * pairs + pair) * mr + row % mr) * 2 +
               channel % 2] = static_cast<int16_t>(v[position]);
      }
    }
    if (4 * largest_input * tap_magnitudes > kInt32Limit) return {};
    for (int64_t magnitude : largest_transformed) {
      if (magnitude > INT16_MAX) return {};
    }
    for (int64_t magnitude : position_magnitudes) {
      if (4 * largest_input * magnitude > kInt32Limit) return {};
    }
  }
  return packed;
}

// Tile rows per band: a band's transformed input ([16][panels][pairs][16][2] int16) within
// about 256 KB of L2, and of the counts that fit, the one that wastes the fewest panel columns
// over the whole plane (ties: the larger band, fewer tasks to hand out).
size_t choose_band_tile_rows(size_t tiles_high, size_t tiles_wide, size_t pairs, size_t nr) {
  const size_t budget = size_t{256} << 10;
  size_t best = 1;
  size_t best_slots = SIZE_MAX;
  for (size_t rows = 1; rows <= tiles_high; ++rows) {
    const size_t panels = divide_round_up(rows * tiles_wide, nr);
    // One panel is the least a band can hold, whatever its size.
    if (panels > 1 && kPositions * panels * pairs * nr * 2 * sizeof(int16_t) > budget) break;
    const size_t full_bands = tiles_high / rows;
    const size_t rest = tiles_high % rows;
    const size_t slots = (full_bands * panels + divide_round_up(rest * tiles_wide, nr)) * nr;
    if (slots <= best_slots) {
      best = rows;
      best_slots = slots;
    }
  }
  return best;
}

}  // namespace

bool int8_winograd_preferred(const Conv2DShape& shape) {
  // Measured against the avx2 im2col GEMM and the lanes on Zen 3 (bench_kernels --int8-vs-gemm
  // at one and two threads; docs/cpu-kernels.md "Session 11"): the 3x3 layers of 64 to 512
  // input channels ran 0.63-0.82x the GEMM's time (7x7 outputs 0.63-0.65x, where the lanes ran
  // 0.77-0.85x), 32 channels on 160x160 0.95-1.07x: with so short a depth the transforms cost
  // what the 16 products per 4 outputs save.
  return winograd_convolution_applies(shape) && shape.input_channels >= 64;
}

std::unique_ptr<Conv2DInt8> make_int8_winograd_conv2d(const MicroKernels& kernels,
                                                      const Conv2DShape& shape,
                                                      const Int8Requantization& requantization,
                                                      const int8_t* constant_weights) {
  if (!constant_weights || !kernels.int16_pair_tile || !winograd_convolution_applies(shape)) {
    return nullptr;
  }
  const auto rows = static_cast<size_t>(shape.output_channels);
  const auto channels = static_cast<size_t>(shape.input_channels);
  std::vector<int16_t> transformed =
      transform_weights(constant_weights, requantization, rows, channels, kernels.int16_rows);
  if (transformed.empty()) return nullptr;
  const size_t tiles_high = divide_round_up(static_cast<size_t>(shape.window.output_height), 2);
  const size_t tiles_wide = divide_round_up(static_cast<size_t>(shape.window.output_width), 2);
  const size_t band_rows = choose_band_tile_rows(
      tiles_high, tiles_wide, divide_round_up(channels, 2), kernels.int16_columns);
  return std::make_unique<Int8WinogradConvolution>(kernels, shape, requantization,
                                                   std::move(transformed), band_rows);
}

}  // namespace orknn::kernels::cpu::optimized
