// The AVX2 + FMA tile of the float convolution with output channels in lanes (micro_kernels.h
// LaneFloatTile, optimized/lane_convolution.cc): 32 output channels x up to 14 output pixels.
// AVX2 has 16 ymm registers, not the 28 accumulators the AVX-512 tile holds, so the tile's
// pixels run as groups of up to 3: 4 vectors of 8 channels x 3 pixels = 12 accumulators, 3
// broadcasts of A and 1 vector of B (7 loads for 12 FMAs; all 16 registers). A 1-pixel group
// (4 accumulators) would wait on the FMA latency, so a remainder of one pixel takes one from the
// group before it (7 pixels = 3 + 2 + 2, 13 = 3 + 3 + 3 + 2 + 2).
//
// Every group reads all of the step's 32 weights, so the depth runs in chunks of kChunkSteps
// whose weights (kChunkSteps x 128 bytes) and panel (kChunkSteps x 4 x pixels bytes) stay in L1
// for all the groups; the sums wait between chunks in `sums` ([pixel][32 channels], on the
// stack). The chunk's first three groups also prefetch the next chunk, a line per step each,
// so that it arrives while this one runs (a block's weights, e.g. 590 KB for a 3x3 over 512
// channels, come from L3 for every panel: without the prefetch the first group waits on them).
// Whole depths per group, chunks without the prefetch and the first group prefetching all of
// the next chunk measured slower (docs/cpu-kernels.md "Session 10").
//
// The epilogue transposes the sums to the output's [channel][pixel] as 8 x 8 blocks in
// registers (pixels past the tile are zero rows, not stored), with bias and activation.
//
// Every function carries its instruction set as a target attribute (the file is compiled for
// the baseline x86-64; dispatch.cc calls it only when cpu_features reported AVX2 and FMA). No
// standard-library templates or inline functions here (see avx2_micro_kernels.h).
#include <immintrin.h>

#include <cstddef>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"

#define ORKNN_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace orknn::kernels::cpu::optimized {
namespace {

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::transpose8x8;
using avx2_float::VectorActivation;

constexpr size_t kLaneChannels = 32;  // a tile's channels, B's row
constexpr size_t kMaxPixels = 14;     // a tile's pixels
// Depth steps per chunk: weights 8 KB, panel up to 3.5 KB, twice that with the next chunk's
// prefetch (scratch loop on resnet's 3x3 512 @7 and 1x1 @7 panels and weights, with the
// prefetch: 32-64 steps 71-77% of the FMA peak, 128 59-71%, 256-512 50-62%; whole depths
// 58-70%).
constexpr size_t kChunkSteps = 64;

// The first `count` lanes (0..8) all ones: a vmaskmovps mask.
ORKNN_TARGET_AVX2 __m256i first_lanes(size_t count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane);
}

// kPixels (1..3) pixels of the tile over `steps` depth steps from a and b (a's stride is the
// panel's pixel count), adding to sums ([pixel][32], the group's first pixel at sums[0]).
// `start`: the sums start from zero (the depth's first chunk) instead of their stored values.
// kPrefetch: each step also asks for one cache line from `prefetch` on (the next ones).
template <size_t kPixels, bool kPrefetch>
ORKNN_TARGET_AVX2 void group_steps(const float* a, size_t a_stride, const float* b, size_t steps,
                                   bool start, float* sums, const float* prefetch) {
  // acc<p><v>: pixel p, channels 8 v .. 8 v + 7.
#define ORKNN_FOR_EACH_VECTOR(MACRO, p) MACRO(p, 0) MACRO(p, 1) MACRO(p, 2) MACRO(p, 3)
#define ORKNN_DECLARE(p, v) __m256 acc##p##v = _mm256_setzero_ps();
  ORKNN_FOR_EACH_VECTOR(ORKNN_DECLARE, 0)
  ORKNN_FOR_EACH_VECTOR(ORKNN_DECLARE, 1)
  ORKNN_FOR_EACH_VECTOR(ORKNN_DECLARE, 2)
#undef ORKNN_DECLARE
  if (!start) {
#define ORKNN_LOAD(p, v) \
  if constexpr (kPixels > p) acc##p##v = _mm256_load_ps(sums + p * kLaneChannels + 8 * v);
    ORKNN_FOR_EACH_VECTOR(ORKNN_LOAD, 0)
    ORKNN_FOR_EACH_VECTOR(ORKNN_LOAD, 1)
    ORKNN_FOR_EACH_VECTOR(ORKNN_LOAD, 2)
#undef ORKNN_LOAD
  }
  for (size_t step = steps; step > 0; --step) {
    if constexpr (kPrefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(prefetch), _MM_HINT_T0);
      prefetch += 16;
    }
    // The 3 broadcasts live through the step; one vector of B at a time.
    const __m256 a0 = _mm256_broadcast_ss(a);
    const __m256 a1 = kPixels > 1 ? _mm256_broadcast_ss(a + 1) : a0;
    const __m256 a2 = kPixels > 2 ? _mm256_broadcast_ss(a + 2) : a0;
#define ORKNN_STEP(v)                                                           \
  {                                                                             \
    const __m256 weights = _mm256_loadu_ps(b + 8 * v);                          \
    acc0##v = _mm256_fmadd_ps(a0, weights, acc0##v);                            \
    if constexpr (kPixels > 1) acc1##v = _mm256_fmadd_ps(a1, weights, acc1##v); \
    if constexpr (kPixels > 2) acc2##v = _mm256_fmadd_ps(a2, weights, acc2##v); \
  }
    ORKNN_STEP(0)
    ORKNN_STEP(1)
    ORKNN_STEP(2)
    ORKNN_STEP(3)
#undef ORKNN_STEP
    a += a_stride;
    b += kLaneChannels;
  }
