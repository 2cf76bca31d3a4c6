// Reference kernels of the elementwise family: binary arithmetic with numpy broadcasting and
// unary activations, on float32. These are the oracle for optimized kernels and for the NPU
// emulator, so they favour obvious correctness over speed.
#pragma once

#include <cstdint>
#include <vector>

namespace orknn::kernels::reference {

enum class BinaryOperation {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kPower,
  kPRelu,  // a < 0 ? a * b : a, with b the slope
};

// Walks an output of `output_shape` and the two operands broadcast into it. A stride is the
// operand's element stride for that output dimension, 0 where the operand is broadcast.
struct BroadcastParams {
  std::vector<int64_t> output_shape;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
};

// Precondition: the shapes broadcast (numpy rules); the shape functions check this.
BroadcastParams make_broadcast_params(const std::vector<int64_t>& a_shape,
                                      const std::vector<int64_t>& b_shape);

float apply_binary(BinaryOperation operation, float a, float b);

// output[i] = a[broadcast i] (op) b[broadcast i] for every element of params.output_shape.
void binary(BinaryOperation operation, const BroadcastParams& params, const float* a,
            const float* b, float* output);

// Add, Sub, Mul and Div on integer tensors of one type T (int8/uint8/int16/int32/int64), as
// ONNX defines them for integers: results wrap around modulo 2^bits (numpy); Div truncates
// toward zero (test_div_int32_trunc); division by zero gives 0 (ONNX leaves it undefined and a
// kernel must never trap). kPower and kPRelu are not integer operations here: see integer_power.
template <typename T>
void integer_binary(BinaryOperation operation, const BroadcastParams& params, const T* a,
                    const T* b, T* output);

// Pow with an integer base: numpy's power(base, exponent) cast to T, the exponent given as
// double so integer and float exponents share one kernel. Integral exponents multiply exactly
// (wrapping); negative ones give the truncated 1 / base^n; fractional ones std::pow, truncated.
template <typename T>
void integer_power(const BroadcastParams& params, const T* base, const double* exponent, T* output);

// Clip on an integer tensor: min(max(x, minimum), maximum) in T.
template <typename T>
void integer_clip(const T* input, T minimum, T maximum, T* output, int64_t count);

// Copies `input` broadcast into params.output_shape (operand a of params; b is ignored).
void broadcast_to(const BroadcastParams& params, const float* input, float* output);

enum class UnaryOperation {
  kRelu,
  kClip,       // min(max(x, minimum), maximum)
  kLeakyRelu,  // x < 0 ? alpha * x : x
  kSigmoid,
  kHardSigmoid,  // max(0, min(1, alpha * x + beta))
  kHardSwish,    // x * max(0, min(1, x / 6 + 1 / 2))
  kSwish,        // x * sigmoid(alpha * x); SiLU is alpha = 1
  kTanh,
  kExp,
  kSqrt,  // NaN for negative inputs, as ONNX
  kNeg,
  kAbs,
  kReciprocal,
};

struct UnaryParams {
  UnaryOperation operation = UnaryOperation::kRelu;
  float alpha = 0.0f;
  float beta = 0.0f;
  float minimum = 0.0f;  // kClip
  float maximum = 0.0f;  // kClip
};

float apply_unary(const UnaryParams& params, float x);
void unary(const UnaryParams& params, const float* input, float* output, int64_t count);

}  // namespace orknn::kernels::reference
