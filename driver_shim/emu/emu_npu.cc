// The `emu` backend: the Npu interface on top of the in-process Emulator, with one worker
// thread per virtual core so the cores of a job run in parallel.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <thread>

#include "driver_shim/emu/emulator.h"
#include "driver_shim/npu.h"
#include "driver_shim/npu_registers.h"

namespace orknn::driver_shim {
namespace {

constexpr uint64_t kPageSize = 4096;

class EmulatedNpu final : public Npu {
 public:
  explicit EmulatedNpu(int core_count) : emulator_(core_count) {
    info_.backend = "emu";
    info_.device_path = "(in process)";
    info_.hardware_version = 0x46495245;  // an emulator is not a silicon revision
    info_.driver_version = 906;
    info_.core_count = core_count;
    info_.clock_hz = emulator_.timing().clock_hz;
    info_.emulated = true;
    queued_per_core_.assign(static_cast<size_t>(core_count), 0);
    for (int core = 0; core < core_count; ++core) {
      workers_.emplace_back([this, core] { work(core); });
    }
  }

  ~EmulatedNpu() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  const NpuInfo& info() const override { return info_; }

  Result<NpuMemory> create_memory(size_t bytes) override { return allocate(bytes, false); }
  Result<NpuMemory> create_shareable_memory(size_t bytes, bool) override {
    return allocate(bytes, true);
  }

  Result<NpuMemory> allocate(size_t bytes, bool shareable) {
    ORKNN_ASSIGN_OR_RETURN(emu::Emulator::Allocation allocation,
                           emulator_.allocate(bytes, shareable));
    NpuMemory memory;
    memory.handle = allocation.handle;
    memory.cookie = allocation.handle;
    memory.npu_address = allocation.npu_address;
    memory.size = bytes;
    memory.host = allocation.host;
    return memory;
  }
  // memfd pages are coherent with the emulator's "device": both are this CPU.
  Status sync_memory(const NpuMemory&, SyncDirection) override { return ok_status(); }

  Result<int> export_memory(const NpuMemory& memory) override {
    return emulator_.export_fd(memory.handle);
  }

  Result<NpuMemory> import_memory(int fd, size_t bytes, uint64_t offset) override {
    // Mappings start on a page; the tensor's address keeps the offset's remainder.
    const uint64_t lead = offset % kPageSize;
    ORKNN_ASSIGN_OR_RETURN(emu::Emulator::Allocation allocation,
                           emulator_.adopt(fd, bytes + lead, offset - lead));
    NpuMemory memory;
    memory.handle = allocation.handle;
    memory.cookie = allocation.handle;
    memory.npu_address = allocation.npu_address + static_cast<uint32_t>(lead);
    memory.size = bytes;
    memory.host = allocation.host + lead;
    memory.imported = true;
    return memory;
  }
  Status destroy_memory(NpuMemory& memory) override {
    ORKNN_RETURN_IF_ERROR(emulator_.release(memory.handle));
    memory = NpuMemory{};
    return ok_status();
  }

  Result<NpuJobId> submit(const NpuJob& job) override {
    std::vector<int> cores;
    for (int core = 0; core < info_.core_count; ++core) {
      if (job.core_mask & (1u << core)) cores.push_back(core);
    }
    if (job.core_mask >> info_.core_count) {
      return invalid_argument("core mask 0x", std::hex, job.core_mask, std::dec,
                              " names a core this ", info_.core_count, "-core NPU does not have");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (cores.empty()) cores.push_back(least_loaded_core());
    if (job.core_tasks.size() != cores.size()) {
      return invalid_argument("job has ", job.core_tasks.size(), " task chains for ", cores.size(),
                              " cores of mask 0x", std::hex, job.core_mask);
    }
    const NpuJobId id = next_job_++;
    JobState& state = jobs_[id];
    state.pending = static_cast<int>(cores.size());
    state.result.task_cycles.resize(cores.size());
    for (size_t i = 0; i < cores.size(); ++i) {
      state.result.cores_used |= 1u << cores[i];
      queue_.push_back(Work{id, i, cores[i], job.core_tasks[i]});
      ++queued_per_core_[static_cast<size_t>(cores[i])];
    }
    work_ready_.notify_all();
    return id;
  }

  Result<NpuJobResult> wait(NpuJobId id, uint32_t timeout_ms) override {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = jobs_.find(id);
    if (it == jobs_.end())
      return invalid_argument("NPU job ", id, " was not submitted or was already waited for");
    const bool done = job_done_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                         [&] { return jobs_[id].pending == 0; });
    if (!done) {
      it->second.abandoned = true;
      return make_error(StatusCode::kTimeout, "NPU job ", id, " did not finish within ", timeout_ms,
                        " ms (emulated NPU); raise the timeout or split the model");
    }
    JobState state = std::move(it->second);
    jobs_.erase(it);
    if (!state.error.ok()) return state.error;
    uint64_t longest = 0;
    for (const auto& cycles : state.result.task_cycles) {
      uint64_t sum = 0;
      for (uint64_t c : cycles) sum += c;
      longest = std::max(longest, sum);
    }
    state.result.elapsed_ns = longest * 1000000000ull / info_.clock_hz;
    return state.result;
  }

