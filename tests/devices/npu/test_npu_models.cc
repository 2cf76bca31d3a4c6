// Whole int8 networks (MobileNetV2, ResNet18, YOLOv5s-shaped; made by make_npu_models.py) on the
// emulated NPU: bit-exact with the CPU under every core mask, with most of their MACs on the NPU,
// and three cores modeled faster than one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "core/dtype.h"
#include "exec/executor.h"
#include "graph/graph_from_model.h"
#include "graph/shape_inference.h"
#include "model/model_file.h"
#include "npu_test_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;

std::shared_ptr<const graph::Graph> load(const std::string& name) {
  const char* directory = std::getenv("ORKNN_NPU_MODELS");
  if (!directory) fail_msg("ORKNN_NPU_MODELS is not set (make_npu_models.py --out DIR)");
  const std::string path = std::string(directory) + "/" + name + ".rknn";
  std::ifstream file(path, std::ios::binary);
  if (!file) fail_msg("cannot read %s", path.c_str());
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  auto model = model::ModelFile::parse(std::move(bytes));
  if (!model.ok()) fail_msg("%s: %s", path.c_str(), model.status().message().c_str());
  auto graph = graph::graph_from_model(*model);
  if (!graph.ok()) fail_msg("%s: %s", path.c_str(), graph.status().message().c_str());
  return *graph;
}

// MACs of the products (Conv, Gemm, MatMul) with the executor's shapes.
uint64_t node_macs(const graph::Graph& graph, const std::vector<graph::Shape>& shapes, size_t n) {
  const graph::Node& node = graph.nodes[n];
  if (node.outputs.empty() || node.inputs.size() < 2 || node.inputs[1] < 0) return 0;
  const uint64_t outputs =
      static_cast<uint64_t>(graph::element_count(shapes[size_t(node.outputs[0])]));
  const graph::Shape& weights = shapes[static_cast<size_t>(node.inputs[1])];
  if (node.op_type == "Conv") {
    uint64_t per_output = 1;
    for (size_t d = 1; d < weights.size(); ++d) per_output *= static_cast<uint64_t>(weights[d]);
    return outputs * per_output;
  }
  if (node.op_type == "Gemm" || node.op_type == "MatMul") {
    const graph::Shape& a = shapes[static_cast<size_t>(node.inputs[0])];
    return outputs * static_cast<uint64_t>(a.back());
  }
  return 0;
}

std::vector<std::vector<uint8_t>> random_inputs(exec::Executor& executor) {
  std::mt19937 rng(99);
  std::vector<std::vector<uint8_t>> inputs;
  const graph::Graph& graph = executor.graph();
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    std::vector<uint8_t> bytes(executor.input_bytes(i));
    const DataType type = graph.tensor(graph.inputs[i].tensor).data_type;
    if (type == DataType::kFloat16) {
      std::normal_distribution<float> normal;
      for (size_t k = 0; k + 2 <= bytes.size(); k += 2) {
        const Float16Bits value = float_to_half(normal(rng));
        std::memcpy(&bytes[k], &value, 2);
      }
    } else if (type == DataType::kFloat32) {
      std::normal_distribution<float> normal;
      for (size_t k = 0; k + 4 <= bytes.size(); k += 4) {
        const float value = normal(rng);
        std::memcpy(&bytes[k], &value, 4);
      }
    } else {
      for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(rng());
    }
    inputs.push_back(std::move(bytes));
  }
  return inputs;
}

std::vector<std::vector<uint8_t>> run(exec::Executor& executor,
                                      const std::vector<std::vector<uint8_t>>& inputs,
                                      exec::Profiler* profiler) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy(executor.input_data(i), inputs[i].data(), inputs[i].size());
  }
  const Status status = executor.run(profiler);
  if (!status.ok()) fail_msg("run: %s", status.message().c_str());
  std::vector<std::vector<uint8_t>> outputs;
  for (size_t o = 0; o < executor.graph().outputs.size(); ++o) {
    outputs.emplace_back(executor.output_data(o),
                         executor.output_data(o) + executor.output_bytes(o));
  }
  return outputs;
}

double modeled_milliseconds(const exec::Profiler& profiler) {
  double seconds = 0;
  for (const exec::NpuNodeTiming& timing : profiler.npu_timings()) {
    if (timing.valid) seconds += double(timing.cycles) / double(timing.clock_hz);
  }
  return seconds * 1e3;
}

