// Shared helpers of the optimized-kernel tests: deterministic data, the variants to check, and
// comparisons that name the case and the first mismatch before failing the cmocka test.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "optimized/micro_kernels.h"

namespace orknn::testing {

// The number of elements of a tensor of `shape`.
inline size_t shape_elements(const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t extent : shape) count *= static_cast<size_t>(extent);
  return count;
}

// The optimized variants this build and CPU can run (the reference is the oracle).
inline std::vector<kernels::cpu::KernelVariant> optimized_variants() {
  using kernels::cpu::KernelVariant;
  std::vector<KernelVariant> variants{KernelVariant::kPortable};
  for (KernelVariant simd : {KernelVariant::kAvx2, KernelVariant::kAvx512, KernelVariant::kNeon}) {
    if (kernels::cpu::kernel_variant_available(simd)) variants.push_back(simd);
  }
  return variants;
}

// Whether the CPU runs the avx2 variant (AVX2 and FMA); if not, prints that `what` is SKIPPED
// and what the CPU reported, for the tests that call the avx2 table's kernels directly.
inline bool avx2_available_or_skip(const char* what) {
  if (kernels::cpu::kernel_variant_available(kernels::cpu::KernelVariant::kAvx2)) return true;
  std::printf("SKIPPED %s: this CPU does not report AVX2 and FMA (detected: '%s')\n", what,
              kernels::cpu::detected_cpu_features());
  return false;
}

// The micro-kernel tables of those variants, portable first.
inline std::vector<const kernels::cpu::optimized::MicroKernels*> optimized_micro_kernels() {
  namespace optimized = kernels::cpu::optimized;
  std::vector<const optimized::MicroKernels*> tables{&optimized::portable_micro_kernels()};
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(kernels::cpu::KernelVariant::kAvx2)) {
    tables.push_back(&optimized::avx2_micro_kernels());
  }
  // avx2's table with its own SiLU epilogue and exp rows.
  if (kernels::cpu::kernel_variant_available(kernels::cpu::KernelVariant::kAvx512)) {
    tables.push_back(&optimized::avx512_micro_kernels());
  }
#endif
#if defined(__aarch64__)
  if (kernels::cpu::kernel_variant_available(kernels::cpu::KernelVariant::kNeon)) {
    tables.push_back(&optimized::neon_micro_kernels());
  }
#endif
  return tables;
}

// optimized_variants() plus the dot-product variants (neon-dotprod, neon-i8mm, avx512), for the
// int8 convolution / Gemm / MatMul tests: those variants differ from neon or avx2 only there
// (under qemu, running them through the float and element-wise tests too would double those
// tests' time for no new code).
inline std::vector<kernels::cpu::KernelVariant> int8_gemm_variants() {
  using kernels::cpu::KernelVariant;
  std::vector<KernelVariant> variants = optimized_variants();
  for (KernelVariant dot :
       {KernelVariant::kNeonDotprod, KernelVariant::kNeonI8mm, KernelVariant::kAvx512}) {
    if (kernels::cpu::kernel_variant_available(dot)) variants.push_back(dot);
  }
  return variants;
}

// optimized_variants() plus avx512 where the CPU runs it, for the float convolution, Gemm and
// Softmax tests: the avx512 table has its own float tile (12 x 32, x86/avx512_float_tiles.cc)
// and exp row.
inline std::vector<kernels::cpu::KernelVariant> float_gemm_variants() {
  using kernels::cpu::KernelVariant;
  std::vector<KernelVariant> variants = optimized_variants();
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    variants.push_back(KernelVariant::kAvx512);
  } else {
    std::printf("avx512 float tile: SKIPPED (this CPU has no AVX-512 F/BW/VL/VNNI)\n");
  }
#endif
  return variants;
}

class Random {
 public:
  explicit Random(uint32_t seed) : generator_(seed) {}
  std::vector<float> floats(size_t count, float low = -1.0f, float high = 1.0f) {
    std::vector<float> values(count);
    for (float& value : values) value = real(low, high);
    return values;
  }
  std::vector<int8_t> codes(size_t count, int low = -128, int high = 127) {
    std::uniform_int_distribution<int> distribution(low, high);
    std::vector<int8_t> values(count);
    for (int8_t& value : values) value = static_cast<int8_t>(distribution(generator_));
    return values;
  }
  std::vector<int32_t> ints(size_t count, int32_t low, int32_t high) {
    std::uniform_int_distribution<int32_t> distribution(low, high);
    std::vector<int32_t> values(count);
    for (int32_t& value : values) value = distribution(generator_);
    return values;
  }
  int32_t integer(int32_t low, int32_t high) {
    return std::uniform_int_distribution<int32_t>(low, high)(generator_);
  }
  float real(float low, float high) {
    // 24 random bits scaled into [low, high): not uniform_real_distribution, whose libstdc++
    // implementation computes in long double, a software 128-bit type on AArch64 that is
    // thousands of times slower under qemu-user.
    const float unit = static_cast<float>(generator_() >> 8) * (1.0f / 16777216.0f);
    return low + (high - low) * unit;
  }

