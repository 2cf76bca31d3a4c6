// The float32 Winograd F(2x2, 3x3) and F(4x4, 3x3) transforms on AVX2 (winograd_transforms.h
// WinogradInputTiles / WinogradOutputTiles, optimized/winograd_convolution.cc): the arithmetic
// of optimized/winograd_transforms.h on one ymm register of 8 tiles, with the patches brought
// into lanes and the outputs out of them by 8 x 8 transposes in registers instead of the plain
// C++ version's element-by-element copies.
//
// Input: each patch row of the 8 tiles is 8 unaligned loads (one per tile, alpha <= 6 floats
// used) and one transpose, which leaves element j of the row of every tile in register j.
// Output: per output row t, the m vectors y[t][u] are transposed so that register `lane` holds
// that tile's row, stored whole (or element by element where the plane ends).
//
// Compiled for the baseline x86-64 with the instruction set as a pragma over the whole file (the
// header's templates included), called only when cpu_features reported AVX2 and FMA. No
// standard-library templates or inline functions with external linkage here (see
// avx2_micro_kernels.h); the header's are in an anonymous namespace.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

// Before the pragma: their inline functions have external linkage and must stay baseline code.
#include "optimized/micro_kernels.h"
#include "optimized/optimized_kernels.h"

// GCC takes the target as a pragma; clang ignores that one and takes an attribute applied to
// every function of the region instead (the fuzzing build compiles with clang).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#include "optimized/winograd_transforms.h"
#include "x86/avx2_float_activation.h"

namespace orknn::kernels::cpu::optimized {
namespace {

static_assert(sizeof(Lanes) == sizeof(__m256), "a Lanes vector is one ymm register");

__m256 to_m256(const Lanes& lanes) {
  __m256 value;
  std::memcpy(&value, &lanes, sizeof(value));
  return value;
}
void from_m256(__m256 value, Lanes& lanes) {
  std::memcpy(&lanes, &value, sizeof(value));
}

template <size_t M>
void winograd_input(const WinogradInputTiles& tiles) {
  constexpr size_t kAlpha = WinogradTile<M>::kAlpha;
  Lanes d[kAlpha][kAlpha];
  for (size_t i = 0; i < kAlpha; ++i) {
    __m256 rows[8];
    for (size_t lane = 0; lane < 8; ++lane) {
      rows[lane] = _mm256_loadu_ps(tiles.origins[lane] + i * tiles.row_stride);
    }
    avx2_float::transpose8x8(rows);
    for (size_t j = 0; j < kAlpha; ++j) from_m256(rows[j], d[i][j]);
  }
  Lanes v[kAlpha][kAlpha];
  WinogradTile<M>::transform_input(d, v);
  for (size_t xi = 0; xi < kAlpha * kAlpha; ++xi) {
    _mm256_storeu_ps(tiles.out + xi * tiles.position_stride, to_m256(v[xi / kAlpha][xi % kAlpha]));
  }
}

// The first `width` (<= M) floats of `row` to `out`: one store of M floats for a whole row (a
// masked store, vmaskmovps, measured 70% of the output transform's time on Zen 3), else
// element by element.
template <size_t M>
void store_row(__m256 row, size_t width, float* out) {
  const __m128 low = _mm256_castps256_ps128(row);
  if (M == 4 && width == 4) {
    _mm_storeu_ps(out, low);
    return;
  }
  if (M == 2 && width == 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(out), low);
    return;
  }
  float values[8];
  _mm256_storeu_ps(values, row);
  for (size_t u = 0; u < width; ++u) out[u] = values[u];
}

template <size_t M>
void winograd_output(const WinogradOutputTiles& tiles) {
  constexpr size_t kAlpha = WinogradTile<M>::kAlpha;
  Lanes m[kAlpha][kAlpha];
  for (size_t xi = 0; xi < kAlpha * kAlpha; ++xi) {
    from_m256(_mm256_loadu_ps(tiles.products + xi * tiles.position_stride),
              m[xi / kAlpha][xi % kAlpha]);
  }
  Lanes y[M][M];
  WinogradTile<M>::transform_output(m, y);
  const __m256 bias = _mm256_set1_ps(tiles.bias);
  avx2_float::VectorActivation activation{};
  if (tiles.activation) activation = avx2_float::broadcast_activation(*tiles.activation);
  for (size_t t = 0; t < M; ++t) {
    __m256 rows[8];
    for (size_t u = 0; u < 8; ++u) {
      if (u >= M) {
        rows[u] = _mm256_setzero_ps();
        continue;
      }
      rows[u] = _mm256_add_ps(to_m256(y[t][u]), bias);
      if (tiles.activation) rows[u] = avx2_float::activate(activation, rows[u]);
    }
    avx2_float::transpose8x8(rows);  // rows[lane]: that tile's output row t
    for (size_t lane = 0; lane < 8; ++lane) {
      if (t < tiles.heights[lane])
        store_row<M>(rows[lane], tiles.widths[lane], tiles.out[lane] + t * tiles.out_stride);
    }
  }
}

}  // namespace

const WinogradFloatTransforms* avx2_winograd_float_transforms(size_t output_tile) {
  static const WinogradFloatTransforms kTwo{winograd_input<2>, winograd_output<2>};
  static const WinogradFloatTransforms kFour{winograd_input<4>, winograd_output<4>};
  return output_tile == 2 ? &kTwo : output_tile == 4 ? &kFour : nullptr;
}

}  // namespace orknn::kernels::cpu::optimized

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
