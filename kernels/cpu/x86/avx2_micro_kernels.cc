// AVX2 + FMA micro-kernels (x86-64). This file alone is compiled with -mavx2 -mfma; the
// dispatcher calls into it only after cpu_features reported both.
//
// Rule for this file: no standard-library templates or inline functions (std::min, std::vector,
// std::memcpy, ...). An inline function instantiated here gets AVX encodings, and the linker may
// keep this copy for the whole program, which would then fault on CPUs without AVX. Only
// intrinsics, plain loops and functions in the anonymous namespace.
#include <immintrin.h>

#include "core/reproducible_exp.h"
#include "optimized/binary_operation.h"
#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"
#include "x86/byte_transpose.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// Float tile: 6 rows x 16 columns = 12 ymm accumulators, 2 for B, 1 broadcast of A.
constexpr size_t kFloatRows = 6;
constexpr size_t kFloatColumns = 16;
// int16-pair tile: the same shape in int32 lanes.
constexpr size_t kIntRows = 6;
constexpr size_t kIntColumns = 16;

using avx2_float::activate;
using avx2_float::broadcast_activation;
using avx2_float::transpose8x8;
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

void float_tile(const FloatTile& tile) {
  if (tile.columns <= 8) return float_tile_vectors<1>(tile);
  float_tile_vectors<2>(tile);
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

void int16_pair_tile(const Int16PairTile& tile) {
  if (tile.columns <= 8) return int16_pair_tile_vectors<1>(tile);
  int16_pair_tile_vectors<2>(tile);
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

// Requantizes 8 accumulators exactly as reference::requantize does, in double.
struct RequantizeConstants {
  __m256d lower_bound;
  __m256d upper_bound;
  __m256d zero_point;
  __m256d minimum;
  __m256d maximum;
};

inline __m128i requantize_half(__m256d scaled, const RequantizeConstants& k) {
  // std::min(std::max(scaled, -1e9), 1e9), NaN-preserving like the reference.
  scaled = _mm256_min_pd(k.upper_bound, _mm256_max_pd(k.lower_bound, scaled));
  // nearbyint in the default environment: round half to even.
  __m256d value = _mm256_round_pd(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // Integers below 2^53 add exactly in double, so this equals the reference's int64 sum.
  value = _mm256_add_pd(value, k.zero_point);
  value = _mm256_min_pd(k.maximum, _mm256_max_pd(k.minimum, value));
  return _mm256_cvtpd_epi32(value);  // integral and within [-128, 127]
}

inline void requantize8(const int32_t* accumulators, const float* multipliers, bool per_element,
                        __m256d uniform, const RequantizeConstants& k, int8_t* output) {
  const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators));
  __m256d multiplier_low = uniform;
  __m256d multiplier_high = uniform;
  if (per_element) {
    multiplier_low = _mm256_cvtps_pd(_mm_loadu_ps(multipliers));
    multiplier_high = _mm256_cvtps_pd(_mm_loadu_ps(multipliers + 4));
  }
  const __m256d low =
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values)), multiplier_low);
  const __m256d high =
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values, 1)), multiplier_high);
  const __m128i words = _mm_packs_epi32(requantize_half(low, k), requantize_half(high, k));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(output), _mm_packs_epi16(words, words));
}

// The same when |accumulator x multiplier| < 2^30 (RequantizeRow::small_multipliers): the bound
// is moot, cvtpd_epi32 rounds half to even in the default MXCSR mode exactly as nearbyint does,
// and the zero point and clamp are exact in int32.
struct SmallRequantizeConstants {
  __m256i zero_point;
  __m256i minimum;
  __m256i maximum;
};

inline void requantize8_small(const int32_t* accumulators, const float* multipliers,
                              bool per_element, __m256d uniform, const SmallRequantizeConstants& k,
                              int8_t* output) {
  const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators));
  __m256d multiplier_low = uniform;
  __m256d multiplier_high = uniform;
  if (per_element) {
    multiplier_low = _mm256_cvtps_pd(_mm_loadu_ps(multipliers));
    multiplier_high = _mm256_cvtps_pd(_mm_loadu_ps(multipliers + 4));
  }
  const __m128i low = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values)), multiplier_low));
  const __m128i high = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values, 1)), multiplier_high));
  __m256i rounded = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
  rounded = _mm256_add_epi32(rounded, k.zero_point);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, k.minimum), k.maximum);
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(output), _mm_packs_epi16(words, words));
}

// RequantizeRow::in_float on 16 accumulators: float(acc) x m + 1.5 x 2^23 in one FMA is
// 1.5 x 2^23 + round_half_even(acc x m) (the proof is at Int8TileRequantization::in_float), so
// its bits minus 0x4B400000 are the rounded product; the zero point is subtracted from that
// constant. The int32 -> int16 saturation keeps every value outside [-128, 127] outside it, so
// the clamp on 16-bit lanes is the reference's. Per 16 outputs two conversions, two FMAs and
// two subtractions, where the int32 path takes four conversions to and from double, four
// double products and an insert.
struct FloatRequantizeConstants {
  __m256 multiplier;
  __m256 magic;        // 1.5 x 2^23
  __m256i magic_bits;  // 0x4B400000 - zero point
  __m256i minimum;     // int16 lanes
  __m256i maximum;
};

inline void requantize16_in_float(const int32_t* accumulators, const FloatRequantizeConstants& k,
                                  int8_t* output) {
  const __m256 low =
      _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators)));
  const __m256 high =
      _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators + 8)));
  const __m256i rounded_low = _mm256_sub_epi32(
      _mm256_castps_si256(_mm256_fmadd_ps(low, k.multiplier, k.magic)), k.magic_bits);
  const __m256i rounded_high = _mm256_sub_epi32(
      _mm256_castps_si256(_mm256_fmadd_ps(high, k.multiplier, k.magic)), k.magic_bits);
  // packs works within 128-bit lanes: [l0-3 h0-3 | l4-7 h4-7] -> [l0-7 | h0-7].
  __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(rounded_low, rounded_high), 0xD8);
  words = _mm256_min_epi16(_mm256_max_epi16(words, k.minimum), k.maximum);
  const __m128i bytes =
      _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(output), bytes);
}

// The 16-output steps of an in_float row; returns how many outputs they wrote.
size_t requantize_row_in_float(const RequantizeRow& row) {
  const FloatRequantizeConstants k{_mm256_set1_ps(row.multipliers[0]), _mm256_set1_ps(12582912.0f),
                                   _mm256_set1_epi32(0x4B400000 - row.output_zero_point),
                                   _mm256_set1_epi16(static_cast<int16_t>(row.output_minimum)),
                                   _mm256_set1_epi16(static_cast<int16_t>(row.output_maximum))};
  const int32_t* const accumulators = row.accumulators;
  int8_t* const output = row.output;
  const size_t whole = row.count / 16 * 16;
  for (size_t i = 0; i < whole; i += 16) requantize16_in_float(accumulators + i, k, output + i);
  return whole;
}

// Whether every accumulator of a row with one multiplier is within the float path's promise
// (RequantizeRow::in_float: |acc| <= 2^24 and |acc x m| <= 2^21; the limit as
// float_requantization_accumulator_limit computes it, written out here because this file calls
// no header inlines): the row's real sums, checked in one pass of loads, when the caller's
// worst case (from the weights alone) could not promise it.
bool accumulators_within_float_limit(const RequantizeRow& row) {
  const double multiplier = __builtin_fabs(static_cast<double>(row.multipliers[0]));
  if (!(multiplier <= 1.0)) return false;
  double limit = 16777216.0;
  if (multiplier > 0.0 && __builtin_floor(2097152.0 / multiplier) < limit) {
    limit = __builtin_floor(2097152.0 / multiplier);
  }
  const auto bound = static_cast<uint32_t>(limit);
  __m256i largest = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= row.count; i += 8) {
    const __m256i values =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.accumulators + i));
    largest = _mm256_max_epu32(largest, _mm256_abs_epi32(values));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), largest);
  uint32_t result = 0;
  for (uint32_t lane : lanes) result = lane > result ? lane : result;
  for (; i < row.count; ++i) {
    const auto value = static_cast<uint32_t>(row.accumulators[i]);
    const uint32_t magnitude = row.accumulators[i] < 0 ? 0u - value : value;
    result = magnitude > result ? magnitude : result;
  }
  return result <= bound;
}

