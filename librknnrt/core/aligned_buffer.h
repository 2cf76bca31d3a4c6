// A heap buffer with 64-byte alignment (cache line and widest SIMD load), zero-initialised.
// Buffers of 2 MiB and more (a context's tensor arena, the kernels' scratch) are 2 MiB-aligned
// and asked to be backed by transparent huge pages (aligned_buffer.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace orknn {

// Releases an AlignedBuffer's memory (free_large needs its size).
struct LargeBufferDeleter {
  size_t bytes = 0;
  void operator()(uint8_t* pointer) const;
};

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  // Returns an empty buffer (data() == nullptr) when size > 0 and allocation fails.
  explicit AlignedBuffer(size_t size);

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool allocation_failed(size_t requested) const { return requested > 0 && !data_; }

 private:
  std::unique_ptr<uint8_t, LargeBufferDeleter> data_;
  size_t size_ = 0;
};

// Whether large buffers ask for huge pages: yes unless ORKNN_HUGE_PAGES=0 (read once).
bool huge_pages_enabled();

}  // namespace orknn
