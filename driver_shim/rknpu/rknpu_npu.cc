// The `rknpu` backend: the vendor kernel driver's UAPI (rknpu_uapi.h), DRM flavour (a render
// node whose driver is "rknpu") or misc flavour (/dev/rknpu, memory as dma-buf fds).
//
// Jobs are PC-mode and blocking: submit() records the job, wait() issues RKNPU_SUBMIT with the
// caller's timeout (the kernel soft-resets the NPU itself when a job times out). Tasks of all
// cores live in one kernel-mapped task BO; 2- and 3-core jobs describe their per-core ranges
// with subcore_task (indices 0..1 for two cores, 2..4 for three, as rknpu_job.c reads them).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "driver_shim/backends.h"
#include "driver_shim/drm_prime.h"
#include "driver_shim/drm_version.h"
#include "driver_shim/npu_registers.h"
#include "driver_shim/rknpu/rknpu_uapi.h"

namespace orknn::driver_shim {
namespace {

using namespace rknpu;

constexpr uint32_t kOldestDriver = driver_version(0, 4, 0);
constexpr uint32_t kFirstWideMemCreate = driver_version(0, 9, 0);

std::string errno_text() {
  return std::strerror(errno);
}

std::string version_text(uint32_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

class RknpuNpu final : public Npu {
 public:
  RknpuNpu(int fd, bool misc) : fd_(fd), misc_(misc) {}
  ~RknpuNpu() override {
    if (task_memory_.host) (void)destroy_memory(task_memory_);
    ::close(fd_);
  }

  Status initialise(const std::string& path) {
    info_.backend = "rknpu";
    info_.device_path = path;
    ORKNN_ASSIGN_OR_RETURN(info_.driver_version, action(kGetDrvVersion, 0));
    if (info_.driver_version < kOldestDriver || info_.driver_version >= driver_version(1, 0, 0)) {
      return make_error(StatusCode::kDeviceUnavailable, "rknpu driver version ",
                        version_text(info_.driver_version), " at ", path,
                        " is not supported (OpenRKNN speaks 0.4.0 to 0.9.x): update the "
                        "board's kernel, or use the mainline rocket driver");
    }
    ORKNN_ASSIGN_OR_RETURN(info_.hardware_version, action(kGetHwVersion, 0));
    ORKNN_ASSIGN_OR_RETURN(uint32_t frequency, action(kGetFreq, 0));
    info_.clock_hz = frequency ? frequency : 1000000000;
    info_.core_count = 3;  // RK3588; the UAPI has no core-count query
    wide_mem_create_ = info_.driver_version >= kFirstWideMemCreate;
    (void)action(kPowerOn, 0);  // refcounted on BSPs that have it; -EINVAL elsewhere
    return ok_status();
  }

  const NpuInfo& info() const override { return info_; }

  Result<NpuMemory> create_memory(size_t bytes) override {
    return create(bytes, kMemIommu | kMemZeroing);
  }

  Result<NpuMemory> create_shareable_memory(size_t bytes, bool cacheable) override {
    const uint32_t cache = cacheable ? uint32_t{kMemCacheable} : 0u;
    return create(bytes, kMemIommu | kMemZeroing | cache);
  }

  Result<int> export_memory(const NpuMemory& memory) override {
    if (!misc_) return prime_export(fd_, memory.handle, "rknpu");
    // The misc device's handle already is a dma-buf fd.
    const int fd = ::fcntl(static_cast<int>(memory.handle), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return internal_failure("rknpu: cannot duplicate dma-buf fd: ", errno_text());
    return fd;
  }

  // DRM: PRIME_FD_TO_HANDLE, then MEM_CREATE with that handle returns the object's NPU address
  // instead of allocating. Misc: MEM_CREATE with a dma-buf fd in `handle` imports it (we pass a
  // duplicate, which the memory then owns).
  Result<NpuMemory> import_memory(int fd, size_t bytes, uint64_t offset) override {
    uint32_t handle = 0;
    if (misc_) {
      const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      if (own < 0) return invalid_argument("rknpu: fd ", fd, " cannot be imported: ", errno_text());
      handle = static_cast<uint32_t>(own);
    } else {
      ORKNN_ASSIGN_OR_RETURN(handle, prime_import(fd_, fd, "rknpu"));
      // The same dma-buf imported twice comes back as the same handle: count its users.
      std::lock_guard<std::mutex> lock(mutex_);
      ++import_users_[handle];
    }
    Result<NpuMemory> memory = create_with_handle(handle, offset + bytes, kMemIommu, offset);
    if (!memory.ok()) {
      if (misc_) ::close(static_cast<int>(handle));
      if (!misc_) (void)last_import_user(handle);
      return unimplemented("rknpu cannot address imported fd ", fd, ": ",
                           memory.status().message());
    }
    memory->imported = true;
    memory->size = bytes;
    return memory;
  }

  Status sync_memory(const NpuMemory& memory, SyncDirection direction) override {
    MemSync sync{};
    sync.flags = direction == SyncDirection::kToDevice ? kSyncToDevice : kSyncFromDevice;
    sync.obj_addr = memory.cookie;
    sync.size = memory.size;
    if (::ioctl(fd_, misc_ ? kMiscMemSync : kDrmMemSync, &sync) != 0) {
      return internal_failure("rknpu MEM_SYNC of handle ", memory.handle,
                              " failed: ", errno_text());
    }
    return ok_status();
  }

  Status destroy_memory(NpuMemory& memory) override {
    if (memory.host) unmap_host(memory);
    if (memory.imported && !misc_ && !last_import_user(memory.handle)) {
      memory = NpuMemory{};
      return ok_status();
    }
    MemDestroy destroy{memory.handle, 0, memory.cookie};
    const int result = ::ioctl(fd_, misc_ ? kMiscMemDestroy : kDrmMemDestroy, &destroy);
    if (misc_) ::close(static_cast<int>(memory.handle));
    memory = NpuMemory{};
    if (result != 0) return internal_failure("rknpu MEM_DESTROY failed: ", errno_text());
    return ok_status();
  }

  Result<NpuJobId> submit(const NpuJob& job) override {
    const uint32_t mask = job.core_mask;
    const bool valid = mask == 0 || mask == 1 || mask == 2 || mask == 4 || mask == 3 || mask == 7;
    if (!valid) {
      return invalid_argument("rknpu core mask 0x", std::hex, mask,
                              " is not one the driver accepts (0, 1, 2, 4, 3, 7)");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const NpuJobId id = next_job_++;
    pending_[id] = job;
    return id;
  }

  Result<NpuJobResult> wait(NpuJobId id, uint32_t timeout_ms) override {
    NpuJob job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = pending_.find(id);
      if (it == pending_.end()) return invalid_argument("rknpu job ", id, " was not submitted");
      job = std::move(it->second);
      pending_.erase(it);
    }
    std::lock_guard<std::mutex> lock(submit_mutex_);  // one task BO, filled per submit
    size_t task_count = 0;
    for (const auto& chain : job.core_tasks) task_count += chain.size();
    ORKNN_RETURN_IF_ERROR(ensure_task_memory(task_count));
    auto* tasks = reinterpret_cast<Task*>(task_memory_.host);
    Submit submit{};
    submit.flags = kJobPc | kJobPingPong;  // blocking
    submit.timeout = timeout_ms;
    submit.task_number = static_cast<uint32_t>(task_count);
    submit.task_obj_addr = task_memory_.cookie;
    submit.task_base_addr = 0;
    submit.core_mask = job.core_mask;
    submit.fence_fd = -1;
    const size_t chains = job.core_tasks.size();
    // rknpu_job.c: one or two cores read subcore_task[core_index], three read [core_index + 2].
    const size_t first_slot = chains == 3 ? 2 : 0;
    uint32_t position = 0;
    for (size_t chain = 0; chain < chains; ++chain) {
      submit.subcore_task[first_slot + chain] = {
          position, static_cast<uint32_t>(job.core_tasks[chain].size())};
      for (const NpuTask& task : job.core_tasks[chain]) {
        Task& entry = tasks[position++];
        entry = Task{};
        entry.enable_mask = task.enable_mask;
        entry.int_mask = (task.enable_mask & npu_reg::kEnablePpu)
                             ? (npu_reg::kInterruptPpu0 | npu_reg::kInterruptPpu1)
                             : (npu_reg::kInterruptDpu0 | npu_reg::kInterruptDpu1);
        entry.int_clear = npu_reg::kInterruptClearAll;
        entry.regcfg_amount = task.regcmd_count - npu_reg::kTailWords;
        entry.regcmd_addr = task.regcmd_address;
      }
    }
    ORKNN_RETURN_IF_ERROR(sync_memory(task_memory_, SyncDirection::kToDevice));
    if (::ioctl(fd_, misc_ ? kMiscSubmit : kDrmSubmit, &submit) != 0) {
      if (errno == ETIMEDOUT || errno == ETIME) {
        return make_error(StatusCode::kTimeout, "rknpu job did not finish within ", timeout_ms,
                          " ms (", submit.task_counter, " of ", task_count,
                          " tasks done); the driver reset the NPU");
      }
      return internal_failure("rknpu SUBMIT failed: ", errno_text(),
                              " (check dmesg for the driver's reason)");
    }
    NpuJobResult result;
    result.elapsed_ns = static_cast<uint64_t>(std::max<int64_t>(submit.hw_elapse_time, 0));
    result.cores_used = job.core_mask;
    std::vector<size_t> counts;
    for (const auto& chain : job.core_tasks) counts.push_back(chain.size());
    result.task_cycles = spread_job_time(result.elapsed_ns, info_.clock_hz, counts);
    return result;
  }

  Status reset() override {
    ORKNN_RETURN_IF_ERROR(action(kActReset, 0).status());
    return ok_status();
  }

 private:
  Result<uint32_t> action(uint32_t code, uint32_t value) {
    Action request{code, value};
    if (::ioctl(fd_, misc_ ? kMiscAction : kDrmAction, &request) != 0) {
      return internal_failure("rknpu ACTION ", code, " failed: ", errno_text());
    }
    return request.value;
  }

  Result<NpuMemory> create(size_t bytes, uint32_t flags) {
    return create_with_handle(0, bytes, flags, 0);
  }

  // MEM_CREATE (handle 0: allocate; otherwise the object `handle` names), then maps
  // [offset, offset + bytes) of it; `host` and `npu_address` point at `offset`.
  Result<NpuMemory> create_with_handle(uint32_t existing, size_t bytes, uint32_t flags,
                                       uint64_t offset) {
    NpuMemory memory;
    // The 40-byte struct of older drivers is the 48-byte one without its last two fields; the
    // ioctl number carries the size the kernel copies.
    MemCreate create{};
    create.handle = existing;
    create.flags = flags;
    create.size = bytes;
    const unsigned long request = wide_mem_create_ ? (misc_ ? kMiscMemCreate : kDrmMemCreate)
                                                   : (misc_ ? kMiscMemCreateOld : kDrmMemCreateOld);
    const int result = ::ioctl(fd_, request, &create);
    const uint32_t handle = create.handle;
    const uint64_t obj_addr = create.obj_addr, dma_addr = create.dma_addr, size = create.size;
    if (result != 0) {
      return make_error(StatusCode::kOutOfMemory, "rknpu MEM_CREATE of ", bytes,
                        " bytes failed: ", errno_text());
    }
    // Failures from here on give the object back (for an import: the handle PRIME made).
    auto release = [&](Status status) -> Status {
      MemDestroy destroy{handle, 0, obj_addr};
      (void)::ioctl(fd_, misc_ ? kMiscMemDestroy : kDrmMemDestroy, &destroy);
      if (misc_ && existing == 0) ::close(static_cast<int>(handle));
      return status;
    };
    if (dma_addr + bytes > 0x100000000ull) {
      return release(
          internal_failure("rknpu gave NPU address 0x", std::hex, dma_addr,
                           " whose buffer ends above 4 GiB; registers carry 32 bits (enable "
                           "the NPU IOMMU)"));
    }
    if (size != 0 && size < bytes) {
      return release(
          invalid_argument("rknpu buffer has ", size, " bytes, fewer than the ", bytes, " needed"));
    }
    memory.handle = handle;
    memory.cookie = obj_addr;
    memory.size = bytes - offset;
    // The whole object from its start: GEM mmap handlers may not honour an offset inside it.
    uint64_t map_offset = 0;
    int map_fd = static_cast<int>(handle);  // misc: the handle is a dma-buf fd
    if (!misc_) {
      MemMap map{handle, 0, 0};
      if (::ioctl(fd_, kDrmMemMap, &map) != 0) {
        return release(internal_failure("rknpu MEM_MAP failed: ", errno_text()));
      }
      map_offset += map.offset;
      map_fd = fd_;
    }
    void* host = ::mmap(nullptr, offset + memory.size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd,
                        static_cast<off_t>(map_offset));
    if (host == MAP_FAILED) {
      return release(internal_failure("mmap of rknpu memory failed: ", errno_text()));
    }
    memory.host = static_cast<uint8_t*>(host) + offset;
    memory.host_lead = offset;
    memory.npu_address = static_cast<uint32_t>(dma_addr + offset);
    memory.mmap_offset = map_offset;
    return memory;
  }

  // Drops one user of an imported DRM handle; true when it was the last.
  bool last_import_user(uint32_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = import_users_.find(handle);
    if (it == import_users_.end() || --it->second > 0) return it == import_users_.end();
    import_users_.erase(it);
    return true;
  }

  // An import's host pointer is `host_lead` bytes into the object's mapping.
  static void unmap_host(const NpuMemory& memory) {
    ::munmap(memory.host - memory.host_lead, memory.host_lead + memory.size);
  }

  Status ensure_task_memory(size_t tasks) {
    const size_t bytes = std::max<size_t>(tasks, 1) * sizeof(Task);
    if (task_memory_.host && task_memory_.size >= bytes) return ok_status();
    if (task_memory_.host) ORKNN_RETURN_IF_ERROR(destroy_memory(task_memory_));
    // The kernel reads the task array through its own mapping of this BO.
    ORKNN_ASSIGN_OR_RETURN(task_memory_, create(std::max<size_t>(bytes, 4096),
                                                kMemKernelMapping | kMemIommu | kMemZeroing));
    return ok_status();
  }

  int fd_;
  bool misc_;
  bool wide_mem_create_ = true;
  NpuInfo info_;
  std::mutex mutex_;
  std::mutex submit_mutex_;
  std::map<NpuJobId, NpuJob> pending_;
  std::map<uint32_t, int> import_users_;  // DRM handles from PRIME import, by user count
  NpuJobId next_job_ = 1;
  NpuMemory task_memory_;
};

}  // namespace

Result<std::shared_ptr<Npu>> open_rknpu() {
  std::vector<std::string> paths;
  for (int i = 128; i < 136; ++i) paths.push_back("/dev/dri/renderD" + std::to_string(i));
  for (int i = 0; i < 4; ++i) paths.push_back("/dev/dri/card" + std::to_string(i));
  DrmDriverVersion version;
  std::string path, error;
  int fd = open_drm_node(paths, "rknpu", &version, &path, &error);
  bool misc = false;
  if (fd < 0) {
    fd = ::open("/dev/rknpu", O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && error.rfind("permission denied", 0) == 0) {
      return make_error(StatusCode::kDeviceUnavailable, "rknpu: ", error);
    }
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
      return make_error(StatusCode::kDeviceUnavailable,
                        "permission denied opening /dev/rknpu: add a udev rule or group that "
                        "gives this user read/write access; ",
                        error);
    }
    if (fd < 0) {
      return make_error(StatusCode::kDeviceUnavailable, "rknpu: ", error,
                        " and no /dev/rknpu; is the vendor rknpu kernel driver loaded (a "
                        "Rockchip BSP kernel, dmesg | grep RKNPU)?");
    }
    misc = true;
    path = "/dev/rknpu";
  }
  auto npu = std::make_shared<RknpuNpu>(fd, misc);
  ORKNN_RETURN_IF_ERROR(npu->initialise(path));
  return std::shared_ptr<Npu>(std::move(npu));
}

}  // namespace orknn::driver_shim
