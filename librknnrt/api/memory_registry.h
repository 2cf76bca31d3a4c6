// The rknn_tensor_mem objects this runtime handed out and that are still alive.
//
// Applications pass rknn_tensor_mem pointers back to many functions; a pointer the runtime did
// not create, or one already destroyed, must be refused without reading through it (it may point
// at freed or foreign memory). Every lookup therefore goes by the pointer's value in this
// registry first. The memory behind an object is reference-counted: a context that bound it
// (rknn_set_io_mem, rknn_set_internal_mem, ...) keeps the mapping alive even after
// rknn_destroy_mem, so a late rknn_run never touches unmapped memory.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "core/device_memory.h"
#include "rknn_api.h"

namespace orknn::api {

class MemoryRegistry {
 public:
  static MemoryRegistry& instance();

  // Creates the rknn_tensor_mem describing `memory` and registers it.
  rknn_tensor_mem* add(std::shared_ptr<DeviceMemory> memory, uint32_t origin_flags);
  // The memory behind `mem`, or nullptr when `mem` is not a live object of this runtime.
  std::shared_ptr<DeviceMemory> find(const rknn_tensor_mem* mem);
  // The live object whose bytes contain [address, address + size), with fd `fd`.
  std::shared_ptr<DeviceMemory> find_containing(int fd, const void* address, size_t size);
  // Unregisters and frees `mem`; false when it is not live.
  bool remove(rknn_tensor_mem* mem);
  size_t live_count();

 private:
  struct Entry {
    std::unique_ptr<rknn_tensor_mem> descriptor;
    std::shared_ptr<DeviceMemory> memory;
  };
  std::mutex mutex_;
  std::map<const rknn_tensor_mem*, Entry> objects_;
};

}  // namespace orknn::api
