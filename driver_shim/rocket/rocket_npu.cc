// The `rocket` backend: the mainline accel driver's UAPI (rocket_uapi.h) on /dev/accel/accel*.
// The kernel schedules each job on a core of its choice (no core mask in the UAPI) and kicks its
// tasks one by one; completion is implicit through the output BOs, so wait() is PREP_BO on them.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

#include "driver_shim/backends.h"
#include "driver_shim/drm_prime.h"
#include "driver_shim/drm_version.h"
#include "driver_shim/rocket/rocket_uapi.h"

namespace orknn::driver_shim {
namespace {

using namespace rocket;

std::string errno_text() {
  return std::strerror(errno);
}

int64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

class RocketNpu final : public Npu {
 public:
  RocketNpu(int fd) : fd_(fd) {}
  ~RocketNpu() override { ::close(fd_); }

  Status initialise(const std::string& path, const DrmDriverVersion& version) {
    info_.backend = "rocket";
    info_.device_path = path;
    info_.driver_version =
        static_cast<uint32_t>(version.major * 10000 + version.minor * 100 + version.patch);
    if (version.major != 1) {
      return make_error(StatusCode::kDeviceUnavailable, "rocket driver version ", version.major,
                        ".", version.minor, " at ", path,
                        " is not supported (OpenRKNN speaks the 1.x UAPI of Linux 6.18): update "
                        "OpenRKNN or the kernel so they match");
    }
    info_.core_count = 3;
    info_.clock_hz = 1000000000;
    return ok_status();
  }

  const NpuInfo& info() const override { return info_; }

  Result<NpuMemory> create_memory(size_t bytes) override {
    if (bytes == 0 || bytes > 0xffffffffull) {
      return invalid_argument("rocket BO size ", bytes, " is outside 1..4 GiB - 1");
    }
    CreateBo create{static_cast<uint32_t>(bytes), 0, 0, 0};
    if (::ioctl(fd_, kCreateBo, &create) != 0) {
      return make_error(StatusCode::kOutOfMemory, "rocket CREATE_BO of ", bytes,
                        " bytes failed: ", errno_text());
    }
    NpuMemory memory;
    memory.handle = create.handle;
    memory.cookie = create.handle;
    memory.npu_address = static_cast<uint32_t>(create.dma_address);
    memory.size = bytes;
    memory.mmap_offset = create.offset;
    void* host = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                        static_cast<off_t>(create.offset));
    if (host == MAP_FAILED) {
      GemClose close{create.handle, 0};
      ::ioctl(fd_, kGemClose, &close);
      return internal_failure("mmap of rocket BO failed: ", errno_text());
    }
    memory.host = static_cast<uint8_t*>(host);
    return memory;
  }

  Result<int> export_memory(const NpuMemory& memory) override {
    return prime_export(fd_, memory.handle, "rocket");
  }

  // PRIME_FD_TO_HANDLE would give a handle, but the UAPI has no way to learn its NPU address
  // (only CREATE_BO maps a BO into the file's NPU address space), so imports are copied.
  Result<NpuMemory> import_memory(int fd, size_t, uint64_t) override {
    return unimplemented("rocket cannot address imported fd ", fd,
                         ": the rocket UAPI gives NPU addresses only to BOs it created");
  }

  Status sync_memory(const NpuMemory& memory, SyncDirection direction) override {
    if (direction == SyncDirection::kToDevice) {
      FiniBo fini{memory.handle, 0};
      if (::ioctl(fd_, kFiniBo, &fini) != 0) {
        return internal_failure("rocket FINI_BO failed: ", errno_text());
      }
      return ok_status();
    }
    return prepare_for_cpu(memory.handle, 10000);
  }

  Status destroy_memory(NpuMemory& memory) override {
    if (memory.host) ::munmap(memory.host, memory.size);
    GemClose close{memory.handle, 0};
    const int result = ::ioctl(fd_, kGemClose, &close);
    memory = NpuMemory{};
    if (result != 0) return internal_failure("rocket GEM_CLOSE failed: ", errno_text());
    return ok_status();
  }

