// The avx2 table's GEMM tiles: the 6 x 16 float tile (FMA), the 6 x 16 int16-pair tile
// (vpmaddwd) and the packing of int8 rows into that tile's pairs.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"
#include "x86/avx2_micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::VectorActivation;

// The tiles keep their accumulators in named variables (not arrays, which GCC leaves in
// memory), one pair per row, and handle rows >= kRows with `if constexpr`.
#define ORKNN_FOR_EACH_ROW(MACRO) MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5)

// kVectors = 1 computes only the first 8 columns (tiles of at most 8 real columns).
template <size_t kRows, size_t kVectors>
void float_tile_rows(const FloatTile& tile) {
  // Partial tiles (fewer than 16 columns) run on a staging copy of C.
  alignas(32) float staging[kRows * kFloatColumns];
  alignas(32) float column_bias[kFloatColumns];
  const bool partial = tile.columns < kFloatColumns;
  float* c = tile.c;
  size_t c_stride = tile.c_stride;
  if (partial) {
    if (tile.accumulate) {
      for (size_t r = 0; r < kRows; ++r) {
        for (size_t j = 0; j < kFloatColumns; ++j) {
          staging[r * kFloatColumns + j] = j < tile.columns ? tile.c[r * tile.c_stride + j] : 0.0f;
        }
      }
    }
    c = staging;
    c_stride = kFloatColumns;
  }

#define ORKNN_DECLARE(r)               \
  __m256 low##r = _mm256_setzero_ps(); \
  __m256 high##r = _mm256_setzero_ps();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  if (tile.accumulate) {
#define ORKNN_LOAD(r)                                                             \
  if constexpr (kRows > r) {                                                      \
    low##r = _mm256_loadu_ps(c + r * c_stride);                                   \
    if constexpr (kVectors == 2) high##r = _mm256_loadu_ps(c + r * c_stride + 8); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_LOAD)
#undef ORKNN_LOAD
  } else {
    __m256 bias_low = _mm256_setzero_ps();
    __m256 bias_high = _mm256_setzero_ps();
    if (tile.column_bias) {
      for (size_t j = 0; j < kFloatColumns; ++j) {
        column_bias[j] = j < tile.columns ? tile.column_bias[j] : 0.0f;
      }
      bias_low = _mm256_load_ps(column_bias);
      bias_high = _mm256_load_ps(column_bias + 8);
    }
    const float* row_bias = tile.row_bias;
#define ORKNN_INIT(r)                                                                \
  if constexpr (kRows > r) {                                                         \
    const __m256 row = row_bias ? _mm256_set1_ps(row_bias[r]) : _mm256_setzero_ps(); \
    low##r = _mm256_add_ps(row, bias_low);                                           \
    high##r = _mm256_add_ps(row, bias_high);                                         \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_INIT)
#undef ORKNN_INIT
  }

  const float* a = tile.a;
  const float* b = tile.b;
  const size_t b_stride = tile.b_stride;
  for (size_t k = tile.depth; k > 0; --k) {
    const __m256 b_low = _mm256_loadu_ps(b);
    const __m256 b_high = kVectors == 2 ? _mm256_loadu_ps(b + 8) : b_low;
#define ORKNN_STEP(r)                                                               \
  if constexpr (kRows > r) {                                                        \
    const __m256 a_row = _mm256_broadcast_ss(a + r);                                \
    low##r = _mm256_fmadd_ps(a_row, b_low, low##r);                                 \
    if constexpr (kVectors == 2) high##r = _mm256_fmadd_ps(a_row, b_high, high##r); \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_STEP)
#undef ORKNN_STEP
    a += kFloatRows;
    b += b_stride;
  }

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
#define ORKNN_STORE(r)                                                            \
  if constexpr (kRows > r) {                                                      \
    _mm256_storeu_ps(c + r * c_stride, low##r);                                   \
    if constexpr (kVectors == 2) _mm256_storeu_ps(c + r * c_stride + 8, high##r); \
  }
  ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
  if (partial) {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t j = 0; j < tile.columns; ++j) {
        tile.c[r * tile.c_stride + j] = staging[r * kFloatColumns + j];
      }
    }
  }
}

// The lanes of one panel's column before its first step: C's rows when accumulating, else each
// row's bias plus the column's (float_tile's one addition), 0 past the panel's rows.
__m256 column_start(const FloatTile& tile) {
  alignas(32) float lanes[8] = {};
  const size_t rows = tile.rows < kFloatRows ? tile.rows : kFloatRows;
  for (size_t r = 0; r < rows; ++r) {
    if (tile.accumulate) {
      lanes[r] = tile.c[r * tile.c_stride];
    } else {
      const float row = tile.row_bias ? tile.row_bias[r] : 0.0f;
      lanes[r] = row + (tile.column_bias ? tile.column_bias[0] : 0.0f);
    }
  }
  return _mm256_load_ps(lanes);
}

// The panel's sums after its last step: the activation, then its real rows into C's column.
void column_finish(const FloatTile& tile, __m256 sums) {
  if (tile.activation) sums = activate(broadcast_activation(*tile.activation), sums);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  const size_t rows = tile.rows < kFloatRows ? tile.rows : kFloatRows;
  for (size_t r = 0; r < rows; ++r) tile.c[r * tile.c_stride] = lanes[r];
}

// Tiles of one real column (a 7x7 plane's last panel: 49 = 3 x 16 + 1 pixels). The 8-column form
// runs 6 FMAs per depth step for one column, about a fifth of a 7x7 pointwise layer's tile time
// (session 15). The column tiles (float_column_tiles) put a row panel's six rows in the lanes
// instead: per depth step the 8 floats from the step's start in the A panel (rows 0-5, then the
// next step's rows 0-1 in lanes 6-7, never stored) times the column's B value broadcast, one FMA.
// Each row's sum starts from C or its bias and takes every depth step in order, as in float_tile (C
// first, then each step's product added by one FMA), so the bits are float_tile's: the one-row Gemm
// path and the depth chunking rely on that order (test_optimized_matrix). One panel's FMAs form one
// chain, latency-bound at 4 cycles per step, which the 8-column form reaches too; so a call takes
// up to four row panels on the same B panel, four independent chains, 24 rows per step (a one-panel
// form with four accumulators over consecutive steps was faster still but changed that order, and
// was reverted). The last step loads through a mask, so nothing past an A panel is read.
template <size_t kPanels>
void column_panels(const FloatTile* tiles) {
  const float* b = tiles[0].b;
  const size_t b_stride = tiles[0].b_stride;
  const size_t depth = tiles[0].depth;
#define ORKNN_FOR_EACH_PANEL(MACRO) MACRO(0) MACRO(1) MACRO(2) MACRO(3)
#define ORKNN_START(p)                  \
  __m256 sums##p = _mm256_setzero_ps(); \
  const float* a##p = nullptr;          \
  if constexpr (kPanels > p) {          \
    sums##p = column_start(tiles[p]);   \
    a##p = tiles[p].a;                  \
  }
  ORKNN_FOR_EACH_PANEL(ORKNN_START)
#undef ORKNN_START
  // Whole 8-float loads while the next step exists (they read two of its floats).
  size_t k = 0;
  for (; k + 1 < depth; ++k) {
    const __m256 column = _mm256_broadcast_ss(b + k * b_stride);
#define ORKNN_STEP(p)        \
  if constexpr (kPanels > p) \
    sums##p = _mm256_fmadd_ps(_mm256_loadu_ps(a##p + k * kFloatRows), column, sums##p);
    ORKNN_FOR_EACH_PANEL(ORKNN_STEP)
#undef ORKNN_STEP
  }
  if (k < depth) {
    const __m256 column = _mm256_broadcast_ss(b + k * b_stride);
    const __m256i six_rows = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
#define ORKNN_LAST(p)                                                                          \
  if constexpr (kPanels > p) {                                                                 \
    sums##p =                                                                                  \
        _mm256_fmadd_ps(_mm256_maskload_ps(a##p + k * kFloatRows, six_rows), column, sums##p); \
  }
    ORKNN_FOR_EACH_PANEL(ORKNN_LAST)
#undef ORKNN_LAST
  }
#define ORKNN_FINISH(p) \
  if constexpr (kPanels > p) column_finish(tiles[p], sums##p);
  ORKNN_FOR_EACH_PANEL(ORKNN_FINISH)
#undef ORKNN_FINISH
#undef ORKNN_FOR_EACH_PANEL
}

template <size_t kVectors>
void float_tile_vectors(const FloatTile& tile) {
  switch (tile.rows) {
    case 1:
      return float_tile_rows<1, kVectors>(tile);
    case 2:
      return float_tile_rows<2, kVectors>(tile);
    case 3:
      return float_tile_rows<3, kVectors>(tile);
    case 4:
      return float_tile_rows<4, kVectors>(tile);
    case 5:
      return float_tile_rows<5, kVectors>(tile);
    default:
      return float_tile_rows<6, kVectors>(tile);
  }
}

template <size_t kRows, size_t kVectors>
void int16_pair_tile_rows(const Int16PairTile& tile) {
  alignas(32) int32_t staging[kRows * kIntColumns];
  alignas(32) int32_t column_bias[kIntColumns];
  const bool partial = tile.columns < kIntColumns;
  int32_t* c = tile.c;
  size_t c_stride = tile.c_stride;
  if (partial) {
    if (tile.accumulate) {
      for (size_t r = 0; r < kRows; ++r) {
        for (size_t j = 0; j < kIntColumns; ++j) {
          staging[r * kIntColumns + j] = j < tile.columns ? tile.c[r * tile.c_stride + j] : 0;
        }
      }
    }
    c = staging;
    c_stride = kIntColumns;
  }

#define ORKNN_DECLARE(r)                   \
  __m256i low##r = _mm256_setzero_si256(); \
  __m256i high##r = _mm256_setzero_si256();
  ORKNN_FOR_EACH_ROW(ORKNN_DECLARE)
#undef ORKNN_DECLARE
  if (tile.accumulate) {
#define ORKNN_LOAD(r)                                                                       \
  if constexpr (kRows > r) {                                                                \
    low##r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * c_stride));        \
    if constexpr (kVectors == 2) {                                                          \
      high##r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + r * c_stride + 8)); \
    }                                                                                       \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_LOAD)
#undef ORKNN_LOAD
  } else {
    __m256i bias_low = _mm256_setzero_si256();
    __m256i bias_high = _mm256_setzero_si256();
    if (tile.column_bias) {
      for (size_t j = 0; j < kIntColumns; ++j) {
        column_bias[j] = j < tile.columns ? tile.column_bias[j] : 0;
      }
      bias_low = _mm256_load_si256(reinterpret_cast<const __m256i*>(column_bias));
      bias_high = _mm256_load_si256(reinterpret_cast<const __m256i*>(column_bias + 8));
    }
    const int32_t* row_bias = tile.row_bias;
#define ORKNN_INIT(r)                                                                       \
  if constexpr (kRows > r) {                                                                \
    const __m256i row = row_bias ? _mm256_set1_epi32(row_bias[r]) : _mm256_setzero_si256(); \
    low##r = _mm256_add_epi32(row, bias_low);                                               \
    high##r = _mm256_add_epi32(row, bias_high);                                             \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_INIT)
#undef ORKNN_INIT
  }

  const int16_t* a = tile.a;
  const int16_t* b = tile.b;
  for (size_t p = tile.depth_pairs; p > 0; --p) {
    const __m256i b_low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b_high =
        kVectors == 2 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16)) : b_low;
    // The pair (w[r][2p], w[r][2p + 1]) in every 32-bit lane: a load-port broadcast.
#define ORKNN_STEP(r)                                                                        \
  if constexpr (kRows > r) {                                                                 \
    const __m256i a_pair =                                                                   \
        _mm256_castps_si256(_mm256_broadcast_ss(reinterpret_cast<const float*>(a + 2 * r))); \
    low##r = _mm256_add_epi32(low##r, _mm256_madd_epi16(b_low, a_pair));                     \
    if constexpr (kVectors == 2) {                                                           \
      high##r = _mm256_add_epi32(high##r, _mm256_madd_epi16(b_high, a_pair));                \
    }                                                                                        \
  }
    ORKNN_FOR_EACH_ROW(ORKNN_STEP)
#undef ORKNN_STEP
    a += 2 * kIntRows;
    b += 2 * kIntColumns;
  }

#define ORKNN_STORE(r)                                                                \
  if constexpr (kRows > r) {                                                          \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * c_stride), low##r);        \
    if constexpr (kVectors == 2) {                                                    \
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + r * c_stride + 8), high##r); \
    }                                                                                 \
  }
  ORKNN_FOR_EACH_ROW(ORKNN_STORE)
#undef ORKNN_STORE
  if (partial) {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t j = 0; j < tile.columns; ++j) {
        tile.c[r * tile.c_stride + j] = staging[r * kIntColumns + j];
      }
    }
  }
}
#undef ORKNN_FOR_EACH_ROW

