// Float convolution of 3x3 kernels at stride 1 as Winograd F(m x m, 3x3) (docs/cpu-kernels.md,
// "Session 11"): each m x m block of outputs (a tile) is computed from its (m + 2) x (m + 2)
// input patch d as
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
// where (.) is the element-wise product of two (m + 2) x (m + 2) matrices: (m + 2)^2
// multiplications per tile and channel pair instead of 9 m^2 (m = 4: 36 instead of 144).
//
// Summed over input channels, each of the (m + 2)^2 transform positions xi is one matrix
// product: M[xi] [Cout][tiles] = U[xi] [Cout][Cin] x V[xi] [Cin][tiles], with U the transformed
// weights (packed at build as the float tile's A panels) and V the transformed input tiles
// (written per band of tile rows as a row-major B the tile reads in place). The products run on
// the table's float GEMM tile; the output transform then turns a block of output channels'
// M[.][c][t] into the NCHW output with bias and activation.
//
// The matrices come from Toom-Cook interpolation at the points of winograd_point()
// (winograd_transforms.h): derived at compile time, not written out, so every tile size is the
// same code. The transforms run on kWinogradLanes tiles at a time: the AVX2 ones passed in, or
// the plain C++ ones below.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/fused_binary_rows.h"
#include "optimized/optimized_kernels.h"
#include "optimized/tile_arithmetic.h"
#include "optimized/winograd_transforms.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;

// (Lanes pass by reference: by value they would change the ABI between SSE and AVX builds.)
inline void load_lanes(const float* source, Lanes& lanes) {
  std::memcpy(&lanes, source, sizeof(lanes));
}
inline void store_lanes(const Lanes& lanes, float* destination) {
  std::memcpy(destination, &lanes, sizeof(lanes));
}

// The plain C++ transforms (micro_kernels.h WinogradInputTiles / WinogradOutputTiles), for
// tables without their own: the patches and outputs copied in and out of lanes one element at a
// time.
template <size_t M>
void portable_winograd_input(const WinogradInputTiles& tiles) {
  constexpr size_t kAlpha = WinogradTile<M>::kAlpha;
  Lanes d[kAlpha][kAlpha];
  for (size_t lane = 0; lane < kWinogradLanes; ++lane) {
    for (size_t i = 0; i < kAlpha; ++i) {
      for (size_t j = 0; j < kAlpha; ++j)
        d[i][j][lane] = tiles.origins[lane][i * tiles.row_stride + j];
    }
  }
  Lanes v[kAlpha][kAlpha];
  WinogradTile<M>::transform_input(d, v);
  for (size_t xi = 0; xi < kAlpha * kAlpha; ++xi) {
    store_lanes(v[xi / kAlpha][xi % kAlpha], tiles.out + xi * tiles.position_stride);
  }
}

template <size_t M>
void portable_winograd_output(const WinogradOutputTiles& tiles) {
  constexpr size_t kAlpha = WinogradTile<M>::kAlpha;
  Lanes m[kAlpha][kAlpha];
  for (size_t xi = 0; xi < kAlpha * kAlpha; ++xi) {
    load_lanes(tiles.products + xi * tiles.position_stride, m[xi / kAlpha][xi % kAlpha]);
  }
  Lanes y[M][M];
  WinogradTile<M>::transform_output(m, y);
  for (size_t lane = 0; lane < kWinogradLanes; ++lane) {
    for (size_t t = 0; t < tiles.heights[lane]; ++t) {
      for (size_t u = 0; u < tiles.widths[lane]; ++u) {
        const float value = y[t][u][lane] + tiles.bias;
        tiles.out[lane][t * tiles.out_stride + u] =
            tiles.activation ? activate_float(*tiles.activation, value) : value;
      }
    }
  }
}

// One convolution's tiling: tiles of M x M outputs over a zero-bordered copy of each input
// plane that holds every patch (the last tiles may reach past the output: those outputs are
// computed and dropped).
struct TileLayout {
  size_t tiles_y = 0;
  size_t tiles_x = 0;
  size_t padded_height = 0;
  size_t padded_width = 0;
  size_t plane() const { return padded_height * padded_width; }
};

