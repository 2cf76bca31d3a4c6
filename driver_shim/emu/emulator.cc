#include "driver_shim/emu/emulator.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "driver_shim/npu_registers.h"

namespace orknn::driver_shim::emu {

using namespace npu_reg;

namespace {
constexpr uint64_t kPageSize = 4096;
constexpr uint64_t kAddressSpaceStart = 0x10000000;
constexpr uint64_t kAddressSpaceEnd = 0x100000000;
}  // namespace

Emulator::Emulator(int core_count) : core_count_(core_count) {
  for (int i = 0; i < core_count; ++i) cores_.push_back(std::make_unique<CoreRegisters>());
}

Emulator::Buffer::~Buffer() {
  munmap(host, mapped_size);
  if (fd >= 0) close(fd);
}

Result<Emulator::Allocation> Emulator::insert_mapping(int fd, size_t bytes, uint64_t offset) {
  const uint64_t rounded = (bytes + kPageSize - 1) / kPageSize * kPageSize;
  // First fit in the 32-bit address space (registers carry 32-bit addresses).
  uint64_t candidate = kAddressSpaceStart;
  for (const auto& [address, buffer] : buffers_) {
    if (candidate + rounded <= address) break;
    candidate = std::max<uint64_t>(candidate, address + buffer->mapped_size);
  }
  if (candidate + rounded > kAddressSpaceEnd) {
    if (fd >= 0) close(fd);
    return make_error(StatusCode::kOutOfMemory, "NPU address space exhausted: cannot map ", bytes,
                      " more bytes below 4 GiB");
  }
  const int flags = fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS;
  void* host =
      mmap(nullptr, rounded, PROT_READ | PROT_WRITE, flags, fd, static_cast<off_t>(offset));
  if (host == MAP_FAILED) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return make_error(StatusCode::kOutOfMemory, "cannot map ", bytes,
                      " bytes of NPU memory: ", std::strerror(error));
  }
  const uint32_t handle = next_handle_++;
  auto buffer = std::make_unique<Buffer>(fd, static_cast<uint8_t*>(host), rounded, handle);
  Allocation allocation{handle, static_cast<uint32_t>(candidate), buffer->host, bytes, fd};
  buffers_.emplace(static_cast<uint32_t>(candidate), std::move(buffer));
  return allocation;
}

Result<Emulator::Allocation> Emulator::allocate(size_t bytes, bool shareable) {
  if (bytes == 0) return invalid_argument("NPU memory size 0: a buffer needs at least one byte");
  const uint64_t rounded = (bytes + kPageSize - 1) / kPageSize * kPageSize;
  if (!shareable) {
    std::lock_guard<std::mutex> lock(memory_mutex_);
    return insert_mapping(-1, bytes, 0);
  }
  // A memfd rather than heap memory, so the buffer can be exported as an fd (export_fd).
  const int fd = static_cast<int>(memfd_create("orknn_npu_buffer", MFD_CLOEXEC));
  if (fd < 0) {
    return make_error(StatusCode::kOutOfMemory,
                      "memfd_create for NPU memory failed: ", std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(rounded)) != 0) {
    const int error = errno;
    close(fd);
    return make_error(StatusCode::kOutOfMemory, "cannot allocate ", bytes,
                      " bytes of NPU memory: ", std::strerror(error));
  }
  std::lock_guard<std::mutex> lock(memory_mutex_);
  return insert_mapping(fd, bytes, 0);
}

