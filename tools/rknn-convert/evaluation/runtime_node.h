// One IR node through the runtime, without a model file: the runtime's shape function (so the
// converter computes shapes exactly as the runtime will verify them) and its CPU kernel (so
// constant folding computes exactly what the runtime would). The node is placed in a one-node
// graph::Graph whose constants point at the IR's bytes.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace orknn::convert {

// True when the runtime knows the op (graph::find_op_schema) and the node is in the default
// ONNX domain.
bool is_runtime_op(const ir::Node& node);

// The output shapes the runtime's shape function gives, from the IR's current input shapes and
// constant inputs. Fails with the runtime's own message (naming the node) on invalid nodes.
Result<std::vector<ir::Shape>> runtime_output_shapes(const ir::Graph& graph, const ir::Node& node);

// Runs the node's CPU kernel on its constant inputs and returns its outputs as constant tensors
// (named after the node's outputs, with the types in graph.tensors). Preconditions: every
// present input is constant; output types and shapes are set in the graph.
Result<std::vector<ir::Tensor>> runtime_evaluate(const ir::Graph& graph, const ir::Node& node);

// Converts between the IR's and the runtime's attribute and quantization forms.
graph::Quantization to_graph_quantization(const model::Quantization& quantization);

}  // namespace orknn::convert
