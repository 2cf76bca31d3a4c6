// The 8 x 8 byte transpose the depthwise lane kernels use to put eight channels' codes back
// into channel rows, and those rows' stores, shared by the avx2 and avx512 x86 files. SSE2 only, so
// any x86 file's functions may inline it; it sits in an unnamed namespace so that each file gets
// its own copy, compiled with that file's instruction set (the AVX2 file's build flags would
// otherwise let the linker hand a VEX-encoded copy to code built for the baseline ISA, or the
// reverse).
#pragma once

#include <emmintrin.h>

#include <cstddef>
#include <cstdint>

namespace orknn::kernels::cpu::optimized {
namespace {

// Transposes the low 8 bytes of r[0..7]: the low and high halves of columns[k] are columns 2k
// and 2k + 1.
inline void transpose8x8_bytes(const __m128i r[8], __m128i columns[4]) {
  const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]);
  const __m128i t1 = _mm_unpacklo_epi8(r[2], r[3]);
  const __m128i t2 = _mm_unpacklo_epi8(r[4], r[5]);
  const __m128i t3 = _mm_unpacklo_epi8(r[6], r[7]);
  const __m128i u0 = _mm_unpacklo_epi16(t0, t1);
  const __m128i u1 = _mm_unpackhi_epi16(t0, t1);
  const __m128i u2 = _mm_unpacklo_epi16(t2, t3);
  const __m128i u3 = _mm_unpackhi_epi16(t2, t3);
  columns[0] = _mm_unpacklo_epi32(u0, u2);
  columns[1] = _mm_unpackhi_epi32(u0, u2);
  columns[2] = _mm_unpacklo_epi32(u1, u3);
  columns[3] = _mm_unpackhi_epi32(u1, u3);
}

// The depthwise lanes' last step (RequantizeLanes): eight pixels' codes, r[p] holding pixel p's
// 8 channels in its low 8 bytes, stored as columns c to c + 7 of the 8 channel rows.
inline void store_pixel_codes(const __m128i r[8], int8_t* const* rows, size_t c) {
  __m128i columns[4];
  transpose8x8_bytes(r, columns);
  for (size_t l = 0; l < 8; l += 2) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[l] + c), columns[l / 2]);
    // The high half through an unaligned 8-byte store (_mm_storeh_pd stores a double*).
    _mm_storel_epi64(reinterpret_cast<__m128i*>(rows[l + 1] + c),
                     _mm_unpackhi_epi64(columns[l / 2], columns[l / 2]));
  }
}

// The same for the first `count` (< 8) pixels only, as columns 0 to count - 1, through a staging
// copy.
inline void store_first_pixel_codes(const __m128i r[8], int8_t* const* rows, size_t count) {
  __m128i columns[4];
  transpose8x8_bytes(r, columns);
  alignas(16) int8_t staging[16];
  for (size_t l = 0; l < 8; ++l) {
    _mm_store_si128(reinterpret_cast<__m128i*>(staging), columns[l / 2]);
    for (size_t c = 0; c < count; ++c) rows[l][c] = staging[(l % 2) * 8 + c];
  }
}

}  // namespace
}  // namespace orknn::kernels::cpu::optimized
