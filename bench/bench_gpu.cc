// GPU figures for docs/gpu.md, through the public C API:
//   1. rknn_init + first rknn_run time with the GPU, in fresh processes: cold (empty OpenRKNN
//      program cache and empty PoCL kernel cache), with only our program cache warm, and warm.
//   2. rknn_run median on the CPU device and on the GPU device (every supported node forced
//      there with ORKNN_GPU=all), interleaved.
//
//   bench_gpu MODEL.rknn [RUNS]
//
// Prints figures only; nothing is asserted (benchmarks live here, not in tests).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rknn_api.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Context {
  rknn_context handle = 0;
  std::vector<float> input;
  rknn_tensor_attr attr{};
};

bool open_context(const char* path, uint32_t flags, Context* out) {
  if (rknn_init(&out->handle, const_cast<char*>(path), 0, flags, nullptr) != RKNN_SUCC) {
    std::fprintf(stderr, "rknn_init failed for %s\n", path);
    return false;
  }
  out->attr.index = 0;
  rknn_query(out->handle, RKNN_QUERY_INPUT_ATTR, &out->attr, sizeof(out->attr));
  out->input.assign(out->attr.n_elems, 0.5f);
  return true;
}

bool run_once(Context& context) {
  rknn_input input{};
  input.index = 0;
  input.buf = context.input.data();
  input.size = static_cast<uint32_t>(context.input.size() * sizeof(float));
  input.type = RKNN_TENSOR_FLOAT32;
  input.fmt = context.attr.fmt;
  if (rknn_inputs_set(context.handle, 1, &input) != RKNN_SUCC) return false;
  if (rknn_run(context.handle, nullptr) != RKNN_SUCC) return false;
  rknn_output output{};
  output.want_float = 1;
  if (rknn_outputs_get(context.handle, 1, &output, nullptr) != RKNN_SUCC) return false;
  rknn_outputs_release(context.handle, 1, &output);
  return true;
}

// Child mode: one GPU rknn_init and the first run, timed.
int measure_first_use(const char* model) {
  setenv("ORKNN_GPU", "all", 1);
  Context context;
  const Clock::time_point start = Clock::now();
  if (!open_context(model, 0, &context)) return 1;
  const double init_ms = milliseconds_since(start);
  const Clock::time_point run_start = Clock::now();
  if (!run_once(context)) return 1;
  std::printf("%.1f %.1f\n", init_ms, milliseconds_since(run_start));
  rknn_destroy(context.handle);
  return 0;
}

void first_use_in_child(const char* self, const char* model, const std::string& cache,
                        const std::string& pocl_cache, const char* label) {
  setenv("ORKNN_GPU_CACHE_DIR", cache.c_str(), 1);
  setenv("POCL_CACHE_DIR", pocl_cache.c_str(), 1);
  std::fflush(stdout);
  std::printf("%-52s init ms, first run ms: ", label);
  std::fflush(stdout);
  char child_flag[] = "--first-use";
  char* arguments[] = {const_cast<char*>(self), child_flag, const_cast<char*>(model), nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, self, nullptr, nullptr, arguments, environ) != 0) return;
  int status = 0;
  waitpid(child, &status, 0);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--first-use") == 0) return measure_first_use(argv[2]);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.rknn [RUNS]\n", argv[0]);
    return 2;
  }
  const char* model = argv[1];
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;

  char cache_pattern[] = "/tmp/orknn-bench-gpu-XXXXXX";
  const char* root = mkdtemp(cache_pattern);
  if (!root) return 1;
  const std::string ours = std::string(root) + "/orknn", pocl = std::string(root) + "/pocl";
  first_use_in_child(argv[0], model, ours, pocl, "cold (no program cache, no PoCL cache):");
  first_use_in_child(argv[0], model, ours, pocl, "warm (program cache and PoCL cache):");
  first_use_in_child(argv[0], model, ours, pocl + "-empty",
                     "program cache warm, PoCL kernel cache empty:");
  const std::string cleanup = std::string("rm -rf '") + root + "'";
  if (std::system(cleanup.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", root);
  unsetenv("ORKNN_GPU_CACHE_DIR");
  unsetenv("POCL_CACHE_DIR");

  Context cpu, gpu;
  if (!open_context(model, 0, &cpu)) return 1;
  setenv("ORKNN_GPU", "all", 1);
  if (!open_context(model, 0, &gpu)) return 1;
  for (int warmup = 0; warmup < 3; ++warmup) {
    if (!run_once(cpu) || !run_once(gpu)) return 1;
  }
  std::vector<double> cpu_ms, gpu_ms;
  for (int run = 0; run < runs; ++run) {
    Clock::time_point start = Clock::now();
    run_once(cpu);
    cpu_ms.push_back(milliseconds_since(start));
    start = Clock::now();
    run_once(gpu);
    gpu_ms.push_back(milliseconds_since(start));
  }
  std::printf(
      "rknn_run median over %d runs (interleaved): CPU device %.2f ms, GPU device "
      "%.2f ms (GPU/CPU %.2fx)\n",
      runs, median(cpu_ms), median(gpu_ms), median(gpu_ms) / median(cpu_ms));
  rknn_destroy(cpu.handle);
  rknn_destroy(gpu.handle);
  return 0;
}
