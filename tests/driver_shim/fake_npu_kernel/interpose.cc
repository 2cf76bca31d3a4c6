// The preloaded entry points: libc's open/ioctl/mmap/munmap/close for the fake NPU's paths, fds
// and mappings, and the real libc (the next definition, dlsym(RTLD_NEXT)) for everything else.
// Under ASan, libasan comes first in LD_PRELOAD; its interceptors then reach these through
// their own RTLD_NEXT lookup.
#undef _FORTIFY_SOURCE  // glibc's fortified open() is an inline wrapper we cannot redefine

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "fake_kernel.h"

namespace orknn::testing {
namespace {

template <typename Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

using OpenFunction = int (*)(const char*, int, ...);
using CloseFunction = int (*)(int);
using IoctlFunction = int (*)(int, unsigned long, ...);
using MmapFunction = void* (*)(void*, size_t, int, int, int, off_t);
using Mmap64Function = void* (*)(void*, size_t, int, int, int, off64_t);
using MunmapFunction = int (*)(void*, size_t);

// open(2)'s mode argument exists only with O_CREAT or O_TMPFILE.
mode_t mode_argument(int flags, va_list arguments) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(arguments, mode_t) : 0;
}

int open_through(OpenFunction next, const char* path, int flags, mode_t mode) {
  FakeKernel& kernel = FakeKernel::instance();
  if (kernel.owns_path(path)) return kernel.open(path);
  return next(path, flags, mode);
}

}  // namespace

int real_open(const char* path, int flags) {
  static const OpenFunction next = next_definition<OpenFunction>("open");
  return next(path, flags);
}

int real_close(int fd) {
  static const CloseFunction next = next_definition<CloseFunction>("close");
  return next(fd);
}

void* real_mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  static const MmapFunction next = next_definition<MmapFunction>("mmap");
  return next(address, length, protection, flags, fd, offset);
}

int real_munmap(void* address, size_t length) {
  static const MunmapFunction next = next_definition<MunmapFunction>("munmap");
  return next(address, length);
}

}  // namespace orknn::testing

using orknn::testing::FakeKernel;

extern "C" {

__attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  const mode_t mode = orknn::testing::mode_argument(flags, arguments);
  va_end(arguments);
  static const auto next = orknn::testing::next_definition<orknn::testing::OpenFunction>("open");
  return orknn::testing::open_through(next, path, flags, mode);
}

__attribute__((visibility("default"))) int open64(const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  const mode_t mode = orknn::testing::mode_argument(flags, arguments);
  va_end(arguments);
  static const auto next = orknn::testing::next_definition<orknn::testing::OpenFunction>("open64");
  return orknn::testing::open_through(next, path, flags, mode);
}

__attribute__((visibility("default"))) int close(int fd) {
  FakeKernel& kernel = FakeKernel::instance();
  if (kernel.owns_fd(fd)) return kernel.close(fd);
  return orknn::testing::real_close(fd);
}

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...) noexcept {
  va_list arguments;
  va_start(arguments, request);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  FakeKernel& kernel = FakeKernel::instance();
  if (kernel.owns_fd(fd)) return kernel.ioctl(fd, request, argument);
  static const auto next = orknn::testing::next_definition<orknn::testing::IoctlFunction>("ioctl");
  return next(fd, request, argument);
}

__attribute__((visibility("default"))) void* mmap(void* address, size_t length, int protection,
                                                  int flags, int fd, off_t offset) noexcept {
  FakeKernel& kernel = FakeKernel::instance();
  if (fd >= 0 && kernel.owns_fd(fd)) return kernel.mmap(length, protection, fd, offset);
  static const auto next = orknn::testing::next_definition<orknn::testing::MmapFunction>("mmap");
  return next(address, length, protection, flags, fd, offset);
}

__attribute__((visibility("default"))) void* mmap64(void* address, size_t length, int protection,
                                                    int flags, int fd, off64_t offset) noexcept {
  FakeKernel& kernel = FakeKernel::instance();
  if (fd >= 0 && kernel.owns_fd(fd)) {
    return kernel.mmap(length, protection, fd, static_cast<off_t>(offset));
  }
  static const auto next =
      orknn::testing::next_definition<orknn::testing::Mmap64Function>("mmap64");
  return next(address, length, protection, flags, fd, offset);
}

__attribute__((visibility("default"))) int munmap(void* address, size_t length) noexcept {
  FakeKernel& kernel = FakeKernel::instance();
  if (kernel.owns_mapping(address)) return kernel.munmap(address);
  static const auto next =
      orknn::testing::next_definition<orknn::testing::MunmapFunction>("munmap");
  return next(address, length);
}

__attribute__((visibility("default"))) OrknnFakeNpuCounters orknn_fake_npu_counters(void) {
  return FakeKernel::instance().counters();
}

}  // extern "C"
