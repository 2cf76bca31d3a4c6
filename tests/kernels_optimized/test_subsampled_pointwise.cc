// The subsampling wrapper for 1x1 strided convolutions (kernels/cpu/optimized/
// subsampled_pointwise.cc) against the reference: int8 bit-exact and float32 within rounding, on
// random shapes (strides 2 and 3, unequal strides, odd planes whose last row or column the
// stride skips, groups, batch 2, depths across the pair tiles' chunks) with the inner kernel of
// every variant this CPU runs, on pools of 1-3 threads whose scratch starts empty or holds a
// larger earlier kernel's leftovers. Also: the shapes it declines, and the avx2 dispatch's choice.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/subsampled_pointwise.h"
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
namespace reference = kernels::reference;
namespace optimized = kernels::cpu::optimized;
using kernels::cpu::KernelVariant;

struct Case {
  reference::Conv2DShape shape;
  std::string text;
};

Case random_case(Random& random, int trial) {
  reference::Conv2DShape shape;
  reference::Window2D& w = shape.window;
  shape.batch = trial % 5 == 4 ? 2 : 1;
  const int64_t group_counts[] = {1, 1, 1, 2, 4};
  shape.groups = group_counts[trial % 5];
  w.kernel_height = w.kernel_width = 1;
  w.stride_height = random.integer(2, 3);
  w.stride_width = trial % 3 == 0 ? random.integer(1, 3) : w.stride_height;
  w.dilation_height = w.dilation_width = trial % 7 == 6 ? 2 : 1;  // meaningless for 1x1
  // Odd planes, and planes whose last rows or columns the stride never reads.
  // Rows of 33 and more columns give stride 2 a 16-byte step (and an overlapping last one).
  w.input_height = random.integer(1, 30);
  w.input_width = trial % 2 == 0 ? w.input_height : random.integer(1, 75);
  w.output_height = (w.input_height - 1) / w.stride_height + 1;
  w.output_width = (w.input_width - 1) / w.stride_width + 1;
  // Per group: small depths and, every fourth trial, past the 256 (and 1024) deep chunks.
  const int64_t group_channels = trial % 4 == 3 ? random.integer(250, 1100) : random.integer(1, 70);
  shape.input_channels = group_channels * shape.groups;
  const int64_t outputs_per_group[] = {1, 5, 16, 17, 40};
  shape.output_channels = outputs_per_group[random.integer(0, 4)] * shape.groups;
  char text[256];
  std::snprintf(text, sizeof(text),
                "trial %d: N%lld C%lld M%lld g%lld %lldx%lld -> %lldx%lld s%lldx%lld", trial,
                static_cast<long long>(shape.batch), static_cast<long long>(shape.input_channels),
                static_cast<long long>(shape.output_channels), static_cast<long long>(shape.groups),
                static_cast<long long>(w.input_height), static_cast<long long>(w.input_width),
                static_cast<long long>(w.output_height), static_cast<long long>(w.output_width),
                static_cast<long long>(w.stride_height), static_cast<long long>(w.stride_width));
  return {shape, text};
}

std::vector<KernelVariant> variants() {
  std::vector<KernelVariant> list = int8_gemm_variants();
  list.push_back(KernelVariant::kReference);  // the wrapper takes any inner kernel
  return list;
}

void test_int8_matches_reference(void**) {
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  for (int trial = 0; trial < 60; ++trial) {
    Random random(static_cast<uint32_t>(9300 + trial));
    const Case c = random_case(random, trial);
    const reference::Conv2DShape& shape = c.shape;
    const reference::Window2D& w = shape.window;
    assert_true(optimized::subsampled_pointwise_applies(shape));
    const int64_t depth = shape.input_channels / shape.groups;
    const std::vector<int8_t> input = random.codes(
        convolution_tensor_size(shape, shape.input_channels, w.input_height, w.input_width));
    const std::vector<int8_t> weights =
        random.codes(static_cast<size_t>(shape.output_channels * depth));
    const std::vector<int32_t> bias =
        random.ints(static_cast<size_t>(shape.output_channels), -30000, 30000);
    const reference::Int8Requantization q =
        random_convolution_requantization(random, shape.output_channels, depth, trial);
    std::vector<int8_t> expected(
        convolution_tensor_size(shape, shape.output_channels, w.output_height, w.output_width));
    reference::conv2d_int8(shape, q, input.data(), weights.data(), bias.data(), expected.data());
    const reference::Conv2DShape inner_shape = optimized::subsampled_pointwise_shape(shape);
    for (KernelVariant variant : variants()) {
      auto kernel = optimized::make_subsampled_pointwise_conv2d_int8(
          shape, kernels::cpu::prepare_conv2d_int8(inner_shape, q, weights.data(), variant));
      if (!kernel) fail_msg("%s: no kernel", c.text.c_str());
      for (ThreadPool& pool : pools) {
        // Odd trials leave the scratch as the last kernel left it (grown on first use, or
        // larger and full of its data); even ones fill what is reserved with junk first.
        if (trial % 2 == 0) {
          pool.reserve_scratch(kernel->scratch_bytes());
          for (size_t t = 0; t < pool.thread_count(); ++t) {
            std::fill_n(pool.scratch(t, kernel->scratch_bytes()), kernel->scratch_bytes(), 0x5a);
          }
        }
        std::vector<int8_t> output(expected.size(), 0x55);
        kernel->run(input.data(), nullptr, bias.data(), output.data(), pool);
        const std::string mismatch = compare_exact(output, expected);
        if (!mismatch.empty()) {
          fail_msg("%s (%s, %zu threads): %s", c.text.c_str(), kernel->algorithm(),
                   pool.thread_count(), mismatch.c_str());
        }
      }
    }
  }
}

