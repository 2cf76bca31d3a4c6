// Attribute parsing of the elementwise family, shared by the shape functions (which validate)
// and the CPU kernel factories (which trust), so both read a node the same way.
#pragma once

#include <limits>

#include "graph/graph.h"

namespace orknn::graph {

// ONNX defaults applied; fields an op does not use keep 0.
struct UnaryAttributes {
  float alpha = 0.0f;  // LeakyRelu 0.01, HardSigmoid 0.2, Swish 1.0 (SiLU is Swish with 1.0)
  float beta = 0.0f;   // HardSigmoid 0.5
};
Result<UnaryAttributes> parse_unary_attributes(const Node& node);

// Clip bounds come from the opset-6 attributes `min`/`max` or from the optional scalar inputs
// 1 and 2 (opset 11+). An absent bound does not clamp (it is the float range's end, as ONNX).
struct ClipAttributes {
  float minimum = std::numeric_limits<float>::lowest();
  float maximum = std::numeric_limits<float>::max();
  bool minimum_from_input = false;  // read input 1 at run time
  bool maximum_from_input = false;  // read input 2 at run time
};
Result<ClipAttributes> parse_clip_attributes(const Node& node);

}  // namespace orknn::graph
