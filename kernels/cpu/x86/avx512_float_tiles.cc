// The AVX-512 float32 GEMM tile of the "avx512" variant (micro_kernels.h FloatTile): 12 rows x
// 32 columns, 24 zmm accumulators (two per row), two B vectors and one broadcast of A per depth
// step, 24 FMAs per 14 loads. avx2's 6 x 16 tile does 12 FMAs per 8 loads and, in a model,
// re-reads each B panel from L2 for every 6 weight rows; here B is read once per 12 rows and
// A once per 32 columns, which halves the L2 traffic per FMA (Zen 4 runs a zmm FMA as two
// halves, so the peak is the same and what changes is how often the tile waits for L2).
//
// Each output is the same sequence of IEEE operations as in the AVX2 tile (the bias, then one
// FMA per depth step in order, then the activation), so both give the same bits.
//
// Every function carries its instruction set as a target attribute, so the file is compiled for
// the baseline x86-64 and the dispatcher calls it only after cpu_features reported AVX-512
// F/BW/VL (dispatch.cc). No standard-library templates or inline functions here (see
// avx512_vnni_tiles.cc). GCC 12's unmasked max/min/mul intrinsics start from an "undefined"
// vector and trip -Wmaybe-uninitialized, so this file uses their maskz forms with every lane set.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx512_prefetch.h"

#define ORKNN_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kTileRows = 12;
constexpr size_t kTileColumns = 32;
constexpr __mmask16 kAllLanes = 0xFFFF;

// The accumulators are named variables (GCC keeps arrays of vectors in memory); rows past kRows
// are compiled out with `if constexpr`.
// clang-format off
#define ORKNN_FOR_EACH_ROW(MACRO) \
  MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5) MACRO(6) MACRO(7) MACRO(8) MACRO(9) \
  MACRO(10) MACRO(11)
// clang-format on

// Lanes of one column vector that hold real columns: `columns` from its first.
ORKNN_TARGET_AVX512 __mmask16 lane_mask(size_t columns) {
  if (columns >= 16) return kAllLanes;
  return static_cast<__mmask16>((1u << columns) - 1u);
}

struct VectorActivation {
  __m512 minimum;
  __m512 maximum;
  __m512 leaky_alpha;
  bool leaky;
};

ORKNN_TARGET_AVX512 VectorActivation broadcast_activation(const FloatActivation& activation) {
  return VectorActivation{_mm512_set1_ps(activation.minimum), _mm512_set1_ps(activation.maximum),
                          _mm512_set1_ps(activation.leaky_alpha), activation.leaky};
}

// As the AVX2 tile's activate(): the leaky slope on negatives, then max(minimum, value) and
// min(maximum, value) with the value second, which keeps a NaN value as std::max/std::min do.
ORKNN_TARGET_AVX512 __m512 activate(const VectorActivation& activation, __m512 value) {
  if (activation.leaky) {
    const __mmask16 negative = _mm512_cmp_ps_mask(value, _mm512_setzero_ps(), _CMP_LT_OQ);
    value = _mm512_mask_mul_ps(value, negative, value, activation.leaky_alpha);
  }
  value = _mm512_maskz_max_ps(kAllLanes, activation.minimum, value);
  return _mm512_maskz_min_ps(kAllLanes, activation.maximum, value);
}

// The low 256 bits of a zmm (its ymm subregister: no instruction), and a ymm widened with zeros.
// Not the cast intrinsics: GCC 12's trip -Wmaybe-uninitialized (see the top).
ORKNN_TARGET_AVX512 __m256 low_half(__m512 vector) {
  const __v16sf lanes = reinterpret_cast<__v16sf>(vector);
  return reinterpret_cast<__m256>(__builtin_shufflevector(lanes, lanes, 0, 1, 2, 3, 4, 5, 6, 7));
}
ORKNN_TARGET_AVX512 __m512 widened(__m256 vector) {
  return _mm512_castpd_ps(
      _mm512_maskz_insertf64x4(0xFF, _mm512_setzero_pd(), _mm256_castps_pd(vector), 0));
}

