// The rknpu and rocket backends against fake kernels that implement their UAPIs on the
// emulator: init, memory, submit on core masks, wait, timeout, reset, and the messages for a
// missing device, a permission error and a version mismatch.
#include <cstdio>
#include <cstring>
#include <string>

#include "common/op_test_harness.h"
#include "devices/npu/npu_test_support.h"
#include "fake_kernel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;
using Driver = FakeKernel::Driver;

// A 3x3 int8 Conv with 96 output channels (three 32-channel slices for three cores).
struct ConvCase {
  std::shared_ptr<const graph::Graph> graph;
  std::vector<std::vector<uint8_t>> inputs;
};

ConvCase conv_case() {
  std::vector<int8_t> x(20 * 9 * 7), w(96 * 20 * 9);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 37 % 251 - 125);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i * 53 % 241 - 120);
  const std::vector<StoredTensor> tensors = {
      stored("x", DataType::kInt8, {1, 20, 9, 7}, x, graph::Quantization{{0.02f}, {3}, 0}),
      stored("w", DataType::kInt8, {96, 20, 3, 3}, w, graph::Quantization{{0.004f}, {0}, 0}, true)};
  auto graph = single_node_graph("Conv", tensors, {{"pads", attr_ints({1, 1, 1, 1})}},
                                 {{DataType::kInt8, graph::Quantization{{0.9f}, {-2}, 0}}});
  assert_true(graph.ok());
  return {std::make_shared<const graph::Graph>(std::move(*graph)), {tensors[0].bytes}};
}

void expect_runs_like_cpu(std::shared_ptr<driver_shim::Npu> npu, uint32_t mask) {
  const ConvCase conv = conv_case();
  const DeviceRun cpu = run_graph(conv.graph, conv.inputs, nullptr, 0);
  const DeviceRun run = run_graph(conv.graph, conv.inputs, npu, mask);
  if (!run.status.ok()) fail_msg("mask %u: %s", mask, run.status.message().c_str());
  assert_int_equal(run.npu_nodes, 1);
  assert_true(run.outputs == cpu.outputs);
}

FakeKernel::Config config(Driver driver, const char* path) {
  FakeKernel::Config config;
  config.driver = driver;
  config.device_path = path;
  return config;
}

void test_rknpu_drm_runs_on_every_mask(void** state) {
  (void)state;
  FakeKernel kernel(config(Driver::kRknpuDrm, "/dev/dri/renderD129"));
  auto npu = driver_shim::open_rknpu(kernel.calls());
  if (!npu.ok()) fail_msg("%s", npu.status().message().c_str());
  assert_string_equal((*npu)->info().backend.c_str(), "rknpu");
  assert_int_equal((*npu)->info().driver_version, 906);
  for (uint32_t mask : {0u, 1u, 2u, 4u, 3u, 7u}) {
    expect_runs_like_cpu(*npu, mask);
    assert_int_equal(kernel.last_core_mask, mask);
  }
  assert_int_equal(kernel.cores_run, 7);
  assert_true(kernel.wide_mem_creates > 0);
  assert_int_equal(kernel.old_mem_creates, 0);
  assert_true((*npu)->reset().ok());
  assert_int_equal(kernel.resets, 1);
}

void test_rknpu_old_driver_uses_short_mem_create(void** state) {
  (void)state;
  FakeKernel::Config settings = config(Driver::kRknpuDrm, "/dev/dri/card1");
  settings.rknpu_version = 802;
  FakeKernel kernel(settings);
  auto npu = driver_shim::open_rknpu(kernel.calls());
  assert_true(npu.ok());
  expect_runs_like_cpu(*npu, 7);
  assert_true(kernel.old_mem_creates > 0);
  assert_int_equal(kernel.wide_mem_creates, 0);
}

void test_rknpu_misc_device(void** state) {
  (void)state;
  FakeKernel kernel(config(Driver::kRknpuMisc, "/dev/rknpu"));
  auto npu = driver_shim::open_rknpu(kernel.calls());
  if (!npu.ok()) fail_msg("%s", npu.status().message().c_str());
  assert_string_equal((*npu)->info().device_path.c_str(), "/dev/rknpu");
  expect_runs_like_cpu(*npu, 3);
}

