// NPU driver memory through rknn_create_mem* and in-place NPU I/O, on the backend that
// ORKNN_NPU_BACKEND names (emu, or rknpu/rocket talking to the preloaded fake kernel; ctest runs
// this program once per backend). Checks that the memory is the driver's (it has an NPU
// address), that its fd maps the same bytes in another mapping and another process, that
// set_io_mem runs equal the general API bit for bit, that lifetimes in either order are safe,
// that 200 create/bind/run/destroy cycles leak no fd, and (through the runtime's internals,
// linked statically here) that NC1HWC2 I/O in NPU memory is read and written in place: the
// NPU's layout-conversion counter does not move.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "devices/device.h"
#include "devices/npu/npu_executable.h"
#include "devices/npu/npu_memory.h"
#include "driver_shim/npu.h"
#include "exec/executor.h"
#include "fake_npu_kernel/fake_npu_counters.h"
#include "graph/graph_from_model.h"
#include "graph/shape_inference.h"
#include "model/model_builder.h"
#include "model/model_file.h"
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

constexpr int64_t kChannels = 32, kSide = 4, kPooled = 2;
constexpr size_t kInputBytes = kChannels * kSide * kSide;  // NCHW int8 = NC1HWC2 (C % 16 == 0)
constexpr size_t kOutputBytes = kChannels * kPooled * kPooled;

// int8 Relu then MaxPool 2x2: one NPU segment whose input and output are graph I/O.
std::vector<uint8_t> build_model() {
  ModelBuilder builder;
  const Quantization q{{0.1f}, {5}, 0};
  const int x = builder.add_tensor("x", DataType::kInt8, {1, kChannels, kSide, kSide}, q);
  const int y = builder.add_tensor("y", DataType::kInt8, {1, kChannels, kSide, kSide}, q);
  const int z = builder.add_tensor("z", DataType::kInt8, {1, kChannels, kPooled, kPooled}, q);
  builder.add_node("Relu", {x}, {y}, {}, "relu");
  builder.add_node("MaxPool", {y}, {z},
                   {Attr::ints("kernel_shape", {2, 2}), Attr::ints("strides", {2, 2})}, "pool");
  builder.add_input(x);
  builder.add_output(z);
  builder.set_target_platform("rk3588");
  auto bytes = builder.serialize();
  if (!bytes.ok()) fail_msg("model: %s", bytes.status().message().c_str());
  return std::move(bytes).value();
}

std::vector<uint8_t> input_nchw(int seed) {
  std::vector<uint8_t> data(kInputBytes);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 37 + seed) % 251);
  return data;
}

// NCHW <-> NC1HWC2 with 16-channel blocks, one image.
void to_nc1hwc2(const uint8_t* nchw, int64_t channels, int64_t plane, uint8_t* native) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < plane; ++i)
      native[(c / 16) * plane * 16 + i * 16 + c % 16] = nchw[c * plane + i];
  }
}
std::vector<uint8_t> from_nc1hwc2(const uint8_t* native, int64_t channels, int64_t plane) {
  std::vector<uint8_t> nchw(static_cast<size_t>(channels * plane));
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < plane; ++i)
      nchw[c * plane + i] = native[(c / 16) * plane * 16 + i * 16 + c % 16];
  }
  return nchw;
}

std::string backend() {
  const char* name = std::getenv("ORKNN_NPU_BACKEND");
  if (!name || !*name) fail_msg("ORKNN_NPU_BACKEND must name the backend under test");
  return name;
}

// The fake kernel's counters, or zeros when the emulator is under test (no preload).
OrknnFakeNpuCounters kernel_counters() {
  OrknnFakeNpuCounters none{};
  auto query = reinterpret_cast<OrknnFakeNpuCountersQuery>(
      dlsym(RTLD_DEFAULT, ORKNN_FAKE_NPU_COUNTERS_SYMBOL));
  return query ? query() : none;
}

int open_fd_count() {
  int count = 0;
  DIR* directory = opendir("/proc/self/fd");
  assert_non_null(directory);
  while (readdir(directory)) ++count;
  closedir(directory);
  return count;
}

