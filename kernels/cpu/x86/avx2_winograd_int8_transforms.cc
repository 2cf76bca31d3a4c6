// The Winograd F(2x2, 3x3) transforms of the int8 convolution on AVX2 (micro_kernels.h
// WinogradInputRun / WinogradOutputRun; int8_winograd_convolution.cc is the driver). The file is
// compiled for the baseline ISA and every function carries AVX2 as a target attribute:
// intrinsics and this file's own functions only (docs/cpu-kernels.md, "Variants and dispatch").
#include <immintrin.h>

#include "optimized/micro_kernels.h"

#define ORKNN_TARGET_AVX2 __attribute__((target("avx2")))

namespace orknn::kernels::cpu::optimized {
namespace {

ORKNN_TARGET_AVX2 inline __m256i load16(const int16_t* values) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values));
}
ORKNN_TARGET_AVX2 inline __m256i load8(const int32_t* values) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values));
}

// The first `count` (up to 8; more means all) of 8 32-bit lanes set.
ORKNN_TARGET_AVX2 inline __m256i first_lanes_mask(size_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count < 8 ? count : 8)), lanes);
}

// U = B^T d B of 16 lanes from lane n on: 16 loads, 32 additions, the 16 positions to `out`.
ORKNN_TARGET_AVX2 inline void input_lanes16(const int16_t* const even[4],
                                            const int16_t* const odd[4], size_t n,
                                            __m256i out[16]) {
  __m256i columns[4][4];  // B^T d: down each column
  __m256i d[4][4];
  for (size_t r = 0; r < 4; ++r) {
    d[r][0] = load16(even[r] + n);
    d[r][1] = load16(odd[r] + n);
    d[r][2] = load16(even[r] + n + 2);
    d[r][3] = load16(odd[r] + n + 2);
  }
  for (size_t c = 0; c < 4; ++c) {
    columns[0][c] = _mm256_sub_epi16(d[0][c], d[2][c]);
    columns[1][c] = _mm256_add_epi16(d[1][c], d[2][c]);
    columns[2][c] = _mm256_sub_epi16(d[2][c], d[1][c]);
    columns[3][c] = _mm256_sub_epi16(d[1][c], d[3][c]);
  }
  for (size_t i = 0; i < 4; ++i) {  // then along each row: (B^T d) B
    out[i * 4 + 0] = _mm256_sub_epi16(columns[i][0], columns[i][2]);
    out[i * 4 + 1] = _mm256_add_epi16(columns[i][1], columns[i][2]);
    out[i * 4 + 2] = _mm256_sub_epi16(columns[i][2], columns[i][1]);
    out[i * 4 + 3] = _mm256_sub_epi16(columns[i][1], columns[i][3]);
  }
}

// Y = A^T M A / 4 + bias of 8 tiles: `m` holds the 16 positions' vectors, y[r][c] the outputs.
ORKNN_TARGET_AVX2 inline void output_tiles8(const __m256i m[16], __m256i bias, __m256i y[2][2]) {
  __m256i rows[2][4];  // A^T M
  for (size_t j = 0; j < 4; ++j) {
    rows[0][j] = _mm256_add_epi32(_mm256_add_epi32(m[j], m[4 + j]), m[8 + j]);
    rows[1][j] = _mm256_sub_epi32(_mm256_sub_epi32(m[4 + j], m[8 + j]), m[12 + j]);
  }
  // (A^T M) A is a multiple of 4 (the driver's bounds): the arithmetic shift divides exactly.
  for (size_t i = 0; i < 2; ++i) {
    const __m256i left = _mm256_add_epi32(_mm256_add_epi32(rows[i][0], rows[i][1]), rows[i][2]);
    const __m256i right = _mm256_sub_epi32(_mm256_sub_epi32(rows[i][1], rows[i][2]), rows[i][3]);
    y[i][0] = _mm256_add_epi32(_mm256_srai_epi32(left, 2), bias);
    y[i][1] = _mm256_add_epi32(_mm256_srai_epi32(right, 2), bias);
  }
}

// The outputs of 8 tiles, columns (2t, 2t + 1) side by side: 16 int32 from out on.
ORKNN_TARGET_AVX2 inline void store_interleaved(__m256i left, __m256i right, int32_t* out) {
  const __m256i low = _mm256_unpacklo_epi32(left, right);   // tiles 0, 1 | 4, 5
  const __m256i high = _mm256_unpackhi_epi32(left, right);  // tiles 2, 3 | 6, 7
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(low, high, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8),
                      _mm256_permute2x128_si256(low, high, 0x31));
}

}  // namespace