// A model loaded for the CPU alone and for the emulated NPU (then the CPU), with random inputs
// and the CPU's outputs; at least 90% of its MACs must be on the NPU.
struct ModelRuns {
  std::shared_ptr<const graph::Graph> graph;
  std::unique_ptr<exec::Executor> cpu, npu;
  std::vector<std::vector<uint8_t>> inputs, expected;
};

ModelRuns prepare_model(const std::string& name) {
  ModelRuns runs;
  runs.graph = load(name);
  const auto shapes = graph::stored_input_shapes(*runs.graph);
  auto cpu = exec::Executor::create(runs.graph, shapes, {devices::make_cpu_device()});
  if (!cpu.ok()) fail_msg("%s on the CPU: %s", name.c_str(), cpu.status().message().c_str());
  auto npu_device = devices::make_npu_device(driver_shim::make_emulated_npu(3));
  auto npu = exec::Executor::create(runs.graph, shapes, {npu_device, devices::make_cpu_device()});
  if (!npu.ok()) fail_msg("%s on the NPU: %s", name.c_str(), npu.status().message().c_str());
  runs.cpu = std::move(*cpu);
  runs.npu = std::move(*npu);
  runs.inputs = random_inputs(*runs.cpu);
  runs.expected = run(*runs.cpu, runs.inputs, nullptr);
  uint64_t total = 0, on_npu = 0;
  for (size_t n = 0; n < runs.graph->nodes.size(); ++n) {
    const uint64_t macs = node_macs(*runs.graph, runs.npu->shapes(), n);
    total += macs;
    if (std::strcmp(runs.npu->node_target(n), "NPU") == 0) on_npu += macs;
  }
  const double share = total ? double(on_npu) / double(total) : 0.0;
  std::printf("%s: %.1f%% of %llu MACs on the NPU\n", name.c_str(), share * 100.0,
              static_cast<unsigned long long>(total));
  assert_true(share >= 0.90);
  return runs;
}

// Runs `name` on the CPU, then on the NPU under each core mask; returns the modeled NPU time of
// the given masks.
void check_model(const std::string& name, double* one_core_ms, double* three_core_ms,
                 size_t* folded_nodes = nullptr) {
  ModelRuns runs = prepare_model(name);
  const auto& graph = runs.graph;
  const auto& inputs = runs.inputs;
  const auto& expected = runs.expected;
  auto* npu = &runs.npu;
  for (uint32_t mask : {1u, 2u, 4u, 3u, 7u, 0u}) {
    (*npu)->set_run_options({mask, 0});
    exec::Profiler profiler;
    const auto actual = run(**npu, inputs, &profiler);
    assert_int_equal(actual.size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o) {
      if (actual[o] != expected[o]) {
        size_t first = 0;
        while (first < actual[o].size() && actual[o][first] == expected[o][first]) ++first;
        fail_msg("%s core mask %u: output %zu differs from the CPU at byte %zu", name.c_str(), mask,
                 o, first);
      }
    }
    // Add and activation nodes folded into the layer before them report no cycles of their own.
    size_t folded = 0;
    for (size_t n = 0; n < graph->nodes.size(); ++n) {
      const exec::NpuNodeTiming& timing = profiler.npu_timings()[n];
      folded += timing.valid && timing.cycles == 0 && graph->nodes[n].op_type != "Conv";
    }
    if (folded_nodes) *folded_nodes = folded;
    const double modeled = modeled_milliseconds(profiler);
    std::printf("%s core mask %u: identical to the CPU, modeled NPU time %.3f ms (emulated)\n",
                name.c_str(), mask, modeled);
    if (mask == 1 && one_core_ms) *one_core_ms = modeled;
    if (mask == 7 && three_core_ms) *three_core_ms = modeled;
  }
}

// An output's values as floats (float16 or float32 outputs).
std::vector<float> output_values(const graph::Graph& graph, size_t output,
                                 const std::vector<uint8_t>& bytes) {
  std::vector<float> values;
  if (graph.tensor(graph.outputs[output]).data_type == DataType::kFloat16) {
    for (size_t k = 0; k + 2 <= bytes.size(); k += 2) {
      Float16Bits half;
      std::memcpy(&half, &bytes[k], 2);
      values.push_back(half_to_float(half));
    }
  } else {
    values.resize(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), values.size() * 4);
  }
  return values;
}