void requantize_row(const RequantizeRow& row) {
  const RequantizeConstants k{_mm256_set1_pd(-1e9), _mm256_set1_pd(1e9),
                              _mm256_set1_pd(static_cast<double>(row.output_zero_point)),
                              _mm256_set1_pd(static_cast<double>(row.output_minimum)),
                              _mm256_set1_pd(static_cast<double>(row.output_maximum))};
  // min(max(v, low), high) with low > high gives high, as the reference's clamp does.
  const int32_t minimum =
      row.output_minimum <= row.output_maximum ? row.output_minimum : row.output_maximum;
  const SmallRequantizeConstants small{_mm256_set1_epi32(row.output_zero_point),
                                       _mm256_set1_epi32(minimum),
                                       _mm256_set1_epi32(row.output_maximum)};
  const __m256d uniform = _mm256_set1_pd(static_cast<double>(row.multipliers[0]));
  // Locals, and one loop per case: the int8 stores may alias anything, so fields read through
  // `row` would be reloaded (and per_element tested) on every step.
  const int32_t* const accumulators_in = row.accumulators;
  const float* const multipliers_in = row.multipliers;
  int8_t* const output_out = row.output;
  const size_t whole = row.count / 8 * 8;
  // An in_float row's 16-output steps first (their clamp runs on 16-bit lanes: the output range
  // must be int8's); the rest, fewer than 16, on the paths below, which give the same bytes.
  // Rows of 16 or more that the caller could not promise are checked on their real sums.
  const bool in_float = !row.per_element && row.output_minimum >= -128 &&
                        row.output_maximum <= 127 && row.output_minimum <= row.output_maximum &&
                        row.output_zero_point >= -128 && row.output_zero_point <= 127 &&
                        (row.in_float || (row.count >= 16 && accumulators_within_float_limit(row)));
  size_t i = in_float ? requantize_row_in_float(row) : 0;
  if (row.small_multipliers && row.per_element) {
    for (; i < whole; i += 8) {
      requantize8_small(accumulators_in + i, multipliers_in + i, true, uniform, small,
                        output_out + i);
    }
  } else if (row.small_multipliers) {
    for (; i < whole; i += 8) {
      requantize8_small(accumulators_in + i, multipliers_in, false, uniform, small, output_out + i);
    }
  } else {
    for (; i < whole; i += 8) {
      requantize8(accumulators_in + i, multipliers_in + (row.per_element ? i : 0), row.per_element,
                  uniform, k, output_out + i);
    }
  }
  if (i == row.count) return;
  if (row.count >= 8) {
    // One more vector ending at the row's end: it recomputes a few outputs with the same
    // inputs (the same values), instead of a staged copy.
    const size_t last = row.count - 8;
    if (row.small_multipliers) {
      requantize8_small(accumulators_in + last, multipliers_in + (row.per_element ? last : 0),
                        row.per_element, uniform, small, output_out + last);
    } else {
      requantize8(accumulators_in + last, multipliers_in + (row.per_element ? last : 0),
                  row.per_element, uniform, k, output_out + last);
    }
    return;
  }
  alignas(32) int32_t accumulators[8] = {};
  alignas(32) float multipliers[8] = {};
  alignas(16) int8_t output[8];
  const size_t rest = row.count - i;
  for (size_t t = 0; t < rest; ++t) {
    accumulators[t] = row.accumulators[i + t];
    if (row.per_element) multipliers[t] = row.multipliers[i + t];
  }
  if (row.small_multipliers) {
    requantize8_small(accumulators, multipliers, row.per_element, uniform, small, output);
  } else {
    requantize8(accumulators, multipliers, row.per_element, uniform, k, output);
  }
  for (size_t t = 0; t < rest; ++t) row.output[i + t] = output[t];
}

// Stores 8 outputs, or the first `count` of them through a staging copy.
inline void store_outputs(float* output, __m256 value, size_t count) {
  if (count >= 8) {
    _mm256_storeu_ps(output, value);
    return;
  }
  alignas(32) float staging[8];
  _mm256_store_ps(staging, value);
  for (size_t t = 0; t < count; ++t) output[t] = staging[t];
}

// 3x3, dilation 1: nine weights in registers, one partial sum per kernel row (three short FMA
// chains instead of one of nine), two vectors of outputs per step.
void depthwise_plane_3x3(const DepthwisePlane& plane) {
  const bool has_activation = plane.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*plane.activation);
  const __m256 w00 = _mm256_broadcast_ss(plane.weights + 0);
  const __m256 w01 = _mm256_broadcast_ss(plane.weights + 1);
  const __m256 w02 = _mm256_broadcast_ss(plane.weights + 2);
  const __m256 w10 = _mm256_broadcast_ss(plane.weights + 3);
  const __m256 w11 = _mm256_broadcast_ss(plane.weights + 4);
  const __m256 w12 = _mm256_broadcast_ss(plane.weights + 5);
  const __m256 w20 = _mm256_broadcast_ss(plane.weights + 6);
  const __m256 w21 = _mm256_broadcast_ss(plane.weights + 7);
  const __m256 w22 = _mm256_broadcast_ss(plane.weights + 8);
  const __m256 bias = _mm256_set1_ps(plane.bias);
  const size_t s = plane.stride_width;
  // Tap column j reads phase j % s at offset j / s.
  const size_t phase1 = (1 % s) * plane.phase_stride, offset1 = 1 / s;
  const size_t phase2 = (2 % s) * plane.phase_stride, offset2 = 2 / s;
  const size_t width = plane.output_width;
  for (size_t oh = 0; oh < plane.output_height; ++oh) {
    const float* row0 = plane.input + oh * plane.stride_height * plane.input_stride;
    const float* row1 = row0 + plane.input_stride;
    const float* row2 = row1 + plane.input_stride;
    float* out = plane.output + oh * plane.output_stride;
#define ORKNN_DEPTHWISE_VECTOR(o, result)                                                  \
  __m256 result;                                                                           \
  {                                                                                        \
    __m256 top = _mm256_fmadd_ps(w00, _mm256_loadu_ps(row0 + (o)), bias);                  \
    __m256 middle = _mm256_mul_ps(w10, _mm256_loadu_ps(row1 + (o)));                       \
    __m256 bottom = _mm256_mul_ps(w20, _mm256_loadu_ps(row2 + (o)));                       \
    top = _mm256_fmadd_ps(w01, _mm256_loadu_ps(row0 + phase1 + offset1 + (o)), top);       \
    middle = _mm256_fmadd_ps(w11, _mm256_loadu_ps(row1 + phase1 + offset1 + (o)), middle); \
    bottom = _mm256_fmadd_ps(w21, _mm256_loadu_ps(row2 + phase1 + offset1 + (o)), bottom); \
    top = _mm256_fmadd_ps(w02, _mm256_loadu_ps(row0 + phase2 + offset2 + (o)), top);       \
    middle = _mm256_fmadd_ps(w12, _mm256_loadu_ps(row1 + phase2 + offset2 + (o)), middle); \
    bottom = _mm256_fmadd_ps(w22, _mm256_loadu_ps(row2 + phase2 + offset2 + (o)), bottom); \
    result = _mm256_add_ps(_mm256_add_ps(top, middle), bottom);                            \
    if (has_activation) result = activate(activation, result);                             \
  }
    size_t o = 0;
    for (; o + 16 <= width; o += 16) {
      ORKNN_DEPTHWISE_VECTOR(o, first)
      ORKNN_DEPTHWISE_VECTOR(o + 8, second)
      _mm256_storeu_ps(out + o, first);
      _mm256_storeu_ps(out + o + 8, second);
    }
    for (; o < width; o += 8) {
      ORKNN_DEPTHWISE_VECTOR(o, last)
      store_outputs(out + o, last, width - o);
    }
#undef ORKNN_DEPTHWISE_VECTOR
  }
}

// Any kernel size, stride and dilation (the phases make every tap a contiguous load).
void depthwise_plane_general(const DepthwisePlane& plane) {
  const bool has_activation = plane.activation != nullptr;
  VectorActivation activation{};
  if (has_activation) activation = broadcast_activation(*plane.activation);
  const __m256 bias = _mm256_set1_ps(plane.bias);
  const size_t s = plane.stride_width;
  const size_t width = plane.output_width;
  for (size_t oh = 0; oh < plane.output_height; ++oh) {
    float* out = plane.output + oh * plane.output_stride;
    for (size_t o = 0; o < width; o += 8) {
      __m256 even = bias;
      __m256 odd = _mm256_setzero_ps();
      for (size_t i = 0; i < plane.kernel_height; ++i) {
        const float* row =
            plane.input +
            (oh * plane.stride_height + i * plane.dilation_height) * plane.input_stride + o;
        const float* weights = plane.weights + i * plane.kernel_width;
        size_t j = 0;
        for (; j + 2 <= plane.kernel_width; j += 2) {
          const size_t first = j * plane.dilation_width;
          const size_t second = first + plane.dilation_width;
          even = _mm256_fmadd_ps(
              _mm256_broadcast_ss(weights + j),
              _mm256_loadu_ps(row + (first % s) * plane.phase_stride + first / s), even);
          odd = _mm256_fmadd_ps(
              _mm256_broadcast_ss(weights + j + 1),
              _mm256_loadu_ps(row + (second % s) * plane.phase_stride + second / s), odd);
        }
        if (j < plane.kernel_width) {
          const size_t column = j * plane.dilation_width;
          even = _mm256_fmadd_ps(
              _mm256_broadcast_ss(weights + j),
              _mm256_loadu_ps(row + (column % s) * plane.phase_stride + column / s), even);
        }
      }
      __m256 sum = _mm256_add_ps(even, odd);
      if (has_activation) sum = activate(activation, sum);
      store_outputs(out + o, sum, width - o);
    }
  }
}