// kRows real rows (1..kTileRows) by kLanes columns: 32 on two zmm per row, 24 on a zmm and a
// ymm, 16 on a zmm, 8 on a ymm. Zen 4 runs a ymm FMA in half a zmm one's time, so a 14x14
// plane's last panel of 4 pixels costs a quarter of a full panel instead of half, and a 7x7
// plane's second panel of 17 three quarters instead of all. Only the depth loop runs on the
// ymm; the bias before it and everything after it work on zmm, whose extra lanes are never
// stored. Masked loads and stores touch exactly the real columns of C and of the column bias,
// so partial tiles need no staging copy.
template <size_t kRows, size_t kLanes>
ORKNN_TARGET_AVX512 void float_tile_rows(const FloatTile& tile) {
  constexpr size_t kVectors = kLanes > 16 ? 2 : 1;
  constexpr bool kNarrowLow = kLanes == 8;    // the ymm holds columns 0-7
  constexpr bool kNarrowHigh = kLanes == 24;  // the ymm holds columns 16-23
  const __mmask16 mask_low = lane_mask(tile.columns);
  const __mmask16 mask_high = lane_mask(tile.columns > 16 ? tile.columns - 16 : 0);
  float* c = tile.c;
  const size_t c_stride = tile.c_stride;

#define ORKNN_DECLARE(r)               \
  __m512 low##r = _mm512_setzero_ps(); \
  __m512 high##r = _mm512_setzero_ps();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  if (tile.accumulate) {
#define ORKNN_LOAD(r)                                                    \
  if constexpr (kRows > r) {                                             \
    low##r = _mm512_maskz_loadu_ps(mask_low, c + r * c_stride);          \
    if constexpr (kVectors == 2) {                                       \
      high##r = _mm512_maskz_loadu_ps(mask_high, c + r * c_stride + 16); \
    }                                                                    \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_LOAD)
#undef ORKNN_LOAD
  } else {
    __m512 bias_low = _mm512_setzero_ps();
    __m512 bias_high = _mm512_setzero_ps();
    if (tile.column_bias) {
      bias_low = _mm512_maskz_loadu_ps(mask_low, tile.column_bias);
      bias_high = _mm512_maskz_loadu_ps(mask_high, tile.column_bias + 16);
    }
    const float* row_bias = tile.row_bias;
#define ORKNN_INIT(r)                                                                \
  if constexpr (kRows > r) {                                                         \
    const __m512 row = row_bias ? _mm512_set1_ps(row_bias[r]) : _mm512_setzero_ps(); \
    low##r = _mm512_add_ps(row, bias_low);                                           \
    high##r = _mm512_add_ps(row, bias_high);                                         \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_INIT)
#undef ORKNN_INIT
  }

  if (tile.residual) {
    // Its rows are read after the depth loop: ask for them now, so that the loop hides their
    // trip from L3 or memory (the residual is a block's input, read one block earlier).
    const char* residual = reinterpret_cast<const char*>(tile.residual);
    for (size_t r = 0; r < kRows; ++r) {
      const char* line = residual + r * c_stride * sizeof(float);
      _mm_prefetch(line, _MM_HINT_T0);
      if constexpr (kVectors == 2) _mm_prefetch(line + 64, _MM_HINT_T0);
    }
  }

#define ORKNN_NARROW(r)                                                \
  __m256 narrow##r = _mm256_setzero_ps();                              \
  if constexpr (kRows > r && kNarrowLow) narrow##r = low_half(low##r); \
  if constexpr (kRows > r && kNarrowHigh) narrow##r = low_half(high##r);
  ORKNN_FOR_EACH_ROW(ORKNN_NARROW)
#undef ORKNN_NARROW
  const float* a = tile.a;
  const float* b = tile.b;
  const size_t b_stride = tile.b_stride;
  PrefetchCursor prefetch = prefetch_cursor(tile.prefetch);
  for (size_t k = tile.depth; k > 0; --k) {
    prefetch_line(prefetch);
    __m512 b_low = _mm512_setzero_ps();
    __m512 b_high = _mm512_setzero_ps();
    __m256 b_narrow = _mm256_setzero_ps();
    if constexpr (kNarrowLow) b_narrow = _mm256_loadu_ps(b);
    if constexpr (!kNarrowLow) b_low = _mm512_loadu_ps(b);
    if constexpr (kNarrowHigh) b_narrow = _mm256_loadu_ps(b + 16);
    if constexpr (kLanes == 32) b_high = _mm512_loadu_ps(b + 16);
#define ORKNN_STEP(r)                                                                \
  if constexpr (kRows > r) {                                                         \
    if constexpr (kNarrowLow) {                                                      \
      narrow##r = _mm256_fmadd_ps(_mm256_set1_ps(a[r]), b_narrow, narrow##r);        \
    } else {                                                                         \
      const __m512 a_row = _mm512_set1_ps(a[r]); /* the ymm's is its low half */     \
      low##r = _mm512_fmadd_ps(a_row, b_low, low##r);                                \
      if constexpr (kLanes == 32) high##r = _mm512_fmadd_ps(a_row, b_high, high##r); \
      if constexpr (kNarrowHigh) {                                                   \
        narrow##r = _mm256_fmadd_ps(low_half(a_row), b_narrow, narrow##r);           \
      }                                                                              \
    }                                                                                \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_STEP)
#undef ORKNN_STEP
    a += kTileRows;
    b += b_stride;
  }
#define ORKNN_WIDEN(r)                                                \
  if constexpr (kRows > r && kNarrowLow) low##r = widened(narrow##r); \
  if constexpr (kRows > r && kNarrowHigh) high##r = widened(narrow##r);
  ORKNN_FOR_EACH_ROW(ORKNN_WIDEN)
#undef ORKNN_WIDEN

  if (tile.activation) {
    const VectorActivation activation = broadcast_activation(*tile.activation);
#define ORKNN_ACTIVATE(r)                                                 \
  if constexpr (kRows > r) {                                              \
    low##r = activate(activation, low##r);                                \
    if constexpr (kVectors == 2) high##r = activate(activation, high##r); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_ACTIVATE)
#undef ORKNN_ACTIVATE
  }
  if (tile.residual) {
    const float* residual = tile.residual;
#define ORKNN_ADD_RESIDUAL(r)                                                                     \
  if constexpr (kRows > r) {                                                                      \
    low##r = _mm512_add_ps(low##r, _mm512_maskz_loadu_ps(mask_low, residual + r * c_stride));     \
    if constexpr (kVectors == 2) {                                                                \
      high##r =                                                                                   \
          _mm512_add_ps(high##r, _mm512_maskz_loadu_ps(mask_high, residual + r * c_stride + 16)); \
    }                                                                                             \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_ADD_RESIDUAL)
#undef ORKNN_ADD_RESIDUAL
    if (tile.after) {
      const VectorActivation after = broadcast_activation(*tile.after);
#define ORKNN_ACTIVATE(r)                                            \
  if constexpr (kRows > r) {                                         \
    low##r = activate(after, low##r);                                \
    if constexpr (kVectors == 2) high##r = activate(after, high##r); \
  }
      ORKNN_FOR_EACH_ROW(ORKNN_ACTIVATE)
#undef ORKNN_ACTIVATE
    }
  }
#define ORKNN_STORE(r)                                                                             \
  if constexpr (kRows > r) {                                                                       \
    _mm512_mask_storeu_ps(c + r * c_stride, mask_low, low##r);                                     \
    if constexpr (kVectors == 2) _mm512_mask_storeu_ps(c + r * c_stride + 16, mask_high, high##r); \
  }
  ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
}

template <size_t kLanes>
ORKNN_TARGET_AVX512 void float_tile_lanes(const FloatTile& tile) {
  switch (tile.rows) {
    case 1:
      return float_tile_rows<1, kLanes>(tile);
    case 2:
      return float_tile_rows<2, kLanes>(tile);
    case 3:
      return float_tile_rows<3, kLanes>(tile);
    case 4:
      return float_tile_rows<4, kLanes>(tile);
    case 5:
      return float_tile_rows<5, kLanes>(tile);
    case 6:
      return float_tile_rows<6, kLanes>(tile);
    case 7:
      return float_tile_rows<7, kLanes>(tile);
    case 8:
      return float_tile_rows<8, kLanes>(tile);
    case 9:
      return float_tile_rows<9, kLanes>(tile);
    case 10:
      return float_tile_rows<10, kLanes>(tile);
    case 11:
      return float_tile_rows<11, kLanes>(tile);
    default:
      return float_tile_rows<kTileRows, kLanes>(tile);
  }
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_float_tile(const FloatTile& tile) {
  if (tile.columns <= 8) {
    float_tile_lanes<8>(tile);
  } else if (tile.columns <= 16) {
    float_tile_lanes<16>(tile);
  } else if (tile.columns <= 24) {
    float_tile_lanes<24>(tile);
  } else {
    float_tile_lanes<32>(tile);
  }
}

size_t avx512_float_tile_rows() {
  return kTileRows;
}
size_t avx512_float_tile_columns() {
  return kTileColumns;
}

}  // namespace orknn::kernels::cpu::optimized
