// Optimized float32 binary elementwise kernels (kernels/cpu/dispatch.h prepare_binary) against
// reference::binary: bit for bit (one IEEE operation per element in both), for every optimized
// variant, on 1 and 3 threads, over the broadcasts they take (equal shapes, scalars, channel
// runs) at vector-width edges; and the broadcasts they leave to the reference.
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/elementwise.h"
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
using kernels::cpu::kernel_variant_name;
using kernels::cpu::KernelVariant;
using Shape = std::vector<int64_t>;

constexpr reference::BinaryOperation kOperations[] = {
    reference::BinaryOperation::kAdd, reference::BinaryOperation::kSubtract,
    reference::BinaryOperation::kMultiply, reference::BinaryOperation::kDivide};

std::string describe(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// Values away from zero (Div's divisor) with both signs.
std::vector<float> operand_values(Random& random, size_t count) {
  std::vector<float> values = random.floats(count, 0.25f, 4.0f);
  for (size_t i = 0; i < count; ++i) {
    if (i % 3 == 1) values[i] = -values[i];
  }
  return values;
}

struct BroadcastCase {
  Shape a;
  Shape b;
};

std::vector<BroadcastCase> supported_cases() {
  std::vector<BroadcastCase> cases;
  for (int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1031}) {
    cases.push_back({{n}, {n}});
    cases.push_back({{2, n}, {1}});
    cases.push_back({{1}, {n, 2}});
    cases.push_back({{3, n}, {n}});                 // a trailing row
    cases.push_back({{n}, {2, 3, n}});              // the row on the left
    cases.push_back({{2, 5, n, 3}, {1, 5, 1, 1}});  // per channel, NCHW
    cases.push_back({{5, 1, 1}, {1, 5, 3, n}});     // per channel on the left, no batch axis
    cases.push_back({{1, n, 4, 2}, {n, 1, 1}});
  }
  // Long enough to be split over the threads, as whole rows and as chunks of one row.
  cases.push_back({{1, 3, 131, 257}, {1, 3, 1, 1}});
  cases.push_back({{1, 40009}, {1, 40009}});
  cases.push_back({{1, 40009}, {1}});
  cases.push_back({{64, 997}, {997}});
  return cases;
}

void test_supported_broadcasts_match_reference(void** /*state*/) {
  Random random(2024);
  ThreadPool one(1), three(3);
  size_t index = 0;
  for (const BroadcastCase& shapes : supported_cases()) {
    const std::vector<float> a = operand_values(random, shape_elements(shapes.a));
    const std::vector<float> b = operand_values(random, shape_elements(shapes.b));
    const reference::BroadcastParams params = reference::make_broadcast_params(shapes.a, shapes.b);
    const auto count = shape_elements(params.output_shape);
    for (reference::BinaryOperation operation : kOperations) {
      std::vector<float> expected(count);
      reference::binary(operation, params, a.data(), b.data(), expected.data());
      for (KernelVariant variant : optimized_variants()) {
        auto kernel = kernels::cpu::prepare_binary(operation, shapes.a, shapes.b, variant);
        if (!kernel) {
          fail_msg("case %zu %s (op) %s: no %s kernel", index, describe(shapes.a).c_str(),
                   describe(shapes.b).c_str(), kernels::cpu::kernel_variant_name(variant));
        }
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> output(count, std::numeric_limits<float>::quiet_NaN());
          kernel->run(a.data(), b.data(), output.data(), *pool);
          const std::string mismatch = compare_floats(output, expected, 0.0);
          if (!mismatch.empty()) {
            fail_msg("case %zu %s (op %d) %s, %s, %zu threads: %s", index,
                     describe(shapes.a).c_str(), static_cast<int>(operation),
                     describe(shapes.b).c_str(), kernel->algorithm(), pool->thread_count(),
                     mismatch.c_str());
          }
        }
      }
    }
    ++index;
  }
}