void depthwise_plane(const DepthwisePlane& plane) {
  if (plane.kernel_height == 3 && plane.kernel_width == 3 && plane.dilation_height == 1 &&
      plane.dilation_width == 1) {
    return depthwise_plane_3x3(plane);
  }
  depthwise_plane_general(plane);
}

template <int Operation>
__m256 binary_vector(__m256 a, __m256 b) {
  if constexpr (Operation == 0) return _mm256_add_ps(a, b);
  if constexpr (Operation == 1) return _mm256_sub_ps(a, b);
  if constexpr (Operation == 2) return _mm256_mul_ps(a, b);
  return _mm256_div_ps(a, b);
}

// A step-0 operand is broadcast once; the tail (fewer than 8 elements) runs scalar, which
// rounds exactly as the vector lanes do.
template <int Operation>
void binary_row_of(const BinaryRow& row) {
  const float* a = row.a;
  const float* b = row.b;
  float* out = row.out;
  const size_t a_step = row.a_step;
  const size_t b_step = row.b_step;
  const __m256 a_broadcast = _mm256_set1_ps(a[0]);
  const __m256 b_broadcast = _mm256_set1_ps(b[0]);
  size_t i = 0;
  if (a_step == 1 && b_step == 1) {
    for (; i + 16 <= row.count; i += 16) {
      _mm256_storeu_ps(out + i,
                       binary_vector<Operation>(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
      _mm256_storeu_ps(out + i + 8, binary_vector<Operation>(_mm256_loadu_ps(a + i + 8),
                                                             _mm256_loadu_ps(b + i + 8)));
    }
    for (; i + 8 <= row.count; i += 8) {
      _mm256_storeu_ps(out + i,
                       binary_vector<Operation>(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    }
  } else if (a_step == 1) {
    for (; i + 8 <= row.count; i += 8) {
      _mm256_storeu_ps(out + i, binary_vector<Operation>(_mm256_loadu_ps(a + i), b_broadcast));
    }
  } else if (b_step == 1) {
    for (; i + 8 <= row.count; i += 8) {
      _mm256_storeu_ps(out + i, binary_vector<Operation>(a_broadcast, _mm256_loadu_ps(b + i)));
    }
  } else {
    const __m256 value = binary_vector<Operation>(a_broadcast, b_broadcast);
    for (; i + 8 <= row.count; i += 8) _mm256_storeu_ps(out + i, value);
  }
  for (; i < row.count; ++i)
    out[i] = apply_binary_operation<Operation>(a[i * a_step], b[i * b_step]);
}

void binary_row(const BinaryRow& row) {
  with_binary_operation(row.operation,
                        [&](auto operation) { binary_row_of<decltype(operation)::value>(row); });
}

// The per-row constants of the quantized binary row, held in registers: the row's fields would
// otherwise be reloaded after every int8 store (a char store may alias them).
struct QuantizedConstants {
  __m256i a_zero_point, b_zero_point, out_zero_point;
  __m256 a_scale, b_scale, a_broadcast, b_broadcast, out_scale;
  __m256 lowest, highest;
};

// Eight codes decoded: float(code - zero_point) x scale.
inline __m256 decode8(const int8_t* codes, __m256i zero_point, __m256 scale) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
  const __m256i offsets = _mm256_sub_epi32(_mm256_cvtepi8_epi32(raw), zero_point);
  return _mm256_mul_ps(_mm256_cvtepi32_ps(offsets), scale);
}

// Encodes eight results as graph/tensor_conversion.cc does: vcvtps2dq rounds half to even in
// the default MXCSR mode, as nearbyint; the packs saturate to int8 after the int32 clamp. A NaN
// (only a division can give one) encodes as the zero point.
template <bool NonFinite>
inline void encode8(__m256 value, const QuantizedConstants& k, int8_t* out) {
  const __m256 scaled = _mm256_div_ps(value, k.out_scale);
  const __m256 bounded = _mm256_min_ps(_mm256_max_ps(scaled, k.lowest), k.highest);
  __m256i code = _mm256_add_epi32(_mm256_cvtps_epi32(bounded), k.out_zero_point);
  if constexpr (NonFinite) {
    const __m256 is_nan = _mm256_cmp_ps(scaled, scaled, _CMP_UNORD_Q);
    code = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(k.out_zero_point), is_nan));
  }
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packs_epi16(words, words));
}

float decode_one(const QuantizedOperand& operand) {
  return static_cast<float>(static_cast<int32_t>(operand.codes[0]) - operand.zero_point) *
         operand.scale;
}

// Eight outputs from a (full or its broadcast value) and b at `index`.
template <int Operation, bool AFull, bool BFull>
inline void quantized_binary8(const int8_t* a, const int8_t* b, const QuantizedConstants& k,
                              int8_t* out) {
  const __m256 a_values = AFull ? decode8(a, k.a_zero_point, k.a_scale) : k.a_broadcast;
  const __m256 b_values = BFull ? decode8(b, k.b_zero_point, k.b_scale) : k.b_broadcast;
  // Decoded codes are finite, and so are their sums, differences and products (|value| <=
  // 255 x 255 x scale^2): only a division can give an infinity or a NaN to encode.
  encode8<Operation == 3>(binary_vector<Operation>(a_values, b_values), k, out);
}

// The last count % 8 elements go through the same vector code on copies padded to eight, so
// the tail rounds exactly as the rest (and no libm inline is needed here).
template <int Operation, bool AFull, bool BFull>
void quantized_binary_loop(const QuantizedBinaryRow& row, const QuantizedConstants& k) {
  const int8_t* a = row.a.codes;
  const int8_t* b = row.b.codes;
  int8_t* out = row.out;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    quantized_binary8<Operation, AFull, BFull>(a + (AFull ? i : 0), b + (BFull ? i : 0), k,
                                               out + i);
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  int8_t a_codes[8] = {};
  int8_t b_codes[8] = {};
  int8_t tail[8];
  for (size_t j = 0; j < rest; ++j) {
    a_codes[j] = a[AFull ? i + j : 0];
    b_codes[j] = b[BFull ? i + j : 0];
  }
  quantized_binary8<Operation, AFull, BFull>(a_codes, b_codes, k, tail);
  for (size_t j = 0; j < rest; ++j) out[i + j] = tail[j];
}

template <int Operation>
void quantized_binary_row_of(const QuantizedBinaryRow& row) {
  QuantizedConstants k;
  k.a_zero_point = _mm256_set1_epi32(row.a.zero_point);
  k.b_zero_point = _mm256_set1_epi32(row.b.zero_point);
  k.out_zero_point = _mm256_set1_epi32(row.out_zero_point);
  k.a_scale = _mm256_set1_ps(row.a.scale);
  k.b_scale = _mm256_set1_ps(row.b.scale);
  k.a_broadcast = _mm256_set1_ps(decode_one(row.a));
  k.b_broadcast = _mm256_set1_ps(decode_one(row.b));
  k.out_scale = _mm256_set1_ps(row.out_scale);
  k.lowest = _mm256_set1_ps(-1e9f);
  k.highest = _mm256_set1_ps(1e9f);
  with_operand_steps(row.a.step != 0, row.b.step != 0, [&](auto a_full, auto b_full) {
    quantized_binary_loop<Operation, decltype(a_full)::value, decltype(b_full)::value>(row, k);
  });
}

void quantized_binary_row(const QuantizedBinaryRow& row) {
  with_binary_operation(row.operation, [&](auto operation) {
    quantized_binary_row_of<decltype(operation)::value>(row);
  });
}

