// The rknpu and rocket backends against the preloaded fake kernel (fake_npu_kernel/), which
// interposes open/ioctl/mmap/munmap/close for the NPU nodes and implements each UAPI on the
// emulator: init, memory, submit on core masks, wait, timeout, reset, and the messages for a
// missing device, a permission error and a version mismatch. Each case configures the fake
// through its environment variables before opening the node.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/op_test_harness.h"
#include "devices/npu/npu_test_support.h"
#include "driver_shim/backends.h"
#include "fake_npu_kernel/fake_npu_counters.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;

// The fake's counters since the node was last opened with no fake fd open.
OrknnFakeNpuCounters kernel_counters() {
  auto query = reinterpret_cast<OrknnFakeNpuCountersQuery>(
      dlsym(RTLD_DEFAULT, ORKNN_FAKE_NPU_COUNTERS_SYMBOL));
  if (!query)
    fail_msg("the fake NPU kernel is not loaded: run with LD_PRELOAD=liborknn_fake_npu_kernel.so");
  return query();
}

struct FakeSettings {
  const char* driver;  // rknpu, rknpu-misc, rocket
  const char* node;
  bool deny = false;
  const char* rknpu_version = nullptr;
  const char* rocket_major = nullptr;
};

void configure_fake(const FakeSettings& settings) {
  setenv("ORKNN_FAKE_NPU", settings.driver, 1);
  setenv("ORKNN_FAKE_NPU_NODE", settings.node, 1);
  setenv("ORKNN_FAKE_NPU_DENY", settings.deny ? "1" : "0", 1);
  unsetenv("ORKNN_FAKE_NPU_HANG");
  unsetenv("ORKNN_FAKE_NPU_RKNPU_VERSION");
  unsetenv("ORKNN_FAKE_NPU_ROCKET_MAJOR");
  if (settings.rknpu_version) setenv("ORKNN_FAKE_NPU_RKNPU_VERSION", settings.rknpu_version, 1);
  if (settings.rocket_major) setenv("ORKNN_FAKE_NPU_ROCKET_MAJOR", settings.rocket_major, 1);
}

void set_hang(bool hang) {
  setenv("ORKNN_FAKE_NPU_HANG", hang ? "1" : "0", 1);
}

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

void test_rknpu_drm_runs_on_every_mask(void** state) {
  (void)state;
  configure_fake({"rknpu", "/dev/dri/renderD129"});
  auto npu = driver_shim::open_rknpu();
  if (!npu.ok()) fail_msg("%s", npu.status().message().c_str());
  assert_string_equal((*npu)->info().backend.c_str(), "rknpu");
  assert_int_equal((*npu)->info().driver_version, 906);
  for (uint32_t mask : {0u, 1u, 2u, 4u, 3u, 7u}) {
    expect_runs_like_cpu(*npu, mask);
    assert_int_equal(kernel_counters().last_core_mask, mask);
  }
  const OrknnFakeNpuCounters counters = kernel_counters();
  assert_int_equal(counters.cores_run, 7);
  assert_true(counters.wide_mem_creates > 0);
  assert_int_equal(counters.old_mem_creates, 0);
  assert_true((*npu)->reset().ok());
  assert_int_equal(kernel_counters().resets, 1);
}

void test_rknpu_old_driver_uses_short_mem_create(void** state) {
  (void)state;
  FakeSettings settings{"rknpu", "/dev/dri/card1"};
  settings.rknpu_version = "802";
  configure_fake(settings);
  auto npu = driver_shim::open_rknpu();
  assert_true(npu.ok());
  expect_runs_like_cpu(*npu, 7);
  assert_true(kernel_counters().old_mem_creates > 0);
  assert_int_equal(kernel_counters().wide_mem_creates, 0);
}

void test_rknpu_misc_device(void** state) {
  (void)state;
  configure_fake({"rknpu-misc", "/dev/rknpu"});
  auto npu = driver_shim::open_rknpu();
  if (!npu.ok()) fail_msg("%s", npu.status().message().c_str());
  assert_string_equal((*npu)->info().device_path.c_str(), "/dev/rknpu");
  expect_runs_like_cpu(*npu, 3);
}

