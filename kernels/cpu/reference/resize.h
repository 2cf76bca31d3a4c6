// Reference kernels of ONNX Resize on float32 tensors: nearest neighbour over any number of
// dimensions and bilinear interpolation over the last two dimensions, the common cases, with
// coordinates computed in float32 as ONNX Runtime does, so that rounding decisions at exact
// halves agree with it; and a general separable resampler for everything else (cubic,
// antialias, tf_crop_and_resize with extrapolation, half_pixel_symmetric, linear over any
// dimensions, exclude_outside), which follows the ONNX specification's formulas in double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orknn::kernels::reference {

// ONNX coordinate_transformation_mode: where output index x falls in the input.
enum class CoordinateTransform {
  kHalfPixel,         // (x + 0.5) / scale - 0.5
  kPytorchHalfPixel,  // the same, but 0 when the output length is 1
  kAlignCorners,      // x * (input_length - 1) / (output_length - 1), 0 when output length is 1
  kAsymmetric,        // x / scale
  // General resampler only:
  kHalfPixelSymmetric,  // half_pixel shifted so the centre of the input maps to the output's
  kTfHalfPixelForNn,    // (x + 0.5) / scale (Resize-11 only)
  kTfCropAndResize,     // over the roi [start, end] of each axis; outside it: extrapolation
};

// ONNX nearest_mode: how a fractional input coordinate picks a neighbour.
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeParams {
  std::vector<int64_t> input_shape;
  std::vector<int64_t> output_shape;
  // Per dimension: the scale the model gave, or output / input when it gave sizes.
  std::vector<float> scales;
  CoordinateTransform transform = CoordinateTransform::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;  // nearest only
};

float original_coordinate(CoordinateTransform transform, int64_t output_index, float scale,
                          int64_t input_length, int64_t output_length);
// The input index nearest mode reads for `output_index`, clamped into [0, input_length).
int64_t nearest_index(const ResizeParams& params, size_t dimension, int64_t output_index);

void resize_nearest(const ResizeParams& params, const float* input, float* output);

// The two input neighbours of output index `output_index` along `dimension` and the weight of
// the upper one (the coordinate clamped into the input), as resize_bilinear uses them.
struct LinearTap {
  int64_t low;
  int64_t high;
  float weight;
};
LinearTap linear_tap(const ResizeParams& params, size_t dimension, int64_t output_index);

// Precondition: every dimension but the last two keeps its size. Coordinates are clamped into
// the input, so borders repeat the edge values.
void resize_bilinear(const ResizeParams& params, const float* input, float* output);

// --- general separable resampler ---------------------------------------------------------------

enum class InterpolationMode { kNearest, kLinear, kCubic };

struct GeneralResizeOptions {
  InterpolationMode mode = InterpolationMode::kNearest;
  CoordinateTransform transform = CoordinateTransform::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;
  std::vector<double> scales;     // per dimension
  std::vector<double> roi_start;  // per dimension, kTfCropAndResize only (default 0)
  std::vector<double> roi_end;    // per dimension (default 1)
  double cubic_coefficient = -0.75;
  bool antialias = false;  // linear and cubic: widen the filter by 1 / scale when downsampling
  bool exclude_outside = false;  // weights of taps outside the input are 0, the rest renormalised
  float extrapolation_value = 0.0f;
};

// For one dimension, every output index's taps: `taps` input indices (clamped into the input,
// which is the specification's edge padding) and their weights; `extrapolated` marks outputs
// whose coordinate left the roi's input range (tf_crop_and_resize).
struct ResizeAxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> indices;  // output_length x taps
  std::vector<double> weights;   // output_length x taps
  std::vector<uint8_t> extrapolated;
};

struct GeneralResizeParams {
  std::vector<int64_t> input_shape;
  std::vector<int64_t> output_shape;
  std::vector<ResizeAxisTaps> axes;  // per dimension
  float extrapolation_value = 0.0f;
};

// Precondition: shapes and option vectors have one entry per dimension; shapes positive.
GeneralResizeParams make_general_resize(const GeneralResizeOptions& options,
                                        const std::vector<int64_t>& input_shape,
                                        const std::vector<int64_t>& output_shape);

// Each output is the weighted sum over the product of its per-dimension taps (the separable
// filter), or the extrapolation value when any of its dimensions extrapolates. Allocates nothing.
void resize_general(const GeneralResizeParams& params, const float* input, float* output);

}  // namespace orknn::kernels::reference
