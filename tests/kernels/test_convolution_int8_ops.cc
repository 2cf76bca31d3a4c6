// Convolution family in int8: the native Conv, ConvTranspose, Gemm and MatMul kernels bit-exactly
// against the rule of docs/quantization.md computed here on the formulations of
// convolution_formulas.h, and the float fallback of int8 nodes the int8 kernels refuse.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "common/op_test_harness.h"
#include "devices/cpu/cpu_kernel_registry.h"
#include "kernels/convolution_formulas.h"

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
using graph::Shape;

graph::Quantization per_tensor(float scale, int32_t zero_point) {
  return {{scale}, {zero_point}, 0};
}

struct QuantizedRun {
  Status status;
  bool int8_kernel = false;  // the native int8 factory accepted the node
  std::string refusal;       // why it did not
  std::vector<int8_t> output;
};

// A run on exactly the given int8 tensors, recording whether the op's int8 factory accepted the
// node (the registry would otherwise fall back to the float domain silently).
QuantizedRun run_quantized(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                           const Attributes& attributes, const graph::Quantization& output_q) {
  QuantizedRun run;
  Result<graph::Graph> graph =
      single_node_graph(op_type, inputs, attributes, {{DataType::kInt8, output_q}});
  if (!graph.ok()) {
    run.status = graph.take_status();
    return run;
  }
  const graph::Graph& g = graph.value();
  const graph::Node& node = g.nodes[0];
  devices::cpu::KernelBuildContext context{node, {}, {&g.tensor(node.outputs[0])}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    context.inputs.push_back(node.has_input(i) ? &g.tensor(node.inputs[i]) : nullptr);
  }
  const devices::cpu::CpuOpDefinition* op = devices::cpu::find_cpu_op(op_type);
  if (op->make_int8_kernel) {
    auto int8_kernel = op->make_int8_kernel(context);
    run.int8_kernel = int8_kernel.ok();
    if (!int8_kernel.ok()) run.refusal = int8_kernel.status().message();
  }
  StoredRun stored_run = run_single_node(g, inputs);
  run.status = stored_run.status;
  if (run.status.ok()) run.output = from_bytes<int8_t>(stored_run.outputs[0]);
  return run;
}

std::vector<int32_t> random_ints(size_t count, int32_t low, int32_t high, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int32_t> distribution(low, high);
  std::vector<int32_t> values(count);
  for (int32_t& value : values) value = distribution(generator);
  return values;
}

std::vector<int8_t> random_codes(size_t count, uint32_t seed) {
  const std::vector<int32_t> codes = random_ints(count, -128, 127, seed);
  return std::vector<int8_t>(codes.begin(), codes.end());
}

// The requantization rule, written out independently of the kernels.
int8_t rule_output(double accumulator, double input_scale, double weight_scale, double output_scale,
                   int32_t zero_point, int32_t low, int32_t high) {
  const float multiplier = static_cast<float>(input_scale * weight_scale / output_scale);
  const double rounded = std::nearbyint(accumulator * static_cast<double>(multiplier));
  double value = std::min(std::max(rounded + zero_point, -128.0), 127.0);
  value = std::min(std::max(value, static_cast<double>(low)), static_cast<double>(high));
  return static_cast<int8_t>(value);
}

int32_t rule_quantize(float real, float scale, int32_t zero_point) {
  return static_cast<int32_t>(
      std::min(std::max(std::nearbyint(real / scale) + zero_point, -128.0f), 127.0f));
}

// A quantized product: codes with their zero points removed, the channel scales, and a bias
// quantized at input x weight scale.
struct QuantizedOperands {
  float input_scale = 0.02f;
  int32_t input_zero_point = 5;
  std::vector<float> weight_scales;
  std::vector<int32_t> weight_zero_points;
  std::vector<int8_t> x, w;
  std::vector<int32_t> bias;
  graph::Quantization weight_q(int axis) const { return {weight_scales, weight_zero_points, axis}; }
  graph::Quantization bias_q() const {
    graph::Quantization q;
    for (float scale : weight_scales) {
      q.scales.push_back(input_scale * scale);
      q.zero_points.push_back(0);
    }
    return q;
  }
};

