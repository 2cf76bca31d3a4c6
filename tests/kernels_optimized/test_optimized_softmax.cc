// Optimized float32 Softmax (kernels/cpu/dispatch.h prepare_softmax) against reference::softmax
// for every optimized variant (avx512 too: its exp row is its own), on 1 and 3 threads: rows
// (inner 1) short and long around the partial-maximum pieces, strided channels around the
// 512-column blocks, batches; NaN, infinities and shifted rows give the reference's results.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/normalization.h"

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

// Empty when every element is within `relative` of the reference's (NaN where it is NaN), else
// the first miss.
std::string compare_softmax(const std::vector<float>& actual, const std::vector<float>& expected,
                            double relative) {
  for (size_t i = 0; i < actual.size(); ++i) {
    const double want = expected[i];
    const bool both_nan = std::isnan(want) && std::isnan(actual[i]);
    // Outputs that underflow may differ by a subnormal: the exp clamps its argument at -104.
    const double allowed = std::fabs(want) * relative + 1e-37;
    if (!both_nan && !(std::fabs(double{actual[i]} - want) <= allowed)) {
      char text[128];
      std::snprintf(text, sizeof(text), "element %zu: %.9g, expected %.9g", i, double{actual[i]},
                    want);
      return text;
    }
  }
  return "";
}

void check_layout(const reference::ChannelLayout& layout, const std::vector<float>& input,
                  double relative, const char* what) {
  std::vector<float> expected(input.size());
  reference::softmax(layout, input.data(), expected.data());
  ThreadPool one(1), three(3);
  for (KernelVariant variant : float_gemm_variants()) {
    auto kernel = kernels::cpu::prepare_softmax(layout, variant);
    assert_non_null(kernel.get());
    for (ThreadPool* pool : {&one, &three}) {
      std::vector<float> output(input.size(), -1.0f);
      kernel->run(input.data(), output.data(), *pool);
      const std::string mismatch = compare_softmax(output, expected, relative);
      if (!mismatch.empty()) {
        fail_msg("%s, layout %lld x %lld x %lld, %s, %zu threads: %s", what,
                 static_cast<long long>(layout.outer), static_cast<long long>(layout.channels),
                 static_cast<long long>(layout.inner), kernel->algorithm(), pool->thread_count(),
                 mismatch.c_str());
      }
    }
  }
}

size_t elements(const reference::ChannelLayout& layout) {
  return static_cast<size_t>(layout.outer * layout.channels * layout.inner);
}

// Differences from the maximum below 16 keep every output within 2e-6 of the reference; up to
// 60 within 1e-5 (the argument x - maximum rounds to float: half an ulp of the difference).
void test_softmax_matches_reference(void**) {
  Random random(31);
  const int64_t channel_counts[] = {1, 2, 3, 7, 63, 64, 127, 128, 129, 200, 1000};
  const int64_t inner_counts[] = {1, 1, 2, 5, 17, 511, 512, 513, 1100};
  for (int64_t channels : channel_counts) {
    for (int64_t inner : inner_counts) {
      if (channels * inner > 300000) continue;
      const reference::ChannelLayout layout{random.integer(1, 3), channels, inner};
      check_layout(layout, random.floats(elements(layout), -8.0f, 8.0f), 2e-6, "[-8, 8]");
      check_layout(layout, random.floats(elements(layout), -30.0f, 30.0f), 1e-5, "[-30, 30]");
    }
  }
}

// Rows shifted far from zero (the maximum subtracted first), a NaN, +inf, rows of -inf, and
// magnitudes whose exp underflows: the reference's NaN pattern and values.
void test_softmax_special_values(void**) {
  Random random(32);
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  for (int64_t inner : {1, 3, 600}) {
    for (int64_t channels : {5, 150}) {
      const reference::ChannelLayout layout{4, channels, inner};
      std::vector<float> input = random.floats(elements(layout), -8.0f, 8.0f);
      auto at = [&](int64_t n, int64_t c, int64_t i) -> float& {
        return input[static_cast<size_t>((n * channels + c) * inner + i)];
      };
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < inner; ++i) {
          at(0, c, i) += 1e4f;                                     // shifted
          at(3, c, i) = c % 2 ? -kInfinity : at(3, c, i) * 40.0f;  // -inf and underflow
        }
      }
      at(1, channels / 2, 0) = std::numeric_limits<float>::quiet_NaN();
      at(2, channels - 1, inner - 1) = kInfinity;
      for (int64_t c = 0; c < channels; ++c) at(2, c, 0) = -kInfinity;
      check_layout(layout, input, 2e-6, "special values");
    }
  }
}

void test_softmax_declines(void**) {
  assert_null(kernels::cpu::prepare_softmax({1, 4, 1}, KernelVariant::kReference).get());
  assert_null(kernels::cpu::prepare_softmax({0, 4, 1}, KernelVariant::kPortable).get());
  assert_null(kernels::cpu::prepare_softmax({1, 0, 1}, KernelVariant::kPortable).get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_softmax_matches_reference),
      cmocka_unit_test(test_softmax_special_values),
      cmocka_unit_test(test_softmax_declines),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
