// Optimized 2-D convolution (kernels/cpu/dispatch.h) against the reference kernels, for every
// optimized variant this CPU runs (float32 also on avx512, which has its own float tile), on 1,
// 2 and 3 threads, with packed (constant) and per-run weights: float32 within 1e-5 of the output
// scale, int8 bit-exact. Shapes sit on the tile and block boundaries (MR 4/6/12, NR 8/16/32,
// depth chunks of 128/256 floats / 512 int8; int8 column blocks of 192 and rows of 144, float
// blocks from the caches: 256/512/1024 columns, 126/252/504 rows) and on awkward sizes: 1,
// tile - 1, tile, tile + 1, primes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/blocking.h"
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
using kernels::cpu::KernelVariant;

struct ConvCase {
  const char* name;
  int64_t batch, channels, height, width, output_channels, kernel_height, kernel_width;
  int64_t stride_height = 1, stride_width = 1, dilation_height = 1, dilation_width = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;
};

// "trial 7: N1 C9 M18 20x33 k3x3 s2x1 d1 pads 1 1 1 0", for the randomized tests' messages.
std::string describe_random_case(int trial, const ConvCase& c) {
  char text[200];
  std::snprintf(text, sizeof(text),
                "trial %d: N%lld C%lld M%lld %lldx%lld k%lldx%lld s%lldx%lld d%lld pads %lld %lld "
                "%lld %lld",
                trial, static_cast<long long>(c.batch), static_cast<long long>(c.channels),
                static_cast<long long>(c.output_channels), static_cast<long long>(c.height),
                static_cast<long long>(c.width), static_cast<long long>(c.kernel_height),
                static_cast<long long>(c.kernel_width), static_cast<long long>(c.stride_height),
                static_cast<long long>(c.stride_width), static_cast<long long>(c.dilation_height),
                static_cast<long long>(c.pad_top), static_cast<long long>(c.pad_left),
                static_cast<long long>(c.pad_bottom), static_cast<long long>(c.pad_right));
  return text;
}

