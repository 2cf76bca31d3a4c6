// One exp(x) for float32 whose every step is a plain IEEE operation in a fixed order, so a scalar
// build, the AVX2 and the NEON lanes (kernels/cpu/x86, kernels/cpu/arm) and the NPU emulator
// give the same bits on every machine, unlike std::exp, whose result depends on the C library.
// The int8 SiLU epilogue (docs/quantization.md 4.3) is defined on it; the rule, step by step,
// is docs/quantization.md 4.5, and any vector copy must follow it operation for operation.
#pragma once

namespace orknn {

// The constants of docs/quantization.md 4.5, shared by every implementation.
namespace reproducible_exp_constants {
// Inputs are clamped to [kLowest, kHighest]: below, e^x rounds to 0 in float32; above, to inf.
constexpr float kLowest = -104.0f;
constexpr float kHighest = 89.0f;
constexpr float kLog2E = 1.44269502162933349609375f;  // float32(log2(e))
// 1.5 x 2^23: (t + kRoundingShift) - kRoundingShift rounds t to an integer, half to even,
// for |t| < 2^22.
constexpr float kRoundingShift = 12582912.0f;
// ln 2 = kLn2High + kLn2Low; kLn2High has 9 significant bits, so n x kLn2High is exact.
constexpr float kLn2High = 0.693359375f;
constexpr float kLn2Low = -2.12194440e-4f;
// Cephes expf: e^r ~ 1 + r + r^2 (c0 + c1 r + ... + c5 r^5) for |r| <= ln2 / 2.
constexpr float kPolynomial5 = 1.9875691500e-4f;
constexpr float kPolynomial4 = 1.3981999507e-3f;
constexpr float kPolynomial3 = 8.3334519073e-3f;
constexpr float kPolynomial2 = 4.1665795894e-2f;
constexpr float kPolynomial1 = 1.6666665459e-1f;
constexpr float kPolynomial0 = 5.0000001201e-1f;
}  // namespace reproducible_exp_constants

// e^x within 2 ulp of the exact value for normal results (subnormal results within 2^-149 plus
// that); +inf for x >= 88.7228, 0 for x <= -103.98, NaN for NaN. Bit for bit the function of
// docs/quantization.md 4.5 (this file is built without floating-point contraction).
float reproducible_exp(float x);

}  // namespace orknn
