// Times rknn_run on one model through the public C API, for bench_models.py.
//
//   bench_model MODEL.rknn [--runs N] [--warmup N] [--profile]
//
// Inputs are deterministic pseudo-random bytes of each input's native type (the timing of the
// CPU kernels does not depend on the values). Prints one JSON object on stdout:
//   {"init_ms": ..., "run_ms": [...], "median_ms": ..., "cpu_median_ms": ...}
// cpu_median_ms is the median of the process CPU time per run: with one thread it is the run's
// latency without the time other processes took the core (on a busy shared machine the wall
// time is not); with more threads it also counts the workers' spinning.
// --profile adds "perf_detail", the runtime's per-layer table (after one extra profiled run in
// a context created with RKNN_FLAG_COLLECT_PERF_MASK). The CPU thread count is
// ORKNN_CPU_THREADS, read by the runtime.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "rknn_api.h"

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double process_cpu_milliseconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0.0 : n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<uint8_t> read_file(const char* path) {
  std::vector<uint8_t> bytes;
  FILE* file = std::fopen(path, "rb");
  if (!file) return bytes;
  std::fseek(file, 0, SEEK_END);
  bytes.resize(static_cast<size_t>(std::ftell(file)));
  std::fseek(file, 0, SEEK_SET);
  if (std::fread(bytes.data(), 1, bytes.size(), file) != bytes.size()) bytes.clear();
  std::fclose(file);
  return bytes;
}

void json_string(const char* text) {
  std::putchar('"');
  for (const char* p = text; *p; ++p) {
    switch (*p) {
      case '"':
        std::fputs("\\\"", stdout);
        break;
      case '\\':
        std::fputs("\\\\", stdout);
        break;
      case '\n':
        std::fputs("\\n", stdout);
        break;
      default:
        if (static_cast<unsigned char>(*p) >= 0x20) std::putchar(*p);
    }
  }
  std::putchar('"');
}

// Sets every input to pseudo-random data in its native type and layout.
bool set_inputs(rknn_context context) {
  rknn_input_output_num counts{};
  if (rknn_query(context, RKNN_QUERY_IN_OUT_NUM, &counts, sizeof(counts)) != RKNN_SUCC) {
    return false;
  }
  std::vector<std::vector<uint8_t>> buffers(counts.n_input);
  std::vector<rknn_input> inputs(counts.n_input);
  uint32_t state = 12345;
  for (uint32_t i = 0; i < counts.n_input; ++i) {
    rknn_tensor_attr attr{};
    attr.index = i;
    if (rknn_query(context, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)) != RKNN_SUCC) return false;
    buffers[i].resize(attr.size);
    for (uint8_t& byte : buffers[i]) {
      state = state * 1664525u + 1013904223u;
      byte = static_cast<uint8_t>(state >> 24);
    }
    if (attr.type == RKNN_TENSOR_FLOAT32) {
      auto* values = reinterpret_cast<float*>(buffers[i].data());
      for (size_t e = 0; e < attr.size / 4; ++e) values[e] = static_cast<float>(e % 255) / 255.0f;
    }
    inputs[i].index = i;
    inputs[i].buf = buffers[i].data();
    inputs[i].size = attr.size;
    inputs[i].pass_through = 1;  // native type and layout: no conversion in the timing
    inputs[i].type = attr.type;
    inputs[i].fmt = attr.fmt;
  }
  return rknn_inputs_set(context, counts.n_input, inputs.data()) == RKNN_SUCC;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.rknn [--runs N] [--warmup N] [--profile]\n", argv[0]);
    return 2;
  }
  int runs = 20, warmup = 3;
  bool profile = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) {
      warmup = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--profile")) {
      profile = true;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::vector<uint8_t> model = read_file(argv[1]);
  if (model.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  rknn_context context = 0;
  const auto init_start = Clock::now();
  if (rknn_init(&context, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr) !=
      RKNN_SUCC) {
    std::fprintf(stderr, "rknn_init failed\n");
    return 1;
  }
  const double init_ms = milliseconds_since(init_start);
  if (!set_inputs(context)) {
    std::fprintf(stderr, "setting the inputs failed\n");
    return 1;
  }
  std::vector<double> times;
  std::vector<double> cpu_times;
  for (int i = 0; i < warmup + runs; ++i) {
    const auto start = Clock::now();
    const double cpu_start = process_cpu_milliseconds();
    if (rknn_run(context, nullptr) != RKNN_SUCC) {
      std::fprintf(stderr, "rknn_run failed\n");
      return 1;
    }
    if (i >= warmup) {
      times.push_back(milliseconds_since(start));
      cpu_times.push_back(process_cpu_milliseconds() - cpu_start);
    }
  }
  rknn_destroy(context);

  std::string perf_detail;
  if (profile) {
    rknn_context profiled = 0;
    if (rknn_init(&profiled, model.data(), static_cast<uint32_t>(model.size()),
                  RKNN_FLAG_COLLECT_PERF_MASK, nullptr) == RKNN_SUCC &&
        set_inputs(profiled) && rknn_run(profiled, nullptr) == RKNN_SUCC &&
        rknn_run(profiled, nullptr) == RKNN_SUCC) {
      rknn_perf_detail detail{};
      if (rknn_query(profiled, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)) == RKNN_SUCC &&
          detail.perf_data) {
        perf_detail.assign(detail.perf_data, detail.data_len);
      }
      rknn_destroy(profiled);
    }
  }

  std::printf("{\"init_ms\": %.3f, \"median_ms\": %.4f, \"cpu_median_ms\": %.4f, \"run_ms\": [",
              init_ms, median_of(times), median_of(cpu_times));
  for (size_t i = 0; i < times.size(); ++i) std::printf("%s%.4f", i ? ", " : "", times[i]);
  std::printf("]");
  if (profile) {
    std::printf(", \"perf_detail\": ");
    json_string(perf_detail.c_str());
  }
  std::printf("}\n");
  return 0;
}
