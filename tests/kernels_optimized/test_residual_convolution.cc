// The CPU device's fusion of a float32 Conv with the residual Add that alone reads its result
// and the activation after the Add (graph/fusion_chains.h, kernels/cpu/dispatch.h
// ResidualAddition): on every optimized variant the fused run's output is bit for bit the one
// of the same graph run node by node (the Conv's result made a graph output, which keeps it
// unfused), for the drivers that take the Add (the GEMM, the lanes) and the ones that do not,
// with the Add's operands either way round, with and without bias and activation; and the
// fused kernel is built where the drivers take it.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/op_test_harness.h"
#include "devices/cpu/cpu_kernel_registry.h"
#include "devices/device.h"
#include "dispatch.h"
#include "exec/executor.h"
#include "graph/fusion_chains.h"
#include "kernels_optimized/optimized_test_support.h"

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
using kernels::cpu::kernel_variant_name;
using kernels::cpu::KernelVariant;

struct Layer {
  const char* name;
  int64_t input_channels, size, output_channels, kernel, stride;
};

struct Options {
  bool residual_first = false;  // Add(residual, conv)
  bool bias = true;
  const char* activation = "Relu";   // nullptr: the Add's result is the output
  bool observe_convolution = false;  // the Conv's result is also a graph output: no fusion
};

// x -> Conv(W, B) -> Add with r -> activation -> out; x and r are graph inputs.
std::shared_ptr<const graph::Graph> make_graph(const Layer& layer, const Options& options) {
  auto storage = std::make_shared<std::vector<std::vector<uint8_t>>>();
  graph::Graph graph;
  graph.storage = storage;
  auto add = [&](const std::string& name, const Shape& shape) {
    graph::Tensor tensor;
    tensor.name = name;
    tensor.shape = shape;
    tensor.data_type = DataType::kFloat32;
    graph.tensors.push_back(tensor);
    return static_cast<int32_t>(graph.tensors.size() - 1);
  };
  auto constant = [&](const std::string& name, const Shape& shape, uint32_t seed) {
    const int32_t index = add(name, shape);
    Random random(seed);
    storage->push_back(
        to_bytes(random.floats(static_cast<size_t>(graph::element_count(shape)), -0.5f, 0.5f)));
    graph::Tensor& tensor = graph.tensors[static_cast<size_t>(index)];
    tensor.constant = true;
    tensor.constant_data = storage->back().data();
    tensor.constant_size = storage->back().size();
    return index;
  };
  const int64_t pad = layer.kernel / 2;
  const int64_t out_size = (layer.size + 2 * pad - layer.kernel) / layer.stride + 1;
  const Shape output_shape{1, layer.output_channels, out_size, out_size};
  const int32_t x = add("x", {1, layer.input_channels, layer.size, layer.size});
  const int32_t r = add("r", output_shape);
  graph.inputs.push_back({x, {}, {}, false, false});
  graph.inputs.push_back({r, {}, {}, false, false});
  const int32_t w =
      constant("w", {layer.output_channels, layer.input_channels, layer.kernel, layer.kernel}, 5);
  std::vector<int32_t> conv_inputs{x, w};
  if (options.bias) conv_inputs.push_back(constant("b", {layer.output_channels}, 6));
  const int32_t c = add("c", output_shape);
  const int32_t s = add("s", output_shape);
  graph.nodes.push_back({"conv", "Conv", conv_inputs, {c}, {}});
  graph.nodes.back().attributes = {{"kernel_shape", attr_ints({layer.kernel, layer.kernel})},
                                   {"pads", attr_ints({pad, pad, pad, pad})},
                                   {"strides", attr_ints({layer.stride, layer.stride})}};
  graph.nodes.push_back(
      {"add",
       "Add",
       options.residual_first ? std::vector<int32_t>{r, c} : std::vector<int32_t>{c, r},
       {s},
       {}});
  int32_t out = s;
  if (options.activation) {
    out = add("out", output_shape);
    graph.nodes.push_back({"activation", options.activation, {s}, {out}, {}});
    if (std::string(options.activation) == "LeakyRelu")
      graph.nodes.back().attributes = {{"alpha", attr_float(0.2f)}};
  }
  graph.outputs = {out};
  if (options.observe_convolution) graph.outputs.push_back(c);
  return std::make_shared<const graph::Graph>(std::move(graph));
}

