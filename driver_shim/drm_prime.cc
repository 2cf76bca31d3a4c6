#include "driver_shim/drm_prime.h"

#include <fcntl.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

namespace orknn::driver_shim {

Result<int> prime_export(int device_fd, uint32_t handle, const char* driver) {
  PrimeHandle request{handle, O_RDWR | O_CLOEXEC, -1};
  if (::ioctl(device_fd, kPrimeHandleToFd, &request) != 0 || request.fd < 0) {
    return make_error(StatusCode::kFailed, driver, " PRIME_HANDLE_TO_FD of handle ", handle,
                      " failed: ", std::strerror(errno));
  }
  return static_cast<int>(request.fd);
}

Result<uint32_t> prime_import(int device_fd, int fd, const char* driver) {
  PrimeHandle request{0, 0, fd};
  if (::ioctl(device_fd, kPrimeFdToHandle, &request) != 0) {
    // EINVAL: not a dma-buf (a memfd, a file); EBADF: not an open fd.
    return unimplemented(driver, " cannot import fd ", fd,
                         " (PRIME_FD_TO_HANDLE: ", std::strerror(errno),
                         "); only dma-bufs can be imported");
  }
  return request.handle;
}

}  // namespace orknn::driver_shim
