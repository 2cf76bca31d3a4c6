// AlignedBuffer (core/aligned_buffer.h): every buffer is zeroed and 64-byte aligned; buffers of
// 2 MiB and more start on a 2 MiB boundary, where transparent huge pages can back them; so do
// vectors with LargeAllocator (core/large_allocation.h).
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/large_allocation.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using orknn::AlignedBuffer;

constexpr size_t kHugePage = size_t{2} << 20;

bool all_zero(const AlignedBuffer& buffer) {
  for (size_t i = 0; i < buffer.size(); ++i) {
    if (buffer.data()[i] != 0) return false;
  }
  return true;
}

void test_small_buffers_are_line_aligned_and_zeroed(void**) {
  for (size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{1000}, kHugePage - 1}) {
    AlignedBuffer buffer(size);
    assert_non_null(buffer.data());
    assert_int_equal(buffer.size(), size);
    assert_int_equal(reinterpret_cast<uintptr_t>(buffer.data()) % AlignedBuffer::kAlignment, 0);
    assert_true(all_zero(buffer));
  }
}

void test_large_buffers_start_on_a_huge_page(void**) {
  for (size_t size : {kHugePage, kHugePage + 1, 3 * kHugePage + 12345}) {
    AlignedBuffer buffer(size);
    assert_non_null(buffer.data());
    assert_int_equal(buffer.size(), size);
    if (orknn::huge_pages_enabled()) {
      assert_int_equal(reinterpret_cast<uintptr_t>(buffer.data()) % kHugePage, 0);
    }
    assert_true(all_zero(buffer));
    buffer.data()[size - 1] = 1;  // the whole size is usable (ASan checks the bounds)
  }
}

// Packed weights (std::vector with LargeAllocator) are placed the same way.
void test_large_allocator_vectors(void**) {
  std::vector<float, orknn::LargeAllocator<float>> small(100, 1.0f);
  assert_int_equal(reinterpret_cast<uintptr_t>(small.data()) % AlignedBuffer::kAlignment, 0);
  std::vector<float, orknn::LargeAllocator<float>> large(kHugePage / sizeof(float) + 7, 2.0f);
  if (orknn::huge_pages_enabled()) {
    assert_int_equal(reinterpret_cast<uintptr_t>(large.data()) % kHugePage, 0);
  }
  assert_true(large.back() == 2.0f);
  large.assign(3, 5.0f);
  assert_int_equal(large.size(), 3);
}

void test_empty_and_failed_buffers(void**) {
  AlignedBuffer empty;
  assert_null(empty.data());
  assert_false(empty.allocation_failed(0));
  AlignedBuffer zero(0);
  assert_null(zero.data());
  assert_false(zero.allocation_failed(0));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_buffers_are_line_aligned_and_zeroed),
      cmocka_unit_test(test_large_buffers_start_on_a_huge_page),
      cmocka_unit_test(test_large_allocator_vectors),
      cmocka_unit_test(test_empty_and_failed_buffers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
