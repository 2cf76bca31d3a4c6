// Clip (opset 11+) and Pad (opset 11+) take bounds and the pad value as inputs. Once folding has
// made them constants, the attribute forms (Clip-6 min/max, Pad-2 value) say the same thing as
// plain numbers: activation fusion can read Clip's bounds, and quantization need not give a
// scalar operand a type and scale of its own (an int8 Pad then moves bytes natively).
#include "passes/passes.h"

namespace orknn::convert {
namespace {

bool is_scalar_constant(const ir::Graph& graph, const std::string& name) {
  if (name.empty()) return true;
  const ir::Tensor& tensor = graph.tensor(name);
  return tensor.is_constant() && tensor.elements() == 1 &&
         (tensor.type == DataType::kFloat32 || tensor.type == DataType::kFloat16);
}

float scalar_value(const ir::Graph& graph, const std::string& name) {
  return ir::constant_as_floats(graph.tensor(name))[0];
}

}  // namespace

Status operands_to_attributes(ir::Graph* graph) {
  for (ir::Node& node : graph->nodes) {
    if (!node.domain.empty()) continue;
    if (node.op_type == "Clip" && node.inputs.size() > 1) {
      const std::string minimum = node.inputs[1];
      const std::string maximum = node.inputs.size() > 2 ? node.inputs[2] : "";
      if (!is_scalar_constant(*graph, minimum) || !is_scalar_constant(*graph, maximum)) continue;
      if (!minimum.empty())
        node.attributes["min"] = ir::make_float_attribute(scalar_value(*graph, minimum));
      if (!maximum.empty())
        node.attributes["max"] = ir::make_float_attribute(scalar_value(*graph, maximum));
      node.inputs.resize(1);
    } else if (node.op_type == "Pad" && node.has_input(2)) {
      if (!is_scalar_constant(*graph, node.inputs[2])) continue;
      const ir::Tensor& data = graph->tensor(node.inputs[0]);
      if (data.type != DataType::kFloat32 && data.type != DataType::kFloat16) continue;
      node.attributes["value"] = ir::make_float_attribute(scalar_value(*graph, node.inputs[2]));
      node.inputs[2].clear();
      while (!node.inputs.empty() && node.inputs.back().empty()) node.inputs.pop_back();
    }
  }
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
