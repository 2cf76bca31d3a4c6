#include "api/context_registry.h"

#include <cstdlib>

namespace orknn::api {

ContextState::~ContextState() {
  for (void* buffer : runtime_outputs) std::free(buffer);
}

ContextRegistry& ContextRegistry::instance() {
  // Never destroyed: contexts an application forgot to destroy must not be torn down by static
  // destructors while other threads may still call in during process exit.
  static ContextRegistry* registry = new ContextRegistry();
  return *registry;
}

rknn_context ContextRegistry::add(std::shared_ptr<ContextState> state) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Handles start away from 0 and small integers so uninitialised or counted values are
  // unlikely to collide with a live context.
  if (next_handle_ == 0) next_handle_ = 0x5a000001;
  const rknn_context handle = next_handle_++;
  contexts_.emplace(handle, std::move(state));
  return handle;
}

std::shared_ptr<ContextState> ContextRegistry::find(rknn_context handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = contexts_.find(handle);
  return it == contexts_.end() ? nullptr : it->second;
}

std::shared_ptr<ContextState> ContextRegistry::remove(rknn_context handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = contexts_.find(handle);
  if (it == contexts_.end()) return nullptr;
  std::shared_ptr<ContextState> state = std::move(it->second);
  contexts_.erase(it);
  return state;
}

}  // namespace orknn::api