// The int8 table lookup (micro_kernels.h lookup_int8_row) on 32 codes at a time: vpshufb
// looks up 16-entry pieces of the table by each code's low four bits, and a tree of byte blends
// on the index's bits 4-7 (each shifted into its byte's top bit, which vpblendvb reads) picks
// the piece: 16 shuffles and 15 blends per 32 codes where the scalar loop takes a load each.
inline __m256i lookup32(const __m256i* pieces, __m256i codes) {
  const __m256i index = _mm256_xor_si256(codes, _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i low = _mm256_and_si256(index, _mm256_set1_epi8(0x0F));
  // Word shifts move each byte's bit 4, 5, 6 into its bit 7 (bits crossing into the next byte
  // land below its bit 7, which the blends ignore).
  const __m256i bit4 = _mm256_slli_epi16(index, 3);
  const __m256i bit5 = _mm256_slli_epi16(index, 2);
  const __m256i bit6 = _mm256_slli_epi16(index, 1);
  __m256i level[8];
  for (int j = 0; j < 8; ++j) {
    level[j] = _mm256_blendv_epi8(_mm256_shuffle_epi8(pieces[2 * j], low),
                                  _mm256_shuffle_epi8(pieces[2 * j + 1], low), bit4);
  }
  for (int j = 0; j < 4; ++j) level[j] = _mm256_blendv_epi8(level[2 * j], level[2 * j + 1], bit5);
  for (int j = 0; j < 2; ++j) level[j] = _mm256_blendv_epi8(level[2 * j], level[2 * j + 1], bit6);
  return _mm256_blendv_epi8(level[0], level[1], index);
}

void lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count) {
  __m256i pieces[16];
  for (int k = 0; k < 16; ++k) {
    pieces[k] = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  }
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), lookup32(pieces, codes));
  }
  for (; i < count; ++i) out[i] = table[in[i] + 128];
}

// int8 Add/Sub on the codes (micro_kernels.h QuantizedAddRow): per 8 outputs two widenings,
// two conversions, two multiplies and a sum, where the float domain's row above also divides.
// vcvtps2dq rounds half to even (default MXCSR), as nearbyint; the row's precondition keeps
// every result inside int32 without a clamp.
struct QuantizedAddConstants {
  __m256i a_zero_point, b_zero_point, out_zero_point;
  __m256 a_ratio, b_ratio, a_broadcast, b_broadcast;
  __m128i out_minimum, out_maximum;
};

inline __m256 code_offsets8(const int8_t* codes, __m256i zero_point) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(raw), zero_point));
}

// Eight int32 codes from a's and b's offsets times their ratios (or a broadcast product).
template <bool AFull, bool BFull>
inline __m256i quantized_add8(const int8_t* a, const int8_t* b, const QuantizedAddConstants& k) {
  const __m256 a_products =
      AFull ? _mm256_mul_ps(code_offsets8(a, k.a_zero_point), k.a_ratio) : k.a_broadcast;
  const __m256 b_products =
      BFull ? _mm256_mul_ps(code_offsets8(b, k.b_zero_point), k.b_ratio) : k.b_broadcast;
  const __m256 sums = _mm256_add_ps(a_products, b_products);
  return _mm256_add_epi32(_mm256_cvtps_epi32(sums), k.out_zero_point);
}

// Sixteen int32 codes saturated to int8, clamped and stored: the two packs interleave 128-bit
// halves, so a dword shuffle puts the four groups of four back in order.
inline void store_codes16(__m256i low, __m256i high, const QuantizedAddConstants& k, int8_t* out) {
  const __m256i words = _mm256_packs_epi32(low, high);
  const __m128i bytes =
      _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
  const __m128i clamped = _mm_min_epi8(_mm_max_epi8(bytes, k.out_minimum), k.out_maximum);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_shuffle_epi32(clamped, _MM_SHUFFLE(3, 1, 2, 0)));
}

// The last count % 16 elements run through the same vector code on copies padded to sixteen.
template <bool AFull, bool BFull>
void quantized_add_loop(const QuantizedAddRow& row, const QuantizedAddConstants& k) {
  const int8_t* a = row.a.codes;
  const int8_t* b = row.b.codes;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const size_t a_index = AFull ? i : 0;
    const size_t b_index = BFull ? i : 0;
    store_codes16(quantized_add8<AFull, BFull>(a + a_index, b + b_index, k),
                  quantized_add8<AFull, BFull>(a + a_index + (AFull ? 8 : 0),
                                               b + b_index + (BFull ? 8 : 0), k),
                  k, row.out + i);
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  int8_t a_codes[16] = {};
  int8_t b_codes[16] = {};
  int8_t tail[16];
  for (size_t j = 0; j < rest; ++j) {
    a_codes[j] = a[AFull ? i + j : 0];
    b_codes[j] = b[BFull ? i + j : 0];
  }
  store_codes16(quantized_add8<AFull, BFull>(a_codes, b_codes, k),
                quantized_add8<AFull, BFull>(a_codes + 8, b_codes + 8, k), k, tail);
  for (size_t j = 0; j < rest; ++j) row.out[i + j] = tail[j];
}

void quantized_add_row(const QuantizedAddRow& row) {
  QuantizedAddConstants k;
  k.a_zero_point = _mm256_set1_epi32(row.a.zero_point);
  k.b_zero_point = _mm256_set1_epi32(row.b.zero_point);
  k.out_zero_point = _mm256_set1_epi32(row.out_zero_point);
  k.out_minimum = _mm_set1_epi8(row.out_minimum);
  k.out_maximum = _mm_set1_epi8(row.out_maximum);
  k.a_ratio = _mm256_set1_ps(row.a.scale);
  k.b_ratio = _mm256_set1_ps(row.b.scale);
  // One IEEE product each, as the vector lanes compute them.
  k.a_broadcast = _mm256_mul_ps(
      _mm256_set1_ps(static_cast<float>(int32_t{row.a.codes[0]} - row.a.zero_point)), k.a_ratio);
  k.b_broadcast = _mm256_mul_ps(
      _mm256_set1_ps(static_cast<float>(int32_t{row.b.codes[0]} - row.b.zero_point)), k.b_ratio);
  with_operand_steps(row.a.step != 0, row.b.step != 0, [&](auto a_full, auto b_full) {
    quantized_add_loop<decltype(a_full)::value, decltype(b_full)::value>(row, k);
  });
}

// _mm256_max_ps(row, accumulator) returns the accumulator unless row is larger, as the scalar
// tail does.
void max_row_float(float* accumulator, const float* row, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(accumulator + i,
                     _mm256_max_ps(_mm256_loadu_ps(row + i), _mm256_loadu_ps(accumulator + i)));
  }
  // Short rows (a 20-wide plane) are mostly tail: one 4-lane step before the scalar rest.
  if (i + 4 <= count) {
    _mm_storeu_ps(accumulator + i,
                  _mm_max_ps(_mm_loadu_ps(row + i), _mm_loadu_ps(accumulator + i)));
    i += 4;
  }
  for (; i < count; ++i) accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
}

void max_row_int8(int8_t* accumulator, const int8_t* row, size_t count) {
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    auto* target = reinterpret_cast<__m256i*>(accumulator + i);
    _mm256_storeu_si256(
        target, _mm256_max_epi8(_mm256_loadu_si256(target),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i))));
  }
  if (i + 16 <= count) {
    auto* target = reinterpret_cast<__m128i*>(accumulator + i);
    _mm_storeu_si128(target,
                     _mm_max_epi8(_mm_loadu_si128(target),
                                  _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
    i += 16;
  }
  if (i + 8 <= count) {
    auto* target = reinterpret_cast<__m128i*>(accumulator + i);
    _mm_storel_epi64(target,
                     _mm_max_epi8(_mm_loadl_epi64(target),
                                  _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i))));
    i += 8;
  }
  for (; i < count; ++i) accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
}

void add_row_float(float* accumulator, const float* row, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(accumulator + i,
                     _mm256_add_ps(_mm256_loadu_ps(accumulator + i), _mm256_loadu_ps(row + i)));
  }
  for (; i < count; ++i) accumulator[i] += row[i];
}

// exp(x) for float lanes: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for an exact
// n ln2), e^r by the degree-6 Cephes expf polynomial, 2^n through the exponent bits. About
// 1 ulp; x is clamped to [-87.3, 88.3] so 2^n stays a normal float.
__m256 exp_lanes(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3365f)), _mm256_set1_ps(88.3762f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}

__m256 select_if_less(__m256 x, __m256 bound, __m256 replacement) {
  return _mm256_blendv_ps(x, replacement, _mm256_cmp_ps(x, bound, _CMP_LT_OQ));
}

