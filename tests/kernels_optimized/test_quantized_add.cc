// int8 Add and Sub on the codes (kernels/cpu/reference/quantized_add.h): the reference against
// an independent double-precision oracle over every pair of codes, and the prepared kernels
// (kernels/cpu/dispatch.h prepare_binary_int8) where no optimized row applies: the reference
// variant, broadcasts the rows do not take, and ratios so large that results need the clamp.
// The optimized rows themselves are checked against the reference in
// test_optimized_elementwise.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/quantized_add.h"

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

// The definition computed another way: each product is an exact double product (9 x 24 bits)
// rounded once to float, their sum is exact in double while the two lie within 2^29 of each
// other (every ratio here is within [2^-10, 2^10]), so converting it to float is the float
// sum's single rounding. Then round half to even by hand (no nearbyint), add the zero point,
// saturate. Non-finite ratios are left to test_prepared_kernels_without_rows.
int8_t oracle(int8_t a, int8_t b, const reference::QuantizedAdd& add) {
  const double a_offset = int32_t{a} - add.a_zero_point;
  const double b_offset = int32_t{b} - add.b_zero_point;
  const auto a_part = static_cast<float>(a_offset * static_cast<double>(add.a_ratio));
  const auto b_part = static_cast<float>(b_offset * static_cast<double>(add.b_ratio));
  const auto value = static_cast<float>(double{a_part} + double{b_part});
  const double floor = std::floor(double{value});
  const double fraction = double{value} - floor;
  double rounded = floor;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(floor, 2.0) != 0.0)) rounded = floor + 1.0;
  const double code = rounded + add.output_zero_point;
  return static_cast<int8_t>(code < -128.0 ? -128.0 : (code > 127.0 ? 127.0 : code));
}

struct Quantization {
  float a_scale;
  int32_t a_zero_point;
  float b_scale;
  int32_t b_zero_point;
  float output_scale;
  int32_t output_zero_point;
};

void test_reference_matches_oracle_on_every_code_pair(void** /*state*/) {
  Random random(41);
  std::vector<Quantization> quantizations = {
      {0.125f, 1, 0.25f, -3, 0.25f, 5},       // ratios 0.5 and 1: halves, ties to even
      {0.05f, 3, 0.02f, -5, 0.1f, -2},        // a ResNet residual's kind of scales
      {0.01f, -128, 0.2f, 127, 0.003f, 100},  // results far past int8: saturation
      {0.02f, 0, 0.02f, 0, 0.02f, 0},         // ratios 1: codes add exactly
  };
  for (int trial = 0; trial < 12; ++trial) {
    quantizations.push_back({random.floats(1, 0.01f, 0.5f)[0], random.integer(-128, 127),
                             random.floats(1, 0.01f, 0.5f)[0], random.integer(-128, 127),
                             random.floats(1, 0.01f, 0.5f)[0], random.integer(-128, 127)});
  }
  size_t index = 0;
  for (const Quantization& q : quantizations) {
    for (bool subtract : {false, true}) {
      const reference::QuantizedAdd add =
          reference::make_quantized_add(q.a_scale, q.a_zero_point, q.b_scale, q.b_zero_point,
                                        q.output_scale, q.output_zero_point, subtract);
      assert_true(subtract ? add.b_ratio < 0.0f : add.b_ratio > 0.0f);
      for (int a = -128; a < 128; ++a) {
        for (int b = -128; b < 128; ++b) {
          const int8_t got =
              reference::quantized_add(static_cast<int8_t>(a), static_cast<int8_t>(b), add);
          const int8_t want = oracle(static_cast<int8_t>(a), static_cast<int8_t>(b), add);
          if (got != want) {
            fail_msg("quantization %zu%s: %d, %d gave %d, expected %d", index,
                     subtract ? " (Sub)" : "", a, b, got, want);
          }
        }
      }
    }
    ++index;
  }
}

// A hand-worked case: ratios 0.5 and 1, so a' x 0.5 + b' lands on halves.
void test_reference_worked_example(void** /*state*/) {
  const reference::QuantizedAdd add =
      reference::make_quantized_add(0.125f, 1, 0.25f, -3, 0.25f, 5, /*subtract=*/false);
  // a' = 2 - 1 = 1, b' = -3 - -3 = 0: 0.5 rounds to 0 (even), + 5.
  assert_int_equal(reference::quantized_add(2, -3, add), 5);
  // a' = 4 - 1 = 3, b' = 0: 1.5 rounds to 2, + 5.
  assert_int_equal(reference::quantized_add(4, -3, add), 7);
  // a' = 0, b' = -1 - -3 = 2: 2 + 5.
  assert_int_equal(reference::quantized_add(1, -1, add), 7);
  // Saturation at both ends.
  assert_int_equal(reference::quantized_add(127, 127, add), 127);
  assert_int_equal(reference::quantized_add(-128, -128, add), -128);
  const reference::QuantizedAdd sub =
      reference::make_quantized_add(0.125f, 1, 0.25f, -3, 0.25f, 5, /*subtract=*/true);
  // a' = 3, b' = 2: 1.5 - 2 = -0.5 rounds to -0 (even), + 5.
  assert_int_equal(reference::quantized_add(4, -1, sub), 5);
}

