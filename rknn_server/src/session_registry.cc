#include "session_registry.h"

#include "logging.h"

namespace orknn::server {
namespace {

grpc::Status not_found(const std::string& what, uint64_t id, const std::string& where) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND,
                      what + " " + std::to_string(id) + " is not open" + where);
}

}  // namespace

grpc::Status Session::add_model(std::shared_ptr<const UploadedModel> model, uint32_t limit,
                                uint64_t* out_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (models_.size() >= limit) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "session " + std::to_string(id_) + " already holds " +
                            std::to_string(models_.size()) +
                            " models (max_models_per_session); release one first");
  }
  *out_id = next_id_++;
  models_[*out_id] = std::move(model);
  return grpc::Status::OK;
}

grpc::Status Session::find_model(uint64_t model_id,
                                 std::shared_ptr<const UploadedModel>* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = models_.find(model_id);
  if (found == models_.end()) {
    return not_found("model", model_id, " in session " + std::to_string(id_));
  }
  *out = found->second;
  return grpc::Status::OK;
}

grpc::Status Session::remove_model(uint64_t model_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (models_.erase(model_id) == 0) {
    return not_found("model", model_id, " in session " + std::to_string(id_));
  }
  return grpc::Status::OK;
}

grpc::Status Session::find_context(uint64_t context_id, std::shared_ptr<RuntimeContext>* out,
                                   std::shared_ptr<const UploadedModel>* out_model) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = contexts_.find(context_id);
  if (found == contexts_.end()) {
    return not_found("context", context_id, " in session " + std::to_string(id_));
  }
  *out = found->second.context;
  if (out_model) *out_model = found->second.model;
  return grpc::Status::OK;
}

size_t Session::context_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return contexts_.size();
}

size_t Session::clear() {
  std::map<uint64_t, ContextEntry> contexts;
  std::map<uint64_t, std::shared_ptr<const UploadedModel>> models;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    contexts.swap(contexts_);
    models.swap(models_);
  }
  // Destroyed here, outside the lock (rknn_destroy may take a while).
  return contexts.size();
}

SessionRegistry::SessionRegistry(const ServerConfig& config) : config_(config) {
  reaper_ = std::thread([this] { reap_idle_sessions(); });
}

SessionRegistry::~SessionRegistry() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_reaper_ = true;
  }
  reaper_wake_.notify_all();
  reaper_.join();
  close_all(grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
}

grpc::Status SessionRegistry::open(const std::string& client_name,
                                   std::function<void(const grpc::Status&)> on_close,
                                   uint64_t* out_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closing_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down");
  if (sessions_.size() >= config_.max_sessions) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        std::to_string(sessions_.size()) + " sessions are open (max_sessions " +
                            std::to_string(config_.max_sessions) + ")");
  }
  const uint64_t id = next_session_id_++;
  sessions_[id] = std::make_shared<Session>(id, client_name, std::move(on_close));
  *out_id = id;
  log(LogLevel::kDebug, "session ", id, " opened by '", client_name, "'");
  return grpc::Status::OK;
}

grpc::Status SessionRegistry::find(uint64_t session_id, std::shared_ptr<Session>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = sessions_.find(session_id);
  if (found == sessions_.end()) {
    return not_found("session", session_id, " (closed, timed out, or never opened)");
  }
  found->second->touch();
  *out = found->second;
  return grpc::Status::OK;
}

bool SessionRegistry::close(uint64_t session_id, const grpc::Status& reason) {
  std::shared_ptr<Session> session;
  std::function<void(const grpc::Status&)> on_close;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = sessions_.find(session_id);
    if (found == sessions_.end()) return false;
    session = found->second;
    sessions_.erase(found);
    on_close.swap(session->on_close_);
  }
  context_count_ -= session->clear();
  log(LogLevel::kDebug, "session ", session_id, " closed: ", reason.error_message());
  if (on_close) on_close(reason);
  return true;
}

void SessionRegistry::close_all(const grpc::Status& reason) {
  std::vector<uint64_t> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    for (const auto& entry : sessions_) ids.push_back(entry.first);
  }
  for (uint64_t id : ids) close(id, reason);
}

grpc::Status SessionRegistry::add_context(Session& session, std::unique_ptr<RuntimeContext> context,
                                          std::shared_ptr<const UploadedModel> model,
                                          uint64_t* out_id) {
  std::lock_guard<std::mutex> registry_lock(mutex_);
  if (sessions_.count(session.id()) == 0) {
    return not_found("session", session.id(), " (closed while the context was being made)");
  }
  if (context_count_ >= config_.max_contexts) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        std::to_string(context_count_.load()) +
                            " contexts are open on the server (max_contexts " +
                            std::to_string(config_.max_contexts) + ")");
  }
  std::lock_guard<std::mutex> lock(session.mutex_);
  if (session.contexts_.size() >= config_.max_contexts_per_session) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "session " + std::to_string(session.id()) + " holds " +
                            std::to_string(session.contexts_.size()) +
                            " contexts (max_contexts_per_session " +
                            std::to_string(config_.max_contexts_per_session) + ")");
  }
  *out_id = session.next_id_++;
  session.contexts_[*out_id] = Session::ContextEntry{std::move(context), std::move(model)};
  ++context_count_;
  return grpc::Status::OK;
}

grpc::Status SessionRegistry::remove_context(Session& session, uint64_t context_id) {
  Session::ContextEntry removed;
  {
    std::lock_guard<std::mutex> lock(session.mutex_);
    const auto found = session.contexts_.find(context_id);
    if (found == session.contexts_.end()) {
      return not_found("context", context_id, " in session " + std::to_string(session.id()));
    }
    removed = std::move(found->second);
    session.contexts_.erase(found);
  }
  --context_count_;
  return grpc::Status::OK;
}

size_t SessionRegistry::session_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size();
}

void SessionRegistry::reap_idle_sessions() {
  const auto timeout = std::chrono::seconds(config_.idle_timeout_seconds);
  const auto period = std::min<std::chrono::milliseconds>(
      std::chrono::milliseconds(1000),
      std::chrono::duration_cast<std::chrono::milliseconds>(timeout) / 4);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_reaper_) {
    reaper_wake_.wait_for(lock, period);
    if (stop_reaper_) break;
    const int64_t now = Session::Clock::now().time_since_epoch().count();
    std::vector<uint64_t> idle;
    for (const auto& [id, session] : sessions_) {
      const auto unused = Session::Clock::duration(now - session->last_used_ns_.load());
      if (unused > timeout) idle.push_back(id);
    }
    if (idle.empty()) continue;
    lock.unlock();
    for (uint64_t id : idle) {
      log(LogLevel::kInfo, "session ", id, " idle for more than ", config_.idle_timeout_seconds,
          " s: freeing it");
      close(id, grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                             "session idle for more than " +
                                 std::to_string(config_.idle_timeout_seconds) + " s"));
    }
    lock.lock();
  }
}

}  // namespace orknn::server
