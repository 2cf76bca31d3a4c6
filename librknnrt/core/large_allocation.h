// Allocations that large kernels stream through every run (packed weights): 64-byte aligned,
// and from 2 MiB on 2 MiB-aligned and advised for transparent huge pages, as AlignedBuffer's.
//
//   std::vector<float, LargeAllocator<float>> packed_weights;
#pragma once

#include <cstddef>
#include <new>

namespace orknn {

// Memory for `bytes` (aligned as above), or null. Release with free_large.
void* allocate_large(size_t bytes);
void free_large(void* pointer);

template <typename T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}  // NOLINT: rebinding converts implicitly
  T* allocate(size_t count) {
    void* pointer = allocate_large(count * sizeof(T));
    if (pointer == nullptr) throw std::bad_alloc();
    return static_cast<T*>(pointer);
  }
  void deallocate(T* pointer, size_t) { free_large(pointer); }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const LargeAllocator<U>&) const {
    return false;
  }
};

}  // namespace orknn
