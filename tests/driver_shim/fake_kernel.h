// A fake kernel for the rknpu and rocket backends: open/ioctl/mmap as driver_shim's SystemCalls,
// implementing each UAPI's semantics (handles, obj_addr cookies, mmap offsets, the task BO the
// kernel reads, subcore ranges, PC chain amounts, implicit-sync BO waits) on top of the emulator.
// One instance at a time (the system calls are plain function pointers).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "driver_shim/backends.h"
#include "driver_shim/emu/emulator.h"

namespace orknn::testing {

class FakeKernel {
 public:
  enum class Driver { kRknpuDrm, kRknpuMisc, kRocket };
  struct Config {
    Driver driver = Driver::kRknpuDrm;
    std::string device_path = "/dev/dri/renderD129";  // where the driver's node is
    bool permission_denied = false;                   // opening it fails with EACCES
    uint32_t rknpu_version = 906;                     // GET_DRV_VERSION
    int rocket_major = 1;
    bool hang = false;  // jobs never finish: submits time out / BOs stay busy
  };

  explicit FakeKernel(Config config);
  ~FakeKernel();

  const driver_shim::SystemCalls& calls() const { return calls_; }
  void set_hang(bool hang) { config_.hang = hang; }

  // What the backends did, for the tests to check the protocol.
  int resets = 0;
  int submits = 0;
  int old_mem_creates = 0;
  int wide_mem_creates = 0;
  uint32_t last_core_mask = 0xdead;
  uint32_t cores_run = 0;  // mask of cores that executed tasks

 private:
  struct Bo {
    uint32_t handle;
    uint32_t npu_address;
    uint8_t* host;
    size_t size;
    uint32_t flags;
  };

  static int fake_open(const char* path, int flags);
  static int fake_close(int fd);
  static int fake_ioctl(int fd, unsigned long request, void* argument);
  static void* fake_mmap(void* address, size_t length, int protection, int flags, int fd,
                         off_t offset);
  static int fake_munmap(void* address, size_t length);

  int ioctl(int fd, unsigned long request, void* argument);
  int drm_version(void* argument);
  int rknpu_ioctl(unsigned long request, void* argument);
  int rocket_ioctl(unsigned long request, void* argument);
  int create_bo(size_t size, uint32_t flags, Bo* out_bo);
  Bo* bo_by_handle(uint32_t handle);
  Bo* bo_by_cookie(uint64_t cookie);
  int run_rknpu_submit(void* argument);

  Config config_;
  driver_shim::SystemCalls calls_;
  driver_shim::emu::Emulator emulator_{3};
  std::mutex mutex_;
  std::map<uint32_t, Bo> bos_;
  std::set<uint32_t> busy_;  // rocket BOs written by a hung job
  int next_fd_ = 1000;
};

}  // namespace orknn::testing
