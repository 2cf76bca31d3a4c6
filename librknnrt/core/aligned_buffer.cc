#include "core/aligned_buffer.h"
#include "core/large_allocation.h"

#include <algorithm>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace orknn {
namespace {

// Why huge pages: a layer's planes are hundreds of 4 KiB pages apart (YOLOv5s at 640x640 has
// 13 MB tensors; a convolution reads a line from each of its input planes per depth step), more
// pages than the TLB maps. With the arena and the scratch on 2 MiB pages, yolov5s float32 ran
// 4-8% faster at one and two threads and int8 2-4% (interleaved runs with and without, session 8).
// Linux backs an madvise'd range with huge pages when transparent huge pages are "madvise" or
// "always"; with "never", or elsewhere, the buffer is simply on small pages.
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

bool huge_pages_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("ORKNN_HUGE_PAGES");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

void* allocate_large(size_t bytes) {
  const bool huge = bytes >= kHugePage && huge_pages_enabled();
  const size_t alignment = huge ? kHugePage : AlignedBuffer::kAlignment;
  const size_t rounded = (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* pointer = std::aligned_alloc(alignment, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Before the first touch, so that the pages are huge from the start. A refusal (EINVAL where
  // the kernel has no transparent huge pages) leaves small pages: nothing to do.
  if (pointer != nullptr && huge) madvise(pointer, rounded, MADV_HUGEPAGE);
#endif
  return pointer;
}

void free_large(void* pointer) {
  std::free(pointer);
}

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  if (size == 0) return;
  data_.reset(static_cast<uint8_t*>(allocate_large(size)));
  if (!data_) {
    size_ = 0;
    return;
  }
  std::memset(data_.get(), 0, size);
}

}  // namespace orknn
