// Attribute and operand parsing of ONNX Resize (opsets 10, 11, 13, 18, 19), shared by the shape
// function (which validates) and the CPU kernel factory.
//
// Forms: with 2 inputs (X, scales) the node is Resize-10, which ONNX defines as asymmetric
// coordinates with floor rounding for nearest; with 3 or 4 inputs (X, roi, scales, sizes) it is
// Resize-11+, whose defaults are half_pixel and round_prefer_floor. roi is ignored (it only
// matters for tf_crop_and_resize). scales and sizes must be constants.
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
    kOther,  // valid ONNX we do not run (see `unsupported`)
  };
  enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

  Mode mode = Mode::kNearest;
  Transform transform = Transform::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  std::vector<float> scales;  // per dimension: as given, or output / input for sizes
  Shape output_shape;
  // Empty when the kernels support the node; otherwise what they do not support. The shape is
  // still computed, so a model loads and the device that builds kernels reports this.
  std::string unsupported;
};

// `scales` and `sizes` are the operand tensors (null when omitted); their constant data is read.
Result<ResizeAttributes> parse_resize(const Node& node, const Shape& input, const Tensor* scales,
                                      const Tensor* sizes);

// Positions of the scales and sizes operands for the node's form (sizes: -1 in Resize-10).
int resize_scales_position(const Node& node);
int resize_sizes_position(const Node& node);

}  // namespace orknn::graph
