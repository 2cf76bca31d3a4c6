// Sessions and what they own. A session is opened by the OpenSession stream and lives until that
// stream ends (client cancel or disconnect), CloseSession, the idle timeout, or shutdown; then
// its models and contexts are dropped. A call in progress holds shared pointers, so a context
// is destroyed only after the last call using it returns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "runtime_context.h"
#include "server_config.h"

namespace orknn::server {

struct UploadedModel {
  std::vector<uint8_t> bytes;
  std::string name;
};

class SessionRegistry;

class Session {
 public:
  using Clock = std::chrono::steady_clock;
  // `on_close` ends the session's stream with the given status; called at most once.
  Session(uint64_t id, std::string client_name, std::function<void(const grpc::Status&)> on_close)
      : id_(id), client_name_(std::move(client_name)), on_close_(std::move(on_close)) {}

  uint64_t id() const { return id_; }
  const std::string& client_name() const { return client_name_; }

  grpc::Status add_model(std::shared_ptr<const UploadedModel> model, uint32_t limit,
                         uint64_t* out_id);
  grpc::Status find_model(uint64_t model_id, std::shared_ptr<const UploadedModel>* out) const;
  grpc::Status remove_model(uint64_t model_id);

  grpc::Status find_context(uint64_t context_id, std::shared_ptr<RuntimeContext>* out,
                            std::shared_ptr<const UploadedModel>* out_model = nullptr) const;
  size_t context_count() const;

 private:
  friend class SessionRegistry;
  struct ContextEntry {
    std::shared_ptr<RuntimeContext> context;
    std::shared_ptr<const UploadedModel> model;
  };
  void touch() { last_used_ns_ = Clock::now().time_since_epoch().count(); }
  // Drops everything; returns the number of contexts dropped.
  size_t clear();

  const uint64_t id_;
  const std::string client_name_;
  std::function<void(const grpc::Status&)> on_close_;  // guarded by the registry's mutex
  std::atomic<int64_t> last_used_ns_{Clock::now().time_since_epoch().count()};
  mutable std::mutex mutex_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<const UploadedModel>> models_;
  std::map<uint64_t, ContextEntry> contexts_;
};

class SessionRegistry {
 public:
  explicit SessionRegistry(const ServerConfig& config);
  ~SessionRegistry();
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // RESOURCE_EXHAUSTED at max_sessions; UNAVAILABLE while shutting down.
  grpc::Status open(const std::string& client_name,
                    std::function<void(const grpc::Status&)> on_close, uint64_t* out_id);
  // NOT_FOUND with the id when it is not open. Marks the session used.
  grpc::Status find(uint64_t session_id, std::shared_ptr<Session>* out);
  // Frees the session and ends its stream with `reason`. False when it was not open.
  bool close(uint64_t session_id, const grpc::Status& reason);
  // Refuses new sessions and closes every open one.
  void close_all(const grpc::Status& reason);

  // Context bookkeeping across sessions (max_contexts and max_contexts_per_session).
  grpc::Status add_context(Session& session, std::unique_ptr<RuntimeContext> context,
                           std::shared_ptr<const UploadedModel> model, uint64_t* out_id);
  grpc::Status remove_context(Session& session, uint64_t context_id);

  size_t session_count() const;
  size_t context_count() const { return context_count_.load(); }
  const ServerConfig& config() const { return config_; }

 private:
  void reap_idle_sessions();

  const ServerConfig config_;
  mutable std::mutex mutex_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;
  uint64_t next_session_id_ = 1;
  bool closing_ = false;
  std::atomic<size_t> context_count_{0};
  std::condition_variable reaper_wake_;
  bool stop_reaper_ = false;
  std::thread reaper_;
};

}  // namespace orknn::server
