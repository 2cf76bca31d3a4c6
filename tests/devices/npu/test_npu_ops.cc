// Every op the NPU claims, run on the emulated NPU and on the CPU int8 reference over a seeded
// random sweep of shapes, compared byte for byte; also with the work split over 2 and 3 cores.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "common/op_test_harness.h"
#include "devices/npu/cbuf_plan.h"
#include "npu_test_support.h"

// cmocka after the standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;

graph::Attribute ints(std::vector<int64_t> values) {
  return attr_ints(std::move(values));
}
graph::Attribute integer(int64_t value) {
  return attr_int(value);
}
graph::Attribute text(std::string value) {
  return attr_string(std::move(value));
}
graph::Attribute real(float value) {
  return attr_float(value);
}

graph::Quantization per_tensor(float scale, int32_t zero_point) {
  return graph::Quantization{{scale}, {zero_point}, 0};
}

std::vector<int8_t> random_codes(std::mt19937& rng, size_t count) {
  std::uniform_int_distribution<int> code(-128, 127);
  std::vector<int8_t> codes(count);
  for (int8_t& value : codes) value = static_cast<int8_t>(code(rng));
  return codes;
}

// Runs the single-node graph on the CPU and on the NPU with `core_mask`; the node must be
// claimed by the NPU and the output bytes must agree.
void expect_npu_matches_cpu(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                            const Attributes& attributes, const StoredOutput& output,
                            uint32_t core_mask, const std::string& description) {
  auto graph = single_node_graph(op_type, inputs, attributes, {output});
  if (!graph.ok()) {
    fail_msg("%s: %s", description.c_str(), graph.status().message().c_str());
  }
  auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
  std::vector<std::vector<uint8_t>> input_bytes;
  for (const StoredTensor& tensor : inputs) {
    if (!tensor.constant && !tensor.name.empty()) input_bytes.push_back(tensor.bytes);
  }
  const DeviceRun cpu = run_graph(shared, input_bytes, nullptr, 0);
  const DeviceRun npu = run_graph(shared, input_bytes, emulated_npu(), core_mask);
  if (!cpu.status.ok() || !npu.status.ok()) {
    fail_msg("%s: cpu %s / npu %s", description.c_str(), cpu.status.message().c_str(),
             npu.status.message().c_str());
  }
  if (npu.npu_nodes != 1) fail_msg("%s: the NPU did not claim the node", description.c_str());
  const auto& expected = cpu.outputs[0];
  const auto& actual = npu.outputs[0];
  assert_int_equal(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i]) {
      fail_msg("%s: byte %zu: cpu %d npu %d", description.c_str(), i,
               static_cast<int8_t>(expected[i]), static_cast<int8_t>(actual[i]));
    }
  }
}

uint32_t mask_for_case(int index) {
  static const uint32_t kMasks[] = {0, 1, 3, 7, 4, 2, 0xffff};
  return kMasks[index % 7];
}