template <size_t kVectors>
void int16_pair_tile_vectors(const Int16PairTile& tile) {
  switch (tile.rows) {
    case 1:
      return int16_pair_tile_rows<1, kVectors>(tile);
    case 2:
      return int16_pair_tile_rows<2, kVectors>(tile);
    case 3:
      return int16_pair_tile_rows<3, kVectors>(tile);
    case 4:
      return int16_pair_tile_rows<4, kVectors>(tile);
    case 5:
      return int16_pair_tile_rows<5, kVectors>(tile);
    default:
      return int16_pair_tile_rows<6, kVectors>(tile);
  }
}

// 16 columns of two int16 rows -> one panel step of pairs [x0 y0 x1 y1 ... x15 y15].
inline void store_pairs16(__m256i first, __m256i second, int16_t* out) {
  const __m256i low = _mm256_unpacklo_epi16(first, second);   // columns 0-3 | 8-11
  const __m256i high = _mm256_unpackhi_epi16(first, second);  // columns 4-7 | 12-15
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(low, high, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16),
                      _mm256_permute2x128_si256(low, high, 0x31));
}

inline __m256i widen16(const int8_t* values, __m256i zero_point) {
  return _mm256_sub_epi16(
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(values))), zero_point);
}

}  // namespace

void float_column_tiles(const FloatTile* tiles, size_t count) {
  static_assert(kFloatColumnTileGroup == 4, "column_panels names four panels");
  switch (count) {
    case 1:
      return column_panels<1>(tiles);
    case 2:
      return column_panels<2>(tiles);
    case 3:
      return column_panels<3>(tiles);
    default:
      return column_panels<4>(tiles);
  }
}

