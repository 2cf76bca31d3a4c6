// The avx512 table's int8 depthwise requantization (micro_kernels.h RequantizeLanes) on AVX-512
// F/BW/VL, by function target attributes like the VNNI tiles: a pixel's eight lane sums become
// eight doubles in one zmm (one conversion, one product, one rounding conversion where avx2
// needs two of each) and eight codes in one saturating narrowing (vpmovsdb), then the 8 x 8
// byte transpose of avx2's row puts them back into channel rows. Same bits as avx2's
// small-multiplier path: int32 to double is exact, vcvtpd2dq rounds half to even in the
// default MXCSR mode (nearbyint), |product| < 2^30 keeps the zero point and clamp exact in
// int32, and the narrowing sees values already within int8.
#include <immintrin.h>

#include "optimized/micro_kernels.h"
#include "x86/byte_transpose.h"

#define ORKNN_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))

namespace orknn::kernels::cpu::optimized {
namespace {

struct LaneConstants {
  __m256i bias;
  __m512d multipliers;
  __m256i zero_point;
  __m256i minimum;
  __m256i maximum;
};

// One pixel's lanes as eight codes in the low 8 bytes (the maskz forms with every lane set:
// GCC 12's plain forms warn about their undefined source).
ORKNN_TARGET_AVX512 inline __m128i requantize_pixel(const float* sums, const LaneConstants& k) {
  const __m256i values =
      _mm256_add_epi32(_mm256_maskz_cvttps_epi32(0xFF, _mm256_loadu_ps(sums)), k.bias);
  __m256i rounded = _mm512_maskz_cvtpd_epi32(
      0xFF, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xFF, values), k.multipliers));
  rounded = _mm256_add_epi32(rounded, k.zero_point);
  rounded = _mm256_min_epi32(_mm256_max_epi32(rounded, k.minimum), k.maximum);
  return _mm256_maskz_cvtsepi32_epi8(0xFF, rounded);
}

}  // namespace

ORKNN_TARGET_AVX512 void avx512_requantize_lanes(const RequantizeLanes& lanes) {
  const LaneRequantization& q = lanes.requantization;
  float multipliers[kDepthwiseLanes];
  for (size_t l = 0; l < kDepthwiseLanes; ++l) multipliers[l] = q.multipliers[l];
  // min(max(v, low), high) with low > high gives high, as the reference's clamp does.
  const int32_t minimum =
      q.output_minimum <= q.output_maximum ? q.output_minimum : q.output_maximum;
  const LaneConstants k{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.bias)),
                        _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(multipliers)),
                        _mm256_set1_epi32(q.output_zero_point), _mm256_set1_epi32(minimum),
                        _mm256_set1_epi32(q.output_maximum)};
  const size_t count = lanes.count;
  int8_t* const* rows = q.rows;
  __m128i r[8];
  if (count < 8) {
    for (size_t c = 0; c < 8; ++c) {
      r[c] = c < count ? requantize_pixel(lanes.sums + c * 8, k) : _mm_setzero_si128();
    }
    store_first_pixel_codes(r, rows, count);
    return;
  }
  // The last block ends at the row's end and may overlap the one before (same values).
  for (size_t c = 0;; c += 8) {
    if (c + 8 > count) c = count - 8;
    for (size_t p = 0; p < 8; ++p) r[p] = requantize_pixel(lanes.sums + (c + p) * 8, k);
    store_pixel_codes(r, rows, c);
    if (c + 8 == count) return;
  }
}

}  // namespace orknn::kernels::cpu::optimized
