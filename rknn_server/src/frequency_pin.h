// eval_perf's fix_freq: sets the NPU devfreq governor(s) and the CPU cpufreq policies to
// "performance" for the timed runs and puts the previous governors back afterwards (in the
// destructor). Works where the files exist and are writable (root on a board); elsewhere it
// changes nothing and says why. Paths are under `sysfs_root` so tests can use a fake tree.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace orknn::server {

class FrequencyPin {
 public:
  explicit FrequencyPin(std::string sysfs_root) : root_(std::move(sysfs_root)) {}
  ~FrequencyPin();
  FrequencyPin(const FrequencyPin&) = delete;
  FrequencyPin& operator=(const FrequencyPin&) = delete;

  // True when at least one governor was pinned; `message` says what was done or why not.
  bool pin(std::string* message);

 private:
  std::string root_;
  std::vector<std::pair<std::string, std::string>> saved_;  // governor file, previous value
};

}  // namespace orknn::server
