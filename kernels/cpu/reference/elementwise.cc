#include "reference/elementwise.h"

#include "reference/broadcast_walk.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace orknn::kernels::reference {
namespace {

// Element strides of a row-major operand aligned to the right of an output of `rank`
// dimensions; dimensions the operand lacks or has as 1 get stride 0 (broadcast).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& output_shape) {
  const size_t rank = output_shape.size();
  const size_t offset = rank - shape.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i + offset] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

float sigmoid(float x) {
  // Two forms so that exp never overflows.
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

// min(max(x, low), high) that propagates NaN like numpy.clip.
float clamp_keep_nan(float x, float low, float high) {
  if (x < low) x = low;
  if (x > high) x = high;
  return x;
}

}  // namespace

BroadcastParams make_broadcast_params(const std::vector<int64_t>& a_shape,
                                      const std::vector<int64_t>& b_shape) {
  const size_t rank = std::max(a_shape.size(), b_shape.size());
  BroadcastParams params;
  params.output_shape.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + a_shape.size() >= rank ? a_shape[i + a_shape.size() - rank] : 1;
    const int64_t b = i + b_shape.size() >= rank ? b_shape[i + b_shape.size() - rank] : 1;
    params.output_shape[i] = a == 1 ? b : a;
  }
  params.a_strides = broadcast_strides(a_shape, params.output_shape);
  params.b_strides = broadcast_strides(b_shape, params.output_shape);
  return params;
}

float apply_binary(BinaryOperation operation, float a, float b) {
  switch (operation) {
    case BinaryOperation::kAdd:
      return a + b;
    case BinaryOperation::kSubtract:
      return a - b;
    case BinaryOperation::kMultiply:
      return a * b;
    case BinaryOperation::kDivide:
      return a / b;
    case BinaryOperation::kPower:
      return std::pow(a, b);
    case BinaryOperation::kPRelu:
      return a < 0.0f ? a * b : a;
  }
  return 0.0f;
}

void binary(BinaryOperation operation, const BroadcastParams& params, const float* a,
            const float* b, float* output) {
  broadcast_walk(params, [&](int64_t a_offset, int64_t b_offset, int64_t output_offset) {
    output[output_offset] = apply_binary(operation, a[a_offset], b[b_offset]);
  });
}

namespace {

// Wrapping arithmetic in T without signed-overflow undefined behaviour: computed in the unsigned
// type of the same width, whose conversion back to T is modular (C++20; every compiler we use).
template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrap_subtract(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
T wrap_multiply(T a, T b) {
  // Narrow unsigned types promote to int, where the product can overflow: widen first.
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}
template <typename T>
T truncating_divide(T a, T b) {
  if (b == 0) return 0;
  // The one signed quotient that overflows: lowest / -1 wraps to lowest.
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::lowest() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}

template <typename T>
T apply_integer_binary(BinaryOperation operation, T a, T b) {
  switch (operation) {
    case BinaryOperation::kAdd:
      return wrap_add(a, b);
    case BinaryOperation::kSubtract:
      return wrap_subtract(a, b);
    case BinaryOperation::kMultiply:
      return wrap_multiply(a, b);
    case BinaryOperation::kDivide:
      return truncating_divide(a, b);
    case BinaryOperation::kPower:
    case BinaryOperation::kPRelu:
      break;
  }
  return 0;
}

template <typename T>
T integer_power_of(T base, double exponent) {
  if (!(std::trunc(exponent) == exponent) || std::fabs(exponent) > 1e18) {
    // Fractional (or non-finite, or huge) exponent: numpy computes in float and casts back.
    const double real = std::pow(static_cast<double>(base), exponent);
    if (!std::isfinite(real) || real >= 9.2e18 || real <= -9.2e18) return 0;
    return static_cast<T>(static_cast<int64_t>(real));
  }
  if (exponent < 0) {  // 1 / base^n, truncated: only bases 1 and -1 give non-zero results
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (base == -1) return static_cast<int64_t>(-exponent) % 2 == 0 ? 1 : -1;
    }
    return 0;
  }
  auto remaining = static_cast<uint64_t>(exponent);
  T result = 1;
  T square = base;
  while (remaining != 0) {  // square-and-multiply, wrapping like repeated multiplication
    if (remaining & 1u) result = wrap_multiply(result, square);
    square = wrap_multiply(square, square);
    remaining >>= 1;
  }
  return result;
}

}  // namespace