void test_convolution_sweep(void** state) {
  (void)state;
  std::mt19937 rng(20261122);
  static const int kKernels[] = {1, 3, 5, 7};
  // Cases from 90 on carry a fused SiLU, scaled so the pre-activation values spread over a few
  // units around 0, where SiLU bends and its negative lobe (down to -0.28) needs several codes.
  for (int index = 0; index < 130; ++index) {
    const bool silu = index >= 90;
    const int kernel_h = kKernels[uniform(rng, 0, 3)];
    const int kernel_w = uniform(rng, 0, 3) == 0 ? kKernels[uniform(rng, 0, 3)] : kernel_h;
    const int stride = uniform(rng, 1, 2), dilation = uniform(rng, 1, 2);
    const int grouping = uniform(rng, 0, 3);  // 0,1: dense; 2: depthwise; 3: 2 groups
    int channels_in = uniform(rng, 1, 70);
    int channels_out = uniform(rng, 1, 70);
    int group = 1;
    if (grouping == 2) {
      group = channels_in;
      channels_out = channels_in;
    } else if (grouping == 3) {
      channels_in = 2 * uniform(rng, 1, 35);
      channels_out = 2 * uniform(rng, 1, 35);
      group = 2;
    }
    const int height = uniform(rng, 1, 13) * 2 - 1 + uniform(rng, 0, 1);
    const int width = uniform(rng, 1, 13) * 2 - 1;
    const int extent_h = (kernel_h - 1) * dilation + 1, extent_w = (kernel_w - 1) * dilation + 1;
    const int pad_top = uniform(rng, 0, kernel_h / 2), pad_bottom = uniform(rng, 0, kernel_h / 2);
    const int pad_left = uniform(rng, 0, kernel_w / 2), pad_right = uniform(rng, 0, kernel_w / 2);
    if (height + pad_top + pad_bottom < extent_h || width + pad_left + pad_right < extent_w) {
      --index;
      continue;  // no output position
    }
    const int per_group = channels_in / group;
    const float input_scale = 0.01f + 0.05f * std::uniform_real_distribution<float>()(rng);
    const int32_t input_zero = uniform(rng, -30, 30);
    std::vector<float> weight_scales(static_cast<size_t>(channels_out));
    std::vector<int32_t> weight_zeros(static_cast<size_t>(channels_out), 0);
    // About 74 is the deviation of a uniform int8 code, so this makes the SiLU cases' real
    // pre-activation deviation about 1 to 3.
    const float silu_weight_scale =
        1.0f / (input_scale * std::sqrt(float(per_group * kernel_h * kernel_w)) * 74.0f * 74.0f);
    for (float& scale : weight_scales) {
      const float spread = std::uniform_real_distribution<float>()(rng);
      scale = silu ? silu_weight_scale * (1.0f + 2.0f * spread) : 0.002f + 0.01f * spread;
    }
    std::vector<int32_t> bias(static_cast<size_t>(channels_out));
    std::vector<float> bias_scales(static_cast<size_t>(channels_out));
    for (int c = 0; c < channels_out; ++c) {
      bias[static_cast<size_t>(c)] = uniform(rng, -20000, 20000);
      bias_scales[static_cast<size_t>(c)] = input_scale * weight_scales[static_cast<size_t>(c)];
    }
    const float output_scale =
        silu ? 0.01f + 0.03f * std::uniform_real_distribution<float>()(rng)
             : input_scale * weight_scales[0] * std::sqrt(float(per_group * kernel_h * kernel_w)) *
                   (20.0f + 40.0f * std::uniform_real_distribution<float>()(rng));
    const int32_t output_zero = silu ? uniform(rng, -115, -60) : uniform(rng, -20, 20);
    const std::vector<int8_t> x = random_codes(rng, size_t(channels_in) * height * width);
    const std::vector<int8_t> w =
        random_codes(rng, size_t(channels_out) * per_group * kernel_h * kernel_w);
    std::vector<StoredTensor> inputs = {
        stored("x", DataType::kInt8, {1, channels_in, height, width}, x,
               per_tensor(input_scale, input_zero)),
        stored("w", DataType::kInt8, {channels_out, per_group, kernel_h, kernel_w}, w,
               graph::Quantization{weight_scales, weight_zeros, 0}, true),
        stored("b", DataType::kInt32, {channels_out}, bias,
               graph::Quantization{bias_scales, std::vector<int32_t>(bias.size(), 0), 0}, true)};
    if (index % 5 == 4) inputs.pop_back();  // no bias
    Attributes attributes = {{"kernel_shape", ints({kernel_h, kernel_w})},
                             {"strides", ints({stride, stride})},
                             {"dilations", ints({dilation, dilation})},
                             {"pads", ints({pad_top, pad_left, pad_bottom, pad_right})},
                             {"group", integer(group)}};
    const int activation = silu ? 3 : uniform(rng, 0, 2);
    if (activation == 3) attributes["activation"] = text("SiLU");
    if (activation == 1) attributes["activation"] = text("Relu");
    if (activation == 2) {
      attributes["activation"] = text("Clip");
      attributes["activation_min"] = real(0.0f);
      attributes["activation_max"] = real(6.0f * output_scale * 10.0f);
    }
    char description[256];
    std::snprintf(description, sizeof(description),
                  "conv case %d: %dx%dx%d -> %d, k %dx%d s %d d %d g %d pads %d,%d,%d,%d act %d "
                  "mask %u",
                  index, channels_in, height, width, channels_out, kernel_h, kernel_w, stride,
                  dilation, group, pad_top, pad_left, pad_bottom, pad_right, activation,
                  mask_for_case(index));
    expect_npu_matches_cpu("Conv", inputs, attributes,
                           {DataType::kInt8, per_tensor(output_scale, output_zero)},
                           mask_for_case(index), description);
  }
}