void test_rknpu_timeout_and_reset(void** state) {
  (void)state;
  configure_fake({"rknpu", "/dev/dri/renderD128"});
  auto npu = driver_shim::open_rknpu();
  assert_true(npu.ok());
  set_hang(true);
  const ConvCase conv = conv_case();
  const DeviceRun run = run_graph(conv.graph, conv.inputs, *npu, 1);
  assert_int_equal(static_cast<int>(run.status.code()), static_cast<int>(StatusCode::kTimeout));
  assert_non_null(std::strstr(run.status.message().c_str(), "did not finish"));
  set_hang(false);
  assert_true((*npu)->reset().ok());
  expect_runs_like_cpu(*npu, 1);  // usable again after the reset
}

void test_rocket_runs_and_times_out(void** state) {
  (void)state;
  configure_fake({"rocket", "/dev/accel/accel0"});
  auto npu = driver_shim::open_rocket();
  if (!npu.ok()) fail_msg("%s", npu.status().message().c_str());
  assert_string_equal((*npu)->info().backend.c_str(), "rocket");
  expect_runs_like_cpu(*npu, 0);
  expect_runs_like_cpu(*npu, 7);  // three jobs, spread by the scheduler
  assert_int_equal(kernel_counters().cores_run, 7);
  set_hang(true);
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
  configure_fake({"rknpu", "/dev/nothing"});
  expect_open_error(driver_shim::open_rknpu(), "kernel driver loaded");
  expect_open_error(driver_shim::open_rocket(), "CONFIG_DRM_ACCEL_ROCKET");
  expect_open_error(driver_shim::open_npu("auto"), "no NPU found");

  FakeSettings denied{"rknpu", "/dev/dri/renderD128"};
  denied.deny = true;
  configure_fake(denied);
  expect_open_error(driver_shim::open_rknpu(), "usermod -aG render");
  configure_fake({"rknpu-misc", "/dev/rknpu", true});
  expect_open_error(driver_shim::open_rknpu(), "permission denied opening /dev/rknpu");

  FakeSettings too_new{"rknpu", "/dev/dri/renderD128"};
  too_new.rknpu_version = "10000";
  configure_fake(too_new);
  expect_open_error(driver_shim::open_rknpu(), "update the board's kernel");

  FakeSettings rocket_2{"rocket", "/dev/accel/accel0"};
  rocket_2.rocket_major = "2";
  configure_fake(rocket_2);
  expect_open_error(driver_shim::open_rocket(), "is not supported");
  // The runtime's default with nothing present: no NPU, said plainly.
  assert_false(driver_shim::open_npu("no-such-backend").ok());
}

// While the fake owns the NPU paths, every other file, ioctl and mapping reaches the real libc.
void test_other_files_pass_through(void** state) {
  (void)state;
  configure_fake({"rknpu", "/dev/dri/renderD128"});
  char path[] = "/tmp/orknn-fake-npu-XXXXXX";
  const int created = mkstemp(path);
  assert_true(created >= 0);
  assert_int_equal(write(created, "npu", 3), 3);
  assert_int_equal(close(created), 0);
  const int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  int pending = -1;
  assert_int_equal(ioctl(fd, FIONREAD, &pending), 0);  // a regular file: bytes left to read
  assert_int_equal(pending, 3);
  void* mapped = mmap(nullptr, 3, PROT_READ, MAP_SHARED, fd, 0);
  assert_true(mapped != MAP_FAILED);
  assert_memory_equal(mapped, "npu", 3);
  assert_int_equal(munmap(mapped, 3), 0);
  assert_int_equal(close(fd), 0);
  unlink(path);
  // Unconfigured, the fake owns nothing: the NPU paths are the machine's own.
  unsetenv("ORKNN_FAKE_NPU");
  const int rknpu = open("/dev/rknpu", O_RDWR);
  const bool machine_has_one = access("/dev/rknpu", F_OK) == 0;
  assert_int_equal(rknpu >= 0 || errno != ENOENT, machine_has_one);
  if (rknpu >= 0) close(rknpu);
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
      cmocka_unit_test(test_other_files_pass_through),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
