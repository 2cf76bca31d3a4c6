// Optimized float32 ConvTranspose (kernels/cpu/dispatch.h prepare_conv_transpose2d) against
// reference::conv_transpose2d: random shapes (groups, kernels 1-5, strides 1-3, pads, dilation,
// output padding, batches, every fused activation, with and without bias) on every optimized
// variant and 1 and 3 threads, within 1e-5 of the products' scale; declined without constant
// weights and for the reference variant.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
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
using kernels::cpu::KernelVariant;

std::vector<KernelVariant> float_variants() {
  std::vector<KernelVariant> variants = optimized_variants();
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    variants.push_back(KernelVariant::kAvx512);
  }
  return variants;
}

reference::Conv2DShape random_shape(Random& random) {
  reference::Conv2DShape s;
  s.batch = random.integer(1, 2);
  s.groups = random.integer(1, 4) == 1 ? random.integer(2, 3) : 1;
  s.input_channels = s.groups * random.integer(1, 20);
  s.output_channels = s.groups * random.integer(1, 20);
  reference::Window2D& w = s.window;
  w.input_height = random.integer(1, 12);
  w.input_width = random.integer(1, 15);
  w.kernel_height = random.integer(1, 5);
  w.kernel_width = random.integer(1, 5);
  w.stride_height = random.integer(1, 3);
  w.stride_width = random.integer(1, 3);
  w.dilation_height = random.integer(1, 4) == 1 ? 2 : 1;
  w.dilation_width = random.integer(1, 4) == 1 ? 2 : 1;
  w.pad_top = random.integer(0, int(w.kernel_height) - 1);
  w.pad_left = random.integer(0, int(w.kernel_width) - 1);
  // ONNX's output size with output padding below the stride; the bottom/right pads are what
  // makes it so and the kernels do not read them.
  w.output_height = (w.input_height - 1) * w.stride_height - 2 * w.pad_top +
                    w.dilation_height * (w.kernel_height - 1) + 1 +
                    random.integer(0, int(w.stride_height) - 1);
  w.output_width = (w.input_width - 1) * w.stride_width - 2 * w.pad_left +
                   w.dilation_width * (w.kernel_width - 1) + 1 +
                   random.integer(0, int(w.stride_width) - 1);
  if (w.output_height < 1) w.output_height = 1;
  if (w.output_width < 1) w.output_width = 1;
  return s;
}

size_t output_size(const reference::Conv2DShape& s) {
  return static_cast<size_t>(s.batch * s.output_channels * s.window.output_height *
                             s.window.output_width);
}

void test_random_conv_transposes_match_reference(void**) {
  Random random(51);
  ThreadPool one(1), three(3);
  reference::FusedActivation activations[4];
  activations[1].kind = reference::FusedActivation::Kind::kRelu;
  activations[2].kind = reference::FusedActivation::Kind::kClip;
  activations[2].minimum = -0.5f;
  activations[2].maximum = 0.75f;
  activations[3].kind = reference::FusedActivation::Kind::kLeakyRelu;
  activations[3].alpha = 0.1f;
  for (int trial = 0; trial < 120; ++trial) {
    const reference::Conv2DShape s = random_shape(random);
    const reference::Window2D& w = s.window;
    const std::vector<float> input = random.floats(
        static_cast<size_t>(s.batch * s.input_channels * w.input_height * w.input_width));
    const std::vector<float> weights = random.floats(static_cast<size_t>(
        s.input_channels * (s.output_channels / s.groups) * w.kernel_height * w.kernel_width));
    const std::vector<float> bias = random.floats(static_cast<size_t>(s.output_channels));
    const bool with_bias = trial % 3 != 0;
    const reference::FusedActivation& activation = activations[trial % 4];
    std::vector<float> expected(output_size(s));
    reference::conv_transpose2d(s, activation, input.data(), weights.data(),
                                with_bias ? bias.data() : nullptr, expected.data());
    // The products' scale: the same sums over magnitudes.
    std::vector<float> magnitude_in(input.size()), magnitude_w(weights.size()),
        scale(expected.size());
    for (size_t i = 0; i < input.size(); ++i) magnitude_in[i] = std::fabs(input[i]);
    for (size_t i = 0; i < weights.size(); ++i) magnitude_w[i] = std::fabs(weights[i]);
    reference::conv_transpose2d(s, reference::FusedActivation{}, magnitude_in.data(),
                                magnitude_w.data(), nullptr, scale.data());
    double largest_sum = 1.0, largest_output = 1.0;
    for (float value : scale) largest_sum = std::max(largest_sum, double{value});
    for (float value : expected)
      largest_output = std::max(largest_output, std::fabs(double{value}));
    const double tolerance = 1e-5 * largest_sum / largest_output;
    for (KernelVariant variant : float_variants()) {
      auto kernel = kernels::cpu::prepare_conv_transpose2d(s, activation, weights.data(), variant);
      assert_non_null(kernel.get());
      for (ThreadPool* pool : {&one, &three}) {
        std::vector<float> output(expected.size(), std::nanf(""));
        kernel->run(input.data(), nullptr, with_bias ? bias.data() : nullptr, output.data(), *pool);
        const std::string mismatch = compare_floats(output, expected, tolerance);
        if (!mismatch.empty()) {
          fail_msg(
              "trial %d: %lld->%lld channels, groups %lld, %lldx%lld -> %lldx%lld, kernel "
              "%lldx%lld, stride %lldx%lld, pad %lld,%lld, dilation %lldx%lld, %s, %zu "
              "threads: %s",
              trial, (long long)s.input_channels, (long long)s.output_channels, (long long)s.groups,
              (long long)w.input_height, (long long)w.input_width, (long long)w.output_height,
              (long long)w.output_width, (long long)w.kernel_height, (long long)w.kernel_width,
              (long long)w.stride_height, (long long)w.stride_width, (long long)w.pad_top,
              (long long)w.pad_left, (long long)w.dilation_height, (long long)w.dilation_width,
              kernel->algorithm(), pool->thread_count(), mismatch.c_str());
        }
      }
    }
  }
}

void test_conv_transpose_declines(void**) {
  Random random(52);
  const reference::Conv2DShape s = random_shape(random);
  const std::vector<float> weights(
      static_cast<size_t>(s.input_channels * (s.output_channels / s.groups) *
                          s.window.kernel_height * s.window.kernel_width));
  assert_null(
      kernels::cpu::prepare_conv_transpose2d(s, {}, nullptr, KernelVariant::kPortable).get());
  assert_null(
      kernels::cpu::prepare_conv_transpose2d(s, {}, weights.data(), KernelVariant::kReference)
          .get());
  reference::Conv2DShape bad = s;
  bad.window.stride_height = 0;
  assert_null(
      kernels::cpu::prepare_conv_transpose2d(bad, {}, weights.data(), KernelVariant::kPortable)
          .get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_conv_transposes_match_reference),
      cmocka_unit_test(test_conv_transpose_declines),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
