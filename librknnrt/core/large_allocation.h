// Allocations that large kernels stream through every run (packed weights): 64-byte aligned,
// and from 2 MiB on 2 MiB-aligned mappings of their own, advised for transparent huge pages,
// as AlignedBuffer's.
//
//   std::vector<float, LargeAllocator<float>> packed_weights;
#pragma once

#include <cstddef>
#include <new>

// 1 where buffers of 2 MiB and more come from malloc rather than from mappings of their own
// (aligned_buffer.cc): under AddressSanitizer, whose red zones then guard them, and off Linux.
#if defined(__SANITIZE_ADDRESS__)
#define ORKNN_LARGE_FROM_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORKNN_LARGE_FROM_MALLOC 1
#endif
#endif
#if !defined(ORKNN_LARGE_FROM_MALLOC) && !defined(__linux__)
#define ORKNN_LARGE_FROM_MALLOC 1
#endif
#if !defined(ORKNN_LARGE_FROM_MALLOC)
#define ORKNN_LARGE_FROM_MALLOC 0
#endif

namespace orknn {

// Memory for `bytes` (aligned as above), or null. Release with free_large, given the same size.
void* allocate_large(size_t bytes);
void free_large(void* pointer, size_t bytes);

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
  void deallocate(T* pointer, size_t count) { free_large(pointer, count * sizeof(T)); }
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