template <typename T>
void integer_binary(BinaryOperation operation, const BroadcastParams& params, const T* a,
                    const T* b, T* output) {
  broadcast_walk(params, [&](int64_t a_offset, int64_t b_offset, int64_t output_offset) {
    output[output_offset] = apply_integer_binary(operation, a[a_offset], b[b_offset]);
  });
}

template <typename T>
void integer_power(const BroadcastParams& params, const T* base, const double* exponent,
                   T* output) {
  broadcast_walk(params, [&](int64_t a_offset, int64_t b_offset, int64_t output_offset) {
    output[output_offset] = integer_power_of(base[a_offset], exponent[b_offset]);
  });
}

template <typename T>
void integer_clip(const T* input, T minimum, T maximum, T* output, int64_t count) {
  for (int64_t i = 0; i < count; ++i) output[i] = std::min(std::max(input[i], minimum), maximum);
}

#define ORKNN_INSTANTIATE_INTEGER_BINARY(T)                                                    \
  template void integer_clip<T>(const T*, T, T, T*, int64_t);                                  \
  template void integer_binary<T>(BinaryOperation, const BroadcastParams&, const T*, const T*, \
                                  T*);                                                         \
  template void integer_power<T>(const BroadcastParams&, const T*, const double*, T*);
ORKNN_INSTANTIATE_INTEGER_BINARY(int8_t)
ORKNN_INSTANTIATE_INTEGER_BINARY(uint8_t)
ORKNN_INSTANTIATE_INTEGER_BINARY(int16_t)
ORKNN_INSTANTIATE_INTEGER_BINARY(int32_t)
ORKNN_INSTANTIATE_INTEGER_BINARY(int64_t)
#undef ORKNN_INSTANTIATE_INTEGER_BINARY

void broadcast_to(const BroadcastParams& params, const float* input, float* output) {
  broadcast_walk(params, [&](int64_t a_offset, int64_t, int64_t output_offset) {
    output[output_offset] = input[a_offset];
  });
}

float apply_unary(const UnaryParams& params, float x) {
  switch (params.operation) {
    case UnaryOperation::kRelu:
      return x < 0.0f ? 0.0f : x;
    case UnaryOperation::kClip:
      return clamp_keep_nan(x, params.minimum, params.maximum);
    case UnaryOperation::kLeakyRelu:
      return x < 0.0f ? params.alpha * x : x;
    case UnaryOperation::kSigmoid:
      return sigmoid(x);
    case UnaryOperation::kHardSigmoid:
      return clamp_keep_nan(params.alpha * x + params.beta, 0.0f, 1.0f);
    case UnaryOperation::kHardSwish:
      return x * clamp_keep_nan(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
    case UnaryOperation::kSwish:
      return x * sigmoid(params.alpha * x);
    case UnaryOperation::kTanh:
      return std::tanh(x);
    case UnaryOperation::kExp:
      return std::exp(x);
    case UnaryOperation::kSqrt:
      return std::sqrt(x);
    case UnaryOperation::kNeg:
      return -x;
    case UnaryOperation::kAbs:
      return std::fabs(x);
    case UnaryOperation::kReciprocal:
      return 1.0f / x;
  }
  return 0.0f;
}

void unary(const UnaryParams& params, const float* input, float* output, int64_t count) {
  for (int64_t i = 0; i < count; ++i) output[i] = apply_unary(params, input[i]);
}

}  // namespace orknn::kernels::reference
