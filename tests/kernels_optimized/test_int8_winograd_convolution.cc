// The int8 Winograd F(2x2, 3x3) convolution (kernels/cpu/optimized/int8_winograd_convolution.cc)
// against the reference, bit-exact, on randomized 3x3 stride-1 shapes: output planes of odd and
// even sizes from 1x1 (partial tiles at the right and bottom edges), several bands of tile rows,
// tile panels of 16 partly filled, paddings 0-2 on each side independently, input channels odd
// and even up to 140 (pairs with a missing second channel), output channels across the tile's
// 6-row panels and the task blocks, batch 2, 1-3 threads, random zero points (also outside int8)
// and every output stage incl. SiLU; every micro-kernel table this CPU runs is forced through the
// factory. Also extreme codes, the shapes and weights it must decline, and the avx2 dispatch.
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

reference::Conv2DShape winograd_shape(int64_t channels, int64_t outputs, int64_t height,
                                      int64_t width, int64_t pad_top, int64_t pad_left,
                                      int64_t pad_bottom, int64_t pad_right) {
  reference::Conv2DShape shape;
  shape.batch = 1;
  shape.groups = 1;
  shape.input_channels = channels;
  shape.output_channels = outputs;
  reference::Window2D& w = shape.window;
  w.input_height = height;
  w.input_width = width;
  w.kernel_height = w.kernel_width = 3;
  w.stride_height = w.stride_width = w.dilation_height = w.dilation_width = 1;
  w.pad_top = pad_top;
  w.pad_left = pad_left;
  w.pad_bottom = pad_bottom;
  w.pad_right = pad_right;
  w.output_height = conv_output_size(height, 3, 1, 1, pad_top, pad_bottom);
  w.output_width = conv_output_size(width, 3, 1, 1, pad_left, pad_right);
  return shape;
}

std::string describe(const reference::Conv2DShape& s, int trial) {
  const reference::Window2D& w = s.window;
  char text[256];
  std::snprintf(text, sizeof(text),
                "trial %d: N%lld C%lld M%lld %lldx%lld -> %lldx%lld pads %lld %lld %lld %lld",
                trial, static_cast<long long>(s.batch), static_cast<long long>(s.input_channels),
                static_cast<long long>(s.output_channels), static_cast<long long>(w.input_height),
                static_cast<long long>(w.input_width), static_cast<long long>(w.output_height),
                static_cast<long long>(w.output_width), static_cast<long long>(w.pad_top),
                static_cast<long long>(w.pad_left), static_cast<long long>(w.pad_bottom),
                static_cast<long long>(w.pad_right));
  return text;
}

// Runs `shape` with random data on every table and thread pool; fails on the first difference.
void check_shape(Random& random, const reference::Conv2DShape& shape, int trial,
                 const std::vector<ThreadPool*>& pools) {
  const reference::Window2D& w = shape.window;
  const int64_t depth = shape.input_channels * 9;
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
  reference::conv2d_int8(shape, q, input.data(), weights.data(), with_bias ? bias.data() : nullptr,
                         expected.data());
  const std::string text = describe(shape, trial);
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    auto kernel = optimized::make_int8_winograd_conv2d(*table, shape, q, weights.data());
    if (!kernel) fail_msg("%s: no winograd kernel on %s", text.c_str(), table->name);
    for (ThreadPool* pool : pools) {
      std::vector<int8_t> output(expected.size(), 0x55);
      kernel->run(input.data(), nullptr, with_bias ? bias.data() : nullptr, output.data(), *pool);
      const std::string mismatch = compare_exact(output, expected);
      if (!mismatch.empty()) {
        fail_msg("%s (%s, bias %d, zx %d, silu %d, %zu threads): %s", text.c_str(),
                 kernel->algorithm(), with_bias, q.input_zero_point, q.silu, pool->thread_count(),
                 mismatch.c_str());
      }
    }
  }
}

void test_winograd_matches_reference(void**) {
  ThreadPool one(1);
  ThreadPool two(2);
  ThreadPool three(3);
  const int64_t outputs[] = {1, 5, 6, 7, 16, 17, 40, 64, 100};
  for (int trial = 0; trial < 150; ++trial) {
    Random random(static_cast<uint32_t>(9100 + trial));
    const int64_t height = random.integer(1, trial % 4 == 0 ? 30 : 12);
    const int64_t width = random.integer(1, trial % 4 == 1 ? 40 : 12);
    const int64_t channels = trial % 10 == 9 ? random.integer(100, 140) : random.integer(1, 40);
    reference::Conv2DShape shape =
        winograd_shape(channels, outputs[random.integer(0, 8)], height, width, random.integer(0, 2),
                       random.integer(0, 2), random.integer(0, 2), random.integer(0, 2));
    shape.batch = trial % 6 == 5 ? 2 : 1;
    if (shape.window.output_height < 1 || shape.window.output_width < 1) continue;
    check_shape(random, shape, trial, {&one, trial % 2 ? &two : &three});
  }
}

// Planes large and deep enough for several bands of tile rows (a band's transformed input is
// kept near 256 KB), with a last band of fewer rows and a partly filled last panel; on 1-3
// threads, so both schedules run (band tasks from 3 bands per thread, else the whole image's
// input transform first): e.g. 10 bands take band tasks on 1-3 threads, 4 bands on 1 only.
void test_winograd_several_bands(void**) {
  ThreadPool one(1);
  ThreadPool two(2);
  ThreadPool three(3);
  const reference::Conv2DShape shapes[] = {
      winograd_shape(128, 20, 27, 25, 1, 1, 1, 1),  // 14 x 13 tiles
      winograd_shape(129, 13, 40, 9, 0, 2, 1, 0),
      winograd_shape(33, 70, 58, 58, 1, 1, 1, 1),   // 56x56 outputs, resnet's first stage
      winograd_shape(140, 24, 40, 40, 1, 1, 1, 1),  // 10 bands of 2 tile rows
  };
  int trial = 0;
  for (const reference::Conv2DShape& shape : shapes) {
    Random random(static_cast<uint32_t>(9500 + trial));
    check_shape(random, shape, trial++, {&one, &two, &three});
  }
}

