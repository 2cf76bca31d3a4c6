// The Winograd F(m x m, 3x3) float32 convolution (optimized/winograd_convolution.cc) against
// reference::conv2d, within 1e-5 of the output scale (of the sums before the activation), for
// every micro-kernel table this CPU runs with the plain C++ transforms and for the avx2 and
// avx512 tables with the AVX2 ones, at output tiles 2 and 4: random shapes on the tile boundaries
// (odd output sizes, 1x1 and 1xN planes, padding 0-2 on each side, batch 2, 1-70 channels) and deep
// layers, every fused activation, with and without bias, on 1-3 threads. F(6x6), built but not
// dispatched, within 10 times that. Also: the comparison catches a small error, what does not
// apply is refused, and the avx2 and avx512 dispatchers pick it where its rule says.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/optimized_kernels.h"
#include "optimized/winograd_transforms.h"
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

constexpr size_t kOutputTiles[] = {2, 4};

// A micro-kernel table and the transforms to run with it (null: the plain C++ ones).
struct Configuration {
  const optimized::MicroKernels* table;
  bool avx2_transforms;
  const optimized::WinogradFloatTransforms* transforms(size_t output_tile) const {
#if defined(__x86_64__)
    if (avx2_transforms) return optimized::avx2_winograd_float_transforms(output_tile);
#endif
    (void)output_tile;
    return nullptr;
  }
};

// Every table this CPU runs with the plain C++ transforms, and the avx2 and avx512 tables with the
// AVX2 ones (the pairs their dispatchers run).
std::vector<Configuration> configurations() {
  std::vector<Configuration> result;
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    result.push_back({table, false});
  }
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    result.push_back({&optimized::avx2_micro_kernels(), true});
  }
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    result.push_back({&optimized::avx512_micro_kernels(), true});
  }
#endif
  return result;
}

struct Layer {
  int64_t batch, channels, height, width, output_channels;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
};

reference::Conv2DShape shape_of(const Layer& layer) {
  reference::Conv2DShape shape;
  shape.batch = layer.batch;
  shape.input_channels = layer.channels;
  shape.output_channels = layer.output_channels;
  reference::Window2D& w = shape.window;
  w.input_height = layer.height;
  w.input_width = layer.width;
  w.kernel_height = 3;
  w.kernel_width = 3;
  w.pad_top = layer.pad_top;
  w.pad_left = layer.pad_left;
  w.pad_bottom = layer.pad_bottom;
  w.pad_right = layer.pad_right;
  w.output_height = conv_output_size(layer.height, 3, 1, 1, layer.pad_top, layer.pad_bottom);
  w.output_width = conv_output_size(layer.width, 3, 1, 1, layer.pad_left, layer.pad_right);
  return shape;
}

std::string describe(const Layer& layer) {
  char text[160];
  std::snprintf(text, sizeof(text), "N%lld C%lld M%lld %lldx%lld pads %lld %lld %lld %lld",
                static_cast<long long>(layer.batch), static_cast<long long>(layer.channels),
                static_cast<long long>(layer.output_channels), static_cast<long long>(layer.height),
                static_cast<long long>(layer.width), static_cast<long long>(layer.pad_top),
                static_cast<long long>(layer.pad_left), static_cast<long long>(layer.pad_bottom),
                static_cast<long long>(layer.pad_right));
  return text;
}

// One case's operands, the reference's output and the tolerance: 1e-5 of the larger of the
// sums' and the output's scales (a Clip leaves an output scale of 1 however large the sums).
struct Case {
  reference::Conv2DShape shape;
  std::vector<float> input, weights, bias;
  reference::FusedActivation activation;
  bool with_bias = true;
  std::vector<float> expected;
  double tolerance = 0.0;
};

Case make_case(const Layer& layer, uint32_t seed, size_t activation) {
  Case c;
  c.shape = shape_of(layer);
  Random random(seed);
  c.input =
      random.floats(static_cast<size_t>(layer.batch * layer.channels * layer.height * layer.width));
  c.weights = random.floats(static_cast<size_t>(layer.output_channels * layer.channels * 9));
  c.bias = random.floats(static_cast<size_t>(layer.output_channels));
  c.activation = activation_number(activation);
  c.with_bias = seed % 3 != 0;
  FloatExpectation expectation = float_expectation(c.shape, c.activation, c.input, c.weights,
                                                   c.with_bias ? c.bias.data() : nullptr);
  c.expected = std::move(expectation.output);
  c.tolerance = expectation.tolerance;
  return c;
}