// The CPU device's float domain on int8 tensors: decode, reference::binary, encode.
std::vector<int8_t> float_domain_int8(reference::BinaryOperation operation,
                                      const reference::BroadcastParams& params,
                                      const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                                      const kernels::cpu::BinaryInt8Quantization& q) {
  std::vector<float> a_real(a.size());
  std::vector<float> b_real(b.size());
  for (size_t i = 0; i < a.size(); ++i) a_real[i] = dequantize(a[i], q.a_scale, q.a_zero_point);
  for (size_t i = 0; i < b.size(); ++i) b_real[i] = dequantize(b[i], q.b_scale, q.b_zero_point);
  std::vector<float> real(shape_elements(params.output_shape));
  reference::binary(operation, params, a_real.data(), b_real.data(), real.data());
  std::vector<int8_t> codes(real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    codes[i] = quantize_int8(real[i], q.output_scale, q.output_zero_point);
  }
  return codes;
}

// What the int8 kernels must give: Add and Sub on the codes (reference/quantized_add.h, whose
// own oracle is test_quantized_add), Mul and Div the float domain's codes.
std::vector<int8_t> expected_int8(reference::BinaryOperation operation,
                                  const reference::BroadcastParams& params,
                                  const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                                  const kernels::cpu::BinaryInt8Quantization& q) {
  if (operation != reference::BinaryOperation::kAdd &&
      operation != reference::BinaryOperation::kSubtract) {
    return float_domain_int8(operation, params, a, b, q);
  }
  std::vector<int8_t> codes(shape_elements(params.output_shape));
  reference::quantized_add(params, a.data(), b.data(), kernels::cpu::quantized_add_of(operation, q),
                           codes.data());
  return codes;
}

// Every optimized variant's int8 kernel for one case, on one and three threads, against the
// expected codes, bit for bit; `label` names the test in the failure message.
void expect_int8_kernels_match(const char* label, size_t index,
                               reference::BinaryOperation operation, const BroadcastCase& shapes,
                               const kernels::cpu::BinaryInt8Quantization& quantization,
                               const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                               const std::vector<int8_t>& expected, ThreadPool& one,
                               ThreadPool& three) {
  for (KernelVariant variant : optimized_variants()) {
    auto kernel =
        kernels::cpu::prepare_binary_int8(operation, shapes.a, shapes.b, quantization, variant);
    if (!kernel) fail_msg("%s %zu: no %s kernel", label, index, kernel_variant_name(variant));
    for (ThreadPool* pool : {&one, &three}) {
      std::vector<int8_t> output(expected.size(), 0);
      kernel->run(a.data(), b.data(), output.data(), *pool);
      const std::string mismatch = compare_exact(output, expected);
      if (!mismatch.empty()) {
        fail_msg("%s %zu %s (op %d) %s, %s, %zu threads: %s", label, index,
                 describe(shapes.a).c_str(), static_cast<int>(operation),
                 describe(shapes.b).c_str(), kernel->algorithm(), pool->thread_count(),
                 mismatch.c_str());
      }
    }
  }
}

// Every code on both sides (Div by a zero offset gives +-inf or NaN, which encode to the
// saturated code or the zero point), outputs that saturate, and ties of the rounding.
void test_int8_matches_expected_codes(void** /*state*/) {
  Random random(77);
  ThreadPool one(1), three(3);
  const kernels::cpu::BinaryInt8Quantization quantizations[] = {
      {0.05f, 3, 0.02f, -5, 0.1f, -2, {}},
      {0.5f, 0, 0.5f, 0, 0.25f, 0, {}},  // many exact halves: ties to even
      {0.01f, -128, 0.2f, 127, 0.003f, 100, {}},
      {0.125f, 1, 0.25f, -3, 0.25f, 5, {}},  // Add's ratios 0.5 and 1: ties on the codes
      // Ratios of 500 and 400: Add's rounded sums reach +-114000, past int16 (the avx2 row
      // saturates them to int16 before it adds the zero point).
      {0.5f, 7, 0.4f, -9, 0.001f, -100, {}},
  };
  size_t index = 0;
  for (const BroadcastCase& shapes : supported_cases()) {
    const std::vector<int8_t> a = random.codes(shape_elements(shapes.a));
    const std::vector<int8_t> b = random.codes(shape_elements(shapes.b));
    const reference::BroadcastParams params = reference::make_broadcast_params(shapes.a, shapes.b);
    for (const auto& quantization : quantizations) {
      for (reference::BinaryOperation operation : kOperations) {
        const std::vector<int8_t> expected = expected_int8(operation, params, a, b, quantization);
        expect_int8_kernels_match("int8 case", index, operation, shapes, quantization, a, b,
                                  expected, one, three);
      }
    }
    ++index;
  }
}

