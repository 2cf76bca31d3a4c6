#include "frequency_pin.h"

#include <glob.h>

#include <fstream>

#include "logging.h"

namespace orknn::server {
namespace {

std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> paths;
  glob_t found{};
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return paths;
}

bool read_line(const std::string& path, std::string* out) {
  std::ifstream file(path);
  return file && std::getline(file, *out);
}

bool write_value(const std::string& path, const std::string& value) {
  std::ofstream file(path);
  if (!file) return false;
  file << value << "\n";
  file.flush();
  return static_cast<bool>(file);
}

}  // namespace

bool FrequencyPin::pin(std::string* message) {
  std::string root = root_;
  if (!root.empty() && root.back() == '/') root.pop_back();
  std::vector<std::string> governors = glob_paths(root + "/sys/class/devfreq/*npu*/governor");
  for (const std::string& path :
       glob_paths(root + "/sys/devices/system/cpu/cpufreq/policy*/scaling_governor")) {
    governors.push_back(path);
  }
  if (governors.empty()) {
    *message = "no NPU devfreq or CPU cpufreq governor under " + root_ + "sys; frequency not fixed";
    return false;
  }
  int refused = 0;
  for (const std::string& path : governors) {
    std::string previous;
    if (!read_line(path, &previous)) {
      ++refused;
      continue;
    }
    if (previous == "performance") continue;
    if (!write_value(path, "performance")) {
      ++refused;
      continue;
    }
    saved_.emplace_back(path, previous);
  }
  if (saved_.empty() && refused > 0) {
    *message = "governors are not writable (" + std::to_string(refused) +
               " refused; run the server as root to fix the frequency)";
    return false;
  }
  *message = "pinned " + std::to_string(saved_.size()) + " governor(s) to performance";
  if (refused) *message += ", " + std::to_string(refused) + " not writable";
  return true;
}

FrequencyPin::~FrequencyPin() {
  for (const auto& [path, previous] : saved_) {
    if (!write_value(path, previous)) {
      log(LogLevel::kWarning, "could not restore governor '", previous, "' in ", path);
    }
  }
}

}  // namespace orknn::server
