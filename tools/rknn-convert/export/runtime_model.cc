#include "export/runtime_model.h"

#include "graph/graph_from_model.h"
#include "model/model_file.h"

namespace orknn::convert {

Result<std::unique_ptr<RuntimeModel>> RuntimeModel::load(const model::ModelBuilder& builder) {
  ORKNN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, builder.serialize());
  return load_bytes(std::move(bytes));
}

Result<std::unique_ptr<RuntimeModel>> RuntimeModel::load_bytes(std::vector<uint8_t> bytes) {
  ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<const model::ModelFile> file,
                         model::ModelFile::parse(std::move(bytes)));
  ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<const graph::Graph> graph,
                         graph::graph_from_model(std::move(file)));
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<exec::Session> session,
                         exec::Session::create(std::move(graph), exec::SessionOptions{}));
  return std::unique_ptr<RuntimeModel>(new RuntimeModel(std::move(session)));
}

Result<std::unique_ptr<RuntimeModel>> RuntimeModel::duplicate() const {
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<exec::Session> session, session_->duplicate());
  return std::unique_ptr<RuntimeModel>(new RuntimeModel(std::move(session)));
}

Status RuntimeModel::set_input(size_t index, const void* data, uint64_t bytes,
                               const exec::UserTensorFormat& format) {
  return session_->set_input(index, data, bytes, format);
}

Status RuntimeModel::run() {
  return session_->run();
}

Status RuntimeModel::output_floats(size_t index, std::vector<float>* out_values) {
  const uint64_t bytes = session_->output_size(index, true);
  out_values->resize(bytes / sizeof(float));
  return session_->get_output(index, true, out_values->data(), bytes);
}

}  // namespace orknn::convert