  Status reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int core = 0; core < info_.core_count; ++core) emulator_.reset_core(core);
    return ok_status();
  }

  emu::Emulator& emulator() { return emulator_; }

 private:
  struct Work {
    NpuJobId job;
    size_t chain;
    int core;
    std::vector<NpuTask> tasks;
  };
  struct JobState {
    int pending = 0;
    bool abandoned = false;
    NpuJobResult result;
    Status error = ok_status();
  };

  int least_loaded_core() const {
    int best = 0;
    for (int core = 1; core < info_.core_count; ++core) {
      if (queued_per_core_[static_cast<size_t>(core)] < queued_per_core_[static_cast<size_t>(best)])
        best = core;
    }
    return best;
  }

  void work(int core) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      auto it = queue_.end();
      work_ready_.wait(lock, [&] {
        it = std::find_if(queue_.begin(), queue_.end(),
                          [&](const Work& w) { return w.core == core; });
        return stopping_ || it != queue_.end();
      });
      if (stopping_) return;
      Work work = std::move(*it);
      queue_.erase(it);
      lock.unlock();
      Status error = ok_status();
      std::vector<uint64_t> cycles;
      if (!work.tasks.empty()) {
        const NpuTask& first = work.tasks.front();
        const uint32_t amount = (first.regcmd_count + 1) / 2 - 1;
        const emu::TaskRunReport report = emulator_.run_tasks(
            core, first.regcmd_address, amount, static_cast<uint32_t>(work.tasks.size()));
        cycles = report.task_cycles;
        if (!cycles.empty()) cycles.front() += emulator_.timing().job_overhead_cycles;
        if (report.interrupt_status &
            (npu_reg::kInterruptDmaReadError | npu_reg::kInterruptDmaWriteError)) {
          error = report.fault.empty()
                      ? make_error(StatusCode::kFailed, "NPU core ", core, ": DMA error in task ",
                                   report.tasks_completed,
                                   " (an address in the register program is not mapped)")
                      : make_error(StatusCode::kFailed, "NPU core ", core, ": task ",
                                   report.tasks_completed, " refused: ", report.fault);
        } else if (report.tasks_completed != work.tasks.size()) {
          error = make_error(StatusCode::kFailed, "NPU core ", core, " completed ",
                             report.tasks_completed, " of ", work.tasks.size(),
                             " tasks: the task chain ends early");
        }
      }
      lock.lock();
      --queued_per_core_[static_cast<size_t>(core)];
      auto job = jobs_.find(work.job);
      if (job != jobs_.end()) {
        job->second.result.task_cycles[work.chain] = std::move(cycles);
        if (!error.ok()) job->second.error = error;
        if (--job->second.pending == 0 && job->second.abandoned) jobs_.erase(job);
      }
      job_done_.notify_all();
    }
  }

  emu::Emulator emulator_;
  NpuInfo info_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable job_done_;
  std::deque<Work> queue_;
  std::vector<int> queued_per_core_;
  std::map<NpuJobId, JobState> jobs_;
  NpuJobId next_job_ = 1;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

std::shared_ptr<Npu> make_emulated_npu(int core_count) {
  return std::make_shared<EmulatedNpu>(core_count);
}

}  // namespace orknn::driver_shim
