#include "service.h"

#include <atomic>

#include "auth.h"
#include "crc32.h"
#include "device_info.h"
#include "frequency_pin.h"
#include "logging.h"
#include "memory_report.h"
#include "perf_table.h"
#include "version.h"

namespace orknn::server {
namespace {

grpc::Status invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// The server side of an OpenSession stream: sends the session id, then waits. The stream ends
// when the session is closed (any reason); a client cancel or disconnect closes the session.
class SessionStream final : public grpc::ServerWriteReactor<v1::SessionEvent> {
 public:
  SessionStream(SessionRegistry* registry, const std::string& client_name) : registry_(registry) {
    const grpc::Status status = registry_->open(
        client_name, [this](const grpc::Status& reason) { finish_once(reason); }, &session_id_);
    if (!status.ok()) {
      finish_once(status);
      return;
    }
    event_.set_session_id(session_id_);
    event_.set_idle_timeout_seconds(registry_->config().idle_timeout_seconds);
    StartWrite(&event_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok)
      registry_->close(session_id_, grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
  }
  void OnCancel() override {
    if (session_id_ != 0) {
      registry_->close(session_id_,
                       grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled or went away"));
    }
  }
  void OnDone() override { delete this; }

 private:
  void finish_once(const grpc::Status& status) {
    if (finished_.exchange(true)) return;
    // A session closed by CloseSession ends its stream normally.
    Finish(status.error_code() == grpc::StatusCode::OK ? grpc::Status::OK : status);
  }

  SessionRegistry* registry_;
  uint64_t session_id_ = 0;
  v1::SessionEvent event_;
  std::atomic<bool> finished_{false};
};

}  // namespace

RknnService::RknnService(const ServerConfig& config) : config_(config), registry_(config) {}

RknnService::~RknnService() = default;

grpc::Status RknnService::admit(const grpc::ServerContextBase& context,
                                int protocol_version) const {
  grpc::Status status = check_token(context, config_.token);
  if (!status.ok()) return status;
  if (protocol_version != v1::PROTOCOL_VERSION_UNSPECIFIED &&
      protocol_version != v1::PROTOCOL_VERSION_V1) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "protocol version " + std::to_string(protocol_version) +
                            " is not spoken here (this server speaks v" +
                            std::to_string(kProtocolVersion) + ")");
  }
  if (context.IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled before it started");
  }
  return grpc::Status::OK;
}

grpc::Status RknnService::find_context(uint64_t session_id, uint64_t context_id,
                                       std::shared_ptr<RuntimeContext>* out,
                                       std::shared_ptr<const UploadedModel>* out_model) {
  std::shared_ptr<Session> session;
  grpc::Status status = registry_.find(session_id, &session);
  if (!status.ok()) return status;
  return session->find_context(context_id, out, out_model);
}

grpc::Status RknnService::GetDeviceInfo(grpc::ServerContext* context,
                                        const v1::GetDeviceInfoRequest* request,
                                        v1::DeviceInfo* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  *response = read_device_info(config_.sysfs_root);
  return grpc::Status::OK;
}

grpc::Status RknnService::GetSdkVersion(grpc::ServerContext* context,
                                        const v1::GetSdkVersionRequest* request,
                                        v1::SdkVersion* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  const std::string runtime = runtime_library_version();
  response->set_server_version(server_version());
  response->set_runtime_version(runtime);
  response->set_api_version(runtime);
  if (request->session_id() != 0 || request->context_id() != 0) {
    std::shared_ptr<RuntimeContext> runtime_context;
    status = find_context(request->session_id(), request->context_id(), &runtime_context);
    if (!status.ok()) return status;
    rknn_sdk_version version{};
    status = runtime_context->sdk_version(&version);
    if (!status.ok()) return status;
    response->set_api_version(version.api_version);
    response->set_driver_version(version.drv_version);
  }
  response->add_lines("API: " + response->api_version());
  response->add_lines("DRV: rknn_server: " + response->server_version());
  response->add_lines("DRV: rknnrt: " + response->runtime_version());
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::SessionEvent>* RknnService::OpenSession(
    grpc::CallbackServerContext* context, const v1::OpenSessionRequest* request) {
  const grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) {
    // A reactor that only reports the refusal.
    class Refusal final : public grpc::ServerWriteReactor<v1::SessionEvent> {
     public:
      explicit Refusal(const grpc::Status& status) { Finish(status); }
      void OnDone() override { delete this; }
    };
    return new Refusal(status);
  }
  return new SessionStream(&registry_, request->client_name());
}

grpc::Status RknnService::CloseSession(grpc::ServerContext* context,
                                       const v1::CloseSessionRequest* request,
                                       v1::CloseSessionResponse*) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  if (!registry_.close(request->session_id(), grpc::Status::OK)) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "session " + std::to_string(request->session_id()) + " is not open");
  }
  return grpc::Status::OK;
}

