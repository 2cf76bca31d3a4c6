// Memory that other hardware can share: a file descriptor (dma-buf or memfd) and its mapping in
// this process. rknn_create_mem* hands these out; the NPU device supplies its own allocator
// (driver memory, devices/npu/npu_memory.h) through set_device_memory_allocator(), and derives
// from DeviceMemory to sync through the driver and to carry the NPU address.
//
// Ownership: a DeviceMemory either owns its fd and mapping (allocated) or borrows them (imported
// from the application, which keeps the fd open and frees it itself). Thread-safety: a
// DeviceMemory is immutable after creation; sync() may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace orknn {

enum class SyncDirection { kToDevice, kFromDevice, kBidirectional };

class DeviceMemory {
 public:
  // Takes ownership of `fd` and of the mapping [mapping, mapping + mapping_size) when
  // `owned`; `data` is where the usable bytes start inside the mapping.
  DeviceMemory(int fd, void* mapping, size_t mapping_size, uint8_t* data, size_t size,
               uint64_t fd_offset, bool owned, bool cacheable, bool is_dma_buf, std::string source);
  virtual ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  int fd() const { return fd_; }
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  uint64_t fd_offset() const { return fd_offset_; }  // where data() starts inside the fd
  bool cacheable() const { return cacheable_; }
  bool owned() const { return owned_; }
  // "memfd", "dma_heap:system", "import", or the NPU backend's name ("emu", "rknpu", "rocket",
  // "import:rknpu") for NPU driver memory.
  const std::string& source() const { return source_; }
  // The address a device uses for data() (rknn_tensor_mem.phys_addr): the NPU address for NPU
  // driver memory, 0 for memory only the CPU addresses.
  virtual uint64_t device_address() const { return 0; }

  // Makes CPU writes visible to the device (kToDevice), device writes visible to the CPU
  // (kFromDevice) or both, for [offset, offset + length) of data(). A no-op for memory that is
  // coherent with the CPU (memfd, non-cacheable); dma-bufs use DMA_BUF_IOCTL_SYNC, which
  // covers the whole buffer (the kernel has no partial-range sync for CPU access).
  // NPU driver memory syncs through the driver instead.
  virtual Status sync(SyncDirection direction, size_t offset, size_t length) const;

 private:
  int fd_;
  void* mapping_;
  size_t mapping_size_;
  uint8_t* data_;
  size_t size_;
  uint64_t fd_offset_;
  bool owned_;
  bool cacheable_;
  bool is_dma_buf_;
  std::string source_;
};

// Where new shareable memory comes from.
class DeviceMemoryAllocator {
 public:
  virtual ~DeviceMemoryAllocator() = default;
  virtual const char* name() const = 0;
  virtual Result<std::unique_ptr<DeviceMemory>> allocate(size_t size, bool cacheable) = 0;
  // Wraps the application's `fd` (rknn_create_mem_from_fd; see import_device_memory). A device
  // allocator imports it into the device when it can, so the device addresses it in place.
  virtual Result<std::unique_ptr<DeviceMemory>> import(int fd, void* virtual_address, size_t size,
                                                       uint64_t offset);
};

// memfd_create + mmap: always available on Linux >= 3.17; the fd can be mmapped by any process
// it is passed to.
std::unique_ptr<DeviceMemoryAllocator> make_memfd_allocator();
// A /dev/dma_heap/<heap> allocator (cacheable: "system", non-cacheable: "system-uncached" when
// present); nullptr when the heap directory does not exist.
std::unique_ptr<DeviceMemoryAllocator> make_dma_heap_allocator(const std::string& directory);

// The allocator rknn_create_mem* uses: the one installed by a device (the NPU driver), else
// dma_heap when /dev/dma_heap exists, else memfd. ORKNN_MEMORY_ALLOCATOR=memfd|dma_heap forces
// one (for tests).
DeviceMemoryAllocator& device_memory_allocator();
// Installs the allocator a device supplies (nullptr restores the default). Not thread-safe with
// concurrent allocations: call during device set-up. Memory already allocated keeps whatever
// it needs alive itself (NPU memory holds its driver), so replacing an allocator never
// invalidates memory.
void set_device_memory_allocator(std::unique_ptr<DeviceMemoryAllocator> allocator);

// Wraps memory the application allocated: `fd` with its mapping `virtual_address` (the start of
// the fd's mapping; null means map it here), the tensor at `offset` inside the fd, `size` bytes.
// The fd stays the application's.
Result<std::unique_ptr<DeviceMemory>> import_device_memory(int fd, void* virtual_address,
                                                           size_t size, uint64_t offset);

}  // namespace orknn
