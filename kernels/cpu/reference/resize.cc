#include "reference/resize.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

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
    default:  // the general resampler's modes: not used by the float32 kernels
      break;
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

LinearTap linear_tap(const ResizeParams& p, size_t dimension, int64_t output_index) {
  const int64_t input_length = p.input_shape[dimension];
  float coordinate = original_coordinate(p.transform, output_index, p.scales[dimension],
                                         input_length, p.output_shape[dimension]);
  coordinate = std::min(std::max(coordinate, 0.0f), static_cast<float>(input_length - 1));
  const int64_t low = static_cast<int64_t>(coordinate);  // coordinate >= 0: truncation is floor
  const int64_t high = std::min(low + 1, input_length - 1);
  return {low, high, coordinate - static_cast<float>(low)};
}

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

// --- general separable resampler ---------------------------------------------------------------

namespace {

// Where output index `y` of one dimension falls in the input (the specification's x_original).
// `resized_length` is scale x input length as a real number, as the specification uses it.
double general_coordinate(const GeneralResizeOptions& options, size_t dimension, int64_t y,
                          int64_t input_length, int64_t output_length) {
  const double scale = options.scales[dimension];
  const double resized_length = scale * static_cast<double>(input_length);
  const double x = static_cast<double>(y);
  const double last = static_cast<double>(input_length - 1);
  switch (options.transform) {
    case CoordinateTransform::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateTransform::kPytorchHalfPixel:
      return resized_length == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
    case CoordinateTransform::kAlignCorners:
      return resized_length == 1.0 ? 0.0 : x * last / (resized_length - 1.0);
    case CoordinateTransform::kAsymmetric:
      return x / scale;
    case CoordinateTransform::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(output_length) / resized_length;
      const double centre = static_cast<double>(input_length) / 2.0;
      return centre * (1.0 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case CoordinateTransform::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case CoordinateTransform::kTfCropAndResize: {
      const double start = options.roi_start[dimension];
      const double end = options.roi_end[dimension];
      const double offset = start * last;
      if (resized_length == 1.0) return (end - start) * last / 2.0 + offset;
      return x * (end - start) * last / (resized_length - 1.0) + offset;
    }
  }
  return x;
}

double cubic_weight(double distance, double a) {
  const double x = std::fabs(distance);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

// The filter weights for a fractional position `ratio` in (0, 1] past the tap at
// floor(coordinate) (1 when the coordinate is an integer: the left neighbour is preferred).
std::vector<double> filter_weights(const GeneralResizeOptions& options, double ratio,
                                   double scale) {
  switch (options.mode) {
    case InterpolationMode::kNearest: {
      bool upper = true;  // an integer coordinate (ratio 1) is the upper tap itself
      if (ratio != 1.0) {
        switch (options.rounding) {
          case NearestRounding::kRoundPreferFloor:
            upper = ratio > 0.5;
            break;
          case NearestRounding::kRoundPreferCeil:
            upper = ratio >= 0.5;
            break;
          case NearestRounding::kFloor:
            upper = false;
            break;
          case NearestRounding::kCeil:
            upper = true;
            break;
        }
      }
      return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
    }
    case InterpolationMode::kLinear: {
      if (!options.antialias) return {1.0 - ratio, ratio};
      // A triangle filter stretched by 1 / scale when downsampling.
      const double stretch = std::min(scale, 1.0);
      const auto start = static_cast<int64_t>(std::floor(-1.0 / stretch) + 1.0);
      const int64_t footprint = 2 - 2 * start;
      std::vector<double> weights;
      double sum = 0.0;
      for (int64_t i = 0; i < footprint; ++i) {
        const double argument = (static_cast<double>(start + i) - ratio) * stretch;
        weights.push_back(std::min(std::max(1.0 - std::fabs(argument), 0.0), 1.0));
        sum += weights.back();
      }
      for (double& weight : weights) weight /= sum;
      return weights;
    }
    case InterpolationMode::kCubic: {
      const double a = options.cubic_coefficient;
      if (!options.antialias) {
        return {cubic_weight(ratio + 1.0, a), cubic_weight(ratio, a), cubic_weight(1.0 - ratio, a),
                cubic_weight(2.0 - ratio, a)};
      }
      const double stretch = std::min(scale, 1.0);
      const auto first = static_cast<int64_t>(std::floor(-2.0 / stretch) + 1.0);
      const int64_t last = 2 - first;  // exclusive
      std::vector<double> weights;
      double sum = 0.0;
      for (int64_t i = first; i < last; ++i) {
        weights.push_back(cubic_weight(stretch * (static_cast<double>(i) - ratio), a));
        sum += weights.back();
      }
      for (double& weight : weights) weight /= sum;
      return weights;
    }
  }
  return {1.0};
}

ResizeAxisTaps axis_taps(const GeneralResizeOptions& options, size_t dimension,
                         int64_t input_length, int64_t output_length) {
  ResizeAxisTaps axis;
  const bool crop = options.transform == CoordinateTransform::kTfCropAndResize;
  const bool trivial_roi = !crop || (std::fabs(options.roi_start[dimension]) < 1e-9 &&
                                     std::fabs(options.roi_end[dimension] - 1.0) < 1e-9);
  if (std::fabs(options.scales[dimension] - 1.0) < 1e-9 && output_length == input_length &&
      trivial_roi) {
    // The specification leaves such an axis untouched.
    axis.taps = 1;
    for (int64_t y = 0; y < output_length; ++y) {
      axis.indices.push_back(y);
      axis.weights.push_back(1.0);
    }
    axis.extrapolated.assign(static_cast<size_t>(output_length), 0);
    return axis;
  }
  for (int64_t y = 0; y < output_length; ++y) {
    const double coordinate =
        general_coordinate(options, dimension, y, input_length, output_length);
    axis.extrapolated.push_back(
        crop && (coordinate < 0.0 || coordinate > static_cast<double>(input_length - 1)) ? 1 : 0);
    const double below = std::floor(coordinate);
    const double ratio = coordinate == below ? 1.0 : coordinate - below;
    std::vector<double> weights = filter_weights(options, ratio, options.scales[dimension]);
    const auto taps = static_cast<int64_t>(weights.size());
    axis.taps = taps;
    // The `taps` input positions nearest the coordinate, the smaller on ties: an even filter
    // starts taps / 2 - 1 past floor (taps / 2 at an integer), an odd one is centred on the
    // nearest integer.
    int64_t first;
    if (taps % 2 == 0) {
      first = static_cast<int64_t>(below) - (coordinate == below ? taps / 2 : taps / 2 - 1);
    } else {
      const double fraction = coordinate - below;
      first = static_cast<int64_t>(below) - (taps - 1) / 2 + (fraction <= 0.5 ? 0 : 1);
    }
    if (options.exclude_outside) {
      double sum = 0.0;
      for (int64_t i = 0; i < taps; ++i) {
        const int64_t index = first + i;
        if (index < 0 || index >= input_length) weights[static_cast<size_t>(i)] = 0.0;
        sum += weights[static_cast<size_t>(i)];
      }
      if (sum != 0.0) {
        for (double& weight : weights) weight /= sum;
      }
    }
    for (int64_t i = 0; i < taps; ++i) {
      axis.indices.push_back(std::min(std::max(first + i, int64_t{0}), input_length - 1));
      axis.weights.push_back(weights[static_cast<size_t>(i)]);
    }
  }
  return axis;
}

// Sums the taps of dimensions `dimension`.. for one output element whose per-dimension output
// indices are `coordinates`; `offset` is the input offset of the dimensions already chosen.
double sum_taps(const GeneralResizeParams& params, const int64_t* coordinates, size_t dimension,
                int64_t offset, const float* input) {
  if (dimension == params.axes.size()) return input[offset];
  const ResizeAxisTaps& axis = params.axes[dimension];
  int64_t stride = 1;
  for (size_t d = dimension + 1; d < params.input_shape.size(); ++d)
    stride *= params.input_shape[d];
  double sum = 0.0;
  const int64_t base = coordinates[dimension] * axis.taps;
  for (int64_t i = 0; i < axis.taps; ++i) {
    const double weight = axis.weights[static_cast<size_t>(base + i)];
    if (weight == 0.0) continue;
    sum += weight * sum_taps(params, coordinates, dimension + 1,
                             offset + axis.indices[static_cast<size_t>(base + i)] * stride, input);
  }
  return sum;
}

constexpr size_t kMaxResizeRank = 8;

}  // namespace

GeneralResizeParams make_general_resize(const GeneralResizeOptions& options,
                                        const std::vector<int64_t>& input_shape,
                                        const std::vector<int64_t>& output_shape) {
  GeneralResizeParams params;
  params.input_shape = input_shape;
  params.output_shape = output_shape;
  params.extrapolation_value = options.extrapolation_value;
  for (size_t d = 0; d < input_shape.size(); ++d) {
    params.axes.push_back(axis_taps(options, d, input_shape[d], output_shape[d]));
  }
  return params;
}

void resize_general(const GeneralResizeParams& params, const float* input, float* output) {
  const size_t rank = params.output_shape.size();
  int64_t count = 1;
  for (int64_t dimension : params.output_shape) count *= dimension;
  int64_t coordinates[kMaxResizeRank] = {};
  if (rank > kMaxResizeRank) std::abort();  // the shape function limits the rank
  for (int64_t index = 0; index < count; ++index) {
    int64_t remaining = index;
    bool extrapolated = false;
    for (size_t d = rank; d-- > 0;) {
      coordinates[d] = remaining % params.output_shape[d];
      remaining /= params.output_shape[d];
      extrapolated |= params.axes[d].extrapolated[static_cast<size_t>(coordinates[d])] != 0;
    }
    output[index] = extrapolated ? params.extrapolation_value
                                 : static_cast<float>(sum_taps(params, coordinates, 0, 0, input));
  }
}

}  // namespace orknn::kernels::reference
