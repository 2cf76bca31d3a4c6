// Slice and Transpose as planned copies (devices/cpu/ops/strided_copies.h) against
// reference::strided_copy, byte for byte: random transposes (ranks 1-5, every permutation
// kind) and slices (starts, positive and negative steps) of elements of 1, 2, 4 and 8 bytes
// (and 3, which takes the reference's walk), small and large enough for the pool, on 1 and 3
// threads; and the plans themselves for NCHW <-> NHWC, a row slice and a strided slice.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "devices/cpu/ops/strided_copies.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/data_movement.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;
namespace reference = kernels::reference;
using devices::cpu::StridedCopies;

std::string describe(const reference::StridedCopyParams& p, size_t element_size) {
  std::string text = std::to_string(element_size) + "-byte elements, shape [";
  for (int64_t e : p.output_shape) text += std::to_string(e) + " ";
  text += "] strides [";
  for (int64_t s : p.input_strides) text += std::to_string(s) + " ";
  return text + "] offset " + std::to_string(p.input_offset);
}

// Copies `input` (`input_elements` elements) by the plan and by the reference on pools of 1 and
// 3 threads and fails on the first differing byte.
void check_copy(const reference::StridedCopyParams& params, size_t element_size,
                size_t input_elements, Random& random) {
  std::vector<uint8_t> input(input_elements * element_size);
  for (uint8_t& byte : input) byte = static_cast<uint8_t>(random.integer(0, 255));
  const size_t output_bytes = shape_elements(params.output_shape) * element_size;
  std::vector<uint8_t> expected(output_bytes + 1, 0xA5), output(output_bytes + 1, 0x5A);
  reference::strided_copy(element_size, params, input.data(), expected.data());
  expected.back() = 0x5A;  // the byte past the output stays untouched
  const StridedCopies copies(element_size, params);
  ThreadPool one(1), three(3);
  for (ThreadPool* pool : {&one, &three}) {
    ThreadPool::Scope scope(pool);
    std::fill(output.begin(), output.end() - 1, uint8_t{0x5A});
    copies.copy(input.data(), output.data());
    if (output != expected) {
      const size_t at = static_cast<size_t>(
          std::mismatch(output.begin(), output.end(), expected.begin()).first - output.begin());
      fail_msg("%s, plan %d, %zu threads: byte %zu is %d, expected %d",
               describe(params, element_size).c_str(), static_cast<int>(copies.plan()),
               pool->thread_count(), at, output[at], expected[at]);
    }
  }
}

std::vector<int64_t> random_shape(Random& random, size_t rank, int64_t largest) {
  std::vector<int64_t> shape(rank);
  for (int64_t& extent : shape) extent = random.integer(1, 4) == 1 ? 1 : random.integer(1, largest);
  return shape;
}

void test_random_transposes_match_reference(void**) {
  Random random(41);
  const size_t element_sizes[] = {1, 2, 4, 8, 3};
  for (size_t rank = 1; rank <= 5; ++rank) {
    for (int trial = 0; trial < 40; ++trial) {
      // Every tenth shape is large enough (hundreds of KB) for the pool.
      const int64_t largest = trial % 10 == 9 ? (rank <= 2 ? 700 : 40) : 9;
      const std::vector<int64_t> shape = random_shape(random, rank, largest);
      std::vector<int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      for (size_t k = rank; k > 1; --k) {
        std::swap(perm[k - 1], perm[static_cast<size_t>(random.integer(0, int(k) - 1))]);
      }
      const size_t element_size = element_sizes[random.integer(0, 4)];
      check_copy(reference::transpose_layout(shape, perm), element_size, shape_elements(shape),
                 random);
    }
  }
}

void test_random_slices_match_reference(void**) {
  Random random(42);
  for (size_t rank = 1; rank <= 4; ++rank) {
    for (int trial = 0; trial < 60; ++trial) {
      const std::vector<int64_t> shape = random_shape(random, rank, trial % 10 == 9 ? 120 : 12);
      reference::SliceParams slice;
      slice.input_shape = shape;
      for (size_t k = 0; k < rank; ++k) {
        int64_t step = random.integer(1, 3) == 1 ? random.integer(2, 3) : 1;
        if (random.integer(0, 3) == 0) step = -step;
        const int64_t start =
            step > 0 ? random.integer(0, int(shape[k]) - 1) : random.integer(0, int(shape[k]) - 1);
        // Elements start, start + step, ... while inside [0, extent).
        const int64_t available =
            step > 0 ? (shape[k] - start + step - 1) / step : start / -step + 1;
        slice.starts.push_back(start);
        slice.steps.push_back(step);
        slice.output_shape.push_back(random.integer(1, int(available)));
      }
      const size_t element_size = static_cast<size_t>(1) << random.integer(0, 3);
      check_copy(reference::slice_layout(slice), element_size, shape_elements(shape), random);
    }
  }
}

void test_plans(void**) {
  // NCHW -> NHWC of 1 x 64 x 20 x 20: the channel axis is contiguous in the input.
  const reference::StridedCopyParams to_nhwc =
      reference::transpose_layout({1, 64, 20, 20}, {0, 2, 3, 1});
  const StridedCopies tiles(4, to_nhwc);
  assert_int_equal(static_cast<int>(tiles.plan()), static_cast<int>(StridedCopies::Plan::kTiles));
  assert_int_equal(tiles.axis_count(), 2);  // H and W merged, N dropped
  // Keeping the last axis: whole rows.
  const StridedCopies rows(4, reference::transpose_layout({3, 5, 7}, {1, 0, 2}));
  assert_int_equal(static_cast<int>(rows.plan()), static_cast<int>(StridedCopies::Plan::kRuns));
  // A slice with step 2 on both axes: elements.
  reference::SliceParams slice{{8, 8}, {0, 1}, {2, 2}, {4, 3}};
  const StridedCopies elements(1, reference::slice_layout(slice));
  assert_int_equal(static_cast<int>(elements.plan()),
                   static_cast<int>(StridedCopies::Plan::kElements));
  // An identity transpose is one run; an empty output copies nothing.
  const StridedCopies identity(2, reference::transpose_layout({4, 6, 2}, {0, 1, 2}));
  assert_int_equal(identity.axis_count(), 1);
  const StridedCopies empty(4, reference::transpose_layout({4, 0, 2}, {2, 1, 0}));
  assert_int_equal(static_cast<int>(empty.plan()), static_cast<int>(StridedCopies::Plan::kNothing));
  empty.copy(nullptr, nullptr);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_transposes_match_reference),
      cmocka_unit_test(test_random_slices_match_reference),
      cmocka_unit_test(test_plans),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
