// The AVX-512 tile of the direct float convolution (micro_kernels.h DirectFloatTile): 12 output
// channels x 32 output pixels, 24 zmm accumulators, as the GEMM tile of avx512_float_tiles.cc,
// but B is read straight from the input planes: per depth step two zero-masked loads (the tap's
// lane masks leave out the pixels whose input is padding; a masked-out lane is never read, so
// an address before or after the plane does not fault), 12 broadcasts of A and 24 FMAs. The
// depth runs tap by tap, the channels inside, so a tap's masks and address stay fixed across
// its channel loop.
//
// Every function carries its instruction set as a target attribute (the file is compiled for
// the baseline x86-64; dispatch.cc calls it only on a CPU with AVX-512 F/BW/VL). No
// standard-library templates or inline functions here (see avx512_vnni_tiles.cc); the maskz
// forms of max/min/mul with every lane set avoid GCC 12's -Wmaybe-uninitialized on the unmasked
// intrinsics (see avx512_float_tiles.cc).
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx512_float_helpers.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::activate;
using avx512_float::first_lanes;
using avx512_float::kAllLanes;

constexpr size_t kTileRows = 12;
constexpr size_t kTileColumns = 32;  // a pixel block

// clang-format off
#define ORKNN_FOR_EACH_ROW(MACRO) \
  MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5) MACRO(6) MACRO(7) MACRO(8) MACRO(9) \
  MACRO(10) MACRO(11)
// clang-format on

ORKNN_TARGET_AVX512 __m256 activate_half(const FloatActivation& activation, __m256 value) {
  if (activation.leaky) {
    const __mmask8 negative = _mm256_cmp_ps_mask(value, _mm256_setzero_ps(), _CMP_LT_OQ);
    value = _mm256_mask_mul_ps(value, negative, value, _mm256_set1_ps(activation.leaky_alpha));
  }
  value = _mm256_maskz_max_ps(0xFF, _mm256_set1_ps(activation.minimum), value);
  return _mm256_maskz_min_ps(0xFF, _mm256_set1_ps(activation.maximum), value);
}