  Result<NpuJobId> submit(const NpuJob& job) override {
    std::vector<std::vector<Task>> tasks(job.core_tasks.size());
    std::vector<uint32_t> reads, writes;
    for (const NpuMemory* memory : job.reads) reads.push_back(memory->handle);
    for (const NpuMemory* memory : job.writes) writes.push_back(memory->handle);
    std::vector<Job> jobs;
    for (size_t chain = 0; chain < job.core_tasks.size(); ++chain) {
      for (const NpuTask& task : job.core_tasks[chain]) {
        tasks[chain].push_back(Task{task.regcmd_address, task.regcmd_count});
      }
      Job entry{};
      entry.tasks = reinterpret_cast<uintptr_t>(tasks[chain].data());
      entry.task_count = static_cast<uint32_t>(tasks[chain].size());
      entry.task_struct_size = sizeof(Task);
      entry.in_bo_handles = reinterpret_cast<uintptr_t>(reads.data());
      entry.in_bo_handle_count = static_cast<uint32_t>(reads.size());
      entry.out_bo_handles = reinterpret_cast<uintptr_t>(writes.data());
      entry.out_bo_handle_count = static_cast<uint32_t>(writes.size());
      jobs.push_back(entry);
    }
    Submit submit{reinterpret_cast<uintptr_t>(jobs.data()), static_cast<uint32_t>(jobs.size()),
                  sizeof(Job), 0};
    if (::ioctl(fd_, kSubmit, &submit) != 0) {
      return internal_failure("rocket SUBMIT failed: ", errno_text(),
                              " (check dmesg for the driver's reason)");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const NpuJobId id = next_job_++;
    Pending& pending = pending_[id];
    pending.writes = std::move(writes);
    pending.started_ns = monotonic_ns();
    for (const auto& chain : job.core_tasks) pending.task_counts.push_back(chain.size());
    return id;
  }

  Result<NpuJobResult> wait(NpuJobId id, uint32_t timeout_ms) override {
    Pending pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = pending_.find(id);
      if (it == pending_.end()) return invalid_argument("rocket job ", id, " was not submitted");
      pending = std::move(it->second);
      pending_.erase(it);
    }
    // The job's fence sits on every BO it writes; waiting for them is waiting for the job.
    for (uint32_t handle : pending.writes) {
      ORKNN_RETURN_IF_ERROR(prepare_for_cpu(handle, timeout_ms));
    }
    NpuJobResult result;
    result.elapsed_ns = static_cast<uint64_t>(monotonic_ns() - pending.started_ns);
    result.task_cycles = spread_job_time(result.elapsed_ns, info_.clock_hz, pending.task_counts);
    return result;
  }

  // No reset in the UAPI: the kernel resets a core itself when a job exceeds 500 ms.
  Status reset() override { return ok_status(); }

 private:
  struct Pending {
    std::vector<uint32_t> writes;
    std::vector<size_t> task_counts;
    int64_t started_ns = 0;
  };

  Status prepare_for_cpu(uint32_t handle, uint32_t timeout_ms) {
    PrepBo prep{handle, 0, monotonic_ns() + int64_t{timeout_ms} * 1000000};
    if (::ioctl(fd_, kPrepBo, &prep) != 0) {
      if (errno == ETIMEDOUT || errno == ETIME || errno == EBUSY) {
        return make_error(StatusCode::kTimeout, "rocket: BO ", handle, " still busy after ",
                          timeout_ms,
                          " ms; the job did not finish (the kernel resets a core "
                          "after 500 ms)");
      }
      return internal_failure("rocket PREP_BO failed: ", errno_text());
    }
    return ok_status();
  }

  int fd_;
  NpuInfo info_;
  std::mutex mutex_;
  std::map<NpuJobId, Pending> pending_;
  NpuJobId next_job_ = 1;
};

}  // namespace

Result<std::shared_ptr<Npu>> open_rocket() {
  std::vector<std::string> paths;
  for (int i = 0; i < 4; ++i) paths.push_back("/dev/accel/accel" + std::to_string(i));
  DrmDriverVersion version;
  std::string path, error;
  const int fd = open_drm_node(paths, "rocket", &version, &path, &error);
  if (fd < 0) {
    return make_error(StatusCode::kDeviceUnavailable, "rocket: ", error,
                      " under /dev/accel; needs Linux 6.18+ with CONFIG_DRM_ACCEL_ROCKET and the "
                      "NPU nodes enabled in the device tree");
  }
  auto npu = std::make_shared<RocketNpu>(fd);
  ORKNN_RETURN_IF_ERROR(npu->initialise(path, version));
  return std::shared_ptr<Npu>(std::move(npu));
}

}  // namespace orknn::driver_shim
