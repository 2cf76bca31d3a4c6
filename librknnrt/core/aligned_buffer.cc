#include "core/aligned_buffer.h"
#include "core/large_allocation.h"

#include <algorithm>
#include <cstdint>
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

// Why huge buffers are mapped here rather than taken from malloc: only pages first touched
// after the madvise become huge. glibc serves large blocks from mmap until one is freed, and
// then raises its mmap threshold to that block's size (up to 32 MiB), so later blocks come
// from the heap, on pages an earlier block (the model file's copy, a converted weight) already
// touched: a resnet50 float32 context had 116 MB of its packed weights on huge pages, a second
// one in the same process 94 MB, and the rest, Winograd's 9.4 MB transformed weights among
// them, on 4 KiB pages. Fresh mappings get huge pages whatever came before (162 MB each):
// float32 resnet18 ran 3% faster at one thread, resnet50 2.6% at two, yolov5s 1% (session 23).
// Under AddressSanitizer they come from malloc, so that its red zones still guard them
// (large_allocation.h).

bool on_huge_pages(size_t bytes) {
  return bytes >= kHugePage && huge_pages_enabled();
}

size_t round_up(size_t bytes, size_t alignment) {
  return (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
}

#if !ORKNN_LARGE_FROM_MALLOC
// A fresh mapping of `bytes` (a multiple of kHugePage) at a kHugePage boundary: one more huge
// page is mapped and what lies outside the aligned range is unmapped again.
void* map_huge(size_t bytes) {
  const size_t span = bytes + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto first = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (first + kHugePage - 1) / kHugePage * kHugePage;
  if (start > first) munmap(raw, start - first);
  const uintptr_t end = first + span;
  if (end > start + bytes) munmap(reinterpret_cast<void*>(start + bytes), end - start - bytes);
#if defined(MADV_HUGEPAGE)
  // Before the first touch, so that the pages are huge from the start. A refusal (EINVAL where
  // the kernel has no transparent huge pages) leaves small pages: nothing to do.
  madvise(reinterpret_cast<void*>(start), bytes, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(start);
}
#endif

}  // namespace

bool huge_pages_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("ORKNN_HUGE_PAGES");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

void* allocate_large(size_t bytes) {
  const bool huge = on_huge_pages(bytes);
  const size_t alignment = huge ? kHugePage : AlignedBuffer::kAlignment;
  const size_t rounded = round_up(bytes, alignment);
#if !ORKNN_LARGE_FROM_MALLOC
  if (huge) return map_huge(rounded);
#endif
  return std::aligned_alloc(alignment, rounded);
}

void free_large(void* pointer, size_t bytes) {
  if (pointer == nullptr) return;
#if !ORKNN_LARGE_FROM_MALLOC
  if (on_huge_pages(bytes)) {
    munmap(pointer, round_up(bytes, kHugePage));
    return;
  }
#endif
  (void)bytes;
  std::free(pointer);
}

void LargeBufferDeleter::operator()(uint8_t* pointer) const {
  free_large(pointer, bytes);
}

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  if (size == 0) return;
  data_ = std::unique_ptr<uint8_t, LargeBufferDeleter>(static_cast<uint8_t*>(allocate_large(size)),
                                                       LargeBufferDeleter{size});
  if (!data_) {
    size_ = 0;
    return;
  }
  std::memset(data_.get(), 0, size);
}

}  // namespace orknn