grpc::Status RknnService::UploadModel(grpc::ServerContext* context,
                                      grpc::ServerReader<v1::UploadModelChunk>* reader,
                                      v1::UploadModelResponse* response) {
  v1::UploadModelChunk chunk;
  if (!reader->Read(&chunk)) {
    return invalid("UploadModel got no chunk (the first one carries the header)");
  }
  grpc::Status status = admit(*context, chunk.header().protocol_version());
  if (!status.ok()) return status;
  if (!chunk.has_header()) return invalid("the first UploadModel chunk has no header");
  const v1::UploadModelChunk::Header header = chunk.header();
  std::shared_ptr<Session> session;
  status = registry_.find(header.session_id(), &session);
  if (!status.ok()) return status;
  if (header.total_size() == 0) return invalid("model total_size is 0");
  if (header.total_size() > config_.max_model_bytes) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "model of " + std::to_string(header.total_size()) +
                            " bytes exceeds the server's limit of " +
                            std::to_string(config_.max_model_bytes) + " (max_model_bytes)");
  }
  auto model = std::make_shared<UploadedModel>();
  model->name = header.name();
  model->bytes.reserve(header.total_size());
  uint32_t crc = 0;
  do {
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "upload cancelled by the client");
    }
    if (chunk.has_header() && !model->bytes.empty()) {
      return invalid("a header arrived again after " + std::to_string(model->bytes.size()) +
                     " bytes (only the first chunk carries one)");
    }
    const std::string& data = chunk.data();
    if (model->bytes.size() + data.size() > header.total_size()) {
      return invalid("upload sent more than the declared total_size " +
                     std::to_string(header.total_size()) + " bytes");
    }
    crc = crc32_update(crc, reinterpret_cast<const uint8_t*>(data.data()), data.size());
    model->bytes.insert(model->bytes.end(), data.begin(), data.end());
  } while (reader->Read(&chunk));
  if (context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "upload cancelled by the client");
  }
  if (model->bytes.size() != header.total_size()) {
    return invalid("upload truncated: received " + std::to_string(model->bytes.size()) + " of " +
                   std::to_string(header.total_size()) + " bytes");
  }
  if (crc != header.crc32()) {
    char text[96];
    std::snprintf(text, sizeof(text),
                  "model checksum mismatch: received crc32 0x%08x, header 0x%08x", crc,
                  header.crc32());
    return grpc::Status(grpc::StatusCode::DATA_LOSS, text);
  }
  uint64_t model_id = 0;
  status = session->add_model(model, config_.max_models_per_session, &model_id);
  if (!status.ok()) return status;
  response->set_model_id(model_id);
  response->set_size(model->bytes.size());
  log(LogLevel::kDebug, "session ", session->id(), ": model ", model_id, " '", model->name,
      "' uploaded, ", model->bytes.size(), " bytes");
  return grpc::Status::OK;
}

grpc::Status RknnService::ReleaseModel(grpc::ServerContext* context,
                                       const v1::ReleaseModelRequest* request,
                                       v1::ReleaseModelResponse*) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  std::shared_ptr<Session> session;
  status = registry_.find(request->session_id(), &session);
  if (!status.ok()) return status;
  return session->remove_model(request->model_id());
}

grpc::Status RknnService::InitContext(grpc::ServerContext* context,
                                      const v1::InitContextRequest* request,
                                      v1::InitContextResponse* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  std::shared_ptr<Session> session;
  status = registry_.find(request->session_id(), &session);
  if (!status.ok()) return status;
  std::shared_ptr<const UploadedModel> model;
  status = session->find_model(request->model_id(), &model);
  if (!status.ok()) return status;
  if (session->context_count() >= config_.max_contexts_per_session ||
      registry_.context_count() >= config_.max_contexts) {
    // Checked again when the context is added; this saves a wasted rknn_init.
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "context limit reached (max_contexts_per_session " +
                            std::to_string(config_.max_contexts_per_session) + ", max_contexts " +
                            std::to_string(config_.max_contexts) + ")");
  }
  uint32_t flags = request->flags();
  if (request->perf_debug()) flags |= RKNN_FLAG_COLLECT_PERF_MASK;
  std::unique_ptr<RuntimeContext> runtime_context;
  status = RuntimeContext::create(model->bytes, flags, request->core_mask(), &runtime_context);
  if (!status.ok()) return status;
  response->set_input_count(runtime_context->input_count());
  response->set_output_count(runtime_context->output_count());
  uint64_t context_id = 0;
  status = registry_.add_context(*session, std::move(runtime_context), model, &context_id);
  if (!status.ok()) return status;
  response->set_context_id(context_id);
  return grpc::Status::OK;
}

