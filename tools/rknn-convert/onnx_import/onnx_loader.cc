#include "onnx_import/onnx_loader.h"

#include <onnx/checker.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "onnx_import/onnx_tensor.h"

namespace orknn::convert {
namespace {

namespace fs = std::filesystem;

// The newest IR version and opset the ONNX library of this build knows (Debian's libonnx 1.12).
// Its checker validates nodes against the newest schema at or below the model's opset, so for
// opsets it does not know (18, 19: Reduce*, Resize, Pad, Split... changed) it would refuse valid
// nodes; those models get our own structural checks only, and the runtime's shape functions
// validate every node's attributes later.
constexpr int kCheckerNewestIrVersion = 8;
constexpr int kCheckerNewestOpset = 17;

Result<std::vector<char>> read_whole_file(const std::string& path, const std::string& what) {
  std::error_code error;
  if (!fs::exists(path, error)) return invalid_argument(what, ": file not found");
  if (fs::is_directory(path, error)) return invalid_argument(what, ": is a directory");
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return invalid_argument(what, ": cannot open the file");
  const std::streamoff size = file.tellg();
  if (size < 0) return invalid_argument(what, ": cannot read the file size");
  std::vector<char> bytes(static_cast<size_t>(size));
  file.seekg(0);
  if (size > 0 && !file.read(bytes.data(), size)) {
    return invalid_argument(what, ": read error");
  }
  return bytes;
}

// Moves external data into raw_data so the rest of the converter sees ordinary tensors.
Status load_external_data(onnx::TensorProto* tensor, const std::string& directory,
                          const std::string& what) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& entry : tensor->external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      return invalid_model(what, ": external data ", entry.key(), " '", entry.value(),
                           "' is not a number");
    }
  }
  if (location.empty()) return invalid_model(what, ": external data without a 'location'");
  const fs::path relative(location);
  if (relative.is_absolute()) {
    return invalid_model(what, ": external data location '", location,
                         "' is absolute; ONNX requires a path relative to the model");
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      return invalid_model(what, ": external data location '", location,
                           "' leaves the model's directory");
    }
  }
  const fs::path file_path = fs::path(directory.empty() ? "." : directory) / relative;
  std::error_code error;
  if (!fs::is_regular_file(file_path, error)) {
    return invalid_model(what, ": external data file '", file_path.string(),
                         "' is missing (keep it next to the .onnx file)");
  }
  const int64_t file_size = static_cast<int64_t>(fs::file_size(file_path, error));
  if (offset < 0 || offset > file_size) {
    return invalid_model(what, ": external data offset ", offset, " is outside '",
                         file_path.string(), "' (", file_size, " bytes)");
  }
  if (length < 0) length = file_size - offset;
  if (length > file_size - offset) {
    return invalid_model(what, ": external data range [", offset, ", ", offset + length,
                         ") is outside '", file_path.string(), "' (", file_size, " bytes)");
  }
  std::ifstream file(file_path, std::ios::binary);
  std::string bytes(static_cast<size_t>(length), '\0');
  file.seekg(offset);
  if (length > 0 && !file.read(bytes.data(), length)) {
    return invalid_model(what, ": cannot read external data from '", file_path.string(), "'");
  }
  tensor->set_raw_data(std::move(bytes));
  tensor->clear_external_data();
  tensor->set_data_location(onnx::TensorProto::DEFAULT);
  return ok_status();
}

// Every tensor proto in the graph that may hold data: initializers and Constant attributes.
template <typename Visit>
Status for_each_tensor(onnx::GraphProto* graph, Visit&& visit) {
  for (onnx::TensorProto& tensor : *graph->mutable_initializer()) {
    ORKNN_RETURN_IF_ERROR(visit(&tensor, "initializer '" + tensor.name() + "'"));
  }
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) {
        ORKNN_RETURN_IF_ERROR(visit(attribute.mutable_t(), "attribute '" + attribute.name() +
                                                               "' of node '" + node.name() + "'"));
      }
      for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) {
        ORKNN_RETURN_IF_ERROR(for_each_tensor(&subgraph, visit));
      }
      if (attribute.has_g()) ORKNN_RETURN_IF_ERROR(for_each_tensor(attribute.mutable_g(), visit));
    }
  }
  return ok_status();
}