// Runs the kernel on `pool` and returns the first mismatch with the reference ("" if none).
std::string mismatch(const kernels::cpu::Conv2DFloat& kernel, const Case& c, ThreadPool& pool) {
  pool.reserve_scratch(kernel.scratch_bytes());
  std::vector<float> output(c.expected.size(), std::numeric_limits<float>::quiet_NaN());
  kernel.run(c.input.data(), nullptr, c.with_bias ? c.bias.data() : nullptr, output.data(), pool);
  return compare_floats(output, c.expected, c.tolerance);
}

// Runs one case (its reference output computed once) as F(output_tile) on every configuration;
// `tolerance_scale` widens the tolerance (F(6x6) only).
void check(const Layer& layer, uint32_t seed, size_t output_tile, ThreadPool& pool,
           double tolerance_scale = 1.0) {
  Case c = make_case(layer, seed, seed);
  c.tolerance *= tolerance_scale;
  for (const Configuration& configuration : configurations()) {
    auto kernel = optimized::make_winograd_conv2d(*configuration.table, c.shape, c.activation,
                                                  c.weights.data(), output_tile,
                                                  configuration.transforms(output_tile));
    if (!kernel) fail_msg("%s F(%zu): refused", describe(layer).c_str(), output_tile);
    const std::string difference = mismatch(*kernel, c, pool);
    if (!difference.empty()) {
      fail_msg("%s (%s, %s transforms, activation %u, bias %d, %zu threads): %s",
               describe(layer).c_str(), kernel->algorithm(),
               configuration.avx2_transforms ? "AVX2" : "C++", seed % 4, c.with_bias,
               pool.thread_count(), difference.c_str());
    }
  }
}

void test_random_shapes(void**) {
  ThreadPool pools[3] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  for (uint32_t trial = 0; trial < 150; ++trial) {
    Random random(4000 + trial);
    Layer layer{};
    layer.batch = trial % 7 == 0 ? 2 : 1;
    layer.channels = random.integer(1, 70);
    layer.output_channels = random.integer(1, 70);
    // Planes of 1 to 23 rows and columns, a tenth of them one row or column of outputs.
    layer.height = random.integer(1, 23);
    layer.width = trial % 10 == 3 ? 1 : random.integer(1, 23);
    layer.pad_top = random.integer(0, 2);
    layer.pad_left = random.integer(0, 2);
    layer.pad_bottom = random.integer(0, 2);
    layer.pad_right = random.integer(0, 2);
    if (layer.height + layer.pad_top + layer.pad_bottom < 3) layer.pad_bottom = 3 - layer.height;
    if (layer.width + layer.pad_left + layer.pad_right < 3) layer.pad_right = 3 - layer.width;
    check(layer, 4000 + trial, kOutputTiles[trial % 2], pools[trial / 2 % 3]);
  }
  std::printf("winograd: 150 random shapes, each on %zu configurations\n", configurations().size());
}

// Deep layers of the real models' sizes (the transforms' rounding grows with the depth), on two
// threads (small planes: one band, its output channels split over the threads); and a plane of
// several bands, batch 2, on two and three threads (bands in parallel, their count rounded up
// to a multiple of the threads: some of them hold fewer tile rows).
void test_deep_layers(void**) {
  ThreadPool two(2);
  ThreadPool three(3);
  const Layer layers[] = {
      {1, 256, 14, 14, 256, 1, 1, 1, 1},
      {1, 512, 7, 7, 64, 1, 1, 1, 1},
  };
  const Layer bands{2, 64, 57, 59, 20, 1, 1, 1, 1};
  for (size_t output_tile : kOutputTiles) {
    for (uint32_t i = 0; i < 2; ++i) check(layers[i], 70 + i, output_tile, two);
    check(bands, 72, output_tile, two);
    check(bands, 73, output_tile, three);
  }
}

// F(6x6, 3x3) is built (the same code at another tile size) but not dispatched: its rounding
// reaches 1.1-3.1 times the 1e-5 tolerance on the models' layer sizes (bench_kernels
// --winograd-accuracy). Its results are checked at 10 times that tolerance, on tile boundaries.
void test_six_by_six(void**) {
  ThreadPool pool(2);
  const Layer layers[] = {
      {1, 16, 13, 13, 9, 1, 1, 1, 1},
      {2, 5, 7, 20, 3, 0, 2, 1, 0},
      {1, 64, 25, 19, 40, 1, 1, 1, 1},
  };
  for (uint32_t i = 0; i < 3; ++i) check(layers[i], 90 + i, 6, pool, 10.0);
}

// The comparison is sharp enough to catch a wrong transform: one tap of one weight off by 1%
// (a far smaller error than a wrong matrix entry makes) fails it.
void test_a_wrong_result_fails(void**) {
  ThreadPool pool(1);
  const Layer layer{1, 16, 9, 9, 8, 1, 1, 1, 1};
  Case c = make_case(layer, 5, 0);
  std::vector<float> wrong = c.weights;
  wrong[4] *= 1.01f;
  auto kernel = optimized::make_winograd_conv2d(optimized::portable_micro_kernels(), c.shape,
                                                c.activation, wrong.data(), 4);
  assert_non_null(kernel.get());
  assert_false(mismatch(*kernel, c, pool).empty());
}