// The reference variant, a broadcast inside a run of dimensions (no optimized row), and an
// output scale so small that the rows' precondition fails: every one is a kernel, with the
// reference's codes and the activation table applied.
void test_prepared_kernels_without_rows(void** /*state*/) {
  Random random(43);
  ThreadPool one(1);
  struct Case {
    std::vector<int64_t> a_shape;
    std::vector<int64_t> b_shape;
    KernelVariant variant;
    float output_scale;
    int32_t output_zero_point = -2;
  };
  std::vector<Case> cases = {
      {{2, 3, 4}, {2, 1, 4}, kernels::cpu::selected_kernel_variant(), 0.1f},
      {{3, 1}, {1, 3}, kernels::cpu::selected_kernel_variant(), 0.1f},
      {{5, 17}, {5, 17}, KernelVariant::kReference, 0.1f},
      {{5, 17}, {17}, kernels::cpu::selected_kernel_variant(), 1e-12f},  // ratios ~ 5e10
      {{33}, {33}, kernels::cpu::selected_kernel_variant(), 0.0f},       // infinite ratios
      // An output zero point that is no int8 code (the verifier rejects such a model; the
      // kernels' API does not): beyond int16 too, where the avx2 row's int16 add would wrap.
      // Ratios 50 and 20 give sums down to about -9000; the codes of those below -4591 would
      // turn from 127 into -128.
      {{64}, {64}, kernels::cpu::selected_kernel_variant(), 0.001f, 70000},
  };
  for (const Case& c : cases) {
    for (auto operation :
         {reference::BinaryOperation::kAdd, reference::BinaryOperation::kSubtract}) {
      kernels::cpu::BinaryInt8Quantization q{
          0.05f, 3, 0.02f, -5, c.output_scale, c.output_zero_point, {}};
      q.output_table = random.codes(256);
      auto kernel =
          kernels::cpu::prepare_binary_int8(operation, c.a_shape, c.b_shape, q, c.variant);
      assert_non_null(kernel.get());
      const reference::BroadcastParams params =
          reference::make_broadcast_params(c.a_shape, c.b_shape);
      const std::vector<int8_t> a = random.codes(shape_elements(c.a_shape));
      const std::vector<int8_t> b = random.codes(shape_elements(c.b_shape));
      std::vector<int8_t> expected(shape_elements(params.output_shape));
      reference::quantized_add(params, a.data(), b.data(),
                               kernels::cpu::quantized_add_of(operation, q), expected.data());
      for (int8_t& code : expected) code = q.output_table[static_cast<size_t>(code + 128)];
      std::vector<int8_t> output(expected.size(), 0);
      kernel->run(a.data(), b.data(), output.data(), one);
      const std::string mismatch = compare_exact(output, expected);
      if (!mismatch.empty()) fail_msg("%s: %s", kernel->algorithm(), mismatch.c_str());
    }
  }
  // Without a table: infinite ratios saturate, and 0 x infinity is NaN, which takes the output
  // zero point as the float domain's encode does.
  kernels::cpu::BinaryInt8Quantization infinite{0.05f, 3, 0.02f, -5, 0.0f, -2, {}};
  auto kernel =
      kernels::cpu::prepare_binary_int8(reference::BinaryOperation::kAdd, {3}, {3}, infinite);
  assert_non_null(kernel.get());
  // Offsets (0, 0), (1, 1), (-1, -1): NaN, +infinity, -infinity.
  const std::vector<int8_t> a = {3, 4, 2};
  const std::vector<int8_t> b = {-5, -4, -6};
  std::vector<int8_t> output(3, 0);
  kernel->run(a.data(), b.data(), output.data(), one);
  assert_int_equal(output[0], -2);
  assert_int_equal(output[1], 127);
  assert_int_equal(output[2], -128);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_matches_oracle_on_every_code_pair),
      cmocka_unit_test(test_reference_worked_example),
      cmocka_unit_test(test_prepared_kernels_without_rows),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
