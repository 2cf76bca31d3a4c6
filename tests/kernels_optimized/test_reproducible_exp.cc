// The reproducible exp (core/reproducible_exp.h, docs/quantization.md 4.5) and the int8 SiLU
// epilogue built on it: the scalar function is within a few ulp of the exact exp over the whole
// float range (overflow, underflow into subnormals, infinities, NaN), every variant's vector
// copy gives the scalar function's bits, and every variant's SiLU requantization row gives
// reference::requantize_silu's codes. Also core/dtype.h's round_half_to_even, which the int8
// encodes use, against nearbyint.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/reproducible_exp.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/micro_kernels.h"
#include "reference/convolution.h"

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
namespace optimized = kernels::cpu::optimized;

// The bound docs/quantization.md 4.5 states.
constexpr uint32_t kMaxUlpError = 2;

uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Floats from every part of the range (a stride through all bit patterns, both signs), plus
// the edges: zeros, infinities, NaNs, the overflow and underflow thresholds and their
// neighbours, subnormal inputs and results, and the rounding ties of the range reduction.
std::vector<float> sample_inputs() {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 1021) {
    inputs.push_back(float_of(static_cast<uint32_t>(bits)));
  }
  const float infinity = std::numeric_limits<float>::infinity();
  for (float edge : {0.0f,
                     -0.0f,
                     infinity,
                     -infinity,
                     std::numeric_limits<float>::quiet_NaN(),
                     88.72283f,
                     88.722839f,
                     88.7228394f,
                     89.0f,
                     89.5f,
                     -87.33654f,
                     -87.3365479f,
                     -103.0f,
                     -103.27893f,
                     -103.972084f,
                     -103.972076f,
                     -104.0f,
                     -104.5f,
                     1e-45f,
                     -1e-45f,
                     1e-38f,
                     0.34657359f,
                     -0.34657359f,
                     1.0f,
                     -1.0f}) {
    inputs.push_back(edge);
    inputs.push_back(std::nextafter(edge, infinity));
    inputs.push_back(std::nextafter(edge, -infinity));
  }
  // n x ln2 for every reachable exponent n, and halfway points between them.
  for (int n = -151; n <= 129; ++n) {
    inputs.push_back(static_cast<float>(n * 0.6931471805599453));
    inputs.push_back(static_cast<float>((n + 0.5) * 0.6931471805599453));
  }
  // A dense stretch where SiLU epilogues live.
  for (float x = -30.0f; x <= 30.0f; x += 0.000977f) inputs.push_back(x);
  return inputs;
}

// Distance in representable floats between two non-negative floats (+inf is one past
// FLT_MAX, so an overflow one ulp early or late counts as one ulp).
uint32_t ulp_distance(float a, float b) {
  const uint32_t x = bits_of(a);
  const uint32_t y = bits_of(b);
  return x > y ? x - y : y - x;
}

void test_scalar_accuracy(void**) {
  uint32_t worst = 0;
  float worst_input = 0.0f;
  for (float x : sample_inputs()) {
    const float ours = reproducible_exp(x);
    if (std::isnan(x)) {
      if (!std::isnan(ours)) fail_msg("exp(NaN) = %.9g, expected NaN", double{ours});
      continue;
    }
    // The exact value rounded once: double exp is accurate far below a float ulp.
    const float exact = static_cast<float>(std::exp(static_cast<double>(x)));
    if (std::signbit(ours) || std::isnan(ours)) {
      fail_msg("exp(%.9g) = %.9g, not a non-negative number", double{x}, double{ours});
    }
    const uint32_t distance = ulp_distance(ours, exact);
    if (distance > worst) {
      worst = distance;
      worst_input = x;
    }
    if (distance > kMaxUlpError) {
      fail_msg("exp(%.9g) = %.9g (0x%08x), exact %.9g (0x%08x): %u ulp > %u", double{x},
               double{ours}, bits_of(ours), double{exact}, bits_of(exact), distance, kMaxUlpError);
    }
  }
  print_message("reproducible_exp: worst %u ulp (at %.9g)\n", worst, double{worst_input});
  // The exact values at the ends of the range.
  assert_true(reproducible_exp(0.0f) == 1.0f);
  assert_true(reproducible_exp(-0.0f) == 1.0f);
  assert_true(std::isinf(reproducible_exp(std::numeric_limits<float>::infinity())));
  assert_true(reproducible_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  assert_true(std::isinf(reproducible_exp(89.0f)));
  assert_true(reproducible_exp(-104.0f) == 0.0f);
  assert_true(reproducible_exp(-103.0f) > 0.0f);  // a subnormal, not flushed to zero
}

void test_vector_equals_scalar(void**) {
  const std::vector<float> inputs = sample_inputs();
  std::vector<float> expected(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) expected[i] = reproducible_exp(inputs[i]);
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    std::vector<float> output(inputs.size(), -1.0f);
    // Rows of varying length, so every lane position also runs through the tails.
    size_t begin = 0;
    for (size_t length = 1; begin < inputs.size(); length = length % 37 + 1) {
      const size_t count = std::min(length * (length % 5 == 0 ? 997 : 1), inputs.size() - begin);
      table->reproducible_exp_row(inputs.data() + begin, output.data() + begin, count);
      begin += count;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const bool both_nan = std::isnan(output[i]) && std::isnan(expected[i]);
      if (!both_nan && bits_of(output[i]) != bits_of(expected[i])) {
        fail_msg("%s exp(%.9g) = 0x%08x, scalar 0x%08x", table->name, double{inputs[i]},
                 bits_of(output[i]), bits_of(expected[i]));
      }
    }
  }
}

