// Optimized float32 activations (kernels/cpu/dispatch.h prepare_unary) against
// reference::unary, for every optimized variant, on 1 and 3 threads, at vector-width edges and
// over the whole range of inputs: Relu, Clip, LeakyRelu and HardSwish bit for bit; Sigmoid,
// Swish and Tanh within 1e-6 relative (their exp is an approximation in the SIMD variants).
// The avx512 table's Sigmoid and Swish rows give the avx2 rows' bits, also for infinities, NaNs
// and the exp's clamped range.
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/micro_kernels.h"
#include "reference/elementwise.h"

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
using kernels::cpu::KernelVariant;

// Empty when every element is within `relative` of the reference's (or `relative` absolute
// where the reference is below 1e-30, where the exp approximation flushes), else the first miss.
std::string compare_relative(const std::vector<float>& actual, const std::vector<float>& expected,
                             const std::vector<float>& input, double relative) {
  for (size_t i = 0; i < actual.size(); ++i) {
    const double reference_value = expected[i];
    const double allowed = std::max(std::fabs(reference_value) * relative,
                                    std::fabs(reference_value) < 1e-30 ? relative : 0.0);
    if (!(std::fabs(double{actual[i]} - reference_value) <= allowed)) {
      char text[160];
      std::snprintf(text, sizeof(text), "element %zu (x = %.9g): %.9g, expected %.9g", i,
                    double{input[i]}, double{actual[i]}, reference_value);
      return text;
    }
  }
  return "";
}

struct ActivationCase {
  reference::UnaryOperation operation;
  float alpha;
  bool exact;
};

void test_activations_match_reference(void** /*state*/) {
  Random random(12);
  ThreadPool one(1), three(3);
  const ActivationCase cases[] = {
      {reference::UnaryOperation::kRelu, 0.0f, true},
      {reference::UnaryOperation::kClip, 0.0f, true},
      {reference::UnaryOperation::kLeakyRelu, 0.1f, true},
      {reference::UnaryOperation::kHardSwish, 0.0f, true},
      {reference::UnaryOperation::kSigmoid, 0.0f, false},
      {reference::UnaryOperation::kSwish, 1.0f, false},
      {reference::UnaryOperation::kSwish, 1.702f, false},
      {reference::UnaryOperation::kTanh, 0.0f, false},
  };
  for (int64_t count : {1, 7, 8, 9, 15, 16, 17, 31, 1031, 40009}) {
    // Mostly [-8, 8], with some large magnitudes, tiny values and signed zeros.
    std::vector<float> input = random.floats(static_cast<size_t>(count), -8.0f, 8.0f);
    for (size_t i = 0; i < input.size(); ++i) {
      if (i % 11 == 3) input[i] *= 15.0f;
      if (i % 13 == 5) input[i] *= 1e-4f;
      if (i % 17 == 7) input[i] = (i % 2) ? 0.0f : -0.0f;
    }
    for (const ActivationCase& c : cases) {
      reference::UnaryParams params;
      params.operation = c.operation;
      params.alpha = c.alpha;
      params.minimum = -1.5f;
      params.maximum = 6.0f;
      std::vector<float> expected(input.size());
      reference::unary(params, input.data(), expected.data(), count);
      for (KernelVariant variant : optimized_variants()) {
        auto kernel = kernels::cpu::prepare_unary(params, count, variant);
        assert_non_null(kernel.get());
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> output(input.size(), std::numeric_limits<float>::quiet_NaN());
          kernel->run(input.data(), output.data(), params.minimum, params.maximum, *pool);
          const std::string mismatch = c.exact ? compare_floats(output, expected, 0.0)
                                               : compare_relative(output, expected, input, 1e-6);
          if (!mismatch.empty()) {
            fail_msg("operation %d (alpha %g), %lld elements, %s, %zu threads: %s",
                     static_cast<int>(c.operation), double{c.alpha}, static_cast<long long>(count),
                     kernel->algorithm(), pool->thread_count(), mismatch.c_str());
          }
        }
      }
    }
  }
  reference::UnaryParams exp_params;
  exp_params.operation = reference::UnaryOperation::kExp;
  assert_null(kernels::cpu::prepare_unary(exp_params, 8, KernelVariant::kPortable).get());
}

// avx512_sigmoid_rows.cc is avx2's rows on twice the lanes: every element the same bits, at
// every row length around the vector widths, whatever the value.
void test_avx512_rows_are_avx2_bits(void** /*state*/) {
#if defined(__x86_64__)
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    std::printf("SKIPPED avx512 sigmoid rows: this CPU does not run the avx512 variant\n");
    return;
  }
  namespace optimized = kernels::cpu::optimized;
  Random random(31);
  std::vector<float> input = random.floats(4099, -30.0f, 30.0f);
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::denorm_min(),
                            87.0f,
                            -87.0f,
                            88.5f,
                            -88.5f,
                            1e-30f,
                            -1e-30f};
  for (size_t i = 0; i < std::size(specials); ++i) input[i * 97] = specials[i];
  for (int operation : {3, 5}) {  // Sigmoid, Swish (elementwise_unary.cc unary_code)
    for (float alpha : {1.0f, 1.702f, -0.5f}) {
      for (size_t count : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{31}, size_t{32},
                           size_t{33}, size_t{4099}}) {
        std::vector<float> avx2(count), avx512(count);
        optimized::UnaryRow row{operation, alpha, 0.0f, 0.0f, input.data(), avx2.data(), count};
        optimized::avx2_micro_kernels().unary_row(row);
        row.out = avx512.data();
        optimized::avx512_micro_kernels().unary_row(row);
        assert_memory_equal(avx2.data(), avx512.data(), count * sizeof(float));
      }
    }
  }
#endif
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_activations_match_reference),
      cmocka_unit_test(test_avx512_rows_are_avx2_bits),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
