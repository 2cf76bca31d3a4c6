// NPU driver memory for rknn_create_mem* (docs/threading-and-memory.md, "Where memory comes
// from"): the NPU device installs an NpuMemoryAllocator, which allocates from the driver and
// exports each buffer as an fd (dma-buf, or memfd in the emulator), and imports the
// application's dma-bufs so the NPU addresses them in place.
//
// Lifetimes: an NpuBuffer (one driver allocation or import) holds the Npu it came from, so it
// may outlive every context and the allocator; it is destroyed when the last NpuDeviceMemory
// viewing it goes (views come from rknn_create_mem_from_fd of our own exported fd).
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device_memory.h"
#include "driver_shim/npu.h"

namespace orknn::devices::npu {

struct NpuBuffer {
  NpuBuffer(std::shared_ptr<driver_shim::Npu> npu, driver_shim::NpuMemory memory)
      : npu(std::move(npu)), memory(memory) {}
  ~NpuBuffer();
  NpuBuffer(const NpuBuffer&) = delete;
  NpuBuffer& operator=(const NpuBuffer&) = delete;
  std::shared_ptr<driver_shim::Npu> npu;
  driver_shim::NpuMemory memory;
  dev_t exported_device = 0;  // identity of the exported fd's file, to recognise it on import
  ino_t exported_inode = 0;
};

// A window [offset, offset + size) of an NpuBuffer, as the runtime's DeviceMemory.
class NpuDeviceMemory final : public DeviceMemory {
 public:
  NpuDeviceMemory(std::shared_ptr<NpuBuffer> buffer, size_t offset, size_t size, int fd,
                  bool owns_fd, uint8_t* data, bool cacheable, std::string source);
  Status sync(SyncDirection direction, size_t offset, size_t length) const override;
  uint64_t device_address() const override { return npu_address(); }

  const std::shared_ptr<NpuBuffer>& buffer() const { return buffer_; }
  const driver_shim::Npu* npu() const { return buffer_->npu.get(); }
  uint32_t npu_address() const {
    return buffer_->memory.npu_address + static_cast<uint32_t>(offset_);
  }

 private:
  std::shared_ptr<NpuBuffer> buffer_;
  size_t offset_;
};

// The NpuDeviceMemory behind `memory` when it is NPU memory of `npu`, else nullptr.
const NpuDeviceMemory* npu_memory_of(const DeviceMemory* memory, const driver_shim::Npu& npu);

std::unique_ptr<DeviceMemoryAllocator> make_npu_memory_allocator(
    std::shared_ptr<driver_shim::Npu> npu);

}  // namespace orknn::devices::npu
