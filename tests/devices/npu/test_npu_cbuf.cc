// The emulator enforces the conv buffer: a convolution task whose CBUF_CON0/CBUF_CON1 cannot
// hold the input rows or weights it reads is refused, and the job fails with the reason. The
// compiler's own split of the same layer runs. (test_npu_ops proves the split's results.)
#include <cstring>
#include <random>
#include <string>

#include "common/op_test_harness.h"
#include "devices/npu/cbuf_plan.h"
#include "devices/npu/regcmd_builder.h"
#include "driver_shim/npu.h"
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
using devices::npu::NpuLayer;
using devices::npu::TaskSlice;

// A 3x3 int8 convolution over 64 x 24 x 200: its input rows need more than the data banks.
NpuLayer wide_convolution() {
  std::mt19937 rng(31);
  std::vector<int8_t> weights(8 * 64 * 9);
  for (int8_t& w : weights) w = static_cast<int8_t>(uniform(rng, -100, 100));
  const graph::Quantization activation{{0.05f}, {0}, 0};
  const std::vector<StoredTensor> inputs = {
      stored("x", DataType::kInt8, {1, 64, 24, 200}, std::vector<int8_t>(64 * 24 * 200, 1),
             activation),
      stored("w", DataType::kInt8, {8, 64, 3, 3}, weights, graph::Quantization{{0.01f}, {0}, 0},
             true)};
  auto graph = single_node_graph("Conv", inputs, {{"pads", attr_ints({1, 1, 1, 1})}},
                                 {{DataType::kInt8, activation}});
  if (!graph.ok()) fail_msg("%s", graph.status().message().c_str());
  std::vector<graph::Shape> shapes;
  for (const graph::Tensor& tensor : graph->tensors) shapes.push_back(tensor.shape);
  auto layers = devices::npu::lower_node(*graph, 0, shapes);
  if (!layers.ok()) fail_msg("%s", layers.status().message().c_str());
  return layers->front();
}

// Runs `slices` of `layer` on core 0 of a fresh emulated NPU: as one chain, or (as the rocket
// backend kicks them) one job per task.
Status run_chain(const NpuLayer& layer, const std::vector<TaskSlice>& slices,
                 bool job_per_task = false) {
  auto npu = driver_shim::make_emulated_npu(1);
  std::vector<driver_shim::NpuMemory> memory;
  auto allocate = [&](size_t bytes) {
    auto created = npu->create_memory(bytes);
    if (!created.ok()) fail_msg("%s", created.status().message().c_str());
    memory.push_back(*created);
    return created->npu_address;
  };
  devices::npu::LayerAddresses addresses;
  addresses.input = allocate(devices::npu::feature_bytes(layer.input, false));
  addresses.output = allocate(devices::npu::feature_bytes(layer.output, false));
  const std::vector<uint8_t> packed = devices::npu::pack_weights(layer);
  addresses.weights = allocate(packed.size());
  addresses.bias = allocate(size_t(layer.output.channels) * 4);
  addresses.multipliers = allocate(size_t(layer.output.channels) * 4);
  std::vector<std::vector<uint64_t>> tasks;
  std::vector<uint32_t> masks;
  for (const TaskSlice& slice : slices) {
    uint32_t mask = 0;
    tasks.push_back(devices::npu::task_commands(layer, addresses, slice, &mask));
    masks.push_back(mask);
  }
  const std::vector<uint64_t> sizing = devices::npu::chain_tasks(tasks, masks, 0, nullptr, nullptr);
  const uint32_t base = allocate(sizing.size() * 8);
  std::vector<size_t> offsets;
  std::vector<uint32_t> counts;
  const std::vector<uint64_t> words =
      devices::npu::chain_tasks(tasks, masks, base, &offsets, &counts);
  std::memcpy(memory.back().host, words.data(), words.size() * 8);
  std::vector<driver_shim::NpuJob> jobs(job_per_task ? offsets.size() : 1);
  for (size_t t = 0; t < offsets.size(); ++t) {
    driver_shim::NpuJob& job = jobs[job_per_task ? t : 0];
    job.core_mask = 1;
    job.core_tasks.resize(1);
    job.core_tasks[0].push_back({base + uint32_t(offsets[t] * 8), counts[t], masks[t]});
  }
  Status status = ok_status();
  for (const driver_shim::NpuJob& job : jobs) {
    auto id = npu->submit(job);
    status = id.ok() ? npu->wait(*id, 60000).status() : id.status();
    if (!status.ok()) break;
  }
  for (driver_shim::NpuMemory& buffer : memory) (void)npu->destroy_memory(buffer);
  return status;
}

void expect_refused(const Status& status, const char* reason) {
  if (status.ok()) fail_msg("the emulator ran a task it should refuse (%s)", reason);
  if (!std::strstr(status.message().c_str(), reason)) {
    fail_msg("message '%s' does not say '%s'", status.message().c_str(), reason);
  }
}

std::vector<TaskSlice> compiler_split(const NpuLayer& layer) {
  auto tasks =
      devices::npu::split_for_cbuf(layer, {0, layer.output.channels, 0, layer.output.height});
  if (!tasks.ok()) fail_msg("%s", tasks.status().message().c_str());
  return *tasks;
}

void test_compiler_split_runs(void** state) {
  (void)state;
  const NpuLayer layer = wide_convolution();
  const std::vector<TaskSlice> tasks = compiler_split(layer);
  assert_true(tasks.size() >= 2);
  for (size_t t = 0; t < tasks.size(); ++t) assert_int_equal(tasks[t].weight_reuse, t > 0);
  const Status status = run_chain(layer, tasks);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
}

// Weights stay in a core's buffer from one kick to the next (rocket runs each task of a job as
// its own kick), so follow-on tasks may reuse them.
void test_weight_reuse_across_kicks(void** state) {
  (void)state;
  const NpuLayer layer = wide_convolution();
  const Status status = run_chain(layer, compiler_split(layer), true);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
}

void test_too_many_rows_for_the_data_banks(void** state) {
  (void)state;
  const NpuLayer layer = wide_convolution();
  TaskSlice whole = compiler_split(layer).front();
  whole.row_end = layer.output.height;  // every row in one task
  expect_refused(run_chain(layer, {whole}), "do not fit");
}

void test_more_banks_than_the_buffer_has(void** state) {
  (void)state;
  const NpuLayer layer = wide_convolution();
  TaskSlice first = compiler_split(layer).front();
  first.data_banks = 12;
  expect_refused(run_chain(layer, {first}), "CBUF_CON0 asks for 12 data");
}

void test_weight_banks_too_few(void** state) {
  (void)state;
  NpuLayer layer = wide_convolution();
  TaskSlice first = compiler_split(layer).front();
  first.weight_banks = 1;  // the weights need their bytes' banks plus one
  expect_refused(run_chain(layer, {first}), "weight bytes need");
}

void test_weight_reuse_with_nothing_resident(void** state) {
  (void)state;
  const NpuLayer layer = wide_convolution();
  std::vector<TaskSlice> tasks = compiler_split(layer);
  tasks.front().weight_reuse = true;  // a fresh NPU starts with an empty buffer
  expect_refused(run_chain(layer, tasks), "WEIGHT_REUSE");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compiler_split_runs),
      cmocka_unit_test(test_weight_reuse_across_kicks),
      cmocka_unit_test(test_too_many_rows_for_the_data_banks),
      cmocka_unit_test(test_more_banks_than_the_buffer_has),
      cmocka_unit_test(test_weight_banks_too_few),
      cmocka_unit_test(test_weight_reuse_with_nothing_resident),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