grpc::Status RknnService::QueryAttributes(grpc::ServerContext* context,
                                          const v1::QueryAttributesRequest* request,
                                          v1::QueryAttributesResponse* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  std::shared_ptr<RuntimeContext> runtime_context;
  status = find_context(request->session_id(), request->context_id(), &runtime_context);
  if (!status.ok()) return status;
  runtime_context->describe(response);
  return grpc::Status::OK;
}

grpc::Status RknnService::Run(grpc::ServerContext* context, const v1::RunRequest* request,
                              v1::RunResponse* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  std::shared_ptr<RuntimeContext> runtime_context;
  status = find_context(request->session_id(), request->context_id(), &runtime_context);
  if (!status.ok()) return status;
  status = runtime_context->run(request->inputs(), request->want_float(), response);
  if (status.ok() && context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "run finished after the call was cancelled");
  }
  return status;
}

grpc::Status RknnService::EvalPerf(grpc::ServerContext* context, const v1::EvalPerfRequest* request,
                                   v1::EvalPerfResponse* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  const uint32_t loops = request->loops() == 0 ? 1 : request->loops();
  if (loops > config_.max_perf_loops) {
    return invalid("loops " + std::to_string(loops) + " > max_perf_loops " +
                   std::to_string(config_.max_perf_loops));
  }
  std::shared_ptr<RuntimeContext> runtime_context;
  status = find_context(request->session_id(), request->context_id(), &runtime_context);
  if (!status.ok()) return status;

  std::unique_lock<std::mutex> frequency_lock(frequency_mutex_, std::defer_lock);
  std::unique_ptr<FrequencyPin> pin;
  if (request->fix_freq()) {
    frequency_lock.lock();
    pin = std::make_unique<FrequencyPin>(config_.sysfs_root);
    std::string message;
    response->set_frequency_fixed(pin->pin(&message));
    response->set_frequency_message(message);
  } else {
    response->set_frequency_message("fix_freq not requested");
  }
  std::vector<int64_t> times;
  std::string detail;
  status = runtime_context->time_runs(
      request->inputs(), loops, [context] { return context->IsCancelled(); }, &times, &detail);
  pin.reset();  // governors restored before anything else
  if (!status.ok()) return status;

  int64_t sum = 0;
  for (int64_t time : times) {
    sum += time;
    response->add_run_times_us(time);
  }
  const int64_t mean = times.empty() ? 0 : sum / static_cast<int64_t>(times.size());
  response->set_total_time_us(mean);
  response->set_fps(mean > 0 ? 1e6 / static_cast<double>(mean) : 0.0);
  const std::vector<v1::LayerPerf> layers = parse_perf_detail(detail);
  for (const v1::LayerPerf& layer : layers) *response->add_layers() = layer;
  response->set_perf_detail_text(detail);
  response->set_summary_text(format_perf_summary(layers, mean, response->fps()));
  return grpc::Status::OK;
}

grpc::Status RknnService::EvalMemory(grpc::ServerContext* context,
                                     const v1::EvalMemoryRequest* request,
                                     v1::EvalMemoryResponse* response) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  std::shared_ptr<RuntimeContext> runtime_context;
  std::shared_ptr<const UploadedModel> model;
  status = find_context(request->session_id(), request->context_id(), &runtime_context, &model);
  if (!status.ok()) return status;
  rknn_mem_size sizes{};
  status = runtime_context->memory(&sizes);
  if (!status.ok()) return status;
  *response = memory_report(sizes, model->bytes.size());
  return grpc::Status::OK;
}

grpc::Status RknnService::ReleaseContext(grpc::ServerContext* context,
                                         const v1::ReleaseContextRequest* request,
                                         v1::ReleaseContextResponse*) {
  grpc::Status status = admit(*context, request->protocol_version());
  if (!status.ok()) return status;
  std::shared_ptr<Session> session;
  status = registry_.find(request->session_id(), &session);
  if (!status.ok()) return status;
  return registry_.remove_context(*session, request->context_id());
}

}  // namespace orknn::server