// How many tasks the CBUF split gives the (single) Conv of `inputs` on one core.
size_t cbuf_task_count(const std::vector<StoredTensor>& inputs, const Attributes& attributes,
                       const StoredOutput& output) {
  auto graph = single_node_graph("Conv", inputs, attributes, {output});
  if (!graph.ok()) fail_msg("%s", graph.status().message().c_str());
  std::vector<graph::Shape> shapes;
  for (const graph::Tensor& tensor : graph->tensors) shapes.push_back(tensor.shape);
  auto layers = devices::npu::lower_node(*graph, 0, shapes);
  if (!layers.ok()) fail_msg("%s", layers.status().message().c_str());
  const devices::npu::NpuLayer& layer = layers->front();
  auto tasks =
      devices::npu::split_for_cbuf(layer, {0, layer.output.channels, 0, layer.output.height});
  if (!tasks.ok()) fail_msg("%s", tasks.status().message().c_str());
  return tasks->size();
}

// Convolutions too big for one core's conv buffer: wide rows of many channels (split along the
// output height), weights beyond the banks (split along output channels), wide depthwise rows.
// Every split and every core mask gives the CPU's bytes.
void test_convolution_cbuf_split_sweep(void** state) {
  (void)state;
  std::mt19937 rng(20261123);
  for (int index = 0; index < 6; ++index) {
    const int kind = index % 3;  // 0: wide rows, 1: big weights, 2: depthwise wide rows
    int channels_in = 0, channels_out = 0, height = 0, width = 0, kernel = 3, group = 1;
    if (kind == 0) {
      channels_in = uniform(rng, 48, 64), channels_out = uniform(rng, 1, 4);
      height = uniform(rng, 14, 18), width = uniform(rng, 200, 256);
      kernel = uniform(rng, 0, 1) ? 3 : 1;
    } else if (kind == 1) {
      channels_in = uniform(rng, 300, 360), channels_out = uniform(rng, 120, 170);
      height = uniform(rng, 2, 3), width = uniform(rng, 2, 3);
    } else {
      channels_in = channels_out = group = uniform(rng, 48, 96);
      height = uniform(rng, 10, 14), width = uniform(rng, 300, 420);
    }
    const int stride = kind == 1 ? 1 : uniform(rng, 1, 2), pad = kernel / 2;
    const int per_group = channels_in / group;
    const float input_scale = 0.02f;
    const float weight_scale = 0.004f;
    const std::vector<int8_t> x = random_codes(rng, size_t(channels_in) * height * width);
    const std::vector<int8_t> w =
        random_codes(rng, size_t(channels_out) * per_group * kernel * kernel);
    std::vector<int32_t> bias(static_cast<size_t>(channels_out));
    for (int32_t& value : bias) value = uniform(rng, -5000, 5000);
    const std::vector<StoredTensor> inputs = {
        stored("x", DataType::kInt8, {1, channels_in, height, width}, x,
               per_tensor(input_scale, 3)),
        stored("w", DataType::kInt8, {channels_out, per_group, kernel, kernel}, w,
               per_tensor(weight_scale, 0), true),
        stored("b", DataType::kInt32, {channels_out}, bias,
               per_tensor(input_scale * weight_scale, 0), true)};
    const Attributes attributes = {{"kernel_shape", ints({kernel, kernel})},
                                   {"strides", ints({stride, stride})},
                                   {"pads", ints({pad, pad, pad, pad})},
                                   {"group", integer(group)},
                                   {"activation", text("Relu")}};
    const float output_scale =
        input_scale * weight_scale * std::sqrt(float(per_group * kernel * kernel)) * 40.0f;
    const StoredOutput output{DataType::kInt8, per_tensor(output_scale, -5)};
    const size_t tasks = cbuf_task_count(inputs, attributes, output);
    if (tasks < 2) fail_msg("cbuf case %d: not split (%zu task)", index, tasks);
    for (uint32_t mask : {1u, 2u, 4u, 3u, 7u}) {
      char description[200];
      std::snprintf(description, sizeof(description),
                    "cbuf case %d: %dx%dx%d -> %d, k %d s %d g %d, %zu tasks on one core, mask %u",
                    index, channels_in, height, width, channels_out, kernel, stride, group, tasks,
                    mask);
      expect_npu_matches_cpu("Conv", inputs, attributes, output, mask, description);
    }
  }
}

