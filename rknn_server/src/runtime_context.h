// One rknn_context of a session, used only through the public C API. Calls on one context are
// serialised here (the runtime serialises them too; the lock also keeps a run's inputs_set,
// run and outputs_get together). Destroying the object destroys the context.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "openrknn/server/v1/rknn_server.pb.h"
#include "rknn_api.h"

namespace orknn::server {

namespace v1 = openrknn::server::v1;

// Maps a C API return code to a gRPC status whose message names the call and the code.
grpc::Status status_from_rknn(int code, const std::string& call);

class RuntimeContext {
 public:
  // rknn_init over `model` (copied by the runtime) with `flags`, then rknn_set_core_mask when
  // core_mask is not 0 (auto), then the attribute queries.
  static grpc::Status create(const std::vector<uint8_t>& model, uint32_t flags, uint32_t core_mask,
                             std::unique_ptr<RuntimeContext>* out);
  ~RuntimeContext();
  RuntimeContext(const RuntimeContext&) = delete;
  RuntimeContext& operator=(const RuntimeContext&) = delete;

  uint32_t input_count() const { return static_cast<uint32_t>(inputs_.size()); }
  uint32_t output_count() const { return static_cast<uint32_t>(outputs_.size()); }
  uint32_t flags() const { return flags_; }

  void describe(v1::QueryAttributesResponse* out) const;

  // inputs_set + run + outputs_get. `cancelled` is polled between the steps.
  grpc::Status run(const google::protobuf::RepeatedPtrField<v1::Tensor>& inputs, bool want_float,
                   v1::RunResponse* out);
  // Sets inputs (zeros where `inputs` is empty), then runs `loops` times, stopping early with
  // CANCELLED when `should_stop` says so; per-run times from RKNN_QUERY_PERF_RUN.
  grpc::Status time_runs(const google::protobuf::RepeatedPtrField<v1::Tensor>& inputs,
                         uint32_t loops, const std::function<bool()>& should_stop,
                         std::vector<int64_t>* run_times_us, std::string* perf_detail);
  grpc::Status memory(rknn_mem_size* out);
  grpc::Status sdk_version(rknn_sdk_version* out);

 private:
  RuntimeContext() = default;
  grpc::Status set_inputs(const google::protobuf::RepeatedPtrField<v1::Tensor>& inputs);

  std::mutex mutex_;
  rknn_context context_ = 0;
  uint32_t flags_ = 0;
  std::vector<rknn_tensor_attr> inputs_, outputs_, native_inputs_, native_outputs_;
  std::string custom_string_;
};

}  // namespace orknn::server