// Every variant's SiLU requantization row equals reference::requantize_silu: accumulators over
// the whole int32 range and near zero, dequantization scales that put the real values in the
// sigmoid's curved part, its saturated parts, and beyond float (inf, then NaN for 0 x inf),
// zero points inside and far outside int8, rows around the vector widths.
void test_silu_row_equals_reference(void**) {
  Random random(17);
  // 2^64 and 2^-60 are the edges of the avx2 row's finite form (finite_silu_row), 2^65 and
  // 2^-61 just outside.
  const float scales[] = {1e-3f,   2.4e-4f, 7e-6f, 0.05f,
                          1.0f,    3e-38f,  1e30f, 0x1p64f,
                          0x1p65f, 0.031f,  8e-5f, std::numeric_limits<float>::infinity()};
  const float output_scales[] = {0.02f, 0.0037f, 0.5f, 1e-30f, 7.0f, 0x1p-60f, 0x1p-61f, 0x1p60f};
  const int32_t far_zero_points[] = {std::numeric_limits<int32_t>::min(),
                                     std::numeric_limits<int32_t>::max(), -3000000, 2500000};
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    // 31-71 and 100: around the avx2 row's groups of 32 outputs (four vectors at a time).
    for (size_t count : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 71u, 100u}) {
      for (int trial = 0; trial < 60; ++trial) {
        std::vector<int32_t> accumulators =
            trial % 3 == 0 ? random.ints(count, std::numeric_limits<int32_t>::min(),
                                         std::numeric_limits<int32_t>::max())
                           : random.ints(count, -40000, 40000);
        if (trial % 7 == 0) accumulators[0] = 0;
        const float scale = scales[random.integer(0, 11)];
        const float output_scale = output_scales[random.integer(0, 7)];
        const int32_t zero_point =
            trial % 11 == 5 ? far_zero_points[random.integer(0, 3)] : random.integer(-128, 127);
        std::vector<int8_t> expected(count), output(count, 0x55);
        for (size_t i = 0; i < count; ++i) {
          expected[i] =
              kernels::reference::requantize_silu(accumulators[i], scale, output_scale, zero_point);
        }
        table->requantize_silu_row(
            {accumulators.data(), count, scale, output_scale, zero_point, output.data()});
        const std::string mismatch = compare_exact(output, expected);
        if (!mismatch.empty()) {
          fail_msg(
              "%s SiLU requantization, %zu values, scale %g, output scale %g, zero point "
              "%d: %s",
              table->name, count, double{scale}, double{output_scale}, zero_point,
              mismatch.c_str());
        }
        if (table->requantize_silu_offset_row == nullptr) continue;
        // The offset row: accumulators[i] + offset modulo 2^32, the accumulators unchanged.
        const int32_t offset = trial % 2 == 0 ? random.integer(-70000, 70000)
                                              : random.ints(1, std::numeric_limits<int32_t>::min(),
                                                            std::numeric_limits<int32_t>::max())[0];
        const std::vector<int32_t> before = accumulators;
        for (size_t i = 0; i < count; ++i) {
          const auto sum = static_cast<int32_t>(static_cast<uint32_t>(accumulators[i]) +
                                                static_cast<uint32_t>(offset));
          expected[i] = kernels::reference::requantize_silu(sum, scale, output_scale, zero_point);
        }
        std::fill(output.begin(), output.end(), int8_t{0x55});
        table->requantize_silu_offset_row(
            {accumulators.data(), count, scale, output_scale, zero_point, output.data()}, offset);
        const std::string offset_mismatch = compare_exact(output, expected);
        if (!offset_mismatch.empty() || accumulators != before) {
          fail_msg("%s SiLU requantization with offset %d, %zu values, scale %g: %s", table->name,
                   offset, count, double{scale},
                   offset_mismatch.empty() ? "accumulators changed" : offset_mismatch.c_str());
        }
      }
    }
  }
}

