// The Winograd F(m x m, 3x3) transforms (optimized/winograd_convolution.cc, docs/cpu-kernels.md
// "Session 11"): the Toom-Cook matrices, derived at compile time from interpolation points, and
// the input and output transforms of kWinogradLanes tiles, one per vector lane, as fully
// unrolled products with those constant matrices (zero coefficients cost nothing, ones no
// multiply).
//
// The transforms' interface (WinogradInputTiles, WinogradOutputTiles) comes first; the
// templates after it are in an anonymous namespace on purpose:
// x86/avx2_winograd_float_transforms.cc compiles the same templates for AVX2, and with external
// linkage the linker could keep that copy for the baseline driver too (see x86/avx2_micro_kernels.h
// on inline functions).
#pragma once

#include <cstddef>
#include <cstdint>

#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

// kWinogradLanes tiles at a time, one per vector lane; alpha = m + 2, positions xi = k * alpha
// + l of the (alpha x alpha) transformed tile.
constexpr size_t kWinogradLanes = 8;
// V = B^T d B of each lane's alpha x alpha input patch d (row i at origins[lane] + i *
// row_stride), stored as out[xi * position_stride + lane]. Every origin row is readable 8 floats
// from its start (a kernel may load 8 and use alpha).
struct WinogradInputTiles {
  const float* origins[kWinogradLanes];
  size_t row_stride;
  float* out;
  size_t position_stride;
};
// Y = A^T M A + bias of each lane's products M[xi] = products[xi * position_stride + lane], with
// the activation (null: none), stored as out[lane][t * out_stride + u] for t < heights[lane],
// u < widths[lane] (0 for lanes past the last tile: nothing stored).
struct WinogradOutputTiles {
  const float* products;
  size_t position_stride;
  float bias;
  const FloatActivation* activation;
  float* out[kWinogradLanes];
  size_t out_stride;
  uint8_t heights[kWinogradLanes];
  uint8_t widths[kWinogradLanes];
};
// One output tile size's pair of transforms.
struct WinogradFloatTransforms {
  void (*input)(const WinogradInputTiles& tiles);
  void (*output)(const WinogradOutputTiles& tiles);
};

namespace {

// The transforms work on kWinogradLanes tiles at a time, one tile per vector lane (GCC's
// generic vectors: two SSE registers in the baseline build, one ymm register in the AVX2 one).
typedef float Lanes __attribute__((vector_size(kWinogradLanes * sizeof(float))));

constexpr size_t kKernel = 3;

// The finite interpolation points of F(m, 3) (m + 1 of them; the last point is infinity). Small
// magnitudes keep the transforms' coefficients, and so their rounding, small, and every product
// of them is exact in float. F(4, 3) takes 0, +-1, 2 and -1/2, not Lavin and Gray's 0, +-1, +-2:
// its worst error over the models' layer sizes measured 2-2.8 times smaller (0.74 against 1.61
// of the tests' tolerance at 512 channels, where Lavin and Gray's points fail them;
// bench_kernels --winograd-accuracy, docs/cpu-kernels.md "Session 11"). F(2, 3) takes 0, +-1;
// F(6, 3) 0, +-1, +-2, +-1/2.
template <size_t M>
constexpr double winograd_point(size_t index) {
  constexpr double kPoints[] = {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5};
  constexpr double kFourPoints[] = {0.0, 1.0, -1.0, 2.0, -0.5};
  return M == 4 ? kFourPoints[index] : kPoints[index];
}

template <size_t M>
struct WinogradMatrices {
  static constexpr size_t kAlpha = M + kKernel - 1;
  double input[kAlpha][kAlpha] = {};    // B^T
  double output[M][kAlpha] = {};        // A^T
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
// `matrix` is one of the constexpr tables above: after inlining, its entries are constants.
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

  // V = B^T d B of kWinogradLanes patches d[i][j] (lanes), into v[xi = k * alpha + l].
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

  // Y = A^T m A of kWinogradLanes tiles' m[k][l], into y[t][u].
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

}  // namespace
}  // namespace orknn::kernels::cpu::optimized
