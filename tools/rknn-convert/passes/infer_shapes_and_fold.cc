// Shapes and types of every tensor, and constant folding, in one walk over the sorted nodes.
//
// They are one pass because each needs the other: folding Shape -> Gather -> Concat produces the
// constant that Reshape's shape function needs, and Shape can only fold once its input's shape is
// known. Runtime ops get their shapes from the runtime's own shape functions (so the converter
// and the runtime can never disagree) and fold through the runtime's CPU kernels; integer and
// non-runtime ops fold through evaluation/constant_evaluator.
#include <map>
#include <set>

#include "evaluation/constant_evaluator.h"
#include "evaluation/runtime_node.h"
#include "passes/passes.h"

namespace orknn::convert {
namespace {

bool is_real(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16;
}

// Quantize/Dequantize nodes are kept for import_qdq, never folded (folding would turn int8
// weights back into floats).
bool is_qdq(const ir::Node& node) {
  return node.domain.empty() &&
         (node.op_type == "QuantizeLinear" || node.op_type == "DequantizeLinear");
}

bool inputs_are_constant(const ir::Graph& graph, const ir::Node& node) {
  bool any = false;
  for (const std::string& input : node.inputs) {
    if (input.empty()) continue;
    if (!graph.tensor(input).is_constant()) return false;
    any = true;
  }
  return any;
}

bool touches_integers(const ir::Graph& graph, const ir::Node& node) {
  for (const std::string& input : node.inputs) {
    if (!input.empty() && !is_real(graph.tensor(input).type)) return true;
  }
  return false;
}

// The runtime's float kernels read real data; only data-movement ops and Cast handle integer
// tensors (they move elements of any size), so other ops on integer data are not folded by it.
bool runtime_can_compute(const ir::Graph& graph, const ir::Node& node) {
  static const std::set<std::string> any_type = {"Concat",  "Split",     "Slice",   "Reshape",
                                                 "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                                                 "Pad",     "Cast"};
  if (any_type.count(node.op_type)) return true;
  return node.has_input(0) && is_real(graph.tensor(node.inputs[0]).type);
}

// True when an input's shape is not known yet (an unsupported node produces it).
bool has_unknown_input(const ir::Graph& graph, const ir::Node& node) {
  for (const std::string& input : node.inputs) {
    if (!input.empty() && !graph.tensor(input).shape_known) return true;
  }
  return false;
}

struct UnsupportedNode {
  std::string description;
  std::string reason;
};

std::string unsupported_message(const std::vector<UnsupportedNode>& nodes) {
  std::string text = nodes.size() == 1 ? "unsupported operator: " : "unsupported operators:\n  ";
  for (size_t i = 0; i < nodes.size() && i < 12; ++i) {
    text += (i ? "\n  " : "") + nodes[i].description + ": " + nodes[i].reason;
  }
  if (nodes.size() > 12) text += "\n  ... and " + std::to_string(nodes.size() - 12) + " more";
  return text + "\n" + supported_ops_text();
}

// Fills the shape operand of a copy that normalize_onnx_ops turned into a Reshape.
void complete_copy(ir::Graph* graph, ir::Node* node) {
  auto marker = node->attributes.find("orknn_copy");
  if (marker == node->attributes.end()) return;
  node->attributes.erase(marker);
  const ir::Shape& shape = graph->tensor(node->inputs[0]).shape;
  node->inputs[1] = graph->add_constant_i64(node->outputs[0] + "_shape",
                                            {static_cast<int64_t>(shape.size())}, shape);
}

// Output shapes and types of a runtime op, from the runtime's shape function.
Status set_runtime_outputs(ir::Graph* graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(std::vector<ir::Shape> shapes, runtime_output_shapes(*graph, node));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    ir::Tensor& output = graph->tensor_or_new(node.outputs[i]);
    output.shape = shapes[i];
    output.shape_known = true;
    output.type = known_output_type(*graph, node, i).value_or(DataType::kFloat32);
  }
  return ok_status();
}

// Replaces the node's outputs by constants when everything it reads is known; false when the
// node stays. Integer results feed shape operands, which the runtime needs as constants, so
// they always fold; float subgraphs of runtime ops fold only when `fold_float`.
Result<bool> try_fold(ir::Graph* graph, const ir::Node& node, bool runtime_op, bool fold_float) {
  if (is_qdq(node)) return false;
  const bool shape_only = (node.op_type == "Shape" || node.op_type == "Size") &&
                          can_evaluate_without_runtime(*graph, node);
  if (!shape_only && !inputs_are_constant(*graph, node)) return false;
  const bool integer_work = touches_integers(*graph, node);
  const bool must_fold = !runtime_op || integer_work || shape_only;
  if (!must_fold && !fold_float) return false;

  std::vector<ir::Tensor> results;
  if (can_evaluate_without_runtime(*graph, node) && (integer_work || !runtime_op || shape_only)) {
    ORKNN_ASSIGN_OR_RETURN(results, evaluate_constant_node(*graph, node));
  } else if (runtime_op && runtime_can_compute(*graph, node)) {
    ORKNN_RETURN_IF_ERROR(set_runtime_outputs(graph, node));  // the kernel needs them
    ORKNN_ASSIGN_OR_RETURN(results, runtime_evaluate(*graph, node));
  } else {
    return false;
  }
  for (ir::Tensor& result : results) {
    if (!result.name.empty()) graph->tensors[result.name] = std::move(result);
  }
  return true;
}

}  // namespace

Status infer_shapes_and_fold(ir::Graph* graph, bool fold_float) {
  std::set<int> folded;
  std::vector<UnsupportedNode> unsupported;
  std::set<std::string> reported_types;
  for (size_t index = 0; index < graph->nodes.size(); ++index) {
    ir::Node& node = graph->nodes[index];
    const std::string description = node.describe() + " (" +
                                    (node.domain.empty() ? "ai.onnx" : node.domain) + " opset " +
                                    std::to_string(node.opset) + ")";
    // Downstream of an unsupported node nothing can be said until that is fixed.
    if (has_unknown_input(*graph, node)) continue;
    complete_copy(graph, &node);
    const bool runtime_op = is_runtime_op(node) && node.unrepresentable.empty();

    ORKNN_ASSIGN_OR_RETURN(const bool was_folded, try_fold(graph, node, runtime_op, fold_float));
    if (was_folded) {
      folded.insert(static_cast<int>(index));
      continue;
    }

    if (is_qdq(node)) {
      const ir::Tensor& input = graph->tensor(node.inputs[0]);
      ir::Tensor& output = graph->tensor_or_new(node.outputs[0]);
      output.shape = input.shape;
      output.shape_known = true;
      output.type = known_output_type(*graph, node, 0).value_or(DataType::kFloat32);
      continue;
    }
    if (!runtime_op) {
      std::string reason;
      if (!node.unrepresentable.empty()) {
        reason = node.unrepresentable;
      } else if (!node.domain.empty()) {
        reason = "operators of domain '" + node.domain + "' are not supported";
      } else {
        std::string dynamic_input;
        for (const std::string& input : node.inputs) {
          if (!input.empty() && !graph->tensor(input).is_constant()) {
            dynamic_input = input;
            break;
          }
        }
        reason = "the runtime has no " + node.op_type;
        if (has_constant_evaluator(node.op_type) && !dynamic_input.empty()) {
          reason += ", and it cannot be computed at conversion time because input '" +
                    dynamic_input + "' is only known at run time";
        }
      }
      // One line per op type is enough; the first node names where it is.
      if (reported_types.insert(node.domain + "::" + node.op_type).second) {
        unsupported.push_back({description, reason});
      }
      continue;
    }
    ORKNN_RETURN_IF_ERROR(set_runtime_outputs(graph, node));
  }
  if (!unsupported.empty()) return invalid_model(unsupported_message(unsupported));
  graph->remove_nodes(folded);
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
