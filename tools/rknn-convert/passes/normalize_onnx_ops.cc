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

// BatchNormalization with training_mode=1 normalizes with the batch's own statistics (mean and
// population variance over every axis but 1) and outputs running statistics updated with
// `momentum`. It becomes the ops that compute exactly that:
//   mean = ReduceMean(x), centred = x - mean, variance = ReduceMean(centred^2),
//   y = centred / sqrt(variance + epsilon) * scale + B,
//   running_mean = input_mean * momentum + mean * (1 - momentum), running_var likewise.
Status batch_norm_training_to_ops(ir::Graph* graph, size_t index, std::vector<ir::Node>* added) {
  const ir::Node node = graph->nodes[index];
  if (node.inputs.size() < 5) {
    return invalid_model(node.describe(), ": needs 5 inputs (X, scale, B, mean, var)");
  }
  const ir::Shape& x_shape = graph->tensor(node.inputs[0]).shape;
  const auto rank = static_cast<int64_t>(x_shape.size());
  if (rank < 2) {
    return invalid_model(node.describe(),
                         ": training_mode=1 needs the rank of X (>= 2) to be known, got ",
                         x_shape.empty() ? std::string("none") : std::to_string(rank));
  }
  const float epsilon = ir::float_attribute(node, "epsilon", 1e-5f);
  const float momentum = ir::float_attribute(node, "momentum", 0.9f);
  std::vector<int64_t> axes = {0};
  for (int64_t axis = 2; axis < rank; ++axis) axes.push_back(axis);
  std::vector<int64_t> channel_shape(static_cast<size_t>(rank), 1);
  channel_shape[1] = -1;

  const std::string base = node.outputs[0];
  auto fresh = [&](const std::string& suffix) {
    const std::string name = graph->unique_name(base + "_" + suffix);
    graph->tensor_or_new(name);
    return name;
  };
  auto emit = [&](const std::string& op, std::vector<std::string> inputs,
                  const std::string& output) {
    ir::Node step;
    step.op_type = op;
    step.name = node.name.empty() ? "" : node.name + "_" + output;
    step.opset = node.opset;
    step.inputs = std::move(inputs);
    step.outputs = {output};
    added->push_back(step);
    return &added->back();
  };
  auto reduce_mean = [&](const std::string& input, const std::string& output) {
    ir::Node* step = emit("ReduceMean", {input}, output);
    step->attributes["axes"] = ir::make_ints_attribute(axes);
    step->attributes["keepdims"] = ir::make_int_attribute(1);
  };
  const std::string as_channels =
      graph->add_constant_i64(base + "_channel_shape", {rank}, channel_shape);
  const std::string flat = graph->add_constant_i64(base + "_flat_shape", {1}, {-1});

  const std::string mean = fresh("batch_mean"), centred = fresh("centred"),
                    squared = fresh("squared"), variance = fresh("batch_var"),
                    shifted = fresh("var_eps"), deviation = fresh("std"),
                    normalized = fresh("normalized"), scale = fresh("scale"), bias = fresh("bias"),
                    scaled = fresh("scaled");
  reduce_mean(node.inputs[0], mean);
  emit("Sub", {node.inputs[0], mean}, centred);
  emit("Mul", {centred, centred}, squared);
  reduce_mean(squared, variance);
  emit("Add", {variance, graph->add_constant_f32(base + "_epsilon", {1}, {epsilon})}, shifted);
  emit("Sqrt", {shifted}, deviation);
  emit("Div", {centred, deviation}, normalized);
  emit("Reshape", {node.inputs[1], as_channels}, scale);
  emit("Reshape", {node.inputs[2], as_channels}, bias);
  emit("Mul", {normalized, scale}, scaled);
  emit("Add", {scaled, bias}, node.outputs[0]);

  // The running statistics, when the model asks for them.
  const std::string keep = graph->add_constant_f32(base + "_momentum", {1}, {momentum});
  const std::string update = graph->add_constant_f32(base + "_update", {1}, {1.0f - momentum});
  for (size_t i = 1; i < 3 && i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    const std::string batch = fresh(i == 1 ? "batch_mean_flat" : "batch_var_flat");
    const std::string old_part = fresh(i == 1 ? "kept_mean" : "kept_var");
    const std::string new_part = fresh(i == 1 ? "new_mean" : "new_var");
    emit("Reshape", {i == 1 ? mean : variance, flat}, batch);
    emit("Mul", {node.inputs[2 + i], keep}, old_part);
    emit("Mul", {batch, update}, new_part);
    emit("Add", {old_part, new_part}, node.outputs[i]);
  }
  return ok_status();
}

Status normalize_batch_norm(ir::Graph* graph, ir::Node* node) {
  if (ir::int_attribute(*node, "spatial", 1) != 1) {
    return invalid_model(node->describe(),
                         ": spatial=0 (per-element statistics, opsets 7-8) is not supported");
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
  // Sum first (it may become an Identity, removed below), and training-mode
  // BatchNormalization (replaced by the ops it computes).
  std::vector<ir::Node> rebuilt;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const ir::Node& node = graph->nodes[i];
    if (node.op_type == "Sum" && node.domain.empty()) {
      std::vector<ir::Node> added;
      sum_to_adds(graph, i, &added);
      rebuilt.insert(rebuilt.end(), added.begin(), added.end());
    }
    if (node.op_type == "BatchNormalization" && node.domain.empty() &&
        ir::int_attribute(node, "training_mode", 0) != 0) {
      std::vector<ir::Node> added;
      ORKNN_RETURN_IF_ERROR(batch_norm_training_to_ops(graph, i, &added));
      rebuilt.insert(rebuilt.end(), added.begin(), added.end());
      continue;
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