ORKNN_TARGET_AVX2 void avx2_winograd_input_run(const WinogradInputRun& run) {
  const size_t row_step = 2 * run.row_length;
  const int16_t* even[4];
  const int16_t* odd[4];
  for (size_t r = 0; r < 4; ++r) {
    even[r] = run.rows + r * row_step;
    odd[r] = even[r] + run.row_length;
  }
  __m256i u[16];
  size_t n = 0;
  for (; n + 16 <= run.count; n += 16) {
    input_lanes16(even, odd, n, u);
    for (size_t position = 0; position < 16; ++position) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(run.out + position * run.position_step + n),
                          u[position]);
    }
  }
  if (n == run.count) return;
  // The last lanes (an even count: two per tile): all 16 computed (the rows are readable that
  // far), the real ones stored as 32-bit units under a mask.
  input_lanes16(even, odd, n, u);
  const __m256i mask = first_lanes_mask((run.count - n) / 2);
  for (size_t position = 0; position < 16; ++position) {
    _mm256_maskstore_epi32(reinterpret_cast<int*>(run.out + position * run.position_step + n), mask,
                           u[position]);
  }
}

// The largest of `largest`'s lanes and *out (unsigned), into *out.
ORKNN_TARGET_AVX2 inline void store_largest(__m256i largest, uint32_t* out) {
  __m128i half =
      _mm_max_epu32(_mm256_castsi256_si128(largest), _mm256_extracti128_si256(largest, 1));
  half = _mm_max_epu32(half, _mm_shuffle_epi32(half, 0x4E));
  half = _mm_max_epu32(half, _mm_shuffle_epi32(half, 0xB1));
  const auto lane = static_cast<uint32_t>(_mm_cvtsi128_si32(half));
  *out = lane > *out ? lane : *out;
}

// The lanes' |y| (as unsigned: |INT32_MIN| is 2^31) max'ed into `largest`.
ORKNN_TARGET_AVX2 inline __m256i track_largest(__m256i largest, const __m256i y[2][2]) {
  for (size_t i = 0; i < 2; ++i) {
    for (size_t c = 0; c < 2; ++c) largest = _mm256_max_epu32(largest, _mm256_abs_epi32(y[i][c]));
  }
  return largest;
}

ORKNN_TARGET_AVX2 void avx2_winograd_output_run(const WinogradOutputRun& run) {
  const __m256i bias = _mm256_set1_epi32(run.bias);
  __m256i m[16];
  __m256i y[2][2];
  __m256i largest = _mm256_setzero_si256();
  size_t t = 0;
  for (; t + 8 <= run.count; t += 8) {
    for (size_t position = 0; position < 16; ++position) {
      m[position] = load8(run.m + position * run.position_step + t);
    }
    output_tiles8(m, bias, y);
    largest = track_largest(largest, y);
    store_interleaved(y[0][0], y[0][1], run.top + 2 * t);
    store_interleaved(y[1][0], y[1][1], run.bottom + 2 * t);
  }
  if (t == run.count) {
    store_largest(largest, run.largest);
    return;
  }
  // The last tiles under masks: loads that stop at M's last tile, stores at the rows' ends.
  const size_t rest = run.count - t;
  const __m256i tiles = first_lanes_mask(rest);
  for (size_t position = 0; position < 16; ++position) {
    m[position] = _mm256_maskload_epi32(
        reinterpret_cast<const int*>(run.m + position * run.position_step + t), tiles);
  }
  output_tiles8(m, bias, y);
  // Lanes past the run hold the bias alone (their M masked to 0): counting them can only make
  // the float path's check stricter.
  store_largest(track_largest(largest, y), run.largest);
  const __m256i first = first_lanes_mask(2 * rest);
  const __m256i second = first_lanes_mask(2 * rest > 8 ? 2 * rest - 8 : 0);
  for (size_t i = 0; i < 2; ++i) {
    int32_t* out = (i == 0 ? run.top : run.bottom) + 2 * t;
    const __m256i low = _mm256_unpacklo_epi32(y[i][0], y[i][1]);
    const __m256i high = _mm256_unpackhi_epi32(y[i][0], y[i][1]);
    _mm256_maskstore_epi32(reinterpret_cast<int*>(out), first,
                           _mm256_permute2x128_si256(low, high, 0x20));
    _mm256_maskstore_epi32(reinterpret_cast<int*>(out + 8), second,
                           _mm256_permute2x128_si256(low, high, 0x31));
  }
}

}  // namespace orknn::kernels::cpu::optimized
