// A float convolution with a fused SiLU (kernels/cpu/dispatch.h prepare_conv2d_silu) against the
// plain convolution followed by the SiLU op's kernel (prepare_unary, Swish with alpha 1), bit for
// bit: for every float variant this CPU runs, on 1 and 3 threads, over layers each dispatcher
// sends to a different algorithm. The direct, Winograd and GEMM convolutions apply the SiLU to
// each output region as they finish it (strided direct layers whole and in phase bands, pointwise
// and im2col GEMMs, batch 2); the lane and depthwise convolutions are followed by a pass over the
// output, and say so in their algorithm. The reference variant has no such kernel.
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/convolution.h"
#include "reference/elementwise.h"

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

struct Layer {
  const char* name;
  int64_t batch, channels, height, width, output_channels, kernel, stride, pad, groups;
};

// On the avx512 dispatcher: direct (strided from 32 channels; over a 6.6 MB input in phase
// bands; a 7x7 pointwise plane), Winograd (3x3 stride 1 from 64 channels), the GEMM (a 30x30
// pointwise plane, a strided layer of 8 channels), lanes (7x7 outputs of 256 channels) and the
// depthwise convolution. The other variants send some of them elsewhere; every one is checked.
constexpr Layer kLayers[] = {
    {"3x3/2 32->24 @20", 1, 32, 20, 20, 24, 3, 2, 1, 1},
    {"3x3/2 32->13 @200x260 (phase bands)", 1, 32, 200, 260, 13, 3, 2, 1, 1},
    {"1x1 64->40 @7", 1, 64, 7, 7, 40, 1, 1, 0, 1},
    {"3x3 64->24 @24x20", 1, 64, 24, 20, 24, 3, 1, 1, 1},
    {"1x1 32->48 @30, batch 2", 2, 32, 30, 30, 48, 1, 1, 0, 1},
    {"3x3/2 8->16 @21", 1, 8, 21, 21, 16, 3, 2, 1, 1},
    {"3x3 256->256 @7", 1, 256, 7, 7, 256, 3, 1, 1, 1},
    {"depthwise 3x3 16 @20", 1, 16, 20, 20, 16, 3, 1, 1, 16},
};

reference::Conv2DShape shape_of(const Layer& layer) {
  reference::Conv2DShape shape;
  shape.batch = layer.batch;
  shape.input_channels = layer.channels;
  shape.output_channels = layer.output_channels;
  shape.groups = layer.groups;
  reference::Window2D& w = shape.window;
  w.input_height = layer.height;
  w.input_width = layer.width;
  w.kernel_height = w.kernel_width = layer.kernel;
  w.stride_height = w.stride_width = layer.stride;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = layer.pad;
  w.output_height = (layer.height + 2 * layer.pad - layer.kernel) / layer.stride + 1;
  w.output_width = (layer.width + 2 * layer.pad - layer.kernel) / layer.stride + 1;
  return shape;
}

size_t output_size(const reference::Conv2DShape& s) {
  return static_cast<size_t>(s.batch * s.output_channels * s.window.output_height *
                             s.window.output_width);
}

// The first element whose bits differ, or empty.
std::string bit_mismatch(const std::vector<float>& actual, const std::vector<float>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0) {
      char text[96];
      std::snprintf(text, sizeof(text), "element %zu: %.9g, expected %.9g", i, actual[i],
                    expected[i]);
      return text;
    }
  }
  return {};
}

// Runs `kernel` into a fresh output (NaN-filled: every element must be written).
std::vector<float> run(const kernels::cpu::Conv2DFloat& kernel, const std::vector<float>& input,
                       const std::vector<float>& bias, size_t count, ThreadPool& pool) {
  pool.reserve_scratch(kernel.scratch_bytes());
  std::vector<float> output(count, std::numeric_limits<float>::quiet_NaN());
  kernel.run(input.data(), nullptr, bias.data(), output.data(), pool);
  return output;
}

void test_fused_silu_is_conv_then_silu(void**) {
  ThreadPool one(1);
  ThreadPool three(3);
  int checked = 0;
  int passes = 0;
  for (KernelVariant variant : float_gemm_variants()) {
    for (size_t i = 0; i < std::size(kLayers); ++i) {
      const Layer& layer = kLayers[i];
      const reference::Conv2DShape shape = shape_of(layer);
      Random random(static_cast<uint32_t>(500 + i));
      // Inputs over [-4, 4): SiLU's bend and both of its tails.
      const std::vector<float> input = random.floats(
          static_cast<size_t>(layer.batch * layer.channels * layer.height * layer.width), -4.0f,
          4.0f);
      const std::vector<float> weights = random.floats(static_cast<size_t>(
          layer.output_channels * (layer.channels / layer.groups) * layer.kernel * layer.kernel));
      const std::vector<float> bias = random.floats(static_cast<size_t>(layer.output_channels));
      const size_t count = output_size(shape);

      auto fused = kernels::cpu::prepare_conv2d_silu(shape, weights.data(), variant);
      auto plain = kernels::cpu::prepare_conv2d(shape, reference::FusedActivation{}, weights.data(),
                                                variant);
      reference::UnaryParams silu;
      silu.operation = reference::UnaryOperation::kSwish;
      silu.alpha = 1.0f;
      auto activation = kernels::cpu::prepare_unary(silu, static_cast<int64_t>(count), variant);
      assert_true(fused && plain && activation);
      const std::string algorithm = fused->algorithm();
      // The fused kernel is the plain one's algorithm, followed by a pass only where that
      // algorithm has no epilogue.
      assert_int_equal(algorithm.rfind(plain->algorithm(), 0), 0);
      const bool pass = algorithm.find(", then silu") != std::string::npos;
      const bool own_epilogue = algorithm.find("direct") != std::string::npos ||
                                algorithm.find("winograd") != std::string::npos ||
                                algorithm.find("gemm") != std::string::npos;
      assert_true(pass != own_epilogue);
      passes += pass;

      for (ThreadPool* pool : {&one, &three}) {
        std::vector<float> expected = run(*plain, input, bias, count, *pool);
        activation->run(expected.data(), expected.data(), 0.0f, 0.0f, *pool);
        const std::vector<float> actual = run(*fused, input, bias, count, *pool);
        const std::string mismatch = bit_mismatch(actual, expected);
        if (!mismatch.empty()) {
          fail_msg("%s, %s (%s, %zu threads): %s", kernels::cpu::kernel_variant_name(variant),
                   layer.name, algorithm.c_str(), pool->thread_count(), mismatch.c_str());
        }
      }
      ++checked;
    }
  }
  std::printf("fused SiLU: %d layers x variants, %d of them with a pass after the kernel\n",
              checked, passes);
  assert_true(checked >= static_cast<int>(std::size(kLayers)));
  assert_true(passes < checked);
}

void test_reference_variant_has_none(void**) {
  const Layer& layer = kLayers[0];
  const std::vector<float> weights(
      static_cast<size_t>(layer.output_channels * layer.channels * layer.kernel * layer.kernel),
      0.5f);
  assert_null(
      kernels::cpu::prepare_conv2d_silu(shape_of(layer), weights.data(), KernelVariant::kReference)
          .get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_silu_is_conv_then_silu),
      cmocka_unit_test(test_reference_variant_has_none),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
