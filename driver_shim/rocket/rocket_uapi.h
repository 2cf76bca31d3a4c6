// The mainline rocket accel driver's user-space ABI (include/uapi/drm/rocket_accel.h as merged
// for Linux 6.18; see docs/npu.md).
#pragma once

#include <linux/ioctl.h>

#include <cstddef>
#include <cstdint>

namespace orknn::driver_shim::rocket {

struct CreateBo {
  uint32_t size;
  uint32_t handle;
  uint64_t dma_address;
  uint64_t offset;
};

struct PrepBo {
  uint32_t handle;
  uint32_t reserved;
  int64_t timeout_ns;  // absolute, CLOCK_MONOTONIC
};

struct FiniBo {
  uint32_t handle;
  uint32_t reserved;
};

struct Task {
  uint32_t regcmd;
  uint32_t regcmd_count;  // including the PC tail
};

struct Job {
  uint64_t tasks;
  uint64_t in_bo_handles;
  uint64_t out_bo_handles;
  uint32_t task_count;
  uint32_t task_struct_size;
  uint32_t in_bo_handle_count;
  uint32_t out_bo_handle_count;
};

struct Submit {
  uint64_t jobs;
  uint32_t job_count;
  uint32_t job_struct_size;
  uint64_t reserved;
};

struct GemClose {  // struct drm_gem_close
  uint32_t handle;
  uint32_t pad;
};

static_assert(sizeof(CreateBo) == 24 && sizeof(PrepBo) == 16 && sizeof(FiniBo) == 8);
static_assert(sizeof(Task) == 8 && sizeof(Job) == 40 && sizeof(Submit) == 24);

constexpr unsigned long kCreateBo = _IOWR('d', 0x40, CreateBo);
constexpr unsigned long kSubmit = _IOW('d', 0x41, Submit);
constexpr unsigned long kPrepBo = _IOW('d', 0x42, PrepBo);
constexpr unsigned long kFiniBo = _IOW('d', 0x43, FiniBo);
constexpr unsigned long kGemClose = _IOW('d', 0x09, GemClose);
static_assert(kCreateBo == 0xc0186440 && kSubmit == 0x40186441 && kPrepBo == 0x40106442 &&
              kFiniBo == 0x40086443);

}  // namespace orknn::driver_shim::rocket
