#include "converter_test_util.h"

#include <stb/stb_image_write.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "dataset/npy_file.h"
#include "model/model_builder.h"
#include "model/model_file.h"

namespace orknn::convert::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "rknn_convert_test_XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const char* made = mkdtemp(buffer.data());
  path_ = made ? made : "/tmp";
}

TempDir::~TempDir() {
  std::error_code error;
  if (path_ != "/tmp") fs::remove_all(path_, error);
}

std::vector<std::string> TempDir::files() const {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(path_))
    names.push_back(entry.path().filename().string());
  return names;
}

OnnxModel::OnnxModel(int opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("converter-test");
  onnx::OperatorSetIdProto* set = model_.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

OnnxModel& OnnxModel::input(const std::string& name, std::vector<int64_t> dims, int type) {
  onnx::ValueInfoProto* value = model_.mutable_graph()->add_input();
  value->set_name(name);
  onnx::TypeProto::Tensor* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) {
      shape->add_dim()->set_dim_value(dims[i]);
    } else {
      shape->add_dim()->set_dim_param(name + "_d" + std::to_string(i));
    }
  }
  return *this;
}

OnnxModel& OnnxModel::output(const std::string& name, int type) {
  onnx::ValueInfoProto* value = model_.mutable_graph()->add_output();
  value->set_name(name);
  value->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  return *this;
}

OnnxModel& OnnxModel::initializer(const std::string& name, std::vector<int64_t> dims,
                                  const std::vector<float>& values) {
  onnx::TensorProto* tensor = model_.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  return *this;
}

OnnxModel& OnnxModel::initializer_i64(const std::string& name, std::vector<int64_t> dims,
                                      const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = model_.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) tensor->add_dims(d);
  for (int64_t v : values) tensor->add_int64_data(v);
  return *this;
}

OnnxModel& OnnxModel::initializer_typed(const std::string& name, std::vector<int64_t> dims,
                                        int type, const std::string& raw_bytes) {
  onnx::TensorProto* tensor = model_.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_raw_data(raw_bytes);
  return *this;
}

onnx::NodeProto& OnnxModel::node(const std::string& op, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, const std::string& name) {
  onnx::NodeProto* node = model_.mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(name.empty() ? op + "_" + std::to_string(model_.graph().node_size()) : name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return *node;
}

Status OnnxModel::save(const std::string& path) const {
  std::ofstream file(path, std::ios::binary);
  if (!model_.SerializeToOstream(&file)) return internal_failure("cannot write ", path);
  return ok_status();
}

void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void set_float(onnx::NodeProto* node, const std::string& name, float value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(value);
}

void set_ints(onnx::NodeProto* node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void set_floats(onnx::NodeProto* node, const std::string& name, std::vector<float> values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) attribute->add_floats(v);
}

void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

std::vector<float> random_values(size_t count, uint32_t seed, float scale) {
  std::vector<float> values(count);
  uint32_t state = seed * 2654435761u + 1;
  for (float& value : values) {
    state = state * 1664525u + 1013904223u;
    value = (static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  return values;
}

ConvertOptions float32_options(const std::string& model, const std::string& output) {
  ConvertOptions options;
  options.model_path = model;
  options.output_path = output;
  options.do_quantization = false;
  options.float_dtype = FloatType::kFloat32;
  options.quiet = true;
  return options;
}

Result<std::unique_ptr<RuntimeModel>> load_model_file(const std::string& path) {
  ORKNN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, model::read_model_file(path));
  return RuntimeModel::load_bytes(std::move(bytes));
}

Result<model::proto::Model> read_model_graph(const std::string& path) {
  ORKNN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, model::read_model_file(path));
  ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<const model::ModelFile> file,
                         model::ModelFile::parse(std::move(bytes)));
  return file->graph();
}

std::string op_sequence(const model::proto::Model& graph) {
  std::string text;
  for (const model::proto::Node& node : graph.nodes())
    text += (text.empty() ? "" : ",") + node.op_type();
  return text;
}

const model::proto::Attribute* find_attribute(const model::proto::Model& graph,
                                              const std::string& op_type, const std::string& name) {
  for (const model::proto::Node& node : graph.nodes()) {
    if (node.op_type() != op_type) continue;
    for (const model::proto::Attribute& attribute : node.attributes()) {
      if (attribute.name() == name) return &attribute;
    }
    return nullptr;
  }
  return nullptr;
}

