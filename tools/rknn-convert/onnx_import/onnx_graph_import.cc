#include "onnx_import/onnx_graph_import.h"

#include <set>

#include "onnx_import/onnx_loader.h"
#include "onnx_import/onnx_tensor.h"

namespace orknn::convert {
namespace {

using onnx::AttributeProto;

std::string describe_node(const onnx::NodeProto& node, int index) {
  return node.op_type() +
         (node.name().empty() ? " (node " + std::to_string(index) + ")" : " '" + node.name() + "'");
}

// Opset of each imported domain; the default domain is spelled "" in the IR.
std::map<std::string, int> domain_opsets(const onnx::ModelProto& model) {
  std::map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    const std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    opsets[domain] = static_cast<int>(opset.version());
  }
  return opsets;
}

Status import_attribute(const AttributeProto& proto, const std::string& node_what, ir::Node* node) {
  const std::string what = node_what + ": attribute '" + proto.name() + "'";
  switch (proto.type()) {
    case AttributeProto::INT:
      node->attributes[proto.name()] = ir::make_int_attribute(proto.i());
      return ok_status();
    case AttributeProto::FLOAT:
      node->attributes[proto.name()] = ir::make_float_attribute(proto.f());
      return ok_status();
    case AttributeProto::STRING:
      node->attributes[proto.name()] = ir::make_string_attribute(proto.s());
      return ok_status();
    case AttributeProto::INTS:
      node->attributes[proto.name()] =
          ir::make_ints_attribute(std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
      return ok_status();
    case AttributeProto::FLOATS:
      node->attributes[proto.name()] = ir::make_floats_attribute(
          std::vector<float>(proto.floats().begin(), proto.floats().end()));
      return ok_status();
    case AttributeProto::TENSOR: {
      ORKNN_ASSIGN_OR_RETURN(ir::Tensor tensor, tensor_from_onnx(proto.t(), what));
      node->tensor_attributes[proto.name()] = std::move(tensor);
      return ok_status();
    }
    case AttributeProto::GRAPH:
    case AttributeProto::GRAPHS:
      node->unrepresentable = "attribute '" + proto.name() + "' is a subgraph (control flow)";
      return ok_status();
    default:
      if (node->unrepresentable.empty()) {
        node->unrepresentable = "attribute '" + proto.name() + "' has type " +
                                AttributeProto::AttributeType_Name(proto.type()) +
                                ", which the model format cannot hold";
      }
      return ok_status();
  }
}

// A Constant node's value as a constant tensor (every form ONNX allows up to opset 19).
Result<ir::Tensor> constant_node_value(const onnx::NodeProto& node, const std::string& what) {
  for (const AttributeProto& attribute : node.attribute()) {
    const std::string& key = attribute.name();
    ir::Tensor tensor;
    tensor.shape_known = true;
    if (key == "value") return tensor_from_onnx(attribute.t(), what + ": value");
    if (key == "value_float") {
      tensor.type = DataType::kFloat32;
      tensor.data = std::make_shared<const ir::Bytes>(ir::bytes_from_floats({attribute.f()}));
    } else if (key == "value_floats") {
      tensor.type = DataType::kFloat32;
      tensor.shape = {attribute.floats_size()};
      tensor.data = std::make_shared<const ir::Bytes>(ir::bytes_from_floats(
          std::vector<float>(attribute.floats().begin(), attribute.floats().end())));
    } else if (key == "value_int") {
      tensor.type = DataType::kInt64;
      tensor.data = std::make_shared<const ir::Bytes>(ir::bytes_from_ints({attribute.i()}));
    } else if (key == "value_ints") {
      tensor.type = DataType::kInt64;
      tensor.shape = {attribute.ints_size()};
      tensor.data = std::make_shared<const ir::Bytes>(ir::bytes_from_ints(
          std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end())));
    } else {
      return invalid_model(what, ": Constant value '", key,
                           "' is not supported (string and "
                           "sparse constants have no runtime equivalent)");
    }
    return tensor;
  }
  return invalid_model(what, ": Constant node without a value");
}

Status import_value_info(const onnx::ValueInfoProto& value, const char* role, ir::Tensor* tensor) {
  const std::string what = std::string(role) + " '" + value.name() + "'";
  if (!value.type().has_tensor_type()) {
    return invalid_model(what,
                         ": only tensors are supported (this is a sequence, map or optional)");
  }
  const onnx::TypeProto::Tensor& type = value.type().tensor_type();
  ORKNN_ASSIGN_OR_RETURN(tensor->type, data_type_from_onnx(type.elem_type(), what));
  if (!type.has_shape()) {
    tensor->shape_known = false;
    return ok_status();
  }
  tensor->shape.clear();
  tensor->dimension_names.clear();
  for (const onnx::TensorShapeProto::Dimension& dimension : type.shape().dim()) {
    if (dimension.has_dim_value() && dimension.dim_value() >= 0) {
      tensor->shape.push_back(dimension.dim_value());
      tensor->dimension_names.emplace_back();
    } else {
      tensor->shape.push_back(-1);
      tensor->dimension_names.push_back(dimension.has_dim_param() ? dimension.dim_param() : "?");
    }
  }
  tensor->shape_known = true;
  return ok_status();
}

}  // namespace