// One kernel block bigger than the conv buffer cannot be split: the Conv stays on the CPU.
void test_conv_too_big_for_cbuf_stays_on_cpu(void** state) {
  (void)state;
  const int channels = 1024, kernel = 7;
  std::mt19937 rng(23);
  const std::vector<StoredTensor> inputs = {
      stored("x", DataType::kInt8, {1, channels, kernel, kernel},
             random_codes(rng, size_t(channels) * kernel * kernel), per_tensor(0.1f, 0)),
      stored("w", DataType::kInt8, {1, channels, kernel, kernel},
             random_codes(rng, size_t(channels) * kernel * kernel), per_tensor(0.001f, 0), true)};
  auto graph = single_node_graph("Conv", inputs, {}, {{DataType::kInt8, per_tensor(0.5f, 0)}});
  assert_true(graph.ok());
  auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
  const DeviceRun run = run_graph(shared, {inputs[0].bytes}, emulated_npu(), 0);
  if (!run.status.ok()) fail_msg("%s", run.status.message().c_str());
  assert_int_equal(run.npu_nodes, 0);
}

// Gemm and MatMul with a constant B run as 1x1 convolutions over the 1 x M map of K channels:
// per-tensor and per-column weights, transposed B, C as [N] or [1, N], fused Relu/Clip, and a
// classifier-sized B (1280 x 1000) that the CBUF splits by output channels.
void test_matrix_product_sweep(void** state) {
  (void)state;
  std::mt19937 rng(20261125);
  for (int index = 0; index < 16; ++index) {
    const bool gemm = index % 4 != 3, big = index == 15;
    const bool transpose_b = gemm && uniform(rng, 0, 1) == 1;
    const int m = big ? 1 : uniform(rng, 1, 24), k = big ? 1280 : uniform(rng, 1, 200);
    const int n = big ? 1000 : uniform(rng, 1, 120);
    const bool per_column = uniform(rng, 0, 1) == 1;
    const float input_scale = 0.02f;
    std::vector<float> weight_scales(per_column ? size_t(n) : 1);
    for (float& scale : weight_scales) scale = 0.002f + 0.004f * uniform(rng, 0, 10) / 10.0f;
    const graph::Quantization weight_q{weight_scales, std::vector<int32_t>(weight_scales.size(), 0),
                                       per_column ? (transpose_b ? 0 : 1) : 0};
    std::vector<StoredTensor> inputs = {
        stored("a", DataType::kInt8, {m, k}, random_codes(rng, size_t(m) * k),
               per_tensor(input_scale, uniform(rng, -10, 10))),
        stored("b", DataType::kInt8, transpose_b ? graph::Shape{n, k} : graph::Shape{k, n},
               random_codes(rng, size_t(k) * n), weight_q, true)};
    if (gemm && index % 2 == 0) {
      std::vector<int32_t> c(static_cast<size_t>(n));
      std::vector<float> c_scales;
      for (int32_t& value : c) value = uniform(rng, -3000, 3000);
      for (float scale : weight_scales) c_scales.push_back(input_scale * scale);
      const bool row = index % 4 == 2;
      inputs.push_back(stored(
          "c", DataType::kInt32, row ? graph::Shape{1, n} : graph::Shape{n}, c,
          graph::Quantization{c_scales, std::vector<int32_t>(c_scales.size(), 0), row ? 1 : 0},
          true));
    }
    Attributes attributes;
    if (transpose_b) attributes["transB"] = integer(1);
    if (index % 3 == 1) attributes["activation"] = text("Relu");
    const float output_scale = input_scale * 0.004f * std::sqrt(float(k)) * 30.0f;
    char description[160];
    std::snprintf(description, sizeof(description), "%s case %d: [%d, %d] x [%d, %d]%s",
                  gemm ? "Gemm" : "MatMul", index, m, k, k, n, transpose_b ? " (transB)" : "");
    for (uint32_t mask : {1u, 7u}) {
      expect_npu_matches_cpu(gemm ? "Gemm" : "MatMul", inputs, attributes,
                             {DataType::kInt8, per_tensor(output_scale, uniform(rng, -5, 5))}, mask,
                             description);
    }
  }
}

