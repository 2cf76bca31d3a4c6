#include "graph/fusion_chains.h"

#include <algorithm>
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

// `next` is an activation that alone reads `node`'s result as its data input.
bool activation_after(const Graph& graph, const Node& node, const Node& next) {
  return is_activation(next.op_type) && !next.inputs.empty() && !node.outputs.empty() &&
         next.inputs[0] == node.outputs[0] && reads_alone(graph, node, next);
}

}  // namespace

bool reads_alone(const Graph& graph, const Node& node, const Node& next) {
  if (node.outputs.size() != 1) return false;
  const int32_t tensor = node.outputs[0];
  for (int32_t output : graph.outputs) {
    if (output == tensor) return false;
  }
  size_t readers = 0;
  bool next_reads = false;
  for (const Node& other : graph.nodes) {
    for (int32_t input : other.inputs) {
      if (input != tensor) continue;
      ++readers;
      next_reads = next_reads || &other == &next;
    }
  }
  return next_reads && readers == 1;
}

bool binary_activation_run(const Graph& graph, size_t first) {
  if (first + 1 >= graph.nodes.size()) return false;
  const Node& node = graph.nodes[first];
  return is_binary_arithmetic(node.op_type) &&
         activation_after(graph, node, graph.nodes[first + 1]);
}

std::vector<size_t> earliest_write_steps(const Graph& graph) {
  std::vector<size_t> steps(graph.nodes.size());
  for (size_t index = 0; index < steps.size(); ++index) steps[index] = index;
  for (size_t first = 0; first + 1 < steps.size(); ++first) {
    if (binary_activation_run(graph, first)) steps[first + 1] = std::min(steps[first + 1], first);
  }
  return steps;
}

}  // namespace orknn::graph
