// int8 Add and Sub on per-tensor int8 tensors, computed on the codes (docs/quantization.md
// section 4.6): with the operands' scales folded into ratios of the output scale,
//   y = float(a - a_zero) x a_ratio + float(b - b_zero) x b_ratio   (three float32 roundings)
//   code = saturate(round_half_to_even(y) + output_zero)
// Sub is Add with b_ratio negated (negation is exact, so these are the subtraction's bits).
// The sum is commutative, as the float domain's was, so the NPU's fused Add does not need to
// know which operand was the convolution's. ONNX Runtime's QLinearAdd computes the same kind of
// sum; it replaces the float domain's two decodes, its sum and its division, and the division
// bounded every vector version of that (docs/cpu-kernels.md, session 9). Plain IEEE products and
// one sum: every CPU variant and the NPU emulator give these bits (compiled without contraction
// into a fused multiply-add, which rounds once).
#pragma once

#include <cstdint>

#include "reference/elementwise.h"

namespace orknn::kernels::reference {

struct QuantizedAdd {
  float a_ratio = 1.0f;  // a_scale / output_scale, rounded once to float
  float b_ratio = 1.0f;  // b_scale / output_scale, negated for Sub
  int32_t a_zero_point = 0;
  int32_t b_zero_point = 0;
  int32_t output_zero_point = 0;
};

QuantizedAdd make_quantized_add(float a_scale, int32_t a_zero_point, float b_scale,
                                int32_t b_zero_point, float output_scale, int32_t output_zero_point,
                                bool subtract);

// One output code. Non-finite ratios (a zero or denormal output scale) give infinities that
// saturate, and NaN the output zero point, as the float domain's encode would.
int8_t quantized_add(int8_t a, int8_t b, const QuantizedAdd& add);

// output[i] = quantized_add(a[broadcast i], b[broadcast i]) over params.output_shape.
void quantized_add(const BroadcastParams& params, const int8_t* a, const int8_t* b,
                   const QuantizedAdd& add, int8_t* output);

}  // namespace orknn::kernels::reference
