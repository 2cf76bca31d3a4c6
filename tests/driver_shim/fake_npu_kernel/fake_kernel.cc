#include "fake_kernel.h"

#include <drm.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "driver_shim/drm_prime.h"
#include "driver_shim/npu_registers.h"
#include "driver_shim/rknpu/rknpu_uapi.h"
#include "driver_shim/rocket/rocket_uapi.h"

namespace orknn::testing {
namespace {

constexpr uint64_t kCookieBase = 0xffffff8000000000ull;  // looks like a kernel pointer
// A BO's fake mmap offset is its handle in the upper 32 bits, so offsets inside it still work.
constexpr int kMmapHandleShift = 32;
constexpr uint64_t kPageSize = 4096;
constexpr int kCoreCount = 3;

int fail(int error) {
  errno = error;
  return -1;
}

bool environment_flag(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "1") == 0;
}

long environment_number(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

bool starts_with(const char* text, const char* prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

FakeKernel& FakeKernel::instance() {
  // Never destroyed: the process may close fds after static destructors have run.
  static FakeKernel* kernel = new FakeKernel;
  return *kernel;
}

bool FakeKernel::owns_path(const char* path) const {
  if (!path || !std::getenv("ORKNN_FAKE_NPU")) return false;
  return starts_with(path, "/dev/dri/") || starts_with(path, "/dev/accel/") ||
         std::strcmp(path, "/dev/rknpu") == 0;
}

bool FakeKernel::owns_fd(int fd) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return device_fds_.count(fd) || dma_buf_fds_.count(fd);
}

bool FakeKernel::owns_mapping(void* address) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return maps_.count(address) != 0;
}

OrknnFakeNpuCounters FakeKernel::counters() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  OrknnFakeNpuCounters counters = counters_;
  counters.live_bos = static_cast<int>(bos_.size());
  return counters;
}

void FakeKernel::boot() {
  const std::string driver = std::getenv("ORKNN_FAKE_NPU");
  config_ = Config{};
  config_.driver = driver == "rocket"       ? Driver::kRocket
                   : driver == "rknpu-misc" ? Driver::kRknpuMisc
                                            : Driver::kRknpuDrm;
  const char* node = std::getenv("ORKNN_FAKE_NPU_NODE");
  config_.device_path = node && *node                          ? node
                        : config_.driver == Driver::kRocket    ? "/dev/accel/accel0"
                        : config_.driver == Driver::kRknpuMisc ? "/dev/rknpu"
                                                               : "/dev/dri/renderD128";
  config_.permission_denied = environment_flag("ORKNN_FAKE_NPU_DENY");
  config_.rknpu_version =
      static_cast<uint32_t>(environment_number("ORKNN_FAKE_NPU_RKNPU_VERSION", 906));
  config_.rocket_major = static_cast<int>(environment_number("ORKNN_FAKE_NPU_ROCKET_MAJOR", 1));
  emulator_ = std::make_unique<driver_shim::emu::Emulator>(kCoreCount);
  bos_.clear();
  busy_.clear();
  maps_.clear();
  counters_ = OrknnFakeNpuCounters{};
  counters_.last_core_mask = 0xdead;
}

int FakeKernel::open(const char* path) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (device_fds_.empty() && dma_buf_fds_.empty()) boot();
  if (config_.device_path != path) return fail(ENOENT);
  if (config_.permission_denied) return fail(EACCES);
  // A real fd as the placeholder, so fd numbers never collide with the process's own files.
  const int fd = real_open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd >= 0) device_fds_.insert(fd);
  return fd;
}

int FakeKernel::close(int fd) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  device_fds_.erase(fd);
  dma_buf_fds_.erase(fd);
  return real_close(fd);
}

void* FakeKernel::mmap(size_t length, int protection, int fd, off_t offset) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // DRM: the offset names the BO and a page inside it; misc rknpu: the fd is the BO's dma-buf.
  const bool dma_buf = dma_buf_fds_.count(fd) != 0;
  const uint64_t raw = static_cast<uint64_t>(offset);
  const uint32_t handle =
      dma_buf ? static_cast<uint32_t>(fd) : static_cast<uint32_t>(raw >> kMmapHandleShift);
  const uint64_t inside = dma_buf ? raw : raw & ((uint64_t{1} << kMmapHandleShift) - 1);
  Bo* bo = bo_by_handle(handle);
  const uint64_t pages = (bo ? bo->size + kPageSize - 1 : 0) / kPageSize * kPageSize;
  if (!bo || length == 0 || inside % kPageSize != 0 || inside + length > pages) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  void* address =
      real_mmap(nullptr, length, protection, MAP_SHARED, bo->memfd, static_cast<off_t>(inside));
  if (address != MAP_FAILED) maps_[address] = length;
  return address;
}

