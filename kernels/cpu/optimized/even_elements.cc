// SSE2 (every x86-64) takes 16 bytes or 4 floats per step from two loads; the scalar loop alone
// cost about as much as a downsample layer's gain (ResNet50's 64 -> 128). The last step is moved
// back to end at the last element (or at the last one it may read), overlapping the step before
// it with the same values, so a row's tail rarely goes one element at a time.
#include "optimized/even_elements.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace orknn::kernels::cpu::optimized {
namespace {

// The vector steps over [0, count) while each reads inside `available`, then the last one
// moved back; returns the first element left to the scalar loop.
template <size_t kStep, typename Step>
size_t vector_steps(size_t count, size_t available, Step&& step) {
  size_t i = 0;
  for (; i + kStep <= count && 2 * i + 2 * kStep <= available; i += kStep) step(i);
  if (i < count && count >= kStep && available >= 2 * kStep) {
    // The furthest step that ends within the row and reads within `available`.
    const size_t last = std::min(count - kStep, (available - 2 * kStep) / 2);
    if (last + kStep > i) {
      step(last);
      i = last + kStep;
    }
  }
  return i;
}

}  // namespace

void copy_even_elements(const int8_t* row, int8_t* target, size_t count, size_t available) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i low_bytes = _mm_set1_epi16(0x00ff);
  i = vector_steps<16>(count, available, [&](size_t at) {
    const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * at));
    const __m128i second = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * at + 16));
    // Each 16-bit lane keeps its even byte (0..255), which packus narrows back to bytes.
    const __m128i even =
        _mm_packus_epi16(_mm_and_si128(first, low_bytes), _mm_and_si128(second, low_bytes));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(target + at), even);
  });
#endif
  for (; i < count; ++i) target[i] = row[2 * i];
}

void copy_even_elements(const float* row, float* target, size_t count, size_t available) {
  size_t i = 0;
#if defined(__SSE2__)
  i = vector_steps<4>(count, available, [&](size_t at) {
    const __m128 first = _mm_loadu_ps(row + 2 * at);
    const __m128 second = _mm_loadu_ps(row + 2 * at + 4);
    _mm_storeu_ps(target + at, _mm_shuffle_ps(first, second, _MM_SHUFFLE(2, 0, 2, 0)));
  });
#endif
  for (; i < count; ++i) target[i] = row[2 * i];
}

}  // namespace orknn::kernels::cpu::optimized