void float_tile(const FloatTile& tile) {
  if (tile.columns <= 8) return float_tile_vectors<1>(tile);
  float_tile_vectors<2>(tile);
}

void int16_pair_tile(const Int16PairTile& tile) {
  if (tile.columns <= 8) return int16_pair_tile_vectors<1>(tile);
  int16_pair_tile_vectors<2>(tile);
}

void pack_int8_pairs(const Int8PairRows& rows) {
  const __m256i zero_point = _mm256_set1_epi16(static_cast<int16_t>(rows.zero_point));
  size_t column = 0;
  int16_t* out = rows.out;
  for (; column + kIntColumns <= rows.columns; column += kIntColumns, out += rows.panel_stride) {
    const __m256i first = widen16(rows.row0 + column, zero_point);
    const __m256i second =
        rows.row1 ? widen16(rows.row1 + column, zero_point) : _mm256_setzero_si256();
    store_pairs16(first, second, out);
  }
  if (column == rows.columns) return;
  // The last partial panel, staged; lanes past the columns are zero.
  alignas(16) int8_t row0[kIntColumns] = {};
  alignas(16) int8_t row1[kIntColumns] = {};
  const size_t rest = rows.columns - column;
  for (size_t j = 0; j < rest; ++j) {
    row0[j] = rows.row0[column + j];
    if (rows.row1) row1[j] = rows.row1[column + j];
  }
  const __m256i lanes = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i real = _mm256_cmpgt_epi16(_mm256_set1_epi16(static_cast<int16_t>(rest)), lanes);
  const __m256i first = _mm256_and_si256(widen16(row0, zero_point), real);
  const __m256i second =
      rows.row1 ? _mm256_and_si256(widen16(row1, zero_point), real) : _mm256_setzero_si256();
  store_pairs16(first, second, out);
}

}  // namespace orknn::kernels::cpu::optimized::avx2
