// The data cache sizes the CPU kernels block their work for, read from the running CPU (never a
// constant per machine: CI runs on Zen3 with a 512 KiB L2 and on Zen4 with 1 MiB, boards on
// Cortex-A76 with 512 KiB and A55 with 128 KiB or none).
#pragma once

#include <cstddef>
#include <string>

namespace orknn {

struct CpuCacheSizes {
  size_t level1_data = 0;  // bytes, per core
  size_t level2 = 0;       // bytes, as seen by one core (a cluster-shared L2 counts whole)
};

// What the kernels assume when nothing can be read: the smallest common x86 and big-core ARM
// figures (32 KiB L1 data, 512 KiB L2).
constexpr CpuCacheSizes kFallbackCacheSizes{32 * 1024, 512 * 1024};

// The caches of `cpu` from <sysfs_root>/devices/system/cpu/cpuN/cache/index*/{level,type,size}
// ("Data" or "Unified" caches of levels 1 and 2; sizes like "48K" or "1M"). A level that cannot
// be read, or an implausible size, takes kFallbackCacheSizes' value. The root is a parameter
// so tests can use fake sysfs trees.
CpuCacheSizes read_cpu_cache_sizes(int cpu, const std::string& sysfs_root = "/sys");

// read_cpu_cache_sizes of the first CPU the pool's threads prefer (core/cpu_topology.h: the big
// cores of a big.LITTLE SoC), read once.
const CpuCacheSizes& cpu_cache_sizes();

}  // namespace orknn
