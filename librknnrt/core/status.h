// Status and Result<T>: the one error type of the runtime.
//
// Success is a null pointer (free to create, copy and test); failure carries a code, a message and
// the chain of context added while the error travelled up. The C API layer converts a Status into
// an RKNN_ERR_* value exactly once (librknnrt/api/). Runtime and I/O failures never abort.
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace orknn {

enum class StatusCode : int {
  kOk = 0,
  kFailed,             // generic failure (RKNN_ERR_FAIL)
  kTimeout,            // RKNN_ERR_TIMEOUT
  kDeviceUnavailable,  // RKNN_ERR_DEVICE_UNAVAILABLE
  kOutOfMemory,        // RKNN_ERR_MALLOC_FAIL
  kInvalidArgument,    // RKNN_ERR_PARAM_INVALID
  kInvalidModel,       // RKNN_ERR_MODEL_INVALID
  kInvalidContext,     // RKNN_ERR_CTX_INVALID
  kInvalidInput,       // RKNN_ERR_INPUT_INVALID
  kInvalidOutput,      // RKNN_ERR_OUTPUT_INVALID
  kDeviceMismatch,     // RKNN_ERR_DEVICE_UNMATCH
  kPlatformMismatch,   // RKNN_ERR_TARGET_PLATFORM_UNMATCH
  kUnimplemented,      // a capability that is not available in this build (RKNN_ERR_FAIL)
};

const char* status_code_name(StatusCode code);

// Concatenates any streamable values into a string: str_cat("input ", 0, ": size ", n).
template <typename... Parts>
std::string str_cat(const Parts&... parts) {
  std::ostringstream stream;
  (stream << ... << parts);
  return stream.str();
}

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(StatusCode code, std::string message);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message with every context prefix, outermost first: "rknn_init: model: section 2: ...".
  const std::string& message() const;

  // Prepends "context: " to the message. No effect on success.
  Status& add_context(std::string_view context) &;
  Status&& add_context(std::string_view context) &&;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;
};

inline Status ok_status() {
  return Status();
}

template <typename... Parts>
Status make_error(StatusCode code, const Parts&... parts) {
  return Status(code, str_cat(parts...));
}
template <typename... Parts>
Status invalid_argument(const Parts&... parts) {
  return make_error(StatusCode::kInvalidArgument, parts...);
}
template <typename... Parts>
Status invalid_model(const Parts&... parts) {
  return make_error(StatusCode::kInvalidModel, parts...);
}
template <typename... Parts>
Status unimplemented(const Parts&... parts) {
  return make_error(StatusCode::kUnimplemented, parts...);
}
template <typename... Parts>
Status internal_failure(const Parts&... parts) {
  return make_error(StatusCode::kFailed, parts...);
}

// Result<T> holds either a value or a failed Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : storage_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(storage_).ok()) {
      storage_ = Status(StatusCode::kFailed, "Result constructed from a success Status");
    }
  }

  bool ok() const { return std::holds_alternative<T>(storage_); }
  const Status& status() const {
    static const Status success;
    return ok() ? success : std::get<Status>(storage_);
  }
  Status take_status() { return ok() ? Status() : std::move(std::get<Status>(storage_)); }

  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace orknn

#define ORKNN_CONCAT_INNER(a, b) a##b
#define ORKNN_CONCAT(a, b) ORKNN_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` failed.
#define ORKNN_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::orknn::Status orknn_status_ = (expr);        \
    if (!orknn_status_.ok()) return orknn_status_; \
  } while (0)

// Same, adding a context prefix to the message on the way out.
#define ORKNN_RETURN_IF_ERROR_WITH(expr, context)                                  \
  do {                                                                             \
    ::orknn::Status orknn_status_ = (expr);                                        \
    if (!orknn_status_.ok()) return std::move(orknn_status_).add_context(context); \
  } while (0)

// `ORKNN_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result or returns its Status.
#define ORKNN_ASSIGN_OR_RETURN(lhs, expr) \
  ORKNN_ASSIGN_OR_RETURN_IMPL(ORKNN_CONCAT(orknn_result_, __LINE__), lhs, expr)
#define ORKNN_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                \
  if (!result.ok()) return result.take_status();       \
  lhs = std::move(result).value()
