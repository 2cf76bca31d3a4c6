// libFuzzer target: the rknn_server request handlers, called directly (no network) with
// requests decoded from the fuzz input. A session holding a real model and context exists, so
// fuzzed ids, tensors, loops and flags reach the runtime through the same checks a remote call
// goes through. Set ORKNN_FUZZ_MODEL to a .rknn file (scripts/run_tests.sh makes the tiny
// sample model); without it the handlers are fuzzed on an empty session.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#include "service.h"

namespace {

using namespace orknn::server;

struct Harness {
  std::unique_ptr<RknnService> service;
  uint64_t session_id = 0;
};

Harness& harness() {
  static Harness* instance = [] {
    auto* made = new Harness();
    ServerConfig config;
    config.max_perf_loops = 4;
    config.max_contexts = 4;
    config.max_contexts_per_session = 2;
    config.max_models_per_session = 2;
    config.idle_timeout_seconds = 86400;
    config.sysfs_root = "/nonexistent";
    made->service = std::make_unique<RknnService>(config);
    made->service->registry().open(
        "fuzz", [](const grpc::Status&) {}, &made->session_id);
    std::shared_ptr<Session> session;
    made->service->registry().find(made->session_id, &session);
    const char* path = std::getenv("ORKNN_FUZZ_MODEL");
    if (path) {
      std::ifstream file(path, std::ios::binary);
      auto model = std::make_shared<UploadedModel>();
      model->bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
      uint64_t model_id = 0;
      session->add_model(model, 2, &model_id);
      grpc::ServerContext context;
      openrknn::server::v1::InitContextRequest init;
      init.set_session_id(made->session_id);
      init.set_model_id(model_id);
      init.set_perf_debug(true);
      openrknn::server::v1::InitContextResponse response;
      made->service->InitContext(&context, &init, &response);
    }
    return made;
  }();
  return *instance;
}

// Fuzzed ids mostly point at what exists, so that deeper paths are reached.
template <typename Request>
void aim(Request* request, uint8_t selector) {
  if (selector & 1) request->set_session_id(harness().session_id);
  if (selector & 2) request->set_context_id(1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Harness& h = harness();
  const uint8_t method = data[0] % 8, selector = data[1];
  const uint8_t* body = data + 2;
  const int body_size = static_cast<int>(size - 2);
  grpc::ServerContext context;
  namespace v1 = openrknn::server::v1;
  switch (method) {
    case 0: {
      v1::RunRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      aim(&request, selector);
      v1::RunResponse response;
      h.service->Run(&context, &request, &response);
      break;
    }
    case 1: {
      v1::EvalPerfRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      aim(&request, selector);
      request.set_fix_freq(false);
      v1::EvalPerfResponse response;
      h.service->EvalPerf(&context, &request, &response);
      break;
    }
    case 2: {
      v1::QueryAttributesRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      aim(&request, selector);
      v1::QueryAttributesResponse response;
      h.service->QueryAttributes(&context, &request, &response);
      break;
    }
    case 3: {
      v1::EvalMemoryRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      aim(&request, selector);
      v1::EvalMemoryResponse response;
      h.service->EvalMemory(&context, &request, &response);
      break;
    }
    case 4: {
      v1::GetSdkVersionRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      aim(&request, selector);
      v1::SdkVersion response;
      h.service->GetSdkVersion(&context, &request, &response);
      break;
    }
    case 5: {
      // New contexts from the fuzzed flags and core mask, released again at once.
      v1::InitContextRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      if (selector & 1) request.set_session_id(h.session_id);
      request.set_model_id(1);
      v1::InitContextResponse response;
      if (h.service->InitContext(&context, &request, &response).ok()) {
        v1::ReleaseContextRequest release;
        release.set_session_id(h.session_id);
        release.set_context_id(response.context_id());
        v1::ReleaseContextResponse released;
        grpc::ServerContext release_context;
        h.service->ReleaseContext(&release_context, &release, &released);
      }
      break;
    }
    case 6: {
      v1::GetDeviceInfoRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      v1::DeviceInfo response;
      h.service->GetDeviceInfo(&context, &request, &response);
      break;
    }
    default: {
      // Closing unknown sessions must not touch the harness session.
      v1::CloseSessionRequest request;
      if (!request.ParseFromArray(body, body_size)) return 0;
      if (request.session_id() == h.session_id) return 0;
      v1::CloseSessionResponse response;
      h.service->CloseSession(&context, &request, &response);
      break;
    }
  }
  return 0;
}
