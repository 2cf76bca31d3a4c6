// The last gate before export: the runtime must know every node left, in the default domain.
// infer_shapes_and_fold already refuses unknown ops it meets; this also catches nodes that later
// passes could have left behind (QuantizeLinear without a partner, for example).
#include <algorithm>
#include <set>

#include "evaluation/runtime_node.h"
#include "graph/op_schema.h"
#include "passes/passes.h"

namespace orknn::convert {

std::string supported_ops_text() {
  std::vector<std::string> names;
  for (const graph::OpSchema& schema : graph::all_op_schemas()) names.push_back(schema.op_type);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string text = "supported operators (ai.onnx opsets 7-19): ";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  text +=
      "; computed at conversion time when their inputs are constant: Shape, Size, Gather, "
      "ConstantOfShape, Range, Expand, Tile, Where, Equal, Less, Greater, LessOrEqual, "
      "GreaterOrEqual, And, Or, Xor, Not, Mod, Min, Max, Floor, Ceil, Round, Sign; removed: "
      "Identity, Dropout; rewritten: Upsample (Resize), Sum (Add), QuantizeLinear/"
      "DequantizeLinear pairs (int8 tensors)";
  return text;
}

Status check_supported_ops(const ir::Graph& graph) {
  for (const ir::Node& node : graph.nodes) {
    if (!node.unrepresentable.empty()) {
      return invalid_model("unsupported operator: ", node.describe(), ": ", node.unrepresentable);
    }
    if (is_runtime_op(node)) continue;
    std::string why = "the runtime has no " + node.op_type;
    if (node.op_type == "QuantizeLinear" || node.op_type == "DequantizeLinear") {
      why = "a " + node.op_type +
            " that is not part of a QuantizeLinear/DequantizeLinear pair on a tensor (or a "
            "dequantized constant) cannot be imported";
    }
    return invalid_model("unsupported operator: ", node.describe(), " (",
                         node.domain.empty() ? "ai.onnx" : node.domain.c_str(), " opset ",
                         node.opset, "): ", why, "\n", supported_ops_text());
  }
  return ok_status();
}

}  // namespace orknn::convert