QuantizedOperands make_operands(size_t x_count, size_t w_count, size_t channels, bool with_bias,
                                uint32_t seed) {
  QuantizedOperands q;
  for (size_t c = 0; c < channels; ++c) {
    q.weight_scales.push_back(0.004f + 0.003f * static_cast<float>(c % 5));
    q.weight_zero_points.push_back(static_cast<int32_t>(c % 3) - 1);  // -1, 0, 1: handled
  }
  q.x = random_codes(x_count, seed);
  q.w = random_codes(w_count, seed + 1);
  if (with_bias) q.bias = random_ints(channels, -3000, 3000, seed + 2);
  return q;
}

// Checks run.output against the rule for accumulators `sums` whose channel is
// channel_of(index); the output scale is chosen so that most outputs do not saturate.
template <typename ChannelOf>
void expect_rule(const QuantizedRun& run, const QuantizedOperands& q,
                 const std::vector<double>& sums, ChannelOf channel_of, float output_scale,
                 int32_t output_zero_point, int32_t low = -128, int32_t high = 127) {
  if (!run.status.ok()) fail_msg("int8 run failed: %s", run.status.message().c_str());
  if (!run.int8_kernel) fail_msg("the int8 kernel refused the node: %s", run.refusal.c_str());
  assert_int_equal(run.output.size(), sums.size());
  int saturated = 0;
  for (size_t i = 0; i < sums.size(); ++i) {
    const size_t c = channel_of(i);
    const int8_t expected = rule_output(sums[i], q.input_scale, q.weight_scales[c], output_scale,
                                        output_zero_point, low, high);
    if (run.output[i] != expected) {
      fail_msg("output %zu: %d, the rule gives %d (accumulator %.0f)", i, run.output[i], expected,
               sums[i]);
    }
    saturated += expected == -128 || expected == 127;
  }
  if (saturated * 4 > static_cast<int>(sums.size()))
    fail_msg("test setup: %d of %zu saturate", saturated, sums.size());
}

// Output scale that maps the largest real output to about 100 codes.
template <typename ChannelOf>
float output_scale_for(const QuantizedOperands& q, const std::vector<double>& sums,
                       ChannelOf channel_of) {
  double largest = 0;
  for (size_t i = 0; i < sums.size(); ++i) {
    largest =
        std::max(largest, std::fabs(sums[i]) * q.input_scale * q.weight_scales[channel_of(i)]);
  }
  return static_cast<float>(largest / 100.0);
}

std::vector<double> offsets(const std::vector<int8_t>& codes, int32_t zero_point) {
  std::vector<double> values;
  for (int8_t code : codes) values.push_back(code - zero_point);
  return values;
}

// Weight offsets with the zero point of each code's output channel.
std::vector<double> weight_offsets(const QuantizedOperands& q, size_t inner,
                                   size_t outer_channels_stride) {
  std::vector<double> values;
  for (size_t i = 0; i < q.w.size(); ++i) {
    const size_t channel = (i / inner) % outer_channels_stride;
    values.push_back(q.w[i] - q.weight_zero_points[channel]);
  }
  return values;
}

