// rknn_run allocates nothing after the first run (DESIGN.md 3): the sample networks in every
// precision, on a pool of 2 CPU threads (ORKNN_CPU_THREADS, read once per process), with the
// global operator new counted around each rknn_run. The first run may allocate (lazily grown
// scratch); the next ones must not.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "rknn_api.h"
#include "sample_models.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* allocate(size_t bytes) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* pointer = std::malloc(bytes ? bytes : 1)) return pointer;
  throw std::bad_alloc();
}

void* allocate_aligned(size_t bytes, std::align_val_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  const size_t align = static_cast<size_t>(alignment);
  if (void* pointer = std::aligned_alloc(align, (bytes + align - 1) / align * align)) {
    return pointer;
  }
  throw std::bad_alloc();
}

}  // namespace

// Every allocation of the process goes through these (the runtime is C++; its few C buffers are
// made at rknn_init).
void* operator new(size_t bytes) {
  return allocate(bytes);
}
void* operator new[](size_t bytes) {
  return allocate(bytes);
}
void* operator new(size_t bytes, std::align_val_t alignment) {
  return allocate_aligned(bytes, alignment);
}
void* operator new[](size_t bytes, std::align_val_t alignment) {
  return allocate_aligned(bytes, alignment);
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form must pair
// with the deletes here.
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t bytes, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, tag);
}
void* operator new(size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return allocate_aligned(bytes, alignment);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t bytes, std::align_val_t alignment, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, alignment, tag);
}
void operator delete(void* pointer, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, size_t) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, size_t) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, size_t, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, size_t, std::align_val_t) noexcept {
  std::free(pointer);
}

namespace {

using orknn::sample_models::Precision;
using orknn::sample_models::SampleNetwork;

// Allocations during one rknn_run.
long counted_run(rknn_context context) {
  allocations.store(0);
  counting.store(true);
  const int status = rknn_run(context, nullptr);
  counting.store(false);
  assert_int_equal(status, RKNN_SUCC);
  return allocations.load();
}

void check_network(SampleNetwork network, Precision precision) {
  orknn::Result<std::vector<uint8_t>> model =
      orknn::sample_models::build_sample_model(network, precision);
  assert_true(model.ok());
  rknn_context context = 0;
  assert_int_equal(rknn_init(&context, model.value().data(),
                             static_cast<uint32_t>(model.value().size()), 0, nullptr),
                   RKNN_SUCC);
  const std::vector<std::vector<int64_t>> dims = orknn::sample_models::sample_input_dims(network);
  std::vector<orknn::sample_models::SampleInput> images;
  std::vector<rknn_input> inputs(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    images.push_back(orknn::sample_models::make_sample_input(network, static_cast<int>(i), 7));
    inputs[i].index = static_cast<uint32_t>(i);
    inputs[i].buf = images[i].pixels.data();
    inputs[i].size = static_cast<uint32_t>(images[i].pixels.size());
    inputs[i].type = RKNN_TENSOR_UINT8;
    inputs[i].fmt = RKNN_TENSOR_NHWC;
  }
  assert_int_equal(rknn_inputs_set(context, static_cast<uint32_t>(inputs.size()), inputs.data()),
                   RKNN_SUCC);
  counted_run(context);  // the first run may allocate
  for (int run = 0; run < 3; ++run) {
    const long count = counted_run(context);
    if (count != 0) {
      rknn_destroy(context);
      fail_msg("%s %s: rknn_run allocated %ld times on run %d after the first",
               orknn::sample_models::network_name(network),
               orknn::sample_models::precision_name(precision), count, run + 2);
    }
  }
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
}

// The counter itself works: a vector allocates while counting.
void test_counter_counts(void**) {
  allocations.store(0);
  counting.store(true);
  std::vector<int>* values = new std::vector<int>(100);
  counting.store(false);
  delete values;
  assert_true(allocations.load() >= 2);
}

void test_no_allocation_after_first_run(void**) {
  for (SampleNetwork network : orknn::sample_models::all_networks()) {
    for (Precision precision : orknn::sample_models::all_precisions()) {
      check_network(network, precision);
    }
  }
}

}  // namespace

int main() {
  setenv("ORKNN_CPU_THREADS", "2", 0);  // workers and the caller share the runs
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counter_counts),
      cmocka_unit_test(test_no_allocation_after_first_run),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
