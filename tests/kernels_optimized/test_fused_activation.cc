// The CPU device's fusion of a binary node with the activation that alone reads its result (a
// residual Add and its Relu): the fused kernel's outputs against the two nodes run one by one
// on the reference variant, bit for bit (float32 and int8), for every optimized variant; and no
// fusion when the result has another reader, is a graph output, or the activation is not one
// the fused kernel computes.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/op_test_harness.h"
#include "devices/device.h"
#include "dispatch.h"
#include "exec/executor.h"
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

graph::Quantization per_tensor(float scale, int32_t zero_point) {
  return graph::Quantization{{scale}, {zero_point}, 0};
}

struct Tensors {
  DataType type;
  graph::Quantization a, b, sum, activated;
};

// x (input) op c (constant, broadcast per channel or full) -> activation -> output; with
// `second_reader` the binary result also feeds a Neg whose output is a second graph output.
std::shared_ptr<const graph::Graph> make_graph(const char* op_type, const char* activation,
                                               const Tensors& tensors, bool per_channel,
                                               bool second_reader, bool result_is_output) {
  auto storage = std::make_shared<std::vector<std::vector<uint8_t>>>();
  graph::Graph graph;
  graph.storage = storage;
  auto add = [&](const std::string& name, const Shape& shape, const graph::Quantization& q) {
    graph::Tensor tensor;
    tensor.name = name;
    tensor.shape = shape;
    tensor.data_type = tensors.type;
    tensor.quantization = q;
    graph.tensors.push_back(tensor);
    return static_cast<int32_t>(graph.tensors.size() - 1);
  };
  const Shape shape{1, 5, 37, 41};
  const int32_t x = add("x", shape, tensors.a);
  graph.inputs.push_back({x, {}, {}, false, false});
  const Shape c_shape = per_channel ? Shape{1, 5, 1, 1} : shape;
  const int32_t c = add("c", c_shape, tensors.b);
  Random random(17);
  const size_t c_count = static_cast<size_t>(graph::element_count(c_shape));
  storage->push_back(tensors.type == DataType::kInt8
                         ? to_bytes(random.codes(c_count, 1, 127))
                         : to_bytes(random.floats(c_count, 0.5f, 2.0f)));
  graph::Tensor& constant = graph.tensors[static_cast<size_t>(c)];
  constant.constant = true;
  constant.constant_data = storage->back().data();
  constant.constant_size = storage->back().size();
  const int32_t sum = add("sum", shape, tensors.sum);
  const int32_t out = add("out", shape, tensors.activated);
  graph.nodes.push_back({"binary", op_type, {x, c}, {sum}, {}});
  graph.nodes.push_back({"activation", activation, {sum}, {out}, {}});
  if (std::string(activation) == "LeakyRelu")
    graph.nodes.back().attributes = {{"alpha", attr_float(0.2f)}};
  graph.outputs = {out};
  if (second_reader) {
    const int32_t negated = add("negated", shape, tensors.sum);
    graph.nodes.push_back({"other", "Neg", {sum}, {negated}, {}});
    graph.outputs.push_back(negated);
  }
  if (result_is_output) graph.outputs.push_back(sum);
  return std::make_shared<const graph::Graph>(std::move(graph));
}

std::vector<std::vector<uint8_t>> run(std::shared_ptr<const graph::Graph> graph,
                                      KernelVariant variant) {
  kernels::cpu::ScopedKernelVariant force(variant);
  ThreadPool pool(2);
  ThreadPool::Scope scope(&pool);
  auto executor = exec::Executor::create(graph, {graph->tensor(graph->inputs[0].tensor).shape},
                                         {devices::make_cpu_device()});
  if (!executor.ok()) fail_msg("Executor::create: %s", executor.status().message().c_str());
  uint8_t* input = executor.value()->input_data(0);
  Random random(3);
  const size_t bytes = executor.value()->input_bytes(0);
  const std::vector<int8_t> codes = random.codes(bytes);
  const std::vector<float> floats = random.floats(bytes / sizeof(float), -2.0f, 2.0f);
  std::memcpy(input,
              graph->tensor(0).data_type == DataType::kInt8
                  ? static_cast<const void*>(codes.data())
                  : static_cast<const void*>(floats.data()),
              bytes);
  const Status ran = executor.value()->run(nullptr);
  if (!ran.ok()) fail_msg("run: %s", ran.message().c_str());
  std::vector<std::vector<uint8_t>> outputs;
  for (size_t o = 0; o < graph->outputs.size(); ++o) {
    const uint8_t* data = executor.value()->output_data(o);
    outputs.emplace_back(data, data + executor.value()->output_bytes(o));
  }
  return outputs;
}

