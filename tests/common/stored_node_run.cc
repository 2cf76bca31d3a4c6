#include "common/stored_node_run.h"

#include <memory>

#include "devices/cpu/cpu_kernel_registry.h"
#include "graph/op_schema.h"

namespace orknn::testing {

Result<graph::Graph> single_node_graph(const std::string& op_type,
                                       const std::vector<StoredTensor>& inputs,
                                       const Attributes& attributes,
                                       const std::vector<StoredOutput>& outputs) {
  const graph::OpSchema* schema = graph::find_op_schema(op_type);
  if (!schema) return unimplemented("no schema for op type ", op_type);

  graph::Graph graph;
  auto constant_bytes = std::make_shared<std::vector<std::vector<uint8_t>>>();
  constant_bytes->reserve(inputs.size());
  graph.storage = constant_bytes;
  graph::Node node;
  node.name = "node_under_test";
  node.op_type = op_type;
  node.attributes = attributes;
  std::vector<graph::Shape> shapes;  // of every tensor, in graph order
  for (const StoredTensor& input : inputs) {
    if (input.name.empty()) {
      node.inputs.push_back(-1);
      continue;
    }
    const auto index = static_cast<int32_t>(graph.tensors.size());
    graph::Tensor tensor;
    tensor.name = input.name;
    tensor.data_type = input.data_type;
    tensor.shape = input.shape;
    tensor.quantization = input.quantization;
    if (input.constant) {
      constant_bytes->push_back(input.bytes);
      tensor.constant = true;
      tensor.constant_data = constant_bytes->back().data();
      tensor.constant_size = constant_bytes->back().size();
    } else {
      graph::GraphInput graph_input;
      graph_input.tensor = index;
      graph.inputs.push_back(graph_input);
    }
    node.inputs.push_back(index);
    shapes.push_back(tensor.shape);
    graph.tensors.push_back(std::move(tensor));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    node.outputs.push_back(static_cast<int32_t>(graph.tensors.size() + i));
  }

  std::vector<graph::Shape> output_shapes;
  // The context reads input shapes only, so the output tensors can follow.
  ORKNN_RETURN_IF_ERROR(
      schema->infer_shapes(graph::ShapeInferenceContext(graph, node, shapes), &output_shapes));
  if (output_shapes.size() != outputs.size()) {
    return internal_failure("shape function gave ", output_shapes.size(), " outputs, expected ",
                            outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    graph::Tensor tensor;
    tensor.name = str_cat("output", i);
    tensor.data_type = outputs[i].data_type;
    tensor.shape = output_shapes[i];
    tensor.quantization = outputs[i].quantization;
    graph.outputs.push_back(static_cast<int32_t>(graph.tensors.size()));
    graph.tensors.push_back(std::move(tensor));
  }
  graph.nodes.push_back(std::move(node));
  return graph;
}

StoredRun run_single_node(const graph::Graph& graph, const std::vector<StoredTensor>& inputs) {
  StoredRun run;
  const graph::Node& node = graph.nodes.at(0);
  std::vector<graph::Shape> shapes;
  for (const graph::Tensor& tensor : graph.tensors) shapes.push_back(tensor.shape);
  for (int32_t index : node.outputs) run.output_shapes.push_back(graph.tensor(index).shape);
  auto kernel = devices::cpu::build_cpu_kernel(graph, node, shapes);
  if (!kernel.ok()) {
    run.status = kernel.take_status();
    return run;
  }
  std::vector<const void*> input_pointers;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.has_input(i)) {
      input_pointers.push_back(nullptr);
    } else {
      const graph::Tensor& tensor = graph.tensor(node.inputs[i]);
      input_pointers.push_back(tensor.is_constant() ? tensor.constant_data
                                                    : inputs.at(i).bytes.data());
    }
  }
  // Exact sizes, so that ASan catches a kernel writing past an output.
  for (int32_t index : node.outputs) run.outputs.emplace_back(graph.tensor(index).bytes());
  std::vector<void*> output_pointers;
  for (auto& buffer : run.outputs) output_pointers.push_back(buffer.data());
  run.status = kernel.value()->run(input_pointers.data(), output_pointers.data());
  return run;
}

StoredRun run_stored(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                     const Attributes& attributes, const std::vector<StoredOutput>& outputs) {
  Result<graph::Graph> graph = single_node_graph(op_type, inputs, attributes, outputs);
  if (!graph.ok()) {
    StoredRun run;
    run.status = graph.take_status();
    return run;
  }
  return run_single_node(graph.value(), inputs);
}

}  // namespace orknn::testing