void test_int8_conv_bit_exact(void**) {
  Geometry g;
  g.n = 2, g.c = 6, g.h = 7, g.w = 6, g.m = 4, g.kh = 3, g.kw = 2, g.group = 2;
  g.stride_h = 2, g.dilation_w = 2, g.pad_top = 1, g.pad_bottom = 2, g.pad_right = 1;
  const size_t inner = static_cast<size_t>((g.c / g.group) * g.kh * g.kw);
  const QuantizedOperands q = make_operands(g.n * g.c * g.h * g.w, g.m * inner, g.m, true, 11);
  const std::vector<double> sums =
      direct_conv(g, offsets(q.x, q.input_zero_point), weight_offsets(q, inner, g.m),
                  std::vector<double>(q.bias.begin(), q.bias.end()));
  const size_t plane = static_cast<size_t>(g.conv_out_h() * g.conv_out_w());
  auto channel_of = [&](size_t i) { return (i / plane) % g.m; };
  const float output_scale = output_scale_for(q, sums, channel_of);
  const int32_t zy = -3;
  auto inputs = [&](const graph::Quantization& weight_q, const graph::Quantization& bias_q) {
    return std::vector<StoredTensor>{
        stored("x", DataType::kInt8, {g.n, g.c, g.h, g.w}, q.x,
               per_tensor(q.input_scale, q.input_zero_point), false),
        stored("w", DataType::kInt8, {g.m, g.c / g.group, g.kh, g.kw}, q.w, weight_q, true),
        stored("b", DataType::kInt32, {g.m}, q.bias, bias_q, true)};
  };
  const Attributes attributes = window_attributes(g, false);
  expect_rule(run_quantized("Conv", inputs(q.weight_q(0), q.bias_q()), attributes,
                            per_tensor(output_scale, zy)),
              q, sums, channel_of, output_scale, zy);

  // Fused Relu and Clip are clamps in the quantized domain.
  Attributes relu = attributes;
  relu["activation"] = attr_string("Relu");
  expect_rule(
      run_quantized("Conv", inputs(q.weight_q(0), q.bias_q()), relu, per_tensor(output_scale, zy)),
      q, sums, channel_of, output_scale, zy, zy, 127);
  Attributes clip = attributes;
  clip["activation"] = attr_string("Clip");
  clip["activation_min"] = attr_float(-0.3f);
  clip["activation_max"] = attr_float(0.45f);
  expect_rule(
      run_quantized("Conv", inputs(q.weight_q(0), q.bias_q()), clip, per_tensor(output_scale, zy)),
      q, sums, channel_of, output_scale, zy, rule_quantize(-0.3f, output_scale, zy),
      rule_quantize(0.45f, output_scale, zy));

  // Per-tensor weights: every channel uses channel 0's scale and zero point.
  QuantizedOperands shared = q;
  shared.weight_scales.assign(g.m, q.weight_scales[0]);
  shared.weight_zero_points.assign(g.m, q.weight_zero_points[0]);
  const std::vector<double> shared_sums =
      direct_conv(g, offsets(q.x, q.input_zero_point), weight_offsets(shared, inner, g.m),
                  std::vector<double>(q.bias.begin(), q.bias.end()));
  graph::Quantization shared_bias = shared.bias_q();
  shared_bias.scales.resize(1);
  shared_bias.zero_points.resize(1);
  expect_rule(
      run_quantized("Conv",
                    inputs(per_tensor(q.weight_scales[0], q.weight_zero_points[0]), shared_bias),
                    attributes, per_tensor(output_scale, zy)),
      shared, shared_sums, channel_of, output_scale, zy);
}

void test_int8_conv_transpose_bit_exact(void**) {
  for (int64_t group : {1, 2}) {
    Geometry g;
    g.n = 1, g.c = 4, g.h = 3, g.w = 5, g.m = 6, g.kh = 3, g.kw = 3, g.group = group;
    g.stride_h = 2, g.stride_w = 3, g.pad_top = 1, g.pad_left = 2, g.out_pad_h = 1;
    const int64_t mpg = g.m / group;
    const size_t inner = static_cast<size_t>(g.kh * g.kw);
    // One group: per-channel along axis 1. Two groups: per-tensor.
    QuantizedOperands q =
        make_operands(g.n * g.c * g.h * g.w, g.c * mpg * inner, g.m, true, 40 + group);
    if (group > 1) {
      q.weight_scales.assign(g.m, q.weight_scales[0]);
      q.weight_zero_points.assign(g.m, q.weight_zero_points[0]);
    }
    const int64_t oh = g.transpose_out_h(), ow = g.transpose_out_w();
    const std::vector<double> sums = scatter_conv_transpose(
        g, oh, ow, offsets(q.x, q.input_zero_point), weight_offsets(q, inner, mpg),
        std::vector<double>(q.bias.begin(), q.bias.end()));
    auto channel_of = [&](size_t i) { return (i / static_cast<size_t>(oh * ow)) % g.m; };
    const float output_scale = output_scale_for(q, sums, channel_of);
    graph::Quantization bias_q = q.bias_q();
    if (group > 1) bias_q = per_tensor(bias_q.scales[0], 0);
    const std::vector<StoredTensor> inputs = {
        stored("x", DataType::kInt8, {g.n, g.c, g.h, g.w}, q.x,
               per_tensor(q.input_scale, q.input_zero_point), false),
        stored("w", DataType::kInt8, {g.c, mpg, g.kh, g.kw}, q.w,
               group > 1 ? per_tensor(q.weight_scales[0], q.weight_zero_points[0]) : q.weight_q(1),
               true),
        stored("b", DataType::kInt32, {g.m}, q.bias, bias_q, true)};
    Attributes attributes = window_attributes(g, false);
    attributes["output_padding"] = attr_ints({g.out_pad_h, 0});
    expect_rule(run_quantized("ConvTranspose", inputs, attributes, per_tensor(output_scale, 7)), q,
                sums, channel_of, output_scale, 7);
  }
}