#define ORKNN_STORE(p, v) \
  if constexpr (kPixels > p) _mm256_store_ps(sums + p * kLaneChannels + 8 * v, acc##p##v);
  ORKNN_FOR_EACH_VECTOR(ORKNN_STORE, 0)
  ORKNN_FOR_EACH_VECTOR(ORKNN_STORE, 1)
  ORKNN_FOR_EACH_VECTOR(ORKNN_STORE, 2)
#undef ORKNN_STORE
#undef ORKNN_FOR_EACH_VECTOR
}

// One group of kPixels from `pixel`, prefetching from `prefetch` when it is not null.
template <size_t kPixels>
ORKNN_TARGET_AVX2 void group(const float* a, size_t pixels, const float* b, size_t steps,
                             bool start, float* sums, size_t pixel, const float* prefetch) {
  if (prefetch) {
    group_steps<kPixels, true>(a + pixel, pixels, b, steps, start, sums + pixel * kLaneChannels,
                               prefetch);
  } else {
    group_steps<kPixels, false>(a + pixel, pixels, b, steps, start, sums + pixel * kLaneChannels,
                                nullptr);
  }
}

// The sums of the tile's pixels ([pixel][32]) to c ([channel][pixel]), bias and activation
// added, as 8 channels x 8 pixels blocks.
ORKNN_TARGET_AVX2 void store_transposed(const LaneFloatTile& tile, const float* sums) {
  const bool activated = tile.activation != nullptr;
  VectorActivation activation{};
  if (activated) activation = broadcast_activation(*tile.activation);
  for (size_t channel = 0; channel < tile.channels; channel += 8) {
    const size_t channels = tile.channels - channel < 8 ? tile.channels - channel : 8;
    for (size_t pixel = 0; pixel < tile.pixels; pixel += 8) {
      const size_t pixels = tile.pixels - pixel < 8 ? tile.pixels - pixel : 8;
      __m256 rows[8];
      for (size_t p = 0; p < 8; ++p) {
        rows[p] = p < pixels ? _mm256_load_ps(sums + (pixel + p) * kLaneChannels + channel)
                             : _mm256_setzero_ps();
      }
      transpose8x8(rows);
      const __m256i store = first_lanes(pixels);
      for (size_t j = 0; j < channels; ++j) {
        __m256 values = rows[j];
        if (tile.bias) values = _mm256_add_ps(values, _mm256_set1_ps(tile.bias[channel + j]));
        if (activated) values = activate(activation, values);
        float* out = tile.c + (channel + j) * tile.c_stride + pixel;
        if (pixels == 8) {
          _mm256_storeu_ps(out, values);
        } else {
          _mm256_maskstore_ps(out, store, values);
        }
      }
    }
  }
}

