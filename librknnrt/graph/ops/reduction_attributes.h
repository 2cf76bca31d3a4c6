// Attribute parsing of the reduction family, shared by the shape functions (which validate)
// and the CPU kernel factories (which trust).
#pragma once

#include <vector>

#include "graph/graph.h"

namespace orknn::graph {

struct ReduceAttributes {
  std::vector<bool> reduced;  // per input dimension
  bool keep_dims = true;
};

// Axes come from the `axes` attribute (ReduceSum before opset 13, the others before 18) or from
// the constant input 1 (`axes_operand`, nullptr when absent). No axes reduce every dimension,
// or none with noop_with_empty_axes=1.
Result<ReduceAttributes> parse_reduce_attributes(const Node& node, const Tensor* axes_operand,
                                                 int64_t rank);
Shape reduced_shape(const Shape& input, const ReduceAttributes& attributes);

struct ArgReduceAttributes {
  int64_t axis = 0;  // normalized to [0, rank)
  bool keep_dims = true;
  bool select_last_index = false;
};
// ArgMax/ArgMin of an input of `shape`.
Result<ArgReduceAttributes> parse_arg_reduce_attributes(const Node& node, const Shape& shape);

}  // namespace orknn::graph