void test_float_matches_reference(void**) {
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2)};
  for (int trial = 0; trial < 30; ++trial) {
    Random random(static_cast<uint32_t>(9500 + trial));
    const Case c = random_case(random, trial);
    const reference::Conv2DShape& shape = c.shape;
    const reference::Window2D& w = shape.window;
    const int64_t depth = shape.input_channels / shape.groups;
    const std::vector<float> input = random.floats(
        convolution_tensor_size(shape, shape.input_channels, w.input_height, w.input_width));
    const std::vector<float> weights =
        random.floats(static_cast<size_t>(shape.output_channels * depth));
    const std::vector<float> bias = random.floats(static_cast<size_t>(shape.output_channels));
    const reference::FusedActivation activation = activation_number(static_cast<size_t>(trial));
    const FloatExpectation expected =
        float_expectation(shape, activation, input, weights, bias.data());
    const reference::Conv2DShape inner_shape = optimized::subsampled_pointwise_shape(shape);
    for (KernelVariant variant : optimized_variants()) {
      auto kernel = optimized::make_subsampled_pointwise_conv2d(
          shape, kernels::cpu::prepare_conv2d(inner_shape, activation, weights.data(), variant));
      if (!kernel) fail_msg("%s: no kernel", c.text.c_str());
      for (ThreadPool& pool : pools) {
        std::vector<float> output(expected.output.size(), 1234.0f);
        kernel->run(input.data(), nullptr, bias.data(), output.data(), pool);
        const std::string mismatch = compare_floats(output, expected.output, expected.tolerance);
        if (!mismatch.empty()) {
          fail_msg("%s (%s, %zu threads): %s", c.text.c_str(), kernel->algorithm(),
                   pool.thread_count(), mismatch.c_str());
        }
      }
    }
  }
}

reference::Conv2DShape downsample(int64_t channels, int64_t input_side) {
  reference::Conv2DShape shape;
  shape.input_channels = channels;
  shape.output_channels = 2 * channels;
  reference::Window2D& w = shape.window;
  w.input_height = w.input_width = input_side;
  w.stride_height = w.stride_width = 2;
  w.output_height = w.output_width = (input_side - 1) / 2 + 1;
  return shape;
}

// Padding, windows wider than 1x1, stride 1 and outputs reading past the input are declined.
void test_declines(void**) {
  reference::Conv2DShape shape = downsample(8, 9);
  assert_true(optimized::subsampled_pointwise_applies(shape));
  shape.window.pad_left = 1;
  assert_false(optimized::subsampled_pointwise_applies(shape));
  shape = downsample(8, 9);
  shape.window.kernel_width = 3;
  assert_false(optimized::subsampled_pointwise_applies(shape));
  shape = downsample(8, 9);
  shape.window.stride_height = shape.window.stride_width = 1;
  assert_false(optimized::subsampled_pointwise_applies(shape));
  shape = downsample(8, 9);
  shape.window.output_width += 1;  // (5 x 2 = 10) is outside the 9 columns
  assert_false(optimized::subsampled_pointwise_applies(shape));
  assert_null(optimized::make_subsampled_pointwise_conv2d_int8(downsample(8, 9), nullptr).get());
}

// The avx2 dispatch wraps the deep downsample layers (ResNet50's) and not the shallow ones.
void test_avx2_dispatch(void**) {
#if defined(__x86_64__)
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    std::printf("avx2 dispatch: SKIPPED (no AVX2)\n");
    return;
  }
  for (const auto& [channels, side, wrapped] :
       {std::tuple{1024, 14, true}, {512, 28, true}, {256, 56, true}, {64, 56, false}}) {
    const reference::Conv2DShape shape = downsample(channels, side);
    reference::Int8Requantization q;
    q.weight_zero_points.assign(static_cast<size_t>(shape.output_channels), 0);
    q.multipliers.assign(static_cast<size_t>(shape.output_channels), 0.001f);
    const std::vector<int8_t> weights(static_cast<size_t>(shape.output_channels * channels), 3);
    auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), KernelVariant::kAvx2);
    const bool subsampled = std::string(kernel->algorithm()).find("subsampled") == 0;
    if (subsampled != wrapped)
      fail_msg("avx2 %d -> %d chose %s", channels, 2 * channels, kernel->algorithm());
  }
#endif
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_matches_reference),
      cmocka_unit_test(test_float_matches_reference),
      cmocka_unit_test(test_declines),
      cmocka_unit_test(test_avx2_dispatch),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
