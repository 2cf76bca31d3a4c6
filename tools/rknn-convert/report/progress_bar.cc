#include "report/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace orknn::convert {

ProgressBar::ProgressBar(std::string label, int total, const char* unit, bool enabled)
    : label_(std::move(label)),
      total_(total),
      unit_(unit),
      enabled_(enabled && total > 0),
      terminal_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {
  update(0);
}

double ProgressBar::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressBar::update(int done) {
  if (!enabled_) return;
  const int decile = done * 10 / total_;
  if (!terminal_) {
    if (decile == last_reported_decile_ && done != total_) return;
    last_reported_decile_ = decile;
  }
  constexpr int kWidth = 30;
  const int filled = done * kWidth / total_;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  const double seconds = elapsed_seconds();
  const double rate = seconds > 0 ? done / seconds : 0.0;
  const double remaining = rate > 0 ? (total_ - done) / rate : 0.0;
  // Slow models (seconds per sample with the reference kernels) read better as s/sample.
  char speed[64];
  if (done == 0) {
    std::snprintf(speed, sizeof(speed), "-");
  } else if (rate >= 1.0) {
    std::snprintf(speed, sizeof(speed), "%.2f %s/s", rate, unit_);
  } else {
    std::snprintf(speed, sizeof(speed), "%.2f %s/s (%.1f s each)", rate, unit_, 1.0 / rate);
  }
  std::fprintf(stderr, "%s%s [%s] %d/%d  %s  ETA %.0fs%s", terminal_ ? "\r" : "", label_.c_str(),
               bar.c_str(), done, total_, speed, remaining, terminal_ ? "   " : "\n");
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_) return;
  if (terminal_) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace orknn::convert
