// A model the converter built, loaded and prepared by the runtime exactly as an application's
// rknn_init would (serialize, verify, graph_from_model, exec::Session), for the converter's own
// inference: calibration, accuracy analysis, and the final check that the written model loads.
// Because it is the runtime's Session, calibration gets whatever optimized kernels and devices
// the runtime gains, with no change here.
#pragma once

#include <memory>
#include <vector>

#include "exec/session.h"
#include "model/model_builder.h"

namespace orknn::convert {

class RuntimeModel {
 public:
  static Result<std::unique_ptr<RuntimeModel>> load(const model::ModelBuilder& builder);
  // A model file's bytes (as read from disk).
  static Result<std::unique_ptr<RuntimeModel>> load_bytes(std::vector<uint8_t> bytes);

  // A second instance sharing the weights, for another thread (Sessions are single-threaded).
  Result<std::unique_ptr<RuntimeModel>> duplicate() const;

  size_t input_count() const { return session_->input_count(); }
  size_t output_count() const { return session_->output_count(); }
  const graph::Graph& graph() const { return session_->graph(); }

  // `format` says what the caller's buffer holds; the Session applies the model's mean/std,
  // layout and quantization as it does for applications.
  Status set_input(size_t index, const void* data, uint64_t bytes,
                   const exec::UserTensorFormat& format);
  Status run();
  // Output `index` as float32 (dequantized), in the model's layout (NCHW).
  Status output_floats(size_t index, std::vector<float>* out_values);

 private:
  explicit RuntimeModel(std::unique_ptr<exec::Session> session) : session_(std::move(session)) {}
  std::unique_ptr<exec::Session> session_;
};

}  // namespace orknn::convert