void test_add_sweep(void** state) {
  (void)state;
  std::mt19937 rng(7);
  for (int index = 0; index < 20; ++index) {
    const int channels = uniform(rng, 1, 70), height = uniform(rng, 1, 15),
              width = uniform(rng, 1, 15);
    const size_t count = size_t(channels) * height * width;
    const auto a = random_codes(rng, count), b = random_codes(rng, count);
    const std::vector<StoredTensor> inputs = {
        stored("a", DataType::kInt8, {1, channels, height, width}, a,
               per_tensor(0.02f + 0.01f * uniform(rng, 0, 5), uniform(rng, -10, 10))),
        stored("b", DataType::kInt8, {1, channels, height, width}, b,
               per_tensor(0.03f + 0.01f * uniform(rng, 0, 5), uniform(rng, -10, 10)))};
    char description[128];
    std::snprintf(description, sizeof(description), "add case %d: %dx%dx%d", index, channels,
                  height, width);
    expect_npu_matches_cpu("Add", inputs, {},
                           {DataType::kInt8, per_tensor(0.045f, uniform(rng, -10, 10))},
                           mask_for_case(index), description);
  }
}

void test_pooling_sweep(void** state) {
  (void)state;
  std::mt19937 rng(11);
  for (int index = 0; index < 40; ++index) {
    const int kind = index % 3;  // max, average, global average
    const int channels = uniform(rng, 1, 70), height = uniform(rng, 1, 15),
              width = uniform(rng, 1, 15);
    const auto x = random_codes(rng, size_t(channels) * height * width);
    const std::vector<StoredTensor> inputs = {stored("x", DataType::kInt8,
                                                     {1, channels, height, width}, x,
                                                     per_tensor(0.05f, uniform(rng, -5, 5)))};
    Attributes attributes;
    std::string op = "GlobalAveragePool";
    if (kind != 2) {
      op = kind == 0 ? "MaxPool" : "AveragePool";
      const int kernel = std::min({uniform(rng, 1, 5), height, width});
      const int pad = uniform(rng, 0, (kernel - 1) / 2);
      attributes = {{"kernel_shape", ints({kernel, kernel})},
                    {"strides", ints({uniform(rng, 1, 2), uniform(rng, 1, 2)})},
                    {"pads", ints({pad, pad, pad, pad})}};
      if (kind == 1) attributes["count_include_pad"] = integer(uniform(rng, 0, 1));
    }
    char description[128];
    std::snprintf(description, sizeof(description), "%s case %d: %dx%dx%d", op.c_str(), index,
                  channels, height, width);
    expect_npu_matches_cpu(op, inputs, attributes,
                           {DataType::kInt8, per_tensor(0.04f, uniform(rng, -5, 5))},
                           mask_for_case(index), description);
  }
}

void test_activation_tables(void** state) {
  (void)state;
  std::mt19937 rng(3);
  const char* kOps[] = {"Relu", "Sigmoid", "LeakyRelu", "Clip", "HardSwish"};
  for (int index = 0; index < 10; ++index) {
    const std::string op = kOps[index % 5];
    const int channels = uniform(rng, 1, 40), height = uniform(rng, 1, 9),
              width = uniform(rng, 1, 9);
    const auto x = random_codes(rng, size_t(channels) * height * width);
    std::vector<StoredTensor> inputs = {stored("x", DataType::kInt8, {1, channels, height, width},
                                               x, per_tensor(0.05f, uniform(rng, -5, 5)))};
    if (op == "Clip") {
      inputs.push_back(stored("low", DataType::kFloat32, {}, std::vector<float>{0.0f}, {}, true));
      inputs.push_back(stored("high", DataType::kFloat32, {}, std::vector<float>{3.0f}, {}, true));
    }
    expect_npu_matches_cpu(op, inputs, {},
                           {DataType::kInt8, per_tensor(0.03f, uniform(rng, -5, 5))},
                           mask_for_case(index), op + " case " + std::to_string(index));
  }
}