// The reference's two forms: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below, with
// e = e^-|x| <= 1 in both, so the result is relative-accurate even for very negative x.
__m256 sigmoid_lanes(__m256 x) {
  const __m256 absolute = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 e = exp_lanes(_mm256_sub_ps(_mm256_setzero_ps(), absolute));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 denominator = _mm256_add_ps(one, e);
  const __m256 numerator =
      _mm256_blendv_ps(one, e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_div_ps(numerator, denominator);
}

// tanh |x| = (1 - e) / (1 + e) with e = e^-2|x| where 1 - e keeps its relative accuracy
// (|x| >= 0.4); below, the odd Taylor series to x^9 (next term under 1e-6 relative).
__m256 tanh_lanes(__m256 x) {
  const __m256 sign = _mm256_and_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 absolute = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp_lanes(_mm256_mul_ps(absolute, _mm256_set1_ps(-2.0f)));
  const __m256 large = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  const __m256 square = _mm256_mul_ps(absolute, absolute);
  __m256 series = _mm256_set1_ps(62.0f / 2835.0f);
  series = _mm256_fmadd_ps(series, square, _mm256_set1_ps(-17.0f / 315.0f));
  series = _mm256_fmadd_ps(series, square, _mm256_set1_ps(2.0f / 15.0f));
  series = _mm256_fmadd_ps(series, square, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(series, square), absolute, absolute);
  const __m256 magnitude =
      _mm256_blendv_ps(large, small, _mm256_cmp_ps(absolute, _mm256_set1_ps(0.4f), _CMP_LT_OQ));
  return _mm256_or_ps(magnitude, sign);
}

// Relu, Clip, LeakyRelu and HardSwish use the reference's comparisons and one IEEE operation
// per step (no fused multiply-add), so they give its bits. The operation is a template
// parameter so each row loop has no per-vector dispatch (an indirect jump per 8 elements, with
// the row's fields reloaded around it, made the SiLU pass about 1.4x slower).
template <int Operation>
__m256 unary_lanes(const UnaryRow& row, __m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  if constexpr (Operation == 0) {
    return select_if_less(x, zero, zero);
  } else if constexpr (Operation == 1) {
    const __m256 low = select_if_less(x, _mm256_set1_ps(row.minimum), _mm256_set1_ps(row.minimum));
    const __m256 maximum = _mm256_set1_ps(row.maximum);
    return _mm256_blendv_ps(low, maximum, _mm256_cmp_ps(low, maximum, _CMP_GT_OQ));
  } else if constexpr (Operation == 2) {
    return select_if_less(x, zero, _mm256_mul_ps(_mm256_set1_ps(row.alpha), x));
  } else if constexpr (Operation == 3) {
    return sigmoid_lanes(x);
  } else if constexpr (Operation == 4) {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 gate =
        _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f));
    gate = select_if_less(gate, zero, zero);
    gate = _mm256_blendv_ps(gate, one, _mm256_cmp_ps(gate, one, _CMP_GT_OQ));
    return _mm256_mul_ps(x, gate);
  } else if constexpr (Operation == 5) {
    return _mm256_mul_ps(x, sigmoid_lanes(_mm256_mul_ps(_mm256_set1_ps(row.alpha), x)));
  } else {
    return tanh_lanes(x);
  }
}

// Two vectors per step (independent chains for the out-of-order core); the tail runs on a copy
// padded to eight lanes, so every element takes the same path.
template <int Operation>
void unary_row_of(const UnaryRow& row) {
  const float* const in = row.in;
  float* const out = row.out;
  const size_t count = row.count;
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256 first = unary_lanes<Operation>(row, _mm256_loadu_ps(in + i));
    const __m256 second = unary_lanes<Operation>(row, _mm256_loadu_ps(in + i + 8));
    _mm256_storeu_ps(out + i, first);
    _mm256_storeu_ps(out + i + 8, second);
  }
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, unary_lanes<Operation>(row, _mm256_loadu_ps(in + i)));
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  float padded_in[8] = {};
  float padded_out[8];
  for (size_t j = 0; j < rest; ++j) padded_in[j] = in[i + j];
  _mm256_storeu_ps(padded_out, unary_lanes<Operation>(row, _mm256_loadu_ps(padded_in)));
  for (size_t j = 0; j < rest; ++j) out[i + j] = padded_out[j];
}

void unary_row(const UnaryRow& row) {
  switch (row.operation) {
    case 0:
      return unary_row_of<0>(row);
    case 1:
      return unary_row_of<1>(row);
    case 2:
      return unary_row_of<2>(row);
    case 3:
      return unary_row_of<3>(row);
    case 4:
      return unary_row_of<4>(row);
    case 5:
      return unary_row_of<5>(row);
    default:
      return unary_row_of<6>(row);
  }
}

// ---- the reproducible exp and the int8 SiLU epilogue ----------------------------------------

// orknn::reproducible_exp (core/reproducible_exp.cc) on eight lanes, operation for operation in
// its order, each one IEEE float operation (this file is built without contraction), so the
// bits are the scalar function's. max/min return their second operand for a NaN lane, which
// keeps n finite; such lanes take x + x at the end, as the scalar code does.
// Inlined into their callers: called, the exp spilled its caller's vectors around every call
// (all ymm registers are caller-saved) and kept two SiLU groups from overlapping.
#define ORKNN_INLINE_LANES inline __attribute__((always_inline))

ORKNN_INLINE_LANES __m256 pow2_lanes(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

// G vectors at a time, each statement applied to every vector before the next: the exp is one
// long chain of dependent operations, and interleaved chains keep the core's schedulers fed
// with independent work (one at a time, the SiLU epilogue waited on each chain's latency).
#define ORKNN_EACH(g) _Pragma("GCC unroll 8") for (size_t g = 0; g < G; ++g)

// The exp's middle steps on x (clamped or known in range): n = round(x log2 e) and the
// polynomial y ~ e^(x - n ln 2), both in the scalar order; e^x is y x 2^n.
template <size_t G>
ORKNN_INLINE_LANES void reduced_exp_group(const __m256 (&x)[G], __m256 (&n)[G], __m256 (&y)[G]) {
  namespace c = reproducible_exp_constants;
  __m256 r[G];
  ORKNN_EACH(g) n[g] = _mm256_mul_ps(x[g], _mm256_set1_ps(c::kLog2E));
  ORKNN_EACH(g) n[g] = _mm256_add_ps(n[g], _mm256_set1_ps(c::kRoundingShift));
  ORKNN_EACH(g) n[g] = _mm256_sub_ps(n[g], _mm256_set1_ps(c::kRoundingShift));
  ORKNN_EACH(g) r[g] = _mm256_sub_ps(x[g], _mm256_mul_ps(n[g], _mm256_set1_ps(c::kLn2High)));
  ORKNN_EACH(g) r[g] = _mm256_sub_ps(r[g], _mm256_mul_ps(n[g], _mm256_set1_ps(c::kLn2Low)));
  ORKNN_EACH(g) y[g] = _mm256_set1_ps(c::kPolynomial5);
  const float coefficients[] = {c::kPolynomial4, c::kPolynomial3, c::kPolynomial2, c::kPolynomial1,
                                c::kPolynomial0};
  _Pragma("GCC unroll 5") for (const float coefficient : coefficients) {
    ORKNN_EACH(g) y[g] = _mm256_add_ps(_mm256_mul_ps(y[g], r[g]), _mm256_set1_ps(coefficient));
  }
  ORKNN_EACH(g) y[g] = _mm256_mul_ps(y[g], _mm256_mul_ps(r[g], r[g]));
  ORKNN_EACH(g) y[g] = _mm256_add_ps(y[g], r[g]);
  ORKNN_EACH(g) y[g] = _mm256_add_ps(y[g], _mm256_set1_ps(1.0f));
}

template <size_t G>
ORKNN_INLINE_LANES void reproducible_exp_group(__m256 (&v)[G]) {
  namespace c = reproducible_exp_constants;
  __m256 is_nan[G], x[G], n[G], p[G];
  ORKNN_EACH(g) is_nan[g] = _mm256_cmp_ps(v[g], v[g], _CMP_UNORD_Q);
  ORKNN_EACH(g) x[g] = _mm256_max_ps(v[g], _mm256_set1_ps(c::kLowest));
  ORKNN_EACH(g) x[g] = _mm256_min_ps(x[g], _mm256_set1_ps(c::kHighest));
  reduced_exp_group(x, n, p);
  ORKNN_EACH(g) {
    const __m256i k = _mm256_cvttps_epi32(n[g]);  // n is an integer already
    const __m256i first = _mm256_srai_epi32(k, 1);
    p[g] = _mm256_mul_ps(p[g], pow2_lanes(first));
    p[g] = _mm256_mul_ps(p[g], pow2_lanes(_mm256_sub_epi32(k, first)));
  }
  ORKNN_EACH(g) v[g] = _mm256_blendv_ps(p[g], _mm256_add_ps(v[g], v[g]), is_nan[g]);
}

// reproducible_exp for arguments known to lie in [-87, 0] (the finite SiLU rows below): the
// scalar steps without the clamps and the NaN test, and 2^n in one multiplication. n =
// round(x log2 e) is then at least -126, so 2^n is a normal float and y x 2^n rounds once, as
// the scalar code's (y x 2^floor(n/2)) x 2^(n - floor(n/2)) does (its first product is exact).
template <size_t G>
ORKNN_INLINE_LANES void bounded_exp_group(__m256 (&v)[G]) {
  __m256 n[G], p[G];
  reduced_exp_group(v, n, p);
  ORKNN_EACH(g) v[g] = _mm256_mul_ps(p[g], pow2_lanes(_mm256_cvttps_epi32(n[g])));
}

ORKNN_INLINE_LANES __m256 reproducible_exp_lanes(__m256 input) {
  __m256 v[1] = {input};
  reproducible_exp_group(v);
  return v[0];
}

void reproducible_exp_row(const float* in, float* out, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, reproducible_exp_lanes(_mm256_loadu_ps(in + i)));
  }
  const size_t rest = count - i;
  if (rest == 0) return;
  float staging[8] = {};
  for (size_t j = 0; j < rest; ++j) staging[j] = in[i + j];
  _mm256_storeu_ps(staging, reproducible_exp_lanes(_mm256_loadu_ps(staging)));
  for (size_t j = 0; j < rest; ++j) out[i + j] = staging[j];
}

