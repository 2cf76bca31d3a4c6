#include "core/cpu_caches.h"

#include <cstdlib>
#include <fstream>

#include "core/cpu_topology.h"

namespace orknn {
namespace {

// The first line of a sysfs file, or "" if it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line)) return "";
  return line;
}

// "32K", "1024K", "1M" or a plain byte count; 0 when malformed.
size_t parse_size(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  unsigned long long scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1024;
  if (*end == 'M' || *end == 'm') scale = 1024 * 1024;
  return static_cast<size_t>(value * scale);
}

// Sizes outside this range are a misreading, not a cache the blocking could use.
bool plausible(size_t bytes) {
  return bytes >= 4 * 1024 && bytes <= 256 * 1024 * 1024;
}

}  // namespace

CpuCacheSizes read_cpu_cache_sizes(int cpu, const std::string& sysfs_root) {
  CpuCacheSizes sizes{};
  const std::string directory =
      sysfs_root + "/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index";
  // Linux numbers a CPU's caches index0.. without gaps; a handful covers L1i, L1d, L2, L3.
  for (int index = 0; index < 8; ++index) {
    const std::string prefix = directory + std::to_string(index) + "/";
    const std::string level = first_line(prefix + "level");
    if (level.empty()) break;
    const std::string type = first_line(prefix + "type");
    if (type != "Data" && type != "Unified") continue;
    const size_t bytes = parse_size(first_line(prefix + "size"));
    if (!plausible(bytes)) continue;
    if (level == "1") sizes.level1_data = bytes;
    if (level == "2") sizes.level2 = bytes;
  }
  if (sizes.level1_data == 0) sizes.level1_data = kFallbackCacheSizes.level1_data;
  if (sizes.level2 == 0) sizes.level2 = kFallbackCacheSizes.level2;
  return sizes;
}

const CpuCacheSizes& cpu_cache_sizes() {
  static const CpuCacheSizes sizes = [] {
    const std::vector<int>& cpus = preferred_cpus();
    return read_cpu_cache_sizes(cpus.empty() ? 0 : cpus.front());
  }();
  return sizes;
}

}  // namespace orknn