// Concat along channels: inputs on 16-channel blocks, with equal and with different
// quantizations (a byte move and a requantization on the CPU).
void test_concat(void** state) {
  (void)state;
  std::mt19937 rng(13);
  for (int index = 0; index < 8; ++index) {
    const int height = uniform(rng, 1, 9), width = uniform(rng, 1, 9);
    const int first = 16 * uniform(rng, 1, 3), second = uniform(rng, 1, 40);
    const bool same = index % 2 == 0;
    const graph::Quantization output_q = per_tensor(0.05f, 3);
    const std::vector<StoredTensor> inputs = {
        stored("a", DataType::kInt8, {1, first, height, width},
               random_codes(rng, size_t(first) * height * width), output_q),
        stored("b", DataType::kInt8, {1, second, height, width},
               random_codes(rng, size_t(second) * height * width),
               same ? output_q : per_tensor(0.07f, -4))};
    expect_npu_matches_cpu("Concat", inputs, {{"axis", integer(1)}}, {DataType::kInt8, output_q},
                           mask_for_case(index), "concat case " + std::to_string(index));
  }
}

// What the NPU refuses stays on the CPU: here a Conv with a non-zero weight zero point.
void test_refused_conv_stays_on_cpu(void** state) {
  (void)state;
  const std::vector<StoredTensor> inputs = {
      stored("x", DataType::kInt8, {1, 2, 3, 3}, std::vector<int8_t>(18, 3), per_tensor(0.1f, 0)),
      stored("w", DataType::kInt8, {1, 2, 1, 1}, std::vector<int8_t>{1, 2}, per_tensor(0.1f, 1),
             true)};
  auto graph = single_node_graph("Conv", inputs, {}, {{DataType::kInt8, per_tensor(0.1f, 0)}});
  assert_true(graph.ok());
  auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
  const DeviceRun run = run_graph(shared, {inputs[0].bytes}, emulated_npu(), 0);
  assert_true(run.status.ok());
  assert_int_equal(run.npu_nodes, 0);
}

// rknn-convert's op_target "cpu" (stored as the node's attribute) keeps a node the NPU could
// run on the CPU; the same node without it goes to the NPU.
void test_op_target_cpu_keeps_node_off_the_npu(void** state) {
  (void)state;
  const std::vector<StoredTensor> inputs = {
      stored("x", DataType::kInt8, {1, 2, 3, 3}, std::vector<int8_t>(18, 3), per_tensor(0.1f, 0)),
      stored("w", DataType::kInt8, {1, 2, 1, 1}, std::vector<int8_t>{1, 2}, per_tensor(0.1f, 0),
             true)};
  for (const bool pinned : {false, true}) {
    Attributes attributes;
    if (pinned) attributes["op_target"] = text("cpu");
    auto graph =
        single_node_graph("Conv", inputs, attributes, {{DataType::kInt8, per_tensor(0.1f, 0)}});
    if (!graph.ok()) fail_msg("%s", graph.status().message().c_str());
    auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
    const DeviceRun run = run_graph(shared, {inputs[0].bytes}, emulated_npu(), 0);
    if (!run.status.ok()) fail_msg("%s", run.status.message().c_str());
    assert_int_equal(run.npu_nodes, pinned ? 0 : 1);
  }
}