// ORKNN_EXHAUSTIVE_TESTS=1 turns the strided sweeps below into every value (minutes, by hand:
// docs/cpu-kernels.md says when it was last run); by default they take a stride.
bool exhaustive() {
  const char* value = std::getenv("ORKNN_EXHAUSTIVE_TESTS");
  return value != nullptr && std::string(value) == "1";
}

// Every variant's exp row against the scalar function over the SiLU epilogue's whole exp domain:
// the non-positive floats down to the -104 clamp and below (the argument is -|real|), then
// -inf and NaN; every float with a stride of 61 bit patterns (all of them when exhaustive),
// in rows of 4093 so the tails run at every offset.
void test_vector_equals_scalar_on_silu_domain(void**) {
  const uint64_t stride = exhaustive() ? 1 : 61;
  const uint32_t first = bits_of(-0.0f), last = bits_of(-110.0f);
  constexpr size_t kChunk = 1 << 16;
  std::vector<float> inputs, expected(kChunk), output(kChunk);
  inputs.reserve(kChunk);
  uint64_t checked = 0;
  auto check = [&]() {
    for (size_t i = 0; i < inputs.size(); ++i) expected[i] = reproducible_exp(inputs[i]);
    for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
      for (size_t begin = 0; begin < inputs.size(); begin += 4093) {
        const size_t count = std::min<size_t>(4093, inputs.size() - begin);
        table->reproducible_exp_row(inputs.data() + begin, output.data() + begin, count);
      }
      for (size_t i = 0; i < inputs.size(); ++i) {
        const bool both_nan = std::isnan(output[i]) && std::isnan(expected[i]);
        if (!both_nan && bits_of(output[i]) != bits_of(expected[i])) {
          fail_msg("%s exp(%.9g) = 0x%08x, scalar 0x%08x", table->name, double{inputs[i]},
                   bits_of(output[i]), bits_of(expected[i]));
        }
      }
    }
    checked += inputs.size();
    inputs.clear();
  };
  for (uint64_t bits = first; bits <= last; bits += stride) {
    inputs.push_back(float_of(static_cast<uint32_t>(bits)));
    if (inputs.size() == kChunk) check();
  }
  inputs.push_back(-std::numeric_limits<float>::infinity());
  inputs.push_back(-std::numeric_limits<float>::quiet_NaN());
  check();
  print_message("exp rows on [-110, -0]: %llu inputs\n", static_cast<unsigned long long>(checked));
}

// One SiLU row per table over `accumulators` against reference::requantize_silu.
void expect_silu_rows_equal_reference(const std::vector<int32_t>& accumulators, float scale,
                                      float output_scale, int32_t zero_point) {
  std::vector<int8_t> expected(accumulators.size()), output(accumulators.size());
  for (size_t i = 0; i < accumulators.size(); ++i) {
    expected[i] =
        kernels::reference::requantize_silu(accumulators[i], scale, output_scale, zero_point);
  }
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    std::fill(output.begin(), output.end(), int8_t{0x55});
    table->requantize_silu_row(
        {accumulators.data(), accumulators.size(), scale, output_scale, zero_point, output.data()});
    const std::string mismatch = compare_exact(output, expected);
    if (!mismatch.empty()) {
      fail_msg("%s SiLU requantization, scale %g, output scale %g, zero point %d: %s", table->name,
               double{scale}, double{output_scale}, zero_point, mismatch.c_str());
    }
  }
}

