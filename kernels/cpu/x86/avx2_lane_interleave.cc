// The avx2 table's interleave rows of the depthwise lanes (InterleaveRows): eight channel rows
// to and from 8-channel lane order, float and int8 (widened), through 8 x 8 transposes.
// Compiled with -mavx2 -mfma -ffp-contract=off (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt);
// the rule of x86/avx2_micro_kernels.h applies: no standard-library templates or inline functions.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/avx2_float_activation.h"
#include "x86/avx2_micro_kernels.h"
#include "x86/byte_transpose.h"

namespace orknn::kernels::cpu::optimized::avx2 {
namespace {

using avx2_float::transpose8x8;

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

}  // namespace

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

}  // namespace orknn::kernels::cpu::optimized::avx2
