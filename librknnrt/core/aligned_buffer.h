// A heap buffer with 64-byte alignment (cache line and widest SIMD load), zero-initialised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace orknn {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  // Returns an empty buffer (data() == nullptr) when size > 0 and allocation fails.
  explicit AlignedBuffer(size_t size) : size_(size) {
    if (size == 0) return;
    const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlignment, rounded)));
    if (data_) {
      std::memset(data_.get(), 0, rounded);
    } else {
      size_ = 0;
    }
  }

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool allocation_failed(size_t requested) const { return requested > 0 && !data_; }

 private:
  struct FreeDeleter {
    void operator()(uint8_t* pointer) const { std::free(pointer); }
  };
  std::unique_ptr<uint8_t, FreeDeleter> data_;
  size_t size_ = 0;
};

}  // namespace orknn
