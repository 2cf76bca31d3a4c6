// What in-place NPU I/O saves: one int8 Relu on [1, 64, 80, 80] run on the NPU backend that
// ORKNN_NPU_BACKEND names (emu by default), three ways interleaved round by round:
//   general    rknn_inputs_set + rknn_run + rknn_outputs_get (NCHW int8, pass_through)
//   nchw_mem   rknn_set_io_mem with NCHW int8 memory: the NPU device converts to and from
//              its NC1HWC2 buffers on every run
//   native_mem rknn_set_io_mem with NC1HWC2 int8 memory from rknn_create_mem: the register
//              programs address it, nothing is converted
// Prints the median microseconds per run of each and the ratios.
//   cmake --build BUILD --target bench_npu_io && ORKNN_NPU_BACKEND=emu BUILD/bench/bench_npu_io
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "relu_model.h"
#include "rknn_api.h"

namespace {

constexpr int64_t kChannels = 64, kSide = 80;
constexpr uint32_t kBytes = kChannels * kSide * kSide;
constexpr int kRounds = 60;

std::vector<uint8_t> build_model() {
  return relu_model(orknn::DataType::kInt8, {1, kChannels, kSide, kSide}, {{0.1f}, {5}, 0});
}

void check(int status, const char* what) {
  if (status != RKNN_SUCC) {
    std::fprintf(stderr, "%s failed: %d\n", what, status);
    std::exit(1);
  }
}

rknn_tensor_attr io_attr(rknn_context context, bool input, rknn_tensor_format format) {
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  check(rknn_query(context, input ? RKNN_QUERY_INPUT_ATTR : RKNN_QUERY_OUTPUT_ATTR, &attr,
                   sizeof(attr)),
        "rknn_query");
  attr.type = RKNN_TENSOR_INT8;
  attr.fmt = format;
  attr.pass_through = input ? 1 : 0;
  return attr;
}

struct ZeroCopy {
  rknn_context context = 0;
  rknn_tensor_mem* in = nullptr;
  rknn_tensor_mem* out = nullptr;
};

ZeroCopy bind(std::vector<uint8_t>& model, rknn_tensor_format format) {
  ZeroCopy setup;
  check(rknn_init(&setup.context, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr),
        "rknn_init");
  setup.in = rknn_create_mem(setup.context, kBytes);
  setup.out = rknn_create_mem(setup.context, kBytes);
  std::memset(setup.in->virt_addr, 3, kBytes);
  rknn_tensor_attr in_attr = io_attr(setup.context, true, format);
  rknn_tensor_attr out_attr = io_attr(setup.context, false, format);
  check(rknn_set_io_mem(setup.context, setup.in, &in_attr), "rknn_set_io_mem input");
  check(rknn_set_io_mem(setup.context, setup.out, &out_attr), "rknn_set_io_mem output");
  return setup;
}

template <typename Body>
double microseconds(Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main() {
  if (!std::getenv("ORKNN_NPU_BACKEND")) setenv("ORKNN_NPU_BACKEND", "emu", 1);
  std::vector<uint8_t> model = build_model();
  rknn_context general = 0;
  check(rknn_init(&general, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr),
        "rknn_init");
  std::vector<uint8_t> input(kBytes, 3);
  ZeroCopy nchw = bind(model, RKNN_TENSOR_NCHW);
  ZeroCopy native = bind(model, RKNN_TENSOR_NC1HWC2);
  std::vector<double> general_us, nchw_us, native_us;
  for (int round = 0; round < kRounds; ++round) {
    general_us.push_back(microseconds([&] {
      rknn_input in;
      std::memset(&in, 0, sizeof(in));
      in.buf = input.data();
      in.size = kBytes;
      in.pass_through = 1;
      check(rknn_inputs_set(general, 1, &in), "rknn_inputs_set");
      check(rknn_run(general, nullptr), "rknn_run");
      rknn_output out;
      std::memset(&out, 0, sizeof(out));
      check(rknn_outputs_get(general, 1, &out, nullptr), "rknn_outputs_get");
      check(rknn_outputs_release(general, 1, &out), "rknn_outputs_release");
    }));
    nchw_us.push_back(microseconds([&] { check(rknn_run(nchw.context, nullptr), "rknn_run"); }));
    native_us.push_back(
        microseconds([&] { check(rknn_run(native.context, nullptr), "rknn_run"); }));
  }
  const double g = median(general_us), n = median(nchw_us), z = median(native_us);
  std::printf("backend %s, int8 Relu [1,%lld,%lld,%lld], %d interleaved rounds, median us/run\n",
              std::getenv("ORKNN_NPU_BACKEND"), static_cast<long long>(kChannels),
              static_cast<long long>(kSide), static_cast<long long>(kSide), kRounds);
  std::printf(
      "general %.1f  nchw_mem %.1f  native_mem %.1f  (native/nchw %.2f, native/general "
      "%.2f)\n",
      g, n, z, z / n, z / g);
  for (ZeroCopy* setup : {&nchw, &native}) {
    rknn_destroy_mem(setup->context, setup->in);
    rknn_destroy_mem(setup->context, setup->out);
    rknn_destroy(setup->context);
  }
  rknn_destroy(general);
  return 0;
}
