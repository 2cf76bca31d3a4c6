// Optimized float32 activations (kernels/cpu/dispatch.h prepare_unary) against
// reference::unary, for every optimized variant, on 1 and 3 threads, at vector-width edges and
// over the whole range of inputs: Relu, Clip, LeakyRelu and HardSwish bit for bit; Sigmoid,
// Swish and Tanh within 1e-6 relative (their exp is an approximation in the SIMD variants).
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
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

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_activations_match_reference),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
