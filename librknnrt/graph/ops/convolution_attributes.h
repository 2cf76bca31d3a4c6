// Attribute parsing of the convolution family (Conv, ConvTranspose, Gemm, MatMul), used by the
// shape functions (which validate) and by the CPU kernel factories (which trust), so both read a
// node the same way. Every function checks
// the node against the operand shapes and fails with an invalid-model Status naming the node.
#pragma once

#include <limits>
#include <vector>

#include "graph/graph.h"
#include "graph/ops/spatial_window.h"

namespace orknn::graph {

// The activation our converter fuses into Conv, ConvTranspose, Gemm and MatMul (attributes
// `activation`, `activation_min`, `activation_max`, `activation_alpha`; see convolution.cc).
struct FusedActivationAttributes {
  enum class Kind { kNone, kRelu, kClip, kLeakyRelu, kSilu };
  Kind kind = Kind::kNone;
  float minimum = std::numeric_limits<float>::lowest();  // kClip
  float maximum = std::numeric_limits<float>::max();     // kClip
  float alpha = 0.01f;                                   // kLeakyRelu
};
Result<FusedActivationAttributes> parse_fused_activation(const Node& node);

struct ConvAttributes {
  int64_t group = 1;
  SpatialWindow window;
  FusedActivationAttributes activation;
  Shape output_shape;
};
// Conv: input [N, C, spatial...], weights [M, C / group, kernel...], bias [M] (may be null).
Result<ConvAttributes> parse_conv(const Node& node, const Shape& input, const Shape& weights,
                                  const Shape* bias);
// ConvTranspose: weights [C, M / group, kernel...]. window.pads_* crop the full transposed
// output; output_padding and output_shape are folded into them and into window.output.
Result<ConvAttributes> parse_conv_transpose(const Node& node, const Shape& input,
                                            const Shape& weights, const Shape* bias);

struct GemmAttributes {
  float alpha = 1.0f;
  float beta = 1.0f;
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  // C broadcast to [M, N]: its row count is 1 or M, its column count 1 or N.
  int64_t c_rows = 0;
  int64_t c_columns = 0;
  FusedActivationAttributes activation;
};
Result<GemmAttributes> parse_gemm(const Node& node, const Shape& a, const Shape& b, const Shape* c);

struct MatMulAttributes {
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  Shape batch_shape;  // broadcast batch dimensions of the output
  Shape a_batch;      // A's batch dimensions, left-padded with 1 to batch_shape's rank
  Shape b_batch;
  Shape output_shape;
  FusedActivationAttributes activation;
};
// numpy matmul: a 1-D A is a row vector and a 1-D B a column vector, their unit dimension
// removed from the output; batch dimensions broadcast.
Result<MatMulAttributes> parse_matmul(const Node& node, const Shape& a, const Shape& b);

}  // namespace orknn::graph
