#include "graph/fusion_chains.h"

#include <string_view>

namespace orknn::graph {
namespace {

bool is_binary_arithmetic(std::string_view type) {
  return type == "Add" || type == "Sub" || type == "Mul" || type == "Div";
}

// The element-wise activations the CPU device applies after a fused node (its unary kernels'
// op types, devices/cpu/ops/elementwise.cc); a longer list only costs the planner memory.
bool is_activation(std::string_view type) {
  for (std::string_view activation :
       {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Swish", "SiLU", "Tanh",
        "Exp", "Sqrt", "Neg", "Abs", "Reciprocal"}) {
    if (type == activation) return true;
  }
  return false;
}

}  // namespace

std::vector<bool> binary_activation_runs(const Graph& graph) {
  // How many times each tensor is read, a graph output counting as a reader.
  std::vector<size_t> readers(graph.tensors.size(), 0);
  for (const Node& node : graph.nodes) {
    for (int32_t input : node.inputs) {
      if (input >= 0) ++readers[static_cast<size_t>(input)];
    }
  }
  for (int32_t output : graph.outputs) ++readers[static_cast<size_t>(output)];
  std::vector<bool> runs(graph.nodes.size(), false);
  for (size_t first = 0; first + 1 < graph.nodes.size(); ++first) {
    const Node& node = graph.nodes[first];
    const Node& next = graph.nodes[first + 1];
    runs[first] = is_binary_arithmetic(node.op_type) && node.outputs.size() == 1 &&
                  is_activation(next.op_type) && !next.inputs.empty() && next.outputs.size() == 1 &&
                  next.inputs[0] == node.outputs[0] &&
                  readers[static_cast<size_t>(node.outputs[0])] == 1;
  }
  return runs;
}

std::vector<size_t> earliest_write_steps(const Graph& graph) {
  const std::vector<bool> runs = binary_activation_runs(graph);
  std::vector<size_t> steps(graph.nodes.size());
  for (size_t index = 0; index < steps.size(); ++index) {
    steps[index] = index > 0 && runs[index - 1] ? index - 1 : index;
  }
  return steps;
}

}  // namespace orknn::graph