void test_int8_gemm_bit_exact(void**) {
  const int64_t m = 5, n = 6, k = 11;
  for (bool transpose : {false, true}) {
    const bool with_c = !transpose;
    const float alpha = transpose ? 0.75f : 1.0f;
    QuantizedOperands q = make_operands(m * k, k * n, n, with_c, 60 + transpose);
    // B is [K, N] (channel = column) or, transposed, [N, K] (channel = row).
    std::vector<double> sums;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = with_c ? q.bias[j] : 0;
        for (int64_t p = 0; p < k; ++p) {
          const double a = q.x[transpose ? p * m + i : i * k + p] - q.input_zero_point;
          const double b = q.w[transpose ? j * k + p : p * n + j] - q.weight_zero_points[j];
          sum += a * b;
        }
        sums.push_back(sum);
      }
    auto channel_of = [&](size_t i) { return i % n; };
    const float output_scale = output_scale_for(q, sums, channel_of) * alpha;
    std::vector<StoredTensor> inputs = {
        stored("a", DataType::kInt8, transpose ? Shape{k, m} : Shape{m, k}, q.x,
               per_tensor(q.input_scale, q.input_zero_point), false),
        stored("b", DataType::kInt8, transpose ? Shape{n, k} : Shape{k, n}, q.w,
               q.weight_q(transpose ? 0 : 1), true)};
    if (with_c) inputs.push_back(stored("c", DataType::kInt32, {n}, q.bias, q.bias_q(), true));
    QuantizedRun run = run_quantized("Gemm", inputs,
                                     {{"transA", attr_int(transpose)},
                                      {"transB", attr_int(transpose)},
                                      {"alpha", attr_float(alpha)}},
                                     per_tensor(output_scale, 2));
    // alpha folds into the multiplier: M = float(alpha * sa * sb / sy).
    QuantizedOperands scaled = q;
    for (float& scale : scaled.weight_scales)
      scale = static_cast<float>(scale * static_cast<double>(alpha));
    if (alpha == 1.0f) {
      expect_rule(run, q, sums, channel_of, output_scale, 2);
    } else {
      for (size_t i = 0; i < sums.size(); ++i) {
        const float multiplier = static_cast<float>(double(alpha) * q.input_scale *
                                                    q.weight_scales[i % n] / output_scale);
        const double value =
            std::min(std::max(std::nearbyint(sums[i] * double(multiplier)) + 2, -128.0), 127.0);
        if (run.output[i] != static_cast<int8_t>(value))
          fail_msg("gemm alpha output %zu: %d vs %g", i, run.output[i], value);
      }
      assert_true(run.int8_kernel);
    }
  }
}

