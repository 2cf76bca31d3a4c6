#include "evaluation/runtime_node.h"

#include "devices/cpu/cpu_kernel_registry.h"
#include "graph/op_schema.h"

namespace orknn::convert {
namespace {

// A one-node runtime graph mirroring an IR node. Constant inputs point at the IR's bytes, which
// the caller's graph keeps alive for the lifetime of this object.
struct SingleNodeGraph {
  graph::Graph graph;
  std::vector<graph::Shape> shapes;  // by tensor index
};

graph::Tensor runtime_tensor(const ir::Tensor& source) {
  graph::Tensor tensor;
  tensor.name = source.name;
  tensor.data_type = source.type;
  tensor.shape = source.shape;
  tensor.quantization = to_graph_quantization(source.quantization);
  if (source.is_constant()) {
    tensor.constant = true;
    tensor.constant_data = source.data->data();
    tensor.constant_size = source.data->size();
  }
  return tensor;
}

Result<SingleNodeGraph> make_single_node_graph(const ir::Graph& graph, const ir::Node& node,
                                               bool with_output_types) {
  SingleNodeGraph single;
  graph::Node runtime_node;
  runtime_node.name = node.name;
  runtime_node.op_type = node.op_type;
  runtime_node.attributes = node.attributes;
  for (const std::string& input : node.inputs) {
    if (input.empty()) {
      runtime_node.inputs.push_back(-1);
      continue;
    }
    if (!graph.has_tensor(input)) {
      return invalid_model(node.describe(), ": input '", input, "' is not defined");
    }
    const ir::Tensor& tensor = graph.tensor(input);
    if (!tensor.shape_known) {
      return internal_failure(node.describe(), ": input '", input, "' has no shape yet");
    }
    runtime_node.inputs.push_back(static_cast<int32_t>(single.graph.tensors.size()));
    single.graph.tensors.push_back(runtime_tensor(tensor));
    single.shapes.push_back(tensor.shape);
  }
  // Outputs are always present (shape functions size their results by the node's outputs);
  // their types and shapes matter only for running the kernel.
  {
    for (const std::string& output : node.outputs) {
      graph::Tensor tensor;
      if (with_output_types && !output.empty() && graph.has_tensor(output)) {
        tensor = runtime_tensor(graph.tensor(output));
        tensor.constant = false;
        tensor.constant_data = nullptr;
        tensor.constant_size = 0;
      }
      tensor.name = output.empty() ? node.name + "_unused_output" : output;
      runtime_node.outputs.push_back(static_cast<int32_t>(single.graph.tensors.size()));
      single.graph.tensors.push_back(tensor);
      single.shapes.push_back(tensor.shape);
    }
  }
  single.graph.nodes.push_back(std::move(runtime_node));
  return single;
}

}  // namespace

graph::Quantization to_graph_quantization(const model::Quantization& quantization) {
  graph::Quantization result;
  result.scales = quantization.scales;
  result.zero_points = quantization.zero_points;
  result.axis = quantization.axis;
  return result;
}

bool is_runtime_op(const ir::Node& node) {
  return node.domain.empty() && graph::find_op_schema(node.op_type) != nullptr;
}

Result<std::vector<ir::Shape>> runtime_output_shapes(const ir::Graph& graph, const ir::Node& node) {
  const graph::OpSchema* schema = graph::find_op_schema(node.op_type);
  if (!schema || !node.domain.empty()) {
    return internal_failure(node.describe(), ": not a runtime op");
  }
  const int inputs = static_cast<int>(node.inputs.size());
  const int outputs = static_cast<int>(node.outputs.size());
  if (inputs < schema->min_inputs || inputs > schema->max_inputs) {
    return invalid_model(node.describe(), ": has ", inputs, " inputs; the runtime's ", node.op_type,
                         " takes ", schema->min_inputs, " to ", schema->max_inputs);
  }
  if (outputs < schema->min_outputs || outputs > schema->max_outputs) {
    return invalid_model(node.describe(), ": has ", outputs, " outputs; the runtime's ",
                         node.op_type, " gives ", schema->min_outputs, " to ", schema->max_outputs);
  }
  ORKNN_ASSIGN_OR_RETURN(SingleNodeGraph single, make_single_node_graph(graph, node, false));
  graph::ShapeInferenceContext context(single.graph, single.graph.nodes[0], single.shapes);
  std::vector<graph::Shape> shapes;
  ORKNN_RETURN_IF_ERROR(schema->infer_shapes(context, &shapes));
  if (shapes.size() < node.outputs.size()) {
    return internal_failure(node.describe(), ": shape function gave ", shapes.size(),
                            " shapes for ", node.outputs.size(), " outputs");
  }
  shapes.resize(node.outputs.size());
  return shapes;
}

Result<std::vector<ir::Tensor>> runtime_evaluate(const ir::Graph& graph, const ir::Node& node) {
  ORKNN_ASSIGN_OR_RETURN(SingleNodeGraph single, make_single_node_graph(graph, node, true));
  const graph::Node& runtime_node = single.graph.nodes[0];
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<devices::cpu::CpuKernel> kernel,
                         devices::cpu::build_cpu_kernel(single.graph, runtime_node, single.shapes));
  std::vector<const void*> inputs;
  for (int32_t index : runtime_node.inputs) {
    inputs.push_back(index < 0 ? nullptr
                               : single.graph.tensors[static_cast<size_t>(index)].constant_data);
  }
  std::vector<ir::Bytes> output_bytes;
  std::vector<void*> outputs;
  output_bytes.reserve(runtime_node.outputs.size());
  for (int32_t index : runtime_node.outputs) {
    output_bytes.emplace_back(single.graph.tensors[static_cast<size_t>(index)].bytes());
  }
  for (ir::Bytes& bytes : output_bytes) outputs.push_back(bytes.data());
  ORKNN_RETURN_IF_ERROR(kernel->run(inputs.data(), outputs.data()));

  std::vector<ir::Tensor> results;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const graph::Tensor& runtime_tensor =
        single.graph.tensors[static_cast<size_t>(runtime_node.outputs[i])];
    ir::Tensor tensor;
    tensor.name = node.outputs[i];
    tensor.type = runtime_tensor.data_type;
    tensor.shape = runtime_tensor.shape;
    tensor.shape_known = true;
    tensor.quantization.scales = runtime_tensor.quantization.scales;
    tensor.quantization.zero_points = runtime_tensor.quantization.zero_points;
    tensor.quantization.axis = runtime_tensor.quantization.axis;
    tensor.data = std::make_shared<const ir::Bytes>(std::move(output_bytes[i]));
    results.push_back(std::move(tensor));
  }
  return results;
}

}  // namespace orknn::convert
