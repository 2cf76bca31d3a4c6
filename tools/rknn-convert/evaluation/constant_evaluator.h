// Evaluation of ONNX ops the runtime does not have, or does not run on integer tensors, when all
// their inputs are known at conversion time. Exporters emit these to compute shapes (Shape ->
// Gather -> Unsqueeze -> Concat -> Reshape) and index tables; folding them away is what lets such
// models run on a runtime without them. Float ops the runtime has are folded with the runtime's
// own kernels instead (evaluation/runtime_node.h), so results match the runtime bit for bit.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace orknn::convert {

// Whether the converter can fold this op type at all (given known inputs).
bool has_constant_evaluator(const std::string& op_type);

// Whether evaluate_constant_node can compute `node` given its current input types. Shape and
// Size need only a known input shape; everything else needs constant inputs.
bool can_evaluate_without_runtime(const ir::Graph& graph, const ir::Node& node);

// The node's outputs as constant tensors named after its outputs. Fails naming the node for
// values it cannot handle (out-of-range indices, unsupported types).
Result<std::vector<ir::Tensor>> evaluate_constant_node(const ir::Graph& graph,
                                                       const ir::Node& node);

// The output types of ops the runtime does not list, when they follow from the node alone
// (for shape-only propagation of nodes kept in the graph, such as DequantizeLinear).
std::optional<DataType> known_output_type(const ir::Graph& graph, const ir::Node& node,
                                          size_t output);

}  // namespace orknn::convert
