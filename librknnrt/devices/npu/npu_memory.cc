#include "devices/npu/npu_memory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include "core/logging.h"

namespace orknn::devices::npu {
namespace {

driver_shim::SyncDirection driver_direction(SyncDirection direction) {
  return direction == SyncDirection::kToDevice ? driver_shim::SyncDirection::kToDevice
                                               : driver_shim::SyncDirection::kFromDevice;
}

class NpuMemoryAllocator final : public DeviceMemoryAllocator {
 public:
  explicit NpuMemoryAllocator(std::shared_ptr<driver_shim::Npu> npu)
      : npu_(std::move(npu)), name_(npu_->info().backend) {}

  const char* name() const override { return name_.c_str(); }

  Result<std::unique_ptr<DeviceMemory>> allocate(size_t size, bool cacheable) override {
    ORKNN_ASSIGN_OR_RETURN(driver_shim::NpuMemory memory,
                           npu_->create_shareable_memory(size, cacheable));
    auto buffer = std::make_shared<NpuBuffer>(npu_, memory);
    ORKNN_ASSIGN_OR_RETURN(int fd, npu_->export_memory(memory));
    struct stat info;
    if (fstat(fd, &info) == 0) {
      buffer->exported_device = info.st_dev;
      buffer->exported_inode = info.st_ino;
    }
    remember(buffer);
    return std::unique_ptr<DeviceMemory>(std::make_unique<NpuDeviceMemory>(
        buffer, 0, size, fd, true, memory.host, cacheable, name_));
  }

  // Our own exported fd (the internal-memory reuse pattern wraps rknn_create_mem memory with
  // rknn_create_mem_from_fd) becomes a view of the same buffer: importing it into the driver
  // would hand back the original handle. Other fds are imported when the driver can; else
  // the memory is wrapped for the CPU and the NPU copies through its own buffers.
  Result<std::unique_ptr<DeviceMemory>> import(int fd, void* virtual_address, size_t size,
                                               uint64_t offset) override {
    ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMemory> checked,
                           import_device_memory(fd, virtual_address, size, offset));
    uint8_t* data = checked->data();
    if (std::shared_ptr<NpuBuffer> own = find_exported(fd)) {
      if (offset + size > own->memory.size) {
        return invalid_argument("offset ", offset, " + size ", size, " > size of fd ", fd, " (",
                                own->memory.size, " bytes of NPU memory)");
      }
      return std::unique_ptr<DeviceMemory>(std::make_unique<NpuDeviceMemory>(
          own, offset, size, fd, false, virtual_address ? data : own->memory.host + offset, true,
          "import:" + name_));
    }
    Result<driver_shim::NpuMemory> imported = npu_->import_memory(fd, size, offset);
    if (!imported.ok()) {
      static std::atomic<bool> said_once{false};
      if (!said_once.exchange(true)) {
        log_debug("NPU cannot address imported memory, copying it instead: ",
                  imported.status().message());
      }
      return checked;
    }
    auto buffer = std::make_shared<NpuBuffer>(npu_, *imported);
    return std::unique_ptr<DeviceMemory>(std::make_unique<NpuDeviceMemory>(
        buffer, 0, size, fd, false, virtual_address ? data : imported->host, true,
        "import:" + name_));
  }

 private:
  void remember(const std::shared_ptr<NpuBuffer>& buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Forget buffers that are gone, so the list stays as long as the live memory.
    std::vector<std::weak_ptr<NpuBuffer>> live;
    for (auto& weak : exported_) {
      if (!weak.expired()) live.push_back(std::move(weak));
    }
    live.push_back(buffer);
    exported_ = std::move(live);
  }

  std::shared_ptr<NpuBuffer> find_exported(int fd) {
    struct stat info;
    if (fstat(fd, &info) != 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& weak : exported_) {
      std::shared_ptr<NpuBuffer> buffer = weak.lock();
      if (buffer && buffer->exported_inode == info.st_ino &&
          buffer->exported_device == info.st_dev) {
        return buffer;
      }
    }
    return nullptr;
  }

  std::shared_ptr<driver_shim::Npu> npu_;
  std::string name_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<NpuBuffer>> exported_;
};

}  // namespace

NpuBuffer::~NpuBuffer() {
  const Status status = npu->destroy_memory(memory);
  if (!status.ok()) log_warning("NPU memory not released: ", status.message());
}

NpuDeviceMemory::NpuDeviceMemory(std::shared_ptr<NpuBuffer> buffer, size_t offset, size_t size,
                                 int fd, bool owns_fd, uint8_t* data, bool cacheable,
                                 std::string source)
    // No mapping of its own: the driver's mapping lives as long as the buffer.
    : DeviceMemory(fd, nullptr, 0, data, size, offset, owns_fd, cacheable, true, std::move(source)),
      buffer_(std::move(buffer)),
      offset_(offset) {}

Status NpuDeviceMemory::sync(SyncDirection direction, size_t offset, size_t length) const {
  if (offset > size() || length > size() - offset) {
    return invalid_argument("sync range [", offset, ", ", offset + length, ") is outside the ",
                            size(), "-byte memory");
  }
  // The driver syncs whole buffers (rocket) or ranges we do not track per view: sync it all.
  driver_shim::Npu& npu = *buffer_->npu;
  if (direction == SyncDirection::kBidirectional) {
    ORKNN_RETURN_IF_ERROR(npu.sync_memory(buffer_->memory, driver_shim::SyncDirection::kToDevice));
    return npu.sync_memory(buffer_->memory, driver_shim::SyncDirection::kFromDevice);
  }
  return npu.sync_memory(buffer_->memory, driver_direction(direction));
}

const NpuDeviceMemory* npu_memory_of(const DeviceMemory* memory, const driver_shim::Npu& npu) {
  const auto* npu_memory = dynamic_cast<const NpuDeviceMemory*>(memory);
  return npu_memory && npu_memory->npu() == &npu ? npu_memory : nullptr;
}

std::unique_ptr<DeviceMemoryAllocator> make_npu_memory_allocator(
    std::shared_ptr<driver_shim::Npu> npu) {
  return std::make_unique<NpuMemoryAllocator>(std::move(npu));
}

}  // namespace orknn::devices::npu
