// The fake NPU kernel behind the preloaded open/ioctl/mmap/munmap/close (interpose.cc): one
// process-wide instance that owns the NPU device paths the backends probe (/dev/dri/*,
// /dev/rknpu, /dev/accel/*) while ORKNN_FAKE_NPU is set, and implements the vendor rknpu UAPI
// (DRM or misc flavour) or the mainline rocket UAPI on top of the emulator: handles, obj_addr
// cookies, mmap offsets, the task BO the kernel reads, subcore ranges, PC chain amounts,
// implicit-sync BO waits.
//
// Memory is real: every BO is an emulator buffer backed by a memfd, mmap maps those pages,
// DRM_IOCTL_PRIME_HANDLE_TO_FD hands out a duplicate of the memfd (what a dma-buf is to user
// space: an fd that maps the BO's bytes in any process), and DRM_IOCTL_PRIME_FD_TO_HANDLE (or a
// misc MEM_CREATE with an fd in `handle`) takes back such an fd, or a "foreign dma-buf": a memfd
// whose name starts with "orknn-fake-dma-buf" (what a test makes to stand for a dma_heap
// buffer). Any other fd is refused with EINVAL, a closed one with EBADF, as the kernel does.
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
void* real_mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset);
int real_munmap(void* address, size_t length);

// The memfd name prefix the fake accepts as a dma-buf from another exporter.
constexpr const char* kForeignDmaBufName = "orknn-fake-dma-buf";

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
  void* mmap(size_t length, int protection, int fd, off_t offset);
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
    int memfd;  // the emulator's fd of the pages (borrowed)
  };

  void boot();
  int drm_version(void* argument);
  int rknpu_ioctl(unsigned long request, void* argument);
  int rocket_ioctl(unsigned long request, void* argument);
  int create_bo(size_t size, uint32_t flags, uint32_t* out_handle);
  // Registers an emulator allocation as a BO; misc rknpu names it by `misc_fd`.
  int add_bo(const driver_shim::emu::Emulator::Allocation& allocation, uint32_t flags, int misc_fd,
             uint32_t* out_handle);
  int prime_ioctl(unsigned long request, void* argument);
  // A BO of this device whose pages `fd` maps, or nullptr; *out_error: EBADF or EINVAL when
  // `fd` is neither one of ours nor a foreign dma-buf.
  Bo* bo_of_fd(int fd, bool* out_foreign, int* out_error);
  // Maps a foreign dma-buf (or one of our exports) into the NPU address space as a new BO.
  int import_fd(int fd, uint32_t flags, int misc_fd, uint32_t* out_handle);
  Bo* bo_by_handle(uint32_t handle);
  Bo* bo_by_cookie(uint64_t cookie);
  int run_rknpu_submit(void* argument);

  // Recursive: the emulator inside the fake calls mmap/munmap/close, which come back through
  // the interposer and ask whether the fake owns their fd or mapping.
  std::recursive_mutex mutex_;
  Config config_;
  std::unique_ptr<driver_shim::emu::Emulator> emulator_;
  std::map<uint32_t, Bo> bos_;    // by the handle user space sees
  std::set<uint32_t> busy_;       // rocket BOs written by a hung job
  std::set<int> device_fds_;      // placeholders for the opened node
  std::set<int> dma_buf_fds_;     // misc rknpu: BO handles are fds
  std::map<void*, size_t> maps_;  // host address -> length of the mappings handed out
  OrknnFakeNpuCounters counters_{};
};

}  // namespace orknn::testing