void test_refused_shapes(void**) {
  const optimized::MicroKernels& table = optimized::portable_micro_kernels();
  const Layer layer{1, 4, 9, 9, 4, 1, 1, 1, 1};
  const std::vector<float> weights(4 * 4 * 25, 0.5f);
  const reference::FusedActivation none;
  auto refused = [&](const reference::Conv2DShape& shape, const float* w, size_t tile) {
    return optimized::make_winograd_conv2d(table, shape, none, w, tile) == nullptr;
  };
  const reference::Conv2DShape good = shape_of(layer);
  assert_false(refused(good, weights.data(), 4));
  assert_true(refused(good, nullptr, 4));         // per-run weights
  assert_true(refused(good, weights.data(), 3));  // no F(3x3, 3x3)
  assert_true(refused(good, weights.data(), 8));
  reference::Conv2DShape shape = good;
  shape.window.stride_height = 2;
  shape.window.output_height = 5;
  assert_true(refused(shape, weights.data(), 4));
  shape = good;
  shape.window.dilation_width = 2;
  shape.window.output_width = 5;
  assert_true(refused(shape, weights.data(), 4));
  shape = good;
  shape.groups = 2;
  assert_true(refused(shape, weights.data(), 4));
  shape = good;
  shape.window.kernel_width = 1;
  shape.window.output_width = 11;
  assert_true(refused(shape, weights.data(), 4));
  shape = good;
  shape.window.kernel_height = 5;
  shape.window.kernel_width = 5;
  shape.window.output_height = 7;
  shape.window.output_width = 7;
  assert_true(refused(shape, weights.data(), 4));
  shape = good;
  shape.window.pad_top = -1;
  shape.window.output_height = 7;
  assert_true(refused(shape, weights.data(), 4));
  shape = good;
  shape.window.output_height = 8;  // not what the window gives
  assert_true(refused(shape, weights.data(), 4));
}

// The avx2 and avx512 dispatchers take the Winograd convolution for the 3x3 stride-1 layers its
// rule prefers (avx512 only as F(4x4)), and keep their other algorithms elsewhere.
void check_dispatch(KernelVariant variant) {
  const std::vector<float> weights(256 * 256 * 9, 0.25f);
  const reference::FusedActivation none;
  auto takes_winograd = [&](const reference::Conv2DShape& shape) {
    return std::string(
               kernels::cpu::prepare_conv2d(shape, none, weights.data(), variant)->algorithm())
               .find("winograd") != std::string::npos;
  };
  auto algorithm = [&](const Layer& layer) {
    const reference::Conv2DShape shape = shape_of(layer);
    assert_int_equal(optimized::winograd_convolution_preferred(shape), takes_winograd(shape));
    return optimized::winograd_convolution_preferred(shape);
  };
  // Layers the rule prefers that only avx2 takes; avx512 keeps its other algorithms there
  // (dispatch.cc).
  auto avx2_only = [&](const Layer& layer) {
    const reference::Conv2DShape shape = shape_of(layer);
    assert_true(optimized::winograd_convolution_preferred(shape));
    assert_int_equal(takes_winograd(shape), variant == KernelVariant::kAvx2);
  };
  assert_true(algorithm({1, 64, 56, 56, 64, 1, 1, 1, 1}));
  assert_true(algorithm({1, 128, 28, 28, 128, 1, 1, 1, 1}));
  assert_false(algorithm({1, 3, 56, 56, 64, 1, 1, 1, 1}));
  avx2_only({1, 256, 7, 7, 256, 1, 1, 1, 1});  // F(2x2) (7x7 outputs): avx512's lanes
  avx2_only({1, 32, 40, 40, 32, 1, 1, 1, 1});  // under 64 input channels: avx512's direct tiles
}

void test_dispatch(void**) {
  for (KernelVariant variant : {KernelVariant::kAvx2, KernelVariant::kAvx512}) {
    if (!kernels::cpu::kernel_variant_available(variant)) {
      std::printf("SKIPPED %s winograd dispatch: this CPU does not run it\n",
                  kernels::cpu::kernel_variant_name(variant));
      continue;
    }
    check_dispatch(variant);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_shapes),  cmocka_unit_test(test_deep_layers),
      cmocka_unit_test(test_six_by_six),     cmocka_unit_test(test_a_wrong_result_fails),
      cmocka_unit_test(test_refused_shapes), cmocka_unit_test(test_dispatch),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
