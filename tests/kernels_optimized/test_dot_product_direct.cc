// The direct int8 convolution (optimized/dot_product_direct.cc: the input copied once into quad
// planes, split into stride phases, read in place by the tiles under per-tap lane masks)
// against the reference, bit for bit, on every table that has it: avx512 (AVX-512 VNNI, when
// the CPU reports it; else SKIPPED with the reason) and portable-dot4u (plain C++ tiles of the
// same layout, every build, so also under the sanitizers). Random windows: kernels 1x1 to 7x7
// (not only square), strides 1-3 (also different per axis), dilation 1-2, pads from none to
// wider than the kernel's reach, output widths 1-70 (tiles of 32 flattened pixels that cross
// output rows, one-pixel rows, rows longer than a tile), channels around the quads of 4 and
// output channels around the tiles of 8, input zero points over all of int8, batches of 1-2,
// the requantizing tile and the int32 path (a SiLU epilogue, a multiplier above 0.49), on 1 and
// 3 threads. Shapes it must refuse (groups, a stride phase wider than the output row) are
// refused.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/dot_product_kernels.h"
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

struct Problem {
  reference::Conv2DShape shape;
  reference::Int8Requantization q;
  std::vector<int8_t> input;
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
};

// The tables with a direct convolution this CPU runs.
std::vector<const optimized::DotProductKernels*> direct_tables() {
  std::vector<const optimized::DotProductKernels*> tables = {
      &optimized::portable_dot_product_kernels(4, true)};
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    tables.push_back(&optimized::avx512_vnni_kernels());
  } else {
    std::printf("SKIPPED avx512: this CPU does not report AVX-512 F/BW/VL/VNNI (detected: '%s')\n",
                kernels::cpu::detected_cpu_features());
  }
#endif
  return tables;
}

// Output channels and input channels around the tiles of 8 and the quads of 4.
int64_t pick(Random& random, std::initializer_list<int64_t> values) {
  return values.begin()[random.integer(0, static_cast<int32_t>(values.size()) - 1)];
}

// A random window with an output of 1-70 x 1-6 pixels (kernel, stride, dilation, pads).
reference::Window2D random_window(Random& random) {
  reference::Window2D w;
  w.kernel_height = random.integer(1, 7);
  w.kernel_width = random.integer(1, 4) == 1 ? w.kernel_height : random.integer(1, 7);
  w.stride_height = random.integer(1, 3);
  w.stride_width = random.integer(1, 4) == 1 ? random.integer(1, 3) : w.stride_height;
  w.dilation_height = w.dilation_width = random.integer(1, 5) == 1 ? 2 : 1;
  // "Same" pads most often (the shapes the direct convolution is for), else anything up to
  // past the kernel's reach.
  const bool same = random.integer(0, 2) > 0;
  auto pad = [&](int64_t kernel, int64_t dilation) {
    const int64_t reach = (kernel - 1) * dilation;
    return same ? reach / 2 : random.integer(0, static_cast<int32_t>(reach + 1));
  };
  w.pad_top = pad(w.kernel_height, w.dilation_height);
  w.pad_bottom = same ? (w.kernel_height - 1) * w.dilation_height - w.pad_top
                      : pad(w.kernel_height, w.dilation_height);
  w.pad_left = pad(w.kernel_width, w.dilation_width);
  w.pad_right = same ? (w.kernel_width - 1) * w.dilation_width - w.pad_left
                     : pad(w.kernel_width, w.dilation_width);
  const int64_t output_width =
      random.integer(1, 4) == 1 ? random.integer(1, 3) : random.integer(1, 70);
  const int64_t output_height = random.integer(1, 6);
  const int64_t reach_width = (w.kernel_width - 1) * w.dilation_width + 1;
  const int64_t reach_height = (w.kernel_height - 1) * w.dilation_height + 1;
  // The input that gives that output (at least one pixel), plus up to stride - 1 unused.
  w.input_width = std::max<int64_t>(
      1, (output_width - 1) * w.stride_width + reach_width - w.pad_left - w.pad_right +
             random.integer(0, static_cast<int32_t>(w.stride_width) - 1));
  w.input_height = std::max<int64_t>(
      1, (output_height - 1) * w.stride_height + reach_height - w.pad_top - w.pad_bottom +
             random.integer(0, static_cast<int32_t>(w.stride_height) - 1));
  w.output_height = conv_output_size(w.input_height, w.kernel_height, w.stride_height,
                                     w.dilation_height, w.pad_top, w.pad_bottom);
  w.output_width = conv_output_size(w.input_width, w.kernel_width, w.stride_width, w.dilation_width,
                                    w.pad_left, w.pad_right);
  return w;
}