// kRows real rows (1..kTileRows); columns 0-15 on a zmm and kHighLanes more (0, 8 on a ymm, or
// 16 on a zmm). The ymm serves blocks of 17-24 pixels (a 7x7 plane's second block has 17): Zen 4
// runs a ymm FMA in half a zmm FMA's time, so those blocks cost 3 halves instead of 4.
template <size_t kRows, size_t kHighLanes, bool kPrefetch>
ORKNN_TARGET_AVX512 void direct_tile_rows(const DirectFloatTile& tile) {
  const __mmask16 store_low = first_lanes(tile.columns);
  const __mmask16 store_high = first_lanes(tile.columns > 16 ? tile.columns - 16 : 0);
  float* c = tile.c;
  const size_t c_stride = tile.c_stride;

#define ORKNN_DECLARE(r)                \
  __m512 low##r = _mm512_setzero_ps();  \
  __m512 high##r = _mm512_setzero_ps(); \
  __m256 half##r = _mm256_setzero_ps();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  if (tile.accumulate) {
#define ORKNN_LOAD(r)                                                                            \
  if constexpr (kRows > r) {                                                                     \
    low##r = _mm512_maskz_loadu_ps(store_low, c + r * c_stride);                                 \
    if constexpr (kHighLanes == 16) {                                                            \
      high##r = _mm512_maskz_loadu_ps(store_high, c + r * c_stride + 16);                        \
    } else if constexpr (kHighLanes == 8) {                                                      \
      half##r = _mm256_maskz_loadu_ps(static_cast<__mmask8>(store_high), c + r * c_stride + 16); \
    }                                                                                            \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_LOAD)
#undef ORKNN_LOAD
  } else if (tile.row_bias) {
    const float* row_bias = tile.row_bias;
#define ORKNN_INIT(r)                      \
  if constexpr (kRows > r) {               \
    low##r = _mm512_set1_ps(row_bias[r]);  \
    high##r = low##r;                      \
    half##r = _mm256_set1_ps(row_bias[r]); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_INIT)
#undef ORKNN_INIT
  }

  if (!tile.accumulate) {
    // The output lines are written once, at the tile's end, and a large layer's output is in no
    // cache: ask for this block's lines and the next block's (the next 32 pixels of the same
    // rows) now, for writing, so that the stores find them. Without it the stores' misses cost
    // about a quarter of a 6x6/2 stem's time (the same layer with its stores sent to a small
    // buffer ran 1.3x faster); this block's lines alone gained 3-6%, both 4-15% (session 7).
#define ORKNN_PREFETCH_OUTPUT(r)                                                  \
  if constexpr (kRows > r) {                                                      \
    const char* row_output = reinterpret_cast<const char*>(c + r * c_stride);     \
    _mm_prefetch(row_output, _MM_HINT_ET0);                                       \
    _mm_prefetch(row_output + kTileColumns * sizeof(float), _MM_HINT_ET0);        \
    if constexpr (kHighLanes != 0) {                                              \
      _mm_prefetch(row_output + 64, _MM_HINT_ET0);                                \
      _mm_prefetch(row_output + kTileColumns * sizeof(float) + 64, _MM_HINT_ET0); \
    }                                                                             \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_PREFETCH_OUTPUT)
#undef ORKNN_PREFETCH_OUTPUT
  }

  const float* a = tile.a;
  const size_t channel_stride = tile.channel_stride;
  for (size_t tap = 0; tap < tile.taps; ++tap) {
    const __mmask16 mask_low = static_cast<__mmask16>(tile.masks[tap]);
    const __mmask16 mask_high = static_cast<__mmask16>(tile.masks[tap] >> 16);
    const float* b = tile.inputs[tap];
    const size_t steps = tile.tap_channels ? tile.tap_channels[tap] : tile.channels;
    // A tap whose mask has all 32 lanes (every lane a real pixel whose input lies inside the
    // plane: most taps, away from the plane's edges) loads B unmasked, the same values from the
    // same addresses. The zero-masked loads cost more: without them where they are not needed,
    // the direct layers ran 1-16% faster at one thread, most by 5-9% (session 19,
    // bench_kernels, medians of 3 interleaved runs).
    const bool full = kHighLanes == 16 && tile.masks[tap] == 0xFFFFFFFFu;
    for (size_t channel = steps; channel > 0; --channel) {
      if (kPrefetch) {
        const char* ahead = reinterpret_cast<const char*>(b + tile.prefetch_distance);
        _mm_prefetch(ahead, _MM_HINT_T0);
        _mm_prefetch(ahead + 64, _MM_HINT_T0);
        _mm_prefetch(ahead + 124, _MM_HINT_T0);
      }
      const __m512 b_low = full ? _mm512_loadu_ps(b) : _mm512_maskz_loadu_ps(mask_low, b);
      __m512 b_high = b_low;
      if constexpr (kHighLanes == 16) {
        b_high = full ? _mm512_loadu_ps(b + 16) : _mm512_maskz_loadu_ps(mask_high, b + 16);
      }
      const __m256 b_half = kHighLanes == 8
                                ? _mm256_maskz_loadu_ps(static_cast<__mmask8>(mask_high), b + 16)
                                : _mm256_setzero_ps();
#define ORKNN_STEP(r)                                                                  \
  if constexpr (kRows > r) {                                                           \
    const __m512 a_row = _mm512_set1_ps(a[r]);                                         \
    low##r = _mm512_fmadd_ps(a_row, b_low, low##r);                                    \
    if constexpr (kHighLanes == 16) high##r = _mm512_fmadd_ps(a_row, b_high, high##r); \
    if constexpr (kHighLanes == 8) {                                                   \
      half##r = _mm256_fmadd_ps(_mm256_set1_ps(a[r]), b_half, half##r);                \
    }                                                                                  \
  }
      ORKNN_FOR_EACH_ROW(ORKNN_STEP)
#undef ORKNN_STEP
      a += kTileRows;
      b += channel_stride;
    }
  }

  if (tile.activation) {
    const FloatActivation& activation = *tile.activation;
#define ORKNN_ACTIVATE(r)                                                        \
  if constexpr (kRows > r) {                                                     \
    low##r = activate(activation, low##r);                                       \
    if constexpr (kHighLanes == 16) high##r = activate(activation, high##r);     \
    if constexpr (kHighLanes == 8) half##r = activate_half(activation, half##r); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_ACTIVATE)
#undef ORKNN_ACTIVATE
  }
#define ORKNN_STORE(r)                                                                          \
  if constexpr (kRows > r) {                                                                    \
    _mm512_mask_storeu_ps(c + r * c_stride, store_low, low##r);                                 \
    if constexpr (kHighLanes == 16) {                                                           \
      _mm512_mask_storeu_ps(c + r * c_stride + 16, store_high, high##r);                        \
    } else if constexpr (kHighLanes == 8) {                                                     \
      _mm256_mask_storeu_ps(c + r * c_stride + 16, static_cast<__mmask8>(store_high), half##r); \
    }                                                                                           \
  }
  ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
}

template <size_t kHighLanes, bool kPrefetch>
ORKNN_TARGET_AVX512 void direct_tile_high(const DirectFloatTile& tile) {
  switch (tile.rows) {
    case 1:
      return direct_tile_rows<1, kHighLanes, kPrefetch>(tile);
    case 2:
      return direct_tile_rows<2, kHighLanes, kPrefetch>(tile);
    case 3:
      return direct_tile_rows<3, kHighLanes, kPrefetch>(tile);
    case 4:
      return direct_tile_rows<4, kHighLanes, kPrefetch>(tile);
    case 5:
      return direct_tile_rows<5, kHighLanes, kPrefetch>(tile);
    case 6:
      return direct_tile_rows<6, kHighLanes, kPrefetch>(tile);
    case 7:
      return direct_tile_rows<7, kHighLanes, kPrefetch>(tile);
    case 8:
      return direct_tile_rows<8, kHighLanes, kPrefetch>(tile);
    case 9:
      return direct_tile_rows<9, kHighLanes, kPrefetch>(tile);
    case 10:
      return direct_tile_rows<10, kHighLanes, kPrefetch>(tile);
    case 11:
      return direct_tile_rows<11, kHighLanes, kPrefetch>(tile);
    default:
      return direct_tile_rows<kTileRows, kHighLanes, kPrefetch>(tile);
  }
}

template <bool kPrefetch>
ORKNN_TARGET_AVX512 void direct_tile_columns(const DirectFloatTile& tile) {
  if (tile.columns <= 16) return direct_tile_high<0, kPrefetch>(tile);
  if (tile.columns <= 24) return direct_tile_high<8, kPrefetch>(tile);
  return direct_tile_high<16, kPrefetch>(tile);
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_direct_float_tile(const DirectFloatTile& tile) {
  if (tile.prefetch_distance != 0) {
    direct_tile_columns<true>(tile);
  } else {
    direct_tile_columns<false>(tile);
  }
}

}  // namespace orknn::kernels::cpu::optimized