// Gives every value_info without a shape an empty one in the checker's copy: ONNX 1.12's checker
// still requires the field, newer exporters leave it out for tensors of unknown rank.
void add_missing_shapes(onnx::GraphProto* graph) {
  auto patch = [](onnx::ValueInfoProto& value) {
    if (value.type().has_tensor_type() && !value.type().tensor_type().has_shape()) {
      value.mutable_type()->mutable_tensor_type()->mutable_shape();
    }
  };
  for (auto& value : *graph->mutable_input()) patch(value);
  for (auto& value : *graph->mutable_output()) patch(value);
  for (auto& value : *graph->mutable_value_info()) patch(value);
}

Status run_onnx_checker(const onnx::ModelProto& model, const std::string& what) {
  const int opset = default_domain_opset(model);
  if (opset > kCheckerNewestOpset) return ok_status();
  onnx::ModelProto copy = model;
  if (copy.ir_version() > kCheckerNewestIrVersion) copy.set_ir_version(kCheckerNewestIrVersion);
  add_missing_shapes(copy.mutable_graph());
  try {
    onnx::checker::check_model(copy);
  } catch (const std::exception& error) {
    return invalid_model(what, ": the ONNX checker refuses the model: ", error.what());
  }
  return ok_status();
}

// Checks the checker does not make, or that models of newer opsets need without it.
Status check_structure(const onnx::ModelProto& model, const std::string& what) {
  if (!model.has_graph()) return invalid_model(what, ": the model has no graph");
  const onnx::GraphProto& graph = model.graph();
  if (graph.output_size() == 0) return invalid_model(what, ": the graph has no outputs");
  std::set<std::string> defined;
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.name().empty()) return invalid_model(what, ": an initializer has no name");
    if (!defined.insert(tensor.name()).second) {
      return invalid_model(what, ": initializer '", tensor.name(), "' is defined twice");
    }
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (input.name().empty()) return invalid_model(what, ": a graph input has no name");
    defined.insert(input.name());
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const std::string node_name =
        node.op_type() +
        (node.name().empty() ? " (node " + std::to_string(i) + ")" : " '" + node.name() + "'");
    if (node.op_type().empty()) {
      return invalid_model(what, ": node ", i, " ('", node.name(), "') has no op_type");
    }
    for (const std::string& output : node.output()) {
      if (output.empty()) continue;
      if (!defined.insert(output).second) {
        return invalid_model(what, ": ", node_name, ": output '", output,
                             "' is already defined by an initializer, a graph input or another "
                             "node");
      }
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (!defined.count(output.name())) {
      return invalid_model(what, ": graph output '", output.name(),
                           "' is not produced by any node, input or initializer");
    }
  }
  return ok_status();
}

}  // namespace

int default_domain_opset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      return static_cast<int>(opset.version());
    }
  }
  return 0;
}

Status prepare_onnx_model(onnx::ModelProto* model, const std::string& directory,
                          const std::string& what) {
  ORKNN_RETURN_IF_ERROR(check_structure(*model, what));
  const int opset = default_domain_opset(*model);
  if (opset == 0) {
    return invalid_model(what, ": the model imports no ai.onnx opset (opset_import is empty)");
  }
  if (opset < kOldestOpset || opset > kNewestOpset) {
    return invalid_model(what, ": ai.onnx opset ", opset,
                         " is not supported (supported: ", kOldestOpset, " to ", kNewestOpset,
                         "); convert the model with onnx.version_converter first");
  }
  ORKNN_RETURN_IF_ERROR(for_each_tensor(
      model->mutable_graph(), [&](onnx::TensorProto* tensor, const std::string& tensor_what) {
        if (tensor->data_location() != onnx::TensorProto::EXTERNAL) return ok_status();
        return load_external_data(tensor, directory, what + ": " + tensor_what);
      }));
  return run_onnx_checker(*model, what);
}

Result<onnx::ModelProto> load_onnx_model(const std::string& path) {
  const std::string what = "model '" + path + "'";
  ORKNN_ASSIGN_OR_RETURN(std::vector<char> bytes, read_whole_file(path, what));
  if (bytes.empty()) return invalid_model(what, ": the file is empty");
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return invalid_model(what, ": not a valid ONNX file (", bytes.size(),
                         " bytes that do not parse as an ONNX ModelProto: truncated, corrupted, "
                         "or not ONNX)");
  }
  if (!model.has_graph() && model.opset_import_size() == 0) {
    return invalid_model(what,
                         ": not an ONNX model (no graph and no opset_import; truncated, "
                         "corrupted, or not ONNX)");
  }
  const std::string directory = fs::path(path).parent_path().string();
  ORKNN_RETURN_IF_ERROR(prepare_onnx_model(&model, directory, what));
  return model;
}

}  // namespace orknn::convert
