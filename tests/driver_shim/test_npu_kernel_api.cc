// A model through the public C API (rknn_init, rknn_run, rknn_outputs_get) with
// ORKNN_NPU_BACKEND=rknpu or =rocket, the backend talking to the preloaded fake kernel as it
// would to the real driver. ctest runs this program once per backend (ORKNN_FAKE_NPU and
// ORKNN_NPU_BACKEND set to match). The outputs must equal a CPU-only run of the same model,
// made in a forked child with ORKNN_NPU_BACKEND=none (the runtime picks its NPU once per
// process), and the per-layer table and the fake's counters must show that the NPU ran it.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fake_npu_kernel/fake_npu_counters.h"
#include "model/model_builder.h"
#include "rknn_api.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using orknn::DataType;
using orknn::model::Attr;
using orknn::model::ModelBuilder;
using orknn::model::Quantization;

constexpr int kInputChannels = 32, kOutputChannels = 64, kSide = 8;

// int8 Conv 3x3 (per-channel weights, int32 bias) then MaxPool 2x2 on `batch` images: both
// claimed by the NPU.
std::vector<uint8_t> build_conv_pool_model(int64_t batch) {
  ModelBuilder builder;
  const float input_scale = 0.02f;
  std::vector<float> weight_scales(kOutputChannels);
  std::vector<int32_t> weight_zeros(kOutputChannels, 0), bias_zeros(kOutputChannels, 0);
  std::vector<float> bias_scales(kOutputChannels);
  for (int c = 0; c < kOutputChannels; ++c) {
    weight_scales[c] = 0.003f + 0.0001f * c;
    bias_scales[c] = input_scale * weight_scales[c];
  }
  std::vector<int8_t> weights(kOutputChannels * kInputChannels * 9);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<int8_t>(i * 53 % 241 - 120);
  std::vector<int32_t> bias(kOutputChannels);
  for (int c = 0; c < kOutputChannels; ++c) bias[c] = (c * 977) % 4001 - 2000;
  const Quantization activation_q{{0.05f}, {-2}, 0};
  const int x = builder.add_tensor("x", DataType::kInt8, {batch, kInputChannels, kSide, kSide},
                                   Quantization{{input_scale}, {3}, 0});
  const int w = builder.add_constant("w", DataType::kInt8, {kOutputChannels, kInputChannels, 3, 3},
                                     weights.data(), weights.size(),
                                     Quantization{weight_scales, weight_zeros, 0});
  const int b =
      builder.add_constant("b", DataType::kInt32, {kOutputChannels}, bias.data(),
                           bias.size() * sizeof(int32_t), Quantization{bias_scales, bias_zeros, 0});
  const int y = builder.add_tensor("y", DataType::kInt8, {batch, kOutputChannels, kSide, kSide},
                                   activation_q);
  const int z = builder.add_tensor("z", DataType::kInt8,
                                   {batch, kOutputChannels, kSide / 2, kSide / 2}, activation_q);
  builder.add_node("Conv", {x, w, b}, {y}, {Attr::ints("pads", {1, 1, 1, 1})}, "conv");
  builder.add_node("MaxPool", {y}, {z},
                   {Attr::ints("kernel_shape", {2, 2}), Attr::ints("strides", {2, 2})}, "pool");
  builder.add_input(x);
  builder.add_output(z);
  builder.set_target_platform("rk3588");
  auto bytes = builder.serialize();
  if (!bytes.ok()) fail_msg("model: %s", bytes.status().message().c_str());
  return std::move(bytes).value();
}

// Two independent Relu nodes, on two images and on one: a single NPU segment whose layers
// differ in batch size.
std::vector<uint8_t> build_mixed_batch_model() {
  ModelBuilder builder;
  const Quantization q{{0.1f}, {5}, 0};
  std::vector<int> outputs;
  for (int64_t batch : {2, 1}) {
    const std::string suffix = std::to_string(batch);
    const int x = builder.add_tensor("x" + suffix, DataType::kInt8, {batch, 16, 4, 4}, q);
    const int y = builder.add_tensor("y" + suffix, DataType::kInt8, {batch, 16, 4, 4}, q);
    builder.add_node("Relu", {x}, {y}, {}, "relu" + suffix);
    builder.add_input(x);
    outputs.push_back(y);
  }
  for (int y : outputs) builder.add_output(y);
  builder.set_target_platform("rk3588");
  auto bytes = builder.serialize();
  if (!bytes.ok()) fail_msg("model: %s", bytes.status().message().c_str());
  return std::move(bytes).value();
}