SourceModelInfo describe_source_model(const onnx::ModelProto& model) {
  SourceModelInfo info;
  info.producer = model.producer_name() +
                  (model.producer_version().empty() ? "" : " " + model.producer_version());
  info.ir_version = model.ir_version();
  info.opset = default_domain_opset(model);
  info.node_count = static_cast<size_t>(model.graph().node_size());
  return info;
}

Result<ir::Graph> import_onnx_graph(const onnx::ModelProto& model, SourceModelInfo* out_info) {
  const onnx::GraphProto& source = model.graph();
  ir::Graph graph;
  graph.default_opset = default_domain_opset(model);
  const std::map<std::string, int> opsets = domain_opsets(model);
  if (out_info) *out_info = describe_source_model(model);

  std::set<std::string> initializer_names;
  for (const onnx::TensorProto& proto : source.initializer()) {
    ORKNN_ASSIGN_OR_RETURN(ir::Tensor tensor,
                           tensor_from_onnx(proto, "initializer '" + proto.name() + "'"));
    tensor.name = proto.name();
    initializer_names.insert(proto.name());
    graph.tensors[proto.name()] = std::move(tensor);
  }
  // Models of IR version < 4 list initializers among the inputs too; those are constants.
  for (const onnx::ValueInfoProto& input : source.input()) {
    if (initializer_names.count(input.name())) continue;
    ir::Tensor& tensor = graph.tensor_or_new(input.name());
    ORKNN_RETURN_IF_ERROR(import_value_info(input, "graph input", &tensor));
    graph.inputs.push_back(input.name());
  }
  if (graph.inputs.empty()) {
    return invalid_model(
        "the graph has no inputs (every input is an initializer); there is "
        "nothing to feed at run time");
  }

  for (int i = 0; i < source.node_size(); ++i) {
    const onnx::NodeProto& proto = source.node(i);
    const std::string what = describe_node(proto, i);
    const std::string domain = proto.domain() == "ai.onnx" ? "" : proto.domain();
    if (domain.empty() && proto.op_type() == "Constant") {
      if (proto.output_size() != 1) return invalid_model(what, ": expected one output");
      ORKNN_ASSIGN_OR_RETURN(ir::Tensor tensor, constant_node_value(proto, what));
      tensor.name = proto.output(0);
      graph.tensors[tensor.name] = std::move(tensor);
      continue;
    }
    ir::Node node;
    node.name = proto.name();
    node.op_type = proto.op_type();
    node.domain = domain;
    auto opset = opsets.find(domain);
    node.opset = opset == opsets.end() ? 0 : opset->second;
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    for (const AttributeProto& attribute : proto.attribute()) {
      ORKNN_RETURN_IF_ERROR(import_attribute(attribute, what, &node));
    }
    for (const std::string& output : node.outputs) {
      if (!output.empty()) graph.tensor_or_new(output);
    }
    graph.nodes.push_back(std::move(node));
  }

  for (const onnx::ValueInfoProto& output : source.output()) {
    if (graph.is_graph_output(output.name())) {
      return invalid_model("graph output '", output.name(), "' is listed twice");
    }
    graph.outputs.push_back(output.name());
    if (!graph.has_tensor(output.name())) {
      return invalid_model("graph output '", output.name(), "' is not defined");
    }
    ir::Tensor& tensor = graph.tensor(output.name());
    if (!output.type().has_tensor_type()) {
      return invalid_model("graph output '", output.name(),
                           "': only tensors are supported (this is a sequence, map or optional)");
    }
    if (!tensor.is_constant() && !graph.is_graph_input(output.name())) {
      // The declared type is checked against what the graph computes later; remember it.
      ORKNN_ASSIGN_OR_RETURN(tensor.type,
                             data_type_from_onnx(output.type().tensor_type().elem_type(),
                                                 "graph output '" + output.name() + "'"));
    }
  }
  ORKNN_RETURN_IF_ERROR(graph.sort_topologically());
  return graph;
}

}  // namespace orknn::convert
