#include "devices/gpu/gpu_test_support.h"

#include <cmath>
#include <cstdio>
#include <memory>

#include "devices/device.h"
#include "exec/executor.h"

// cmocka after the standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include <cmocka.h>
}

namespace orknn::testing {

bool gpu_available() {
  const std::string reason = devices::gpu_unavailable_reason();
  if (!reason.empty()) std::printf("no GPU device, skipping: %s\n", reason.c_str());
  return reason.empty();
}

std::vector<float> Randomizer::values(const graph::Shape& shape, float low, float high) {
  std::vector<float> result(static_cast<size_t>(graph::element_count(shape)));
  std::uniform_real_distribution<float> distribution(low, high);
  for (float& value : result) value = distribution(engine_);
  return result;
}

StoredTensor real_tensor(const std::string& name, const graph::Shape& shape,
                         const std::vector<float>& values, bool constant) {
  return stored(name, DataType::kFloat32, shape, values, {}, constant);
}

StoredTensor int64_tensor(const std::string& name, const graph::Shape& shape,
                          const std::vector<int64_t>& values) {
  return stored(name, DataType::kInt64, shape, values, {}, true);
}

namespace {

StoredTensor in_precision(const StoredTensor& tensor, DataType precision) {
  if (precision != DataType::kFloat16 || tensor.data_type != DataType::kFloat32 ||
      tensor.name.rfind("keep_", 0) == 0) {
    return tensor;
  }
  const std::vector<float> values = from_bytes<float>(tensor.bytes);
  std::vector<Float16Bits> halves;
  for (float value : values) halves.push_back(float_to_half(value));
  StoredTensor converted = tensor;
  converted.data_type = DataType::kFloat16;
  converted.bytes = to_bytes(halves);
  return converted;
}

std::vector<float> decode(const std::vector<uint8_t>& bytes, DataType type) {
  if (type == DataType::kFloat32) return from_bytes<float>(bytes);
  std::vector<float> values;
  for (Float16Bits half : from_bytes<Float16Bits>(bytes)) values.push_back(half_to_float(half));
  return values;
}

}  // namespace

void expect_gpu_matches_cpu(const std::string& what, const std::string& op_type,
                            const std::vector<StoredTensor>& float_inputs,
                            const Attributes& attributes, DataType precision, double tolerance) {
  std::vector<StoredTensor> inputs;
  for (const StoredTensor& tensor : float_inputs) inputs.push_back(in_precision(tensor, precision));
  Result<graph::Graph> built = single_node_graph(op_type, inputs, attributes, {{precision, {}}});
  if (!built.ok()) fail_msg("%s: %s", what.c_str(), built.status().message().c_str());
  const StoredRun expected = run_single_node(built.value(), inputs);
  if (!expected.status.ok())
    fail_msg("%s: CPU: %s", what.c_str(), expected.status.message().c_str());

  auto graph = std::make_shared<const graph::Graph>(std::move(built.value()));
  std::vector<graph::Shape> input_shapes;
  for (const graph::GraphInput& input : graph->inputs) {
    input_shapes.push_back(graph->tensor(input.tensor).shape);
  }
  exec::PlacementOptions everything_on_gpu;
  everything_on_gpu.gpu_for_every_supported_node = true;
  auto executor = exec::Executor::create(graph, input_shapes,
                                         {devices::make_gpu_device(), devices::make_cpu_device()},
                                         exec::ExecutorOptions(everything_on_gpu));
  if (!executor.ok()) fail_msg("%s: GPU: %s", what.c_str(), executor.status().message().c_str());
  if (std::string(executor.value()->node_target(0)) != "GPU") {
    fail_msg("%s: the node ran on %s, not on the GPU", what.c_str(),
             executor.value()->node_target(0));
  }
  size_t graph_input = 0;
  for (const StoredTensor& tensor : inputs) {
    if (tensor.name.empty() || tensor.constant) continue;
    assert_int_equal(executor.value()->input_bytes(graph_input), tensor.bytes.size());
    std::copy(tensor.bytes.begin(), tensor.bytes.end(), executor.value()->input_data(graph_input));
    ++graph_input;
  }
  const Status ran = executor.value()->run(nullptr);
  if (!ran.ok()) fail_msg("%s: GPU run: %s", what.c_str(), ran.message().c_str());
  const uint8_t* output = executor.value()->output_data(0);
  const std::vector<float> actual =
      decode(std::vector<uint8_t>(output, output + executor.value()->output_bytes(0)), precision);
  const std::vector<float> reference = decode(expected.outputs[0], precision);
  if (actual.size() != reference.size()) {
    fail_msg("%s: %zu output values, the CPU gave %zu", what.c_str(), actual.size(),
             reference.size());
  }
  double largest = 1.0;
  for (float value : reference) largest = std::max(largest, std::fabs(static_cast<double>(value)));
  for (size_t i = 0; i < actual.size(); ++i) {
    const double difference = std::fabs(static_cast<double>(actual[i]) - reference[i]);
    if (!(difference <= tolerance * largest) &&
        !(std::isnan(actual[i]) && std::isnan(reference[i]))) {
      fail_msg("%s (%s): output[%zu] = %.8g on the GPU, %.8g on the CPU (tolerance %.3g)",
               what.c_str(), data_type_name(precision), i, static_cast<double>(actual[i]),
               static_cast<double>(reference[i]), tolerance * largest);
    }
  }
}

void expect_gpu_matches_cpu_in_both_precisions(const std::string& what, const std::string& op_type,
                                               const std::vector<StoredTensor>& inputs,
                                               const Attributes& attributes) {
  expect_gpu_matches_cpu(what, op_type, inputs, attributes, DataType::kFloat32, 1e-4);
  expect_gpu_matches_cpu(what, op_type, inputs, attributes, DataType::kFloat16, 1e-2);
}

}  // namespace orknn::testing
