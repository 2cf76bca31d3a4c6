#include "core/logging.h"

#include <sys/time.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace orknn {
namespace {

int read_level_from_environment() {
  const char* text = std::getenv("RKNN_LOG_LEVEL");
  if (text == nullptr || *text == '\0') return static_cast<int>(LogLevel::kWarning);
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text) return static_cast<int>(LogLevel::kWarning);
  if (value < 0) return 0;
  if (value > 6) return 6;
  return static_cast<int>(value);
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
    case LogLevel::kVerbose:
      return 'D';
  }
  return '?';
}

}  // namespace

int log_level() {
  static const int level = read_level_from_environment();
  return level;
}

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= log_level();
}

void log_line(LogLevel level, std::string_view message) {
  timeval now{};
  gettimeofday(&now, nullptr);
  tm local{};
  time_t seconds = now.tv_sec;
  localtime_r(&seconds, &local);
  char prefix[48];
  std::snprintf(prefix, sizeof(prefix), "%c RKNN: [%02d:%02d:%02d.%03d] ", level_letter(level),
                local.tm_hour, local.tm_min, local.tm_sec, static_cast<int>(now.tv_usec / 1000));
  std::string line(prefix);
  line.append(message.data(), message.size());
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace orknn
