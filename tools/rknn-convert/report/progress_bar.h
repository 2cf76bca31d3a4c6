// A one-line progress bar on stderr: "calibration [#########.........] 9/20  3.1 samples/s  ETA
// 4s". Redrawn in place on a terminal; elsewhere (logs, CI) printed at most every 10% so logs stay
// readable.
#pragma once

#include <chrono>
#include <string>

namespace orknn::convert {

class ProgressBar {
 public:
  ProgressBar(std::string label, int total, const char* unit, bool enabled);
  void update(int done);
  void finish();
  double elapsed_seconds() const;

 private:
  std::string label_;
  int total_;
  const char* unit_;
  bool enabled_;
  bool terminal_;
  int last_reported_decile_ = -1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace orknn::convert
