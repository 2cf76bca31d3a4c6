// Per-node timing of one run, filled by the executables when profiling is on.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

namespace orknn::exec {

// What an NPU reports for one node: cycles per core (modeled when `emulated`), the node's MACs
// and the clock, from which the perf table's Cycles, MacUsage and WorkLoad columns come.
struct NpuNodeTiming {
  bool valid = false;
  bool emulated = false;
  uint64_t cycles = 0;  // the longest core
  std::array<uint64_t, 3> core_cycles{};
  uint64_t macs = 0;
  uint64_t clock_hz = 1000000000;
};

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;

  void reset(size_t node_count) {
    node_microseconds_.assign(node_count, 0);
    npu_timings_.assign(node_count, NpuNodeTiming{});
  }
  void record(size_t node_index, Clock::duration elapsed) {
    node_microseconds_[node_index] =
        std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
  }
  const std::vector<int64_t>& node_microseconds() const { return node_microseconds_; }
  // NPU nodes: their time is the NPU's (modeled on the emulator), not the host's.
  void record_npu(size_t node_index, const NpuNodeTiming& timing) {
    npu_timings_[node_index] = timing;
    node_microseconds_[node_index] =
        static_cast<int64_t>(timing.cycles * 1000000 / (timing.clock_hz ? timing.clock_hz : 1));
  }
  const std::vector<NpuNodeTiming>& npu_timings() const { return npu_timings_; }

 private:
  std::vector<int64_t> node_microseconds_;
  std::vector<NpuNodeTiming> npu_timings_;
};

}  // namespace orknn::exec
