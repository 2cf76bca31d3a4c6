// driver_shim: the one interface through which the runtime reaches an NPU. Three backends
// implement it: `rknpu` (vendor kernel UAPI), `rocket` (mainline accel UAPI) and `emu` (the
// in-process software NPU). The runtime never calls ioctl itself.
//
// Thread-safety: one Npu may be used from several threads; submit/wait/memory calls are
// internally serialised where the backend needs it. NpuMemory objects belong to the Npu that
// created them and must be destroyed before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace orknn::driver_shim {

struct NpuInfo {
  std::string backend;      // "emu", "rknpu", "rocket"
  std::string device_path;  // node opened, or "(in process)"
  uint32_t hardware_version = 0;
  uint32_t driver_version = 0;  // MAJOR*10000 + MINOR*100 + PATCH
  int core_count = 0;
  uint64_t clock_hz = 0;
  bool emulated = false;  // timings are modeled, not measured
};

// A buffer the NPU can address, mapped into this process.
struct NpuMemory {
  uint32_t handle = 0;
  uint64_t cookie = 0;       // rknpu obj_addr; opaque
  uint32_t npu_address = 0;  // what registers carry
  size_t size = 0;
  uint8_t* host = nullptr;
  uint64_t mmap_offset = 0;
  size_t host_lead = 0;   // bytes of the mapping before `host` (an import at an offset)
  bool imported = false;  // from import_memory: the pages belong to someone else's dma-buf
};

enum class SyncDirection { kToDevice, kFromDevice };

// One task: a regcmd list of `regcmd_count` 64-bit words including the 4-word PC tail, whose
// tail already points at the next task of the same core (or is a NOP for the last).
struct NpuTask {
  uint32_t regcmd_address = 0;
  uint32_t regcmd_count = 0;
  uint32_t enable_mask = 0;  // blocks the task starts (GLOBAL layout)
};

// A job: one chain of tasks per participating core. core_mask 0 lets the backend pick one idle
// core (then core_tasks has one entry); otherwise core_tasks has one entry per set bit, lowest
// core first.
struct NpuJob {
  uint32_t core_mask = 0;
  std::vector<std::vector<NpuTask>> core_tasks;
  std::vector<const NpuMemory*> reads;   // BOs the job reads (rocket implicit sync)
  std::vector<const NpuMemory*> writes;  // BOs the job writes
};

struct NpuJobResult {
  uint32_t cores_used = 0;                         // mask of the cores that ran
  std::vector<std::vector<uint64_t>> task_cycles;  // per core_tasks entry, per task (emulated)
  uint64_t elapsed_ns = 0;                         // hardware time, or modeled for the emulator
};

using NpuJobId = uint64_t;

class Npu {
 public:
  virtual ~Npu() = default;
  virtual const NpuInfo& info() const = 0;
  virtual Result<NpuMemory> create_memory(size_t bytes) = 0;
  virtual Status sync_memory(const NpuMemory& memory, SyncDirection direction) = 0;
  // Destroys memory from create_memory, create_shareable_memory or import_memory.
  virtual Status destroy_memory(NpuMemory& memory) = 0;

  // Memory meant to be shared with the application and other processes (rknn_create_mem):
  // `cacheable` asks for CPU-cached pages (the application then syncs). Backends without a
  // cache choice return create_memory's memory.
  virtual Result<NpuMemory> create_shareable_memory(size_t bytes, bool cacheable) {
    (void)cacheable;
    return create_memory(bytes);
  }
  // A new file descriptor (read-write, close-on-exec) for `memory`, owned by the caller, that
  // maps the same bytes in any process: a dma-buf (DRM PRIME export) on the kernel drivers, a
  // memfd in the emulator. It stays valid after destroy_memory.
  virtual Result<int> export_memory(const NpuMemory& memory) {
    (void)memory;
    return unimplemented("NPU backend ", info().backend, " cannot export memory as an fd");
  }
  // Makes `bytes` of the dma-buf `fd` from `offset` addressable by the NPU without a copy
  // (DRM PRIME import), mapped into this process. The caller keeps `fd`. kUnimplemented when the
  // backend or the fd cannot do it; the caller then copies.
  virtual Result<NpuMemory> import_memory(int fd, size_t bytes, uint64_t offset) {
    (void)fd, (void)bytes, (void)offset;
    return unimplemented("NPU backend ", info().backend, " cannot import dma-bufs");
  }
  virtual Result<NpuJobId> submit(const NpuJob& job) = 0;
  // Waits for a submitted job. kTimeout after `timeout_ms` (the job is then abandoned and
  // the cores reset).
  virtual Result<NpuJobResult> wait(NpuJobId job, uint32_t timeout_ms) = 0;
  virtual Status reset() = 0;
};

// Opens a backend by name: "emu", "rknpu", "rocket", or "auto" (rknpu, then rocket; never the
// emulator). `emu` accepts "emu:rk3576" for two cores.
Result<std::shared_ptr<Npu>> open_npu(std::string_view backend);

// The backend the runtime should use: the ORKNN_NPU_BACKEND environment variable ("emu",
// "rknpu", "rocket", "none", "auto"; unset means auto). kDeviceUnavailable when there is none.
Result<std::shared_ptr<Npu>> open_default_npu();

std::shared_ptr<Npu> make_emulated_npu(int core_count);

}  // namespace orknn::driver_shim