void test_rknpu_timeout_and_reset(void** state) {
  (void)state;
  FakeKernel kernel(config(Driver::kRknpuDrm, "/dev/dri/renderD128"));
  auto npu = driver_shim::open_rknpu(kernel.calls());
  assert_true(npu.ok());
  kernel.set_hang(true);
  const ConvCase conv = conv_case();
  const DeviceRun run = run_graph(conv.graph, conv.inputs, *npu, 1);
  assert_int_equal(static_cast<int>(run.status.code()), static_cast<int>(StatusCode::kTimeout));
  assert_non_null(std::strstr(run.status.message().c_str(), "did not finish"));
  kernel.set_hang(false);
  assert_true((*npu)->reset().ok());
  expect_runs_like_cpu(*npu, 1);  // usable again after the reset
}

void test_rocket_runs_and_times_out(void** state) {
  (void)state;
  FakeKernel kernel(config(Driver::kRocket, "/dev/accel/accel0"));
  auto npu = driver_shim::open_rocket(kernel.calls());
  if (!npu.ok()) fail_msg("%s", npu.status().message().c_str());
  assert_string_equal((*npu)->info().backend.c_str(), "rocket");
  expect_runs_like_cpu(*npu, 0);
  expect_runs_like_cpu(*npu, 7);  // three jobs, spread by the scheduler
  assert_int_equal(kernel.cores_run, 7);
  kernel.set_hang(true);
  const ConvCase conv = conv_case();
  const DeviceRun run = run_graph(conv.graph, conv.inputs, *npu, 0);
  assert_int_equal(static_cast<int>(run.status.code()), static_cast<int>(StatusCode::kTimeout));
  assert_true((*npu)->reset().ok());
}

void expect_open_error(const Result<std::shared_ptr<driver_shim::Npu>>& npu, const char* hint) {
  assert_false(npu.ok());
  assert_int_equal(static_cast<int>(npu.status().code()),
                   static_cast<int>(StatusCode::kDeviceUnavailable));
  std::printf("message: %s\n", npu.status().message().c_str());
  if (!std::strstr(npu.status().message().c_str(), hint)) {
    fail_msg("'%s' does not say '%s'", npu.status().message().c_str(), hint);
  }
}

void test_missing_device_permission_and_version_messages(void** state) {
  (void)state;
  {
    FakeKernel kernel(config(Driver::kRknpuDrm, "/dev/nothing"));
    expect_open_error(driver_shim::open_rknpu(kernel.calls()), "kernel driver loaded");
    expect_open_error(driver_shim::open_rocket(kernel.calls()), "CONFIG_DRM_ACCEL_ROCKET");
  }
  {
    FakeKernel::Config settings = config(Driver::kRknpuDrm, "/dev/dri/renderD128");
    settings.permission_denied = true;
    FakeKernel kernel(settings);
    expect_open_error(driver_shim::open_rknpu(kernel.calls()), "usermod -aG render");
  }
  {
    FakeKernel::Config settings = config(Driver::kRknpuDrm, "/dev/dri/renderD128");
    settings.rknpu_version = 10000;
    FakeKernel kernel(settings);
    expect_open_error(driver_shim::open_rknpu(kernel.calls()), "update the board's kernel");
  }
  {
    FakeKernel::Config settings = config(Driver::kRocket, "/dev/accel/accel0");
    settings.rocket_major = 2;
    FakeKernel kernel(settings);
    expect_open_error(driver_shim::open_rocket(kernel.calls()), "is not supported");
  }
  // The runtime's default with nothing present: no NPU, said plainly.
  assert_false(driver_shim::open_npu("no-such-backend").ok());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rknpu_drm_runs_on_every_mask),
      cmocka_unit_test(test_rknpu_old_driver_uses_short_mem_create),
      cmocka_unit_test(test_rknpu_misc_device),
      cmocka_unit_test(test_rknpu_timeout_and_reset),
      cmocka_unit_test(test_rocket_runs_and_times_out),
      cmocka_unit_test(test_missing_device_permission_and_version_messages),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
