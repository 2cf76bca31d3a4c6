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

}  // namespace

std::vector<FusionRun> fusion_runs(const Graph& graph) {
  // How many times each tensor is read, a graph output counting as a reader.
  std::vector<size_t> readers(graph.tensors.size(), 0);
  for (const Node& node : graph.nodes) {
    for (int32_t input : node.inputs) {
      if (input >= 0) ++readers[static_cast<size_t>(input)];
    }
  }
  for (int32_t output : graph.outputs) ++readers[static_cast<size_t>(output)];
  const auto passes_on = [&](const Node& node, const Node& next) {
    if (node.outputs.size() != 1 || readers[static_cast<size_t>(node.outputs[0])] != 1) {
      return false;
    }
    for (int32_t input : next.inputs) {
      if (input == node.outputs[0]) return true;
    }
    return false;
  };
  const auto activation_after = [&](const Node& node, const Node& next) {
    return is_activation(next.op_type) && next.outputs.size() == 1 && !next.inputs.empty() &&
           next.inputs[0] == node.outputs[0] && passes_on(node, next);
  };
  const size_t count = graph.nodes.size();
  std::vector<FusionRun> runs(count);
  // A node inside a run starts none (the Add of a Conv's run, followed by its activation).
  for (size_t first = 0; first + 1 < count; first += std::max<size_t>(runs[first].length, 1)) {
    const Node& node = graph.nodes[first];
    const Node& next = graph.nodes[first + 1];
    if (is_binary_arithmetic(node.op_type) && activation_after(node, next)) {
      runs[first] = {FusionRun::Kind::kBinaryActivation, 2};
    } else if (node.op_type == "Conv" && next.op_type == "Add" && next.outputs.size() == 1 &&
               passes_on(node, next) &&
               graph.tensor(node.outputs[0]).data_type == DataType::kFloat32) {
      const bool activation = first + 2 < count && activation_after(next, graph.nodes[first + 2]);
      runs[first] = {FusionRun::Kind::kResidualConvolution, activation ? size_t{3} : size_t{2}};
    }
  }
  return runs;
}

std::vector<size_t> earliest_write_steps(const Graph& graph) {
  const std::vector<FusionRun> runs = fusion_runs(graph);
  std::vector<size_t> steps(graph.nodes.size());
  for (size_t index = 0; index < steps.size(); ++index) steps[index] = index;
  for (size_t first = 0; first < runs.size(); ++first) {
    for (size_t index = first + 1; index < first + runs[first].length; ++index)
      steps[index] = first;
  }
  return steps;
}

}  // namespace orknn::graph
