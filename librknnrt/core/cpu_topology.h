// Which CPUs the CPU kernels' threads prefer. On big.LITTLE SoCs the fast cores are worth
// several slow ones (RK3588: Cortex-A76 on CPUs 4-7, Cortex-A55 on 0-3; RK3576: A72 on 4-7,
// A53 on 0-3), and a fork-join kernel waits for its slowest thread, so a pool of N threads runs
// on the N fastest cores. Read from the kernel's topology, never guessed from the SoC name.
#pragma once

#include <string>
#include <vector>

namespace orknn {

// Of `allowed` (CPU numbers, e.g. the process's affinity), the ones of the highest performance
// class: the largest <sysfs_root>/devices/system/cpu/cpuN/cpu_capacity (the scheduler's
// capacity, 1024 for the biggest core); when no CPU has a readable capacity, the "CPU part"
// lines of <proc_root>/cpuinfo ranked by a table of ARM cores (A76/A78/X1 > A72/A73/A75 >
// A55/A53). Returns `allowed` itself when the CPUs are all alike or nothing can be read.
// Roots are parameters so tests can run the selection on fake sysfs and procfs trees.
std::vector<int> fastest_cpus(const std::vector<int>& allowed,
                              const std::string& sysfs_root = "/sys",
                              const std::string& proc_root = "/proc");

// The CPUs this process may run on (sched_getaffinity), in increasing order.
std::vector<int> allowed_cpus();

// fastest_cpus(allowed_cpus()) computed once, or all allowed CPUs when ORKNN_CPU_BIG_CORES=0.
const std::vector<int>& preferred_cpus();

}  // namespace orknn
