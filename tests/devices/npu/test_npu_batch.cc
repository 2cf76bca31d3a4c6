// A batch of images on the emulated NPU (rknn_set_batch_core_num): the NPU claims [N, C, H, W]
// layers, runs each image's layers as its own chain of tasks, splits the images over the cores
// the batch core count (or the core mask) names, and gives the CPU's bytes for every image.
#include <cstring>

#include "common/op_test_harness.h"
#include "devices/npu/npu_test_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;

constexpr int64_t kBatch = 5;

// Conv 3x3 (48 output channels) on five 12x7x6 images.
struct BatchCase {
  std::shared_ptr<const graph::Graph> graph;
  std::vector<std::vector<uint8_t>> inputs;
};

BatchCase batch_case() {
  std::vector<int8_t> x(kBatch * 12 * 7 * 6), w(48 * 12 * 9);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 37 % 251 - 125);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i * 53 % 241 - 120);
  const std::vector<StoredTensor> tensors = {
      stored("x", DataType::kInt8, {kBatch, 12, 7, 6}, x, graph::Quantization{{0.02f}, {3}, 0}),
      stored("w", DataType::kInt8, {48, 12, 3, 3}, w, graph::Quantization{{0.004f}, {0}, 0}, true)};
  auto graph = single_node_graph("Conv", tensors, {{"pads", attr_ints({1, 1, 1, 1})}},
                                 {{DataType::kInt8, graph::Quantization{{0.5f}, {-2}, 0}}});
  assert_true(graph.ok());
  return {std::make_shared<const graph::Graph>(std::move(*graph)), {tensors[0].bytes}};
}

// Runs the batch on the NPU and returns the mask of cores that did work.
uint32_t cores_that_worked(uint32_t core_mask, int batch_core_num) {
  const BatchCase batch = batch_case();
  const DeviceRun cpu = run_graph(batch.graph, batch.inputs, nullptr, 0);
  assert_true(cpu.status.ok());
  const DeviceRun run = run_graph(batch.graph, batch.inputs, driver_shim::make_emulated_npu(3),
                                  core_mask, batch_core_num);
  if (!run.status.ok()) fail_msg("%s", run.status.message().c_str());
  assert_int_equal(run.npu_nodes, 1);
  if (run.outputs != cpu.outputs) {
    fail_msg("mask %u, batch cores %d: output differs from the CPU", core_mask, batch_core_num);
  }
  const exec::NpuNodeTiming& timing = run.profiler.npu_timings()[0];
  uint32_t worked = 0;
  for (size_t core = 0; core < 3; ++core) {
    if (timing.core_cycles[core] > 0) worked |= 1u << core;
  }
  return worked;
}

void test_batch_core_num_splits_images_over_cores(void** state) {
  (void)state;
  assert_int_equal(cores_that_worked(0, 1), 1);  // one chain, the emulator's idle core 0
  assert_int_equal(cores_that_worked(0, 2), 3);
  assert_int_equal(cores_that_worked(0, 3), 7);
}

void test_without_batch_core_num_the_mask_names_the_cores(void** state) {
  (void)state;
  assert_int_equal(cores_that_worked(2, 0), 2);
  assert_int_equal(cores_that_worked(7, 0), 7);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_core_num_splits_images_over_cores),
      cmocka_unit_test(test_without_batch_core_num_the_mask_names_the_cores),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
