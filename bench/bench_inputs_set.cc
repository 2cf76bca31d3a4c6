// What rknn_inputs_set costs per frame: a 640x640 RGB input (yolov5s's) handed over the ways
// applications do, into an int8 model (per-tensor input quantization, mean and std in the
// model as the converter writes them) and into a float32 one. Each case times
// rknn_inputs_set alone, the cases interleaved round by round, and prints the median
// microseconds and nanoseconds per element:
//   uint8 NHWC      a camera frame (the vendor samples' form: RKNN_TENSOR_UINT8, NHWC)
//   float32 NCHW    a preprocessed tensor in the model's own order
//   float32 NHWC    a preprocessed tensor in the image's order
//   int8 NHWC pt    pass_through: the model's codes in the image's order (a relayout only)
//   cmake --build BUILD --target bench_inputs_set && BUILD/bench/bench_inputs_set [--rounds N]
//       [--only TEXT]   (the cases whose name contains TEXT, e.g. for perf)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "relu_model.h"
#include "rknn_api.h"

namespace {

constexpr int64_t kChannels = 3, kSide = 640;
constexpr size_t kElements = kChannels * kSide * kSide;

// x -> Relu -> y with the input normalisation a converted detector carries.
std::vector<uint8_t> build_model(orknn::DataType type) {
  const orknn::model::Quantization q = type == orknn::DataType::kInt8
                                           ? orknn::model::Quantization{{1.0f / 255.0f}, {-128}, 0}
                                           : orknn::model::Quantization{};
  orknn::model::InputOptions options;
  options.mean = {0.0f, 0.0f, 0.0f};
  options.std = {255.0f, 255.0f, 255.0f};
  return relu_model(type, {1, kChannels, kSide, kSide}, q, options);
}

rknn_context load(std::vector<uint8_t>& model) {
  rknn_context context = 0;
  if (rknn_init(&context, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr) !=
      RKNN_SUCC) {
    std::fprintf(stderr, "rknn_init failed\n");
    std::exit(1);
  }
  return context;
}

struct Case {
  const char* name;
  rknn_context context;
  rknn_tensor_type type;
  rknn_tensor_format format;
  bool pass_through;
  std::vector<uint8_t> buffer;
  std::vector<double> microseconds;
};

double set_input(Case& c) {
  rknn_input input;
  std::memset(&input, 0, sizeof(input));
  input.buf = c.buffer.data();
  input.size = static_cast<uint32_t>(c.buffer.size());
  input.type = c.type;
  input.fmt = c.format;
  input.pass_through = c.pass_through ? 1 : 0;
  const auto start = std::chrono::steady_clock::now();
  if (rknn_inputs_set(c.context, 1, &input) != RKNN_SUCC) {
    std::fprintf(stderr, "rknn_inputs_set failed for %s\n", c.name);
    std::exit(1);
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

std::vector<uint8_t> filled(size_t bytes, rknn_tensor_type type) {
  std::vector<uint8_t> buffer(bytes);
  uint32_t state = 12345;
  if (type == RKNN_TENSOR_FLOAT32) {
    auto* values = reinterpret_cast<float*>(buffer.data());
    for (size_t e = 0; e < bytes / 4; ++e) {
      state = state * 1664525u + 1013904223u;
      values[e] = static_cast<float>(state >> 24);  // pixel values 0..255
    }
    return buffer;
  }
  for (uint8_t& byte : buffer) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<uint8_t>(state >> 24);
  }
  return buffer;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 30;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--only TEXT]\n", argv[0]);
      return 2;
    }
  }
  std::vector<uint8_t> int8_model = build_model(orknn::DataType::kInt8);
  std::vector<uint8_t> float_model = build_model(orknn::DataType::kFloat32);
  const rknn_context int8_context = load(int8_model);
  const rknn_context float_context = load(float_model);

  std::vector<Case> cases;
  const auto add = [&](const char* name, rknn_context context, rknn_tensor_type type,
                       rknn_tensor_format format, bool pass_through, size_t element_bytes) {
    if (!only.empty() && std::string(name).find(only) == std::string::npos) return;
    cases.push_back(
        {name, context, type, format, pass_through, filled(kElements * element_bytes, type), {}});
  };
  add("int8 model, uint8 NHWC", int8_context, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, false, 1);
  add("int8 model, float32 NCHW", int8_context, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, false, 4);
  add("int8 model, float32 NHWC", int8_context, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC, false, 4);
  add("int8 model, int8 NHWC pass_through", int8_context, RKNN_TENSOR_INT8, RKNN_TENSOR_NHWC, true,
      1);
  add("float32 model, uint8 NHWC", float_context, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, false, 1);
  add("float32 model, float32 NHWC", float_context, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC, false,
      4);

  for (Case& c : cases) set_input(c);  // first calls size the scratch buffers
  for (int round = 0; round < rounds; ++round) {
    for (Case& c : cases) c.microseconds.push_back(set_input(c));
  }
  std::printf("rknn_inputs_set of a [1, 3, 640, 640] input, %d interleaved rounds\n\n", rounds);
  std::printf("| case | median us | min-max us | ns per element |\n|---|---:|---:|---:|\n");
  for (Case& c : cases) {
    std::vector<double>& t = c.microseconds;
    std::sort(t.begin(), t.end());
    const double median = t[t.size() / 2];
    std::printf("| %s | %.0f | %.0f-%.0f | %.3f |\n", c.name, median, t.front(), t.back(),
                median * 1e3 / static_cast<double>(kElements));
  }
  rknn_destroy(int8_context);
  rknn_destroy(float_context);
  return 0;
}