rknn_context init_context(std::vector<uint8_t>& model) {
  rknn_context context = 0;
  assert_int_equal(
      rknn_init(&context, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr),
      RKNN_SUCC);
  return context;
}

// The general API's output for `input` (NCHW int8, pass_through).
std::vector<uint8_t> general_api_output(rknn_context context, std::vector<uint8_t> input) {
  rknn_input in;
  std::memset(&in, 0, sizeof(in));
  in.index = 0;
  in.buf = input.data();
  in.size = static_cast<uint32_t>(input.size());
  in.pass_through = 1;
  assert_int_equal(rknn_inputs_set(context, 1, &in), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  rknn_output out;
  std::memset(&out, 0, sizeof(out));
  assert_int_equal(rknn_outputs_get(context, 1, &out, nullptr), RKNN_SUCC);
  assert_int_equal(out.size, kOutputBytes);
  std::vector<uint8_t> result(static_cast<uint8_t*>(out.buf),
                              static_cast<uint8_t*>(out.buf) + out.size);
  assert_int_equal(rknn_outputs_release(context, 1, &out), RKNN_SUCC);
  return result;
}

// What the general API computes for `input` on a context of its own.
std::vector<uint8_t> reference_output(std::vector<uint8_t>& model,
                                      const std::vector<uint8_t>& input) {
  rknn_context context = init_context(model);
  std::vector<uint8_t> output = general_api_output(context, input);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  return output;
}

// attr of input (or output) 0 edited to NC1HWC2 int8, the NPU's own layout.
rknn_tensor_attr native_attr(rknn_context context, bool input) {
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.index = 0;
  assert_int_equal(rknn_query(context, input ? RKNN_QUERY_INPUT_ATTR : RKNN_QUERY_OUTPUT_ATTR,
                              &attr, sizeof(attr)),
                   RKNN_SUCC);
  attr.type = RKNN_TENSOR_INT8;
  attr.fmt = RKNN_TENSOR_NC1HWC2;
  attr.pass_through = input ? 1 : 0;
  return attr;
}

// Binds NC1HWC2 memory to input and output, runs, and returns the output as NCHW.
std::vector<uint8_t> zero_copy_output(rknn_context context, rknn_tensor_mem* in,
                                      rknn_tensor_mem* out, const std::vector<uint8_t>& input) {
  rknn_tensor_attr in_attr = native_attr(context, true);
  rknn_tensor_attr out_attr = native_attr(context, false);
  to_nc1hwc2(input.data(), kChannels, kSide * kSide, static_cast<uint8_t*>(in->virt_addr));
  assert_int_equal(rknn_set_io_mem(context, in, &in_attr), RKNN_SUCC);
  assert_int_equal(rknn_set_io_mem(context, out, &out_attr), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  return from_nc1hwc2(static_cast<uint8_t*>(out->virt_addr), kChannels, kPooled * kPooled);
}

void test_create_mem_is_shareable_driver_memory(void**) {
  const OrknnFakeNpuCounters before = kernel_counters();
  rknn_tensor_mem* mem =
      rknn_create_mem2(0, 10000, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT | RKNN_FLAG_MEMORY_CACHEABLE);
  assert_non_null(mem);
  // Driver memory has an NPU address; memfd and dma_heap memory report none.
  assert_true(mem->phys_addr != 0);
  assert_true(mem->fd >= 0);
  const OrknnFakeNpuCounters after = kernel_counters();
  if (backend() != "emu") {
    assert_int_equal(after.live_bos, before.live_bos + 1);
    if (!std::getenv("ORKNN_FAKE_NPU") ||
        std::string(std::getenv("ORKNN_FAKE_NPU")) != "rknpu-misc") {
      assert_int_equal(after.prime_exports, before.prime_exports + 1);
    }
  }
  auto* bytes = static_cast<uint8_t*>(mem->virt_addr);
  for (size_t i = 0; i < mem->size; ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  // Another mapping of the fd sees those bytes, and writes through it show in virt_addr.
  void* other = mmap(nullptr, mem->size, PROT_READ | PROT_WRITE, MAP_SHARED, mem->fd, 0);
  assert_true(other != MAP_FAILED);
  assert_memory_equal(other, bytes, mem->size);
  static_cast<uint8_t*>(other)[9999] = 0xa5;
  assert_int_equal(bytes[9999], 0xa5);
  munmap(other, mem->size);
  // So does another process: the child maps the inherited fd and writes a marker.
  std::fflush(stdout);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    auto* mapped =
        static_cast<uint8_t*>(mmap(nullptr, 10000, PROT_READ | PROT_WRITE, MAP_SHARED, mem->fd, 0));
    if (mapped == MAP_FAILED || mapped[123] != static_cast<uint8_t>(123 * 7)) _exit(1);
    mapped[0] = 0x5a;
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(bytes[0], 0x5a);
  // rknn_mem_sync is the driver's sync: one per direction, two for both.
  for (int mode :
       {RKNN_MEMORY_SYNC_TO_DEVICE, RKNN_MEMORY_SYNC_FROM_DEVICE, RKNN_MEMORY_SYNC_BIDIRECTIONAL}) {
    const int syncs = kernel_counters().mem_syncs;
    assert_int_equal(rknn_mem_sync(0, mem, static_cast<rknn_mem_sync_mode>(mode)), RKNN_SUCC);
    if (backend() != "emu") {
      assert_int_equal(kernel_counters().mem_syncs - syncs,
                       mode == RKNN_MEMORY_SYNC_BIDIRECTIONAL ? 2 : 1);
    }
  }
  assert_int_equal(rknn_destroy_mem(0, mem), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(0, mem), RKNN_ERR_PARAM_INVALID);  // twice: refused, no crash
  // The cache flag reaches the vendor driver (RKNPU_MEM_CACHEABLE, bit 1).
  if (backend() == "rknpu") {
    for (bool cacheable : {true, false}) {
      rknn_tensor_mem* flagged = rknn_create_mem2(
          0, 4096,
          RKNN_MEM_FLAG_ALLOC_NO_CONTEXT |
              (cacheable ? RKNN_FLAG_MEMORY_CACHEABLE : RKNN_FLAG_MEMORY_NON_CACHEABLE));
      assert_non_null(flagged);
      assert_int_equal((kernel_counters().last_mem_create_flags & 2u) != 0, cacheable);
      assert_int_equal(rknn_destroy_mem(0, flagged), RKNN_SUCC);
    }
  }
  if (backend() != "emu") assert_int_equal(kernel_counters().live_bos, before.live_bos);
}

void test_zero_copy_equals_general_api(void**) {
  std::vector<uint8_t> model = build_model();
  const std::vector<uint8_t> input = input_nchw(3);
  const std::vector<uint8_t> expected = reference_output(model, input);
  rknn_context zero_copy = init_context(model);
  rknn_tensor_mem* in = rknn_create_mem(zero_copy, kInputBytes);
  rknn_tensor_mem* out = rknn_create_mem(zero_copy, kOutputBytes);
  assert_non_null(in);
  assert_non_null(out);
  assert_memory_equal(zero_copy_output(zero_copy, in, out, input).data(), expected.data(),
                      kOutputBytes);
  // The context goes first; the memory stays usable and is destroyed after it.
  assert_int_equal(rknn_destroy(zero_copy), RKNN_SUCC);
  static_cast<uint8_t*>(in->virt_addr)[0] = 1;
  assert_int_equal(rknn_mem_sync(0, in, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(0, in), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(0, out), RKNN_SUCC);
}

// An fd from rknn_create_mem wrapped again with rknn_create_mem_from_fd (the internal-memory
// reuse pattern), and the wrapper outliving the original.
void test_create_mem_from_own_fd(void**) {
  std::vector<uint8_t> model = build_model();
  const std::vector<uint8_t> input = input_nchw(11);
  const std::vector<uint8_t> expected = reference_output(model, input);
  rknn_context context = init_context(model);
  rknn_tensor_mem* big = rknn_create_mem(context, 8192);
  assert_non_null(big);
  rknn_tensor_mem* in = rknn_create_mem_from_fd(context, big->fd, big->virt_addr, kInputBytes, 0);
  rknn_tensor_mem* out =
      rknn_create_mem_from_fd(context, big->fd, big->virt_addr, kOutputBytes, 4096);
  assert_non_null(in);
  assert_non_null(out);
  assert_ptr_equal(out->virt_addr, static_cast<uint8_t*>(big->virt_addr) + 4096);
  assert_int_equal(rknn_destroy_mem(context, big), RKNN_SUCC);  // the views keep the buffer
  assert_memory_equal(zero_copy_output(context, in, out, input).data(), expected.data(),
                      kOutputBytes);
  assert_int_equal(rknn_destroy_mem(context, in), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(context, out), RKNN_SUCC);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
}

void test_cycles_leak_no_fd(void**) {
  std::vector<uint8_t> model = build_model();
  const std::vector<uint8_t> input = input_nchw(5);
  const std::vector<uint8_t> expected = reference_output(model, input);
  const int fds_before = open_fd_count();
  const int bos_before = kernel_counters().live_bos;
  rknn_context context = 0;
  for (int cycle = 0; cycle < 200; ++cycle) {
    if (cycle % 50 == 0) {  // contexts come and go too, memory made before and after them
      if (context) assert_int_equal(rknn_destroy(context), RKNN_SUCC);
      context = init_context(model);
    }
    rknn_tensor_mem* in = rknn_create_mem(context, kInputBytes);
    rknn_tensor_mem* out = rknn_create_mem2(context, kOutputBytes, RKNN_FLAG_MEMORY_NON_CACHEABLE);
    assert_non_null(in);
    assert_non_null(out);
    const std::vector<uint8_t> output = zero_copy_output(context, in, out, input);
    if (output != expected) fail_msg("cycle %d: output differs", cycle);
    assert_int_equal(rknn_destroy_mem(context, in), RKNN_SUCC);
    assert_int_equal(rknn_destroy_mem(context, out), RKNN_SUCC);
  }
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  assert_int_equal(open_fd_count(), fds_before);
  assert_int_equal(kernel_counters().live_bos, bos_before);
}

bool fake_kernel(const char* name) {
  const char* fake = std::getenv("ORKNN_FAKE_NPU");
  return fake && std::strcmp(fake, name) == 0;
}

// A buffer the application got elsewhere: a memfd named like the fake kernel's stand-in for a
// dma_heap dma-buf (the emulator maps any fd), or a plain memfd no kernel would import.
struct OutsideBuffer {
  explicit OutsideBuffer(const char* name) {
    fd = memfd_create(name, MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 8192), 0);
    mapping = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(mapping != MAP_FAILED);
  }
  ~OutsideBuffer() {
    munmap(mapping, 8192);
    close(fd);
  }
  int fd;
  void* mapping;
};

// rknn_create_mem_from_fd of a dma-buf: rknpu (DRM PRIME or misc MEM_CREATE) and the emulator
// import it so the NPU addresses it (it gets an NPU address); rocket cannot learn an import's
// NPU address and copies. A memfd is no dma-buf: the kernels refuse it and the runtime copies.
// Every way gives the general API's output.
void test_create_mem_from_outside_fd(void**) {
  std::vector<uint8_t> model = build_model();
  const std::vector<uint8_t> input = input_nchw(13);
  const std::vector<uint8_t> expected = reference_output(model, input);
  for (const char* name : {"orknn-fake-dma-buf", "plain-memfd"}) {
    const bool dma_buf = std::strcmp(name, "orknn-fake-dma-buf") == 0;
    const OrknnFakeNpuCounters before = kernel_counters();
    {
      OutsideBuffer buffer(name);
      rknn_context context = init_context(model);
      rknn_tensor_mem* in =
          rknn_create_mem_from_fd(context, buffer.fd, buffer.mapping, kInputBytes, 0);
      rknn_tensor_mem* out =
          rknn_create_mem_from_fd(context, buffer.fd, buffer.mapping, kOutputBytes, 4096);
      assert_non_null(in);
      assert_non_null(out);
      const bool addressed = backend() == "emu" || (dma_buf && backend() == "rknpu");
      assert_int_equal(in->phys_addr != 0, addressed);
      assert_int_equal(out->phys_addr != 0, addressed);
      assert_memory_equal(zero_copy_output(context, in, out, input).data(), expected.data(),
                          kOutputBytes);
      if (backend() == "rknpu") {
        assert_int_equal(kernel_counters().prime_imports - before.prime_imports, dma_buf ? 2 : 0);
      }
      // Destroyed in the other order than above: memory first, then the context that bound it.
      assert_int_equal(rknn_destroy_mem(context, in), RKNN_SUCC);
      assert_int_equal(rknn_destroy_mem(context, out), RKNN_SUCC);
      assert_int_equal(rknn_destroy(context), RKNN_SUCC);
    }
    if (backend() != "emu") assert_int_equal(kernel_counters().live_bos, before.live_bos);
  }
}

// Below, the runtime's internals (linked statically, so their NPU is this program's own).
struct InternalRun {
  std::shared_ptr<orknn::driver_shim::Npu> npu;
  std::unique_ptr<orknn::exec::Executor> executor;
};

InternalRun make_executor() {
  auto npu = orknn::driver_shim::open_npu(backend());
  if (!npu.ok()) fail_msg("open_npu: %s", npu.status().message().c_str());
  auto file = orknn::model::ModelFile::parse(build_model());
  assert_true(file.ok());
  auto graph = orknn::graph::graph_from_model(*file);
  assert_true(graph.ok());
  std::vector<std::shared_ptr<orknn::devices::Device>> devices = {
      orknn::devices::make_npu_device(*npu), orknn::devices::make_cpu_device()};
  auto executor =
      orknn::exec::Executor::create(*graph, orknn::graph::stored_input_shapes(**graph), devices);
  if (!executor.ok()) fail_msg("executor: %s", executor.status().message().c_str());
  return InternalRun{*npu, std::move(executor).value()};
}

void test_native_io_is_addressed_in_place(void**) {
  InternalRun run = make_executor();
  const std::vector<uint8_t> input = input_nchw(7);
  std::memcpy(run.executor->input_data(0), input.data(), kInputBytes);
  uint64_t conversions = orknn::devices::npu::layout_conversion_count();
  assert_true(run.executor->run(nullptr).ok());
  // Copying I/O: the NPU converted its input and its output.
  assert_int_equal(orknn::devices::npu::layout_conversion_count() - conversions, 2);
  const uint8_t* output = run.executor->output_data(0);
  const std::vector<uint8_t> expected(output, output + kOutputBytes);

  auto allocator = orknn::devices::npu::make_npu_memory_allocator(run.npu);
  auto in = allocator->allocate(kInputBytes, true);
  auto out = allocator->allocate(kOutputBytes, true);
  assert_true(in.ok() && out.ok());
  assert_string_equal((*in)->source().c_str(), run.npu->info().backend.c_str());
  std::shared_ptr<orknn::DeviceMemory> in_memory = std::move(in).value();
  std::shared_ptr<orknn::DeviceMemory> out_memory = std::move(out).value();
  to_nc1hwc2(input.data(), kChannels, kSide * kSide, in_memory->data());
  std::memset(out_memory->data(), 0, kOutputBytes);
  auto bound_in = run.executor->bind_native_io(0, {in_memory.get(), DataType::kInt8, 16});
  auto bound_out = run.executor->bind_native_io(1, {out_memory.get(), DataType::kInt8, 16});
  assert_true(bound_in.ok() && *bound_in);
  assert_true(bound_out.ok() && *bound_out);
  conversions = orknn::devices::npu::layout_conversion_count();
  for (int i = 0; i < 3; ++i) assert_true(run.executor->run(nullptr).ok());
  assert_int_equal(orknn::devices::npu::layout_conversion_count(), conversions);  // no copy
  const std::vector<uint8_t> in_place =
      from_nc1hwc2(out_memory->data(), kChannels, kPooled * kPooled);
  assert_memory_equal(in_place.data(), expected.data(), kOutputBytes);

  // Not the NPU's layout (8-channel blocks) or another NPU's memory: refused, so the caller
  // converts; the other binding stays in place.
  auto wrong_blocks = run.executor->bind_native_io(0, {in_memory.get(), DataType::kInt8, 8});
  assert_true(wrong_blocks.ok() && !*wrong_blocks);
  auto other_npu = orknn::driver_shim::make_emulated_npu(3);
  auto foreign =
      orknn::devices::npu::make_npu_memory_allocator(other_npu)->allocate(kInputBytes, true);
  assert_true(foreign.ok());
  std::shared_ptr<orknn::DeviceMemory> foreign_memory = std::move(foreign).value();
  auto bound_foreign = run.executor->bind_native_io(0, {foreign_memory.get(), DataType::kInt8, 16});
  assert_true(bound_foreign.ok() && !*bound_foreign);
  std::memcpy(run.executor->input_data(0), input.data(), kInputBytes);
  std::memset(out_memory->data(), 0, kOutputBytes);
  assert_true(run.executor->run(nullptr).ok());
  assert_memory_equal(from_nc1hwc2(out_memory->data(), kChannels, kPooled * kPooled).data(),
                      expected.data(), kOutputBytes);

  // The executor, the allocator and our Npu handle go before the memory: it stays valid.
  run.executor.reset();
  allocator.reset();
  run.npu.reset();
  other_npu.reset();
  in_memory->data()[0] = 42;
  assert_true(in_memory->sync(orknn::SyncDirection::kBidirectional, 0, kInputBytes).ok());
  assert_int_equal(in_memory->data()[0], 42);
}

// The driver's answers to bad handles and fds reach the error messages as the kernel's errno.
void test_driver_refuses_bad_handles_and_fds(void**) {
  auto npu = orknn::driver_shim::open_npu(backend());
  assert_true(npu.ok());
  orknn::driver_shim::NpuMemory bogus;
  bogus.handle = 4000;  // never handed out (misc: not an open fd)
  auto exported = (*npu)->export_memory(bogus);
  assert_false(exported.ok());
  if (fake_kernel("rknpu") || fake_kernel("rocket")) {
    assert_non_null(std::strstr(exported.status().message().c_str(), "No such file"));
  }
  int closed = memfd_create("closed", MFD_CLOEXEC);
  close(closed);
  auto imported = (*npu)->import_memory(closed, 4096, 0);
  assert_false(imported.ok());
  if (fake_kernel("rknpu")) {
    assert_non_null(std::strstr(imported.status().message().c_str(), "Bad file descriptor"));
  }
  OutsideBuffer plain("plain-memfd");
  auto not_dma_buf = (*npu)->import_memory(plain.fd, 4096, 0);
  if (backend() == "emu") {
    assert_true(not_dma_buf.ok());  // the emulator maps any fd
    assert_true((*npu)->destroy_memory(*not_dma_buf).ok());
  } else {
    assert_false(not_dma_buf.ok());
    assert_int_equal(static_cast<int>(not_dma_buf.status().code()),
                     static_cast<int>(orknn::StatusCode::kUnimplemented));
  }
  if (fake_kernel("rknpu")) {
    assert_non_null(std::strstr(not_dma_buf.status().message().c_str(), "Invalid argument"));
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_mem_is_shareable_driver_memory),
      cmocka_unit_test(test_zero_copy_equals_general_api),
      cmocka_unit_test(test_create_mem_from_own_fd),
      cmocka_unit_test(test_cycles_leak_no_fd),
      cmocka_unit_test(test_create_mem_from_outside_fd),
      cmocka_unit_test(test_native_io_is_addressed_in_place),
      cmocka_unit_test(test_driver_refuses_bad_handles_and_fds),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
