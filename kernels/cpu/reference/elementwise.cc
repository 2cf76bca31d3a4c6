#include "reference/elementwise.h"

#include <algorithm>
#include <cmath>

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

// Visits output elements in row-major order, calling visit(a_offset, b_offset, output_offset)
// for each. Recursion keeps the walk allocation-free for any rank.
template <typename Visit>
void walk(const BroadcastParams& params, size_t dimension, int64_t a_offset, int64_t b_offset,
          int64_t* output_offset, const Visit& visit) {
  const int64_t size = params.output_shape[dimension];
  const int64_t a_stride = params.a_strides[dimension];
  const int64_t b_stride = params.b_strides[dimension];
  if (dimension + 1 == params.output_shape.size()) {
    for (int64_t i = 0; i < size; ++i) {
      visit(a_offset + i * a_stride, b_offset + i * b_stride, (*output_offset)++);
    }
    return;
  }
  for (int64_t i = 0; i < size; ++i) {
    walk(params, dimension + 1, a_offset + i * a_stride, b_offset + i * b_stride, output_offset,
         visit);
  }
}

template <typename Visit>
void walk_all(const BroadcastParams& params, const Visit& visit) {
  if (params.output_shape.empty()) {  // a scalar output has exactly one element
    visit(0, 0, 0);
    return;
  }
  int64_t output_offset = 0;
  walk(params, 0, 0, 0, &output_offset, visit);
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
  walk_all(params, [&](int64_t a_offset, int64_t b_offset, int64_t output_offset) {
    output[output_offset] = apply_binary(operation, a[a_offset], b[b_offset]);
  });
}

void broadcast_to(const BroadcastParams& params, const float* input, float* output) {
  walk_all(params, [&](int64_t a_offset, int64_t, int64_t output_offset) {
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
