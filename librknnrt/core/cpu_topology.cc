#include "core/cpu_topology.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#if defined(__linux__)
#include <sched.h>
#endif

namespace orknn {
namespace {

// A file's first line as a non-negative integer (decimal, or hex with 0x), or -1.
long read_number(const std::string& path) {
  std::ifstream file(path);
  std::string text;
  if (!file || !std::getline(file, text)) return -1;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 0);
  if (end == text.c_str() || value < 0) return -1;
  return value;
}

// Relative performance of ARM core part numbers (MIDR "CPU part"), higher is faster; unknown
// parts rank 0, so they never win over a known big core but tie among themselves.
int part_rank(long part) {
  switch (part) {
    case 0xd0b:  // Cortex-A76
    case 0xd0d:  // Cortex-A77
    case 0xd41:  // Cortex-A78
    case 0xd44:  // Cortex-X1
      return 3;
    case 0xd08:  // Cortex-A72
    case 0xd09:  // Cortex-A73
    case 0xd0a:  // Cortex-A75
      return 2;
    case 0xd03:  // Cortex-A53
    case 0xd05:  // Cortex-A55
      return 1;
    default:
      return 0;
  }
}

// processor number -> CPU part, from /proc/cpuinfo's "processor : N" and "CPU part : 0x..".
std::map<int, long> cpu_parts(const std::string& path) {
  std::map<int, long> parts;
  std::ifstream file(path);
  std::string line;
  int processor = -1;
  while (std::getline(file, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const char* value = line.c_str() + colon + 1;
    char* end = nullptr;
    const long number = std::strtol(value, &end, 0);
    if (end == value) continue;
    if (key == "processor") processor = static_cast<int>(number);
    if (key == "CPU part" && processor >= 0) parts[processor] = number;
  }
  return parts;
}

// The CPUs of `allowed` whose score is the largest, or all of them when fewer than two scores
// are known or every known score is the same.
std::vector<int> best_scoring(const std::vector<int>& allowed, const std::map<int, long>& scores) {
  if (scores.size() < 2) return allowed;
  long best = -1, worst = -1;
  for (const auto& [cpu, score] : scores) {
    best = best < 0 ? score : std::max(best, score);
    worst = worst < 0 ? score : std::min(worst, score);
  }
  if (best == worst) return allowed;
  std::vector<int> chosen;
  for (int cpu : allowed) {
    const auto found = scores.find(cpu);
    if (found != scores.end() && found->second == best) chosen.push_back(cpu);
  }
  return chosen;
}

}  // namespace

std::vector<int> fastest_cpus(const std::vector<int>& allowed, const std::string& sysfs_root,
                              const std::string& proc_root) {
  std::map<int, long> capacities;
  for (int cpu : allowed) {
    const long capacity =
        read_number(sysfs_root + "/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpu_capacity");
    if (capacity > 0) capacities[cpu] = capacity;
  }
  if (!capacities.empty()) return best_scoring(allowed, capacities);
  std::map<int, long> ranks;
  for (const auto& [cpu, part] : cpu_parts(proc_root + "/cpuinfo")) {
    if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) {
      ranks[cpu] = part_rank(part);
    }
  }
  return best_scoring(allowed, ranks);
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
#endif
  return cpus;
}

const std::vector<int>& preferred_cpus() {
  static const std::vector<int> cpus = [] {
    const char* setting = std::getenv("ORKNN_CPU_BIG_CORES");
    if (setting && std::string(setting) == "0") return allowed_cpus();
    return fastest_cpus(allowed_cpus());
  }();
  return cpus;
}

}  // namespace orknn
