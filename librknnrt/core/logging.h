// Log lines in the vendor runtime's shape, `E RKNN: [hh:mm:ss.mmm] message`, on stderr.
//
// The level comes from RKNN_LOG_LEVEL, read once: 0 errors only, 1 (default) adds warnings,
// 2 adds information, 3 adds debug detail, 4 and above also print the per-layer table after
// each run. Logging is thread-safe: each line is written with one call.
#pragma once

#include <string_view>

#include "core/status.h"

namespace orknn {

enum class LogLevel : int { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3, kVerbose = 4 };

// The effective level (RKNN_LOG_LEVEL, clamped to [0, 6]).
int log_level();
bool log_enabled(LogLevel level);
void log_line(LogLevel level, std::string_view message);

template <typename... Parts>
void log_error(const Parts&... parts) {
  if (log_enabled(LogLevel::kError)) log_line(LogLevel::kError, str_cat(parts...));
}
template <typename... Parts>
void log_warning(const Parts&... parts) {
  if (log_enabled(LogLevel::kWarning)) log_line(LogLevel::kWarning, str_cat(parts...));
}
template <typename... Parts>
void log_info(const Parts&... parts) {
  if (log_enabled(LogLevel::kInfo)) log_line(LogLevel::kInfo, str_cat(parts...));
}
template <typename... Parts>
void log_debug(const Parts&... parts) {
  if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, str_cat(parts...));
}

}  // namespace orknn
