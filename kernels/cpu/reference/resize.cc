#include "reference/resize.h"

#include <algorithm>
#include <cmath>

namespace orknn::kernels::reference {

float original_coordinate(CoordinateTransform transform, int64_t output_index, float scale,
                          int64_t input_length, int64_t output_length) {
  const float x = static_cast<float>(output_index);
  switch (transform) {
    case CoordinateTransform::kHalfPixel:
      return (x + 0.5f) / scale - 0.5f;
    case CoordinateTransform::kPytorchHalfPixel:
      return output_length > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case CoordinateTransform::kAlignCorners:
      return output_length > 1
                 ? x * static_cast<float>(input_length - 1) / static_cast<float>(output_length - 1)
                 : 0.0f;
    case CoordinateTransform::kAsymmetric:
      return x / scale;
  }
  return x;
}

int64_t nearest_index(const ResizeParams& p, size_t dimension, int64_t output_index) {
  const int64_t input_length = p.input_shape[dimension];
  const float coordinate = original_coordinate(p.transform, output_index, p.scales[dimension],
                                               input_length, p.output_shape[dimension]);
  const float below = std::floor(coordinate);
  const float fraction = coordinate - below;  // exact: both are floats of the same magnitude
  float chosen = below;
  switch (p.rounding) {
    case NearestRounding::kFloor:
      chosen = below;
      break;
    case NearestRounding::kCeil:
      chosen = std::ceil(coordinate);
      break;
    case NearestRounding::kRoundPreferFloor:
      chosen = fraction > 0.5f ? below + 1.0f : below;
      break;
    case NearestRounding::kRoundPreferCeil:
      chosen = fraction >= 0.5f ? below + 1.0f : below;
      break;
  }
  const float bounded = std::min(std::max(chosen, 0.0f), static_cast<float>(input_length - 1));
  return static_cast<int64_t>(bounded);
}

void resize_nearest(const ResizeParams& p, const float* input, float* output) {
  int64_t count = 1;
  for (int64_t dimension : p.output_shape) count *= dimension;
  for (int64_t index = 0; index < count; ++index) {
    int64_t remaining = index, source = 0, input_stride = 1;
    for (size_t d = p.output_shape.size(); d-- > 0;) {
      const int64_t coordinate = remaining % p.output_shape[d];
      remaining /= p.output_shape[d];
      source += nearest_index(p, d, coordinate) * input_stride;
      input_stride *= p.input_shape[d];
    }
    output[index] = input[source];
  }
}

namespace {

// The two neighbours and the weight of the upper one for one output index.
struct LinearTap {
  int64_t low;
  int64_t high;
  float weight;
};

LinearTap linear_tap(const ResizeParams& p, size_t dimension, int64_t output_index) {
  const int64_t input_length = p.input_shape[dimension];
  float coordinate = original_coordinate(p.transform, output_index, p.scales[dimension],
                                         input_length, p.output_shape[dimension]);
  coordinate = std::min(std::max(coordinate, 0.0f), static_cast<float>(input_length - 1));
  const int64_t low = static_cast<int64_t>(coordinate);  // coordinate >= 0: truncation is floor
  const int64_t high = std::min(low + 1, input_length - 1);
  return {low, high, coordinate - static_cast<float>(low)};
}

}  // namespace

void resize_bilinear(const ResizeParams& p, const float* input, float* output) {
  const size_t rank = p.input_shape.size();
  const int64_t input_height = p.input_shape[rank - 2], input_width = p.input_shape[rank - 1];
  const int64_t output_height = p.output_shape[rank - 2], output_width = p.output_shape[rank - 1];
  int64_t planes = 1;
  for (size_t d = 0; d + 2 < rank; ++d) planes *= p.input_shape[d];

  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* source = input + plane * input_height * input_width;
    float* destination = output + plane * output_height * output_width;
    for (int64_t oh = 0; oh < output_height; ++oh) {
      const LinearTap y = linear_tap(p, rank - 2, oh);
      for (int64_t ow = 0; ow < output_width; ++ow) {
        const LinearTap x = linear_tap(p, rank - 1, ow);
        const float top = source[y.low * input_width + x.low] * (1.0f - x.weight) +
                          source[y.low * input_width + x.high] * x.weight;
        const float bottom = source[y.high * input_width + x.low] * (1.0f - x.weight) +
                             source[y.high * input_width + x.high] * x.weight;
        destination[oh * output_width + ow] = top * (1.0f - y.weight) + bottom * y.weight;
      }
    }
  }
}

}  // namespace orknn::kernels::reference
