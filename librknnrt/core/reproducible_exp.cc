#include "core/reproducible_exp.h"

#include <cstdint>
#include <cstring>

namespace orknn {

namespace {

// 2^k as a float for k in [-126, 127]: the biased exponent in the exponent field.
float power_of_two(int32_t k) {
  const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

}  // namespace

// Each statement is one IEEE float32 operation in round-to-nearest-even; the vector versions
// repeat them in the same order (docs/quantization.md 4.5).
float reproducible_exp(float x) {
  using namespace reproducible_exp_constants;
  if (x != x) return x + x;  // NaN: quiet it
  x = x < kLowest ? kLowest : x;
  x = x > kHighest ? kHighest : x;
  float n = x * kLog2E;
  n = n + kRoundingShift;
  n = n - kRoundingShift;
  float r = x - n * kLn2High;
  r = r - n * kLn2Low;
  float p = kPolynomial5;
  p = p * r + kPolynomial4;
  p = p * r + kPolynomial3;
  p = p * r + kPolynomial2;
  p = p * r + kPolynomial1;
  p = p * r + kPolynomial0;
  const float square = r * r;
  float y = p * square;
  y = y + r;
  y = y + 1.0f;
  // 2^n in two factors so both stay normal floats (n in [-150, 128]): the first product is
  // exact, the second rounds once, also into the subnormal range or to infinity.
  const int32_t k = static_cast<int32_t>(n);
  const int32_t first = k >> 1;  // floor(k / 2)
  y = y * power_of_two(first);
  return y * power_of_two(k - first);
}

}  // namespace orknn
