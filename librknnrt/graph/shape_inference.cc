#include "graph/shape_inference.h"

#include "graph/op_schema.h"

namespace orknn::graph {

std::vector<Shape> stored_input_shapes(const Graph& graph) {
  std::vector<Shape> shapes;
  for (const GraphInput& input : graph.inputs) shapes.push_back(graph.tensor(input.tensor).shape);
  return shapes;
}

Status infer_shapes(const Graph& graph, const std::vector<Shape>& input_shapes,
                    std::vector<Shape>* out_shapes) {
  if (input_shapes.size() != graph.inputs.size()) {
    return invalid_argument("expected ", graph.inputs.size(), " input shapes, got ",
                            input_shapes.size());
  }
  std::vector<Shape>& shapes = *out_shapes;
  shapes.assign(graph.tensors.size(), Shape());
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    if (graph.tensors[i].is_constant()) shapes[i] = graph.tensors[i].shape;
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    shapes[static_cast<size_t>(graph.inputs[i].tensor)] = input_shapes[i];
  }
  std::vector<Shape> node_outputs;
  for (const Node& node : graph.nodes) {
    const OpSchema* schema = find_op_schema(node.op_type);
    if (!schema)
      return invalid_model(node.describe(), ": unsupported op type '", node.op_type, "'");
    ShapeInferenceContext context(graph, node, shapes);
    node_outputs.clear();
    ORKNN_RETURN_IF_ERROR(schema->infer_shapes(context, &node_outputs));
    if (node_outputs.size() != node.outputs.size()) {
      return invalid_model(node.describe(), ": produces ", node_outputs.size(),
                           " outputs but the model lists ", node.outputs.size());
    }
    for (size_t i = 0; i < node_outputs.size(); ++i) {
      for (int64_t dim : node_outputs[i]) {
        if (dim < 0)
          return invalid_model(node.describe(), ": output ", i, " has a negative dimension");
      }
      shapes[static_cast<size_t>(node.outputs[i])] = std::move(node_outputs[i]);
    }
  }
  return ok_status();
}

Status verify_graph(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    const OpSchema* schema = find_op_schema(node.op_type);
    if (!schema) {
      return invalid_model(node.describe(), ": op type '", node.op_type,
                           "' is not supported by this runtime");
    }
    const int inputs = static_cast<int>(node.inputs.size());
    const int outputs = static_cast<int>(node.outputs.size());
    if (inputs < schema->min_inputs || inputs > schema->max_inputs) {
      return invalid_model(node.describe(), ": has ", inputs, " inputs, the op takes ",
                           schema->min_inputs, " to ", schema->max_inputs);
    }
    if (outputs < schema->min_outputs || outputs > schema->max_outputs) {
      return invalid_model(node.describe(), ": has ", outputs, " outputs, the op gives ",
                           schema->min_outputs, " to ", schema->max_outputs);
    }
    for (int i = 0; i < schema->min_inputs; ++i) {
      if (!node.has_input(static_cast<size_t>(i))) {
        return invalid_model(node.describe(), ": required input ", i, " is missing");
      }
    }
  }
  std::vector<Shape> shapes;
  ORKNN_RETURN_IF_ERROR(infer_shapes(graph, stored_input_shapes(graph), &shapes));
  for (const Node& node : graph.nodes) {
    for (int32_t index : node.outputs) {
      const Tensor& tensor = graph.tensor(index);
      if (shapes[static_cast<size_t>(index)] != tensor.shape) {
        return invalid_model(node.describe(), ": output '", tensor.name, "' is stored as ",
                             shape_to_string(tensor.shape), " but the op computes ",
                             shape_to_string(shapes[static_cast<size_t>(index)]));
      }
    }
  }
  return ok_status();
}

}  // namespace orknn::graph