// Extreme codes: |x - zx| and |w - zw| at 255 everywhere, so every transformed value and every
// sum is at its largest; biases that push the sums past the float requantization's range.
void test_winograd_extremes(void**) {
  ThreadPool pool(2);
  const reference::Conv2DShape shape = winograd_shape(150, 40, 9, 8, 1, 1, 1, 1);
  const std::string mismatch = check_int8_convolution_extremes(
      shape, 190, pool,
      [](const optimized::MicroKernels& table, const reference::Conv2DShape& s,
         const reference::Int8Requantization& q, const int8_t* weights) {
        return optimized::make_int8_winograd_conv2d(table, s, q, weights);
      });
  if (!mismatch.empty()) fail_msg("%s", mismatch.c_str());
}

// Where it does not apply the factory declines (the dispatcher then runs another algorithm):
// other windows, groups, per-run weights, negative padding, and weights whose sums could leave
// the int32 range the exactness argument needs.
void test_winograd_declines(void**) {
  const optimized::MicroKernels& table = optimized::portable_micro_kernels();
  reference::Int8Requantization q;
  q.weight_zero_points.assign(8, 0);
  q.multipliers.assign(8, 0.01f);
  const std::vector<int8_t> weights(8 * 8 * 25, 1);
  reference::Conv2DShape shape = winograd_shape(8, 8, 10, 10, 1, 1, 1, 1);
  assert_non_null(optimized::make_int8_winograd_conv2d(table, shape, q, weights.data()).get());
  assert_null(optimized::make_int8_winograd_conv2d(table, shape, q, nullptr).get());
  reference::Conv2DShape other = shape;
  other.groups = 2;
  assert_null(optimized::make_int8_winograd_conv2d(table, other, q, weights.data()).get());
  other = shape;
  other.window.stride_height = 2;
  assert_null(optimized::make_int8_winograd_conv2d(table, other, q, weights.data()).get());
  other = shape;
  other.window.dilation_width = 2;
  assert_null(optimized::make_int8_winograd_conv2d(table, other, q, weights.data()).get());
  other = shape;
  other.window.kernel_height = other.window.kernel_width = 5;
  assert_null(optimized::make_int8_winograd_conv2d(table, other, q, weights.data()).get());
  other = shape;
  other.window.pad_left = -1;
  assert_null(optimized::make_int8_winograd_conv2d(table, other, q, weights.data()).get());

  // 2000 input channels of |w - zw| = 255 with |x - zx| up to 255: 4 x 255 x 2000 x 9 x 255
  // exceeds 2^31; the same depth with |w| = 1 fits.
  const reference::Conv2DShape deep = winograd_shape(2000, 1, 4, 4, 1, 1, 1, 1);
  reference::Int8Requantization wide;
  wide.weight_zero_points.assign(1, 127);
  wide.multipliers.assign(1, 1e-6f);
  const std::vector<int8_t> extreme(2000 * 9, -128);
  assert_null(optimized::make_int8_winograd_conv2d(table, deep, wide, extreme.data()).get());
  wide.weight_zero_points.assign(1, 0);
  const std::vector<int8_t> small(2000 * 9, 1);
  assert_non_null(optimized::make_int8_winograd_conv2d(table, deep, wide, small.data()).get());
}

// The avx2 dispatch takes Winograd for resnet's 3x3 stride-1 layers, not for a strided one nor
// for 32 input channels.
void test_avx2_dispatch_chooses_winograd(void**) {
#if defined(__x86_64__)
  using kernels::cpu::KernelVariant;
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    std::printf("avx2 dispatch: SKIPPED (no AVX2)\n");
    return;
  }
  reference::Conv2DShape shape = winograd_shape(64, 64, 56, 56, 1, 1, 1, 1);
  reference::Int8Requantization q;
  q.weight_zero_points.assign(64, 0);
  q.multipliers.assign(64, 0.001f);
  const std::vector<int8_t> weights(64 * 64 * 9, 3);
  auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), KernelVariant::kAvx2);
  if (std::string(kernel->algorithm()).find("winograd") == std::string::npos) {
    fail_msg("avx2 3x3 64->64 @56 chose %s", kernel->algorithm());
  }
  shape.window.stride_height = shape.window.stride_width = 2;
  shape.window.output_height = shape.window.output_width = 28;
  kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), KernelVariant::kAvx2);
  if (std::string(kernel->algorithm()).find("winograd") != std::string::npos) {
    fail_msg("avx2 3x3/2 chose %s", kernel->algorithm());
  }
  // Too shallow for the transforms to pay (yolov5s's 32-channel layers on 160x160).
  shape = winograd_shape(32, 32, 160, 160, 1, 1, 1, 1);
  q.weight_zero_points.assign(32, 0);
  q.multipliers.assign(32, 0.001f);
  kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), KernelVariant::kAvx2);
  if (std::string(kernel->algorithm()).find("winograd") != std::string::npos) {
    fail_msg("avx2 3x3 32->32 @160 chose %s", kernel->algorithm());
  }
#endif
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_winograd_matches_reference),
      cmocka_unit_test(test_winograd_several_bands),
      cmocka_unit_test(test_winograd_extremes),
      cmocka_unit_test(test_winograd_declines),
      cmocka_unit_test(test_avx2_dispatch_chooses_winograd),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