struct SiluConstants {
  __m256d scale;
  __m256 float_scale;
  __m256 output_scale;
  __m256i zero_point;  // clamped to +-2^21, which cannot change a saturated result
  __m256i offset;      // added to every accumulator modulo 2^32 (vpaddd wraps)
};

// 8 x G outputs of reference::requantize_silu: real = float(double(acc) x double(D)), the
// sigmoid on e = e^-|real| (1 / (1 + e) for real >= 0, e / (1 + e) below), real x sigmoid, then
// the one quantization rule (vcvtps2dq rounds half to even in the default MXCSR mode).
//
// kFinite: a row of silu_row_is_finite (micro_kernels.h, which says why this form gives the
// same codes): no NaN tests, and reals below -87 raised to -87 for bounded_exp_group.
template <size_t G, bool kFinite>
ORKNN_INLINE_LANES void requantize_silu_group(const int32_t* accumulators, const SiluConstants& k,
                                              int8_t* output) {
  __m256i values[G];
  __m256i outside = _mm256_setzero_si256();
  ORKNN_EACH(g) {
    values[g] = _mm256_add_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulators + 8 * g)), k.offset);
    // With every |acc| <= 2^24, acc and D are exact floats and their double product is exact
    // (24 + 24 bits), so rounding it to float is the one rounding of a float multiplication.
    const __m256i shifted = _mm256_add_epi32(values[g], _mm256_set1_epi32(1 << 24));
    outside = _mm256_or_si256(outside, _mm256_cmpgt_epi32(_mm256_setzero_si256(), shifted));
    outside = _mm256_or_si256(outside, _mm256_cmpgt_epi32(shifted, _mm256_set1_epi32(1 << 25)));
  }
  __m256 real[G];
  if (_mm256_testz_si256(outside, outside)) {
    ORKNN_EACH(g) real[g] = _mm256_mul_ps(_mm256_cvtepi32_ps(values[g]), k.float_scale);
  } else {
    ORKNN_EACH(g) {
      const __m128 low = _mm256_cvtpd_ps(
          _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values[g])), k.scale));
      const __m128 high = _mm256_cvtpd_ps(
          _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values[g], 1)), k.scale));
      real[g] = _mm256_insertf128_ps(_mm256_castps128_ps256(low), high, 1);
    }
  }
  __m256 e[G];
  if constexpr (kFinite) {
    ORKNN_EACH(g) real[g] = _mm256_max_ps(real[g], _mm256_set1_ps(-87.0f));
    ORKNN_EACH(g) e[g] = _mm256_or_ps(real[g], _mm256_set1_ps(-0.0f));
    ORKNN_EACH(g) e[g] = _mm256_max_ps(e[g], _mm256_set1_ps(-87.0f));
    bounded_exp_group(e);
  } else {
    ORKNN_EACH(g) e[g] = _mm256_or_ps(real[g], _mm256_set1_ps(-0.0f));
    reproducible_exp_group(e);
  }
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 scaled[G];
  ORKNN_EACH(g) {
    const __m256 numerator =
        _mm256_blendv_ps(one, e[g], _mm256_cmp_ps(real[g], _mm256_setzero_ps(), _CMP_LT_OQ));
    scaled[g] = _mm256_div_ps(numerator, _mm256_add_ps(one, e[g]));
  }
  ORKNN_EACH(g) scaled[g] = _mm256_div_ps(_mm256_mul_ps(real[g], scaled[g]), k.output_scale);
  ORKNN_EACH(g) {
    const __m256 bounded =
        _mm256_min_ps(_mm256_max_ps(scaled[g], _mm256_set1_ps(-1e6f)), _mm256_set1_ps(1e6f));
    __m256i code = _mm256_add_epi32(_mm256_cvtps_epi32(bounded), k.zero_point);
    if constexpr (!kFinite) {
      const __m256 is_nan = _mm256_cmp_ps(scaled[g], scaled[g], _CMP_UNORD_Q);
      code = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(code), _mm256_castsi256_ps(k.zero_point), is_nan));
    }
    const __m128i words =
        _mm_packs_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(output + 8 * g), _mm_packs_epi16(words, words));
  }
}

template <bool kFinite>
void requantize_silu_rows(const RequantizeSiluRow& row, int32_t offset);

// The row with `offset` added to every accumulator: the dot-product drivers' per-channel
// constant, without a pass of its own over the sums.
void requantize_silu_offset_row(const RequantizeSiluRow& row, int32_t offset) {
  if (silu_row_is_finite(row)) {
    requantize_silu_rows<true>(row, offset);
  } else {
    requantize_silu_rows<false>(row, offset);
  }
}

void requantize_silu_row(const RequantizeSiluRow& row) {
  requantize_silu_offset_row(row, 0);
}

template <bool kFinite>
void requantize_silu_rows(const RequantizeSiluRow& row, int32_t offset) {
  constexpr int32_t kZeroPointBound = 1 << 21;
  int32_t zero_point = row.output_zero_point;
  zero_point = zero_point < -kZeroPointBound ? -kZeroPointBound : zero_point;
  zero_point = zero_point > kZeroPointBound ? kZeroPointBound : zero_point;
  const SiluConstants k{_mm256_set1_pd(static_cast<double>(row.scale)), _mm256_set1_ps(row.scale),
                        _mm256_set1_ps(row.output_scale), _mm256_set1_epi32(zero_point),
                        _mm256_set1_epi32(offset)};
  // 64 outputs per step, then 32, then 8: one thread, 6400 outputs (bench_kernels --filter
  // micro, three interleaved runs), 2.07-2.68 ns per output one vector at a time, 1.6-1.8 with
  // two, 1.27-1.55 with four, 1.09-1.14 with eight, 1.66 with sixteen (spilled).
  constexpr size_t kGroups = 8;
  size_t i = 0;
  for (; i + 8 * kGroups <= row.count; i += 8 * kGroups) {
    requantize_silu_group<kGroups, kFinite>(row.accumulators + i, k, row.output + i);
  }
  for (; i + 32 <= row.count; i += 32) {
    requantize_silu_group<4, kFinite>(row.accumulators + i, k, row.output + i);
  }
  for (; i + 8 <= row.count; i += 8) {
    requantize_silu_group<1, kFinite>(row.accumulators + i, k, row.output + i);
  }
  const size_t rest = row.count - i;
  if (rest == 0) return;
  int32_t accumulators[8] = {};
  int8_t output[8];
  for (size_t j = 0; j < rest; ++j) accumulators[j] = row.accumulators[i + j];
  requantize_silu_group<1, kFinite>(accumulators, k, output);
  for (size_t j = 0; j < rest; ++j) row.output[i + j] = output[j];
}

// ---- int8 depthwise: widening the input, narrowing the sums ----------------------------------