template <size_t M>
class WinogradConvolution final : public Conv2DFloat {
  using Tile = WinogradTile<M>;
  static constexpr size_t kAlpha = Tile::kAlpha;
  static constexpr size_t kPositions = kAlpha * kAlpha;

 public:
  // `transforms`: null for the plain C++ ones.
  WinogradConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                      const FusedActivation& activation, const float* weights,
                      const WinogradFloatTransforms* transforms, RegionEpilogue epilogue)
      : kernels_(kernels),
        shape_(shape),
        epilogue_(epilogue),
        input_transform_(transforms ? transforms->input : portable_winograd_input<M>),
        output_transform_(transforms ? transforms->output : portable_winograd_output<M>) {
    const reference::Window2D& window = shape.window;
    height_ = static_cast<size_t>(window.input_height);
    width_ = static_cast<size_t>(window.input_width);
    output_height_ = static_cast<size_t>(window.output_height);
    output_width_ = static_cast<size_t>(window.output_width);
    pad_top_ = static_cast<size_t>(window.pad_top);
    pad_left_ = static_cast<size_t>(window.pad_left);
    channels_ = static_cast<size_t>(shape.input_channels);
    rows_ = static_cast<size_t>(shape.output_channels);
    mr_ = kernels.float_rows;
    nr_ = kernels.float_columns;
    layout_.tiles_y = divide_round_up(output_height_, M);
    layout_.tiles_x = divide_round_up(output_width_, M);
    layout_.padded_height = layout_.tiles_y * M + kKernel - 1;
    layout_.padded_width = layout_.tiles_x * M + kKernel - 1;
    choose_blocks(cpu_cache_sizes());
    pack_weights(weights);
    activation_ = to_float_activation(activation);
    has_activation_ = activation.kind != FusedActivation::Kind::kNone;

    // (8 floats of slack: a transform may load 8 floats from a patch row's start.)
    planes_bytes_ = align_bytes((channels_ * layout_.plane() + kWinogradLanes) * sizeof(float));
    transformed_bytes_ = align_bytes(kPositions * channels_ * band_columns_ * sizeof(float));
    task_bytes_ = align_bytes(kPositions * block_rows_ * band_columns_ * sizeof(float));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s winograd F(%zux%zu,3x3) gemm %zux%zu",
                  kernels.name, M, M, mr_, nr_);
  }

  // Thread 0's scratch holds the padded planes (every thread reads them), a band's transformed
  // input and a block's products; another thread's, its own band's transformed input and block's
  // products when the bands run in parallel, else only the products (the band's transformed
  // input is thread 0's).
  size_t scratch_bytes() const override { return shared_bytes() + task_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float*, const float* bias, float* output,
           ThreadPool& pool) const override {
    run_images(input, bias, ResidualRows(kernels_, nullptr, output), output, pool);
  }

  // A residual Add on each output channel's band as the output transform finishes it.
  bool takes_residual() const override { return true; }
  void run_with_residual(const float* input, const float*, const float* bias,
                         const ResidualAddition& addition, float* output,
                         ThreadPool& pool) const override {
    run_images(input, bias, ResidualRows(kernels_, &addition, output), output, pool);
  }

 private:
  void run_images(const float* input, const float* bias, const ResidualRows& residual,
                  float* output, ThreadPool& pool) const {
    uint8_t* scratch = pool.scratch(0, scratch_bytes());
    auto* planes = reinterpret_cast<float*>(scratch);
    const size_t image_size = channels_ * height_ * width_;
    const size_t output_size = rows_ * output_height_ * output_width_;
    const size_t threads = pool.thread_count();
    const size_t natural_bands = divide_round_up(layout_.tiles_y, band_tile_rows_);
    // Bands in parallel where there are enough of them (each thread transforms its band's input
    // into its own scratch and runs every output channel over it: no barrier per band), their
    // count a multiple of the threads so they share out evenly; else one band after another,
    // each with its input transform split over the channels and its output channels over the
    // threads (a small plane: 14x14 outputs are 16 tiles of F(4x4)). One band per thread is
    // enough: resnet50's 3x3 64->64 @56 (two bands of 8 and 6 tile rows) ran in 0.8x its time
    // at two threads as two bands of 7 than one band after the other with 36 and 28 output
    // channels per thread (session 19). Splitting a single band does not pay: 128->128 @28 (7
    // tile rows) ran as fast as bands of 4 and 3 rows.
    const bool parallel_bands = threads > 1 && natural_bands >= threads;
    const size_t bands = parallel_bands ? round_up(natural_bands, threads) : natural_bands;
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const float* image_input = input + image * image_size;
      pool.parallel_for(channels_, [&](size_t channel, size_t) {
        pad_channel(image_input + channel * height_ * width_, planes + channel * layout_.plane());
      });
      float* image_output = output + image * output_size;
      if (parallel_bands) {
        pool.parallel_for(bands, [&](size_t band, size_t thread) {
          uint8_t* own = thread == 0 ? scratch + planes_bytes_
                                     : pool.scratch(thread, transformed_bytes_ + task_bytes_);
          run_band(planes, band_of(band, bands), bias, residual, reinterpret_cast<float*>(own),
                   reinterpret_cast<float*>(own + transformed_bytes_), image_output);
        });
        continue;
      }
      auto* transformed = reinterpret_cast<float*>(scratch + planes_bytes_);
      const size_t blocks = block_count(threads);
      const size_t block_rows = round_up(divide_round_up(rows_, blocks), mr_);
      for (size_t index = 0; index < bands; ++index) {
        const Band band = band_of(index, bands);
        const size_t groups = divide_round_up(band.tiles, kWinogradLanes);
        pool.parallel_for(channels_, [&](size_t channel, size_t) {
          for (size_t group = 0; group < groups; ++group) {
            transform_input_group(planes, band, channel, group, transformed);
          }
        });
        pool.parallel_for(divide_round_up(rows_, block_rows), [&](size_t block, size_t thread) {
          uint8_t* task =
              thread == 0 ? scratch + shared_bytes() : pool.scratch(thread, task_bytes_);
          const size_t first_row = block * block_rows;
          run_block(transformed, band, first_row, std::min(block_rows, rows_ - first_row), bias,
                    residual, reinterpret_cast<float*>(task), image_output);
        });
      }
    }
  }

  struct Band {
    size_t first_tile_row;
    size_t tiles;
  };

  size_t shared_bytes() const { return planes_bytes_ + transformed_bytes_; }

  // Band `index` of `count` near-equal bands of tile rows (count >= the natural band count, so
  // none is larger than band_tile_rows_).
  Band band_of(size_t index, size_t count) const {
    const size_t first = index * layout_.tiles_y / count;
    const size_t end = (index + 1) * layout_.tiles_y / count;
    return Band{first, (end - first) * layout_.tiles_x};
  }

  // Output-channel blocks of at most block_rows_ rows, at least one per thread, their count a
  // multiple of the threads (64 rows in blocks of 54 and 10 kept one of two threads idle).
  size_t block_count(size_t threads) const {
    const size_t blocks = divide_round_up(rows_, block_rows_);
    return std::min(round_up(blocks, threads), divide_round_up(rows_, mr_));
  }

  // One band on one thread: its input transform into `transformed`, then every block of output
  // channels.
  void run_band(const float* planes, const Band& band, const float* bias,
                const ResidualRows& residual, float* transformed, float* products,
                float* output) const {
    const size_t groups = divide_round_up(band.tiles, kWinogradLanes);
    for (size_t channel = 0; channel < channels_; ++channel) {
      for (size_t group = 0; group < groups; ++group) {
        transform_input_group(planes, band, channel, group, transformed);
      }
    }
    for (size_t first_row = 0; first_row < rows_; first_row += block_rows_) {
      run_block(transformed, band, first_row, std::min(block_rows_, rows_ - first_row), bias,
                residual, products, output);
    }
  }

  // Bands of tile rows whose transformed input (positions x channels x tiles floats) fits in
  // half of L2, but at least kMinimumBandTiles tiles (each U[xi] block is read once per band
  // and reused over its tiles: fewer would make the weights' traffic the bound); and blocks of
  // output channels whose products (positions x rows x band tiles) also fit in half of L2.
  void choose_blocks(const CpuCacheSizes& caches) {
    constexpr size_t kMinimumBandTiles = 32;
    const size_t per_tile = kPositions * channels_ * sizeof(float);
    const size_t fitting = std::max<size_t>(1, caches.level2 / 2 / per_tile);
    const size_t band_tiles = std::max(kMinimumBandTiles, fitting);
    band_tile_rows_ = std::clamp<size_t>(band_tiles / layout_.tiles_x, 1, layout_.tiles_y);
    const size_t tiles = band_tile_rows_ * layout_.tiles_x;
    band_columns_ = round_up(round_up(tiles, kWinogradLanes), nr_);
    const size_t product_row = kPositions * band_columns_ * sizeof(float);
    const size_t fitting_rows = std::max<size_t>(1, caches.level2 / 2 / product_row);
    block_rows_ = std::clamp(fitting_rows / mr_ * mr_, mr_, round_up(rows_, mr_));
  }

  // Weights [Cout][Cin][3][3] -> U[xi] = G g G^T, per position xi a matrix [Cout][Cin] packed
  // into the tile's A panels. Computed in double and rounded once.
  void pack_weights(const float* weights) {
    constexpr WinogradMatrices<M> kMatrices = winograd_matrices<M>();
    const size_t panel_size = round_up(rows_, mr_) * channels_;
    packed_weights_.assign(kPositions * panel_size, 0.0f);
    std::vector<float> position(rows_ * channels_);
    std::vector<double> transformed(kPositions * rows_ * channels_);
    for (size_t pair = 0; pair < rows_ * channels_; ++pair) {
      const float* g = weights + pair * kKernel * kKernel;
      double left[kAlpha][kKernel] = {};  // G g
      for (size_t k = 0; k < kAlpha; ++k) {
        for (size_t b = 0; b < kKernel; ++b) {
          for (size_t a = 0; a < kKernel; ++a) {
            left[k][b] += kMatrices.weight[k][a] * static_cast<double>(g[a * kKernel + b]);
          }
        }
      }
      for (size_t k = 0; k < kAlpha; ++k) {
        for (size_t l = 0; l < kAlpha; ++l) {
          double sum = 0.0;
          for (size_t b = 0; b < kKernel; ++b) sum += left[k][b] * kMatrices.weight[l][b];
          transformed[(k * kAlpha + l) * rows_ * channels_ + pair] = sum;
        }
      }
    }
    for (size_t xi = 0; xi < kPositions; ++xi) {
      for (size_t i = 0; i < position.size(); ++i) {
        position[i] = static_cast<float>(transformed[xi * position.size() + i]);
      }
      pack_row_panels<FloatArithmetic>(position.data(), nullptr, rows_, channels_, mr_,
                                       packed_weights_.data() + xi * panel_size);
    }
  }

  // One channel's plane inside its zero border (and zeros past the input where the last tiles
  // reach beyond the output).
  void pad_channel(const float* plane, float* out) const {
    std::fill(out, out + layout_.plane(), 0.0f);
    const size_t rows = std::min(height_, layout_.padded_height - pad_top_);
    const size_t columns = std::min(width_, layout_.padded_width - pad_left_);
    for (size_t y = 0; y < rows; ++y) {
      std::copy(plane + y * width_, plane + y * width_ + columns,
                out + (y + pad_top_) * layout_.padded_width + pad_left_);
    }
  }

  // Tile `tile` of the band (row-major over the band's tile rows) as (tile row, tile column).
  size_t tile_row(const Band& band, size_t tile) const {
    return band.first_tile_row + tile / layout_.tiles_x;
  }
  size_t tile_column(size_t tile) const { return tile % layout_.tiles_x; }

  // The transformed input of kWinogradLanes tiles of one channel into V[xi][channel][tiles].
  // Lanes past the band's last tile repeat it (finite values in columns no output reads).
  void transform_input_group(const float* planes, const Band& band, size_t channel, size_t group,
                             float* transformed) const {
    const float* plane = planes + channel * layout_.plane();
    WinogradInputTiles tiles{};
    for (size_t lane = 0; lane < kWinogradLanes; ++lane) {
      const size_t tile = std::min(group * kWinogradLanes + lane, band.tiles - 1);
      tiles.origins[lane] =
          plane + tile_row(band, tile) * M * layout_.padded_width + tile_column(tile) * M;
    }
    tiles.row_stride = layout_.padded_width;
    tiles.out = transformed + channel * band_columns_ + group * kWinogradLanes;
    tiles.position_stride = channels_ * band_columns_;
    input_transform_(tiles);
  }

  // Output channels [first_row, first_row + rows) of the band: per position, the GEMM
  // U[xi] x V[xi] into the task's products [xi][rows][band columns], then the output transform.
  void run_block(const float* transformed, const Band& band, size_t first_row, size_t rows,
                 const float* bias, const ResidualRows& residual, float* products,
                 float* output) const {
    const size_t panel_size = round_up(rows_, mr_) * channels_;
    TileGrid grid;
    grid.first_row = 0;
    grid.rows = rows;
    grid.columns = band.tiles;
    grid.row_block = round_up(rows, mr_);
    grid.mr = mr_;
    grid.nr = nr_;
    grid.panels_inner = true;
    FloatTile tile{};
    tile.depth = channels_;
    tile.b_stride = band_columns_;
    tile.c_stride = band_columns_;
    const size_t panel_bytes = mr_ * channels_ * sizeof(float);
    for (size_t xi = 0; xi < kPositions; ++xi) {
      const float* weights = packed_weights_.data() + xi * panel_size + first_row * channels_;
      const float* b = transformed + xi * channels_ * band_columns_;
      float* c = products + xi * block_rows_ * band_columns_;
      for_each_tile<FloatArithmetic>(kernels_, grid, tile, [&](auto& t, size_t row, size_t panel) {
        t.a = weights + row * channels_;
        t.b = b + panel * nr_;
        t.c = c + row * band_columns_ + panel * nr_;
        // A row's first tile asks for the next A panel (where the weights come from memory: a
        // 14x14 layer reuses each transformed weight over 16 tiles only, and 256 -> 256 has
        // 9.4 MB of them).
        t.prefetch = {t.a + mr_ * channels_, panel == 0 ? panel_bytes : 0};
      });
    }
    for (size_t r = 0; r < rows; ++r) {
      const size_t channel = first_row + r;
      const float channel_bias = bias ? bias[channel] : 0.0f;
      float* plane = output + channel * output_height_ * output_width_;
      for (size_t group = 0; group * kWinogradLanes < band.tiles; ++group) {
        transform_output_group(products + r * band_columns_ + group * kWinogradLanes, band, group,
                               channel_bias, plane);
      }
      // The band's output rows, one run of the plane, while it is in cache.
      const size_t top = band.first_tile_row * M;
      const size_t bottom = std::min(output_height_, top + band.tiles / layout_.tiles_x * M);
      const size_t count = (bottom - top) * output_width_;
      if (epilogue_) epilogue_.apply(plane + top * output_width_, 1, count, count);
      residual.apply(plane + top * output_width_, count);
    }
  }

  // The output transform of kWinogradLanes tiles of one output channel (products at
  // m[xi * block_rows_ * band_columns_]), with bias and activation, into the channel's plane.
  void transform_output_group(const float* products, const Band& band, size_t group, float bias,
                              float* plane) const {
    WinogradOutputTiles tiles{};
    tiles.products = products;
    tiles.position_stride = block_rows_ * band_columns_;
    tiles.bias = bias;
    tiles.activation = has_activation_ ? &activation_ : nullptr;
    tiles.out_stride = output_width_;
    const size_t lanes = std::min(kWinogradLanes, band.tiles - group * kWinogradLanes);
    for (size_t lane = 0; lane < lanes; ++lane) {
      const size_t tile = group * kWinogradLanes + lane;
      const size_t top = tile_row(band, tile) * M;
      const size_t left = tile_column(tile) * M;
      tiles.out[lane] = plane + top * output_width_ + left;
      tiles.heights[lane] = static_cast<uint8_t>(std::min(M, output_height_ - top));
      tiles.widths[lane] = static_cast<uint8_t>(std::min(M, output_width_ - left));
    }
    output_transform_(tiles);
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const RegionEpilogue epilogue_;
  void (*const input_transform_)(const WinogradInputTiles& tiles);
  void (*const output_transform_)(const WinogradOutputTiles& tiles);
  size_t height_ = 0;
  size_t width_ = 0;
  size_t output_height_ = 0;
  size_t output_width_ = 0;
  size_t pad_top_ = 0;
  size_t pad_left_ = 0;
  size_t channels_ = 0;
  size_t rows_ = 0;
  size_t mr_ = 0;
  size_t nr_ = 0;
  TileLayout layout_;
  size_t band_tile_rows_ = 1;
  size_t band_columns_ = 0;  // a band's tiles rounded up to kWinogradLanes and NR
  size_t block_rows_ = 0;    // output channels per task, a multiple of MR
  size_t planes_bytes_ = 0;
  size_t transformed_bytes_ = 0;
  size_t task_bytes_ = 0;
  std::vector<float, LargeAllocator<float>> packed_weights_;
  FloatActivation activation_{};
  bool has_activation_ = false;
  char algorithm_[64];
};

}  // namespace

