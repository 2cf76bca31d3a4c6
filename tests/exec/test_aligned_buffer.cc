// AlignedBuffer (core/aligned_buffer.h): every buffer is zeroed and 64-byte aligned; buffers of
// 2 MiB and more start on a 2 MiB boundary, where transparent huge pages can back them; so do
// vectors with LargeAllocator (core/large_allocation.h). Those are mappings of their own.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
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

// The label of the /proc/self/maps line whose range holds `address` ("" for an anonymous
// mapping, "[heap]" for the brk heap), or "?" when none does or the file cannot be read.
std::string mapping_label(const void* address) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return "?";
  const auto wanted = reinterpret_cast<uintptr_t>(address);
  char line[512];
  std::string label = "?";
  while (std::fgets(line, sizeof(line), maps)) {
    unsigned long long low = 0, high = 0;
    int consumed = 0;
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s%n", &low, &high, &consumed) < 2) continue;
    if (wanted < low || wanted >= high) continue;
    label = line + consumed;
    label.erase(0, label.find_first_not_of(' '));
    label.erase(label.find_last_not_of(" \n") + 1);
    break;
  }
  std::fclose(maps);
  return label;
}

// Large buffers are mappings of their own, so that their pages are first touched after the
// huge-page advice, even after glibc has started serving large blocks from its heap (it does
// once a large block is freed: here a 16 MiB one). Not where they come from malloc
// (ORKNN_LARGE_FROM_MALLOC: AddressSanitizer builds, other systems than Linux).
void test_large_buffers_are_fresh_mappings(void**) {
#if !ORKNN_LARGE_FROM_MALLOC
  if (!orknn::huge_pages_enabled()) return;
  void* volatile freed = std::malloc(16 << 20);  // volatile: the pair is not optimised away
  std::free(freed);
  AlignedBuffer buffer(9 << 20);
  assert_non_null(buffer.data());
  const std::string label = mapping_label(buffer.data());
  assert_string_not_equal(label.c_str(), "?");
  assert_string_not_equal(label.c_str(), "[heap]");
  std::vector<float, orknn::LargeAllocator<float>> weights((9 << 20) / sizeof(float));
  assert_string_not_equal(mapping_label(weights.data()).c_str(), "[heap]");
#endif
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
      cmocka_unit_test(test_large_buffers_are_fresh_mappings),
      cmocka_unit_test(test_empty_and_failed_buffers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
