// float16 programs on the emulated NPU against the CPU, which runs the same float16 graph with
// float32 arithmetic (the fp32 reference). Acceptance (docs/npu.md section 6): every element
// within 2^-10 |ref| + 10^-3 max|ref|, every core mask giving exactly the bits of one core,
// and the node claimed by the NPU. Shapes sweep the int8 sweep's space, plus shapes that force
// CBUF splits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "common/op_test_harness.h"
#include "core/dtype.h"
#include "npu_test_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;

std::vector<uint16_t> random_halves(std::mt19937& rng, size_t count, float spread) {
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<uint16_t> halves(count);
  for (uint16_t& half : halves) half = float_to_half(normal(rng));
  return halves;
}

StoredTensor half_tensor(const char* name, graph::Shape shape, const std::vector<uint16_t>& values,
                         bool constant = false) {
  return stored(name, DataType::kFloat16, std::move(shape), values, {}, constant);
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
  const std::vector<uint16_t> halves = from_bytes<uint16_t>(bytes);
  std::vector<float> values;
  for (uint16_t half : halves) values.push_back(half_to_float(half));
  return values;
}

// Runs the node on the CPU and on the NPU on one, two and three cores (masks 1, 3, 7).
void expect_float16_close(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                          const Attributes& attributes, const std::string& description) {
  auto graph = single_node_graph(op_type, inputs, attributes, {{DataType::kFloat16, {}}});
  if (!graph.ok()) fail_msg("%s: %s", description.c_str(), graph.status().message().c_str());
  auto shared = std::make_shared<const graph::Graph>(std::move(*graph));
  std::vector<std::vector<uint8_t>> input_bytes;
  for (const StoredTensor& tensor : inputs) {
    if (!tensor.constant && !tensor.name.empty()) input_bytes.push_back(tensor.bytes);
  }
  const DeviceRun cpu = run_graph(shared, input_bytes, nullptr, 0);
  if (!cpu.status.ok()) fail_msg("%s: cpu %s", description.c_str(), cpu.status.message().c_str());
  const std::vector<float> expected = as_floats(cpu.outputs[0]);
  float largest = 0.0f;
  for (float value : expected) largest = std::max(largest, std::fabs(value));
  std::vector<uint8_t> one_core;
  for (uint32_t mask : {1u, 3u, 7u}) {
    const DeviceRun npu = run_graph(shared, input_bytes, emulated_npu(), mask);
    if (!npu.status.ok()) {
      fail_msg("%s mask %u: %s", description.c_str(), mask, npu.status.message().c_str());
    }
    if (npu.npu_nodes != 1) fail_msg("%s: the NPU did not claim the node", description.c_str());
    if (mask == 1) one_core = npu.outputs[0];
    if (npu.outputs[0] != one_core) {
      fail_msg("%s: mask %u gives other bits than one core", description.c_str(), mask);
    }
  }
  const std::vector<float> actual = as_floats(one_core);
  assert_int_equal(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const float bound = std::ldexp(std::fabs(expected[i]), -10) + 1e-3f * largest;
    if (!(std::fabs(actual[i] - expected[i]) <= bound)) {
      fail_msg("%s: element %zu: cpu %g npu %g (bound %g)", description.c_str(), i,
               double(expected[i]), double(actual[i]), double(bound));
    }
  }
}

