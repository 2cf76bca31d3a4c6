#include "logging.h"

#include <sys/time.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace orknn::server {
namespace {

int configured_level() {
  static const int level = [] {
    const char* text = std::getenv("RKNN_SERVER_LOGLEVEL");
    return text ? std::atoi(text) : static_cast<int>(LogLevel::kInfo);
  }();
  return level;
}

char level_letter(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return 'E';
    case LogLevel::kWarning:
      return 'W';
    case LogLevel::kInfo:
      return 'I';
    case LogLevel::kDebug:
      return 'D';
  }
  return '?';
}

// syslog priorities: err 3, warning 4, info 6, debug 7.
int syslog_priority(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return 3;
    case LogLevel::kWarning:
      return 4;
    case LogLevel::kInfo:
      return 6;
    case LogLevel::kDebug:
      return 7;
  }
  return 6;
}

}  // namespace

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= configured_level();
}

void log_line(LogLevel level, const std::string& message) {
  static const bool to_journal = std::getenv("JOURNAL_STREAM") != nullptr;
  static std::mutex mutex;
  timeval now{};
  gettimeofday(&now, nullptr);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char prefix[64];
  if (to_journal) {
    std::snprintf(prefix, sizeof(prefix), "<%d>%c rknn_server: ", syslog_priority(level),
                  level_letter(level));
  } else {
    std::snprintf(prefix, sizeof(prefix), "%c rknn_server: [%02d:%02d:%02d.%03d] ",
                  level_letter(level), local.tm_hour, local.tm_min, local.tm_sec,
                  static_cast<int>(now.tv_usec / 1000));
  }
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "%s%s\n", prefix, message.c_str());
}

}  // namespace orknn::server