int FakeKernel::munmap(void* address) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  auto it = maps_.find(address);
  if (it == maps_.end()) return fail(EINVAL);
  const size_t length = it->second;
  maps_.erase(it);
  return real_munmap(address, length);
}

FakeKernel::Bo* FakeKernel::bo_by_handle(uint32_t handle) {
  auto it = bos_.find(handle);
  return it == bos_.end() ? nullptr : &it->second;
}

FakeKernel::Bo* FakeKernel::bo_by_cookie(uint64_t cookie) {
  return cookie < kCookieBase ? nullptr : bo_by_handle(static_cast<uint32_t>(cookie - kCookieBase));
}

int FakeKernel::add_bo(const driver_shim::emu::Emulator::Allocation& allocation, uint32_t flags,
                       int misc_fd, uint32_t* out_handle) {
  uint32_t handle = allocation.handle;
  if (config_.driver == Driver::kRknpuMisc) {  // misc rknpu hands out dma-buf fds as handles
    if (misc_fd < 0) {
      (void)emulator_->release(allocation.handle);
      return fail(EMFILE);
    }
    dma_buf_fds_.insert(misc_fd);
    handle = static_cast<uint32_t>(misc_fd);
  }
  bos_[handle] =
      Bo{allocation.handle, allocation.npu_address, allocation.host, allocation.size, flags,
         allocation.fd};
  *out_handle = handle;
  return 0;
}

int FakeKernel::create_bo(size_t size, uint32_t flags, uint32_t* out_handle) {
  auto allocation = emulator_->allocate(size, true);  // every BO can be exported
  if (!allocation.ok()) return fail(ENOMEM);
  // The misc dma-buf fd is another fd of the BO's memfd, so it maps the same pages.
  const int misc_fd =
      config_.driver == Driver::kRknpuMisc ? fcntl(allocation->fd, F_DUPFD_CLOEXEC, 0) : -1;
  return add_bo(*allocation, flags, misc_fd, out_handle);
}

FakeKernel::Bo* FakeKernel::bo_of_fd(int fd, bool* out_foreign, int* out_error) {
  *out_foreign = false;
  struct stat target;
  if (fstat(fd, &target) != 0) {
    *out_error = EBADF;
    return nullptr;
  }
  for (auto& [handle, bo] : bos_) {
    struct stat mine;
    if (fstat(bo.memfd, &mine) == 0 && mine.st_ino == target.st_ino &&
        mine.st_dev == target.st_dev) {
      return &bo;
    }
  }
  // What the kernel's dma_buf_get() accepts from other exporters: here, the tests' stand-ins.
  char link[64], name[256] = {};
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, name, sizeof(name) - 1);
  const std::string prefix = std::string("/memfd:") + kForeignDmaBufName;
  if (length > 0 && std::strncmp(name, prefix.c_str(), prefix.size()) == 0) {
    *out_foreign = true;
  } else {
    *out_error = EINVAL;  // dma_buf_get: not a dma-buf
  }
  return nullptr;
}

int FakeKernel::import_fd(int fd, uint32_t flags, int misc_fd, uint32_t* out_handle) {
  struct stat info;
  if (fstat(fd, &info) != 0) return fail(EBADF);
  auto allocation = emulator_->adopt(fd, static_cast<size_t>(info.st_size), 0);
  if (!allocation.ok()) return fail(ENOMEM);
  ++counters_.prime_imports;
  return add_bo(*allocation, flags, misc_fd, out_handle);
}

