#include "driver_shim/backends.h"

namespace orknn::driver_shim {

std::vector<std::vector<uint64_t>> spread_job_time(uint64_t elapsed_ns, uint64_t clock_hz,
                                                   const std::vector<size_t>& task_counts) {
  const uint64_t cycles = elapsed_ns * (clock_hz / 1000000) / 1000;
  std::vector<std::vector<uint64_t>> spread;
  for (size_t count : task_counts) spread.emplace_back(count, count ? cycles / count : 0);
  return spread;
}

}  // namespace orknn::driver_shim
