#include "graph/graph_from_model.h"

#include "graph/shape_inference.h"
#include "model/model_file.h"

namespace orknn::graph {
namespace {

Attribute convert_attribute(const model::proto::Attribute& source) {
  Attribute attribute;
  using Case = model::proto::Attribute::ValueCase;
  switch (source.value_case()) {
    case Case::kIntValue:
      attribute.kind = Attribute::Kind::kInt;
      attribute.int_value = source.int_value();
      break;
    case Case::kFloatValue:
      attribute.kind = Attribute::Kind::kFloat;
      attribute.float_value = source.float_value();
      break;
    case Case::kStringValue:
      attribute.kind = Attribute::Kind::kString;
      attribute.string_value = source.string_value();
      break;
    case Case::kInts:
      attribute.kind = Attribute::Kind::kInts;
      attribute.ints.assign(source.ints().values().begin(), source.ints().values().end());
      break;
    case Case::kFloats:
      attribute.kind = Attribute::Kind::kFloats;
      attribute.floats.assign(source.floats().values().begin(), source.floats().values().end());
      break;
    case Case::VALUE_NOT_SET:
      attribute.kind = Attribute::Kind::kInts;  // an empty list
      break;
  }
  return attribute;
}

}  // namespace

Result<std::shared_ptr<const Graph>> graph_from_model(
    std::shared_ptr<const model::ModelFile> model_file) {
  const model::proto::Model& source = model_file->graph();
  auto graph = std::make_shared<Graph>();

  graph->tensors.reserve(static_cast<size_t>(source.tensors_size()));
  for (int i = 0; i < source.tensors_size(); ++i) {
    const model::proto::Tensor& tensor_source = source.tensors(i);
    Tensor tensor;
    tensor.name = tensor_source.name();
    tensor.data_type = model::data_type_from_proto(tensor_source.data_type());
    tensor.shape.assign(tensor_source.shape().begin(), tensor_source.shape().end());
    const model::proto::Quantization& quantization = tensor_source.quantization();
    tensor.quantization.scales.assign(quantization.scale().begin(), quantization.scale().end());
    tensor.quantization.zero_points.assign(quantization.zero_point().begin(),
                                           quantization.zero_point().end());
    tensor.quantization.axis = quantization.axis();
    if (tensor_source.is_constant()) {
      tensor.constant = true;
      tensor.constant_data = model_file->constant_data(i);
      tensor.constant_size = model_file->constant_size(i);
    }
    graph->tensors.push_back(std::move(tensor));
  }

  graph->nodes.reserve(static_cast<size_t>(source.nodes_size()));
  for (const model::proto::Node& node_source : source.nodes()) {
    Node node;
    node.name = node_source.name();
    node.op_type = node_source.op_type();
    node.inputs.assign(node_source.inputs().begin(), node_source.inputs().end());
    node.outputs.assign(node_source.outputs().begin(), node_source.outputs().end());
    for (const model::proto::Attribute& attribute : node_source.attributes()) {
      if (!node.attributes.emplace(attribute.name(), convert_attribute(attribute)).second) {
        return invalid_model(node.describe(), ": attribute '", attribute.name(), "' appears twice");
      }
    }
    graph->nodes.push_back(std::move(node));
  }

  for (const model::proto::InputInfo& input_source : source.inputs()) {
    GraphInput input;
    input.tensor = input_source.tensor();
    input.mean.assign(input_source.mean().begin(), input_source.mean().end());
    input.std.assign(input_source.std().begin(), input_source.std().end());
    input.nhwc_layout = input_source.nhwc_layout();
    input.reverse_channels = input_source.reverse_channels();
    graph->inputs.push_back(std::move(input));
  }
  graph->outputs.assign(source.outputs().begin(), source.outputs().end());
  for (const model::proto::ShapeSet& set : source.dynamic_shapes()) {
    std::vector<Shape> shapes;
    for (const model::proto::Shape& shape : set.shapes()) {
      shapes.emplace_back(shape.dims().begin(), shape.dims().end());
    }
    graph->dynamic_shape_sets.push_back(std::move(shapes));
  }

  graph->metadata.producer_name = source.producer_name();
  graph->metadata.producer_version = source.producer_version();
  graph->metadata.target_platform = source.target_platform();
  graph->metadata.custom_string = source.custom_string();
  graph->metadata.source_framework = source.source_framework();
  graph->metadata.format_version = model_file->format_version();
  graph->storage = model_file;

  ORKNN_RETURN_IF_ERROR(verify_graph(*graph));
  return std::shared_ptr<const Graph>(std::move(graph));
}

}  // namespace orknn::graph