int FakeKernel::prime_ioctl(unsigned long request, void* argument) {
  auto* prime = static_cast<driver_shim::PrimeHandle*>(argument);
  if (request == driver_shim::kPrimeHandleToFd) {
    if (prime->flags & ~static_cast<uint32_t>(O_RDWR | O_CLOEXEC)) return fail(EINVAL);
    Bo* bo = bo_by_handle(prime->handle);
    if (!bo) return fail(ENOENT);
    const int fd = fcntl(bo->memfd, (prime->flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
    if (fd < 0) return fail(EMFILE);
    prime->fd = fd;
    ++counters_.prime_exports;
    return 0;
  }
  // FD_TO_HANDLE: our own export comes back as its original handle, like drm_gem_prime.
  bool foreign = false;
  int error = 0;
  if (Bo* bo = bo_of_fd(prime->fd, &foreign, &error)) {
    for (const auto& [handle, candidate] : bos_) {
      if (&candidate == bo) prime->handle = handle;
    }
    ++counters_.prime_imports;
    return 0;
  }
  if (!foreign) return fail(error);
  return import_fd(prime->fd, 0, -1, &prime->handle);
}

int FakeKernel::ioctl(int fd, unsigned long request, void* argument) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (!device_fds_.count(fd)) return fail(ENOTTY);  // a dma-buf fd
  if (request == DRM_IOCTL_VERSION) {
    if (config_.driver == Driver::kRknpuMisc) return fail(ENOTTY);
    return drm_version(argument);
  }
  if (request == driver_shim::kPrimeHandleToFd || request == driver_shim::kPrimeFdToHandle) {
    if (config_.driver == Driver::kRknpuMisc) return fail(ENOTTY);  // not a DRM node
    return prime_ioctl(request, argument);
  }
  return config_.driver == Driver::kRocket ? rocket_ioctl(request, argument)
                                           : rknpu_ioctl(request, argument);
}

int FakeKernel::drm_version(void* argument) {
  auto* version = static_cast<drm_version_t*>(argument);
  const bool rocket = config_.driver == Driver::kRocket;
  version->version_major = rocket ? config_.rocket_major : 0;
  version->version_minor = rocket ? 0 : 9;
  version->version_patchlevel = 0;
  // Like the DRM core: copy what fits, always report the full length (libdrm asks twice).
  auto copy_out = [](const char* text, char* buffer, __kernel_size_t* length) {
    const size_t size = std::strlen(text);
    if (buffer && *length > 0) std::memcpy(buffer, text, std::min<size_t>(size, *length));
    *length = size;
  };
  copy_out(rocket ? "rocket" : "rknpu", version->name, &version->name_len);
  copy_out("20240828", version->date, &version->date_len);
  copy_out(rocket ? "rocket DRM" : "RKNPU driver", version->desc, &version->desc_len);
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
        ++counters_.resets;
        for (int core = 0; core < kCoreCount; ++core) emulator_->reset_core(core);
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
    uint32_t handle = 0;
    counters_.last_mem_create_flags = create->flags;
    if (create->handle != 0 && !misc) {
      // DRM: a handle of this file (e.g. from PRIME import) gets its info, nothing is allocated.
      if (!bo_by_handle(create->handle)) return fail(EINVAL);
      handle = create->handle;
    } else if (create->handle != 0) {
      // misc: the handle is a dma-buf fd to import; it becomes the BO's handle.
      const int fd = static_cast<int>(create->handle);
      bool foreign = false;
      int error = 0;
      if (!bo_of_fd(fd, &foreign, &error) && !foreign) return fail(error);
      if (import_fd(fd, create->flags, fd, &handle) != 0) return -1;
    } else {
      if (create->size == 0) return fail(EINVAL);
      if (create_bo(create->size, create->flags, &handle) != 0) return -1;
    }
    const Bo& bo = bos_[handle];
    create->handle = handle;
    create->size = (bo.size + kPageSize - 1) / kPageSize * kPageSize;
    create->obj_addr = kCookieBase + handle;
    create->dma_addr = bo.npu_address;
    ++(wide ? counters_.wide_mem_creates : counters_.old_mem_creates);
    return 0;
  }
  if (!misc && request == kDrmMemMap) {
    auto* map = static_cast<MemMap*>(argument);
    if (!bo_by_handle(map->handle)) return fail(EINVAL);
    map->offset = uint64_t{map->handle} << kMmapHandleShift;
    return 0;
  }
  if (request == (misc ? kMiscMemSync : kDrmMemSync)) {
    auto* sync = static_cast<MemSync*>(argument);
    Bo* bo = bo_by_cookie(sync->obj_addr);
    if (!bo || sync->offset + sync->size > bo->size || sync->flags == 0) return fail(EINVAL);
    ++counters_.mem_syncs;
    return 0;
  }
  if (request == (misc ? kMiscMemDestroy : kDrmMemDestroy)) {
    auto* destroy = static_cast<MemDestroy*>(argument);
    Bo* bo = bo_by_handle(destroy->handle);
    if (!bo || bo_by_cookie(destroy->obj_addr) != bo) return fail(EINVAL);
    (void)emulator_->release(bo->emulator_handle);
    bos_.erase(destroy->handle);
    return 0;
  }
  if (request == (misc ? kMiscSubmit : kDrmSubmit)) return run_rknpu_submit(argument);
  return fail(ENOTTY);
}

