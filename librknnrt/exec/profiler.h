// Per-node timing of one run, filled by the executables when profiling is on.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace orknn::exec {

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;

  void reset(size_t node_count) { node_microseconds_.assign(node_count, 0); }
  void record(size_t node_index, Clock::duration elapsed) {
    node_microseconds_[node_index] =
        std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
  }
  const std::vector<int64_t>& node_microseconds() const { return node_microseconds_; }

 private:
  std::vector<int64_t> node_microseconds_;
};

}  // namespace orknn::exec
