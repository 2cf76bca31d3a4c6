// A verified model in the open container format, and reading model files from disk.
//
// Ownership and threading: a ModelFile is immutable once parse() returns it, so any number of
// threads may read it at once; contexts share it through the shared_ptr. Pointers it returns live
// as long as the ModelFile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/orknn_model.pb.h"
#include "model/proto_data_type.h"  // users of graph() need the data type mapping

namespace orknn::model {

class ModelFile {
 public:
  // Verifies every byte of `bytes` (container and graph, docs/model-format.md) and takes
  // ownership of them. Errors are kInvalidModel; vendor RKNN files are refused with a message
  // naming their version and target platform.
  static Result<std::shared_ptr<const ModelFile>> parse(std::vector<uint8_t> bytes);
  // The same checks on bytes the caller keeps alive through `owner` (RKNN_FLAG_MODEL_BUFFER_
  // ZERO_COPY): the weights are used where they are when 64-byte aligned, never copied.
  static Result<std::shared_ptr<const ModelFile>> parse_in_place(const uint8_t* data, size_t size,
                                                                 std::shared_ptr<const void> owner);

  const proto::Model& graph() const { return graph_; }
  // The WEIGHTS section, aligned to kWeightsAlignment (64) in memory; null when it is empty.
  const uint8_t* weights() const { return weights_; }
  size_t weights_size() const { return weights_size_; }
  uint32_t format_version() const { return format_version_; }

  // The data of constant tensor `tensor_index`, inside weights() and aligned to 64 bytes. Null
  // when the index is out of range, the tensor is not a constant, or it has no bytes.
  const uint8_t* constant_data(int tensor_index) const;
  // Its size in bytes; 0 in the same cases.
  size_t constant_size(int tensor_index) const;

  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

 private:
  ModelFile() = default;

  struct AlignedFree {
    void operator()(uint8_t* pointer) const;
  };

  proto::Model graph_;
  // Keeps the file's bytes alive while weights_ points into them.
  std::shared_ptr<const void> file_owner_;
  // A copy of the weights, made only when the file's buffer put them off the 64-byte boundary.
  std::unique_ptr<uint8_t[], AlignedFree> aligned_weights_;
  const uint8_t* weights_ = nullptr;
  size_t weights_size_ = 0;
  uint32_t format_version_ = 0;
};

// Runs exactly the checks of ModelFile::parse on bytes it does not own (the builder uses it to
// make sure it never writes a file the reader would refuse).
Status verify_model(const uint8_t* data, size_t size);

// Reads `size` bytes at `offset` of the file at `path`; `size` 0 means up to the end of the file.
// The range is checked against the file's size before anything is allocated. Errors name the
// path: kInvalidArgument for a missing file or a bad range, kOutOfMemory, kFailed for I/O errors.
Result<std::vector<uint8_t>> read_model_file(const std::string& path, uint64_t offset = 0,
                                             uint64_t size = 0);

}  // namespace orknn::model
