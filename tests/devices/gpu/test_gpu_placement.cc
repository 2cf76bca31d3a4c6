// Placement with the GPU: what goes there when asked (flag, op_target, ORKNN_GPU=all), what the
// transfer weighing keeps on the CPU (a lone GPU-able node between CPU nodes, tiny work), and
// CPU execution with a clear reason when the machine has no OpenCL platform. The same program
// runs as test_gpu_missing_icd with OCL_ICD_VENDORS pointing at an empty directory and
// ORKNN_TEST_EXPECT_NO_GPU=1.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/op_test_harness.h"
#include "devices/device.h"
#include "devices/gpu/gpu_test_support.h"
#include "exec/executor.h"

// cmocka after the standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using namespace orknn;
using graph::Shape;

namespace {

bool expect_no_gpu() {
  const char* setting = std::getenv("ORKNN_TEST_EXPECT_NO_GPU");
  return setting && std::strcmp(setting, "1") == 0;
}

// A small graph built by hand: tensors with their shapes, constants filled with a pattern.
class GraphMaker {
 public:
  GraphMaker() : storage_(std::make_shared<std::vector<std::vector<uint8_t>>>()) {
    storage_->reserve(64);
    graph_.storage = storage_;
  }

  int32_t input(const std::string& name, const Shape& shape) {
    const int32_t index = add_tensor(name, shape);
    graph::GraphInput graph_input;
    graph_input.tensor = index;
    graph_.inputs.push_back(graph_input);
    return index;
  }
  int32_t constant(const std::string& name, const Shape& shape) {
    const int32_t index = add_tensor(name, shape);
    std::vector<float> values(static_cast<size_t>(graph::element_count(shape)));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
    storage_->push_back(testing::to_bytes(values));
    graph::Tensor& tensor = graph_.tensors[static_cast<size_t>(index)];
    tensor.constant = true;
    tensor.constant_data = storage_->back().data();
    tensor.constant_size = storage_->back().size();
    return index;
  }
  int32_t int64_constant(const std::string& name, const std::vector<int64_t>& values) {
    const int32_t index = constant(name, {static_cast<int64_t>(values.size())});
    graph::Tensor& tensor = graph_.tensors[static_cast<size_t>(index)];
    tensor.data_type = DataType::kInt64;
    storage_->back() = testing::to_bytes(values);
    tensor.constant_data = storage_->back().data();
    tensor.constant_size = storage_->back().size();
    return index;
  }
  int32_t node(const std::string& op_type, const std::vector<int32_t>& inputs, const Shape& output,
               testing::Attributes attributes = {}) {
    const int32_t result = add_tensor(op_type + std::to_string(graph_.nodes.size()), output);
    graph::Node node;
    node.name = "n" + std::to_string(graph_.nodes.size());
    node.op_type = op_type;
    node.inputs = inputs;
    node.outputs = {result};
    node.attributes = std::move(attributes);
    graph_.nodes.push_back(std::move(node));
    return result;
  }
  std::shared_ptr<const graph::Graph> finish(int32_t output) {
    graph_.outputs = {output};
    return std::make_shared<const graph::Graph>(graph_);
  }

 private:
  int32_t add_tensor(const std::string& name, const Shape& shape) {
    graph::Tensor tensor;
    tensor.name = name;
    tensor.shape = shape;
    graph_.tensors.push_back(tensor);
    return static_cast<int32_t>(graph_.tensors.size() - 1);
  }

