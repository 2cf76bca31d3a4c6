#include "model/model_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/logging.h"
#include "model/container_format.h"
#include "model/container_reader.h"
#include "model/graph_verifier.h"
#include "model/printable_text.h"
#include "model/protobuf_log_silencer.h"

namespace orknn::model {
namespace {

// Container checks, protobuf decoding and graph checks: everything both parse() and
// verify_model() must agree on.
Status parse_and_verify(const uint8_t* data, size_t size, proto::Model* out_graph,
                        ContainerLayout* out_layout) {
  ORKNN_ASSIGN_OR_RETURN(*out_layout, read_container(data, size));
  // protobuf takes the size as an int and refuses messages of 2 GiB and more.
  if (out_layout->graph_size > static_cast<uint64_t>(INT_MAX)) {
    return invalid_model("GRAPH section size ", out_layout->graph_size,
                         " exceeds the protobuf limit ", INT_MAX);
  }
  bool parsed = false;
  {
    const ProtobufLogSilencer silence;
    parsed = out_graph->ParseFromArray(data + out_layout->graph_offset,
                                       static_cast<int>(out_layout->graph_size));
  }
  if (!parsed) {
    return invalid_model("GRAPH section (", out_layout->graph_size,
                         " bytes) is not a valid orknn.model.proto.Model message (malformed "
                         "protobuf, or a string field that is not UTF-8)");
  }
  return verify_graph(*out_graph, out_layout->weights_size);
}

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int descriptor) : descriptor_(descriptor) {}
  ~FileDescriptor() {
    if (descriptor_ >= 0) ::close(descriptor_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return descriptor_; }

 private:
  int descriptor_;
};

}  // namespace

void ModelFile::AlignedFree::operator()(uint8_t* pointer) const {
  ::operator delete (pointer, std::align_val_t{kWeightsAlignment});
}

Result<std::shared_ptr<const ModelFile>> ModelFile::parse(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  const uint8_t* data = owned->data();
  const size_t size = owned->size();
  return parse_in_place(data, size, std::move(owned));
}

Result<std::shared_ptr<const ModelFile>> ModelFile::parse_in_place(
    const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  std::shared_ptr<ModelFile> model(new ModelFile());
  ContainerLayout layout;
  ORKNN_RETURN_IF_ERROR(parse_and_verify(data, size, &model->graph_, &layout));
  model->format_version_ = layout.format_version;
  model->weights_size_ = static_cast<size_t>(layout.weights_size);
  if (layout.weights_size > 0) {
    const uint8_t* in_file = data + layout.weights_offset;
    if (reinterpret_cast<uintptr_t>(in_file) % kWeightsAlignment == 0) {
      model->file_owner_ = std::move(owner);
      model->weights_ = in_file;
    } else {
      // The offset in the file is aligned but the caller's buffer is not (malloc aligns to 16).
      // Copy the weights once and let the rest of the file go: the graph is already decoded.
      model->aligned_weights_.reset(static_cast<uint8_t*>(::operator new (
          model->weights_size_, std::align_val_t{kWeightsAlignment}, std::nothrow)));
      if (model->aligned_weights_ == nullptr) {
        return make_error(StatusCode::kOutOfMemory, "cannot allocate ", model->weights_size_,
                          " bytes for the aligned copy of the model weights");
      }
      std::memcpy(model->aligned_weights_.get(), in_file, model->weights_size_);
      model->weights_ = model->aligned_weights_.get();
    }
  }
  const proto::Model& graph = model->graph_;
  // producer_version is only ever logged (docs/model-format.md, compatibility policy).
  std::string producer = graph.producer_name().empty() ? std::string("an unnamed producer")
                                                       : printable_text(graph.producer_name());
  if (!graph.producer_version().empty()) producer += " " + printable_text(graph.producer_version());
  const std::string platform = graph.target_platform().empty()
                                   ? std::string("any")
                                   : printable_text(graph.target_platform());
  log_info("model: format_version ", layout.format_version, ", produced by ", producer,
           ", target platform ", platform, ", ", graph.tensors_size(), " tensors, ",
           graph.nodes_size(), " nodes, ", model->weights_size_, " bytes of weights");
  return std::shared_ptr<const ModelFile>(std::move(model));
}

const uint8_t* ModelFile::constant_data(int tensor_index) const {
  if (constant_size(tensor_index) == 0) return nullptr;
  return weights_ + graph_.tensors(tensor_index).data_offset();
}

size_t ModelFile::constant_size(int tensor_index) const {
  if (tensor_index < 0 || tensor_index >= graph_.tensors_size()) return 0;
  const proto::Tensor& tensor = graph_.tensors(tensor_index);
  return tensor.is_constant() ? static_cast<size_t>(tensor.data_size()) : 0;
}

Status verify_model(const uint8_t* data, size_t size) {
  proto::Model graph;
  ContainerLayout layout;
  return parse_and_verify(data, size, &graph, &layout);
}

Result<std::vector<uint8_t>> read_model_file(const std::string& path, uint64_t offset,
                                             uint64_t size) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) {
    return invalid_argument("cannot open model file \"", path, "\": ", errno_text(errno));
  }
  struct stat info;
  if (::fstat(file.get(), &info) != 0) {
    return internal_failure("cannot stat model file \"", path, "\": ", errno_text(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return invalid_argument("model file \"", path, "\" is not a regular file");
  }
  const uint64_t file_size = static_cast<uint64_t>(info.st_size);
  if (offset > file_size) {
    return invalid_argument("model file \"", path, "\": offset ", offset,
                            " is beyond the file size ", file_size);
  }
  if (size == 0) {
    size = file_size - offset;
  } else if (size > file_size - offset) {
    return invalid_argument("model file \"", path, "\": offset ", offset, " + size ", size,
                            " exceeds the file size ", file_size);
  }
  std::vector<uint8_t> bytes;
  if (size > std::numeric_limits<size_t>::max() || size > bytes.max_size()) {
    return make_error(StatusCode::kOutOfMemory, "model file \"", path, "\": ", size,
                      " bytes do not fit in this process's address space");
  }
  try {
    bytes.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kOutOfMemory, "model file \"", path, "\": cannot allocate ", size,
                      " bytes");
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t count = ::pread(file.get(), bytes.data() + done, bytes.size() - done,
                                  static_cast<off_t>(offset + done));
    if (count < 0) {
      if (errno == EINTR) continue;
      return internal_failure("cannot read model file \"", path, "\": ", errno_text(errno));
    }
    if (count == 0) {
      return internal_failure("model file \"", path, "\" ended after ", done, " of ", size,
                              " bytes (was it changed while being read?)");
    }
    done += static_cast<size_t>(count);
  }
  return bytes;
}

}  // namespace orknn::model
