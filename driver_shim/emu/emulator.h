// The software NPU: a 32-bit NPU address space of buffers and N cores that execute register
// programs. Each core has its own register file, follows the PC chain of tasks, computes what
// CNA/CORE/DPU/DPU_RDMA/PPU compute for the programs OpenRKNN emits (docs/npu.md), and reports
// per-task cycles from a timing model. Used by the `emu` backend directly and by the fake
// kernels that test the `rknpu` and `rocket` backends.
//
// Thread-safety: memory calls and run_tasks on different cores may run concurrently; one core
// runs one chain at a time.
//
// Memory: a shareable buffer is a shared mapping of a memfd (allocate) or of a file the caller
// hands in (adopt, the import of a dma-buf), so an fd exported from it maps the very bytes the
// cores read and write, in this process or any other it is passed to.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"

namespace orknn::driver_shim::emu {

struct Cube;  // block_support.h

// The timing model (all emulated): MACs per cycle per core, DMA bytes per cycle per core,
// fixed cycles per task (fetch, register writes) and per job, clock.
struct TimingModel {
  uint64_t macs_per_cycle = 1024;
  uint64_t float16_macs_per_cycle = 512;  // assumed: half the int8 rate, as on NVDLA-like MACs
  uint64_t bytes_per_cycle = 16;
  uint64_t task_overhead_cycles = 400;
  // Per job and core: the driver's submit and the completion interrupt (charged to the chain's
  // first task), which is what makes per-layer multi-core jobs cost more than one chain.
  uint64_t job_overhead_cycles = 1500;
  uint64_t clock_hz = 1000000000;
};

struct TaskRunReport {
  std::vector<uint64_t> task_cycles;
  uint32_t tasks_completed = 0;
  uint32_t interrupt_status = 0;  // raw status after the last task
  // Why the chain stopped, when a task's program was refused (e.g. a CBUF configuration that
  // cannot hold what the task reads); empty for plain DMA errors.
  std::string fault;
};

class Emulator {
 public:
  explicit Emulator(int core_count);

  int core_count() const { return core_count_; }
  const TimingModel& timing() const { return timing_; }

  struct Allocation {
    uint32_t handle = 0;
    uint32_t npu_address = 0;
    uint8_t* host = nullptr;
    size_t size = 0;
    int fd = -1;  // the emulator's own fd of the buffer (-1: not shareable); borrowed
  };
  // `shareable` buffers are memfds (export_fd works); others are anonymous shared memory, so
  // a model's many internal buffers use no file descriptors.
  Result<Allocation> allocate(size_t bytes, bool shareable = false);
  // Maps `bytes` of `fd` from `offset` (a multiple of the page size) into the address space,
  // sharing its pages. The emulator keeps its own duplicate of `fd`; the caller keeps `fd`.
  Result<Allocation> adopt(int fd, size_t bytes, uint64_t offset);
  // A new fd (O_CLOEXEC, read-write) of the buffer `handle`, owned by the caller.
  Result<int> export_fd(uint32_t handle);
  Status release(uint32_t handle);
  // Host pointer of [address, address + bytes) if it lies inside one buffer, else nullptr.
  uint8_t* translate(uint32_t address, uint64_t bytes);
  Result<Allocation> find(uint32_t handle);

  // Runs `task_number` tasks on `core`, the first fetched from `regcmd_address` with
  // `register_amount` (PC_REGISTER_AMOUNTS: 128-bit units - 1), the next ones from each tail.
  // A DMA error stops the chain and is reported in interrupt_status.
  TaskRunReport run_tasks(int core, uint32_t regcmd_address, uint32_t register_amount,
                          uint32_t task_number);
  void reset_core(int core);

 private:
  // One mapping of a file; unmaps and closes it when destroyed.
  struct Buffer {
    Buffer(int fd, uint8_t* host, size_t mapped_size, uint32_t handle)
        : fd(fd), host(host), mapped_size(mapped_size), handle(handle) {}
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    int fd;
    uint8_t* host;
    size_t mapped_size;  // whole pages
    uint32_t handle;
  };
  struct CoreRegisters {
    std::array<uint32_t, 0x10000 / 4> values{};
    uint32_t get(uint16_t offset) const { return values[offset / 4]; }
    void set(uint16_t offset, uint32_t value) { values[offset / 4] = value; }
    std::array<int8_t, 256> lut{};
    // The conv buffer: which weights the last convolution on this core left resident
    // (WEIGHT_REUSE reads them; empty after a reset), and why the current task was refused.
    uint32_t resident_weights = 0;
    uint64_t resident_weight_bytes = 0;
    std::string fault;
  };

  // Executes the blocks of `enable_mask` with the current registers; returns the modeled
  // cycles, or sets *dma_error when an address is unmapped.
  uint64_t execute(CoreRegisters& registers, uint32_t enable_mask, bool* dma_error);
  uint64_t execute_convolution(CoreRegisters& registers, bool* dma_error);
  uint64_t execute_standalone_dpu(const CoreRegisters& registers, bool* dma_error);
  uint64_t execute_pooling(const CoreRegisters& registers, bool* dma_error);
  // float16 programs (float16_blocks.cc): fp32 accumulation, results rounded to float16.
  uint64_t execute_convolution_float16(CoreRegisters& registers, bool* dma_error);
  uint64_t execute_standalone_dpu_float16(const CoreRegisters& registers, bool* dma_error);
  uint64_t execute_pooling_float16(const CoreRegisters& registers, bool* dma_error);
  // Checks a convolution task's CBUF_CON0/CBUF_CON1 against what it reads (cbuf.cc): the
  // input rows of `input_channels` channels and `weight_bytes` of weights. Sets
  // registers.fault and returns false when the buffer cannot hold them.
  static bool check_cbuf(CoreRegisters& registers, uint32_t input_width, uint32_t input_rows,
                         uint32_t input_channels, uint32_t precision, uint64_t weight_bytes);
  uint64_t cycles_for(uint64_t macs, uint64_t bytes, bool float16 = false) const;
  // The cubes of a stand-alone DPU task: DATA_CUBE_* shaped, the MRDMA source, the ERDMA
  // operand when EW_CFG adds one (*add), the WDMA destination; false on an unmapped address.
  bool map_standalone_cubes(const CoreRegisters& registers, uint32_t element_bytes, Cube* input,
                            Cube* operand, Cube* output, bool* add);

  int core_count_;
  TimingModel timing_;
  std::mutex memory_mutex_;
  // Finds a free page-aligned range for `bytes` and maps `fd` there (memory_mutex_ held).
  Result<Allocation> insert_mapping(int fd, size_t bytes, uint64_t offset);

  std::map<uint32_t, std::unique_ptr<Buffer>> buffers_;  // by NPU address
  uint32_t next_address_ = 0x10000000;
  uint32_t next_handle_ = 1;
  std::vector<std::unique_ptr<CoreRegisters>> cores_;
};

}  // namespace orknn::driver_shim::emu