Result<Emulator::Allocation> Emulator::adopt(int fd, size_t bytes, uint64_t offset) {
  if (bytes == 0)
    return invalid_argument("NPU import of 0 bytes: a buffer needs at least one byte");
  if (offset % kPageSize != 0) {
    return invalid_argument("NPU import offset ", offset, " is not a multiple of the ", kPageSize,
                            "-byte page");
  }
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    return invalid_argument("fd ", fd, " cannot be imported: ", std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(memory_mutex_);
  return insert_mapping(own, bytes, offset);
}

Result<int> Emulator::export_fd(uint32_t handle) {
  std::lock_guard<std::mutex> lock(memory_mutex_);
  for (const auto& [address, buffer] : buffers_) {
    if (buffer->handle != handle) continue;
    if (buffer->fd < 0) {
      return invalid_argument("NPU memory handle ", handle,
                              " is not shareable (allocate it with shareable = true)");
    }
    const int fd = fcntl(buffer->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      return make_error(StatusCode::kOutOfMemory, "cannot export NPU memory handle ", handle, ": ",
                        std::strerror(errno));
    }
    return fd;
  }
  return invalid_argument("NPU memory handle ", handle, " is not allocated");
}

Status Emulator::release(uint32_t handle) {
  std::lock_guard<std::mutex> lock(memory_mutex_);
  for (auto it = buffers_.begin(); it != buffers_.end(); ++it) {
    if (it->second->handle == handle) {
      buffers_.erase(it);
      return ok_status();
    }
  }
  return invalid_argument("NPU memory handle ", handle, " is not allocated");
}

Result<Emulator::Allocation> Emulator::find(uint32_t handle) {
  std::lock_guard<std::mutex> lock(memory_mutex_);
  for (auto& [address, buffer] : buffers_) {
    if (buffer->handle == handle) {
      return Allocation{handle, address, buffer->host, buffer->mapped_size, buffer->fd};
    }
  }
  return invalid_argument("NPU memory handle ", handle, " is not allocated");
}

uint8_t* Emulator::translate(uint32_t address, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(memory_mutex_);
  auto it = buffers_.upper_bound(address);
  if (it == buffers_.begin()) return nullptr;
  --it;
  const uint64_t offset = address - it->first;
  if (offset + bytes > it->second->mapped_size) return nullptr;
  return it->second->host + offset;
}

void Emulator::reset_core(int core) {
  if (core >= 0 && core < core_count_) *cores_[static_cast<size_t>(core)] = CoreRegisters{};
}

uint64_t Emulator::cycles_for(uint64_t macs, uint64_t bytes, bool float16) const {
  const uint64_t rate = float16 ? timing_.float16_macs_per_cycle : timing_.macs_per_cycle;
  const uint64_t compute = (macs + rate - 1) / rate;
  const uint64_t transfer = (bytes + timing_.bytes_per_cycle - 1) / timing_.bytes_per_cycle;
  return std::max(compute, transfer) + timing_.task_overhead_cycles;
}

TaskRunReport Emulator::run_tasks(int core, uint32_t regcmd_address, uint32_t register_amount,
                                  uint32_t task_number) {
  TaskRunReport report;
  CoreRegisters& registers = *cores_[static_cast<size_t>(core)];
  uint32_t address = regcmd_address;
  uint32_t amount = register_amount;
  // The conv buffer keeps its weights from task to task and from one kick to the next on this
  // core (rocket kicks every task of a job separately); only reset_core empties it.
  registers.fault.clear();
  while (report.tasks_completed < task_number) {
    // The PC fetches 2 x (amount + 1) command words.
    const uint64_t words = 2ull * (uint64_t{amount} + 1);
    const uint8_t* fetched = translate(address, words * 8);
    if (!fetched || address % 16 != 0) {
      report.interrupt_status |= kInterruptDmaReadError;
      return report;
    }
    std::vector<uint64_t> list(words);
    std::memcpy(list.data(), fetched, words * 8);
    registers.set(kPcBaseAddress, 0);
    registers.set(kPcRegisterAmounts, 0);
    uint64_t cycles = 0;
    bool dma_error = false;
    uint32_t finished_interrupts = 0;
    for (uint64_t word : list) {
      const uint16_t target = command_target(word);
      const uint16_t offset = command_offset(word);
      const uint32_t value = command_value(word);
      if (word == 0 || target == kTargetBarrier) continue;
      if (target == kTargetOpEnable) {
        cycles += execute(registers, value, &dma_error);
        finished_interrupts |= (value & kEnablePpu) ? kInterruptPpu0 : kInterruptDpu0;
        if (dma_error) break;
        continue;
      }
      if (offset == kDpuLutAccessData) {
        const uint32_t index = registers.get(kDpuLutAccessCfg) & 0xff;
        registers.lut[index] = static_cast<int8_t>(value & 0xff);
        registers.set(kDpuLutAccessCfg, index + 1);
        continue;
      }
      registers.set(offset, value);
    }
    if (dma_error) {
      report.interrupt_status |= kInterruptDmaReadError;
      report.fault = registers.fault;
      return report;
    }
    report.interrupt_status = finished_interrupts;
    report.task_cycles.push_back(cycles);
    ++report.tasks_completed;
    registers.set(kPcTaskStatus, report.tasks_completed);
    address = registers.get(kPcBaseAddress);
    amount = registers.get(kPcRegisterAmounts);
    if (address == 0) break;  // a NOP tail: the chain ends here
  }
  return report;
}

uint64_t Emulator::execute(CoreRegisters& registers, uint32_t enable_mask, bool* dma_error) {
  if (enable_mask & kEnableCna) {
    const bool float16 =
        ((registers.get(kCnaConvCon1) >> kCnaInPrecisionShift) & 7) == kPrecisionFloat16;
    return float16 ? execute_convolution_float16(registers, dma_error)
                   : execute_convolution(registers, dma_error);
  }
  if (enable_mask & kEnablePpu) {
    return (registers.get(kPpuRdmaDataFormat) & 3) == kPrecisionFloat16
               ? execute_pooling_float16(registers, dma_error)
               : execute_pooling(registers, dma_error);
  }
  if (enable_mask & kEnableDpu) {
    const bool float16 =
        ((registers.get(kRdmaFeatureModeCfg) >> kRdmaInPrecisionShift) & 7) == kPrecisionFloat16;
    return float16 ? execute_standalone_dpu_float16(registers, dma_error)
                   : execute_standalone_dpu(registers, dma_error);
  }
  return timing_.task_overhead_cycles;
}

}  // namespace orknn::driver_shim::emu