// The weights within 127 of their zero points, multipliers that spread the outputs over the
// codes; `path` 0 the requantizing tile, 1 a SiLU epilogue, 2 one multiplier above 0.49.
Problem make_problem(Random& random, int64_t batch, int64_t channels, int64_t output_channels,
                     const reference::Window2D& window, int path) {
  Problem p;
  reference::Conv2DShape& s = p.shape;
  s.batch = batch;
  s.input_channels = channels;
  s.output_channels = output_channels;
  s.groups = 1;
  s.window = window;
  const reference::Window2D& w = s.window;
  const int64_t depth = s.input_channels * w.kernel_height * w.kernel_width;
  p.q.input_zero_point =
      random.integer(0, 9) == 0 ? (random.integer(0, 1) ? 127 : -128) : random.integer(-128, 127);
  p.q.output_zero_point = random.integer(-20, 20);
  p.weights.resize(static_cast<size_t>(s.output_channels * depth));
  for (int64_t m = 0; m < s.output_channels; ++m) {
    const int32_t zero_point = m % 3 == 0 ? 0 : random.integer(-40, 40);
    p.q.weight_zero_points.push_back(zero_point);
    const std::vector<int8_t> row =
        random.codes(static_cast<size_t>(depth), std::max(-128, zero_point - 128),
                     std::min(127, zero_point + 127));
    std::copy(row.begin(), row.end(), p.weights.begin() + m * depth);
    p.q.multipliers.push_back(1.0f / static_cast<float>(40 * depth + random.integer(0, 99)));
  }
  if (path == 1) {
    p.q.silu = true;
    p.q.output_scale = 0.05f;
  } else if (path == 2) {
    p.q.multipliers[0] = 0.75f;
  }
  if (random.integer(0, 3) == 0) p.q.output_minimum = p.q.output_zero_point;  // a fused Relu
  p.input = random.codes(
      static_cast<size_t>(s.batch * s.input_channels * w.input_height * w.input_width));
  p.bias = random.ints(static_cast<size_t>(s.output_channels), -5000, 5000);
  return p;
}

// Whether the direct convolution must take the window: every stride phase of the input its
// taps read is at most one output row wide.
bool direct_applies(const reference::Window2D& w) {
  for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
    const int64_t x = kx * w.dilation_width - w.pad_left;
    const int64_t phase = ((x % w.stride_width) + w.stride_width) % w.stride_width;
    const int64_t columns = (w.input_width - phase + w.stride_width - 1) / w.stride_width;
    if (columns > w.output_width) return false;
  }
  return true;
}

std::vector<int8_t> reference_output(const Problem& p) {
  const reference::Window2D& w = p.shape.window;
  std::vector<int8_t> expected(static_cast<size_t>(p.shape.batch * p.shape.output_channels *
                                                   w.output_height * w.output_width));
  reference::conv2d_int8(p.shape, p.q, p.input.data(), p.weights.data(), p.bias.data(),
                         expected.data());
  return expected;
}

void describe(const Problem& p, int trial, char* text, size_t size) {
  const reference::Window2D& w = p.shape.window;
  std::snprintf(
      text, size,
      "trial %d: N %lld C %lld M %lld in %lldx%lld out %lldx%lld k %lldx%lld s %lldx%lld "
      "d %lld pads %lld %lld %lld %lld zx %d silu %d m0 %g",
      trial, static_cast<long long>(p.shape.batch), static_cast<long long>(p.shape.input_channels),
      static_cast<long long>(p.shape.output_channels), static_cast<long long>(w.input_height),
      static_cast<long long>(w.input_width), static_cast<long long>(w.output_height),
      static_cast<long long>(w.output_width), static_cast<long long>(w.kernel_height),
      static_cast<long long>(w.kernel_width), static_cast<long long>(w.stride_height),
      static_cast<long long>(w.stride_width), static_cast<long long>(w.dilation_height),
      static_cast<long long>(w.pad_top), static_cast<long long>(w.pad_left),
      static_cast<long long>(w.pad_bottom), static_cast<long long>(w.pad_right),
      p.q.input_zero_point, p.q.silu ? 1 : 0, static_cast<double>(p.q.multipliers[0]));
}