// Bit for bit, except float32 Sigmoid (not fused; its optimized kernel is within 1e-6).
void expect_same(std::shared_ptr<const graph::Graph> graph, const std::string& what) {
  const auto expected = run(graph, KernelVariant::kReference);
  const bool approximate =
      graph->tensor(0).data_type == DataType::kFloat32 && graph->nodes[1].op_type == "Sigmoid";
  for (KernelVariant variant : optimized_variants()) {
    const auto outputs = run(graph, variant);
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (approximate) {
        const std::string mismatch =
            compare_floats(from_bytes<float>(outputs[o]), from_bytes<float>(expected[o]), 1e-5);
        if (!mismatch.empty()) fail_msg("%s: %s", what.c_str(), mismatch.c_str());
      } else if (outputs[o] != expected[o]) {
        fail_msg("%s, %s: output %zu differs from the reference", what.c_str(),
                 kernel_variant_name(variant), o);
      }
    }
  }
}

const Tensors kFloat{DataType::kFloat32, {}, {}, {}, {}};
const Tensors kInt8{DataType::kInt8, per_tensor(0.05f, 3), per_tensor(0.02f, -5),
                    per_tensor(0.1f, -2), per_tensor(0.08f, -128)};
const Tensors kInt8SameRelu{DataType::kInt8, per_tensor(0.05f, 3), per_tensor(0.02f, -5),
                            per_tensor(0.1f, -2), per_tensor(0.1f, -2)};

void test_fused_matches_separate_nodes(void**) {
  for (const char* op_type : {"Add", "Sub", "Mul", "Div"}) {
    for (const char* activation : {"Relu", "LeakyRelu", "HardSwish", "Sigmoid"}) {
      for (bool per_channel : {false, true}) {
        for (const Tensors* tensors : {&kFloat, &kInt8, &kInt8SameRelu}) {
          expect_same(make_graph(op_type, activation, *tensors, per_channel, false, false),
                      std::string(op_type) + " + " + activation +
                          (tensors == &kFloat ? " float32" : " int8") +
                          (per_channel ? " per channel" : ""));
        }
      }
    }
  }
}

// A result read by a second node or returned as an output is computed and kept.
void test_observed_results_are_not_fused(void**) {
  for (const Tensors* tensors : {&kFloat, &kInt8}) {
    expect_same(make_graph("Add", "Relu", *tensors, false, true, false), "second reader");
    expect_same(make_graph("Add", "Relu", *tensors, false, false, true), "result as output");
  }
}

// A squeeze-excitation gate: x -> GlobalAveragePool -> Sigmoid -> gate; Mul(x, gate) -> Relu,
// fused, reads the per-channel gate while it writes the Relu's output. The gate dies at the
// Mul, and a plan that started the output at the Relu's step put it on the gate's bytes
// (exec/memory_planner.h: a fused run's output lives from its first step).
void test_fused_output_keeps_off_a_dying_broadcast_operand(void**) {
  graph::Graph graph;
  auto add = [&](const std::string& name, const Shape& shape) {
    graph::Tensor tensor;
    tensor.name = name;
    tensor.shape = shape;
    tensor.data_type = DataType::kFloat32;
    graph.tensors.push_back(tensor);
    return static_cast<int32_t>(graph.tensors.size() - 1);
  };
  const Shape shape{1, 16, 9, 9};
  const int32_t x = add("x", shape);
  const int32_t pooled = add("pooled", {1, 16, 1, 1});
  const int32_t gate = add("gate", {1, 16, 1, 1});
  const int32_t scaled = add("scaled", shape);
  const int32_t activated = add("activated", shape);
  const int32_t y = add("y", shape);
  graph.inputs.push_back({x, {}, {}, false, false});
  graph.nodes.push_back({"pool", "GlobalAveragePool", {x}, {pooled}, {}});
  graph.nodes.push_back({"sigmoid", "Sigmoid", {pooled}, {gate}, {}});
  graph.nodes.push_back({"gate", "Mul", {x, gate}, {scaled}, {}});
  graph.nodes.push_back({"relu", "Relu", {scaled}, {activated}, {}});
  graph.nodes.push_back({"negate", "Neg", {activated}, {y}, {}});
  graph.outputs = {y};
  auto shared = std::make_shared<const graph::Graph>(std::move(graph));
  const auto expected = run(shared, KernelVariant::kReference);
  for (KernelVariant variant : optimized_variants()) {
    const std::string mismatch = compare_floats(from_bytes<float>(run(shared, variant)[0]),
                                                from_bytes<float>(expected[0]), 1e-5);
    if (!mismatch.empty()) {
      fail_msg("%s: %s", kernel_variant_name(variant), mismatch.c_str());
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_matches_separate_nodes),
      cmocka_unit_test(test_observed_results_are_not_fused),
      cmocka_unit_test(test_fused_output_keeps_off_a_dying_broadcast_operand),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