// A quiet NaN with `payload` in its low mantissa bits.
float nan_with_payload(uint32_t payload) {
  const uint32_t bits = 0x7FC00000u | payload;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The first output's bytes, on `threads` threads. With `nans`, x's first element and every
// third element of the residual are NaNs (of different payloads): the outputs whose window
// holds x's NaN add two NaNs, others a NaN and a number, and the activation must keep them.
// Which payload an add of two NaNs returns is the compiler's choice (it commutes additions,
// in the element-wise rows too): without_payloads() compares NaNs as NaNs.
std::vector<uint8_t> run(std::shared_ptr<const graph::Graph> graph, KernelVariant variant,
                         size_t threads, bool nans = false) {
  kernels::cpu::ScopedKernelVariant force(variant);
  ThreadPool pool(threads);
  ThreadPool::Scope scope(&pool);
  std::vector<Shape> input_shapes;
  for (const graph::GraphInput& input : graph->inputs)
    input_shapes.push_back(graph->tensor(input.tensor).shape);
  auto executor = exec::Executor::create(graph, input_shapes, {devices::make_cpu_device()});
  if (!executor.ok()) fail_msg("Executor::create: %s", executor.status().message().c_str());
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    Random random(static_cast<uint32_t>(11 + i));
    const size_t bytes = executor.value()->input_bytes(i);
    std::vector<float> values = random.floats(bytes / sizeof(float), -2.0f, 2.0f);
    if (nans && i == 0) values[0] = nan_with_payload(1);
    for (size_t k = 0; nans && i == 1 && k < values.size(); k += 3) values[k] = nan_with_payload(2);
    std::memcpy(executor.value()->input_data(i), values.data(), bytes);
  }
  const Status ran = executor.value()->run(nullptr);
  if (!ran.ok()) fail_msg("run: %s", ran.message().c_str());
  const uint8_t* data = executor.value()->output_data(0);
  return std::vector<uint8_t>(data, data + executor.value()->output_bytes(0));
}

// The bytes of float32 values with every NaN made the default quiet NaN.
std::vector<uint8_t> without_payloads(std::vector<uint8_t> bytes) {
  for (size_t i = 0; i + sizeof(float) <= bytes.size(); i += sizeof(float)) {
    float value;
    std::memcpy(&value, &bytes[i], sizeof(value));
    if (value != value) {
      const float canonical = nan_with_payload(0);
      std::memcpy(&bytes[i], &canonical, sizeof(canonical));
    }
  }
  return bytes;
}

// Whether the CPU device builds the Conv, Add (and activation) as one kernel on `variant`: the
// nodes form a run (graph/fusion_chains.h) and the kernels take it.
bool fuses(std::shared_ptr<const graph::Graph> graph, KernelVariant variant) {
  if (graph::fusion_runs(*graph)[0].kind != graph::FusionRun::Kind::kResidualConvolution) {
    return false;
  }
  kernels::cpu::ScopedKernelVariant force(variant);
  std::vector<Shape> shapes;
  for (const graph::Tensor& tensor : graph->tensors) shapes.push_back(tensor.shape);
  const graph::Node* activation = graph->nodes.size() > 2 ? &graph->nodes[2] : nullptr;
  auto kernel = devices::cpu::build_residual_convolution_kernel(
      *graph, graph->nodes[0], graph->nodes[1], activation, shapes);
  if (!kernel.ok() && kernel.status().code() != StatusCode::kUnimplemented) {
    fail_msg("build_residual_convolution_kernel: %s", kernel.status().message().c_str());
  }
  return kernel.ok();
}

// The GEMM's pointwise and im2col paths (column blocks narrower than the plane at 56x56), a
// depth over several chunks (the tiles add the residual on the last one only), the lanes' 7x7
// outputs, Winograd F(4x4) (from 64 channels on avx512) and a 3x3 layer whose driver (the
// direct tiles on avx512) does not take the Add.
// clang-format off
const Layer kLayers[] = {
    {"1x1 32->48 @56", 32, 56, 48, 1, 1},
    {"1x1/2 24->40 @30", 24, 30, 40, 1, 2},
    {"1x1 1100->100 @14", 1100, 14, 100, 1, 1},
    {"1x1 512->256 @7", 512, 7, 256, 1, 1},
    {"3x3 16->16 @20", 16, 20, 16, 3, 1},
    {"3x3 64->64 @18", 64, 18, 64, 3, 1},
};
// clang-format on

void test_fused_matches_separate_nodes(void**) {
  int fused_layers = 0;
  for (const Layer& layer : kLayers) {
    // HardSwish: the avx512 tiles take Relu and LeakyRelu after the Add, the row pass the rest.
    for (const char* activation :
         {"Relu", "LeakyRelu", "HardSwish", static_cast<const char*>(nullptr)}) {
      for (bool residual_first : {false, true}) {
        Options options;
        options.activation = activation;
        options.residual_first = residual_first;
        options.bias = !residual_first;
        const auto graph = make_graph(layer, options);
        options.observe_convolution = true;
        const auto separate = make_graph(layer, options);
        for (KernelVariant variant : optimized_variants()) {
          const std::string what =
              std::string(layer.name) + " + " + (activation ? activation : "no activation") +
              (residual_first ? ", Add(residual, conv)" : "") + ", " + kernel_variant_name(variant);
          fused_layers += fuses(graph, variant) ? 1 : 0;
          assert_false(fuses(separate, variant));
          for (size_t threads : {size_t{1}, size_t{3}}) {
            if (run(graph, variant, threads) != run(separate, variant, threads)) {
              fail_msg("%s, %zu threads: the fused output differs from the nodes run apart",
                       what.c_str(), threads);
            }
          }
          if (without_payloads(run(graph, variant, 2, true)) !=
              without_payloads(run(separate, variant, 2, true))) {
            fail_msg("%s, NaN operands: the fused output differs from the nodes run apart",
                     what.c_str());
          }
        }
      }
    }
  }
  // The GEMM takes the Add on every optimized variant: at least the first three layers.
  assert_true(fused_layers >= 3 * 4 * 2 * static_cast<int>(optimized_variants().size()));
}