// Runs `kernel` on every pool and fails on any output byte that differs from `expected`.
void expect_reference_bytes(const kernels::cpu::Conv2DInt8& kernel, const Problem& p,
                            const std::vector<int8_t>& expected, const char* what,
                            std::initializer_list<ThreadPool*> pools) {
  for (ThreadPool* pool : pools) {
    std::vector<int8_t> output(expected.size(), 0x55);
    kernel.run(p.input.data(), nullptr, p.bias.data(), output.data(), *pool);
    const std::string mismatch = compare_exact(output, expected);
    if (!mismatch.empty()) {
      fail_msg("%s (%s, %zu threads): %s", what, kernel.algorithm(), pool->thread_count(),
               mismatch.c_str());
    }
  }
}

void test_random_windows(void**) {
  Random random(606);
  ThreadPool one(1);
  ThreadPool three(3);
  const std::vector<const optimized::DotProductKernels*> tables = direct_tables();
  int ran = 0;
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const reference::Window2D window = random_window(random);
    if (window.output_height <= 0 || window.output_width <= 0) continue;
    const int64_t batch = random.integer(1, 6) == 1 ? 2 : 1;
    const int64_t channels = pick(random, {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 33, 64, 65});
    const int64_t output_channels =
        pick(random, {1, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 64, 65, 70});
    const Problem p = make_problem(random, batch, channels, output_channels, window,
                                   trial % 7 == 5 ? 1 : (trial % 7 == 6 ? 2 : 0));
    char what[320];
    describe(p, trial, what, sizeof(what));
    const std::vector<int8_t> expected = reference_output(p);
    const bool applies = direct_applies(p.shape.window);
    for (const optimized::DotProductKernels* table : tables) {
      auto kernel =
          optimized::make_direct_dot_product_conv2d_int8(*table, p.shape, p.q, p.weights.data());
      if (!kernel) {
        if (applies) fail_msg("%s: %s refused it", what, table->name);
        ++refused;
        continue;
      }
      if (!applies) fail_msg("%s: %s took a window it cannot read", what, table->name);
      ++ran;
      expect_reference_bytes(*kernel, p, expected, what, {&one, &three});
    }
  }
  std::printf("direct convolutions: %d run, %d refused (windows wider than their output)\n", ran,
              refused);
  assert_true(ran > 4 * refused);
}

