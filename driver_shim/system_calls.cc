#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver_shim/backends.h"

namespace orknn::driver_shim {
namespace {
int real_open(const char* path, int flags) {
  return ::open(path, flags);
}
int real_close(int fd) {
  return ::close(fd);
}
int real_ioctl(int fd, unsigned long request, void* argument) {
  return ::ioctl(fd, request, argument);
}
void* real_mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  return ::mmap(address, length, protection, flags, fd, offset);
}
int real_munmap(void* address, size_t length) {
  return ::munmap(address, length);
}
}  // namespace

const SystemCalls& real_system_calls() {
  static const SystemCalls calls{real_open, real_close, real_ioctl, real_mmap, real_munmap};
  return calls;
}

std::vector<std::vector<uint64_t>> spread_job_time(uint64_t elapsed_ns, uint64_t clock_hz,
                                                   const std::vector<size_t>& task_counts) {
  const uint64_t cycles = elapsed_ns * (clock_hz / 1000000) / 1000;
  std::vector<std::vector<uint64_t>> spread;
  for (size_t count : task_counts) spread.emplace_back(count, count ? cycles / count : 0);
  return spread;
}

}  // namespace orknn::driver_shim
