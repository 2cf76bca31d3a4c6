// Attribute and operand parsing of ONNX Resize (opsets 10, 11, 13, 18, 19), shared by the shape
// function (which validates) and the CPU kernel factory.
//
// Forms: with 2 inputs (X, scales) the node is Resize-10, which ONNX defines as asymmetric
// coordinates with floor rounding for nearest; with 3 or 4 inputs (X, roi, scales, sizes) it is
// Resize-11+, whose defaults are half_pixel and round_prefer_floor. roi is read only for
// tf_crop_and_resize (the only mode it affects). roi, scales and sizes must be constants.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace orknn::graph {

struct ResizeAttributes {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class Transform {
    kHalfPixel,
    kPytorchHalfPixel,
    kAlignCorners,
    kAsymmetric,
    kHalfPixelSymmetric,
    kTfHalfPixelForNn,
    kTfCropAndResize,
  };
  enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

  Mode mode = Mode::kNearest;
  Transform transform = Transform::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  std::vector<float> scales;  // per dimension: as given, or from sizes (output / input, or the
                              // keep_aspect_ratio_policy's common scale)
  Shape output_shape;
  float cubic_coefficient = -0.75f;  // cubic_coeff_a
  bool antialias = false;
  bool exclude_outside = false;
  float extrapolation_value = 0.0f;
  std::vector<float> roi_start;  // per dimension, tf_crop_and_resize only
  std::vector<float> roi_end;
  // True when the common float32 kernels (nearest, or bilinear over the last two dimensions,
  // with half_pixel, pytorch_half_pixel, align_corners or asymmetric) compute the node exactly
  // as the specification; false sends it to the general separable resampler.
  bool common_case = true;
};

// `roi`, `scales` and `sizes` are the operand tensors (null when omitted); their constant data
// is read.
Result<ResizeAttributes> parse_resize(const Node& node, const Shape& input, const Tensor* roi,
                                      const Tensor* scales, const Tensor* sizes);

// Position of the roi operand (-1 in Resize-10).
int resize_roi_position(const Node& node);

// Positions of the scales and sizes operands for the node's form (sizes: -1 in Resize-10).
int resize_scales_position(const Node& node);
int resize_sizes_position(const Node& node);

}  // namespace orknn::graph
