// Our model files carry no opset, so every node must mean the same thing whatever opset it was
// written for. Most ops keep one meaning, or the runtime recognises the form from the node
// itself (Slice/Pad/Split/Squeeze/Unsqueeze/Reduce*/Clip operands as attributes or inputs;
// Resize-10 by its two inputs). The rest are rewritten here, before anything else looks at them.
#include <set>

#include "passes/passes.h"

namespace orknn::convert {
namespace {

// The node's output is a plain copy of its input: readers are redirected to the input. When the
// copy is a graph output, the input is renamed instead so the model keeps its output names.
Status remove_copy(ir::Graph* graph, size_t index, std::set<int>* removed) {
  const ir::Node& node = graph->nodes[index];
  const std::string input = node.inputs.empty() ? "" : node.inputs[0];
  const std::string output = node.outputs.empty() ? "" : node.outputs[0];
  if (input.empty() || output.empty()) {
    return invalid_model(node.describe(), ": needs one input and one output");
  }
  removed->insert(static_cast<int>(index));
  const bool input_is_boundary = graph->is_graph_input(input) || graph->is_graph_output(input) ||
                                 (graph->has_tensor(input) && graph->tensor(input).is_constant());
  if (graph->is_graph_output(output) && !input_is_boundary) {
    graph->nodes[index].outputs[0] = output + "_removed_copy";
    graph->rename_tensor(input, output);
    return ok_status();
  }
  if (graph->is_graph_output(output)) {
    // The output duplicates an input or another output; keep a copy the runtime can run.
    ir::Node& copy = graph->nodes[index];
    removed->erase(static_cast<int>(index));
    copy.op_type = "Reshape";
    copy.attributes.clear();
    copy.inputs = {input, ""};  // the shape operand is filled in once shapes are known
    copy.attributes["allowzero"] = ir::make_int_attribute(0);
    copy.attributes["orknn_copy"] = ir::make_int_attribute(1);
    return ok_status();
  }
  graph->replace_uses(output, input);
  return ok_status();
}

Status normalize_dropout(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() > 1 && !node.outputs[1].empty() && graph.use_count(node.outputs[1]) > 0) {
    return invalid_model(node.describe(),
                         ": the dropout mask output is used; only inference Dropout (a copy) is "
                         "supported");
  }
  if (node.has_input(2)) {
    const ir::Tensor& training = graph.tensor(node.inputs[2]);
    if (!training.is_constant() || ir::constant_as_ints(training) != std::vector<int64_t>{0}) {
      return invalid_model(node.describe(), ": training_mode must be a constant false");
    }
  }
  return ok_status();
}

Status normalize_batch_norm(ir::Graph* graph, ir::Node* node) {
  if (ir::int_attribute(*node, "spatial", 1) != 1) {
    return invalid_model(node->describe(),
                         ": spatial=0 (per-element statistics, opsets 7-8) is not supported");
  }
  if (ir::int_attribute(*node, "training_mode", 0) != 0) {
    return invalid_model(node->describe(), ": training_mode=1 is not supported (inference only)");
  }
  for (size_t i = 1; i < node->outputs.size(); ++i) {
    if (!node->outputs[i].empty() && graph->use_count(node->outputs[i]) > 0) {
      return invalid_model(node->describe(), ": output ", i, " ('", node->outputs[i],
                           "', a training statistic) is used; only inference is supported");
    }
  }
  node->outputs.resize(1);
  for (const char* obsolete :
       {"spatial", "is_test", "consumed_inputs", "momentum", "training_mode"}) {
    node->attributes.erase(obsolete);
  }
  return ok_status();
}

// Upsample (opsets 7-9) is Resize-10 under another name: scales as attribute (7) or input (9),
// asymmetric coordinates, floor for nearest.
void upsample_to_resize(ir::Graph* graph, ir::Node* node) {
  if (node->inputs.size() < 2) {
    std::vector<float> scales;
    auto attribute = node->attributes.find("scales");
    if (attribute != node->attributes.end()) scales = attribute->second.floats;
    const std::string name = graph->add_constant_f32(node->outputs[0] + "_scales",
                                                     {static_cast<int64_t>(scales.size())}, scales);
    node->inputs.push_back(name);
  }
  node->op_type = "Resize";
  node->attributes.erase("scales");
  node->attributes.erase("height_scale");
  node->attributes.erase("width_scale");
}

// Sum of several inputs -> a chain of Add (the runtime's Add broadcasts the same way).
void sum_to_adds(ir::Graph* graph, size_t index, std::vector<ir::Node>* added) {
  ir::Node& node = graph->nodes[index];
  if (node.inputs.size() == 1) {
    node.op_type = "Identity";
    return;
  }
  std::string accumulated = node.inputs[0];
  const std::vector<std::string> inputs = node.inputs;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const bool last = i + 1 == inputs.size();
    ir::Node add = node;
    add.op_type = "Add";
    add.attributes.clear();
    add.name = node.name.empty() ? "" : node.name + (last ? "" : "_add" + std::to_string(i));
    add.inputs = {accumulated, inputs[i]};
    if (!last) {
      const std::string partial =
          graph->unique_name(node.outputs[0] + "_partial" + std::to_string(i));
      graph->tensor_or_new(partial);
      add.outputs = {partial};
      accumulated = partial;
      added->push_back(add);
    } else {
      node = add;
    }
  }
}

}  // namespace

Status normalize_onnx_ops(ir::Graph* graph) {
  // Sum first (it may become an Identity, removed below).
  std::vector<ir::Node> rebuilt;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (graph->nodes[i].op_type == "Sum" && graph->nodes[i].domain.empty()) {
      std::vector<ir::Node> added;
      sum_to_adds(graph, i, &added);
      rebuilt.insert(rebuilt.end(), added.begin(), added.end());
    }
    rebuilt.push_back(graph->nodes[i]);
  }
  graph->nodes = std::move(rebuilt);

  std::set<int> removed;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    ir::Node& node = graph->nodes[i];
    if (!node.domain.empty()) continue;
    const std::string& op = node.op_type;
    if (op == "Identity") {
      ORKNN_RETURN_IF_ERROR(remove_copy(graph, i, &removed));
    } else if (op == "Dropout") {
      ORKNN_RETURN_IF_ERROR(normalize_dropout(*graph, node));
      ORKNN_RETURN_IF_ERROR(remove_copy(graph, i, &removed));
    } else if (op == "Softmax" && node.opset < 13) {
      node.attributes["legacy_coerce_2d"] = ir::make_int_attribute(1);
    } else if (op == "BatchNormalization") {
      ORKNN_RETURN_IF_ERROR(normalize_batch_norm(graph, &node));
    } else if (op == "Upsample") {
      upsample_to_resize(graph, &node);
    } else if (op == "Resize" && node.inputs.size() >= 3 && node.inputs[1].empty()) {
      // Resize-13+ may omit roi (input 1); the runtime's verifier treats the first two inputs
      // as required, so an empty roi (which Resize ignores outside tf_crop_and_resize) stands in.
      node.inputs[1] = graph->add_constant_f32(node.outputs[0] + "_roi", {0}, {});
    } else if (op == "Cast") {
      node.attributes.erase("saturate");  // only meaningful for float8 targets
    }
  }
  graph->remove_nodes(removed);
  return graph->sort_topologically();
}

}  // namespace orknn::convert
