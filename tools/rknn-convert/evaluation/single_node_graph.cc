#include "evaluation/single_node_graph.h"

namespace orknn::convert {

ir::Graph single_node_graph(const ir::Graph& graph, const ir::Node& node) {
  ir::Graph single;
  for (const std::string& input : node.inputs) {
    if (input.empty() || single.has_tensor(input)) continue;
    single.tensors[input] = graph.tensor(input);
    if (!single.tensors[input].is_constant()) single.inputs.push_back(input);
  }
  for (const std::string& output : node.outputs) {
    if (output.empty()) continue;
    single.tensors[output] = graph.tensor(output);
    single.outputs.push_back(output);
  }
  single.nodes.push_back(node);
  return single;
}

}  // namespace orknn::convert