// Conv shapes: the int8 sweep's kernels, strides, dilations, groups and activations (index
// >= 40: shapes too big for one conv buffer, split by rows or output channels).
void test_convolution_sweep(void** state) {
  (void)state;
  std::mt19937 rng(20261124);
  static const int kKernels[] = {1, 3, 5};
  static const char* kActivations[] = {"", "Relu", "Clip", "SiLU"};
  for (int index = 0; index < 46; ++index) {
    const bool big = index >= 40;
    const int kernel = big ? 3 : kKernels[uniform(rng, 0, 2)];
    const int stride = uniform(rng, 1, 2), dilation = big ? 1 : uniform(rng, 1, 2);
    const int grouping = uniform(rng, 0, 3);  // 0,1: dense; 2: depthwise; 3: 2 groups
    int channels_in = uniform(rng, 1, 40), channels_out = uniform(rng, 1, 40);
    int height = uniform(rng, 1, 12), width = uniform(rng, 1, 12);
    if (big && index % 2 == 0) {  // wide rows
      channels_in = uniform(rng, 40, 64), channels_out = uniform(rng, 1, 3);
      height = uniform(rng, 12, 16), width = uniform(rng, 180, 220);
    } else if (big) {  // weights beyond the banks
      channels_in = uniform(rng, 300, 360), channels_out = uniform(rng, 60, 90);
      height = width = 3;
    }
    int group = 1;
    if (grouping == 2) {
      group = channels_out = channels_in;
    } else if (grouping == 3 && !big) {
      channels_in = 2 * uniform(rng, 1, 20), channels_out = 2 * uniform(rng, 1, 20);
      group = 2;
    }
    const int extent = (kernel - 1) * dilation + 1, pad = kernel / 2;
    if (height + 2 * pad < extent || width + 2 * pad < extent) {
      --index;
      continue;
    }
    const int per_group = channels_in / group;
    const float spread = 1.0f / std::sqrt(float(per_group * kernel * kernel));
    std::vector<StoredTensor> inputs = {
        half_tensor("x", {1, channels_in, height, width},
                    random_halves(rng, size_t(channels_in) * height * width, 1.0f)),
        half_tensor("w", {channels_out, per_group, kernel, kernel},
                    random_halves(rng, size_t(channels_out) * per_group * kernel * kernel, spread),
                    true),
        half_tensor("b", {channels_out}, random_halves(rng, size_t(channels_out), 0.5f), true)};
    if (index % 5 == 4) inputs.pop_back();
    Attributes attributes = {{"kernel_shape", attr_ints({kernel, kernel})},
                             {"strides", attr_ints({stride, stride})},
                             {"dilations", attr_ints({dilation, dilation})},
                             {"pads", attr_ints({pad, pad, pad, pad})},
                             {"group", attr_int(group)}};
    const std::string activation = kActivations[index % 4];
    if (!activation.empty()) attributes["activation"] = attr_string(activation);
    if (activation == "Clip") {
      attributes["activation_min"] = attr_float(-0.5f);
      attributes["activation_max"] = attr_float(0.75f);
    }
    char description[200];
    std::snprintf(description, sizeof(description),
                  "fp16 conv case %d: %dx%dx%d -> %d, k %d s %d d %d g %d act '%s'", index,
                  channels_in, height, width, channels_out, kernel, stride, dilation, group,
                  activation.c_str());
    expect_float16_close("Conv", inputs, attributes, description);
  }
}

// Gemm and MatMul with a constant float16 B, as 1x1 convolutions (one classifier-sized case
// split by the CBUF along output channels).
void test_matrix_products(void** state) {
  (void)state;
  std::mt19937 rng(53);
  for (int index = 0; index < 8; ++index) {
    const bool gemm = index % 4 != 3, big = index == 7;
    const bool transpose_b = gemm && index % 2 == 1;
    const int m = big ? 1 : uniform(rng, 1, 20), k = big ? 1280 : uniform(rng, 1, 200);
    const int n = big ? 1000 : uniform(rng, 1, 100);
    std::vector<StoredTensor> inputs = {
        half_tensor("a", {m, k}, random_halves(rng, size_t(m) * k, 1.0f)),
        half_tensor("b", transpose_b ? graph::Shape{n, k} : graph::Shape{k, n},
                    random_halves(rng, size_t(k) * n, 1.0f / std::sqrt(float(k))), true)};
    if (gemm && index % 2 == 0) {
      inputs.push_back(half_tensor("c", {n}, random_halves(rng, size_t(n), 0.5f), true));
    }
    Attributes attributes;
    if (transpose_b) attributes["transB"] = attr_int(1);
    if (index % 3 == 1) attributes["activation"] = attr_string("Relu");
    expect_float16_close(
        gemm ? "Gemm" : "MatMul", inputs, attributes,
        std::string(gemm ? "Gemm" : "MatMul") + " fp16 case " + std::to_string(index));
  }
}

