// The int8 convolution with output channels in lanes (kernels/cpu/optimized/
// int8_lane_convolution.cc) against the reference, bit-exact, on randomized shapes: small output
// planes (7x7 and others, so the last pixel panel of MR = 6 has 1..6 pixels), strides 1-3,
// dilation, padding, output channels that are not a multiple of the 16-channel panels or of the
// 64-channel blocks, odd depths, depth chunks crossed, batch 2, 1 and 2 threads, random zero
// points (also outside int8) and the fused activations incl. SiLU. Each micro-kernel table this
// CPU runs is forced through the factory; on x86-64 the avx2 dispatch is checked to choose it for
// 7x7 outputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/optimized_kernels.h"
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

struct Case {
  reference::Conv2DShape shape;
  std::string text;
};

Case random_case(Random& random, int trial) {
  reference::Conv2DShape shape;
  reference::Window2D& w = shape.window;
  shape.batch = trial % 5 == 4 ? 2 : 1;
  shape.groups = 1;
  const int64_t kernels[] = {1, 3, 3, 5, 2};
  w.kernel_height = kernels[random.integer(0, 4)];
  w.kernel_width = trial % 7 == 6 ? kernels[random.integer(0, 4)] : w.kernel_height;
  w.stride_height = random.integer(1, 3);
  w.stride_width = trial % 3 == 0 ? random.integer(1, 2) : w.stride_height;
  w.dilation_height = trial % 6 == 5 ? 2 : 1;
  w.dilation_width = w.dilation_height;
  const bool padded = trial % 4 != 0;
  w.pad_top = padded ? random.integer(0, 2) : 0;
  w.pad_left = padded ? random.integer(0, 2) : 0;
  w.pad_bottom = padded ? random.integer(0, 2) : 0;
  w.pad_right = padded ? random.integer(0, 2) : 0;
  // Output planes of 1..~100 pixels, 7x7 most often.
  const int64_t output_height = trial % 2 == 0 ? 7 : random.integer(1, 10);
  const int64_t output_width = trial % 2 == 0 ? 7 : random.integer(1, 10);
  const int64_t reach_height = (w.kernel_height - 1) * w.dilation_height + 1;
  const int64_t reach_width = (w.kernel_width - 1) * w.dilation_width + 1;
  w.input_height =
      std::max<int64_t>(1, (output_height - 1) * w.stride_height + reach_height - w.pad_top -
                               w.pad_bottom + random.integer(0, w.stride_height - 1));
  w.input_width =
      std::max<int64_t>(1, (output_width - 1) * w.stride_width + reach_width - w.pad_left -
                               w.pad_right + random.integer(0, w.stride_width - 1));
  w.output_height = conv_output_size(w.input_height, w.kernel_height, w.stride_height,
                                     w.dilation_height, w.pad_top, w.pad_bottom);
  w.output_width = conv_output_size(w.input_width, w.kernel_width, w.stride_width, w.dilation_width,
                                    w.pad_left, w.pad_right);
  // Depth up to ~1200 (several 256-pair chunks), often odd; channels across panels and blocks.
  shape.input_channels = trial % 8 == 7 ? random.integer(100, 140) : random.integer(1, 40);
  const int64_t outputs[] = {1, 15, 16, 17, 63, 64, 65, 100, 130};
  shape.output_channels = outputs[random.integer(0, 8)];
  char text[320];
  std::snprintf(
      text, sizeof(text),
      "trial %d: N%lld C%lld M%lld %lldx%lld -> %lldx%lld k%lldx%lld s%lldx%lld d%lld "
      "pads %lld %lld %lld %lld",
      trial, static_cast<long long>(shape.batch), static_cast<long long>(shape.input_channels),
      static_cast<long long>(shape.output_channels), static_cast<long long>(w.input_height),
      static_cast<long long>(w.input_width), static_cast<long long>(w.output_height),
      static_cast<long long>(w.output_width), static_cast<long long>(w.kernel_height),
      static_cast<long long>(w.kernel_width), static_cast<long long>(w.stride_height),
      static_cast<long long>(w.stride_width), static_cast<long long>(w.dilation_height),
      static_cast<long long>(w.pad_top), static_cast<long long>(w.pad_left),
      static_cast<long long>(w.pad_bottom), static_cast<long long>(w.pad_right));
  return {shape, text};
}

