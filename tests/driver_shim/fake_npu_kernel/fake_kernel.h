// The fake NPU kernel behind the preloaded open/ioctl/mmap/munmap/close (interpose.cc): one
// process-wide instance that owns the NPU device paths the backends probe (/dev/dri/*,
// /dev/rknpu, /dev/accel/*) while ORKNN_FAKE_NPU is set, and implements the vendor rknpu UAPI
// (DRM or misc flavour) or the mainline rocket UAPI on top of the emulator: handles, obj_addr
// cookies, mmap offsets, the task BO the kernel reads, subcore ranges, PC chain amounts,
// implicit-sync BO waits.
//
// Configuration, read from the environment when the node is opened while no fake fd is open
// (a fresh "boot", which also clears the counters):
//   ORKNN_FAKE_NPU               rknpu | rknpu-misc | rocket; unset: the fake owns nothing
//   ORKNN_FAKE_NPU_NODE          where the driver's node is (default /dev/dri/renderD128,
//                                /dev/rknpu or /dev/accel/accel0); every other NPU path is absent
//   ORKNN_FAKE_NPU_DENY=1        opening the node fails with EACCES
//   ORKNN_FAKE_NPU_RKNPU_VERSION GET_DRV_VERSION answer (MAJOR*10000+MINOR*100+PATCH, default 906)
//   ORKNN_FAKE_NPU_ROCKET_MAJOR  DRM version major of the rocket node (default 1)
// and at every submit:
//   ORKNN_FAKE_NPU_HANG=1        jobs never finish: rknpu submits time out, rocket BOs stay busy
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "driver_shim/emu/emulator.h"
#include "fake_npu_counters.h"

namespace orknn::testing {

// libc's own open and close (the next definitions after the preload), for the placeholder fds.
int real_open(const char* path, int flags);
int real_close(int fd);

class FakeKernel {
 public:
  static FakeKernel& instance();

  // True for the NPU device paths while ORKNN_FAKE_NPU is set.
  bool owns_path(const char* path) const;
  bool owns_fd(int fd);
  bool owns_mapping(void* address);

  // The system calls for what the fake owns; errors set errno like the kernel would.
  int open(const char* path);
  int close(int fd);
  int ioctl(int fd, unsigned long request, void* argument);
  void* mmap(size_t length, int fd, off_t offset);
  int munmap(void* address);

  OrknnFakeNpuCounters counters();

 private:
  enum class Driver { kRknpuDrm, kRknpuMisc, kRocket };
  struct Config {
    Driver driver = Driver::kRknpuDrm;
    std::string device_path;
    bool permission_denied = false;
    uint32_t rknpu_version = 906;
    int rocket_major = 1;
  };
  struct Bo {
    uint32_t emulator_handle;
    uint32_t npu_address;
    uint8_t* host;
    size_t size;
    uint32_t flags;
  };

  void boot();
  int drm_version(void* argument);
  int rknpu_ioctl(unsigned long request, void* argument);
  int rocket_ioctl(unsigned long request, void* argument);
  int create_bo(size_t size, uint32_t flags, uint32_t* out_handle);
  Bo* bo_by_handle(uint32_t handle);
  Bo* bo_by_cookie(uint64_t cookie);
  int run_rknpu_submit(void* argument);

  std::mutex mutex_;
  Config config_;
  std::unique_ptr<driver_shim::emu::Emulator> emulator_;
  std::map<uint32_t, Bo> bos_;      // by the handle user space sees
  std::set<uint32_t> busy_;         // rocket BOs written by a hung job
  std::set<int> device_fds_;        // placeholders for the opened node
  std::set<int> dma_buf_fds_;       // misc rknpu: BO handles are fds
  std::map<void*, uint32_t> maps_;  // host address -> BO handle
  OrknnFakeNpuCounters counters_{};
};

}  // namespace orknn::testing
