#include "model/model_builder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "model/container_format.h"
#include "model/container_writer.h"
#include "model/graph_verifier.h"
#include "model/model_file.h"
#include "model/proto_data_type.h"
#include "model/protobuf_log_silencer.h"

namespace orknn::model {
namespace {

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

void fill_quantization(const Quantization& quantization, proto::Quantization* out) {
  out->mutable_scale()->Add(quantization.scales.begin(), quantization.scales.end());
  out->mutable_zero_point()->Add(quantization.zero_points.begin(), quantization.zero_points.end());
  out->set_axis(quantization.axis);
}

proto::Tensor* append_tensor(proto::Model* graph, std::string name, DataType type,
                             const std::vector<int64_t>& shape, const Quantization& quantization) {
  proto::Tensor* tensor = graph->add_tensors();
  tensor->set_name(std::move(name));
  tensor->set_data_type(data_type_to_proto(type));
  tensor->mutable_shape()->Add(shape.begin(), shape.end());
  fill_quantization(quantization, tensor->mutable_quantization());
  return tensor;
}

Status write_all(int descriptor, const std::vector<uint8_t>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t count = ::write(descriptor, bytes.data() + done, bytes.size() - done);
    if (count < 0) {
      if (errno == EINTR) continue;
      return internal_failure("cannot write \"", path, "\": ", errno_text(errno));
    }
    done += static_cast<size_t>(count);
  }
  return ok_status();
}

}  // namespace

proto::Attribute Attr::i(std::string name, int64_t value) {
  proto::Attribute attribute;
  attribute.set_name(std::move(name));
  attribute.set_int_value(value);
  return attribute;
}

proto::Attribute Attr::f(std::string name, float value) {
  proto::Attribute attribute;
  attribute.set_name(std::move(name));
  attribute.set_float_value(value);
  return attribute;
}

proto::Attribute Attr::s(std::string name, std::string value) {
  proto::Attribute attribute;
  attribute.set_name(std::move(name));
  attribute.set_string_value(std::move(value));
  return attribute;
}

proto::Attribute Attr::ints(std::string name, std::vector<int64_t> values) {
  proto::Attribute attribute;
  attribute.set_name(std::move(name));
  attribute.mutable_ints()->mutable_values()->Add(values.begin(), values.end());
  return attribute;
}

proto::Attribute Attr::floats(std::string name, std::vector<float> values) {
  proto::Attribute attribute;
  attribute.set_name(std::move(name));
  attribute.mutable_floats()->mutable_values()->Add(values.begin(), values.end());
  return attribute;
}

int ModelBuilder::add_tensor(std::string name, DataType type, std::vector<int64_t> shape,
                             Quantization quantization) {
  append_tensor(&graph_, std::move(name), type, shape, quantization);
  return graph_.tensors_size() - 1;
}

int ModelBuilder::add_constant(std::string name, DataType type, std::vector<int64_t> shape,
                               const void* data, size_t bytes, Quantization quantization) {
  const int index = graph_.tensors_size();
  // A shape the verifier will refuse anyway has no meaningful size to compare with.
  const std::optional<uint64_t> elements = checked_element_count(shape.data(), shape.size());
  if (first_error_.ok() && elements && *elements * element_size(type) != bytes) {
    first_error_ =
        invalid_argument("constant ", index, " \"", name, "\": ", bytes, " bytes given, shape ",
                         format_shape(shape.data(), shape.size()), " ", data_type_name(type),
                         " needs ", *elements * element_size(type));
  }
  if (first_error_.ok() && data == nullptr && bytes != 0) {
    first_error_ = invalid_argument("constant ", index, " \"", name, "\": data is null");
  }
  proto::Tensor* tensor = append_tensor(&graph_, std::move(name), type, shape, quantization);
  tensor->set_is_constant(true);
  if (data == nullptr || bytes == 0) return index;
  weights_.resize(align_up(weights_.size(), kWeightsAlignment), 0);
  tensor->set_data_offset(weights_.size());
  tensor->set_data_size(bytes);
  const auto* source = static_cast<const uint8_t*>(data);
  weights_.insert(weights_.end(), source, source + bytes);
  return index;
}

int ModelBuilder::add_constant_f32(std::string name, std::vector<int64_t> shape,
                                   const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) store_u32_le(&bytes[i * 4], float_bits(values[i]));
  return add_constant(std::move(name), DataType::kFloat32, std::move(shape), bytes.data(),
                      bytes.size());
}

