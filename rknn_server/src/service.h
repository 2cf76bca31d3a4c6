// The RknnServer gRPC service: request checks, session and context lookup, then the runtime.
// Unary calls are synchronous handlers; OpenSession is a callback (reactor) stream so that an
// open session costs no thread while it waits.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "openrknn/server/v1/rknn_server.grpc.pb.h"
#include "server_config.h"
#include "session_registry.h"

namespace orknn::server {

namespace v1 = openrknn::server::v1;

class RknnService final
    : public v1::RknnServer::WithCallbackMethod_OpenSession<v1::RknnServer::Service> {
 public:
  explicit RknnService(const ServerConfig& config);
  ~RknnService() override;

  SessionRegistry& registry() { return registry_; }

  grpc::Status GetDeviceInfo(grpc::ServerContext* context, const v1::GetDeviceInfoRequest* request,
                             v1::DeviceInfo* response) override;
  grpc::Status GetSdkVersion(grpc::ServerContext* context, const v1::GetSdkVersionRequest* request,
                             v1::SdkVersion* response) override;
  grpc::ServerWriteReactor<v1::SessionEvent>* OpenSession(
      grpc::CallbackServerContext* context, const v1::OpenSessionRequest* request) override;
  grpc::Status CloseSession(grpc::ServerContext* context, const v1::CloseSessionRequest* request,
                            v1::CloseSessionResponse* response) override;
  grpc::Status UploadModel(grpc::ServerContext* context,
                           grpc::ServerReader<v1::UploadModelChunk>* reader,
                           v1::UploadModelResponse* response) override;
  grpc::Status ReleaseModel(grpc::ServerContext* context, const v1::ReleaseModelRequest* request,
                            v1::ReleaseModelResponse* response) override;
  grpc::Status InitContext(grpc::ServerContext* context, const v1::InitContextRequest* request,
                           v1::InitContextResponse* response) override;
  grpc::Status QueryAttributes(grpc::ServerContext* context,
                               const v1::QueryAttributesRequest* request,
                               v1::QueryAttributesResponse* response) override;
  grpc::Status Run(grpc::ServerContext* context, const v1::RunRequest* request,
                   v1::RunResponse* response) override;
  grpc::Status EvalPerf(grpc::ServerContext* context, const v1::EvalPerfRequest* request,
                        v1::EvalPerfResponse* response) override;
  grpc::Status EvalMemory(grpc::ServerContext* context, const v1::EvalMemoryRequest* request,
                          v1::EvalMemoryResponse* response) override;
  grpc::Status ReleaseContext(grpc::ServerContext* context,
                              const v1::ReleaseContextRequest* request,
                              v1::ReleaseContextResponse* response) override;

 private:
  // Token, protocol version and cancellation checks common to every call.
  grpc::Status admit(const grpc::ServerContextBase& context, int protocol_version) const;
  grpc::Status find_context(uint64_t session_id, uint64_t context_id,
                            std::shared_ptr<RuntimeContext>* out,
                            std::shared_ptr<const UploadedModel>* out_model = nullptr);

  const ServerConfig config_;
  SessionRegistry registry_;
  std::mutex frequency_mutex_;  // one fix_freq EvalPerf at a time owns the governors
};

}  // namespace orknn::server