// Eight values from in[0], in[step], ... (step 1 or 2) as float offsets from the zero point.
inline __m256 widen8(const int8_t* in, size_t step, __m256i zero_point) {
  __m128i raw;
  if (step == 1) {
    raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in));
  } else {
    const __m128i evens = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    raw = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)), evens);
  }
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(raw), zero_point));
}

void widen_int8_row(const WidenInt8Row& row) {
  const int8_t* const in = row.in;
  float* const out = row.out;
  const size_t step = row.in_step;
  const size_t count = row.count;
  const __m256i zero_point = _mm256_set1_epi32(row.zero_point);
  // A vector at i reads in[step * i] up to in[step * i + 7] (step 1) or in[2i + 15] (step 2),
  // inside the row while i + 8 <= count (step 1) or i + 9 <= count (step 2). The last vector
  // is placed at the end and may overlap the previous one (it rewrites the same values).
  const size_t span = step == 1 ? 8 : 9;
  size_t done = 0;
  if ((step == 1 || step == 2) && count >= span) {
    for (size_t i = 0; i + span <= count; i += 8) {
      _mm256_storeu_ps(out + i, widen8(in + step * i, step, zero_point));
    }
    const size_t last = count - span;
    _mm256_storeu_ps(out + last, widen8(in + step * last, step, zero_point));
    done = last + 8;
  }
  for (size_t i = done; i < count; ++i) {
    out[i] = static_cast<float>(in[i * step] - row.zero_point);
  }
}

void float_sums_to_accumulators(const float* sums, int32_t bias, int32_t* out, size_t count) {
  const __m256i broadcast_bias = _mm256_set1_epi32(bias);
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i values = _mm256_cvttps_epi32(_mm256_loadu_ps(sums + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_add_epi32(values, broadcast_bias));
  }
  for (; i < count; ++i) out[i] = static_cast<int32_t>(sums[i]) + bias;
}

// ---- depthwise with channels in lanes ---------------------------------------------------------

// kPixels output pixels of a depthwise_lanes band, each at its own input position `base##p`
// (pixels run on across output rows, so a narrow plane still fills the 8-pixel blocks): one
// accumulator per pixel (named, as in the tiles), each tap's weight vector loaded once. k3x3:
// a 3x3 kernel with dilation 1, its taps unrolled.
#define ORKNN_FOR_EACH_PIXEL(MACRO) \
  MACRO(0) MACRO(1) MACRO(2) MACRO(3) MACRO(4) MACRO(5) MACRO(6) MACRO(7)

template <size_t kPixels, bool k3x3>
void depthwise_lane_pixels(const DepthwiseLanes& lanes, const float* const* bases, float* out,
                           const VectorActivation* activation) {
  const __m256 bias = _mm256_loadu_ps(lanes.bias);
#define ORKNN_INIT(p)                    \
  [[maybe_unused]] __m256 sum##p = bias; \
  [[maybe_unused]] const float* base##p = kPixels > p ? bases[p] : nullptr;
  ORKNN_FOR_EACH_PIXEL(ORKNN_INIT)
#undef ORKNN_INIT
#define ORKNN_TAP(p)         \
  if constexpr (kPixels > p) \
    sum##p = _mm256_fmadd_ps(weight, _mm256_loadu_ps(base##p + offset), sum##p);
  if constexpr (k3x3) {
    const size_t stride = lanes.input_stride;
#pragma GCC unroll 3
    for (size_t i = 0; i < 3; ++i) {
#pragma GCC unroll 3
      for (size_t j = 0; j < 3; ++j) {
        const __m256 weight = _mm256_loadu_ps(lanes.weights + (i * 3 + j) * kDepthwiseLanes);
        const size_t offset = i * stride + j * kDepthwiseLanes;
        ORKNN_FOR_EACH_PIXEL(ORKNN_TAP)
      }
    }
  } else {
    const float* weights = lanes.weights;
    for (size_t i = 0; i < lanes.kernel_height; ++i) {
      for (size_t j = 0; j < lanes.kernel_width; ++j, weights += kDepthwiseLanes) {
        const __m256 weight = _mm256_loadu_ps(weights);
        const size_t offset = i * lanes.dilation_height * lanes.input_stride +
                              j * lanes.dilation_width * kDepthwiseLanes;
        ORKNN_FOR_EACH_PIXEL(ORKNN_TAP)
      }
    }
  }
#undef ORKNN_TAP
#define ORKNN_STORE(p)                                      \
  if constexpr (kPixels > p) {                              \
    if (activation) sum##p = activate(*activation, sum##p); \
    _mm256_storeu_ps(out + p * kDepthwiseLanes, sum##p);    \
  }
  ORKNN_FOR_EACH_PIXEL(ORKNN_STORE)
#undef ORKNN_STORE
}
#undef ORKNN_FOR_EACH_PIXEL

template <bool k3x3>
void depthwise_lanes_of(const DepthwiseLanes& lanes) {
  VectorActivation activation{};
  if (lanes.activation) activation = broadcast_activation(*lanes.activation);
  const VectorActivation* active = lanes.activation ? &activation : nullptr;
  const size_t width = lanes.output_width;
  const size_t pixels = lanes.output_height * width;
  const size_t row_step = lanes.stride_height * lanes.input_stride;
  const size_t pixel_step = lanes.stride_width * kDepthwiseLanes;
  // The next pixel's input position, walking the band row by row.
  size_t row = 0, column = 0;
  auto next_base = [&]() {
    const float* base = lanes.input + row * row_step + column * pixel_step;
    if (++column == width) {
      column = 0;
      ++row;
    }
    return base;
  };
  const float* bases[8];
  float* out = lanes.output;
  size_t done = 0;
  // Eight chains of FMAs keep both FMA pipes busy through their latency.
  for (; done + 8 <= pixels; done += 8, out += 8 * kDepthwiseLanes) {
    for (size_t p = 0; p < 8; ++p) bases[p] = next_base();
    depthwise_lane_pixels<8, k3x3>(lanes, bases, out, active);
  }
  const size_t rest = pixels - done;
  for (size_t p = 0; p < rest; ++p) bases[p] = next_base();
  size_t p = 0;
  if (rest - p >= 4) {
    depthwise_lane_pixels<4, k3x3>(lanes, bases + p, out + p * kDepthwiseLanes, active);
    p += 4;
  }
  if (rest - p >= 2) {
    depthwise_lane_pixels<2, k3x3>(lanes, bases + p, out + p * kDepthwiseLanes, active);
    p += 2;
  }
  if (rest - p >= 1) {
    depthwise_lane_pixels<1, k3x3>(lanes, bases + p, out + p * kDepthwiseLanes, active);
  }
}

void depthwise_lanes(const DepthwiseLanes& lanes) {
  if (lanes.kernel_height == 3 && lanes.kernel_width == 3 && lanes.dilation_height == 1 &&
      lanes.dilation_width == 1) {
    return depthwise_lanes_of<true>(lanes);
  }
  depthwise_lanes_of<false>(lanes);
}

// Where element e of an interleaved run goes (InterleaveRows), walked in blocks of 8.
struct InterleaveCursor {
  size_t row_length;
  size_t out_row_stride;
  size_t row = 0;
  size_t column = 0;
  // The destination of element `first`, from scratch (a division: once per run and tail).
  void seek(size_t first) {
    row = first / row_length;
    column = first % row_length;
  }
  size_t offset() const { return row * out_row_stride + column * kDepthwiseLanes; }
  void advance() {
    if (++column == row_length) {
      column = 0;
      ++row;
    }
  }
};

// Runs shorter than 8 go through staging copies; the last block of a longer run ends at its end
// and may overlap the one before (the same values again).
void interleave_float_rows(const InterleaveRows<float>& rows) {
  __m256 r[8];
  InterleaveCursor cursor{rows.row_length, rows.out_row_stride};
  const size_t count = rows.count;
  if (count < 8) {
    alignas(32) float staging[8][8] = {};
    for (size_t l = 0; l < 8; ++l) {
      for (size_t e = 0; e < count; ++e) staging[l][e] = rows.sources[l][e];
      r[l] = _mm256_load_ps(staging[l]);
    }
    transpose8x8(r);
    for (size_t e = 0; e < count; ++e, cursor.advance()) {
      _mm256_storeu_ps(rows.out + cursor.offset(), r[e]);
    }
    return;
  }
  for (size_t e = 0;; e += 8) {
    if (e + 8 > count) {
      e = count - 8;
      cursor.seek(e);
    }
    for (size_t l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(rows.sources[l] + e);
    transpose8x8(r);
    for (size_t k = 0; k < 8; ++k, cursor.advance()) {
      _mm256_storeu_ps(rows.out + cursor.offset(), r[k]);
    }
    if (e + 8 == count) return;
  }
}

void deinterleave_float_rows(const float* in, size_t count, float* const* rows) {
  __m256 r[8];
  if (count < 8) {
    alignas(32) float staging[8][8] = {};
    for (size_t c = 0; c < count; ++c) r[c] = _mm256_loadu_ps(in + c * 8);
    for (size_t c = count; c < 8; ++c) r[c] = _mm256_setzero_ps();
    transpose8x8(r);
    for (size_t l = 0; l < 8; ++l) {
      _mm256_store_ps(staging[l], r[l]);
      for (size_t c = 0; c < count; ++c) rows[l][c] = staging[l][c];
    }
    return;
  }
  for (size_t c = 0;; c += 8) {
    if (c + 8 > count) c = count - 8;
    for (size_t k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(in + (c + k) * 8);
    transpose8x8(r);
    for (size_t l = 0; l < 8; ++l) _mm256_storeu_ps(rows[l] + c, r[l]);
    if (c + 8 == count) return;
  }
}

// Eight elements of eight int8 runs, transposed and widened to x - zero_point: out[k] is
// element k's lanes.
inline void widen_int8_block(const __m128i r[8], __m256i zero_point, __m256 out[8]) {
  __m128i columns[4];
  transpose8x8_bytes(r, columns);
  for (size_t k = 0; k < 4; ++k) {
    const __m256i low = _mm256_sub_epi32(_mm256_cvtepi8_epi32(columns[k]), zero_point);
    const __m256i high = _mm256_sub_epi32(
        _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(columns[k], columns[k])), zero_point);
    out[2 * k] = _mm256_cvtepi32_ps(low);
    out[2 * k + 1] = _mm256_cvtepi32_ps(high);
  }
}

void interleave_int8_rows(const InterleaveRows<int8_t>& rows) {
  const __m256i zero = _mm256_set1_epi32(rows.zero_point);
  __m128i r[8];
  __m256 widened[8];
  InterleaveCursor cursor{rows.row_length, rows.out_row_stride};
  const size_t count = rows.count;
  if (count < 8) {
    alignas(16) int8_t staging[8][8] = {};
    for (size_t l = 0; l < 8; ++l) {
      for (size_t e = 0; e < count; ++e) staging[l][e] = rows.sources[l][e];
      r[l] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(staging[l]));
    }
    widen_int8_block(r, zero, widened);
    for (size_t e = 0; e < count; ++e, cursor.advance()) {
      _mm256_storeu_ps(rows.out + cursor.offset(), widened[e]);
    }
    return;
  }
  for (size_t e = 0;; e += 8) {
    if (e + 8 > count) {
      e = count - 8;
      cursor.seek(e);
    }
    for (size_t l = 0; l < 8; ++l) {
      r[l] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rows.sources[l] + e));
    }
    widen_int8_block(r, zero, widened);
    for (size_t k = 0; k < 8; ++k, cursor.advance()) {
      _mm256_storeu_ps(rows.out + cursor.offset(), widened[k]);
    }
    if (e + 8 == count) return;
  }
}

