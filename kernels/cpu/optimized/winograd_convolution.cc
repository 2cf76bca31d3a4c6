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
// The matrices come from Toom-Cook interpolation at the points of winograd_points(): they are
// derived here at compile time, not written out, so every tile size is the same code.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"
#include "optimized/tile_arithmetic.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;

// The transforms work on kLanes tiles at a time, one tile per vector lane (GCC's generic
// vectors: two SSE registers in this baseline build).
constexpr size_t kLanes = 8;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

constexpr size_t kKernel = 3;

// The finite interpolation points of F(m, 3) (m + 1 of them; the last point is infinity). Small
// magnitudes keep the transforms' coefficients, and so their rounding, small, and every product
// of them is exact in float. F(4, 3) takes 0, +-1, 2 and -1/2, not Lavin and Gray's 0, +-1, +-2:
// its worst error over the models' layer sizes measured 2-2.5 times smaller (0.74 against 1.85
// of the tests' tolerance at 512 channels; bench_kernels --winograd-accuracy, docs/cpu-kernels.md
// "Session 11"). F(2, 3) takes 0, +-1; F(6, 3) 0, +-1, +-2, +-1/2.
template <size_t M>
constexpr double winograd_point(size_t index) {
  constexpr double kPoints[] = {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5};
  constexpr double kFourPoints[] = {0.0, 1.0, -1.0, 2.0, -0.5};
  return M == 4 ? kFourPoints[index] : kPoints[index];
}

template <size_t M>
struct WinogradMatrices {
  static constexpr size_t kAlpha = M + kKernel - 1;
  double input[kAlpha][kAlpha] = {};   // B^T
  double output[M][kAlpha] = {};       // A^T
  double weight[kAlpha][kKernel] = {};  // G
};

// Toom-Cook for the correlation y_t = sum_k d_{t+k} g_k (t < m, k < 3), the transpose of the
// linear convolution s = u * g evaluated at points p_i and interpolated back:
//  * A^T[t][i] = p_i^t (u evaluated at p_i), the infinity column picks u's leading coefficient;
//  * G[i] = (1, p_i, p_i^2) / prod_{j != i} (p_i - p_j) (g at p_i, with the Lagrange
//    denominator), the infinity row (0, 0, 1);
//  * B^T[i] = the coefficients of prod_{j != i} (x - p_j) (the Lagrange numerator), the
//    infinity row those of prod_j (x - p_j).
template <size_t M>
constexpr WinogradMatrices<M> winograd_matrices() {
  constexpr size_t kAlpha = WinogradMatrices<M>::kAlpha;
  constexpr size_t kFinite = kAlpha - 1;
  WinogradMatrices<M> matrices{};
  for (size_t row = 0; row <= kFinite; ++row) {
    // Multiplies out prod (x - p_j) over j != row (every j for the infinity row).
    double polynomial[kAlpha] = {1.0};
    size_t degree = 0;
    double denominator = 1.0;
    for (size_t j = 0; j < kFinite; ++j) {
      if (j == row) continue;
      const double point = winograd_point<M>(j);
      for (size_t d = degree + 1; d > 0; --d) {
        polynomial[d] = polynomial[d - 1] - point * polynomial[d];
      }
      polynomial[0] = -point * polynomial[0];
      ++degree;
      if (row < kFinite) denominator *= winograd_point<M>(row) - point;
    }
    for (size_t column = 0; column < kAlpha; ++column) {
      matrices.input[row][column] = polynomial[column];
    }
    if (row == kFinite) {
      matrices.weight[row][kKernel - 1] = 1.0;
      matrices.output[M - 1][row] = 1.0;
      continue;
    }
    const double point = winograd_point<M>(row);
    double power = 1.0;
    for (size_t k = 0; k < kKernel; ++k, power *= point) {
      matrices.weight[row][k] = power / denominator;
    }
    power = 1.0;
    for (size_t t = 0; t < M; ++t, power *= point) matrices.output[t][row] = power;
  }
  return matrices;
}

