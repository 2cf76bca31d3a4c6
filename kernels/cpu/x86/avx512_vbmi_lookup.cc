// An int8 activation's 256-entry table applied with AVX-512 VBMI, for the "avx512" variant's
// lookup_int8_row on CPUs that also report avx512vbmi (Ice Lake and later, Zen 4): 64 bytes
// per step instead of one.
//
// The table is indexed by code + 128, i.e. by the code's bits with bit 7 flipped. vpermi2b
// looks up 128 bytes (two registers) with the low seven bits of each index byte, so one
// vpermi2b over table[128..255] gives the result of every code >= 0 (bit 7 clear) and one over
// table[0..127] the result of every code < 0 (bit 7 set); vpmovb2m turns the codes' sign bits
// into the mask that blends the two. The tail is the same step with masked loads and stores
// (a masked load reads nothing past the mask, so no over-read at the end of a buffer).
//
// Every function carries its instruction set as a target attribute (the file stays at the
// baseline ISA); no header inlines (see avx512_vnni_tiles.cc). GCC 12's unmasked AVX-512
// intrinsics start from an "undefined" vector and trip -Wmaybe-uninitialized, so loads use the
// maskz form with every lane set, as in avx512_silu_epilogue.cc.
#include <cpuinfo_x86.h>
#include <immintrin.h>

#include "optimized/micro_kernels.h"

#define ORKNN_TARGET_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr __mmask64 kAllBytes = ~static_cast<__mmask64>(0);

// The 64 results for 64 codes; `mask` selects the lanes loaded and stored.
ORKNN_TARGET_AVX512_VBMI void lookup64(__m512i negative_low, __m512i negative_high,
                                       __m512i positive_low, __m512i positive_high,
                                       const int8_t* in, int8_t* out, __mmask64 mask) {
  const __m512i codes = _mm512_maskz_loadu_epi8(mask, in);
  const __m512i for_negative = _mm512_permutex2var_epi8(negative_low, codes, negative_high);
  const __m512i for_positive = _mm512_permutex2var_epi8(positive_low, codes, positive_high);
  const __mmask64 negative = _mm512_movepi8_mask(codes);
  _mm512_mask_storeu_epi8(out, mask, _mm512_mask_blend_epi8(negative, for_positive, for_negative));
}

}  // namespace

bool cpu_has_avx512_vbmi() {
  // cpu_features reports the AVX-512 features only when the OS saves the ZMM and mask state.
  static const bool supported = [] {
    const cpu_features::X86Features features = cpu_features::GetX86Info().features;
    return features.avx512f && features.avx512bw && features.avx512vbmi;
  }();
  return supported;
}

ORKNN_TARGET_AVX512_VBMI void avx512_vbmi_lookup_int8_row(const int8_t* table, const int8_t* in,
                                                          int8_t* out, size_t count) {
  // Loaded once per row: a row is a thread's chunk (thousands of bytes), so four loads are noise.
  const __m512i negative_low = _mm512_maskz_loadu_epi8(kAllBytes, table);
  const __m512i negative_high = _mm512_maskz_loadu_epi8(kAllBytes, table + 64);
  const __m512i positive_low = _mm512_maskz_loadu_epi8(kAllBytes, table + 128);
  const __m512i positive_high = _mm512_maskz_loadu_epi8(kAllBytes, table + 192);
  size_t i = 0;
  for (; i + 64 <= count; i += 64) {
    lookup64(negative_low, negative_high, positive_low, positive_high, in + i, out + i, kAllBytes);
  }
  if (i < count) {
    const __mmask64 tail = (static_cast<__mmask64>(1) << (count - i)) - 1;
    lookup64(negative_low, negative_high, positive_low, positive_high, in + i, out + i, tail);
  }
}

}  // namespace orknn::kernels::cpu::optimized
