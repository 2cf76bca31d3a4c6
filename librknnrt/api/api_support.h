// What every C entry point shares: turning a Status into an RKNN_ERR_* code with one log line,
// catching anything thrown before it crosses the C boundary, and finding the context.
#pragma once

#include <cstring>
#include <new>

#include "api/context_registry.h"
#include "core/logging.h"
#include "rknn_api.h"

namespace orknn::api {

int to_rknn_error(StatusCode code);

// Runs `body` (returning Status) and converts the outcome for the C caller.
template <typename Body>
int call_api(const char* function, Body&& body) {
  try {
    Status status = body();
    if (status.ok()) return RKNN_SUCC;
    log_error(function, ": ", status.message());
    return to_rknn_error(status.code());
  } catch (const std::bad_alloc&) {
    log_error(function, ": out of memory");
    return RKNN_ERR_MALLOC_FAIL;
  } catch (const std::exception& error) {
    log_error(function, ": ", error.what());
    return RKNN_ERR_FAIL;
  } catch (...) {
    log_error(function, ": unexpected failure");
    return RKNN_ERR_FAIL;
  }
}

// Like call_api, for a call on an existing context: looks it up (RKNN_ERR_CTX_INVALID if it
// does not exist) and holds its lock while `body(ContextState&)` runs.
template <typename Body>
int call_on_context(const char* function, rknn_context context, Body&& body) {
  return call_api(function, [&]() -> Status {
    std::shared_ptr<ContextState> state = ContextRegistry::instance().find(context);
    if (!state) {
      return make_error(StatusCode::kInvalidContext, "invalid context 0x", std::hex,
                        static_cast<uint64_t>(context), " (never created, or already destroyed)");
    }
    std::lock_guard<std::mutex> lock(state->mutex);
    return body(*state);
  });
}

// The integer value of an enum received from C code. C callers may pass any int in an enum
// parameter or field; loading an out-of-range value as a C++ enum is undefined behaviour, so
// the bytes are read as an integer instead.
template <typename Enum>
int32_t enum_value(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "C enums are 32-bit here");
  int32_t integer;
  std::memcpy(&integer, &value, sizeof(integer));
  return integer;
}

// Type and layout mapping between the C enums and the internal ones.
Result<DataType> data_type_from_rknn(int type);
rknn_tensor_type data_type_to_rknn(DataType type);
Result<exec::Layout> layout_from_rknn(int format);
rknn_tensor_format layout_to_rknn(exec::Layout layout);

}  // namespace orknn::api
