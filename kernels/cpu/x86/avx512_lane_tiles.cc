// The AVX-512 tile of the float convolution with output channels in lanes (micro_kernels.h
// LaneFloatTile, optimized/lane_convolution.cc): 32 output channels (two zmm) x up to 14 output
// pixels, 28 zmm accumulators. Per depth step two loads of B (the step's 32 weights) and one
// broadcast of A per pixel, 2 FMAs per pixel; every lane does work whatever the plane's size (a
// 7x7 plane is 3 panels of 14 pixels and one of 7), where the pixels-in-lanes tiles leave 15 of
// 64 lanes idle on a 7x7 plane and 28 of 224 on a 14x14 one.
//
// The accumulators hold [pixel][channel]; the output is NCHW ([channel][pixel]), so the epilogue
// transposes each 16-channel half as a 16 x 16 block (pixels past the panel are don't-care rows)
// and writes one masked row of `pixels` floats per channel. The whole depth runs in one call, so
// that transpose happens once per tile (a few hundred cycles against 28 x depth FMA cycles).
//
// Every function carries its instruction set as a target attribute (the file is compiled for the
// baseline x86-64; dispatch.cc calls it only on a CPU with AVX-512 F/BW/VL). No standard-library
// templates or inline functions here (see avx512_vnni_tiles.cc); the maskz forms of max/min,
// the unpacks and the lane shuffles with every lane set avoid GCC 12's -Wmaybe-uninitialized on
// the unmasked intrinsics (see avx512_float_tiles.cc).
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx512_float_helpers.h"
#include "x86/avx512_prefetch.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using avx512_float::activate;
using avx512_float::first_lanes;
using avx512_float::kAllLanes;

constexpr size_t kLaneChannels = 32;  // two zmm of output channels
constexpr __mmask8 kAllDoubles = 0xFF;

// clang-format off
#define ORKNN_FOR_EACH_PIXEL(MACRO) \
  MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5) MACRO(6) MACRO(7) MACRO(8) MACRO(9) \
  MACRO(10) MACRO(11) MACRO(12) MACRO(13)
// clang-format on

// rows[p] holds pixel p's 16 channels (p < pixels; the others are don't-care): transposes them
// in registers (unpacks within 128-bit lanes, then 128-bit lane shuffles) and stores channel j's
// `pixels` values at c + j * c_stride, for j < channels.
ORKNN_TARGET_AVX512 void store_transposed(const __m512* rows, size_t pixels, size_t channels,
                                          float* c, size_t c_stride) {
  __m512 pairs[16];
  for (int i = 0; i < 8; ++i) {
    pairs[2 * i] = _mm512_maskz_unpacklo_ps(kAllLanes, rows[2 * i], rows[2 * i + 1]);
    pairs[2 * i + 1] = _mm512_maskz_unpackhi_ps(kAllLanes, rows[2 * i], rows[2 * i + 1]);
  }
  // quads[4 i + e], 128-bit lane L: rows 4i .. 4i + 3 of channel 4 L + e.
  __m512 quads[16];
  for (int i = 0; i < 4; ++i) {
    const __m512d low = _mm512_castps_pd(pairs[4 * i]);
    const __m512d high = _mm512_castps_pd(pairs[4 * i + 1]);
    const __m512d next_low = _mm512_castps_pd(pairs[4 * i + 2]);
    const __m512d next_high = _mm512_castps_pd(pairs[4 * i + 3]);
    quads[4 * i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAllDoubles, low, next_low));
    quads[4 * i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAllDoubles, low, next_low));
    quads[4 * i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAllDoubles, high, next_high));
    quads[4 * i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAllDoubles, high, next_high));
  }
  const __mmask16 store = first_lanes(pixels);
  for (int e = 0; e < 4; ++e) {
    // Lanes 0 and 2 (even) or 1 and 3 (odd) of rows 0-7, then of rows 8-15.
    const __m512 even_first = _mm512_maskz_shuffle_f32x4(kAllLanes, quads[e], quads[4 + e], 0x88);
    const __m512 odd_first = _mm512_maskz_shuffle_f32x4(kAllLanes, quads[e], quads[4 + e], 0xDD);
    const __m512 even_second =
        _mm512_maskz_shuffle_f32x4(kAllLanes, quads[8 + e], quads[12 + e], 0x88);
    const __m512 odd_second =
        _mm512_maskz_shuffle_f32x4(kAllLanes, quads[8 + e], quads[12 + e], 0xDD);
    const __m512 columns[4] = {
        _mm512_maskz_shuffle_f32x4(kAllLanes, even_first, even_second, 0x88),  // channel e
        _mm512_maskz_shuffle_f32x4(kAllLanes, odd_first, odd_second, 0x88),    // channel 4 + e
        _mm512_maskz_shuffle_f32x4(kAllLanes, even_first, even_second, 0xDD),  // channel 8 + e
        _mm512_maskz_shuffle_f32x4(kAllLanes, odd_first, odd_second, 0xDD),    // channel 12 + e
    };
    for (size_t lane = 0; lane < 4; ++lane) {
      const size_t channel = 4 * lane + static_cast<size_t>(e);
      if (channel < channels) _mm512_mask_storeu_ps(c + channel * c_stride, store, columns[lane]);
    }
  }
}

