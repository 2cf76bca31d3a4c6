// What the runtime knows about each operator independent of any device: how many inputs and
// outputs it takes and how its output shapes follow from its inputs and attributes.
//
// Shape functions run when a model is loaded (to verify the shapes stored in the file, so no
// kernel ever trusts an unchecked shape) and again whenever dynamic input shapes change. They
// also validate attributes: a shape function that succeeds guarantees the kernels a consistent
// node (kernel sizes, pads, axes and permutations in range, broadcastable operands, ...).
#pragma once

#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace orknn::graph {

class ShapeInferenceContext {
 public:
  ShapeInferenceContext(const Graph& graph, const Node& node, const std::vector<Shape>& shapes)
      : graph_(graph), node_(node), shapes_(shapes) {}

  const Node& node() const { return node_; }
  size_t input_count() const { return node_.inputs.size(); }
  bool has_input(size_t position) const { return node_.has_input(position); }
  // The tensor and its current shape. Precondition: has_input(position).
  const Tensor& input(size_t position) const { return graph_.tensor(node_.inputs[position]); }
  const Shape& input_shape(size_t position) const {
    return shapes_[static_cast<size_t>(node_.inputs[position])];
  }
  // The values of a constant integer operand (INT64 or INT32), such as Reshape's target shape.
  // Fails with a message naming the node when the operand is absent or not a constant.
  Result<std::vector<int64_t>> constant_ints(size_t position) const;
  Result<std::vector<float>> constant_floats(size_t position) const;

  // An invalid-model Status that names the node: "Conv 'conv1': <message>".
  template <typename... Parts>
  Status error(const Parts&... parts) const {
    return invalid_model(node_.describe(), ": ", parts...);
  }

 private:
  const Graph& graph_;
  const Node& node_;
  const std::vector<Shape>& shapes_;
};

// Computes the shapes of all outputs of ctx.node() into *out_shapes (resized by the function).
using ShapeFunction = Status (*)(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes);

struct OpSchema {
  const char* op_type;
  int min_inputs;
  int max_inputs;
  int min_outputs;
  int max_outputs;
  ShapeFunction infer_shapes;
};

// The one list of operators the runtime knows (op_registry.cc). nullptr if unknown.
const OpSchema* find_op_schema(std::string_view op_type);
const std::vector<OpSchema>& all_op_schemas();

// Per-family lists, concatenated by op_registry.cc. Each lives in graph/ops/<family>.cc.
std::vector<OpSchema> convolution_op_schemas();    // Conv, ConvTranspose, Gemm, MatMul
std::vector<OpSchema> pooling_op_schemas();        // MaxPool, AveragePool, Global*Pool
std::vector<OpSchema> elementwise_op_schemas();    // binary arithmetic and unary activations
std::vector<OpSchema> normalization_op_schemas();  // BatchNormalization, InstanceNormalization,
                                                   // LayerNormalization, Softmax
std::vector<OpSchema> reduction_op_schemas();      // ReduceMean/Sum/Max, ArgMax
std::vector<OpSchema> data_movement_op_schemas();  // Concat, Split, Slice, Reshape, Flatten,
                                                   // Transpose, Squeeze, Unsqueeze, Pad, Cast
std::vector<OpSchema> resize_op_schemas();         // Resize

// Shape helpers shared by the families.
// Normalizes a possibly negative axis against rank; fails when out of [-rank, rank).
Result<int64_t> normalize_axis(int64_t axis, int64_t rank);
// Numpy-style multidirectional broadcast of two shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace orknn::graph