// A float16 network: at least 90% of its MACs on the NPU, two and three cores giving the bits of
// one core, and each output within kModelRelative |ref| + kModelAbsolute max|ref| of the CPU's
// float32 arithmetic on the same float16 model (docs/npu.md section 6).
constexpr float kModelRelative = 1.0f / 128, kModelAbsolute = 1.0f / 128;

void check_float16_model(const std::string& name, double* one_core_ms, double* three_core_ms) {
  ModelRuns runs = prepare_model(name);
  const auto& graph = runs.graph;
  const auto& inputs = runs.inputs;
  const auto& expected = runs.expected;
  auto* npu = &runs.npu;
  std::vector<std::vector<uint8_t>> one_core;
  for (uint32_t mask : {1u, 3u, 7u}) {  // one, two and three cores
    (*npu)->set_run_options({mask, 0});
    exec::Profiler profiler;
    const auto actual = run(**npu, inputs, &profiler);
    if (mask == 1) one_core = actual;
    if (actual != one_core)
      fail_msg("%s core mask %u: bits differ from one core", name.c_str(), mask);
    const double modeled = modeled_milliseconds(profiler);
    std::printf("%s core mask %u: identical to one core, modeled NPU time %.3f ms (emulated)\n",
                name.c_str(), mask, modeled);
    if (mask == 1 && one_core_ms) *one_core_ms = modeled;
    if (mask == 7 && three_core_ms) *three_core_ms = modeled;
  }
  for (size_t o = 0; o < expected.size(); ++o) {
    const std::vector<float> reference = output_values(*graph, o, expected[o]);
    const std::vector<float> values = output_values(*graph, o, one_core[o]);
    assert_int_equal(values.size(), reference.size());
    float largest = 0.0f, worst = 0.0f;
    for (float value : reference) largest = std::max(largest, std::fabs(value));
    for (size_t i = 0; i < values.size(); ++i) {
      const float error = std::fabs(values[i] - reference[i]);
      worst = std::max(worst, error / (std::fabs(reference[i]) + largest));
      if (!(error <= kModelRelative * std::fabs(reference[i]) + kModelAbsolute * largest)) {
        fail_msg("%s output %zu element %zu: cpu %g npu %g", name.c_str(), o, i,
                 double(reference[i]), double(values[i]));
      }
    }
    std::printf("%s output %zu: largest |npu - cpu| / (|cpu| + max|cpu|) = %.2e\n", name.c_str(), o,
                double(worst));
  }
}

void test_float16_models(void** state) {
  (void)state;
  double one = 0, three = 0;
  check_float16_model("mobilenet_v2_64_fp16", &one, &three);
  std::printf("MobileNetV2 fp16 (64x64) modeled: one core %.3f ms, three cores %.3f ms\n", one,
              three);
  assert_true(three < one);
  check_float16_model("resnet18_64_fp16", nullptr, nullptr);
  check_float16_model("yolov5s_96_fp16", nullptr, nullptr);
}

void test_mobilenet_v2(void** state) {
  (void)state;
  double one = 0, three = 0;
  check_model("mobilenet_v2_64", &one, &three);
  std::printf("MobileNetV2 (64x64) modeled: one core %.3f ms, three cores %.3f ms\n", one, three);
  assert_true(three < one);
}

void test_resnet18(void** state) {
  (void)state;
  size_t folded = 0;
  check_model("resnet18_64", nullptr, nullptr, &folded);
  std::printf("resnet18_64: %zu Add/Relu nodes fused into the layer before them\n", folded);
  assert_true(folded >= 8);  // eight residual Adds, each with its Relu
}

void test_yolov5s(void** state) {
  (void)state;
  // The converter fuses SiLU into each Conv; those run on the NPU with the DPU's SiLU epilogue
  // (docs/quantization.md 4.3), so the model keeps its MACs on the NPU and stays bit-exact.
  // The bottlenecks' shortcut Adds fold into the SiLU Conv before them: epilogue, then Add.
  double one = 0, three = 0;
  size_t folded = 0;
  check_model("yolov5s_96", &one, &three, &folded);
  std::printf(
      "YOLOv5s-shaped (96x96) modeled: one core %.3f ms, three cores %.3f ms; %zu nodes "
      "folded into the SiLU Conv before them\n",
      one, three, folded);
  assert_true(three < one);
  assert_true(folded >= 1);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mobilenet_v2),
      cmocka_unit_test(test_resnet18),
      cmocka_unit_test(test_yolov5s),
      cmocka_unit_test(test_float16_models),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