  graph::Graph graph_;
  std::shared_ptr<std::vector<std::vector<uint8_t>>> storage_;
};

std::unique_ptr<exec::Executor> prepare(std::shared_ptr<const graph::Graph> graph,
                                        const exec::PlacementOptions& options) {
  std::vector<Shape> input_shapes;
  for (const graph::GraphInput& input : graph->inputs) {
    input_shapes.push_back(graph->tensor(input.tensor).shape);
  }
  auto executor = exec::Executor::create(graph, input_shapes,
                                         {devices::make_gpu_device(), devices::make_cpu_device()},
                                         exec::ExecutorOptions(options));
  if (!executor.ok()) fail_msg("Executor::create: %s", executor.status().message().c_str());
  return std::move(executor.value());
}

std::vector<float> run(exec::Executor& executor) {
  float* input = reinterpret_cast<float*>(executor.input_data(0));
  for (size_t i = 0; i < executor.input_bytes(0) / sizeof(float); ++i) {
    input[i] = 0.001f * static_cast<float>(i % 101) - 0.05f;
  }
  const Status ran = executor.run(nullptr);
  if (!ran.ok()) fail_msg("run: %s", ran.message().c_str());
  const float* output = reinterpret_cast<const float*>(executor.output_data(0));
  return std::vector<float>(output, output + executor.output_bytes(0) / sizeof(float));
}

exec::PlacementOptions prefer_gpu() {
  exec::PlacementOptions options;
  options.prefer_gpu = true;
  return options;
}

// conv (32 channels, 3x3 over 32x32: heavy) -> Pad (no GPU kernel) -> Relu (light).
std::shared_ptr<const graph::Graph> conv_pad_relu() {
  GraphMaker maker;
  const int32_t x = maker.input("x", {1, 32, 32, 32});
  const int32_t w = maker.constant("w", {32, 32, 3, 3});
  const int32_t conv =
      maker.node("Conv", {x, w}, {1, 32, 32, 32}, {{"pads", testing::attr_ints({1, 1, 1, 1})}});
  const int32_t pads = maker.int64_constant("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  const int32_t padded = maker.node("Pad", {conv, pads}, {1, 32, 34, 34});
  return maker.finish(maker.node("Relu", {padded}, {1, 32, 34, 34}));
}

void test_heavy_run_goes_to_gpu_and_light_lone_node_stays_on_cpu(void**) {
  if (expect_no_gpu() || !testing::gpu_available()) skip();
  auto graph = conv_pad_relu();
  auto executor = prepare(graph, prefer_gpu());
  assert_string_equal(executor->node_target(0), "GPU");
  assert_string_equal(executor->node_target(1), "CPU");
  // Relu alone would cost a round trip of its tensor for one operation per element.
  assert_string_equal(executor->node_target(2), "CPU");
  const std::vector<float> mixed = run(*executor);
  const std::vector<float> cpu_only = run(*prepare(graph, {}));
  testing::expect_close(mixed, cpu_only, 1e-4);
}

void test_forcing_every_supported_node_and_op_target(void**) {
  if (expect_no_gpu() || !testing::gpu_available()) skip();
  exec::PlacementOptions everything;
  everything.gpu_for_every_supported_node = true;
  auto forced = prepare(conv_pad_relu(), everything);
  assert_string_equal(forced->node_target(0), "GPU");
  assert_string_equal(forced->node_target(1), "CPU");
  assert_string_equal(forced->node_target(2), "GPU");

  // A tiny Add: not worth a transfer when merely preferred; op_target "gpu" insists.
  for (const char* wish : {"", "gpu", "cpu"}) {
    GraphMaker maker;
    const int32_t x = maker.input("x", {1, 4});
    testing::Attributes attributes;
    if (*wish) attributes["op_target"] = testing::attr_string(wish);
    auto graph = maker.finish(maker.node("Add", {x, maker.constant("b", {4})}, {1, 4}, attributes));
    const char* expected = std::strcmp(wish, "gpu") == 0 ? "GPU" : "CPU";
    assert_string_equal(prepare(graph, prefer_gpu())->node_target(0), expected);
    // Without any request only op_target "gpu" brings the GPU in.
    assert_string_equal(prepare(graph, {})->node_target(0), expected);
  }
  // op_target "cpu" wins over forcing.
  GraphMaker maker;
  const int32_t x = maker.input("x", {1, 4});
  auto graph =
      maker.finish(maker.node("Relu", {x}, {1, 4}, {{"op_target", testing::attr_string("cpu")}}));
  assert_string_equal(prepare(graph, everything)->node_target(0), "CPU");
}

void test_without_opencl_platform_everything_runs_on_cpu(void**) {
  if (!expect_no_gpu()) skip();
  const std::string reason = devices::gpu_unavailable_reason();
  std::printf("reason given: %s\n", reason.c_str());
  assert_true(reason.find("no platform") != std::string::npos ||
              reason.find("no OpenCL") != std::string::npos);
  exec::PlacementOptions everything;
  everything.gpu_for_every_supported_node = true;
  auto graph = conv_pad_relu();
  auto executor = prepare(graph, everything);
  for (size_t node = 0; node < 3; ++node) assert_string_equal(executor->node_target(node), "CPU");
  const std::vector<float> output = run(*executor);
  testing::expect_close(output, run(*prepare(graph, {})), 0.0);
}

// A device used on request whose compile fails, as a GPU driver refusing a kernel would.
class RefusingDevice final : public devices::Device {
 public:
  const char* name() const override { return "GPU"; }
  bool on_request_only() const override { return true; }
  bool supports(const graph::Graph&, const graph::Node&) const override { return true; }
  Result<std::unique_ptr<devices::Executable>> compile(const graph::Graph&,
                                                       const std::vector<size_t>&,
                                                       const std::vector<Shape>&) override {
    return make_error(StatusCode::kDeviceUnavailable, "the driver refuses the kernels");
  }
};

void test_segment_the_gpu_cannot_prepare_runs_on_cpu(void**) {
  auto graph = conv_pad_relu();
  exec::PlacementOptions everything;
  everything.gpu_for_every_supported_node = true;
  std::vector<Shape> input_shapes = {graph->tensor(graph->inputs[0].tensor).shape};
  auto executor = exec::Executor::create(
      graph, input_shapes, {std::make_shared<RefusingDevice>(), devices::make_cpu_device()},
      exec::ExecutorOptions(everything));
  if (!executor.ok()) fail_msg("Executor::create: %s", executor.status().message().c_str());
  for (size_t node = 0; node < 3; ++node) {
    assert_string_equal(executor.value()->node_target(node), "CPU");
  }
  testing::expect_close(run(*executor.value()), run(*prepare(graph, {})), 0.0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_heavy_run_goes_to_gpu_and_light_lone_node_stays_on_cpu),
      cmocka_unit_test(test_forcing_every_supported_node_and_op_target),
      cmocka_unit_test(test_without_opencl_platform_everything_runs_on_cpu),
      cmocka_unit_test(test_segment_the_gpu_cannot_prepare_runs_on_cpu),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