bool winograd_convolution_applies(const Conv2DShape& shape) {
  const reference::Window2D& window = shape.window;
  if (shape.groups != 1 || shape.batch < 1 || shape.input_channels < 1 ||
      shape.output_channels < 1) {
    return false;
  }
  if (window.kernel_height != 3 || window.kernel_width != 3 || window.stride_height != 1 ||
      window.stride_width != 1 || window.dilation_height != 1 || window.dilation_width != 1) {
    return false;
  }
  if (window.pad_top < 0 || window.pad_left < 0 || window.pad_bottom < 0 || window.pad_right < 0) {
    return false;
  }
  if (window.input_height < 1 || window.input_width < 1 || window.output_height < 1 ||
      window.output_width < 1) {
    return false;
  }
  // The output is what the padded input holds (the tiles read the zero border, not past it).
  if (window.output_height != window.input_height + window.pad_top + window.pad_bottom - 2 ||
      window.output_width != window.input_width + window.pad_left + window.pad_right - 2) {
    return false;
  }
  // Sizes the scratch arithmetic handles without overflow.
  constexpr int64_t kLimit = int64_t{1} << 24;
  return window.output_height < kLimit && window.output_width < kLimit &&
         shape.input_channels < kLimit && shape.output_channels < kLimit &&
         (window.output_height + 8) * (window.output_width + 8) < kLimit;
}

