#include "api/memory_registry.h"

namespace orknn::api {

MemoryRegistry& MemoryRegistry::instance() {
  // Never destroyed, like the context registry: objects outlive static destruction order.
  static MemoryRegistry* registry = new MemoryRegistry();
  return *registry;
}

rknn_tensor_mem* MemoryRegistry::add(std::shared_ptr<DeviceMemory> memory, uint32_t origin_flags) {
  auto descriptor = std::make_unique<rknn_tensor_mem>();
  descriptor->virt_addr = memory->data();
  descriptor->phys_addr = memory->device_address();  // the NPU address of NPU driver memory
  descriptor->fd = memory->fd();
  descriptor->offset = static_cast<int32_t>(memory->fd_offset());
  descriptor->size = static_cast<uint32_t>(memory->size());
  descriptor->flags = origin_flags;
  descriptor->priv_data = nullptr;
  rknn_tensor_mem* handle = descriptor.get();
  std::lock_guard<std::mutex> lock(mutex_);
  objects_[handle] = Entry{std::move(descriptor), std::move(memory)};
  return handle;
}

std::shared_ptr<DeviceMemory> MemoryRegistry::find(const rknn_tensor_mem* mem) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = objects_.find(mem);
  return it == objects_.end() ? nullptr : it->second.memory;
}

std::shared_ptr<DeviceMemory> MemoryRegistry::find_containing(int fd, const void* address,
                                                              size_t size) {
  const auto* begin = static_cast<const uint8_t*>(address);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [handle, entry] : objects_) {
    const DeviceMemory& memory = *entry.memory;
    if (memory.fd() == fd && begin >= memory.data() && size <= memory.size() &&
        begin - memory.data() <= static_cast<ptrdiff_t>(memory.size() - size)) {
      return entry.memory;
    }
  }
  return nullptr;
}

bool MemoryRegistry::remove(rknn_tensor_mem* mem) {
  std::lock_guard<std::mutex> lock(mutex_);
  return objects_.erase(mem) > 0;
}

size_t MemoryRegistry::live_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return objects_.size();
}

}  // namespace orknn::api