 private:
  std::mt19937 generator_;
};

// The output stage of a random int8 convolution case, after its output zero point is set:
// kind % 4 picks none, a fused Relu (the minimum at the zero point), a clamp, or the SiLU
// epilogue (dequantization scales divided so the real values spread over a few units around 0,
// where SiLU bends, and a zero point low enough for its negative lobe).
inline void set_random_output_stage(Random& random, kernels::reference::Int8Requantization& q,
                                    size_t kind) {
  switch (kind % 4) {
    case 1:
      q.output_minimum = std::max(-128, q.output_zero_point);
      break;
    case 2:
      q.output_minimum = -50;
      q.output_maximum = 90;
      break;
    case 3:
      q.silu = true;
      for (float& scale : q.multipliers) scale /= 40.0f;
      q.output_scale = random.real(0.01f, 0.04f);
      q.output_zero_point = random.integer(-110, -70);
      break;
    default:
      break;
  }
}

// A random int8 convolution requantization for `channels` output channels of `depth`: input zero
// points anywhere in int8 and, every ninth trial, outside it (padding without an int8 code);
// every third channel with its own weight zero point; multipliers that keep the outputs of
// random codes within a few dozen codes; and set_random_output_stage's output stage by trial.
inline kernels::reference::Int8Requantization random_convolution_requantization(Random& random,
                                                                                int64_t channels,
                                                                                int64_t depth,
                                                                                int trial) {
  kernels::reference::Int8Requantization q;
  q.input_zero_point = trial % 9 == 8 ? random.integer(-300, 300) : random.integer(-128, 127);
  for (int64_t c = 0; c < channels; ++c) {
    q.weight_zero_points.push_back(c % 3 == 2 ? random.integer(-128, 127) : 0);
    const double spread = std::sqrt(static_cast<double>(depth)) * 100.0 * 100.0;
    q.multipliers.push_back(static_cast<float>(random.real(20.0f, 120.0f) / spread));
  }
  q.output_zero_point = random.integer(-20, 20);
  set_random_output_stage(random, q, static_cast<size_t>(trial));
  return q;
}

// Elements of a [batch][channels][height][width] tensor of the convolution's batch.
inline size_t convolution_tensor_size(const kernels::reference::Conv2DShape& shape,
                                      int64_t channels, int64_t height, int64_t width) {
  return static_cast<size_t>(shape.batch * channels * height * width);
}

// Fused activation number index % 4 of a float test: none, Relu, Clip to [-0.5, 0.7], LeakyRelu
// with slope 0.1.
inline kernels::reference::FusedActivation activation_number(size_t index) {
  using Kind = kernels::reference::FusedActivation::Kind;
  kernels::reference::FusedActivation activation;
  switch (index % 4) {
    case 1:
      activation.kind = Kind::kRelu;
      break;
    case 2:
      activation.kind = Kind::kClip;
      activation.minimum = -0.5f;
      activation.maximum = 0.7f;
      break;
    case 3:
      activation.kind = Kind::kLeakyRelu;
      activation.alpha = 0.1f;
      break;
    default:
      break;
  }
  return activation;
}

// The reference's float32 output of one convolution and the tolerance to compare with:
// rounding scales with the sums before the activation (a Clip to [-0.5, 0.7] leaves an output
// scale of 1 however large they are), so it is 1e-5 of the larger of the two scales.
struct FloatExpectation {
  std::vector<float> output;
  double tolerance;
};

inline FloatExpectation float_expectation(const kernels::reference::Conv2DShape& shape,
                                          const kernels::reference::FusedActivation& activation,
                                          const std::vector<float>& input,
                                          const std::vector<float>& weights, const float* bias) {
  const kernels::reference::Window2D& w = shape.window;
  const size_t outputs =
      convolution_tensor_size(shape, shape.output_channels, w.output_height, w.output_width);
  FloatExpectation expectation{std::vector<float>(outputs), 0.0};
  kernels::reference::conv2d(shape, activation, input.data(), weights.data(), bias,
                             expectation.output.data());
  std::vector<float> sums(outputs);
  kernels::reference::conv2d(shape, kernels::reference::FusedActivation{}, input.data(),
                             weights.data(), bias, sums.data());
  double sum_scale = 1.0, output_scale = 1.0;
  for (float value : sums) sum_scale = std::max(sum_scale, std::fabs(double{value}));
  for (float value : expectation.output) {
    output_scale = std::max(output_scale, std::fabs(double{value}));
  }
  expectation.tolerance = 1e-5 * sum_scale / output_scale;
  return expectation;
}