const model::proto::Tensor* find_tensor(const model::proto::Model& graph, const std::string& name) {
  for (const model::proto::Tensor& tensor : graph.tensors()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

std::vector<float> convert_and_run(const ConvertOptions& options,
                                   const std::vector<std::vector<float>>& inputs,
                                   size_t output_index) {
  const Status status = convert_model(options, nullptr);
  if (!status.ok()) {
    std::fprintf(stderr, "conversion failed: %s\n", status.message().c_str());
    std::abort();
  }
  Result<std::unique_ptr<RuntimeModel>> model = load_model_file(options.output_path);
  if (!model.ok()) {
    std::fprintf(stderr, "loading failed: %s\n", model.status().message().c_str());
    std::abort();
  }
  Result<std::vector<float>> values = run_float(model.value().get(), inputs, output_index);
  if (!values.ok()) {
    std::fprintf(stderr, "running failed: %s\n", values.status().message().c_str());
    std::abort();
  }
  return values.value();
}

Result<std::vector<float>> run_float(RuntimeModel* model,
                                     const std::vector<std::vector<float>>& inputs,
                                     size_t output_index) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    exec::UserTensorFormat format;
    format.type = DataType::kFloat32;
    format.layout = exec::Layout::kNCHW;
    ORKNN_RETURN_IF_ERROR(model->set_input(i, inputs[i].data(), inputs[i].size() * 4, format));
  }
  ORKNN_RETURN_IF_ERROR(model->run());
  std::vector<float> values;
  ORKNN_RETURN_IF_ERROR(model->output_floats(output_index, &values));
  return values;
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

double max_abs(const std::vector<float>& values) {
  double worst = 0;
  for (float v : values) worst = std::max(worst, std::fabs(static_cast<double>(v)));
  return worst;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return na == 0 || nb == 0 ? (na == nb ? 1.0 : 0.0) : dot / std::sqrt(na * nb);
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape,
               const std::vector<float>& values) {
  Status status = write_npy_float32(path, shape, values.data());
  if (!status.ok()) std::fprintf(stderr, "%s\n", status.message().c_str());
}

void write_image(const std::string& path, int width, int height, int channels, uint32_t seed) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * channels);
  uint32_t state = seed * 747796405u + 1;
  for (unsigned char& pixel : pixels) {
    state = state * 1664525u + 1013904223u;
    pixel = static_cast<unsigned char>(state >> 24);
  }
  if (path.size() > 4 && path.substr(path.size() - 4) == ".png") {
    stbi_write_png(path.c_str(), width, height, channels, pixels.data(), width * channels);
  } else {
    stbi_write_jpg(path.c_str(), width, height, channels, pixels.data(), 95);
  }
}

bool file_exists(const std::string& path) {
  std::error_code error;
  return fs::exists(path, error);
}

int run_tool(const std::string& arguments, std::string* out_output) {
  const std::string command = std::string(RKNN_CONVERT_PATH) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  std::string output;
  char buffer[4096];
  size_t count;
  while ((count = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, count);
  const int status = pclose(pipe);
  if (out_output) *out_output = output;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ir::Graph one_convolution_graph(int64_t size, int64_t stride) {
  const int64_t output_size = (size + 2 - 3) / stride + 1;
  ir::Graph graph;
  ir::Tensor& input = graph.tensor_or_new("x");
  input.shape = {1, 2, size, size};
  input.shape_known = true;
  ir::Tensor& output = graph.tensor_or_new("y");
  output.shape = {1, 3, output_size, output_size};
  output.shape_known = true;
  const std::string weights = graph.add_constant_f32("w", {3, 2, 3, 3}, random_values(54, 5, 0.3f));
  graph.inputs = {"x"};
  graph.outputs = {"y"};
  ir::Node node;
  node.op_type = "Conv";
  node.inputs = {"x", weights};
  node.outputs = {"y"};
  node.attributes["pads"] = ir::make_ints_attribute({1, 1, 1, 1});
  node.attributes["strides"] = ir::make_ints_attribute({stride, stride});
  graph.nodes.push_back(node);
  return graph;
}

}  // namespace orknn::convert::test