bool winograd_convolution_preferred(const Conv2DShape& shape) {
  // Measured against what the avx2 dispatcher chose before (bench_kernels --variant avx2
  // --winograd-vs-default --threads 1,2 --reps 7, medians of interleaved runs; docs/cpu-kernels.md
  // "Session 11"): every 3x3 stride-1 layer of resnet18/50 and yolov5s ran 0.42-0.68x the time of
  // the direct, GEMM or lane convolution as F(4x4) (yolov5s's 32->32 @160 0.76-0.87x), the 7x7
  // ones 0.62-0.71x as F(2x2). Fewer than 32 channels on either side were not measured.
  return winograd_convolution_applies(shape) && shape.input_channels >= 32 &&
         shape.output_channels >= 32;
}

size_t winograd_output_tile(const Conv2DShape& shape) {
  // F(4x4) on planes of 16 or more of its tiles; below, its few tiles fill a fraction of the
  // GEMM tile's 16 columns and reuse each transformed weight a few times only (7x7 outputs: 4
  // tiles, 1.20-1.52x the lane convolution's time, where F(2x2)'s 16 tiles ran 0.62-0.71x).
  const size_t tiles = divide_round_up(static_cast<size_t>(shape.window.output_height), 4) *
                       divide_round_up(static_cast<size_t>(shape.window.output_width), 4);
  return tiles >= 16 ? 4 : 2;
}

std::unique_ptr<Conv2DFloat> make_winograd_conv2d(const MicroKernels& kernels,
                                                  const Conv2DShape& shape,
                                                  const FusedActivation& activation,
                                                  const float* constant_weights, size_t output_tile,
                                                  const WinogradFloatTransforms* transforms,
                                                  RegionEpilogue epilogue) {
  if (!constant_weights || !winograd_convolution_applies(shape)) return nullptr;
  switch (output_tile) {
    case 2:
      return std::make_unique<WinogradConvolution<2>>(kernels, shape, activation, constant_weights,
                                                      transforms, epilogue);
    case 4:
      return std::make_unique<WinogradConvolution<4>>(kernels, shape, activation, constant_weights,
                                                      transforms, epilogue);
    case 6:
      return std::make_unique<WinogradConvolution<6>>(kernels, shape, activation, constant_weights,
                                                      transforms, epilogue);
    default:
      return nullptr;
  }
}

}  // namespace orknn::kernels::cpu::optimized