// Empty when |actual - expected| <= tolerance x max(1, max|expected|) everywhere, else a
// description of the first mismatch.
inline std::string compare_floats(const std::vector<float>& actual,
                                  const std::vector<float>& expected, double tolerance) {
  if (actual.size() != expected.size()) {
    return "size " + std::to_string(actual.size()) + " != " + std::to_string(expected.size());
  }
  double largest = 1.0;
  for (float value : expected) largest = std::max(largest, std::fabs(double{value}));
  for (size_t i = 0; i < actual.size(); ++i) {
    const double difference = std::fabs(double{actual[i]} - double{expected[i]});
    if (!(difference <= tolerance * largest)) {
      char text[160];
      std::snprintf(text, sizeof(text), "element %zu: %.9g, expected %.9g (scale %.3g)", i,
                    double{actual[i]}, double{expected[i]}, largest);
      return text;
    }
  }
  return "";
}

template <typename T>
std::string compare_exact(const std::vector<T>& actual, const std::vector<T>& expected) {
  if (actual.size() != expected.size()) {
    return "size " + std::to_string(actual.size()) + " != " + std::to_string(expected.size());
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] != expected[i]) {
      return "element " + std::to_string(i) + ": " + std::to_string(int64_t{actual[i]}) +
             ", expected " + std::to_string(int64_t{expected[i]});
    }
  }
  return "";
}

// Output size of a convolution window axis.
inline int64_t conv_output_size(int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                                int64_t pad_begin, int64_t pad_end) {
  return (input + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride + 1;
}

// An int8 convolution of `shape` (groups 1) on extreme codes, from every table this CPU runs
// (make(table, shape, q, weights) builds it; null fails): four patterns of input and weight
// codes at the ends of int8 with zero points at the other ends (|x - zx| and |w - zw| at 255,
// every seventh input random), biases up to 2e6 and multipliers of 1e-6 or 0.3 (sums past the
// float requantization's range, saturating outputs), against the reference. Empty, or the first
// mismatch.
template <typename Make>
std::string check_int8_convolution_extremes(const kernels::reference::Conv2DShape& shape,
                                            uint32_t seed, ThreadPool& pool, Make&& make) {
  namespace reference = kernels::reference;
  const reference::Window2D& w = shape.window;
  const auto outputs = static_cast<size_t>(shape.output_channels);
  const size_t depth = static_cast<size_t>(shape.input_channels * w.kernel_height * w.kernel_width);
  for (int pattern = 0; pattern < 4; ++pattern) {
    reference::Int8Requantization q;
    q.input_zero_point = pattern % 2 ? 127 : -128;
    q.weight_zero_points.assign(outputs, pattern / 2 ? 127 : -128);
    q.multipliers.assign(outputs, pattern == 3 ? 0.3f : 1e-6f);
    q.output_zero_point = 5;
    std::vector<int8_t> input(
        convolution_tensor_size(shape, shape.input_channels, w.input_height, w.input_width),
        static_cast<int8_t>(pattern % 2 ? -128 : 127));
    const std::vector<int8_t> weights(outputs * depth,
                                      static_cast<int8_t>(pattern / 2 ? -128 : 127));
    Random random(seed + static_cast<uint32_t>(pattern));
    const std::vector<int8_t> noise = random.codes(input.size());
    for (size_t i = 0; i < input.size(); i += 7) input[i] = noise[i];
    const std::vector<int32_t> bias = random.ints(outputs, -2000000, 2000000);
    std::vector<int8_t> expected(
        convolution_tensor_size(shape, shape.output_channels, w.output_height, w.output_width));
    reference::conv2d_int8(shape, q, input.data(), weights.data(), bias.data(), expected.data());
    for (const kernels::cpu::optimized::MicroKernels* table : optimized_micro_kernels()) {
      auto kernel = make(*table, shape, q, weights.data());
      if (!kernel) return std::string("no kernel on ") + table->name;
      std::vector<int8_t> output(expected.size(), 0x55);
      kernel->run(input.data(), nullptr, bias.data(), output.data(), pool);
      const std::string mismatch = compare_exact(output, expected);
      if (!mismatch.empty()) {
        return "pattern " + std::to_string(pattern) + " (" + kernel->algorithm() + "): " + mismatch;
      }
    }
  }
  return {};
}

}  // namespace orknn::testing
