// load_onnx(inputs=, outputs=): convert only the part of the graph between the named tensors,
// e.g. to leave pre- or post-processing out of the model.
#include "passes/passes.h"

namespace orknn::convert {
namespace {

std::string known_tensor_hint(const ir::Graph& graph) {
  std::string names;
  int listed = 0;
  for (const ir::Node& node : graph.nodes) {
    for (const std::string& output : node.outputs) {
      if (output.empty() || listed >= 8) continue;
      names += (listed++ ? ", " : "") + ("'" + output + "'");
    }
  }
  return names.empty() ? "" : " (node outputs include " + names + ", ...)";
}

}  // namespace

Status select_inputs_outputs(ir::Graph* graph, const ConvertOptions& options) {
  if (!options.inputs.empty()) {
    for (const std::string& name : options.inputs) {
      if (!graph->has_tensor(name)) {
        return invalid_argument("inputs: '", name, "' is not a tensor of the model",
                                known_tensor_hint(*graph));
      }
      if (graph->tensor(name).is_constant()) {
        return invalid_argument("inputs: '", name,
                                "' is a constant (an initializer), not a value "
                                "computed at run time");
      }
    }
    // A tensor that becomes an input is no longer produced by its node: the producer's output
    // is detached, and the nodes that only fed it disappear with the dead code.
    for (const std::string& name : options.inputs) {
      const int producer = graph->producer(name);
      if (producer < 0) continue;
      for (std::string& output : graph->nodes[static_cast<size_t>(producer)].outputs) {
        if (output == name) output = graph->unique_name(name + "_detached");
      }
      ir::Tensor& tensor = graph->tensor(name);
      tensor.shape_known = false;
      tensor.shape.clear();
    }
    graph->inputs = options.inputs;
  }
  if (!options.outputs.empty()) {
    for (const std::string& name : options.outputs) {
      if (!graph->has_tensor(name)) {
        return invalid_argument("outputs: '", name, "' is not a tensor of the model",
                                known_tensor_hint(*graph));
      }
    }
    graph->outputs = options.outputs;
  }
  graph->remove_dead_code();
  // Inputs nothing reads any more (cut away by `outputs`) stay: the application still feeds
  // them, and removing one would renumber the others.
  return graph->sort_topologically();
}

}  // namespace orknn::convert