// One pixel's eight lane sums requantized (the small-multiplier path of requantize8_small) into
// the low 8 bytes.
inline __m128i requantize_lane_pixel(const float* sums, __m256i bias, __m256d multipliers_low,
                                     __m256d multipliers_high, const SmallRequantizeConstants& k) {
  const __m256i values = _mm256_add_epi32(_mm256_cvttps_epi32(_mm256_loadu_ps(sums)), bias);
  const __m128i low = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(values)), multipliers_low));
  const __m128i high = _mm256_cvtpd_epi32(
      _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(values, 1)), multipliers_high));
  __m256i rounded = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
  rounded = _mm256_add_epi32(rounded, k.zero_point);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, k.minimum), k.maximum);
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
  return _mm_packs_epi16(words, words);
}

// The same for RequantizeLanes::in_float (requantize16_in_float's rounding): the sum plus the
// bias is exact in float within 2^24, and one FMA rounds its product half to even.
struct FloatLaneConstants {
  __m256 bias;
  __m256 multipliers;
  __m256 magic;        // 1.5 x 2^23
  __m256i magic_bits;  // 0x4B400000 - zero point
};

inline __m128i requantize_lane_pixel_in_float(const float* sums, const FloatLaneConstants& f,
                                              const SmallRequantizeConstants& k) {
  const __m256 value = _mm256_add_ps(_mm256_loadu_ps(sums), f.bias);
  __m256i rounded = _mm256_sub_epi32(
      _mm256_castps_si256(_mm256_fmadd_ps(value, f.multipliers, f.magic)), f.magic_bits);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, k.minimum), k.maximum);
  const __m128i words =
      _mm_packs_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
  return _mm_packs_epi16(words, words);
}

void requantize_lanes(const RequantizeLanes& lanes) {
  const int32_t minimum =
      lanes.output_minimum <= lanes.output_maximum ? lanes.output_minimum : lanes.output_maximum;
  const SmallRequantizeConstants k{_mm256_set1_epi32(lanes.output_zero_point),
                                   _mm256_set1_epi32(minimum),
                                   _mm256_set1_epi32(lanes.output_maximum)};
  const __m256i bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes.bias));
  const __m256d multipliers_low = _mm256_cvtps_pd(_mm_loadu_ps(lanes.multipliers));
  const __m256d multipliers_high = _mm256_cvtps_pd(_mm_loadu_ps(lanes.multipliers + 4));
  // The zero point goes into the constant subtracted from the FMA's bits (int32, no overflow
  // for zero points within int8's codes); otherwise the int32 path.
  const bool in_float =
      lanes.in_float && lanes.output_zero_point >= -128 && lanes.output_zero_point <= 127;
  const FloatLaneConstants f{_mm256_cvtepi32_ps(bias), _mm256_loadu_ps(lanes.multipliers),
                             _mm256_set1_ps(12582912.0f),
                             _mm256_set1_epi32(0x4B400000 - lanes.output_zero_point)};
  auto pixel = [&](const float* sums) {
    return in_float ? requantize_lane_pixel_in_float(sums, f, k)
                    : requantize_lane_pixel(sums, bias, multipliers_low, multipliers_high, k);
  };
  const size_t count = lanes.count;
  int8_t* const* rows = lanes.rows;
  __m128i r[8];
  __m128i columns[4];
  if (count < 8) {
    alignas(16) int8_t staging[16];
    for (size_t c = 0; c < 8; ++c) {
      r[c] = c < count ? pixel(lanes.sums + c * 8) : _mm_setzero_si128();
    }
    transpose8x8_bytes(r, columns);
    for (size_t l = 0; l < 8; ++l) {
      _mm_store_si128(reinterpret_cast<__m128i*>(staging), columns[l / 2]);
      for (size_t c = 0; c < count; ++c) rows[l][c] = staging[(l % 2) * 8 + c];
    }
    return;
  }
  // The last block ends at the row's end and may overlap the one before (same values).
  for (size_t c = 0;; c += 8) {
    if (c + 8 > count) c = count - 8;
    for (size_t p = 0; p < 8; ++p) r[p] = pixel(lanes.sums + (c + p) * 8);
    transpose8x8_bytes(r, columns);
    for (size_t l = 0; l < 8; l += 2) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[l] + c), columns[l / 2]);
      // The high half through an unaligned 8-byte store (_mm_storeh_pd stores a double*).
      _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[l + 1] + c),
                       _mm_unpackhi_epi64(columns[l / 2], columns[l / 2]));
    }
    if (c + 8 == count) return;
  }
}

}  // namespace

const MicroKernels& avx2_micro_kernels() {
  static const MicroKernels kernels{"avx2",
                                    kFloatRows,
                                    kFloatColumns,
                                    float_tile,
                                    kIntRows,
                                    kIntColumns,
                                    int16_pair_tile,
                                    pack_int8_pairs,
                                    requantize_row,
                                    depthwise_plane,
                                    binary_row,
                                    quantized_binary_row,
                                    quantized_add_row,
                                    max_row_float,
                                    max_row_int8,
                                    add_row_float,
                                    unary_row,
                                    requantize_silu_row,
                                    reproducible_exp_row,
                                    widen_int8_row,
                                    float_sums_to_accumulators,
                                    lookup_int8_row,
                                    depthwise_lanes,
                                    interleave_float_rows,
                                    interleave_int8_rows,
                                    deinterleave_float_rows,
                                    requantize_lanes,
                                    nullptr,
                                    nullptr,
                                    requantize_silu_offset_row,
                                    avx2_winograd_input_run,
                                    avx2_winograd_output_run,
                                    avx2_interleave_pairs,
                                    avx2_depthwise_pairs};
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
