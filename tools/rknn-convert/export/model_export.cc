#include "export/model_export.h"

#include <algorithm>
#include <unordered_map>

#ifndef ORKNN_CONVERTER_VERSION
#define ORKNN_CONVERTER_VERSION "0.0.0"
#endif

namespace orknn::convert {
namespace {

model::proto::Attribute to_proto_attribute(const std::string& name, const ir::Attribute& value) {
  using Kind = ir::Attribute::Kind;
  switch (value.kind) {
    case Kind::kInt:
      return model::Attr::i(name, value.int_value);
    case Kind::kFloat:
      return model::Attr::f(name, value.float_value);
    case Kind::kString:
      return model::Attr::s(name, value.string_value);
    case Kind::kInts:
      return model::Attr::ints(name, value.ints);
    case Kind::kFloats:
      return model::Attr::floats(name, value.floats);
  }
  return model::Attr::i(name, 0);
}

class TensorTable {
 public:
  TensorTable(const ir::Graph& graph, model::ModelBuilder* builder)
      : graph_(graph), builder_(builder) {}

  Result<int> index_of(const std::string& name) {
    auto found = indices_.find(name);
    if (found != indices_.end()) return found->second;
    if (!graph_.has_tensor(name)) return internal_failure("export: tensor '", name, "' is unknown");
    const ir::Tensor& tensor = graph_.tensor(name);
    if (!tensor.shape_known) return internal_failure("export: tensor '", name, "' has no shape");
    int index;
    if (tensor.is_constant()) {
      index = builder_->add_constant(name, tensor.type, tensor.shape, tensor.data->data(),
                                     tensor.data->size(), tensor.quantization);
    } else {
      index = builder_->add_tensor(name, tensor.type, tensor.shape, tensor.quantization);
    }
    indices_[name] = index;
    return index;
  }

  // An output the graph never names (an omitted optional output in the middle of a node's list).
  int placeholder(const std::string& node_name, size_t position) {
    std::string name = node_name + "_unused_output_" + std::to_string(position);
    while (graph_.has_tensor(name) || indices_.count(name)) name += "_";
    const int index = builder_->add_tensor(name, DataType::kFloat32, {0});
    indices_[name] = index;
    return index;
  }

 private:
  const ir::Graph& graph_;
  model::ModelBuilder* builder_;
  std::unordered_map<std::string, int> indices_;
};

}  // namespace

const char* converter_version() {
  return ORKNN_CONVERTER_VERSION;
}

Status build_model(const ir::Graph& graph, const ExportMetadata& metadata,
                   const std::vector<std::string>& extra_outputs, model::ModelBuilder* builder) {
  builder->set_producer("rknn-convert", converter_version());
  builder->set_source_framework("ONNX");
  builder->set_target_platform(metadata.target_platform);
  builder->set_custom_string(metadata.custom_string);
  TensorTable table(graph, builder);

  for (const std::string& name : graph.inputs) {
    ORKNN_ASSIGN_OR_RETURN(int index, table.index_of(name));
    model::InputOptions options;
    auto preprocessing = graph.preprocessing.find(name);
    if (preprocessing != graph.preprocessing.end()) {
      options.mean = preprocessing->second.mean;
      options.std = preprocessing->second.std;
      options.nhwc_layout = preprocessing->second.nhwc_layout;
    }
    builder->add_input(index, options);
  }
  for (const ir::Node& node : graph.nodes) {
    std::vector<int> inputs;
    for (const std::string& input : node.inputs) {
      if (input.empty()) {
        inputs.push_back(-1);
        continue;
      }
      ORKNN_ASSIGN_OR_RETURN(int index, table.index_of(input));
      inputs.push_back(index);
    }
    while (!inputs.empty() && inputs.back() < 0) inputs.pop_back();
    size_t output_count = node.outputs.size();
    while (output_count > 0 && node.outputs[output_count - 1].empty()) --output_count;
    std::vector<int> outputs;
    for (size_t i = 0; i < output_count; ++i) {
      if (node.outputs[i].empty()) {
        outputs.push_back(table.placeholder(node.name, i));
        continue;
      }
      ORKNN_ASSIGN_OR_RETURN(int index, table.index_of(node.outputs[i]));
      outputs.push_back(index);
    }
    std::vector<model::proto::Attribute> attributes;
    for (const auto& [key, value] : node.attributes) {
      attributes.push_back(to_proto_attribute(key, value));
    }
    builder->add_node(node.op_type, inputs, outputs, attributes, node.name);
  }
  std::vector<std::string> outputs = graph.outputs;
  for (const std::string& name : extra_outputs) {
    if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) outputs.push_back(name);
  }
  for (const std::string& name : outputs) {
    ORKNN_ASSIGN_OR_RETURN(int index, table.index_of(name));
    builder->add_output(index);
  }
  for (const auto& set : metadata.dynamic_shape_sets) builder->add_dynamic_shape_set(set);
  return ok_status();
}

}  // namespace orknn::convert