// Layers like ResNet's at a quarter of their size (one and two threads, both tables): 3x3
// stride 1 and 2, 1x1 stride 1 and 2, the 7x7 stride 2 stem on three channels; and deep layers
// on small outputs, which put the channels in lanes (from the 3x3 128 -> 40 at 7x7 on: 7x7, 5x5
// and 6x6 outputs, stride 1 and 2, 3x3 and 1x1, input channels not a multiple of 4, output
// channels around the panels of 32 and 8).
void test_layer_shapes(void**) {
  Random random(7);
  ThreadPool pool(2);
  struct Layer {
    int64_t channels, output_channels, size, kernel, stride, pad;
  };
  const Layer layers[] = {{64, 64, 28, 3, 1, 1},  {32, 48, 28, 3, 2, 1}, {64, 72, 14, 1, 1, 0},
                          {40, 24, 14, 1, 2, 0},  {3, 16, 56, 7, 2, 3},  {128, 40, 7, 3, 1, 1},
                          {288, 40, 7, 3, 1, 1},  {256, 70, 5, 3, 1, 1}, {260, 31, 6, 3, 1, 1},
                          {256, 47, 14, 3, 2, 1}, {300, 65, 7, 3, 1, 1}, {1024, 40, 7, 1, 1, 0}};
  int channels_in_lanes = 0;
  for (const Layer& layer : layers) {
    reference::Window2D w;
    w.input_height = w.input_width = layer.size;
    w.kernel_height = w.kernel_width = layer.kernel;
    w.stride_height = w.stride_width = layer.stride;
    w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = layer.pad;
    w.output_height = w.output_width =
        conv_output_size(layer.size, layer.kernel, layer.stride, 1, layer.pad, layer.pad);
    const Problem p = make_problem(random, 1, layer.channels, layer.output_channels, w, 0);
    char what[320];
    describe(p, 0, what, sizeof(what));
    const std::vector<int8_t> expected = reference_output(p);
    for (const optimized::DotProductKernels* table : direct_tables()) {
      auto kernel =
          optimized::make_direct_dot_product_conv2d_int8(*table, p.shape, p.q, p.weights.data());
      if (!kernel) fail_msg("%s: %s refused it", what, table->name);
      if (std::string(kernel->algorithm()).find("channels in lanes") != std::string::npos) {
        ++channels_in_lanes;
      }
      expect_reference_bytes(*kernel, p, expected, what, {&pool});
    }
  }
  // The last seven layers, on every table.
  assert_int_equal(channels_in_lanes, 7 * static_cast<int>(direct_tables().size()));
}

// Stride-2 windows with even kernels and pads on fewer than 8 channels run in their
// space-to-depth form (YOLOv5's 6x6/2 stem): random stems of 1-7 channels, kernels 2-8 (not
// square too), pads 0 to the kernel, even inputs whose outputs are 1-40 wide, with the SiLU
// epilogue or the requantizing tile, batches of 1 and 2, on one and three threads.
void test_space_to_depth_stems(void**) {
  Random random(67);
  ThreadPool one(1);
  ThreadPool three(3);
  int ran = 0;
  for (int trial = 0; trial < 120; ++trial) {
    reference::Window2D w;
    w.kernel_height = 2 * random.integer(1, 4);
    w.kernel_width = random.integer(0, 3) == 0 ? 2 * random.integer(1, 4) : w.kernel_height;
    w.stride_height = w.stride_width = 2;
    w.pad_top = 2 * random.integer(0, static_cast<int32_t>(w.kernel_height / 2 - 1));
    w.pad_left = 2 * random.integer(0, static_cast<int32_t>(w.kernel_width / 2 - 1));
    // "Same" on the far side most often (the output is half the input), else less.
    const bool same = random.integer(0, 3) > 0;
    w.pad_bottom = same ? w.kernel_height - 2 - w.pad_top : random.integer(0, 1);
    w.pad_right = same ? w.kernel_width - 2 - w.pad_left : random.integer(0, 1);
    w.pad_bottom = std::max<int64_t>(w.pad_bottom, 0);
    w.pad_right = std::max<int64_t>(w.pad_right, 0);
    w.input_height = 2 * random.integer(static_cast<int32_t>(w.kernel_height / 2), 12);
    w.input_width = 2 * random.integer(static_cast<int32_t>(w.kernel_width / 2), 40);
    w.output_height =
        conv_output_size(w.input_height, w.kernel_height, 2, 1, w.pad_top, w.pad_bottom);
    w.output_width = conv_output_size(w.input_width, w.kernel_width, 2, 1, w.pad_left, w.pad_right);
    if (w.output_height <= 0 || w.output_width <= 0) continue;
    const int64_t channels = random.integer(1, 7);
    const int64_t output_channels = pick(random, {1, 7, 8, 9, 16, 17, 32, 33});
    const Problem p = make_problem(random, random.integer(1, 4) == 1 ? 2 : 1, channels,
                                   output_channels, w, trial % 2);
    char what[320];
    describe(p, trial, what, sizeof(what));
    const std::vector<int8_t> expected = reference_output(p);
    for (const optimized::DotProductKernels* table : direct_tables()) {
      auto kernel =
          optimized::make_direct_dot_product_conv2d_int8(*table, p.shape, p.q, p.weights.data());
      // Windows wider than their output (valid padding) are the GEMM's in both forms.
      if (!direct_applies(w)) {
        if (kernel) fail_msg("%s: %s took a window it cannot read", what, table->name);
        continue;
      }
      if (!kernel) fail_msg("%s: %s refused it", what, table->name);
      if (std::strstr(kernel->algorithm(), "space-to-depth") == nullptr) {
        fail_msg("%s: %s is not the space-to-depth form", what, kernel->algorithm());
      }
      ++ran;
      expect_reference_bytes(*kernel, p, expected, what, {&one, &three});
    }
  }
  std::printf("space-to-depth stems: %d run\n", ran);
  assert_true(ran >= 100);
}

