#include "fake_kernel.h"

#include <drm.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "driver_shim/npu_registers.h"
#include "driver_shim/rknpu/rknpu_uapi.h"
#include "driver_shim/rocket/rocket_uapi.h"

namespace orknn::testing {
namespace {

FakeKernel* g_kernel = nullptr;
constexpr uint64_t kCookieBase = 0xffffff8000000000ull;  // looks like a kernel pointer
constexpr uint64_t kMmapUnit = 4096;

int fail(int error) {
  errno = error;
  return -1;
}

}  // namespace

FakeKernel::FakeKernel(Config config) : config_(std::move(config)) {
  calls_ = {fake_open, fake_close, fake_ioctl, fake_mmap, fake_munmap};
  g_kernel = this;
}

FakeKernel::~FakeKernel() {
  g_kernel = nullptr;
}

int FakeKernel::fake_open(const char* path, int) {
  if (!g_kernel || g_kernel->config_.device_path != path) return fail(ENOENT);
  if (g_kernel->config_.permission_denied) return fail(EACCES);
  return g_kernel->next_fd_++;
}

int FakeKernel::fake_close(int) {
  return 0;
}

int FakeKernel::fake_ioctl(int fd, unsigned long request, void* argument) {
  return g_kernel ? g_kernel->ioctl(fd, request, argument) : fail(EBADF);
}

void* FakeKernel::fake_mmap(void*, size_t length, int, int, int fd, off_t offset) {
  if (!g_kernel) return MAP_FAILED;
  std::lock_guard<std::mutex> lock(g_kernel->mutex_);
  // DRM: the offset names the BO; misc rknpu: the fd is the BO's dma-buf.
  const uint32_t handle = g_kernel->config_.driver == Driver::kRknpuMisc
                              ? static_cast<uint32_t>(fd)
                              : static_cast<uint32_t>(static_cast<uint64_t>(offset) / kMmapUnit);
  Bo* bo = g_kernel->bo_by_handle(handle);
  if (!bo || length > ((bo->size + kMmapUnit - 1) / kMmapUnit) * kMmapUnit) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  return bo->host;
}

int FakeKernel::fake_munmap(void*, size_t) {
  return 0;
}

FakeKernel::Bo* FakeKernel::bo_by_handle(uint32_t handle) {
  auto it = bos_.find(handle);
  return it == bos_.end() ? nullptr : &it->second;
}

FakeKernel::Bo* FakeKernel::bo_by_cookie(uint64_t cookie) {
  return cookie < kCookieBase ? nullptr : bo_by_handle(static_cast<uint32_t>(cookie - kCookieBase));
}

int FakeKernel::create_bo(size_t size, uint32_t flags, Bo* out_bo) {
  auto allocation = emulator_.allocate(size);
  if (!allocation.ok()) return fail(ENOMEM);
  // Misc rknpu hands out dma-buf fds as handles; keep them above the device fds.
  const uint32_t handle =
      config_.driver == Driver::kRknpuMisc ? allocation->handle + 5000 : allocation->handle;
  Bo bo{allocation->handle, allocation->npu_address, allocation->host, size, flags};
  bos_[handle] = bo;
  *out_bo = bo;
  out_bo->handle = handle;
  return 0;
}

int FakeKernel::ioctl(int, unsigned long request, void* argument) {
  if (request == DRM_IOCTL_VERSION) {
    if (config_.driver == Driver::kRknpuMisc) return fail(ENOTTY);
    return drm_version(argument);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return config_.driver == Driver::kRocket ? rocket_ioctl(request, argument)
                                           : rknpu_ioctl(request, argument);
}

int FakeKernel::drm_version(void* argument) {
  auto* version = static_cast<drm_version_t*>(argument);
  const char* name = config_.driver == Driver::kRocket ? "rocket" : "rknpu";
  version->version_major = config_.driver == Driver::kRocket ? config_.rocket_major : 0;
  version->version_minor = config_.driver == Driver::kRocket ? 0 : 9;
  const size_t length = std::strlen(name);
  if (version->name && version->name_len > 0) {
    std::memcpy(version->name, name, std::min<size_t>(length, version->name_len));
  }
  version->name_len = length;
  return 0;
}

int FakeKernel::rknpu_ioctl(unsigned long request, void* argument) {
  using namespace driver_shim::rknpu;
  const bool misc = config_.driver == Driver::kRknpuMisc;
  const bool old_driver = config_.rknpu_version < driver_version(0, 9, 0);
  if (request == (misc ? kMiscAction : kDrmAction)) {
    auto* action = static_cast<Action*>(argument);
    switch (action->flags) {
      case kGetDrvVersion:
        action->value = config_.rknpu_version;
        return 0;
      case kGetHwVersion:
        action->value = 0x46495245;
        return 0;
      case kGetFreq:
        action->value = 1000000000;
        return 0;
      case kActReset:
        ++resets;
        for (int core = 0; core < 3; ++core) emulator_.reset_core(core);
        return 0;
      case kPowerOn:
      case kPowerOff:
      case kGetIommuEn:
        action->value = 1;
        return 0;
      default:
        return fail(EINVAL);
    }
  }
  // An old kernel knows only the 40-byte struct (the DRM core would zero-fill a longer one,
  // but this fake is strict so the backend's choice is tested).
  const bool wide = request == (misc ? kMiscMemCreate : kDrmMemCreate);
  const bool narrow = request == (misc ? kMiscMemCreateOld : kDrmMemCreateOld);
  if (wide || narrow) {
    if (wide && old_driver) return fail(ENOTTY);
    auto* create = static_cast<MemCreateOld*>(argument);  // common prefix
    Bo bo;
    if (create->size == 0) return fail(EINVAL);
    if (create_bo(create->size, create->flags, &bo) != 0) return -1;
    create->handle = bo.handle;
    create->size = (create->size + 4095) / 4096 * 4096;
    create->obj_addr = kCookieBase + bo.handle;
    create->dma_addr = bo.npu_address;
    ++(wide ? wide_mem_creates : old_mem_creates);
    return 0;
  }
  if (!misc && request == kDrmMemMap) {
    auto* map = static_cast<MemMap*>(argument);
    if (!bo_by_handle(map->handle)) return fail(EINVAL);
    map->offset = uint64_t{map->handle} * kMmapUnit;
    return 0;
  }
  if (request == (misc ? kMiscMemSync : kDrmMemSync)) {
    auto* sync = static_cast<MemSync*>(argument);
    Bo* bo = bo_by_cookie(sync->obj_addr);
    if (!bo || sync->offset + sync->size > bo->size || sync->flags == 0) return fail(EINVAL);
    return 0;
  }
  if (request == (misc ? kMiscMemDestroy : kDrmMemDestroy)) {
    auto* destroy = static_cast<MemDestroy*>(argument);
    Bo* bo = bo_by_handle(destroy->handle);
    if (!bo || bo_by_cookie(destroy->obj_addr) != bo) return fail(EINVAL);
    (void)emulator_.release(bo->handle);
    bos_.erase(destroy->handle);
    return 0;
  }
  if (request == (misc ? kMiscSubmit : kDrmSubmit)) return run_rknpu_submit(argument);
  return fail(ENOTTY);
}

int FakeKernel::run_rknpu_submit(void* argument) {
  using namespace driver_shim::rknpu;
  auto* submit = static_cast<Submit*>(argument);
  ++submits;
  last_core_mask = submit->core_mask;
  if (!(submit->flags & kJobPc)) return fail(EINVAL);  // only PC mode exists
  Bo* task_bo = bo_by_cookie(submit->task_obj_addr);
  if (!task_bo || !(task_bo->flags & kMemKernelMapping)) return fail(EINVAL);
  const auto* tasks = reinterpret_cast<const Task*>(task_bo->host);
  const size_t capacity = task_bo->size / sizeof(Task);
  std::vector<int> cores;
  switch (submit->core_mask) {
    case 0:
      cores = {0};
      break;
    case 1:
      cores = {0};
      break;
    case 2:
      cores = {1};
      break;
    case 4:
      cores = {2};
      break;
    case 3:
      cores = {0, 1};
      break;
    case 7:
      cores = {0, 1, 2};
      break;
    default:
      return fail(EINVAL);  // "Unknown core mask"
  }
  if (config_.hang) {
    submit->task_counter = 0;
    ++resets;  // the driver soft-resets after a timeout
    return fail(ETIMEDOUT);
  }
  struct Range {
    uint32_t start, number;
  };
  std::vector<Range> ranges;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (submit->core_mask == 0) {
      ranges.push_back({submit->task_start, submit->task_number});
    } else {
      const SubcoreTask& sub = submit->subcore_task[cores.size() == 3 ? i + 2 : i];
      ranges.push_back({sub.task_start, sub.task_number});
    }
    if (ranges.back().start + ranges.back().number > capacity) return fail(EINVAL);
  }
  std::vector<driver_shim::emu::TaskRunReport> reports(cores.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (ranges[i].number == 0) continue;
    threads.emplace_back([&, i] {
      const Task& first = tasks[ranges[i].start];
      // PC_DATA_AMOUNT = (regcfg_amount + 4 + scale - 1) / scale - 1 with scale 2 (RK3588).
      const uint32_t amount = (first.regcfg_amount + 4 + 1) / 2 - 1;
      reports[i] = emulator_.run_tasks(cores[i], static_cast<uint32_t>(first.regcmd_addr), amount,
                                       ranges[i].number);
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t cycles = 0;
  uint32_t done = 0;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (ranges[i].number == 0) continue;
    if (reports[i].tasks_completed != ranges[i].number) return fail(EIO);
    cores_run |= 1u << cores[i];
    done += reports[i].tasks_completed;
    uint64_t sum = 0;
    for (uint64_t c : reports[i].task_cycles) sum += c;
    cycles = std::max(cycles, sum);
    const_cast<Task&>(tasks[ranges[i].start + ranges[i].number - 1]).int_status =
        reports[i].interrupt_status;
  }
  submit->task_counter = done;
  submit->hw_elapse_time = static_cast<int64_t>(cycles);  // 1 GHz: cycles are ns
  return 0;
}

int FakeKernel::rocket_ioctl(unsigned long request, void* argument) {
  using namespace driver_shim::rocket;
  if (request == kCreateBo) {
    auto* create = static_cast<CreateBo*>(argument);
    Bo bo;
    if (create->size == 0) return fail(EINVAL);
    if (create_bo(create->size, 0, &bo) != 0) return -1;
    create->handle = bo.handle;
    create->dma_address = bo.npu_address;
    create->offset = uint64_t{bo.handle} * kMmapUnit;
    return 0;
  }
  if (request == kGemClose) {
    auto* close = static_cast<GemClose*>(argument);
    if (!bo_by_handle(close->handle)) return fail(EINVAL);
    (void)emulator_.release(bo_by_handle(close->handle)->handle);
    bos_.erase(close->handle);
    busy_.erase(close->handle);
    return 0;
  }
  if (request == kPrepBo) {
    auto* prep = static_cast<PrepBo*>(argument);
    if (prep->reserved != 0 || !bo_by_handle(prep->handle)) return fail(EINVAL);
    return busy_.count(prep->handle) ? fail(ETIMEDOUT) : 0;
  }
  if (request == kFiniBo) {
    auto* fini = static_cast<FiniBo*>(argument);
    if (fini->reserved != 0 || !bo_by_handle(fini->handle)) return fail(EINVAL);
    return 0;
  }
  if (request == kSubmit) {
    auto* submit = static_cast<Submit*>(argument);
    ++submits;
    if (submit->reserved != 0 || submit->job_struct_size != sizeof(Job)) return fail(EINVAL);
    const auto* jobs = reinterpret_cast<const Job*>(static_cast<uintptr_t>(submit->jobs));
    for (uint32_t j = 0; j < submit->job_count; ++j) {
      const Job& job = jobs[j];
      if (job.task_struct_size != sizeof(Task)) return fail(EINVAL);
      const auto* tasks = reinterpret_cast<const Task*>(static_cast<uintptr_t>(job.tasks));
      const auto* writes =
          reinterpret_cast<const uint32_t*>(static_cast<uintptr_t>(job.out_bo_handles));
      if (config_.hang) {
        for (uint32_t w = 0; w < job.out_bo_handle_count; ++w) busy_.insert(writes[w]);
        continue;
      }
      // The scheduler picks a core per job; tasks of one job stay on it, one kick each.
      const int core = static_cast<int>(j % 3);
      for (uint32_t t = 0; t < job.task_count; ++t) {
        if (tasks[t].regcmd_count == 0) return fail(EINVAL);
        const auto report =
            emulator_.run_tasks(core, tasks[t].regcmd, (tasks[t].regcmd_count + 1) / 2 - 1, 1);
        if (report.tasks_completed != 1) return fail(EIO);
        cores_run |= 1u << core;
      }
    }
    return 0;
  }
  return fail(ENOTTY);
}

}  // namespace orknn::testing