// name, N, C, H, W, M, kh, kw, sh, sw, dh, dw, pads (top, left, bottom, right), groups
const ConvCase kCases[] = {
    {"pointwise 15 pixels", 1, 7, 3, 5, 5, 1, 1},
    {"pointwise 16 pixels 6 channels", 1, 3, 4, 4, 6, 1, 1},
    {"pointwise 17 pixels 7 channels", 1, 9, 1, 17, 7, 1, 1},
    {"pointwise primes", 1, 37, 11, 13, 13, 1, 1},
    {"pointwise depth 256", 1, 256, 3, 3, 4, 1, 1},
    {"pointwise depth 257", 1, 257, 2, 5, 5, 1, 1},
    {"pointwise depth 300 19 channels", 1, 300, 5, 7, 19, 1, 1},
    {"pointwise 600 pixels (column blocks)", 1, 5, 1, 600, 6, 1, 1},
    {"pointwise packed 600 pixels 100 channels", 1, 3, 20, 30, 100, 1, 1},
    {"pointwise 1 pixel 1 channel", 1, 1, 1, 1, 1, 1, 1},
    // One-column tiles (x86/avx2_gemm_tiles.cc float_column_tile): a 7x7 plane's last panel
    // and a one-pixel plane, over several depth chunks, with a last row panel of one row.
    {"pointwise 7x7 depth 700 13 channels", 1, 700, 7, 7, 13, 1, 1},
    {"pointwise 1 pixel depth 301 8 channels", 1, 301, 1, 1, 8, 1, 1},
    {"pointwise stride 2", 1, 8, 9, 9, 16, 1, 1, 2, 2},
    {"3x3 pad 1", 1, 8, 14, 15, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3 stride 2 pad 1", 1, 5, 17, 16, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {"3x3 depth 261", 1, 29, 6, 7, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"5x5 dilation 2 asymmetric pads", 1, 3, 13, 11, 6, 5, 5, 1, 1, 2, 2, 2, 1, 0, 3},
    {"7x7 stride 2 pad 3", 1, 3, 32, 29, 8, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3},
    {"3x5 stride 1x3", 1, 4, 10, 20, 5, 3, 5, 1, 3, 1, 1, 0, 2, 1, 2},
    // Strided im2col rows (the stride-2 copy and the general one) over several column blocks,
    // with padding wider than a tap's reach.
    {"6x6 stride 2 pad 2 wide (yolov5 stem)", 1, 3, 24, 70, 16, 6, 6, 2, 2, 1, 1, 2, 2, 2, 2},
    {"3x3 stride 2 dilation 2 pad 3", 1, 4, 12, 13, 5, 3, 3, 2, 2, 2, 2, 3, 3, 3, 3},
    {"3x3 stride 3 pad 4", 1, 3, 10, 11, 6, 3, 3, 3, 3, 1, 1, 4, 4, 4, 4},
    {"1-D kernel 3", 1, 4, 1, 50, 5, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1},
    // One input row that is not a pointwise convolution: a 3x1 kernel over zero rows, and a
    // 1x1 kernel with a right pad (an output column past the input).
    {"3x1 kernel on one row pad 1", 1, 4, 1, 20, 5, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0},
    {"1x1 on one row right pad", 1, 4, 1, 20, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1},
    {"3x3 on 1x1 input", 1, 6, 1, 1, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"150 output channels (row blocks)", 1, 4, 3, 3, 150, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    // Blocks sized from this CPU's caches (row blocks of 126 or 252, column blocks of 256 or
    // 512 with 6x16 tiles): both edges crossed, with partial last panels and row groups.
    {"257 output channels 520 pixels (cache blocks)", 1, 4, 20, 26, 257, 3, 3, 1, 1, 1, 1, 1, 1, 1,
     1},
    // Pointwise with B read in place (at most 96 channels, depth 128 or more) and copied (a
    // short depth, or more channels), over several 512-column blocks and a partial panel.
    {"pointwise in place depth 130 1100 pixels", 1, 130, 25, 44, 40, 1, 1},
    {"pointwise copied depth 20 1100 pixels", 1, 20, 25, 44, 40, 1, 1},
    {"pointwise copied depth 40 1100 pixels 130 channels", 1, 40, 25, 44, 130, 1, 1},
    {"301 output channels (int8 task rows)", 1, 8, 2, 5, 301, 1, 1},
    // The avx512 float tile (12 x 32): rows and columns at 12 and 32 - 1, + 1 and twice, a
    // last panel of 17 columns (7x7 pixels: the second vector with one real lane), deep B read
    // in place with a partial panel, and row blocks of 504 (its blocks from a 1 MiB L2).
    {"pointwise 33 pixels 13 channels", 1, 5, 3, 11, 13, 1, 1},
    {"pointwise 32 pixels 24 channels", 1, 7, 4, 8, 24, 1, 1},
    {"3x3 pad 1 31 pixels 25 channels", 1, 6, 1, 31, 25, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3 pad 1 7x7 11 channels", 1, 16, 7, 7, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"pointwise in place depth 200 1100 pixels 36 channels", 1, 200, 25, 44, 36, 1, 1},
    {"520 output channels (12-row blocks)", 1, 3, 4, 5, 520, 1, 1},
    {"64 channels 28x28", 1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"batch 2", 2, 6, 8, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"groups 3", 1, 12, 9, 10, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
    {"groups 2 pointwise", 1, 8, 5, 6, 6, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2},
    {"depthwise 3x3", 1, 13, 10, 19, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 13},
    {"depthwise 3x3 stride 2", 1, 6, 15, 23, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6},
    {"depthwise 3x3 stride 2 even", 1, 4, 16, 32, 4, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 4},
    {"depthwise multiplier 2", 1, 5, 7, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},
    {"depthwise 5x5", 1, 4, 12, 17, 4, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 4},
    {"depthwise 3x3 dilation 2", 1, 3, 11, 12, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3},
    {"depthwise stride 3", 1, 3, 13, 14, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3},
    {"depthwise asymmetric pads", 1, 5, 9, 8, 5, 3, 3, 1, 1, 1, 1, 0, 2, 1, 0, 5},
    {"depthwise batch 2 wide", 2, 3, 5, 41, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
    // Column phases of 9 and 8 (the int8 widening's stride-2 vector bound), and of 8 and 8.
    {"depthwise stride 2 phases 9 and 8", 1, 3, 5, 17, 3, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 3},
    {"depthwise stride 2 width 16 pad 1", 1, 2, 6, 16, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2},
    // 39 outputs a row: the neon stride-2 rows' gathered first output, two runs of four
    // vector blocks, one single block and two gathered outputs at the end.
    {"depthwise stride 2 wide", 1, 3, 7, 77, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3},
    {"depthwise width 8 and 9", 1, 2, 4, 8, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 1, 2},
    // Tall planes: the int8 depthwise kernel works in bands of rows whose padded rows fit
    // 16 KB (here 71 and 36 output rows), with a partial last band.
    {"depthwise tall (row bands)", 1, 2, 150, 40, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {"depthwise tall stride 2 (row bands)", 1, 2, 301, 30, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2},
    // Channels in lanes: several bands of 60-wide rows (the float32 ones on planes, the int8 ones
    // in lanes), a last band that reads only bottom padding (a 1x3 kernel with 2 pad rows), and
    // 7-wide planes in one run across rows with 9 channels (a last lane group of one).
    {"depthwise lanes bands, bottom pad rows only", 1, 9, 70, 60, 9, 1, 3, 1, 1, 1, 1, 0, 1, 2, 1,
     9},
    {"depthwise lanes stride 2 bands", 1, 10, 90, 61, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 10},
    {"depthwise lanes 7x7 plane 9 channels", 1, 9, 7, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 9},
};

reference::Conv2DShape shape_of(const ConvCase& c) {
  reference::Conv2DShape shape;
  shape.batch = c.batch;
  shape.input_channels = c.channels;
  shape.output_channels = c.output_channels;
  shape.groups = c.groups;
  reference::Window2D& w = shape.window;
  w.input_height = c.height;
  w.input_width = c.width;
  w.kernel_height = c.kernel_height;
  w.kernel_width = c.kernel_width;
  w.stride_height = c.stride_height;
  w.stride_width = c.stride_width;
  w.dilation_height = c.dilation_height;
  w.dilation_width = c.dilation_width;
  w.pad_top = c.pad_top;
  w.pad_left = c.pad_left;
  w.pad_bottom = c.pad_bottom;
  w.pad_right = c.pad_right;
  w.output_height = conv_output_size(c.height, c.kernel_height, c.stride_height, c.dilation_height,
                                     c.pad_top, c.pad_bottom);
  w.output_width = conv_output_size(c.width, c.kernel_width, c.stride_width, c.dilation_width,
                                    c.pad_left, c.pad_right);
  return shape;
}

size_t input_size(const reference::Conv2DShape& s) {
  return static_cast<size_t>(s.batch * s.input_channels * s.window.input_height *
                             s.window.input_width);
}
size_t weight_size(const reference::Conv2DShape& s) {
  return static_cast<size_t>(s.output_channels * (s.input_channels / s.groups) *
                             s.window.kernel_height * s.window.kernel_width);
}
size_t output_size(const reference::Conv2DShape& s) {
  return static_cast<size_t>(s.batch * s.output_channels * s.window.output_height *
                             s.window.output_width);
}

// One randomized case's float32 operands drawn from `random`, the activation and bias choice of
// its trial number, and the reference's output with its tolerance.
struct RandomFloatCase {
  std::vector<float> input, weights, bias;
  reference::FusedActivation activation;
  bool with_bias;
  std::vector<float> expected;
  double tolerance;
};
RandomFloatCase random_float_case(Random& random, const reference::Conv2DShape& shape, int trial) {
  RandomFloatCase c;
  c.input = random.floats(input_size(shape));
  c.weights = random.floats(weight_size(shape));
  c.bias = random.floats(static_cast<size_t>(shape.output_channels));
  c.activation = activation_number(static_cast<size_t>(trial));
  c.with_bias = trial % 4 != 3;
  FloatExpectation expectation = float_expectation(shape, c.activation, c.input, c.weights,
                                                   c.with_bias ? c.bias.data() : nullptr);
  c.expected = std::move(expectation.output);
  c.tolerance = expectation.tolerance;
  return c;
}

struct Pools {
  ThreadPool one{1};
  ThreadPool two{2};
  ThreadPool three{3};
  ThreadPool* all[3] = {&one, &two, &three};
};

// Runs an int8 `kernel` on 1, 2 and 3 threads, each against `expected` byte for byte.
void check_int8_on_every_pool(const kernels::cpu::Conv2DInt8& kernel,
                              const std::vector<int8_t>& codes,
                              const std::vector<int8_t>& weight_codes, const int32_t* bias,
                              const std::vector<int8_t>& expected, const std::string& what,
                              Pools& pools) {
  for (ThreadPool* pool : pools.all) {
    pool->reserve_scratch(kernel.scratch_bytes());
    std::vector<int8_t> output(expected.size(), 0x55);
    kernel.run(codes.data(), weight_codes.data(), bias, output.data(), *pool);
    const std::string mismatch = compare_exact(output, expected);
    if (!mismatch.empty()) {
      fail_msg("%s (%s, %zu threads): %s", what.c_str(), kernel.algorithm(), pool->thread_count(),
               mismatch.c_str());
    }
  }
}

#if defined(__x86_64__)  // its callers test the direct and lane tiles, which are x86-only
// Runs `kernel` on a random case with one thread and with three, each against the reference.
void check_one_and_three_threads(const kernels::cpu::Conv2DFloat& kernel,
                                 const RandomFloatCase& data, const std::string& name, int trial,
                                 Pools& pools) {
  for (ThreadPool* pool : {&pools.one, &pools.three}) {
    pool->reserve_scratch(kernel.scratch_bytes());
    std::vector<float> output(data.expected.size(), std::numeric_limits<float>::quiet_NaN());
    kernel.run(data.input.data(), nullptr, data.with_bias ? data.bias.data() : nullptr,
               output.data(), *pool);
    const std::string mismatch = compare_floats(output, data.expected, data.tolerance);
    if (!mismatch.empty()) {
      fail_msg("%s (%s, activation %d, bias %d, %zu threads): %s", name.c_str(), kernel.algorithm(),
               trial % 4, data.with_bias, pool->thread_count(), mismatch.c_str());
    }
  }
}
#endif

void test_float_convolution(void**) {
  Pools pools;
  size_t case_index = 0;
  for (const ConvCase& c : kCases) {
    const reference::Conv2DShape shape = shape_of(c);
    Random random(static_cast<uint32_t>(1000 + case_index));
    const std::vector<float> input = random.floats(input_size(shape));
    const std::vector<float> weights = random.floats(weight_size(shape));
    const std::vector<float> bias = random.floats(static_cast<size_t>(shape.output_channels));
    for (size_t a = 0; a < 4; ++a) {
      // Every activation on the small cases, one (rotating) on the others.
      if (a > 0 && output_size(shape) * weight_size(shape) > 4000000) continue;
      const size_t activation_index =
          output_size(shape) * weight_size(shape) > 4000000 ? case_index : a;
      const reference::FusedActivation activation = activation_number(activation_index);
      const bool with_bias = (case_index + a) % 3 != 2;
      const auto [expected, tolerance] =
          float_expectation(shape, activation, input, weights, with_bias ? bias.data() : nullptr);
      for (KernelVariant variant : float_gemm_variants()) {
        for (bool constant : {true, false}) {
          auto kernel = kernels::cpu::prepare_conv2d(shape, activation,
                                                     constant ? weights.data() : nullptr, variant);
          for (ThreadPool* pool : pools.all) {
            std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
            kernel->run(input.data(), weights.data(), with_bias ? bias.data() : nullptr,
                        output.data(), *pool);
            const std::string mismatch = compare_floats(output, expected, tolerance);
            if (!mismatch.empty()) {
              fail_msg("%s (%s, activation %zu, %s weights, bias %d, %zu threads): %s", c.name,
                       kernel->algorithm(), activation_index % 4, constant ? "packed" : "per-run",
                       with_bias, pool->thread_count(), mismatch.c_str());
            }
          }
        }
      }
    }
    ++case_index;
  }
}

// Quantization parameters that keep most outputs inside [-128, 127] for this depth.
reference::Int8Requantization make_requantization(Random& random, int64_t channels, int64_t depth,
                                                  size_t activation_kind) {
  reference::Int8Requantization q;
  q.input_zero_point = random.integer(-20, 20);
  for (int64_t c = 0; c < channels; ++c) {
    q.weight_zero_points.push_back(c % 4 == 3 ? random.integer(-3, 3) : 0);
    const double spread = std::sqrt(static_cast<double>(depth)) * 74.0 * 74.0;
    q.multipliers.push_back(static_cast<float>(random.real(20.0f, 90.0f) / spread));
  }
  q.output_zero_point = random.integer(-10, 10);
  set_random_output_stage(random, q, activation_kind);
  return q;
}

void test_int8_convolution(void**) {
  Pools pools;
  size_t case_index = 0;
  for (const ConvCase& c : kCases) {
    const reference::Conv2DShape shape = shape_of(c);
    const int64_t depth = c.channels / c.groups * c.kernel_height * c.kernel_width;
    Random random(static_cast<uint32_t>(2000 + case_index));
    const std::vector<int8_t> input = random.codes(input_size(shape));
    const std::vector<int8_t> weights = random.codes(weight_size(shape));
    const std::vector<int32_t> bias =
        random.ints(static_cast<size_t>(shape.output_channels), -20000, 20000);
    const reference::Int8Requantization q =
        make_requantization(random, shape.output_channels, depth, case_index);
    const bool with_bias = case_index % 3 != 2;
    std::vector<int8_t> expected(output_size(shape));
    reference::conv2d_int8(shape, q, input.data(), weights.data(),
                           with_bias ? bias.data() : nullptr, expected.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      for (bool constant : {true, false}) {
        auto kernel = kernels::cpu::prepare_conv2d_int8(
            shape, q, constant ? weights.data() : nullptr, variant);
        for (ThreadPool* pool : pools.all) {
          std::vector<int8_t> output(expected.size(), 0x55);
          kernel->run(input.data(), weights.data(), with_bias ? bias.data() : nullptr,
                      output.data(), *pool);
          const std::string mismatch = compare_exact(output, expected);
          if (!mismatch.empty()) {
            fail_msg("%s (%s, %s weights, bias %d, %zu threads): %s", c.name, kernel->algorithm(),
                     constant ? "packed" : "per-run", with_bias, pool->thread_count(),
                     mismatch.c_str());
          }
        }
      }
    }
    ++case_index;
  }
}

// Extreme codes and zero points: every product at its largest magnitude (pmaddwd pairs of
// 255 x 255), saturating outputs, weight zero points on every channel, depthwise and GEMM.
void test_int8_convolution_extremes(void**) {
  ThreadPool pool(2);
  const ConvCase cases[] = {
      {"extreme gemm 3x3", 1, 70, 6, 7, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {"extreme depthwise 3x3", 1, 9, 7, 18, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 9},
      {"extreme depthwise 5x5 stride 2", 1, 3, 11, 21, 6, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 3},
  };
  for (const ConvCase& c : cases) {
    const reference::Conv2DShape shape = shape_of(c);
    for (int pattern = 0; pattern < 4; ++pattern) {
      Random random(static_cast<uint32_t>(77 + pattern));
      reference::Int8Requantization q;
      // Offsets up to 255 in both operands.
      q.input_zero_point = pattern % 2 ? 127 : -128;
      const int8_t x_code = pattern % 2 ? -128 : 127;
      const int8_t w_code = pattern / 2 ? -128 : 127;
      for (int64_t channel = 0; channel < shape.output_channels; ++channel) {
        q.weight_zero_points.push_back(pattern / 2 ? 127 : -128);
        q.multipliers.push_back(channel % 2 ? 1e-6f : 3e-4f);
      }
      q.output_zero_point = 3;
      std::vector<int8_t> input(input_size(shape), x_code);
      std::vector<int8_t> weights(weight_size(shape), w_code);
      // A few ordinary values so not every output is the same.
      const std::vector<int8_t> noise = random.codes(input.size());
      for (size_t i = 0; i < input.size(); i += 7) input[i] = noise[i];
      const std::vector<int32_t> bias =
          random.ints(static_cast<size_t>(shape.output_channels), -100000, 100000);
      std::vector<int8_t> expected(output_size(shape));
      reference::conv2d_int8(shape, q, input.data(), weights.data(), bias.data(), expected.data());
      for (KernelVariant variant : int8_gemm_variants()) {
        auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), variant);
        std::vector<int8_t> output(expected.size(), 0x55);
        kernel->run(input.data(), weights.data(), bias.data(), output.data(), pool);
        const std::string mismatch = compare_exact(output, expected);
        if (!mismatch.empty()) {
          fail_msg("%s pattern %d (%s): %s", c.name, pattern, kernel->algorithm(),
                   mismatch.c_str());
        }
      }
    }
  }
}

// Zero points with no int8 code (graphs may carry them): padding cannot be an input code, so
// the packing converts element by element; still bit-exact.
void test_int8_zero_points_outside_int8(void**) {
  ThreadPool pool(2);
  const ConvCase cases[] = {
      {"3x3 pad 1", 1, 5, 9, 10, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {"pointwise", 1, 6, 4, 5, 7, 1, 1},
      {"depthwise", 1, 4, 6, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},
  };
  for (const ConvCase& c : cases) {
    const reference::Conv2DShape shape = shape_of(c);
    Random random(31);
    reference::Int8Requantization q;
    q.input_zero_point = 300;
    for (int64_t channel = 0; channel < shape.output_channels; ++channel) {
      q.weight_zero_points.push_back(channel % 2 ? -200 : 0);
      q.multipliers.push_back(2e-6f);
    }
    q.output_zero_point = 1;
    const std::vector<int8_t> input = random.codes(input_size(shape));
    const std::vector<int8_t> weights = random.codes(weight_size(shape));
    const std::vector<int32_t> bias =
        random.ints(static_cast<size_t>(shape.output_channels), -1000, 1000);
    std::vector<int8_t> expected(output_size(shape));
    reference::conv2d_int8(shape, q, input.data(), weights.data(), bias.data(), expected.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weights.data(), variant);
      std::vector<int8_t> output(expected.size(), 0x55);
      kernel->run(input.data(), weights.data(), bias.data(), output.data(), pool);
      const std::string mismatch = compare_exact(output, expected);
      if (!mismatch.empty()) {
        fail_msg("%s (%s): %s", c.name, kernel->algorithm(), mismatch.c_str());
      }
    }
  }
}

// Depthwise convolutions on randomized shapes: channel counts around the 8 lanes (1, 7, 8, 9, 15,
// 17, ...) up to 70, multipliers 1 and 2, strides 1-3, pads 0-2 on each side, planes from 1 to
// 60 wide (the lanes' blocks of 8, 4, 2 and 1 pixels, interleave rows shorter and longer than 8;
// the dot-product rows' several rows per vector) and every tenth trial up to 150 wide (several
// 16-output vectors per row, bands), 3x3 and other kernels, batch 1-2; float32 (every
// activation) within 1e-5, int8 bit-exact with random zero points, on every variant and 1-3
// threads.
void test_depthwise_random_shapes(void**) {
  Pools pools;
  Random shapes(4242);
  const int64_t channel_counts[] = {1, 2, 7, 8, 9, 15, 16, 17, 24, 33, 47, 64, 70};
  size_t dot_rows_cases = 0;  // int8 cases the avx512 table ran on its dot-product rows
  for (int trial = 0; trial < 90; ++trial) {
    ConvCase c{"random depthwise", 1, 1, 1, 1, 1, 3, 3};
    c.batch = trial % 7 == 0 ? 2 : 1;
    c.channels = channel_counts[shapes.integer(0, 12)];
    c.output_channels = c.channels * (trial % 5 == 4 ? 2 : 1);
    c.groups = c.channels;
    const int kernel_kind = trial % 6;  // mostly 3x3; 5x5, 1x3, 3x3 dilated
    if (kernel_kind == 3) c.kernel_height = c.kernel_width = 5;
    if (kernel_kind == 4) c.kernel_height = 1;
    if (kernel_kind == 5) c.dilation_height = c.dilation_width = 2;
    c.stride_height = c.stride_width = trial % 3 == 2 ? 2 : (trial % 11 == 10 ? 3 : 1);
    c.pad_top = shapes.integer(0, 2);
    c.pad_left = shapes.integer(0, 2);
    c.pad_bottom = shapes.integer(0, 2);
    c.pad_right = shapes.integer(0, 2);
    const int64_t reach_h = (c.kernel_height - 1) * c.dilation_height + 1;
    const int64_t reach_w = (c.kernel_width - 1) * c.dilation_width + 1;
    c.height = std::max<int64_t>(shapes.integer(1, 30), reach_h - c.pad_top - c.pad_bottom);
    c.width = std::max<int64_t>(shapes.integer(1, trial % 10 == 9 ? 150 : 60),
                                reach_w - c.pad_left - c.pad_right);
    const reference::Conv2DShape shape = shape_of(c);
    const std::string name = describe_random_case(trial, c);
    Random random(static_cast<uint32_t>(5000 + trial));

    // float32
    const RandomFloatCase data = random_float_case(random, shape, trial);
    const auto& [input, weights, bias, activation, with_bias, expected, tolerance] = data;
    for (KernelVariant variant : float_gemm_variants()) {
      auto kernel = kernels::cpu::prepare_conv2d(shape, activation,
                                                 trial % 2 ? weights.data() : nullptr, variant);
      for (ThreadPool* pool : pools.all) {
        std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
        kernel->run(input.data(), weights.data(), with_bias ? bias.data() : nullptr, output.data(),
                    *pool);
        const std::string mismatch = compare_floats(output, expected, tolerance);
        if (!mismatch.empty()) {
          fail_msg("%s (%s, %zu threads): %s", name.c_str(), kernel->algorithm(),
                   pool->thread_count(), mismatch.c_str());
        }
      }
    }

    // int8, zero points anywhere in the int8 range (weights' on some channels)
    reference::Int8Requantization q;
    q.input_zero_point = random.integer(-128, 127);
    const double depth = static_cast<double>(c.kernel_height * c.kernel_width);
    for (int64_t channel = 0; channel < shape.output_channels; ++channel) {
      q.weight_zero_points.push_back(channel % 3 == 1 ? random.integer(-20, 20) : 0);
      q.multipliers.push_back(
          static_cast<float>(random.real(20.0f, 90.0f) / (std::sqrt(depth) * 100.0 * 100.0)));
    }
    q.output_zero_point = random.integer(-30, 30);
    if (trial % 4 == 1) q.output_minimum = std::max(-128, q.output_zero_point);
    if (trial % 4 == 2) {
      q.output_minimum = -60;
      q.output_maximum = 100;
    }
    const std::vector<int8_t> codes = random.codes(input_size(shape));
    std::vector<int8_t> weight_codes = random.codes(weight_size(shape));
    // Half the trials keep every w - zw within int8 (the dot-product rows' condition), the
    // other half mostly not (a weight of -128 with zw = 20 falls back to the lanes).
    if (trial % 2 == 0) {
      for (int8_t& code : weight_codes) code = std::clamp<int8_t>(code, -100, 100);
    }
    const std::vector<int32_t> int_bias =
        random.ints(static_cast<size_t>(shape.output_channels), -30000, 30000);
    std::vector<int8_t> expected_codes(output_size(shape));
    reference::conv2d_int8(shape, q, codes.data(), weight_codes.data(),
                           with_bias ? int_bias.data() : nullptr, expected_codes.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weight_codes.data(), variant);
      check_int8_on_every_pool(*kernel, codes, weight_codes, with_bias ? int_bias.data() : nullptr,
                               expected_codes, name + " int8", pools);
      if (std::string(kernel->algorithm()).find("dot rows") != std::string::npos) ++dot_rows_cases;
    }
  }
  // The dot-product rows take the int8 cases whose w - zw all fit int8 and whose row of 16
  // outputs reaches at most 64 bytes (most of them), where the avx512 table has them.
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512) &&
      kernels::cpu::optimized::cpu_has_avx512_vbmi()) {
    std::printf("avx512 int8 depthwise dot rows: %zu of 90 cases\n", dot_rows_cases);
    assert_true(dot_rows_cases >= 30);
  } else {
    std::printf(
        "avx512 int8 depthwise dot rows: SKIPPED (this CPU has no AVX-512 VNNI and VBMI)\n");
  }
#endif
}

// Float depthwise layers the avx512 table reads in place. Stride 1 with output rows as long as
// the input's, on flat planes (a vector of outputs spans rows; every tap's mask from a table of
// the layer's taps): planes 1 to 112 wide, kernels 1x3 to 7x7, dilation, pads that make the
// output shorter or taller than the input and that sit on one side only, kernels taller than
// the input. 3x3 at stride 2 across with pad_left 1, in rows: widths around the 16-output
// blocks (a block's two 16-column loads end inside, at and past the row's end), odd and even,
// strides 1-3 down, top pads 0-2, right pads 0-2. Both with multipliers, batches, and enough
// 7x7 planes for several runs of channels per task; every activation in turn, on every variant
// and 1-3 threads, within the reference's tolerance. Near misses (pad_left 0, 5x5 at stride 2)
// must take another algorithm.
void test_depthwise_in_place(void**) {
  const ConvCase cases[] = {
      {"7x7, 100 channels (runs of 41)", 1, 100, 7, 7, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 100},
      {"width 1", 1, 3, 9, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
      {"width 16", 1, 5, 6, 16, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},
      {"width 17, tall", 1, 2, 40, 17, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
      {"no top or bottom pad", 1, 4, 10, 13, 4, 3, 3, 1, 1, 1, 1, 0, 1, 0, 1, 4},
      {"top and bottom pads 3 and 2", 1, 4, 5, 9, 4, 3, 3, 1, 1, 1, 1, 3, 1, 2, 1, 4},
      {"pads left 2, right 0", 1, 3, 6, 11, 3, 3, 3, 1, 1, 1, 1, 1, 2, 1, 0, 3},
      {"pads left 0, right 2", 1, 3, 6, 11, 3, 3, 3, 1, 1, 1, 1, 1, 0, 1, 2, 3},
      {"dilation 2", 1, 3, 12, 12, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3},
      {"5x5", 1, 4, 9, 10, 4, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 4},
      {"1x3", 1, 4, 6, 20, 4, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 4},
      {"3x1", 1, 4, 6, 20, 4, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, 4},
      {"7x7 kernel on a 5x5 plane", 1, 2, 5, 5, 2, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 2},
      {"5x3 kernel taller than the input", 1, 2, 2, 9, 2, 5, 3, 1, 1, 1, 1, 2, 1, 2, 1, 2},
      {"multiplier 3", 1, 4, 7, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
      {"batch 2, multiplier 2", 2, 3, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
      {"112 wide", 1, 2, 30, 112, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
      {"stride 2, 14 wide, 60 channels", 1, 60, 14, 14, 60, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 60},
      {"stride 2, width 1", 1, 3, 5, 1, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3},
      {"stride 2, width 2", 1, 3, 5, 2, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 3},
      {"stride 2, width 31, right pad 0", 1, 3, 7, 31, 3, 3, 3, 2, 2, 1, 1, 0, 1, 0, 0, 3},
      {"stride 2, width 32, right pad 0", 1, 3, 7, 32, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 3},
      {"stride 2, width 33", 1, 3, 7, 33, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3},
      {"stride 2, width 65, right pad 2", 1, 2, 6, 65, 2, 3, 3, 2, 2, 1, 1, 2, 1, 1, 2, 2},
      {"stride 2 across, 1 down", 1, 3, 6, 40, 3, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 3},
      {"stride 2 across, 3 down", 1, 3, 11, 40, 3, 3, 3, 3, 2, 1, 1, 2, 1, 0, 1, 3},
      {"stride 2, 112 wide", 1, 2, 12, 112, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2},
      {"stride 2, multiplier 2, batch 2", 2, 3, 9, 18, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3},
  };
  const ConvCase near_misses[] = {
      {"stride 2, pad_left 0", 1, 3, 8, 16, 3, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 3},
      {"5x5 at stride 2", 1, 3, 9, 16, 3, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 3},
      {"stride 1 on the left only", 1, 3, 8, 16, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 3},
  };
  for (const ConvCase& c : near_misses) {
    if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) break;
    const std::string algorithm =
        kernels::cpu::prepare_conv2d(shape_of(c), {}, nullptr, KernelVariant::kAvx512)->algorithm();
    if (algorithm.find(" flat") != std::string::npos ||
        algorithm.find("stride 2 rows") != std::string::npos) {
      fail_msg("%s took %s", c.name, algorithm.c_str());
    }
  }
  Pools pools;
  int trial = 0;
  for (const ConvCase& c : cases) {
    const reference::Conv2DShape shape = shape_of(c);
    Random random(static_cast<uint32_t>(7100 + trial));
    const RandomFloatCase data = random_float_case(random, shape, trial);
    for (KernelVariant variant : float_gemm_variants()) {
      auto kernel = kernels::cpu::prepare_conv2d(
          shape, data.activation, trial % 2 ? data.weights.data() : nullptr, variant);
      const std::string algorithm = kernel->algorithm();
      if (variant == KernelVariant::kAvx512 && algorithm.find(" flat") == std::string::npos &&
          algorithm.find("stride 2 rows") == std::string::npos) {
        fail_msg("%s took %s", c.name, algorithm.c_str());
      }
      for (ThreadPool* pool : pools.all) {
        pool->reserve_scratch(kernel->scratch_bytes());
        std::vector<float> output(data.expected.size(), std::numeric_limits<float>::quiet_NaN());
        kernel->run(data.input.data(), data.weights.data(),
                    data.with_bias ? data.bias.data() : nullptr, output.data(), *pool);
        const std::string mismatch = compare_floats(output, data.expected, data.tolerance);
        if (!mismatch.empty()) {
          fail_msg("%s (%s, activation %d, bias %d, %zu threads): %s", c.name, kernel->algorithm(),
                   trial % 4, data.with_bias, pool->thread_count(), mismatch.c_str());
        }
      }
    }
    ++trial;
  }
}

// int8 depthwise planes larger than one band (the dot-product rows' bands of 16 KB of padded
// rows; the lanes' of 48 KB), with rows of several 16-output vectors, a 5x5 kernel (two groups
// of taps per kernel row), multiplier 2 and a stride-3 layer whose 16 outputs reach 49 bytes:
// bit-exact on every variant and 1-3 threads.
void test_depthwise_int8_large_planes(void**) {
  Pools pools;
  // name, N, C, H, W, M, kh, kw, sh, sw, dh, dw, pads (top, left, bottom, right), groups
  const ConvCase cases[] = {
      {"3x3 200x190", 1, 3, 200, 190, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
      {"3x3 stride 2 181x203", 1, 2, 181, 203, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2},
      {"5x5 multiplier 2 130x70", 1, 5, 130, 70, 10, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 5},
      {"3x3 stride 3 dilation 2 90x121", 2, 4, 90, 121, 4, 3, 3, 3, 3, 2, 2, 2, 0, 1, 2, 4},
  };
  size_t case_index = 0;
  for (const ConvCase& c : cases) {
    const reference::Conv2DShape shape = shape_of(c);
    Random random(static_cast<uint32_t>(7000 + case_index++));
    reference::Int8Requantization q;
    q.input_zero_point = random.integer(-128, 127);
    for (int64_t channel = 0; channel < shape.output_channels; ++channel) {
      q.weight_zero_points.push_back(channel % 2 ? random.integer(-20, 20) : 0);
      q.multipliers.push_back(static_cast<float>(random.real(0.001f, 0.004f)));
    }
    q.output_zero_point = random.integer(-30, 30);
    const std::vector<int8_t> codes = random.codes(input_size(shape));
    const std::vector<int8_t> weight_codes = random.codes(weight_size(shape), -100, 100);
    const std::vector<int32_t> bias =
        random.ints(static_cast<size_t>(shape.output_channels), -30000, 30000);
    std::vector<int8_t> expected(output_size(shape));
    reference::conv2d_int8(shape, q, codes.data(), weight_codes.data(), bias.data(),
                           expected.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      auto kernel = kernels::cpu::prepare_conv2d_int8(shape, q, weight_codes.data(), variant);
      check_int8_on_every_pool(*kernel, codes, weight_codes, bias.data(), expected, c.name, pools);
    }
  }
}

// The int8 depthwise on int16 tap pairs (the avx2 table's depthwise_pairs), forced on every
// stride although the dispatcher takes it only where it measured faster: randomized shapes with
// strides 1-3 (stride 2: one slot per two columns; 1 and 3: a slot per column), 3x3, 5x5, 1x3,
// 3x1 and dilated kernels (odd widths: a pair's second tap weighs 0), pads 0-2 on each side,
// channel counts around the 8 lanes, multipliers 1 and 2, planes from 1 to 60 wide (rows of
// fewer and more than 8 slots, 8-pixel blocks across rows, fewer than 8 pixels) and every
// seventh trial up to 130 x 130 (several bands), zero points of both signs, every fifth trial
// at the extreme codes (|x - zx| = |w - zw| = 255), biases on either side of the float
// requantization's limit, output ranges clamped or not: bit-exact against the reference on 1-3
// threads.
void test_depthwise_int8_pairs(void**) {
#if defined(__x86_64__)
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    std::printf("avx2 int8 depthwise pairs: SKIPPED (no AVX2)\n");
    return;
  }
  const kernels::cpu::optimized::MicroKernels& table =
      kernels::cpu::optimized::avx2_micro_kernels();
  Pools pools;
  Random shapes(9191);
  const int64_t channel_counts[] = {2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 40};
  for (int trial = 0; trial < 120; ++trial) {
    ConvCase c{"random pairs", 1, 1, 1, 1, 1, 3, 3};
    c.batch = trial % 9 == 0 ? 2 : 1;
    c.channels = channel_counts[shapes.integer(0, 10)];
    c.output_channels = c.channels * (trial % 6 == 5 ? 2 : 1);
    c.groups = c.channels;
    const int kernel_kind = trial % 8;  // half 3x3
    if (kernel_kind == 4 || kernel_kind == 6) c.kernel_height = c.kernel_width = 5;
    if (kernel_kind == 5) c.kernel_height = 1;
    if (kernel_kind == 7) c.kernel_width = trial % 16 == 7 ? 1 : 4;
    if (trial % 10 == 3) c.dilation_height = c.dilation_width = 2;
    c.stride_height = c.stride_width = 1 + trial % 3;
    if (trial % 13 == 12) c.stride_height = 1;  // stride 1x2 and 2x1 windows
    c.pad_top = shapes.integer(0, 2);
    c.pad_left = shapes.integer(0, 2);
    c.pad_bottom = shapes.integer(0, 2);
    c.pad_right = shapes.integer(0, 2);
    const int64_t reach_h = (c.kernel_height - 1) * c.dilation_height + 1;
    const int64_t reach_w = (c.kernel_width - 1) * c.dilation_width + 1;
    const bool large = trial % 7 == 6;
    c.height =
        std::max<int64_t>(shapes.integer(1, large ? 130 : 30), reach_h - c.pad_top - c.pad_bottom);
    c.width =
        std::max<int64_t>(shapes.integer(1, large ? 130 : 60), reach_w - c.pad_left - c.pad_right);
    const reference::Conv2DShape shape = shape_of(c);
    const std::string name = describe_random_case(trial, c);
    Random random(static_cast<uint32_t>(6100 + trial));

    reference::Int8Requantization q;
    const bool extreme = trial % 5 == 4;
    q.input_zero_point = extreme ? (trial % 2 ? 127 : -128) : random.integer(-128, 127);
    const double depth = static_cast<double>(c.kernel_height * c.kernel_width);
    for (int64_t channel = 0; channel < shape.output_channels; ++channel) {
      q.weight_zero_points.push_back(extreme ? (trial % 4 < 2 ? 127 : -128)
                                             : (channel % 3 == 1 ? random.integer(-128, 127) : 0));
      q.multipliers.push_back(static_cast<float>(
          random.real(20.0f, 90.0f) / (std::sqrt(depth) * 100.0 * 100.0) * (extreme ? 0.02 : 1.0)));
    }
    q.output_zero_point = random.integer(-40, 40);
    if (trial % 4 == 1) q.output_minimum = std::max(-128, q.output_zero_point);
    if (trial % 4 == 2) {
      q.output_minimum = -60;
      q.output_maximum = 100;
    }
    std::vector<int8_t> codes = random.codes(input_size(shape));
    std::vector<int8_t> weight_codes = random.codes(weight_size(shape));
    if (extreme) {
      // Mostly the codes farthest from the zero points, a few ordinary values.
      const int8_t x_code = q.input_zero_point > 0 ? -128 : 127;
      for (size_t i = 0; i < codes.size(); ++i) codes[i] = i % 7 ? x_code : codes[i];
      const int8_t w_code = q.weight_zero_points[0] > 0 ? -128 : 127;
      for (size_t i = 0; i < weight_codes.size(); ++i) {
        weight_codes[i] = i % 5 ? w_code : weight_codes[i];
      }
    }
    // Biases up to 3 x 10^6 (sums past 2^21 after the multiplier on some channels), and every
    // tenth trial biases up to 10^8 with multipliers of 0.3: saturated outputs whose products
    // leave the float requantization's range (only the double path gets their signs right).
    const bool huge = trial % 10 == 7;
    if (huge) std::fill(q.multipliers.begin(), q.multipliers.end(), 0.3f);
    const int32_t bias_range = huge ? 100000000 : (trial % 3 == 0 ? 3000000 : 30000);
    const std::vector<int32_t> bias =
        random.ints(static_cast<size_t>(shape.output_channels), -bias_range, bias_range);
    const bool with_bias = trial % 8 != 3;
    std::vector<int8_t> expected(output_size(shape));
    reference::conv2d_int8(shape, q, codes.data(), weight_codes.data(),
                           with_bias ? bias.data() : nullptr, expected.data());
    auto kernel = kernels::cpu::optimized::make_pair_depthwise_conv2d_int8(table, shape, q,
                                                                           weight_codes.data());
    if (!kernel) fail_msg("%s: no pair kernel", name.c_str());
    check_int8_on_every_pool(*kernel, codes, weight_codes, with_bias ? bias.data() : nullptr,
                             expected, name, pools);
  }
  // The dispatcher takes the pairs for MobileNetV2's stride-2 layers on avx2.
  const ConvCase mobilenet{"features.2.dw", 1, 96, 112, 112, 96, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 96};
  reference::Int8Requantization q;
  q.weight_zero_points.assign(96, 0);
  q.multipliers.assign(96, 0.001f);
  const std::vector<int8_t> weights(96 * 9, 3);
  auto kernel = kernels::cpu::prepare_conv2d_int8(shape_of(mobilenet), q, weights.data(),
                                                  KernelVariant::kAvx2);
  if (std::string(kernel->algorithm()).find("pairs") == std::string::npos) {
    fail_msg("avx2 %s chose %s", mobilenet.name, kernel->algorithm());
  }
#else
  std::printf("avx2 int8 depthwise pairs: SKIPPED (not x86-64)\n");
#endif
}

// The dispatcher picks the algorithms the shapes call for.
#if defined(__x86_64__)
// The direct convolution (optimized/direct_convolution.cc, the avx512 and avx2 variants'
// implicit GEMM without im2col), built directly with each tile this CPU runs so that every shape
// it accepts runs, including those the dispatcher gives the GEMM (strides above 1, large
// pointwise planes): 200 random shapes per tile with kernels 1x1 to 7x7, strides 1-3, dilation
// 1-2, pads chosen so that the output is ceil(width / stride) wide (the shapes it accepts),
// widths 1-70 (pixel blocks of 32 that cross output rows, partial last blocks: the avx2 tile's
// 8- and 16-column vectors and halves), input channels 1-40 (one or several depth chunks of
// 256 / taps channels) and 1-40 output channels (the 12-row tile's edges and the avx2 tile's
// 6-row blocks), batch 1-2, every activation, with and without bias, on 1 and 3 threads; within
// 1e-5 of the reference. Also: it refuses the shapes it cannot read at a constant offset, and
// the dispatcher picks it.
void check_direct_random_shapes(const char* variant,
                                kernels::cpu::optimized::DirectFloatTileFunction tile) {
  namespace optimized = kernels::cpu::optimized;
  Pools pools;
  Random shapes(777);
  const int64_t channel_counts[] = {1,  2,  3,  5,  6,  7,  11, 12, 13, 17,
                                    18, 19, 23, 24, 25, 28, 29, 33, 40};
  int tested = 0;
  for (int trial = 0; trial < 200; ++trial) {
    ConvCase c{"random direct", 1, 1, 1, 1, 1, 3, 3};
    c.batch = trial % 9 == 8 ? 2 : 1;
    c.channels = channel_counts[shapes.integer(0, 18)];
    c.output_channels = channel_counts[shapes.integer(0, 18)];
    c.kernel_height = shapes.integer(1, 7);
    c.kernel_width = trial % 4 == 0 ? shapes.integer(1, 7) : c.kernel_height;
    c.stride_height = c.stride_width = trial % 3 == 0 ? 1 : shapes.integer(1, 3);
    if (trial % 7 == 3) c.stride_height = shapes.integer(1, 3);
    c.dilation_height = c.dilation_width = trial % 5 == 4 ? 2 : 1;
    c.width = shapes.integer(1, 70);
    c.height = shapes.integer(1, 20);
    if (trial % 6 == 5) {
      // Planes of a multiple of 256 floats: stride-1 layers read a spaced copy of them.
      c.width = 16 * shapes.integer(1, 4);
      c.height = 16;
    }
    // Pads for an output width of ceil(width / stride): a total within the stride - 1 that the
    // output size's floor drops (none left when the input already overhangs by a stride), the
    // left one random within the kernel's reach.
    auto pads = [&](int64_t size, int64_t kernel, int64_t stride, int64_t dilation, int64_t& begin,
                    int64_t& end) {
      const int64_t reach = (kernel - 1) * dilation + 1;
      const int64_t output = (size + stride - 1) / stride;
      const int64_t least = (output - 1) * stride + reach - size;
      const int64_t total =
          std::max<int64_t>(0, least + shapes.integer(0, static_cast<int32_t>(stride - 1)));
      begin = shapes.integer(0, static_cast<int32_t>(std::min(total, reach - 1)));
      end = total - begin;
    };
    pads(c.width, c.kernel_width, c.stride_width, c.dilation_width, c.pad_left, c.pad_right);
    pads(c.height, c.kernel_height, c.stride_height, c.dilation_height, c.pad_top, c.pad_bottom);
    const reference::Conv2DShape shape = shape_of(c);
    if (shape.window.output_width != (c.width + c.stride_width - 1) / c.stride_width ||
        shape.window.output_height < 1) {
      continue;  // an input that overhangs the last window by more than a stride
    }
    const std::string name = describe_random_case(trial, c);
    Random random(static_cast<uint32_t>(7000 + trial));
    const RandomFloatCase data = random_float_case(random, shape, trial);
    const auto& [input, weights, bias, activation, with_bias, expected, tolerance] = data;
    auto kernel = optimized::make_direct_conv2d(variant, tile, shape, activation, weights.data());
    if (!kernel) fail_msg("%s: the direct convolution refused it", name.c_str());
    ++tested;
    check_one_and_three_threads(*kernel, data, name, trial, pools);
  }

  std::printf("%s direct convolution: %d random shapes\n", variant, tested);
  assert_true(tested >= 150);
}

void test_direct_random_shapes(void**) {
  namespace optimized = kernels::cpu::optimized;
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    check_direct_random_shapes("avx2", optimized::avx2_direct_float_tile);
    // The avx2 dispatcher (avx2_direct_convolution_preferred): direct for stride-1 3x3 layers
    // of up to 128 channels on 28x28 to 160x160 planes (those of a multiple of 1 KB on spaced
    // copies), strided layers with outputs of 160x160 and more, and narrowing deep pointwise
    // layers on 80x80 planes; the GEMM elsewhere.
    const reference::FusedActivation none;
    auto algorithm = [&](const ConvCase& c) {
      const std::vector<float> weights(weight_size(shape_of(c)), 0.5f);
      return std::string(
          kernels::cpu::prepare_conv2d(shape_of(c), none, weights.data(), KernelVariant::kAvx2)
              ->algorithm());
    };
    const ConvCase resnet_56{"3x3 64->64 @56", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    const ConvCase yolo_40{"3x3 128->128 @40", 1, 128, 40, 40, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    const ConvCase yolo_160{"3x3 32->32 @160", 1, 32, 160, 160, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    const ConvCase deep_14{"3x3 256->256 @14", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    const ConvCase strided{"3x3/2 64->128 @56", 1, 64, 56, 56, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
    const ConvCase strided_320{
        "3x3/2 32->64 @320", 1, 32, 320, 320, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
    const ConvCase strided_80{
        "3x3/2 64->128 @160", 1, 64, 160, 160, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
    const ConvCase narrowing_80{"1x1 256->64 @80", 1, 256, 80, 80, 64, 1, 1};
    const ConvCase even_80{"1x1 128->128 @80", 1, 128, 80, 80, 128, 1, 1};
    const ConvCase narrowing_56{"1x1 256->64 @56", 1, 256, 56, 56, 64, 1, 1};
    // The stride-1 3x3 layers go to the Winograd convolution ahead of the direct one (session
    // 11, test_winograd_convolution.cc); the direct rule and its copies still hold for them.
    auto direct_algorithm = [&](const ConvCase& c) {
      const std::vector<float> weights(weight_size(shape_of(c)), 0.5f);
      assert_true(optimized::avx2_direct_convolution_preferred(shape_of(c)));
      return std::string(optimized::make_direct_conv2d("avx2", optimized::avx2_direct_float_tile,
                                                       shape_of(c), none, weights.data())
                             ->algorithm());
    };
    assert_string_equal(direct_algorithm(resnet_56).c_str(), "avx2 direct 12x32");
    assert_string_equal(direct_algorithm(yolo_40).c_str(), "avx2 direct 12x32");
    assert_string_equal(direct_algorithm(yolo_160).c_str(), "avx2 direct 12x32 spaced planes");
    assert_false(optimized::avx2_direct_convolution_preferred(shape_of(deep_14)));
    for (const ConvCase* c : {&resnet_56, &yolo_40, &yolo_160, &deep_14}) {
      assert_true(algorithm(*c).find("winograd") != std::string::npos);
    }
    assert_string_equal(algorithm(narrowing_80).c_str(), "avx2 direct 12x32");
    // (" phases in bands" where half of this CPU's L2 holds a band: choose_bands.)
    assert_true(algorithm(strided_320).rfind("avx2 direct 12x32 phases", 0) == 0);
    for (const ConvCase* c : {&strided, &strided_80, &even_80, &narrowing_56}) {
      assert_true(algorithm(*c).find("gemm") != std::string::npos);
    }
  } else {
    std::printf("SKIPPED avx2 direct convolution: this CPU does not report AVX2 and FMA\n");
  }
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    std::printf(
        "SKIPPED avx512 direct convolution: this CPU does not report AVX-512 F/BW/VL/VNNI "
        "(detected: '%s')\n",
        kernels::cpu::detected_cpu_features());
    return;
  }
  check_direct_random_shapes("avx512", optimized::avx512_direct_float_tile);

  // Refused: an output narrower than the input at stride 1 (no padding), grouped, per-run weights.
  const std::vector<float> weights(128 * 96, 0.5f);
  const reference::FusedActivation none;
  const ConvCase valid{"3x3 no pad", 1, 4, 9, 9, 8, 3, 3};
  const ConvCase grouped{"groups 2", 1, 4, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  const ConvCase same{"3x3 pad 1", 1, 4, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  auto direct = [&](const ConvCase& c, const float* packed) {
    return optimized::make_direct_conv2d("avx512", optimized::avx512_direct_float_tile, shape_of(c),
                                         none, packed) != nullptr;
  };
  assert_false(direct(valid, weights.data()));
  assert_false(direct(grouped, weights.data()));
  assert_false(direct(same, nullptr));
  assert_true(direct(same, weights.data()));
  // The dispatcher, with packed weights: direct for a stride-1 3x3, a 7x7 pointwise layer, a
  // deep 56x56 pointwise layer with at most 96 outputs, an 80x80 pointwise layer with no more
  // outputs than inputs, a strided 3x3 of 32 input channels and a 7x7/2 stem; the GEMM for other
  // pointwise planes, a strided 3x3 of fewer channels and a strided pointwise layer.
  auto algorithm = [&](const ConvCase& c) {
    return std::string(
        kernels::cpu::prepare_conv2d(shape_of(c), none, weights.data(), KernelVariant::kAvx512)
            ->algorithm());
  };
  const ConvCase pointwise_7{"1x1 @7", 1, 2, 7, 7, 3, 1, 1};
  const ConvCase pointwise_50{"1x1 @5x10", 1, 2, 5, 10, 3, 1, 1};
  const ConvCase pointwise_56{"1x1 @56 deep", 1, 128, 56, 56, 96, 1, 1};
  const ConvCase pointwise_57{"1x1 @57 deep", 1, 128, 57, 56, 96, 1, 1};
  const ConvCase strided{"3x3/2 32 channels", 1, 32, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  const ConvCase strided_narrow{"3x3/2 31 channels", 1, 31, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  const ConvCase strided_pointwise{"1x1/2", 1, 32, 9, 9, 8, 1, 1, 2, 2};
  const ConvCase pointwise_80{"1x1 64->64 @80", 1, 64, 80, 80, 64, 1, 1};
  const ConvCase pointwise_80_widening{"1x1 32->64 @80", 1, 32, 80, 80, 64, 1, 1};
  const ConvCase pointwise_79{"1x1 64->64 @80x79", 1, 64, 80, 79, 64, 1, 1};
  const ConvCase stem{"7x7/2 3 channels", 1, 3, 20, 20, 8, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3};
  const ConvCase stem_3x3{"3x3/2 3 channels", 1, 3, 20, 20, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  assert_string_equal(algorithm(same).c_str(), "avx512 direct 12x32");
  assert_string_equal(algorithm(pointwise_7).c_str(), "avx512 direct 12x32");
  assert_true(algorithm(pointwise_50).find("gemm") != std::string::npos);
  assert_string_equal(algorithm(pointwise_56).c_str(), "avx512 direct 12x32");
  assert_string_equal(algorithm(strided).c_str(), "avx512 direct 12x32 phases");
  assert_true(algorithm(pointwise_57).find("gemm") != std::string::npos);
  assert_true(algorithm(strided_narrow).find("gemm") != std::string::npos);
  assert_true(algorithm(strided_pointwise).find("gemm") != std::string::npos);
  assert_string_equal(algorithm(stem).c_str(), "avx512 direct 12x32 phases");
  assert_string_equal(algorithm(pointwise_80).c_str(), "avx512 direct 12x32");
  assert_true(algorithm(pointwise_80_widening).find("gemm") != std::string::npos);
  assert_true(algorithm(pointwise_79).find("gemm") != std::string::npos);
  assert_true(algorithm(stem_3x3).find("gemm") != std::string::npos);
  assert_true(algorithm(valid).find("gemm") != std::string::npos);
}

// Strided layers whose input is larger than L2 (and several times their weights) de-interleave
// their phase planes band by band, each task into its own scratch (direct_convolution.cc,
// choose_bands): a 3x3/2 and a 6x6/2 stem over inputs of about 5 MB with odd heights (a last
// phase row that holds zeros inside a band) on 1 and 3 threads (bands rounded up to a multiple
// of the threads), within 1e-5 of the reference, with each tile this CPU runs.
void test_direct_phase_bands(void**) {
  namespace optimized = kernels::cpu::optimized;
  struct Tile {
    const char* variant;
    KernelVariant kind;
    optimized::DirectFloatTileFunction function;
  };
  const Tile tiles[] = {{"avx2", KernelVariant::kAvx2, optimized::avx2_direct_float_tile},
                        {"avx512", KernelVariant::kAvx512, optimized::avx512_direct_float_tile}};
  const ConvCase cases[] = {
      {"3x3/2 16->13 @251x333", 1, 16, 251, 333, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {"6x6/2 3->7 @701x640", 1, 3, 701, 640, 7, 6, 6, 2, 2, 1, 1, 2, 2, 2, 2},
  };
  Pools pools;
  int tested = 0;
  for (const Tile& tile : tiles) {
    if (!kernels::cpu::kernel_variant_available(tile.kind)) continue;
    for (int i = 0; i < 2; ++i) {
      const reference::Conv2DShape shape = shape_of(cases[i]);
      Random random(static_cast<uint32_t>(8100 + i));
      const int trial = 1 + 2 * i;  // Relu with bias, LeakyRelu without
      const RandomFloatCase data = random_float_case(random, shape, trial);
      auto kernel = optimized::make_direct_conv2d(tile.variant, tile.function, shape,
                                                  data.activation, data.weights.data());
      if (!kernel) fail_msg("%s: the direct convolution refused it", cases[i].name);
      // Half of L2 holds at least four of these bands' phase rows wherever L2 is 512 KiB to
      // 2 MiB, less than the inputs.
      if (cpu_cache_sizes().level2 >= 512 * 1024 && cpu_cache_sizes().level2 <= 2048 * 1024) {
        assert_non_null(std::strstr(kernel->algorithm(), "phases in bands"));
      }
      check_one_and_three_threads(*kernel, data, cases[i].name, trial, pools);
      ++tested;
    }
  }
  std::printf("direct convolution in phase bands: %d layers (%s)\n", tested,
              tested == 0 ? "no x86 tile on this CPU" : "checked");
}

// The avx2 dispatcher's choice of the lane convolution (avx2_lane_convolution_preferred).
void check_avx2_lane_dispatch() {
  const std::vector<float> weights(512 * 512 * 9, 0.5f);
  const reference::FusedActivation none;
  auto algorithm = [&](const ConvCase& c) {
    return std::string(
        kernels::cpu::prepare_conv2d(shape_of(c), none, weights.data(), KernelVariant::kAvx2)
            ->algorithm());
  };
  // Lanes for 7x7 outputs with 256 or more output channels and a depth over 256 (3x3, pointwise,
  // the strided 14 -> 7 layers); not for 14x14 outputs (also strided ones), fewer output
  // channels or a depth of 256.
  const ConvCase resnet_3x3_7{"3x3 512->512 @7", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const ConvCase resnet_1x1_7{"1x1 2048->512 @7", 1, 2048, 7, 7, 512, 1, 1};
  const ConvCase resnet_1x1_2{"1x1/2 1024->2048 @14", 1, 1024, 14, 14, 2048, 1, 1, 2, 2};
  const ConvCase resnet_3x3_2{
      "3x3/2 256->512 @14", 1, 256, 14, 14, 512, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  // (The stride-1 3x3 one goes to the Winograd convolution ahead of the lanes, session 11.)
  assert_true(kernels::cpu::optimized::avx2_lane_convolution_preferred(shape_of(resnet_3x3_7)));
  assert_string_equal(algorithm(resnet_3x3_7).c_str(), "avx2 winograd F(2x2,3x3) gemm 6x16");
  assert_string_equal(algorithm(resnet_1x1_7).c_str(), "avx2 lanes 32x14");
  // (The lanes keep the strided 1x1 in place: no subsampled copy, dispatch.cc.)
  assert_string_equal(algorithm(resnet_1x1_2).c_str(), "avx2 lanes 32x14");
  assert_string_equal(algorithm(resnet_3x3_2).c_str(), "avx2 lanes 32x14");
  const ConvCase resnet_3x3_14{
      "3x3 256->256 @14", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const ConvCase resnet_1x1_14{"1x1 1024->256 @14", 1, 1024, 14, 14, 256, 1, 1};
  const ConvCase strided_14{
      "3x3/2 128->256 @28", 1, 128, 28, 28, 256, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  const ConvCase narrow{"1x1 960->160 @7", 1, 960, 7, 7, 160, 1, 1};
  const ConvCase shallow{"1x1/2 256->512 @14", 1, 256, 14, 14, 512, 1, 1, 2, 2};
  for (const ConvCase* c : {&resnet_3x3_14, &resnet_1x1_14, &strided_14, &narrow}) {
    assert_true(algorithm(*c).find("lanes") == std::string::npos);
  }
  // Its subsampled 7x7 layer, 256 -> 512, is not one for the lanes either.
  assert_string_equal(algorithm(shallow).c_str(), "subsampled avx2 gemm 6x16 pointwise");
}

// The convolution with output channels in lanes (optimized/lane_convolution.cc; the avx512
// variant's tile of 32 output channels x 14 output pixels, the avx2 one as pixel groups of 4
// vectors of 8 channels x up to 3 pixels over depth chunks), built directly so that every shape
// it accepts runs: 200 random shapes with kernels 1x1 to 5x5, strides 1-3, dilation 1-2, any
// pads up to the kernel's reach (outputs of any width, not only "same"), planes up to 20x20
// (panels of 14 pixels that cross output rows, partial last panels of 1-13), input channels 1-40
// (depths past the avx2 tile's 128-step chunks), output channels around the tiles' 8- and
// 16-lane vectors (1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 48, 63, 64, 65), batch 1-2,
// every activation, with and without bias, on 1 and 3 threads; within 1e-5 of the reference.
void check_lane_random_shapes(const kernels::cpu::optimized::MicroKernels& table,
                              kernels::cpu::optimized::LaneFloatTileFunction tile,
                              kernels::cpu::optimized::LanePanelPackingFunction pack) {
  namespace optimized = kernels::cpu::optimized;
  Pools pools;
  Random shapes(4242);
  const int64_t channel_counts[] = {1, 2, 3, 7, 13, 14, 15, 28, 29, 40};
  const int64_t output_counts[] = {1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 48, 63, 64, 65};
  int tested = 0;
  for (int trial = 0; trial < 200; ++trial) {
    ConvCase c{"random lanes", 1, 1, 1, 1, 1, 3, 3};
    c.batch = trial % 9 == 8 ? 2 : 1;
    c.channels = channel_counts[shapes.integer(0, 9)];
    c.output_channels = output_counts[shapes.integer(0, 16)];
    c.kernel_height = trial % 3 == 0 ? 1 : shapes.integer(1, 5);
    c.kernel_width = trial % 4 == 0 ? shapes.integer(1, 5) : c.kernel_height;
    c.stride_height = c.stride_width = trial % 2 == 0 ? 1 : shapes.integer(1, 3);
    if (trial % 7 == 3) c.stride_height = shapes.integer(1, 3);
    c.dilation_height = c.dilation_width = trial % 5 == 4 ? 2 : 1;
    c.width = shapes.integer(1, 20);
    c.height = shapes.integer(1, 20);
    const auto reach_h = static_cast<int32_t>((c.kernel_height - 1) * c.dilation_height);
    const auto reach_w = static_cast<int32_t>((c.kernel_width - 1) * c.dilation_width);
    c.pad_top = shapes.integer(0, reach_h);
    c.pad_bottom = shapes.integer(0, reach_h);
    c.pad_left = shapes.integer(0, reach_w);
    c.pad_right = shapes.integer(0, reach_w);
    const reference::Conv2DShape shape = shape_of(c);
    if (shape.window.output_width < 1 || shape.window.output_height < 1) continue;
    const std::string name = describe_random_case(trial, c);
    Random random(static_cast<uint32_t>(9000 + trial));
    const RandomFloatCase data = random_float_case(random, shape, trial);
    const auto& [input, weights, bias, activation, with_bias, expected, tolerance] = data;
    auto kernel = optimized::make_lane_conv2d(table, tile, pack, shape, activation, weights.data());
    if (!kernel) fail_msg("%s: the lane convolution refused it", name.c_str());
    ++tested;
    check_one_and_three_threads(*kernel, data, name, trial, pools);
  }
  std::printf("%s lane convolution: %d random shapes\n", table.name, tested);
  assert_true(tested >= 150);
}

// Also: it refuses grouped and per-run weights, and the dispatchers pick it.
void test_lane_random_shapes(void**) {
  namespace optimized = kernels::cpu::optimized;
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    check_lane_random_shapes(optimized::avx2_micro_kernels(), optimized::avx2_lane_float_tile,
                             optimized::avx2_pack_lane_panel);
    check_avx2_lane_dispatch();
  } else {
    std::printf("SKIPPED avx2 lane convolution: this CPU does not report AVX2 and FMA\n");
  }
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    std::printf(
        "SKIPPED avx512 lane convolution: this CPU does not report AVX-512 F/BW/VL/VNNI "
        "(detected: '%s')\n",
        kernels::cpu::detected_cpu_features());
    return;
  }
  check_lane_random_shapes(optimized::avx512_micro_kernels(), optimized::avx512_lane_float_tile,
                           optimized::avx512_pack_lane_panel);

  const std::vector<float> weights(512 * 512 * 9, 0.5f);
  const reference::FusedActivation none;
  const ConvCase grouped{"groups 2", 1, 4, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  const ConvCase same{"3x3 pad 1", 1, 4, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  auto lanes = [&](const ConvCase& c, const float* packed) {
    return optimized::make_lane_conv2d(
               optimized::avx512_micro_kernels(), optimized::avx512_lane_float_tile,
               optimized::avx512_pack_lane_panel, shape_of(c), none, packed) != nullptr;
  };
  assert_false(lanes(grouped, weights.data()));
  assert_false(lanes(same, nullptr));
  assert_true(lanes(same, weights.data()));
  // The dispatcher: lanes for 7x7 outputs (3x3, pointwise, strided pointwise) and strided
  // kernels over up to 14x14 outputs, with 256 or more output channels.
  auto algorithm = [&](const ConvCase& c) {
    return std::string(
        kernels::cpu::prepare_conv2d(shape_of(c), none, weights.data(), KernelVariant::kAvx512)
            ->algorithm());
  };
  const ConvCase resnet_3x3_7{"3x3 512->512 @7", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const ConvCase resnet_3x3_2{
      "3x3/2 512->512 @14", 1, 512, 14, 14, 512, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  const ConvCase resnet_1x1_7{"1x1 2048->512 @7", 1, 2048, 7, 7, 512, 1, 1};
  const ConvCase resnet_1x1_2{"1x1/2 1024->2048 @14", 1, 1024, 14, 14, 2048, 1, 1, 2, 2};
  const ConvCase strided_14{
      "3x3/2 256->256 @28", 1, 256, 28, 28, 256, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  // (The stride-1 3x3 one stays on the lanes: avx512 takes Winograd F(4x4) only, session 17.)
  assert_string_equal(algorithm(resnet_3x3_7).c_str(), "avx512 lanes 32x14");
  assert_string_equal(algorithm(resnet_3x3_2).c_str(), "avx512 lanes 32x14");
  assert_string_equal(algorithm(resnet_1x1_7).c_str(), "avx512 lanes 32x14");
  assert_string_equal(algorithm(resnet_1x1_2).c_str(), "avx512 lanes 32x14");
  assert_string_equal(algorithm(strided_14).c_str(), "avx512 lanes 32x14");
  // Not: a stride-1 3x3 over 14x14, pointwise layers over 14x14, planes over 14x14, fewer than
  // 256 output channels.
  const ConvCase resnet_3x3_14{
      "3x3 256->256 @14", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const ConvCase resnet_1x1_14{"1x1 1024->256 @14", 1, 1024, 14, 14, 256, 1, 1};
  const ConvCase strided_pointwise_14{"1x1/2 512->1024 @28", 1, 512, 28, 28, 1024, 1, 1, 2, 2};
  const ConvCase plane_20{"3x3/2 256->256 @40", 1, 256, 40, 40, 256, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  const ConvCase narrow{"1x1 960->160 @7", 1, 960, 7, 7, 160, 1, 1};
  assert_string_equal(algorithm(resnet_3x3_14).c_str(), "avx512 winograd F(4x4,3x3) gemm 12x32");
  assert_true(algorithm(resnet_1x1_14).find("lanes") == std::string::npos);
  assert_true(algorithm(strided_pointwise_14).find("lanes") == std::string::npos);
  assert_true(algorithm(plane_20).find("lanes") == std::string::npos);
  assert_true(algorithm(narrow).find("lanes") == std::string::npos);
}
#endif

void test_algorithm_choice(void**) {
  using kernels::cpu::KernelVariant;
  const KernelVariant variant = optimized_variants().back();
  const std::string name = kernels::cpu::kernel_variant_name(variant);
  const reference::FusedActivation none;
  const ConvCase depthwise{"depthwise", 1, 4, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4};
  const ConvCase pointwise{"pointwise", 1, 4, 5, 5, 8, 1, 1};
  const ConvCase general{"3x3", 1, 4, 5, 5, 8, 3, 3};
  auto algorithm = [&](const ConvCase& c) {
    return std::string(
        kernels::cpu::prepare_conv2d(shape_of(c), none, nullptr, variant)->algorithm());
  };
  // Depthwise: avx512 runs stride-1 layers whose output rows are as long as the input's on flat
  // planes and 3x3 layers at stride 2 with pad_left 1 in rows; avx2 the same, flat planes only
  // up to 27 wide and rows from 16 wide. Otherwise channels in lanes, except float32 stride-1
  // planes at least 48 outputs wide.
  const ConvCase wide_depthwise{"wide depthwise", 1, 4, 5, 60, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4};
  const ConvCase narrowing_depthwise{
      "depthwise, rows one shorter", 1, 4, 5, 60, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 4};
  const ConvCase strided_depthwise{
      "strided depthwise", 1, 4, 9, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4};
  if (variant == KernelVariant::kReference) {
    assert_string_equal(algorithm(depthwise).c_str(), "reference");
  } else if (variant == KernelVariant::kAvx512) {
    assert_string_equal(algorithm(depthwise).c_str(), "avx512 depthwise 3x3 flat");
    assert_string_equal(algorithm(wide_depthwise).c_str(), "avx512 depthwise 3x3 flat");
    assert_string_equal(algorithm(narrowing_depthwise).c_str(), "avx512 depthwise 3x3");
    assert_string_equal(algorithm(strided_depthwise).c_str(), "avx512 depthwise 3x3 stride 2 rows");
  } else if (variant == KernelVariant::kAvx2) {
    // avx2 takes flat planes only for rows narrower than 28, stride-2 rows from 16 wide.
    assert_string_equal(algorithm(depthwise).c_str(), "avx2 depthwise 3x3 flat");
    assert_string_equal(algorithm(wide_depthwise).c_str(), "avx2 depthwise 3x3");
    assert_string_equal(algorithm(strided_depthwise).c_str(), "avx2 depthwise 3x3 lanes");
    const ConvCase wide_strided{
        "wide strided depthwise", 1, 4, 9, 33, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4};
    assert_string_equal(algorithm(wide_strided).c_str(), "avx2 depthwise 3x3 stride 2 rows");
  } else {
    assert_string_equal(algorithm(depthwise).c_str(), (name + " depthwise 3x3 lanes").c_str());
    assert_string_equal(algorithm(wide_depthwise).c_str(), (name + " depthwise 3x3").c_str());
  }
  assert_true(algorithm(pointwise).find("pointwise") != std::string::npos);
  // Float B read in place only with few (<= 96) output channels, and then when deep (>= 128)
  // or when the output is small (at most 64 x 56 x 56 floats).
  if (variant != KernelVariant::kReference) {
    const ConvCase deep{"deep pointwise", 1, 130, 5, 5, 40, 1, 1};
    const ConvCase deep_wide{"deep pointwise, 97 channels", 1, 130, 5, 5, 97, 1, 1};
    const ConvCase large_output{
        "shallow pointwise, 8 x 160 x 160 outputs", 1, 4, 160, 160, 8, 1, 1};
    assert_true(algorithm(deep).find("pointwise in place") != std::string::npos);
    assert_true(algorithm(pointwise).find("pointwise in place") != std::string::npos);
    assert_true(algorithm(deep_wide).find("in place") == std::string::npos);
    assert_true(algorithm(large_output).find("in place") == std::string::npos);
  }
  assert_true(algorithm(general).find("im2col") != std::string::npos);
  assert_string_equal(
      kernels::cpu::prepare_conv2d(shape_of(general), none, nullptr, KernelVariant::kReference)
          ->algorithm(),
      "reference");
}

}  // namespace

// The float convolution's blocks follow the caches: a B panel in half of L1, a task's B in half
// of L2, an A block in a quarter; multiples of the tile, within bounds for tiny or huge caches.
void test_float_blocks_from_caches(void**) {
  namespace optimized = kernels::cpu::optimized;
  optimized::BlockLimits limits =
      optimized::float_convolution_limits({32 * 1024, 512 * 1024}, 6, 16);
  assert_int_equal(limits.depth_block, 256);
  assert_int_equal(limits.column_block, 256);
  assert_int_equal(limits.row_block, 126);
  limits = optimized::float_convolution_limits({32 * 1024, 1024 * 1024}, 6, 16);
  assert_int_equal(limits.depth_block, 256);
  assert_int_equal(limits.column_block, 512);
  assert_int_equal(limits.row_block, 252);
  limits = optimized::float_convolution_limits({64 * 1024, 512 * 1024}, 8, 8);  // Cortex-A76
  assert_int_equal(limits.depth_block, 512);
  assert_int_equal(limits.column_block, 128);
  assert_int_equal(limits.row_block, 64);
  limits = optimized::float_convolution_limits({32 * 1024, 1024 * 1024}, 12, 32);  // avx512
  assert_int_equal(limits.depth_block, 128);
  assert_int_equal(limits.column_block, 1024);
  assert_int_equal(limits.row_block, 504);
  limits = optimized::float_convolution_limits({4 * 1024, 4 * 1024}, 6, 16);  // floors
  assert_int_equal(limits.depth_block, 64);
  assert_int_equal(limits.column_block, 64);
  assert_int_equal(limits.row_block, 24);
  limits = optimized::float_convolution_limits({1 << 30, 1 << 30}, 6, 16);  // ceilings
  assert_int_equal(limits.depth_block, 512);
  assert_int_equal(limits.column_block, 4096);
  assert_int_equal(limits.row_block, 768);
}

int main() {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_float_convolution),
    cmocka_unit_test(test_int8_convolution),
    cmocka_unit_test(test_int8_convolution_extremes),
    cmocka_unit_test(test_int8_zero_points_outside_int8),
    cmocka_unit_test(test_depthwise_random_shapes),
    cmocka_unit_test(test_depthwise_in_place),
    cmocka_unit_test(test_depthwise_int8_large_planes),
    cmocka_unit_test(test_depthwise_int8_pairs),
#if defined(__x86_64__)
    cmocka_unit_test(test_direct_random_shapes),
    cmocka_unit_test(test_direct_phase_bands),
    cmocka_unit_test(test_lane_random_shapes),
#endif
    cmocka_unit_test(test_algorithm_choice),
    cmocka_unit_test(test_float_blocks_from_caches),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
