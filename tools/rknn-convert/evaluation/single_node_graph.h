// One node of a converted graph as a graph of its own, its run-time (non-constant) inputs made
// graph inputs, for running that node alone through the runtime: accuracy analysis' single-layer
// runs and the sequential refinement's node-by-node pass.
#pragma once

#include "ir/graph.h"

namespace orknn::convert {

// The node with its tensors (types, shapes, quantization, constants) copied from `graph`. Its
// non-constant inputs become the graph inputs (in the order they first appear), its outputs the
// graph outputs. Input preprocessing (mean/std, NHWC) is not carried: the inputs take values
// as the node sees them.
ir::Graph single_node_graph(const ir::Graph& graph, const ir::Node& node);

}  // namespace orknn::convert