void test_int8_matmul_bit_exact(void**) {
  // A [3, 2, 3, 4] x constant B [2, 4, 5] per channel along N; then B as a second activation.
  const Shape a_shape = {3, 2, 3, 4}, b_shape = {2, 4, 5};
  const int64_t n = 5;
  QuantizedOperands q = make_operands(72, 40, n, false, 80);
  std::vector<float> a_offsets, b_offsets;
  for (int8_t code : q.x) a_offsets.push_back(static_cast<float>(code - q.input_zero_point));
  for (size_t i = 0; i < q.w.size(); ++i)
    b_offsets.push_back(static_cast<float>(q.w[i] - q.weight_zero_points[i % n]));
  Shape out_shape;
  const std::vector<double> sums =
      direct_matmul(a_shape, a_offsets, b_shape, b_offsets, &out_shape);
  auto channel_of = [&](size_t i) { return i % n; };
  const float output_scale = output_scale_for(q, sums, channel_of);
  const graph::Quantization x_q = per_tensor(q.input_scale, q.input_zero_point);
  expect_rule(run_quantized("MatMul",
                            {stored("a", DataType::kInt8, a_shape, q.x, x_q, false),
                             stored("b", DataType::kInt8, b_shape, q.w, q.weight_q(2), true)},
                            {}, per_tensor(output_scale, -1)),
              q, sums, channel_of, output_scale, -1);

  QuantizedOperands activations = q;
  activations.weight_scales.assign(n, 0.011f);
  activations.weight_zero_points.assign(n, -4);
  std::vector<float> b_activation;
  for (int8_t code : q.w) b_activation.push_back(static_cast<float>(code + 4));
  const std::vector<double> activation_sums =
      direct_matmul(a_shape, a_offsets, b_shape, b_activation, &out_shape);
  const float activation_scale = output_scale_for(activations, activation_sums, channel_of);
  expect_rule(
      run_quantized("MatMul",
                    {stored("a", DataType::kInt8, a_shape, q.x, x_q, false),
                     stored("b", DataType::kInt8, b_shape, q.w, per_tensor(0.011f, -4), false)},
                    {}, per_tensor(activation_scale, 0)),
      activations, activation_sums, channel_of, activation_scale, 0);
}