// Where make_dot_product_conv2d_int8 takes the direct convolution (the measured rule of
// direct_convolution_wins) on the four models' shapes.
void test_choice(void**) {
  auto shape = [](int64_t channels, int64_t output_channels, int64_t size, int64_t kernel,
                  int64_t stride) {
    reference::Conv2DShape s;
    s.input_channels = channels;
    s.output_channels = output_channels;
    reference::Window2D& w = s.window;
    w.input_height = w.input_width = size;
    w.kernel_height = w.kernel_width = kernel;
    w.stride_height = w.stride_width = stride;
    w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = kernel / 2;
    w.output_height = w.output_width =
        conv_output_size(size, kernel, stride, 1, kernel / 2, kernel / 2);
    return s;
  };
  reference::Int8Requantization q;
  q.multipliers.assign(2048, 0.001f);
  reference::Int8Requantization silu = q;
  silu.silu = true;
  const struct {
    reference::Conv2DShape shape;
    const reference::Int8Requantization* q;
    bool direct;
  } cases[] = {
      {shape(64, 64, 56, 3, 1), &q, true},    {shape(128, 128, 56, 3, 2), &q, true},
      {shape(512, 512, 7, 3, 1), &q, true},   {shape(32, 64, 320, 3, 2), &silu, true},
      {shape(3, 64, 224, 7, 2), &q, false},   {shape(3, 32, 224, 3, 2), &q, false},
      {shape(64, 256, 56, 1, 1), &q, false},  {shape(1024, 256, 14, 1, 1), &q, false},
      {shape(512, 2048, 7, 1, 1), &q, true},  {shape(1024, 2048, 14, 1, 2), &q, true},
      {shape(256, 512, 56, 1, 2), &q, false}, {shape(576, 160, 7, 1, 1), &q, false},
      {shape(320, 1280, 7, 1, 1), &q, true},  {shape(512, 255, 7, 1, 1), &silu, false},
  };
  for (const auto& c : cases) {
    assert_int_equal(optimized::direct_convolution_wins(c.shape, *c.q), c.direct);
  }
  // YOLOv5s's stem (6x6/2, pads 2) in its space-to-depth form; with pads 3 it is the GEMM's.
  reference::Conv2DShape stem = shape(3, 32, 640, 6, 2);
  assert_false(optimized::direct_convolution_wins(stem, silu));
  reference::Window2D& w = stem.window;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 2;
  w.output_height = w.output_width = 320;
  assert_true(optimized::direct_convolution_wins(stem, silu));
}

// Grouped convolutions are the im2col GEMM's.
void test_refusals(void**) {
  Random random(9);
  reference::Window2D w;
  w.input_height = w.input_width = w.output_height = w.output_width = 6;
  w.kernel_height = w.kernel_width = 3;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 1;
  Problem p = make_problem(random, 1, 8, 8, w, 0);
  p.shape.groups = 2;
  for (const optimized::DotProductKernels* table : direct_tables()) {
    assert_null(
        optimized::make_direct_dot_product_conv2d_int8(*table, p.shape, p.q, p.weights.data())
            .get());
  }
  // Tables without a direct tile.
  assert_null(optimized::make_direct_dot_product_conv2d_int8(
                  optimized::portable_dot_product_kernels(4, false), p.shape, p.q, p.weights.data())
                  .get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_windows),
      cmocka_unit_test(test_layer_shapes),
      cmocka_unit_test(test_space_to_depth_stems),
      cmocka_unit_test(test_choice),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