// Every pair of codes through the int8 kernel against the expected codes, for random
// quantizations (an output code depends only on its two input codes).
void test_int8_every_code_pair(void** /*state*/) {
  Random random(79);
  ThreadPool one(1);
  std::vector<int8_t> a(65536);
  std::vector<int8_t> b(65536);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<int8_t>(static_cast<int>(i >> 8) - 128);
    b[i] = static_cast<int8_t>(static_cast<int>(i & 255) - 128);
  }
  const Shape shape{65536};
  const reference::BroadcastParams params = reference::make_broadcast_params(shape, shape);
  for (int trial = 0; trial < 24; ++trial) {
    kernels::cpu::BinaryInt8Quantization quantization{random.floats(1, 0.001f, 0.5f)[0],
                                                      random.integer(-128, 127),
                                                      random.floats(1, 0.001f, 0.5f)[0],
                                                      random.integer(-128, 127),
                                                      random.floats(1, 0.001f, 0.5f)[0],
                                                      random.integer(-128, 127),
                                                      {}};
    if (trial % 4 == 0) quantization.output_scale = 0.125f;  // many exact halves
    if (trial % 4 == 1) quantization.b_scale = quantization.a_scale;
    for (reference::BinaryOperation operation : kOperations) {
      const std::vector<int8_t> expected = expected_int8(operation, params, a, b, quantization);
      for (KernelVariant variant : optimized_variants()) {
        auto kernel =
            kernels::cpu::prepare_binary_int8(operation, shape, shape, quantization, variant);
        if (!kernel) fail_msg("no %s kernel", kernel_variant_name(variant));
        std::vector<int8_t> output(expected.size(), 0);
        kernel->run(a.data(), b.data(), output.data(), one);
        const std::string mismatch = compare_exact(output, expected);
        if (!mismatch.empty()) {
          fail_msg("trial %d (op %d), %s: %s", trial, static_cast<int>(operation),
                   kernel->algorithm(), mismatch.c_str());
        }
      }
    }
  }
}

// A binary operation with its activation fused (a residual Add and its Relu): the same bits
// as reference::binary followed by reference::unary, for the activations unary_row computes
// exactly; the others (Sigmoid, ...) are not fused.
void test_binary_activation_matches_two_kernels(void** /*state*/) {
  Random random(99);
  ThreadPool one(1), three(3);
  std::vector<reference::UnaryParams> activations(4);
  activations[1].operation = reference::UnaryOperation::kClip;
  activations[1].minimum = -0.5f;
  activations[1].maximum = 0.75f;
  activations[2].operation = reference::UnaryOperation::kLeakyRelu;
  activations[2].alpha = 0.1f;
  activations[3].operation = reference::UnaryOperation::kHardSwish;
  size_t index = 0;
  for (const BroadcastCase& shapes : supported_cases()) {
    const std::vector<float> a = operand_values(random, shape_elements(shapes.a));
    const std::vector<float> b = operand_values(random, shape_elements(shapes.b));
    const reference::BroadcastParams params = reference::make_broadcast_params(shapes.a, shapes.b);
    const auto count = shape_elements(params.output_shape);
    for (reference::BinaryOperation operation : kOperations) {
      std::vector<float> sums(count);
      reference::binary(operation, params, a.data(), b.data(), sums.data());
      for (const reference::UnaryParams& activation : activations) {
        std::vector<float> expected(count);
        reference::unary(activation, sums.data(), expected.data(), static_cast<int64_t>(count));
        for (KernelVariant variant : optimized_variants()) {
          auto kernel = kernels::cpu::prepare_binary_activation(operation, shapes.a, shapes.b,
                                                                activation, variant);
          if (!kernel) fail_msg("case %zu: no %s kernel", index, kernel_variant_name(variant));
          for (ThreadPool* pool : {&one, &three}) {
            std::vector<float> output(count, std::numeric_limits<float>::quiet_NaN());
            kernel->run(a.data(), b.data(), output.data(), *pool);
            const std::string mismatch = compare_floats(output, expected, 0.0);
            if (!mismatch.empty()) {
              fail_msg("case %zu %s (op %d) %s, activation %d, %s, %zu threads: %s", index,
                       describe(shapes.a).c_str(), static_cast<int>(operation),
                       describe(shapes.b).c_str(), static_cast<int>(activation.operation),
                       kernel->algorithm(), pool->thread_count(), mismatch.c_str());
            }
          }
        }
      }
    }
    ++index;
  }
  reference::UnaryParams sigmoid;
  sigmoid.operation = reference::UnaryOperation::kSigmoid;
  for (KernelVariant variant : optimized_variants()) {
    assert_null(kernels::cpu::prepare_binary_activation(reference::BinaryOperation::kAdd, {8}, {8},
                                                        sigmoid, variant)
                    .get());
  }
}