// A Conv with a fused SiLU (what the converter makes of Conv -> Sigmoid -> Mul) runs on the NPU
// with its SiLU epilogue and gives the CPU's bytes. (Lowering it as a plain Conv once dropped the
// SiLU silently.)
void test_conv_silu_matches_cpu(void** state) {
  (void)state;
  std::mt19937 rng(17);
  const auto x = random_codes(rng, 6 * 5 * 5);
  const auto w = random_codes(rng, 8 * 6 * 3 * 3);
  const std::vector<StoredTensor> inputs = {
      stored("x", DataType::kInt8, {1, 6, 5, 5}, x, per_tensor(0.04f, -3)),
      stored("w", DataType::kInt8, {8, 6, 3, 3}, w, per_tensor(0.01f, 0), true)};
  const Attributes attributes = {{"pads", ints({1, 1, 1, 1})}, {"activation", text("SiLU")}};
  auto graph =
      single_node_graph("Conv", inputs, attributes, {{DataType::kInt8, per_tensor(0.05f, -100)}});
  if (!graph.ok()) fail_msg("%s", graph.status().message().c_str());
  auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
  const DeviceRun cpu = run_graph(shared, {inputs[0].bytes}, nullptr, 0);
  if (!cpu.status.ok()) fail_msg("cpu: %s", cpu.status.message().c_str());
  // SiLU's negative lobe reaches about -0.28: with zero point -100 those codes must appear,
  // or the test could not tell SiLU from a Relu-like clamp.
  bool negative = false;
  for (uint8_t byte : cpu.outputs[0]) negative |= static_cast<int8_t>(byte) < -100;
  assert_true(negative);
  for (uint32_t mask : {0u, 1u, 3u, 7u}) {
    const DeviceRun run = run_graph(shared, {inputs[0].bytes}, emulated_npu(), mask);
    if (!run.status.ok()) fail_msg("mask %u: %s", mask, run.status.message().c_str());
    assert_int_equal(run.npu_nodes, 1);  // the SiLU epilogue runs on the NPU
    assert_true(run.outputs == cpu.outputs);
  }
}

// The RK3576 emulator has two cores: masks 3 and "all" split over both, 4 is refused.
void test_two_core_npu(void** state) {
  (void)state;
  auto npu = driver_shim::open_npu("emu:rk3576");
  assert_true(npu.ok());
  assert_int_equal((*npu)->info().core_count, 2);
  std::mt19937 rng(5);
  const auto x = random_codes(rng, 40 * 7 * 6);
  const auto w = random_codes(rng, 70 * 40);
  const std::vector<StoredTensor> inputs = {
      stored("x", DataType::kInt8, {1, 40, 7, 6}, x, per_tensor(0.03f, 2)),
      stored("w", DataType::kInt8, {70, 40, 1, 1}, w, per_tensor(0.01f, 0), true)};
  auto graph = single_node_graph("Conv", inputs, {}, {{DataType::kInt8, per_tensor(0.5f, 1)}});
  assert_true(graph.ok());
  auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
  const DeviceRun cpu = run_graph(shared, {inputs[0].bytes}, nullptr, 0);
  for (uint32_t mask : {0u, 1u, 2u, 3u, 0xffffu}) {
    const DeviceRun run = run_graph(shared, {inputs[0].bytes}, *npu, mask);
    if (!run.status.ok()) fail_msg("mask %u: %s", mask, run.status.message().c_str());
    assert_int_equal(run.npu_nodes, 1);
    assert_true(run.outputs == cpu.outputs);
  }
  const DeviceRun refused = run_graph(shared, {inputs[0].bytes}, *npu, 4);
  assert_false(refused.status.ok());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_convolution_sweep),
      cmocka_unit_test(test_convolution_cbuf_split_sweep),
      cmocka_unit_test(test_conv_too_big_for_cbuf_stays_on_cpu),
      cmocka_unit_test(test_matrix_product_sweep),
      cmocka_unit_test(test_add_sweep),
      cmocka_unit_test(test_pooling_sweep),
      cmocka_unit_test(test_activation_tables),
      cmocka_unit_test(test_concat),
      cmocka_unit_test(test_refused_conv_stays_on_cpu),
      cmocka_unit_test(test_op_target_cpu_keeps_node_off_the_npu),
      cmocka_unit_test(test_conv_silu_matches_cpu),
      cmocka_unit_test(test_two_core_npu),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