int ModelBuilder::add_constant_i64(std::string name, std::vector<int64_t> shape,
                                   const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  for (size_t i = 0; i < values.size(); ++i) {
    store_u64_le(&bytes[i * 8], static_cast<uint64_t>(values[i]));
  }
  return add_constant(std::move(name), DataType::kInt64, std::move(shape), bytes.data(),
                      bytes.size());
}

int ModelBuilder::add_node(std::string op_type, std::vector<int> inputs, std::vector<int> outputs,
                           std::vector<proto::Attribute> attributes, std::string name) {
  proto::Node* node = graph_.add_nodes();
  node->set_op_type(std::move(op_type));
  node->set_name(std::move(name));
  node->mutable_inputs()->Add(inputs.begin(), inputs.end());
  node->mutable_outputs()->Add(outputs.begin(), outputs.end());
  for (proto::Attribute& attribute : attributes) *node->add_attributes() = std::move(attribute);
  return graph_.nodes_size() - 1;
}

void ModelBuilder::add_input(int tensor, InputOptions options) {
  proto::InputInfo* input = graph_.add_inputs();
  input->set_tensor(tensor);
  input->mutable_mean()->Add(options.mean.begin(), options.mean.end());
  input->mutable_std()->Add(options.std.begin(), options.std.end());
  input->set_nhwc_layout(options.nhwc_layout);
  input->set_reverse_channels(options.reverse_channels);
}

void ModelBuilder::add_output(int tensor) {
  graph_.add_outputs(tensor);
}

void ModelBuilder::set_producer(std::string name, std::string version) {
  graph_.set_producer_name(std::move(name));
  graph_.set_producer_version(std::move(version));
}

void ModelBuilder::set_target_platform(std::string platform) {
  graph_.set_target_platform(std::move(platform));
}

void ModelBuilder::set_custom_string(std::string text) {
  graph_.set_custom_string(std::move(text));
}

void ModelBuilder::set_source_framework(std::string framework) {
  graph_.set_source_framework(std::move(framework));
}

void ModelBuilder::add_dynamic_shape_set(const std::vector<std::vector<int64_t>>& shapes) {
  proto::ShapeSet* set = graph_.add_dynamic_shapes();
  for (const std::vector<int64_t>& dims : shapes) {
    set->add_shapes()->mutable_dims()->Add(dims.begin(), dims.end());
  }
}

Result<std::vector<uint8_t>> ModelBuilder::serialize() const {
  if (!first_error_.ok()) return first_error_;
  std::string graph_bytes;
  bool serialized = false;
  {
    const ProtobufLogSilencer silence;  // a non-UTF-8 string is reported by verify_model below
    serialized = graph_.SerializeToString(&graph_bytes);
  }
  if (!serialized) return invalid_model("the graph cannot be serialized (larger than 2 GiB?)");
  std::vector<SectionPayload> sections;
  sections.push_back({static_cast<uint32_t>(SectionKind::kGraph), kSectionFlagRequired,
                      reinterpret_cast<const uint8_t*>(graph_bytes.data()), graph_bytes.size()});
  if (!weights_.empty()) {  // a model without constant data has no WEIGHTS section
    sections.push_back({static_cast<uint32_t>(SectionKind::kWeights), kSectionFlagRequired,
                        weights_.data(), weights_.size(), kWeightsAlignment});
  }
  std::vector<uint8_t> file = assemble_container(sections);
  ORKNN_RETURN_IF_ERROR(verify_model(file.data(), file.size()));
  return file;
}

Status ModelBuilder::write_file(const std::string& path) const {
  ORKNN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, serialize());
  const std::string temporary = str_cat(path, ".tmp.", ::getpid());
  const int descriptor = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (descriptor < 0) {
    return internal_failure("cannot create \"", temporary, "\": ", errno_text(errno));
  }
  Status status = write_all(descriptor, bytes, temporary);
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (status.ok() && ::fsync(descriptor) != 0) {
    status = internal_failure("cannot flush \"", temporary, "\": ", errno_text(errno));
  }
  if (::close(descriptor) != 0 && status.ok()) {
    status = internal_failure("cannot close \"", temporary, "\": ", errno_text(errno));
  }
  if (status.ok() && ::rename(temporary.c_str(), path.c_str()) != 0) {
    status = internal_failure("cannot rename \"", temporary, "\" to \"", path,
                              "\": ", errno_text(errno));
  }
  if (!status.ok()) ::unlink(temporary.c_str());
  return status;
}

}  // namespace orknn::model
