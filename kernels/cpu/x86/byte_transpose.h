// The 8 x 8 byte transpose the depthwise lane kernels use to put eight channels' codes back
// into channel rows, shared by the avx2 and avx512 x86 files. SSE2 only, so any x86 file's
// functions may inline it; it sits in an unnamed namespace so that each file gets its own copy,
// compiled with that file's instruction set (the AVX2 file's build flags would otherwise let the
// linker hand a VEX-encoded copy to code built for the baseline ISA, or the reverse).
#pragma once

#include <emmintrin.h>

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

}  // namespace
}  // namespace orknn::kernels::cpu::optimized
