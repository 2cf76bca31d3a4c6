// Reference kernels of ONNX Resize on float32 tensors: nearest neighbour over any number of
// dimensions and bilinear interpolation over the last two dimensions.
//
// Coordinates are computed in float32, as ONNX Runtime does, so that rounding decisions at
// exact halves agree with it.
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
// Precondition: every dimension but the last two keeps its size. Coordinates are clamped into
// the input, so borders repeat the edge values.
void resize_bilinear(const ResizeParams& params, const float* input, float* output);

}  // namespace orknn::kernels::reference
