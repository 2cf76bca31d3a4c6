// DRM PRIME: a GEM handle of a DRM/accel node <-> a dma-buf fd. Both kernel backends (rknpu on a
// DRM node, rocket) share these generic DRM ioctls; the vendor misc device has none.
#pragma once

#include <linux/ioctl.h>

#include <cstdint>

#include "core/status.h"

namespace orknn::driver_shim {

struct PrimeHandle {  // struct drm_prime_handle
  uint32_t handle;
  uint32_t flags;  // handle -> fd only: O_RDWR | O_CLOEXEC (DRM_RDWR | DRM_CLOEXEC)
  int32_t fd;
};
static_assert(sizeof(PrimeHandle) == 12);

constexpr unsigned long kPrimeHandleToFd = _IOWR('d', 0x2d, PrimeHandle);
constexpr unsigned long kPrimeFdToHandle = _IOWR('d', 0x2e, PrimeHandle);
static_assert(kPrimeHandleToFd == 0xc00c642d && kPrimeFdToHandle == 0xc00c642e);

// Exports GEM `handle` of `device_fd` as a dma-buf fd (read-write, close-on-exec) the caller
// owns. `driver` names the backend in errors.
Result<int> prime_export(int device_fd, uint32_t handle, const char* driver);
// Imports the dma-buf `fd` as a GEM handle of `device_fd` (the caller keeps `fd`). A dma-buf
// exported by the same node comes back as its original handle, so callers never import their
// own exports.
Result<uint32_t> prime_import(int device_fd, int fd, const char* driver);

}  // namespace orknn::driver_shim
