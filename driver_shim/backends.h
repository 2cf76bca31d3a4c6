// The kernel-driver backends. They call libc's open/ioctl/mmap/munmap/close directly; tests
// preload a fake kernel (tests/driver_shim/fake_npu_kernel/) that interposes those calls for the
// NPU device nodes and implements each UAPI on top of the emulator, so struct layouts, ioctl
// numbers and the submit protocol run for real without hardware.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "driver_shim/npu.h"

namespace orknn::driver_shim {

// Kernels report one time per job; the per-layer table wants cycles per task. Spreads
// `elapsed_ns` evenly over the tasks of each chain (`task_counts`).
std::vector<std::vector<uint64_t>> spread_job_time(uint64_t elapsed_ns, uint64_t clock_hz,
                                                   const std::vector<size_t>& task_counts);

Result<std::shared_ptr<Npu>> open_rknpu();
Result<std::shared_ptr<Npu>> open_rocket();

}  // namespace orknn::driver_shim
