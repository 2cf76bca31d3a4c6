#include "core/status.h"

namespace orknn {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kFailed:
      return "failed";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kDeviceUnavailable:
      return "device unavailable";
    case StatusCode::kOutOfMemory:
      return "out of memory";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kInvalidModel:
      return "invalid model";
    case StatusCode::kInvalidContext:
      return "invalid context";
    case StatusCode::kInvalidInput:
      return "invalid input";
    case StatusCode::kInvalidOutput:
      return "invalid output";
    case StatusCode::kDeviceMismatch:
      return "device mismatch";
    case StatusCode::kPlatformMismatch:
      return "target platform mismatch";
    case StatusCode::kUnimplemented:
      return "unimplemented";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) state_ = std::make_unique<State>(State{code, std::move(message)});
}

Status::Status(const Status& other)
    : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
  return *this;
}

const std::string& Status::message() const {
  static const std::string empty;
  return state_ ? state_->message : empty;
}

Status& Status::add_context(std::string_view context) & {
  if (state_) state_->message = str_cat(context, ": ", state_->message);
  return *this;
}

Status&& Status::add_context(std::string_view context) && {
  add_context(context);
  return std::move(*this);
}

}  // namespace orknn