// The input and output transforms' coefficients in float (exact: dyadic rationals).
template <size_t M>
struct WinogradFloats {
  static constexpr size_t kAlpha = M + kKernel - 1;
  float input[kAlpha][kAlpha] = {};
  float output[M][kAlpha] = {};
};
template <size_t M>
constexpr WinogradFloats<M> winograd_floats() {
  constexpr WinogradMatrices<M> matrices = winograd_matrices<M>();
  WinogradFloats<M> floats{};
  for (size_t i = 0; i < floats.kAlpha; ++i) {
    for (size_t j = 0; j < floats.kAlpha; ++j) {
      floats.input[i][j] = static_cast<float>(matrices.input[i][j]);
    }
  }
  for (size_t i = 0; i < M; ++i) {
    for (size_t j = 0; j < floats.kAlpha; ++j) {
      floats.output[i][j] = static_cast<float>(matrices.output[i][j]);
    }
  }
  return floats;
}

// out[r] = sum_c matrix[r][c] x in[c] for R rows and C columns of a constant matrix, on lanes.
// Fully unrolled, so zero coefficients cost nothing and ones no multiply.
// `matrix` is one of the constexpr tables below: after inlining, its entries are constants.
template <size_t R, size_t C, size_t InStride, size_t OutStride>
inline __attribute__((always_inline)) void apply_matrix(const float (&matrix)[R][C],
                                                        const Lanes* in, Lanes* out) {
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r) {
    Lanes sum = {};
    bool first = true;
#pragma GCC unroll 16
    for (size_t c = 0; c < C; ++c) {
      const float coefficient = matrix[r][c];
      if (coefficient == 0.0f) continue;
      const Lanes term = coefficient == 1.0f    ? in[c * InStride]
                         : coefficient == -1.0f ? -in[c * InStride]
                                                : coefficient * in[c * InStride];
      sum = first ? term : sum + term;
      first = false;
    }
    out[r * OutStride] = sum;
  }
}

template <size_t M>
struct WinogradTile {
  static constexpr size_t kAlpha = M + kKernel - 1;
  static constexpr WinogradFloats<M> kFloats = winograd_floats<M>();

  // V = B^T d B of kLanes patches d[i][j] (lanes), into v[xi = k * alpha + l].
  static void transform_input(const Lanes (&d)[kAlpha][kAlpha], Lanes (&v)[kAlpha][kAlpha]) {
    Lanes rows[kAlpha][kAlpha];  // d B: row i, column l
#pragma GCC unroll 16
    for (size_t i = 0; i < kAlpha; ++i) {
      apply_matrix<kAlpha, kAlpha, 1, 1>(kFloats.input, d[i], rows[i]);
    }
#pragma GCC unroll 16
    for (size_t l = 0; l < kAlpha; ++l) {
      apply_matrix<kAlpha, kAlpha, kAlpha, kAlpha>(kFloats.input, &rows[0][l], &v[0][l]);
    }
  }

  // Y = A^T m A of kLanes tiles' m[k][l], into y[t][u].
  static void transform_output(const Lanes (&m)[kAlpha][kAlpha], Lanes (&y)[M][M]) {
    Lanes columns[kAlpha][M];  // m A: row k, column u
#pragma GCC unroll 16
    for (size_t k = 0; k < kAlpha; ++k) {
      apply_matrix<M, kAlpha, 1, 1>(kFloats.output, m[k], columns[k]);
    }
#pragma GCC unroll 16
    for (size_t u = 0; u < M; ++u) {
      apply_matrix<M, kAlpha, M, M>(kFloats.output, &columns[0][u], &y[0][u]);
    }
  }
};

