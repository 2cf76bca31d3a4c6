// The vendor rknpu kernel driver's user-space ABI (drivers/rknpu/include/rknpu_ioctl.h of the
// Rockchip BSP, 0.9.x layout; see docs/npu.md for sources). Layouts and ioctl numbers are checked
// at compile time against the values the reference computed for LP64.
#pragma once

#include <linux/ioctl.h>

#include <cstdint>

namespace orknn::driver_shim::rknpu {

struct Action {  // struct rknpu_action
  uint32_t flags;
  uint32_t value;
};

struct MemCreate {  // struct rknpu_mem_create, 0.9.x (48 bytes)
  uint32_t handle;
  uint32_t flags;
  uint64_t size;
  uint64_t obj_addr;
  uint64_t dma_addr;
  uint64_t sram_size;
  int32_t iommu_domain_id;
  uint32_t core_mask;
};

struct MemCreateOld {  // struct rknpu_mem_create before 0.9 (40 bytes)
  uint32_t handle;
  uint32_t flags;
  uint64_t size;
  uint64_t obj_addr;
  uint64_t dma_addr;
  uint64_t sram_size;
};

struct MemMap {
  uint32_t handle;
  uint32_t reserved;
  uint64_t offset;
};

struct MemDestroy {
  uint32_t handle;
  uint32_t reserved;
  uint64_t obj_addr;
};

struct MemSync {
  uint32_t flags;
  uint32_t reserved;
  uint64_t obj_addr;
  uint64_t offset;
  uint64_t size;
};

#pragma pack(push, 1)
struct Task {  // struct rknpu_task, __packed, read by the kernel from the task BO
  uint32_t flags;
  uint32_t op_idx;
  uint32_t enable_mask;
  uint32_t int_mask;
  uint32_t int_clear;
  uint32_t int_status;
  uint32_t regcfg_amount;  // commands excluding the 4-word PC tail
  uint32_t regcfg_offset;
  uint64_t regcmd_addr;
};
#pragma pack(pop)

struct SubcoreTask {
  uint32_t task_start;
  uint32_t task_number;
};

struct Submit {  // struct rknpu_submit, 0.9.x
  uint32_t flags;
  uint32_t timeout;  // ms
  uint32_t task_start;
  uint32_t task_number;
  uint32_t task_counter;
  int32_t priority;
  uint64_t task_obj_addr;
  uint32_t iommu_domain_id;
  uint32_t reserved;
  uint64_t task_base_addr;
  int64_t hw_elapse_time;
  uint32_t core_mask;
  int32_t fence_fd;
  SubcoreTask subcore_task[5];
};

static_assert(sizeof(Action) == 8);
static_assert(sizeof(MemCreate) == 48);
static_assert(sizeof(MemCreateOld) == 40);
static_assert(sizeof(MemMap) == 16);
static_assert(sizeof(MemDestroy) == 16);
static_assert(sizeof(MemSync) == 32);
static_assert(sizeof(Task) == 40);
static_assert(sizeof(Submit) == 104);
static_assert(offsetof(Submit, task_obj_addr) == 24 && offsetof(Submit, task_base_addr) == 40 &&
              offsetof(Submit, core_mask) == 56 && offsetof(Submit, subcore_task) == 64);

// DRM flavour: DRM_IOWR(DRM_COMMAND_BASE + nr, type) = _IOWR('d', 0x40 + nr, type).
constexpr unsigned long kDrmAction = _IOWR('d', 0x40, Action);
constexpr unsigned long kDrmSubmit = _IOWR('d', 0x41, Submit);
constexpr unsigned long kDrmMemCreate = _IOWR('d', 0x42, MemCreate);
constexpr unsigned long kDrmMemCreateOld = _IOWR('d', 0x42, MemCreateOld);
constexpr unsigned long kDrmMemMap = _IOWR('d', 0x43, MemMap);
constexpr unsigned long kDrmMemDestroy = _IOWR('d', 0x44, MemDestroy);
constexpr unsigned long kDrmMemSync = _IOWR('d', 0x45, MemSync);
// misc flavour (/dev/rknpu): _IOWR('r', nr, type).
constexpr unsigned long kMiscAction = _IOWR('r', 0x00, Action);
constexpr unsigned long kMiscSubmit = _IOWR('r', 0x01, Submit);
constexpr unsigned long kMiscMemCreate = _IOWR('r', 0x02, MemCreate);
constexpr unsigned long kMiscMemCreateOld = _IOWR('r', 0x02, MemCreateOld);
constexpr unsigned long kMiscMemDestroy = _IOWR('r', 0x04, MemDestroy);
constexpr unsigned long kMiscMemSync = _IOWR('r', 0x05, MemSync);

#if defined(__LP64__)
static_assert(kDrmAction == 0xc0086440 && kDrmSubmit == 0xc0686441);
static_assert(kDrmMemCreate == 0xc0306442 && kDrmMemCreateOld == 0xc0286442);
static_assert(kDrmMemMap == 0xc0106443 && kDrmMemDestroy == 0xc0106444 &&
              kDrmMemSync == 0xc0206445);
static_assert(kMiscAction == 0xc0087200 && kMiscSubmit == 0xc0687201 &&
              kMiscMemCreate == 0xc0307202);
#endif

enum MemFlags : uint32_t {
  kMemContiguous = 0,
  kMemNonContiguous = 1u << 0,
  kMemCacheable = 1u << 1,
  kMemWriteCombine = 1u << 2,
  kMemKernelMapping = 1u << 3,
  kMemIommu = 1u << 4,
  kMemZeroing = 1u << 5,
};
enum SyncFlags : uint32_t { kSyncToDevice = 1, kSyncFromDevice = 2 };
enum JobFlags : uint32_t { kJobPc = 1u << 0, kJobNonBlock = 1u << 1, kJobPingPong = 1u << 2 };
enum ActionCode : uint32_t {
  kGetHwVersion = 0,
  kGetDrvVersion = 1,
  kGetFreq = 2,
  kActReset = 6,
  kGetIommuEn = 18,
  kPowerOn = 20,
  kPowerOff = 21,
};

constexpr uint32_t driver_version(uint32_t major, uint32_t minor, uint32_t patch) {
  return major * 10000 + minor * 100 + patch;
}

}  // namespace orknn::driver_shim::rknpu
