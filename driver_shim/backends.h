// The kernel-driver backends and the system calls they make. Tests replace the system calls
// with a fake kernel (tests/driver_shim/) that implements each UAPI on top of the emulator, so
// struct layouts, ioctl numbers and the submit protocol run for real without hardware.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "driver_shim/npu.h"

namespace orknn::driver_shim {

struct SystemCalls {
  int (*open)(const char* path, int flags) = nullptr;
  int (*close)(int fd) = nullptr;
  int (*ioctl)(int fd, unsigned long request, void* argument) = nullptr;
  void* (*mmap)(void* address, size_t length, int protection, int flags, int fd,
                off_t offset) = nullptr;
  int (*munmap)(void* address, size_t length) = nullptr;
};

const SystemCalls& real_system_calls();

// Kernels report one time per job; the per-layer table wants cycles per task. Spreads
// `elapsed_ns` evenly over the tasks of each chain (`task_counts`).
std::vector<std::vector<uint64_t>> spread_job_time(uint64_t elapsed_ns, uint64_t clock_hz,
                                                   const std::vector<size_t>& task_counts);

Result<std::shared_ptr<Npu>> open_rknpu(const SystemCalls& calls);
Result<std::shared_ptr<Npu>> open_rocket(const SystemCalls& calls);

}  // namespace orknn::driver_shim