struct ApiRun {
  std::vector<uint8_t> output;
  std::string perf_table;
};

// `batch_cores` 0: rknn_set_batch_core_num is not called.
ApiRun run_model(std::vector<uint8_t>& model, rknn_core_mask mask, int batch_cores = 0) {
  rknn_context context = 0;
  assert_int_equal(rknn_init(&context, model.data(), static_cast<uint32_t>(model.size()),
                             RKNN_FLAG_COLLECT_PERF_MASK, nullptr),
                   RKNN_SUCC);
  assert_int_equal(rknn_set_core_mask(context, mask), RKNN_SUCC);
  if (batch_cores) assert_int_equal(rknn_set_batch_core_num(context, batch_cores), RKNN_SUCC);
  rknn_input_output_num counts;
  std::memset(&counts, 0, sizeof(counts));
  assert_int_equal(rknn_query(context, RKNN_QUERY_IN_OUT_NUM, &counts, sizeof(counts)), RKNN_SUCC);
  std::vector<std::vector<uint8_t>> data(counts.n_input);
  std::vector<rknn_input> inputs(counts.n_input);
  for (uint32_t i = 0; i < counts.n_input; ++i) {
    rknn_tensor_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.index = i;
    assert_int_equal(rknn_query(context, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    data[i].resize(attr.size);
    for (size_t b = 0; b < data[i].size(); ++b) data[i][b] = static_cast<uint8_t>(b * 37 % 251 + i);
    std::memset(&inputs[i], 0, sizeof(rknn_input));
    inputs[i].index = i;
    inputs[i].buf = data[i].data();
    inputs[i].size = attr.size;
    inputs[i].pass_through = 1;
  }
  assert_int_equal(rknn_inputs_set(context, counts.n_input, inputs.data()), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  std::vector<rknn_output> outputs(counts.n_output);
  std::memset(outputs.data(), 0, outputs.size() * sizeof(rknn_output));
  for (uint32_t o = 0; o < counts.n_output; ++o) outputs[o].index = o;
  assert_int_equal(rknn_outputs_get(context, counts.n_output, outputs.data(), nullptr), RKNN_SUCC);
  ApiRun run;  // the outputs' bytes one after another
  for (const rknn_output& output : outputs) {
    run.output.insert(run.output.end(), static_cast<uint8_t*>(output.buf),
                      static_cast<uint8_t*>(output.buf) + output.size);
  }
  assert_int_equal(rknn_outputs_release(context, counts.n_output, outputs.data()), RKNN_SUCC);
  rknn_perf_detail detail;
  std::memset(&detail, 0, sizeof(detail));
  assert_int_equal(rknn_query(context, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
  run.perf_table.assign(detail.perf_data, detail.data_len);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  return run;
}

// The CPU's output, from a child process that has not touched the runtime before.
std::vector<uint8_t> cpu_output(std::vector<uint8_t>& model) {
  std::fflush(stdout);  // the child must not print the parent's buffered output again
  int pipe_fds[2];
  assert_int_equal(pipe(pipe_fds), 0);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    setenv("ORKNN_NPU_BACKEND", "none", 1);
    const ApiRun run = run_model(model, RKNN_NPU_CORE_AUTO);
    const bool written = write(pipe_fds[1], run.output.data(), run.output.size()) ==
                         static_cast<ssize_t>(run.output.size());
    _exit(written ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::vector<uint8_t> output;
  uint8_t chunk[4096];
  for (ssize_t got; (got = read(pipe_fds[0], chunk, sizeof(chunk))) > 0;) {
    output.insert(output.end(), chunk, chunk + got);
  }
  close(pipe_fds[0]);
  int child_status = 0;
  assert_int_equal(waitpid(child, &child_status, 0), child);
  assert_true(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0);
  return output;
}

OrknnFakeNpuCounters kernel_counters() {
  auto query = reinterpret_cast<OrknnFakeNpuCountersQuery>(
      dlsym(RTLD_DEFAULT, ORKNN_FAKE_NPU_COUNTERS_SYMBOL));
  if (!query) fail_msg("the fake NPU kernel is not preloaded (LD_PRELOAD)");
  return query();
}

const char* kernel_backend() {
  const char* backend = std::getenv("ORKNN_NPU_BACKEND");
  if (!backend || (std::strcmp(backend, "rknpu") != 0 && std::strcmp(backend, "rocket") != 0)) {
    fail_msg("ORKNN_NPU_BACKEND must be rknpu or rocket, not '%s'", backend ? backend : "");
  }
  return backend;
}

// The per-layer table's row of the node named `full_name` (its FullName column).
std::string table_row(const std::string& table, const std::string& full_name) {
  const size_t name = table.find(full_name);
  if (name == std::string::npos) fail_msg("no row for %s in\n%s", full_name.c_str(), table.c_str());
  const size_t line_start = table.rfind('\n', name) + 1;
  return table.substr(line_start, name - line_start);
}

// The per-layer table's WorkLoad(0/1/2) cell of the Conv row.
std::string conv_workload(const std::string& table) {
  const std::string line = table_row(table, "Conv:conv");
  const size_t percent = line.find("%/");
  assert_true(percent != std::string::npos);
  const size_t cell_start = line.rfind(' ', percent) + 1;
  return line.substr(cell_start, line.find(' ', percent) - cell_start);
}

void test_model_runs_on_the_kernel_backend_like_the_cpu(void** state) {
  (void)state;
  const char* backend = kernel_backend();
  std::vector<uint8_t> model = build_conv_pool_model(1);
  const std::vector<uint8_t> expected = cpu_output(model);
  assert_int_equal(expected.size(), kOutputChannels * (kSide / 2) * (kSide / 2));
  for (rknn_core_mask mask : {RKNN_NPU_CORE_0, RKNN_NPU_CORE_0_1_2}) {
    const int submits_before = kernel_counters().submits;
    const ApiRun run = run_model(model, mask);
    if (run.output != expected)
      fail_msg("%s, core mask %d: output differs from the CPU", backend, mask);
    std::printf("%s", run.perf_table.c_str());
    assert_true(run.perf_table.find("  NPU  ") != std::string::npos);
    assert_true(kernel_counters().submits > submits_before);
  }
  // Three output-channel slices on three cores: the fake ran tasks on every core.
  assert_int_equal(kernel_counters().cores_run, 7);
}

// rknn_set_batch_core_num: three images on one core, then one image per core.
void test_batch_images_split_over_cores(void** state) {
  (void)state;
  const char* backend = kernel_backend();
  std::vector<uint8_t> model = build_conv_pool_model(3);
  const std::vector<uint8_t> expected = cpu_output(model);
  assert_int_equal(expected.size(), 3 * kOutputChannels * (kSide / 2) * (kSide / 2));
  const ApiRun one_core = run_model(model, RKNN_NPU_CORE_AUTO, 1);
  const ApiRun three_cores = run_model(model, RKNN_NPU_CORE_AUTO, 3);
  if (one_core.output != expected || three_cores.output != expected) {
    fail_msg("%s: a batch output differs from the CPU", backend);
  }
  std::printf("WorkLoad with 1 / 3 batch cores: %s / %s\n",
              conv_workload(one_core.perf_table).c_str(),
              conv_workload(three_cores.perf_table).c_str());
  assert_string_equal(conv_workload(three_cores.perf_table).c_str(), "33%/33%/33%");
  assert_true(conv_workload(one_core.perf_table).find("100%") == 0 ||
              conv_workload(one_core.perf_table).find("/100%") != std::string::npos);
}

// One segment whose layers have different batch sizes runs each at its own size.
void test_mixed_batch_segment(void** state) {
  (void)state;
  const char* backend = kernel_backend();
  std::vector<uint8_t> model = build_mixed_batch_model();
  const std::vector<uint8_t> expected = cpu_output(model);
  assert_int_equal(expected.size(), 3 * 16 * 4 * 4);
  for (int batch_cores : {0, 2}) {
    const ApiRun run = run_model(model, RKNN_NPU_CORE_AUTO, batch_cores);
    if (run.output != expected) fail_msg("%s: mixed batch output differs from the CPU", backend);
    for (const char* relu : {"Relu:relu2", "Relu:relu1"}) {
      assert_true(table_row(run.perf_table, relu).find("  NPU  ") != std::string::npos);
    }
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_runs_on_the_kernel_backend_like_the_cpu),
      cmocka_unit_test(test_batch_images_split_over_cores),
      cmocka_unit_test(test_mixed_batch_segment),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