// Nodes the int8 kernels refuse still run, through the float domain: dequantize, compute in
// float, quantize. Their results stay within one code of that computation done here in double.
void test_int8_fallbacks(void**) {
  const Shape x_shape = {1, 3, 4, 4}, w_shape = {2, 3, 3, 3};
  QuantizedOperands q = make_operands(48, 54, 2, true, 90);
  Geometry g;
  g.c = 3, g.h = 4, g.w = 4, g.m = 2, g.kh = 3, g.kw = 3,
  g.pad_top = g.pad_left = g.pad_bottom = g.pad_right = 1;
  std::vector<double> real_x, real_w, real_b;
  for (int8_t code : q.x) real_x.push_back((code - q.input_zero_point) * double(q.input_scale));
  for (size_t i = 0; i < q.w.size(); ++i)
    real_w.push_back((q.w[i] - q.weight_zero_points[i / 27]) * double(q.weight_scales[i / 27]));
  for (size_t c = 0; c < 2; ++c) real_b.push_back(q.bias[c] * double(q.bias_q().scales[c]));
  const std::vector<double> real = direct_conv(g, real_x, real_w, real_b);
  double largest = 0;
  for (double value : real) largest = std::max(largest, std::fabs(value));
  const float output_scale = static_cast<float>(largest / 100);
  auto expect_fallback = [&](const QuantizedRun& run, double alpha_for_negative) {
    if (!run.status.ok()) fail_msg("fallback run failed: %s", run.status.message().c_str());
    if (run.int8_kernel) fail_msg("the int8 kernel accepted a node it must refuse");
    for (size_t i = 0; i < real.size(); ++i) {
      const double value = real[i] < 0 ? real[i] * alpha_for_negative : real[i];
      const int expected = rule_quantize(static_cast<float>(value), output_scale, 0);
      if (std::abs(run.output[i] - expected) > 1)
        fail_msg("fallback output %zu: %d vs %d", i, run.output[i], expected);
    }
  };
  const StoredTensor x = stored("x", DataType::kInt8, x_shape, q.x,
                                per_tensor(q.input_scale, q.input_zero_point), false);
  const StoredTensor w = stored("w", DataType::kInt8, w_shape, q.w, q.weight_q(0), true);
  const StoredTensor b = stored("b", DataType::kInt32, {2}, q.bias, q.bias_q(), true);
  const Attributes pads = {{"pads", attr_ints({1, 1, 1, 1})}};
  Attributes leaky = pads;
  leaky["activation"] = attr_string("LeakyRelu");
  leaky["activation_alpha"] = attr_float(0.1f);
  expect_fallback(run_quantized("Conv", {x, w, b}, leaky, per_tensor(output_scale, 0)), 0.1);
  // A fused SiLU is the int8 kernel's SiLU epilogue (docs/quantization.md 4.3): the exact
  // accumulator back to real with D[c] = float(input_scale * weight_scale[c]), SiLU in float,
  // quantized once. Exactly that rule, and within one code of the real SiLU.
  Attributes silu = pads;
  silu["activation"] = attr_string("SiLU");
  QuantizedRun silu_run = run_quantized("Conv", {x, w, b}, silu, per_tensor(output_scale, 3));
  if (!silu_run.status.ok()) fail_msg("SiLU run failed: %s", silu_run.status.message().c_str());
  if (!silu_run.int8_kernel) fail_msg("the int8 kernel refused a fused SiLU");
  const std::vector<double> accumulators =
      direct_conv(g, offsets(q.x, q.input_zero_point), weight_offsets(q, 27, 2),
                  std::vector<double>(q.bias.begin(), q.bias.end()));
  const size_t plane = accumulators.size() / 2;
  for (size_t i = 0; i < accumulators.size(); ++i) {
    const size_t c = i / plane;
    const float scale = static_cast<float>(double(q.input_scale) * double(q.weight_scales[c]));
    const float pre = static_cast<float>(accumulators[i] * double(scale));
    const float sigmoid =
        pre >= 0.0f ? 1.0f / (1.0f + std::exp(-pre)) : std::exp(pre) / (1.0f + std::exp(pre));
    const int rule = rule_quantize(pre * sigmoid, output_scale, 3);
    if (silu_run.output[i] != rule)
      fail_msg("SiLU output %zu: %d, the rule gives %d", i, silu_run.output[i], rule);
    const double value = real[i] / (1.0 + std::exp(-real[i]));
    const int expected = rule_quantize(static_cast<float>(value), output_scale, 3);
    if (std::abs(silu_run.output[i] - expected) > 1)
      fail_msg("SiLU output %zu: %d vs %d", i, silu_run.output[i], expected);
  }
  // A float bias, and an int32 bias at the wrong scale, are not the int8 rule's bias.
  std::vector<float> float_bias(real_b.begin(), real_b.end());
  expect_fallback(
      run_quantized("Conv", {x, w, stored("b", DataType::kFloat32, {2}, float_bias, {}, true)},
                    pads, per_tensor(output_scale, 0)),
      1.0);
  graph::Quantization wrong = q.bias_q();
  for (float& scale : wrong.scales) scale *= 2;
  std::vector<int32_t> halved;
  for (int32_t value : q.bias) halved.push_back(value / 2);
  QuantizedRun run =
      run_quantized("Conv", {x, w, stored("b", DataType::kInt32, {2}, halved, wrong, true)}, pads,
                    per_tensor(output_scale, 0));
  assert_true(run.status.ok() && !run.int8_kernel);

  // Gemm with beta != 1 and a C operand.
  QuantizedOperands gq = make_operands(6, 6, 2, true, 95);
  run = run_quantized(
      "Gemm",
      {stored("a", DataType::kInt8, {3, 2}, gq.x, per_tensor(gq.input_scale, 0), false),
       stored("b", DataType::kInt8, {2, 2}, gq.w, gq.weight_q(1), true),
       stored("c", DataType::kInt32, {2}, gq.bias, gq.bias_q(), true)},
      {{"beta", attr_float(2.0f)}}, per_tensor(0.05f, 0));
  assert_true(run.status.ok() && !run.int8_kernel);

  // An int32 accumulator could overflow: 40000 products of up to 255 x 255 (zero points 127
  // and -128 allow offsets of 255).
  const int64_t channels = 40000;
  run = run_quantized("Conv",
                      {stored("x", DataType::kInt8, {1, channels, 1, 1}, random_codes(channels, 1),
                              per_tensor(0.1f, 127), false),
                       stored("w", DataType::kInt8, {1, channels, 1, 1}, random_codes(channels, 2),
                              per_tensor(0.1f, -128), true)},
                      {}, per_tensor(10.0f, 0));
  assert_true(run.status.ok() && !run.int8_kernel);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_conv_bit_exact),
      cmocka_unit_test(test_int8_conv_transpose_bit_exact),
      cmocka_unit_test(test_int8_gemm_bit_exact),
      cmocka_unit_test(test_int8_matmul_bit_exact),
      cmocka_unit_test(test_int8_fallbacks),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