// The lanes (avx2 and avx512 on 7x7 outputs with 256 or more channels) and the Winograd
// convolution (both x86 variants on 3x3 64->64) take it too.
void test_lanes_and_winograd_take_the_add(void**) {
  for (const Layer* layer : {&kLayers[3], &kLayers[5]}) {
    const auto graph = make_graph(*layer, Options{});
    for (KernelVariant variant : {KernelVariant::kAvx2, KernelVariant::kAvx512}) {
      if (!kernels::cpu::kernel_variant_available(variant)) {
        std::printf("SKIPPED %s: not available on this CPU\n", kernel_variant_name(variant));
        continue;
      }
      if (!fuses(graph, variant)) {
        fail_msg("%s, %s: not fused", layer->name, kernel_variant_name(variant));
      }
    }
  }
}

// Nothing is fused on the reference variant, nor with an activation the rows do not compute
// with the reference's bits (Sigmoid: the Conv and the Add are fused, the Sigmoid runs apart).
void test_not_fused(void**) {
  assert_false(fuses(make_graph(kLayers[0], Options{}), KernelVariant::kReference));
  Options sigmoid;
  sigmoid.activation = "Sigmoid";
  const auto graph = make_graph(kLayers[0], sigmoid);
  sigmoid.observe_convolution = true;
  const auto separate = make_graph(kLayers[0], sigmoid);
  for (KernelVariant variant : optimized_variants()) {
    assert_false(fuses(graph, variant));
    if (run(graph, variant, 2) != run(separate, variant, 2)) {
      fail_msg("Sigmoid, %s: the output differs from the nodes run apart",
               kernel_variant_name(variant));
    }
  }
}

// Where a convolution takes no residual (the direct tiles under 3x3 16->16), the Add still runs
// with its Relu as one step: the Add's own result tensor is never written.
void test_unfused_residual_add_keeps_its_activation(void**) {
  const auto graph = make_graph(kLayers[4], Options{});
  std::vector<Shape> shapes;
  for (const graph::Tensor& tensor : graph->tensors) shapes.push_back(tensor.shape);
  std::vector<size_t> nodes(graph->nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
  int checked = 0;
  for (KernelVariant variant : optimized_variants()) {
    if (fuses(graph, variant)) continue;
    kernels::cpu::ScopedKernelVariant force(variant);
    ThreadPool pool(2);
    ThreadPool::Scope scope(&pool);
    auto executable = devices::make_cpu_device()->compile(*graph, nodes, shapes);
    if (!executable.ok()) fail_msg("compile: %s", executable.status().message().c_str());
    std::vector<std::vector<float>> buffers(graph->tensors.size());
    std::vector<void*> addresses(graph->tensors.size(), nullptr);
    constexpr float kUntouched = -12345.0f;
    for (size_t i = 0; i < graph->tensors.size(); ++i) {
      const graph::Tensor& tensor = graph->tensors[i];
      if (tensor.is_constant()) {
        addresses[i] = const_cast<uint8_t*>(tensor.constant_data);
        continue;
      }
      Random random(static_cast<uint32_t>(31 + i));
      buffers[i] =
          random.floats(static_cast<size_t>(graph::element_count(tensor.shape)), -2.0f, 2.0f);
      if (tensor.name == "s" || tensor.name == "out") {
        std::fill(buffers[i].begin(), buffers[i].end(), kUntouched);
      }
      addresses[i] = buffers[i].data();
    }
    const Status bound = executable.value()->bind(addresses);
    if (!bound.ok()) fail_msg("bind: %s", bound.message().c_str());
    const Status ran = executable.value()->run(nullptr);
    if (!ran.ok()) fail_msg("run: %s", ran.message().c_str());
    for (size_t i = 0; i < graph->tensors.size(); ++i) {
      if (graph->tensors[i].name == "s") {
        for (float value : buffers[i]) assert_true(value == kUntouched);  // fused with the Relu
      }
      if (graph->tensors[i].name == "out") {
        for (float value : buffers[i]) assert_true(value >= 0.0f);  // the Relu's output
      }
    }
    ++checked;
  }
  std::printf("%d variants ran the Add and its Relu as one step after an unfused Conv\n", checked);
  assert_true(checked > 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_matches_separate_nodes),
      cmocka_unit_test(test_lanes_and_winograd_take_the_add),
      cmocka_unit_test(test_not_fused),
      cmocka_unit_test(test_unfused_residual_add_keeps_its_activation),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