template <size_t kPixels>
ORKNN_TARGET_AVX512 void lane_tile_pixels(const LaneFloatTile& tile) {
  const __mmask16 low_channels = first_lanes(tile.channels);
  const __mmask16 high_channels = first_lanes(tile.channels > 16 ? tile.channels - 16 : 0);
  __m512 bias_low = _mm512_setzero_ps();
  __m512 bias_high = _mm512_setzero_ps();
  if (tile.bias) {
    bias_low = _mm512_maskz_loadu_ps(low_channels, tile.bias);
    bias_high = _mm512_maskz_loadu_ps(high_channels, tile.bias + 16);
  }
#define ORKNN_DECLARE(p)    \
  __m512 low##p = bias_low; \
  __m512 high##p = bias_high;
  ORKNN_FOR_EACH_PIXEL(ORKNN_DECLARE)
#undef ORKNN_DECLARE

  const float* a = tile.a;
  const float* b = tile.b;
  PrefetchCursor prefetch = prefetch_cursor(tile.prefetch);
  for (size_t step = tile.depth; step > 0; --step) {
    prefetch_line(prefetch);
    const __m512 b_low = _mm512_loadu_ps(b);
    const __m512 b_high = _mm512_loadu_ps(b + 16);
#define ORKNN_STEP(p)                                    \
  if constexpr (kPixels > p) {                           \
    const __m512 a_pixel = _mm512_set1_ps(a[p]);         \
    low##p = _mm512_fmadd_ps(a_pixel, b_low, low##p);    \
    high##p = _mm512_fmadd_ps(a_pixel, b_high, high##p); \
  }
    ORKNN_FOR_EACH_PIXEL(ORKNN_STEP)
#undef ORKNN_STEP
    a += kPixels;
    b += kLaneChannels;
  }

  if (tile.activation) {
    const FloatActivation& activation = *tile.activation;
#define ORKNN_ACTIVATE(p)                    \
  if constexpr (kPixels > p) {               \
    low##p = activate(activation, low##p);   \
    high##p = activate(activation, high##p); \
  }
    ORKNN_FOR_EACH_PIXEL(ORKNN_ACTIVATE)
#undef ORKNN_ACTIVATE
  }

  // Rows past the panel repeat its last pixel (don't-care: their lanes are not stored).
  __m512 rows[16];
#define ORKNN_GATHER(p)          \
  if constexpr (kPixels > p) {   \
    rows[p] = low##p;            \
  } else {                       \
    rows[p] = rows[kPixels - 1]; \
  }
  ORKNN_FOR_EACH_PIXEL(ORKNN_GATHER)
#undef ORKNN_GATHER
  rows[14] = rows[kPixels - 1];
  rows[15] = rows[kPixels - 1];
  store_transposed(rows, kPixels, tile.channels, tile.c, tile.c_stride);
  if (tile.channels > 16) {
#define ORKNN_GATHER(p)          \
  if constexpr (kPixels > p) {   \
    rows[p] = high##p;           \
  } else {                       \
    rows[p] = rows[kPixels - 1]; \
  }
    ORKNN_FOR_EACH_PIXEL(ORKNN_GATHER)
#undef ORKNN_GATHER
    rows[14] = rows[kPixels - 1];
    rows[15] = rows[kPixels - 1];
    store_transposed(rows, kPixels, tile.channels - 16, tile.c + 16 * tile.c_stride, tile.c_stride);
  }
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_lane_float_tile(const LaneFloatTile& tile) {
  switch (tile.pixels) {
    case 1:
      return lane_tile_pixels<1>(tile);
    case 2:
      return lane_tile_pixels<2>(tile);
    case 3:
      return lane_tile_pixels<3>(tile);
    case 4:
      return lane_tile_pixels<4>(tile);
    case 5:
      return lane_tile_pixels<5>(tile);
    case 6:
      return lane_tile_pixels<6>(tile);
    case 7:
      return lane_tile_pixels<7>(tile);
    case 8:
      return lane_tile_pixels<8>(tile);
    case 9:
      return lane_tile_pixels<9>(tile);
    case 10:
      return lane_tile_pixels<10>(tile);
    case 11:
      return lane_tile_pixels<11>(tile);
    case 12:
      return lane_tile_pixels<12>(tile);
    case 13:
      return lane_tile_pixels<13>(tile);
    default:
      return lane_tile_pixels<14>(tile);
  }
}

// A panel's pixels read their planes at offsets that are fixed across channels and taps (runs of
// output rows at the stride's step, from a padded plane): one gather of up to 14 lanes per step
// with the panel's offsets, from the step's tap in the step's plane.
ORKNN_TARGET_AVX512 void avx512_pack_lane_panel(const LanePanelPacking& packing) {
  const __mmask16 lanes = first_lanes(packing.pixels);
  const __m512i pixel_offsets = _mm512_maskz_loadu_epi32(lanes, packing.pixel_offsets);
  float* out = packing.out;
  for (size_t channel = 0; channel < packing.channels; ++channel) {
    const float* plane = packing.planes + channel * packing.plane_stride;
    for (size_t tap = 0; tap < packing.taps; ++tap) {
      const __m512 values = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), lanes, pixel_offsets,
                                                     plane + packing.tap_offsets[tap], 4);
      _mm512_mask_storeu_ps(out, lanes, values);
      out += packing.pixels;
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