// The SiLU rows over the int32 accumulators: every accumulator in [-2^20, 2^20] and the whole
// int32 range with a stride of 4099 (every one of the 2^32 when exhaustive), including both
// ends and the 2^24 edge of the float fast path, for dequantization scales of YOLO-like
// layers and extremes; then every int8 zero point on a spread of accumulators.
void test_silu_row_over_accumulator_ranges(void**) {
  const float scales[] = {2.4e-4f, 1.3e-3f, 6.1e-6f, 0.75f};
  const float output_scales[] = {0.0187f, 0.113f};
  const int64_t stride = exhaustive() ? 1 : 4099;
  constexpr size_t kChunk = 1 << 20;
  for (size_t s = 0; s < 4; ++s) {
    const float scale = scales[s];
    const float output_scale = output_scales[s % 2];
    const int32_t zero_point = s % 2 == 0 ? -128 : -97;
    std::vector<int32_t> accumulators;
    accumulators.reserve(kChunk);
    auto flush = [&]() {
      expect_silu_rows_equal_reference(accumulators, scale, output_scale, zero_point);
      accumulators.clear();
    };
    for (int64_t a = -(1 << 20); a <= (1 << 20); ++a) {
      accumulators.push_back(static_cast<int32_t>(a));
      if (accumulators.size() == kChunk) flush();
    }
    for (int64_t a = std::numeric_limits<int32_t>::min(); a <= std::numeric_limits<int32_t>::max();
         a += stride) {
      accumulators.push_back(static_cast<int32_t>(a));
      if (accumulators.size() == kChunk) flush();
    }
    for (int32_t edge : {std::numeric_limits<int32_t>::max(), (1 << 24) - 1, 1 << 24, (1 << 24) + 1,
                         -(1 << 24) - 1, -(1 << 24), -(1 << 24) + 1}) {
      accumulators.push_back(edge);
    }
    flush();
  }
  // Every int8 zero point (and some beyond), on accumulators whose codes span the range.
  std::vector<int32_t> spread;
  for (int32_t a = -300000; a <= 300000; a += 37) spread.push_back(a);
  for (int32_t zero_point = -200; zero_point <= 200; ++zero_point) {
    expect_silu_rows_equal_reference(spread, 1.7e-4f, 0.0213f, zero_point);
  }
}

// The finite form's limits (optimized::silu_row_is_finite): |D| <= 2^64 and output scales in
// [2^-60, 2^60], nothing with a NaN or an infinity.
void test_silu_row_is_finite(void**) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float infinity = std::numeric_limits<float>::infinity();
  auto finite = [](float scale, float output_scale) {
    return optimized::silu_row_is_finite({nullptr, 0, scale, output_scale, 0, nullptr});
  };
  assert_true(finite(2.4e-4f, 0.0187f));
  assert_true(finite(0x1p64f, 0x1p-60f));
  assert_true(finite(-0x1p64f, 0x1p60f));
  assert_false(finite(0x1p65f, 0.02f));
  assert_false(finite(-0x1p65f, 0.02f));
  assert_false(finite(1e-3f, 0x1p-61f));
  assert_false(finite(1e-3f, 0x1p61f));
  assert_false(finite(1e-3f, 0.0f));
  assert_false(finite(1e-3f, -0.02f));
  assert_false(finite(nan, 0.02f));
  assert_false(finite(1e-3f, nan));
  assert_false(finite(infinity, 0.02f));
  assert_false(finite(1e-3f, infinity));
}

// round_half_to_even (two additions on x86-64 without SSE4.1) equals nearbyint for every float
// of magnitude below 2^31: halves of both parities, the 2^22 / 2^23 / 2^24 edges, signed zeros,
// and a stride through all bit patterns.
void test_round_half_to_even(void**) {
  std::vector<float> values;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) {
    values.push_back(float_of(static_cast<uint32_t>(bits)));
  }
  for (float base :
       {0.0f, 0.5f, 1.5f, 2.5f, 3.5f, 1e6f + 0.5f, 4194303.5f, 4194304.5f, 8388607.5f, 8388608.0f,
        8388609.0f, 16777215.0f, 16777216.0f, 16777218.0f, 2147483520.0f, 1e9f}) {
    for (float value : {base, std::nextafter(base, 0.0f), std::nextafter(base, 3e9f)}) {
      values.push_back(value);
      values.push_back(-value);
    }
  }
  values.push_back(-0.0f);
  for (int k = -20; k <= 20; ++k) values.push_back(static_cast<float>(k) + 0.5f);
  for (float value : values) {
    if (!(std::fabs(value) < 2147483520.0f)) continue;  // beyond int32 (or NaN): callers clamp
    const int32_t expected = static_cast<int32_t>(std::nearbyint(value));
    const int32_t actual = round_half_to_even(value);
    if (actual != expected) {
      fail_msg("round_half_to_even(%.9g) = %d, nearbyint %d", double{value}, actual, expected);
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalar_accuracy),
      cmocka_unit_test(test_vector_equals_scalar),
      cmocka_unit_test(test_silu_row_equals_reference),
      cmocka_unit_test(test_vector_equals_scalar_on_silu_domain),
      cmocka_unit_test(test_silu_row_over_accumulator_ranges),
      cmocka_unit_test(test_silu_row_is_finite),
      cmocka_unit_test(test_round_half_to_even),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
