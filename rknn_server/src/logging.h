// Log lines in the vendor's shape ("I rknn_server: [hh:mm:ss.mmm] message") on stderr. Under
// systemd (JOURNAL_STREAM set) each line starts with its syslog priority ("<6>") so journald
// files it at the right level. The level comes from RKNN_SERVER_LOGLEVEL (0 quiet .. 5 verbose,
// default 3), as for the vendor's daemon.
#pragma once

#include <sstream>
#include <string>

namespace orknn::server {

enum class LogLevel { kError = 1, kWarning = 2, kInfo = 3, kDebug = 4 };

bool log_enabled(LogLevel level);
void log_line(LogLevel level, const std::string& message);

template <typename... Parts>
void log(LogLevel level, const Parts&... parts) {
  if (!log_enabled(level)) return;
  std::ostringstream text;
  (text << ... << parts);
  log_line(level, text.str());
}

}  // namespace orknn::server