// One chunk of depth steps for every pixel group of the tile. With `prefetch` (a whole chunk
// follows), the groups ask for the next chunk a line per step, spread over them: the first
// two for its weights (2 lines per step), the third for its panel (under a line per step).
ORKNN_TARGET_AVX2 void chunk_groups(const LaneFloatTile& tile, const float* a, const float* b,
                                    size_t steps, bool start, float* sums, bool prefetch) {
  const size_t pixels = tile.pixels;
  const float* lines[3] = {nullptr, nullptr, nullptr};
  if (prefetch) {
    lines[0] = b + steps * kLaneChannels;
    lines[1] = lines[0] + steps * 16;
    lines[2] = a + steps * pixels;
  }
  size_t pixel = 0;
  size_t index = 0;
  auto next_lines = [&]() { return index < 3 ? lines[index++] : nullptr; };
  // Groups of 3 while more than 4 pixels are left (4 = 2 + 2, not 3 + 1).
  while (pixels - pixel > 4 || pixels - pixel == 3) {
    group<3>(a, pixels, b, steps, start, sums, pixel, next_lines());
    pixel += 3;
  }
  while (pixels - pixel >= 2) {
    group<2>(a, pixels, b, steps, start, sums, pixel, next_lines());
    pixel += 2;
  }
  if (pixel < pixels) group<1>(a, pixels, b, steps, start, sums, pixel, next_lines());
}

}  // namespace

ORKNN_TARGET_AVX2 void avx2_lane_float_tile(const LaneFloatTile& tile) {
  alignas(32) float sums[kMaxPixels * kLaneChannels];
  const float* a = tile.a;
  const float* b = tile.b;
  for (size_t step = 0; step < tile.depth; step += kChunkSteps) {
    const size_t steps = tile.depth - step < kChunkSteps ? tile.depth - step : kChunkSteps;
    // The next chunk is prefetched when it is a whole one (the prefetch reads as far as this one).
    const bool prefetch = tile.depth - step - steps >= steps;
    chunk_groups(tile, a, b, steps, step == 0, sums, prefetch);
    a += steps * tile.pixels;
    b += steps * kLaneChannels;
  }
  if (tile.depth == 0) {
    for (size_t i = 0; i < kMaxPixels * kLaneChannels; ++i) sums[i] = 0.0f;
  }
  store_transposed(tile, sums);
}

namespace {

// The packing of a panel whose offsets are not one run: one load per pixel. Compiled for the
// baseline (no target attribute): with AVX2, GCC turns this loop into vgatherdps, which measured
// as slow as the explicit gathers below.
void pack_pixels(const LanePanelPacking& packing) {
  const size_t pixels = packing.pixels;
  const int32_t* offsets = packing.pixel_offsets;
  float* out = packing.out;
  for (size_t channel = 0; channel < packing.channels; ++channel) {
    const float* plane = packing.planes + channel * packing.plane_stride;
    for (size_t tap = 0; tap < packing.taps; ++tap) {
      const float* origin = plane + packing.tap_offsets[tap];
      for (size_t p = 0; p < pixels; ++p) out[p] = origin[offsets[p]];
      out += pixels;
    }
  }
}

}  // namespace

// A panel's pixels read their planes at offsets that are fixed across channels and taps. When
// they are consecutive (a pointwise stride-1 layer: the panel is a run of its plane), each step
// is a copy of `pixels` floats: masked loads (a lane past the run may be past the planes), and
// whole 8- or 16-float stores whose lanes past the step later steps overwrite (vmaskmovps stores
// are slow on AMD), the last steps' pixels one by one (no store past the panel). Otherwise one load
// per pixel: two masked 8-lane gathers per step measured 1.8-2.2x slower than that on Zen 3 (221
// against 122 us for the 3x3 512 @7 layer's panels).
ORKNN_TARGET_AVX2 void avx2_pack_lane_panel(const LanePanelPacking& packing) {
  const size_t pixels = packing.pixels;
  const int32_t* offsets = packing.pixel_offsets;
  bool consecutive = true;
  for (size_t p = 1; p < pixels; ++p) {
    consecutive = consecutive && offsets[p] == offsets[0] + static_cast<int32_t>(p);
  }
  if (!consecutive) return pack_pixels(packing);
  const __m256i low = first_lanes(pixels);
  const __m256i high = first_lanes(pixels > 8 ? pixels - 8 : 0);
  float* out = packing.out;
  const float* const end = out + packing.channels * packing.taps * pixels;
  const size_t stored = pixels > 8 ? 16 : 8;  // floats a step's whole-vector stores write
  for (size_t channel = 0; channel < packing.channels; ++channel) {
    const float* plane = packing.planes + channel * packing.plane_stride + offsets[0];
    for (size_t tap = 0; tap < packing.taps; ++tap) {
      const float* run = plane + packing.tap_offsets[tap];
      if (end - out < static_cast<ptrdiff_t>(stored)) {
        for (size_t p = 0; p < pixels; ++p) out[p] = run[p];
      } else {
        _mm256_storeu_ps(out, _mm256_maskload_ps(run, low));
        if (pixels > 8) _mm256_storeu_ps(out + 8, _mm256_maskload_ps(run + 8, high));
      }
      out += pixels;
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