int FakeKernel::run_rknpu_submit(void* argument) {
  using namespace driver_shim::rknpu;
  auto* submit = static_cast<Submit*>(argument);
  ++counters_.submits;
  counters_.last_core_mask = submit->core_mask;
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
  if (environment_flag("ORKNN_FAKE_NPU_HANG")) {
    submit->task_counter = 0;
    ++counters_.resets;  // the driver soft-resets after a timeout
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
      reports[i] = emulator_->run_tasks(cores[i], static_cast<uint32_t>(first.regcmd_addr), amount,
                                        ranges[i].number);
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t cycles = 0;
  uint32_t done = 0;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (ranges[i].number == 0) continue;
    if (reports[i].tasks_completed != ranges[i].number) return fail(EIO);
    counters_.cores_run |= 1u << cores[i];
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
    uint32_t handle = 0;
    if (create->size == 0) return fail(EINVAL);
    if (create_bo(create->size, 0, &handle) != 0) return -1;
    create->handle = handle;
    create->dma_address = bos_[handle].npu_address;
    create->offset = uint64_t{handle} << kMmapHandleShift;
    return 0;
  }
  if (request == kGemClose) {
    auto* close = static_cast<GemClose*>(argument);
    if (!bo_by_handle(close->handle)) return fail(EINVAL);
    (void)emulator_->release(bo_by_handle(close->handle)->emulator_handle);
    bos_.erase(close->handle);
    busy_.erase(close->handle);
    return 0;
  }
  if (request == kPrepBo) {
    auto* prep = static_cast<PrepBo*>(argument);
    if (prep->reserved != 0 || !bo_by_handle(prep->handle)) return fail(EINVAL);
    if (busy_.count(prep->handle)) return fail(ETIMEDOUT);
    ++counters_.mem_syncs;
    return 0;
  }
  if (request == kFiniBo) {
    auto* fini = static_cast<FiniBo*>(argument);
    if (fini->reserved != 0 || !bo_by_handle(fini->handle)) return fail(EINVAL);
    ++counters_.mem_syncs;
    return 0;
  }
  if (request == kSubmit) {
    auto* submit = static_cast<Submit*>(argument);
    ++counters_.submits;
    if (submit->reserved != 0 || submit->job_struct_size != sizeof(Job)) return fail(EINVAL);
    const auto* jobs = reinterpret_cast<const Job*>(static_cast<uintptr_t>(submit->jobs));
    for (uint32_t j = 0; j < submit->job_count; ++j) {
      const Job& job = jobs[j];
      if (job.task_struct_size != sizeof(Task)) return fail(EINVAL);
      const auto* tasks = reinterpret_cast<const Task*>(static_cast<uintptr_t>(job.tasks));
      const auto* writes =
          reinterpret_cast<const uint32_t*>(static_cast<uintptr_t>(job.out_bo_handles));
      if (environment_flag("ORKNN_FAKE_NPU_HANG")) {
        for (uint32_t w = 0; w < job.out_bo_handle_count; ++w) busy_.insert(writes[w]);
        continue;
      }
      // The scheduler picks a core per job; tasks of one job stay on it, one kick each.
      const int core = static_cast<int>(j % 3);
      for (uint32_t t = 0; t < job.task_count; ++t) {
        if (tasks[t].regcmd_count == 0) return fail(EINVAL);
        const auto report =
            emulator_->run_tasks(core, tasks[t].regcmd, (tasks[t].regcmd_count + 1) / 2 - 1, 1);
        if (report.tasks_completed != 1) return fail(EIO);
        counters_.cores_run |= 1u << core;
      }
    }
    return 0;
  }
  return fail(ENOTTY);
}

}  // namespace orknn::testing