// (Lanes pass by reference: by value they would change the ABI between SSE and AVX builds.)
inline void load_lanes(const float* source, Lanes& lanes) {
  std::memcpy(&lanes, source, sizeof(lanes));
}
inline void store_lanes(const Lanes& lanes, float* destination) {
  std::memcpy(destination, &lanes, sizeof(lanes));
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
  WinogradConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                      const FusedActivation& activation, const float* weights)
      : kernels_(kernels), shape_(shape) {
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

    planes_bytes_ = align_bytes(channels_ * layout_.plane() * sizeof(float));
    transformed_bytes_ = align_bytes(kPositions * channels_ * band_columns_ * sizeof(float));
    task_bytes_ = align_bytes(kPositions * block_rows_ * band_columns_ * sizeof(float));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s winograd F(%zux%zu,3x3) gemm %zux%zu",
                  kernels.name, M, M, mr_, nr_);
  }

  // Thread 0's scratch holds the padded planes and the band's transformed input (every thread
  // reads them), then its task area; the other threads use only a task area.
  size_t scratch_bytes() const override { return shared_bytes() + task_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float*, const float* bias, float* output,
           ThreadPool& pool) const override {
    uint8_t* scratch = pool.scratch(0, scratch_bytes());
    auto* planes = reinterpret_cast<float*>(scratch);
    auto* transformed = reinterpret_cast<float*>(scratch + planes_bytes_);
    const size_t image_size = channels_ * height_ * width_;
    const size_t output_size = rows_ * output_height_ * output_width_;
    const size_t blocks = divide_round_up(rows_, block_rows_);
    for (size_t image = 0; image < static_cast<size_t>(shape_.batch); ++image) {
      const float* image_input = input + image * image_size;
      pool.parallel_for(channels_, [&](size_t channel, size_t) {
        pad_channel(image_input + channel * height_ * width_, planes + channel * layout_.plane());
      });
      float* image_output = output + image * output_size;
      for (size_t first_row = 0; first_row < layout_.tiles_y; first_row += band_tile_rows_) {
        const size_t band_rows = std::min(band_tile_rows_, layout_.tiles_y - first_row);
        const Band band{first_row, band_rows * layout_.tiles_x};
        const size_t groups = divide_round_up(band.tiles, kLanes);
        // One task per channel's kLanes-tile groups (the channels' planes are independent).
        pool.parallel_for(channels_, [&](size_t channel, size_t) {
          for (size_t group = 0; group < groups; ++group) {
            transform_input_group(planes, band, channel, group, transformed);
          }
        });
        pool.parallel_for(blocks, [&](size_t block, size_t thread) {
          uint8_t* task = thread == 0 ? scratch + shared_bytes() : pool.scratch(thread, task_bytes_);
          run_block(transformed, band, block, bias, reinterpret_cast<float*>(task), image_output);
        });
      }
    }
  }

 private:
  struct Band {
    size_t first_tile_row;
    size_t tiles;
  };

  size_t shared_bytes() const { return planes_bytes_ + transformed_bytes_; }

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
    band_columns_ = round_up(round_up(tiles, kLanes), nr_);
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

  // The transformed input of kLanes tiles of one channel into V[xi][channel][tiles]. Lanes past
  // the band's last tile repeat it (finite values in columns no output reads).
  void transform_input_group(const float* planes, const Band& band, size_t channel, size_t group,
                             float* transformed) const {
    const float* plane = planes + channel * layout_.plane();
    Lanes d[kAlpha][kAlpha];
    for (size_t lane = 0; lane < kLanes; ++lane) {
      const size_t tile = std::min(group * kLanes + lane, band.tiles - 1);
      const float* origin =
          plane + tile_row(band, tile) * M * layout_.padded_width + tile_column(tile) * M;
      for (size_t i = 0; i < kAlpha; ++i) {
        for (size_t j = 0; j < kAlpha; ++j) d[i][j][lane] = origin[i * layout_.padded_width + j];
      }
    }
    Lanes v[kAlpha][kAlpha];
    Tile::transform_input(d, v);
    float* out = transformed + channel * band_columns_ + group * kLanes;
    const size_t position_stride = channels_ * band_columns_;
    for (size_t k = 0; k < kAlpha; ++k) {
      for (size_t l = 0; l < kAlpha; ++l) {
        store_lanes(v[k][l], out + (k * kAlpha + l) * position_stride);
      }
    }
  }

  // Output channels [block x block_rows_, +block_rows_) of the band: per position, the GEMM
  // U[xi] x V[xi] into the task's products [xi][rows][band columns], then the output transform.
  void run_block(const float* transformed, const Band& band, size_t block, const float* bias,
                 float* products, float* output) const {
    const size_t first_row = block * block_rows_;
    const size_t rows = std::min(block_rows_, rows_ - first_row);
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
    for (size_t xi = 0; xi < kPositions; ++xi) {
      const float* weights = packed_weights_.data() + xi * panel_size + first_row * channels_;
      const float* b = transformed + xi * channels_ * band_columns_;
      float* c = products + xi * block_rows_ * band_columns_;
      for_each_tile<FloatArithmetic>(kernels_, grid, tile, [&](auto& t, size_t row, size_t panel) {
        t.a = weights + row * channels_;
        t.b = b + panel * nr_;
        t.c = c + row * band_columns_ + panel * nr_;
      });
    }
    for (size_t r = 0; r < rows; ++r) {
      const size_t channel = first_row + r;
      const float channel_bias = bias ? bias[channel] : 0.0f;
      float* plane = output + channel * output_height_ * output_width_;
      for (size_t group = 0; group * kLanes < band.tiles; ++group) {
        transform_output_group(products + r * band_columns_ + group * kLanes, band, group,
                               channel_bias, plane);
      }
    }
  }

  // The output transform of kLanes tiles of one output channel (products at m[xi * block_rows_
  // * band_columns_]), with bias and activation, into the channel's plane.
  void transform_output_group(const float* products, const Band& band, size_t group, float bias,
                              float* plane) const {
    Lanes m[kAlpha][kAlpha];
    const size_t position_stride = block_rows_ * band_columns_;
    for (size_t k = 0; k < kAlpha; ++k) {
      for (size_t l = 0; l < kAlpha; ++l) {
        load_lanes(products + (k * kAlpha + l) * position_stride, m[k][l]);
      }
    }
    Lanes y[M][M];
    Tile::transform_output(m, y);
    for (size_t t = 0; t < M; ++t) {
      for (size_t u = 0; u < M; ++u) {
        y[t][u] += bias;
        finish(y[t][u]);
      }
    }
    const size_t lanes = std::min(kLanes, band.tiles - group * kLanes);
    for (size_t lane = 0; lane < lanes; ++lane) {
      const size_t tile = group * kLanes + lane;
      const size_t top = tile_row(band, tile) * M;
      const size_t left = tile_column(tile) * M;
      const size_t height = std::min(M, output_height_ - top);
      const size_t width = std::min(M, output_width_ - left);
      float* out = plane + top * output_width_ + left;
      for (size_t t = 0; t < height; ++t) {
        for (size_t u = 0; u < width; ++u) out[t * output_width_ + u] = y[t][u][lane];
      }
    }
  }

  // The fused activation on lanes, as activate_float: the leaky slope, then the clamp.
  void finish(Lanes& value) const {
    if (!has_activation_) return;
    if (activation_.leaky) value = value < 0.0f ? value * activation_.leaky_alpha : value;
    value = value < activation_.minimum ? activation_.minimum : value;
    value = activation_.maximum < value ? activation_.maximum : value;
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
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
  size_t band_columns_ = 0;  // a band's tiles rounded up to kLanes and NR
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
  return winograd_convolution_applies(shape) && shape.input_channels >= 16;  // measured below
}

size_t winograd_output_tile(const Conv2DShape&) {
  return 4;
}

std::unique_ptr<Conv2DFloat> make_winograd_conv2d(const MicroKernels& kernels,
                                                  const Conv2DShape& shape,
                                                  const FusedActivation& activation,
                                                  const float* constant_weights,
                                                  size_t output_tile) {
  if (!constant_weights || !winograd_convolution_applies(shape)) return nullptr;
  switch (output_tile) {
    case 2:
      return std::make_unique<WinogradConvolution<2>>(kernels, shape, activation, constant_weights);
    case 4:
      return std::make_unique<WinogradConvolution<4>>(kernels, shape, activation, constant_weights);
    case 6:
      return std::make_unique<WinogradConvolution<6>>(kernels, shape, activation, constant_weights);
    default:
      return nullptr;
  }
}

}  // namespace orknn::kernels::cpu::optimized