void test_lanes_match_reference(void**) {
  ThreadPool one(1);
  ThreadPool two(2);
  const std::vector<const optimized::MicroKernels*> tables = optimized_micro_kernels();
  for (int trial = 0; trial < 120; ++trial) {
    Random random(static_cast<uint32_t>(7100 + trial));
    const Case c = random_case(random, trial);
    const reference::Conv2DShape& shape = c.shape;
    const reference::Window2D& w = shape.window;
    if (w.output_height < 1 || w.output_width < 1) continue;
    const int64_t depth = shape.input_channels * w.kernel_height * w.kernel_width;
    const std::vector<int8_t> input = random.codes(
        convolution_tensor_size(shape, shape.input_channels, w.input_height, w.input_width));
    const std::vector<int8_t> weights =
        random.codes(static_cast<size_t>(shape.output_channels * depth));
    const std::vector<int32_t> bias =
        random.ints(static_cast<size_t>(shape.output_channels), -30000, 30000);
    const reference::Int8Requantization q =
        random_convolution_requantization(random, shape.output_channels, depth, trial);
    const bool with_bias = trial % 5 != 3;
    std::vector<int8_t> expected(
        convolution_tensor_size(shape, shape.output_channels, w.output_height, w.output_width));
    reference::conv2d_int8(shape, q, input.data(), weights.data(),
                           with_bias ? bias.data() : nullptr, expected.data());
    for (const optimized::MicroKernels* table : tables) {
      auto kernel = optimized::make_int8_lane_conv2d(*table, shape, q, weights.data());
      if (!kernel) fail_msg("%s: no lane kernel on %s", c.text.c_str(), table->name);
      for (ThreadPool* pool : {&one, &two}) {
        std::vector<int8_t> output(expected.size(), 0x55);
        kernel->run(input.data(), nullptr, with_bias ? bias.data() : nullptr, output.data(), *pool);
        const std::string mismatch = compare_exact(output, expected);
        if (!mismatch.empty()) {
          fail_msg("%s (%s, bias %d, zx %d, silu %d, %zu threads): %s", c.text.c_str(),
                   kernel->algorithm(), with_bias, q.input_zero_point, q.silu, pool->thread_count(),
                   mismatch.c_str());
        }
      }
    }
  }
}

// Extreme codes: every pair at its largest product (255 x 255 twice), a deep 7x7 layer whose
// sums leave the float requantization's range, saturating outputs.
void test_lanes_extremes(void**) {
  ThreadPool pool(2);
  reference::Conv2DShape shape;
  shape.batch = 1;
  shape.groups = 1;
  shape.input_channels = 150;
  shape.output_channels = 40;
  reference::Window2D& w = shape.window;
  w.input_height = w.input_width = 7;
  w.kernel_height = w.kernel_width = 3;
  w.stride_height = w.stride_width = w.dilation_height = w.dilation_width = 1;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 1;
  w.output_height = w.output_width = 7;
  const std::string mismatch = check_int8_convolution_extremes(
      shape, 90, pool,
      [](const optimized::MicroKernels& table, const reference::Conv2DShape& s,
         const reference::Int8Requantization& q,
         const int8_t* weights) { return optimized::make_int8_lane_conv2d(table, s, q, weights); });
  if (!mismatch.empty()) fail_msg("%s", mismatch.c_str());
}

// Where it does not apply the factory declines (the dispatcher then runs the GEMM).
void test_lanes_decline(void**) {
  reference::Conv2DShape shape;
  shape.batch = 1;
  shape.input_channels = 8;
  shape.output_channels = 8;
  shape.groups = 2;
  reference::Window2D& w = shape.window;
  w.input_height = w.input_width = 7;
  w.kernel_height = w.kernel_width = 1;
  w.stride_height = w.stride_width = w.dilation_height = w.dilation_width = 1;
  w.output_height = w.output_width = 7;
  reference::Int8Requantization q;
  q.weight_zero_points.assign(8, 0);
  q.multipliers.assign(8, 0.01f);
  // Sized for the ungrouped layer below (8 x 8); the grouped one reads less.
  const std::vector<int8_t> weights(8 * 8, 1);
  const optimized::MicroKernels& table = optimized::portable_micro_kernels();
  assert_null(optimized::make_int8_lane_conv2d(table, shape, q, weights.data()).get());
  shape.groups = 1;
  assert_null(optimized::make_int8_lane_conv2d(table, shape, q, nullptr).get());
  assert_non_null(optimized::make_int8_lane_conv2d(table, shape, q, weights.data()).get());
}

// The avx2 dispatch takes the lanes for a 7x7 output of a strided 3x3 window (and the GEMM for
// a large plane; stride-1 3x3 layers go to Winograd, test_int8_winograd_convolution); avx512
// keeps its dot-product kernels.
void test_avx2_dispatch_chooses_lanes(void**) {
#if defined(__x86_64__)
  using kernels::cpu::KernelVariant;
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    std::printf("avx2 dispatch: SKIPPED (no AVX2)\n");
    return;
  }
  reference::Conv2DShape shape;
  shape.batch = 1;
  shape.input_channels = 64;
  shape.output_channels = 256;
  shape.groups = 1;
  reference::Window2D& w = shape.window;
  w.input_height = w.input_width = 14;
  w.kernel_height = w.kernel_width = 3;
  w.stride_height = w.stride_width = 2;
  w.dilation_height = w.dilation_width = 1;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 1;
  w.output_height = w.output_width = 7;
  reference::Int8Requantization q;
  q.weight_zero_points.assign(256, 0);
  q.multipliers.assign(256, 0.001f);
  const std::vector<int8_t> weights(256 * 64 * 9, 3);
  auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), KernelVariant::kAvx2);
  if (std::string(kernel->algorithm()).find("lanes") == std::string::npos) {
    fail_msg("avx2 7x7 chose %s", kernel->algorithm());
  }
  w.input_height = 112;
  w.input_width = 112;
  w.output_height = w.output_width = 56;
  kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), KernelVariant::kAvx2);
  if (std::string(kernel->algorithm()).find("lanes") != std::string::npos) {
    fail_msg("avx2 56x56 chose %s", kernel->algorithm());
  }
#endif
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lanes_match_reference),
      cmocka_unit_test(test_lanes_extremes),
      cmocka_unit_test(test_lanes_decline),
      cmocka_unit_test(test_avx2_dispatch_chooses_lanes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
