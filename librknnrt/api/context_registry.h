// Maps rknn_context handles to live contexts.
//
// Handles are never reused, so a destroyed or made-up handle is reported as invalid instead of
// reaching another context. Each context has a mutex that serialises the API calls made on it;
// the registry hands out shared ownership so rknn_destroy on one thread cannot free a context
// another thread is using (the memory goes when the last call returns).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core/device_memory.h"
#include "exec/session.h"
#include "rknn_api.h"

namespace orknn::api {

struct ContextState {
  std::mutex mutex;
  std::unique_ptr<exec::Session> session;
  uint32_t flags = 0;
  // Output buffers the runtime allocated in rknn_outputs_get and the application has not yet
  // released; freed by rknn_outputs_release or, at the latest, by rknn_destroy.
  std::set<void*> runtime_outputs;
  int batch_core_num = 0;
  // The text rknn_query(RKNN_QUERY_PERF_DETAIL) hands out; valid until the next such query
  // or rknn_destroy.
  std::string performance_text;
  // RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: where the model lives (RKNN_QUERY_DEVICE_MEM_INFO).
  std::shared_ptr<const DeviceMemory> model_memory;
  const void* model_address = nullptr;
  uint32_t model_size = 0;

  ~ContextState();
};

class ContextRegistry {
 public:
  static ContextRegistry& instance();

  rknn_context add(std::shared_ptr<ContextState> state);
  // nullptr when the handle is unknown or destroyed.
  std::shared_ptr<ContextState> find(rknn_context handle);
  // Removes the handle; returns the state (nullptr if unknown) so the caller can finish with it.
  std::shared_ptr<ContextState> remove(rknn_context handle);

 private:
  std::mutex mutex_;
  std::map<rknn_context, std::shared_ptr<ContextState>> contexts_;
  rknn_context next_handle_ = 0;
};

}  // namespace orknn::api