// A batch of float16 images: each image its own tasks, images spread over the cores.
void test_batch(void** state) {
  (void)state;
  std::mt19937 rng(59);
  expect_float16_close(
      "Conv",
      {half_tensor("x", {3, 12, 9, 7}, random_halves(rng, 3 * 12 * 9 * 7, 1.0f)),
       half_tensor("w", {20, 12, 3, 3}, random_halves(rng, 20 * 12 * 9, 0.1f), true)},
      {{"pads", attr_ints({1, 1, 1, 1})}, {"activation", attr_string("Relu")}}, "fp16 batch of 3");
}

void test_add_and_activations(void** state) {
  (void)state;
  std::mt19937 rng(41);
  for (int index = 0; index < 9; ++index) {
    const int channels = uniform(rng, 1, 40), height = uniform(rng, 1, 12),
              width = uniform(rng, 1, 12);
    const size_t count = size_t(channels) * height * width;
    const graph::Shape shape = {1, channels, height, width};
    const std::string description = "fp16 case " + std::to_string(index);
    if (index % 3 == 0) {
      expect_float16_close("Add",
                           {half_tensor("a", shape, random_halves(rng, count, 1.0f)),
                            half_tensor("b", shape, random_halves(rng, count, 1.0f))},
                           {}, "Add " + description);
    } else if (index % 3 == 1) {
      expect_float16_close("Relu", {half_tensor("x", shape, random_halves(rng, count, 1.0f))}, {},
                           "Relu " + description);
    } else {
      expect_float16_close(
          "Clip",
          {half_tensor("x", shape, random_halves(rng, count, 1.0f)),
           stored("low", DataType::kFloat32, {}, std::vector<float>{-0.25f}, {}, true),
           stored("high", DataType::kFloat32, {}, std::vector<float>{0.5f}, {}, true)},
          {}, "Clip " + description);
    }
  }
}

void test_pooling(void** state) {
  (void)state;
  std::mt19937 rng(43);
  for (int index = 0; index < 12; ++index) {
    const int kind = index % 3;
    const int channels = uniform(rng, 1, 40), height = uniform(rng, 1, 12),
              width = uniform(rng, 1, 12);
    const std::vector<StoredTensor> inputs = {
        half_tensor("x", {1, channels, height, width},
                    random_halves(rng, size_t(channels) * height * width, 1.0f))};
    Attributes attributes;
    std::string op = "GlobalAveragePool";
    if (kind != 2) {
      op = kind == 0 ? "MaxPool" : "AveragePool";
      const int kernel = std::min({uniform(rng, 1, 4), height, width});
      const int pad = uniform(rng, 0, (kernel - 1) / 2);
      attributes = {{"kernel_shape", attr_ints({kernel, kernel})},
                    {"strides", attr_ints({uniform(rng, 1, 2), uniform(rng, 1, 2)})},
                    {"pads", attr_ints({pad, pad, pad, pad})}};
      if (kind == 1) attributes["count_include_pad"] = attr_int(uniform(rng, 0, 1));
    }
    expect_float16_close(op, inputs, attributes, op + " fp16 case " + std::to_string(index));
  }
}

void test_concat(void** state) {
  (void)state;
  std::mt19937 rng(47);
  for (int index = 0; index < 4; ++index) {
    const int height = uniform(rng, 1, 8), width = uniform(rng, 1, 8);
    const int first = 8 * uniform(rng, 1, 4), second = uniform(rng, 1, 30);
    expect_float16_close("Concat",
                         {half_tensor("a", {1, first, height, width},
                                      random_halves(rng, size_t(first) * height * width, 1.0f)),
                          half_tensor("b", {1, second, height, width},
                                      random_halves(rng, size_t(second) * height * width, 1.0f))},
                         {{"axis", attr_int(1)}}, "fp16 concat case " + std::to_string(index));
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_convolution_sweep),
      cmocka_unit_test(test_matrix_products),
      cmocka_unit_test(test_batch),
      cmocka_unit_test(test_add_and_activations),
      cmocka_unit_test(test_pooling),
      cmocka_unit_test(test_concat),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