// The int8 operation with a following activation's table applied to every result code: the
// expected codes looked up in the table. A random table (every entry matters) and tables that
// are clamps (a Relu or Clip keeping its input's quantization), which Add and Sub apply inside
// their row instead of a lookup pass: bounds inside the range, at its ends, and the identity.
void test_int8_with_output_table(void** /*state*/) {
  Random random(78);
  ThreadPool one(1), three(3);
  auto clamp_table = [](int minimum, int maximum) {
    std::vector<int8_t> table(256);
    for (int code = -128; code < 128; ++code) {
      table[static_cast<size_t>(code + 128)] =
          static_cast<int8_t>(std::min(std::max(code, minimum), maximum));
    }
    return table;
  };
  std::vector<int8_t> almost_clamp = clamp_table(-3, 100);
  almost_clamp[200] = 5;  // one entry off: must stay a table
  const std::vector<std::vector<int8_t>> tables = {random.codes(256),    clamp_table(-2, 127),
                                                   clamp_table(-20, 45), clamp_table(-128, 127),
                                                   clamp_table(7, 7),    almost_clamp};
  size_t index = 0;
  for (const BroadcastCase& shapes : supported_cases()) {
    const std::vector<int8_t> a = random.codes(shape_elements(shapes.a));
    const std::vector<int8_t> b = random.codes(shape_elements(shapes.b));
    const reference::BroadcastParams params = reference::make_broadcast_params(shapes.a, shapes.b);
    for (const std::vector<int8_t>& table : tables) {
      kernels::cpu::BinaryInt8Quantization quantization{0.05f, 3, 0.02f, -5, 0.1f, -2, table};
      for (reference::BinaryOperation operation : kOperations) {
        std::vector<int8_t> expected = expected_int8(operation, params, a, b, quantization);
        for (int8_t& code : expected) code = table[static_cast<size_t>(code + 128)];
        expect_int8_kernels_match("int8 table case", index, operation, shapes, quantization, a, b,
                                  expected, one, three);
      }
    }
    ++index;
  }
}

// Broadcasts inside a run of dimensions, both operands broadcast, Pow and PRelu, and the
// reference variant: no optimized kernel, the caller keeps the reference.
void test_other_broadcasts_are_left_to_the_reference(void** /*state*/) {
  const std::vector<BroadcastCase> unsupported = {
      {{2, 3, 4}, {2, 1, 4}}, {{2, 1, 4}, {1, 3, 1}}, {{3, 1}, {1, 3}}, {{4, 0}, {4, 0}}};
  for (KernelVariant variant : optimized_variants()) {
    for (const BroadcastCase& shapes : unsupported) {
      if (kernels::cpu::prepare_binary(reference::BinaryOperation::kAdd, shapes.a, shapes.b,
                                       variant)) {
        fail_msg("%s + %s: expected no optimized kernel", describe(shapes.a).c_str(),
                 describe(shapes.b).c_str());
      }
    }
    for (reference::BinaryOperation operation :
         {reference::BinaryOperation::kPower, reference::BinaryOperation::kPRelu}) {
      assert_null(kernels::cpu::prepare_binary(operation, {8}, {8}, variant).get());
    }
  }
  assert_null(kernels::cpu::prepare_binary(reference::BinaryOperation::kAdd, {8}, {8},
                                           KernelVariant::kReference)
                  .get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_supported_broadcasts_match_reference),
      cmocka_unit_test(test_int8_matches_expected_codes),
      cmocka_unit_test(test_int8_every_code_pair),
      cmocka_unit_test(test_binary_activation_matches_two_kernels),
      cmocka_unit_test(test_int8_with_output_table),
      cmocka_unit_test(test_other_broadcasts_are_left_to_the_reference),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
