// rknn_benchmark: times rknn_run the way the vendor's benchmark does.
//
//   rknn_benchmark model.rknn [input ...] [loops] [core_mask] [--warmup N] [--json]
//
// Inputs are optional, one per model input in order (.npy of any dtype, or .jpg/.png/.bmp; several
// may also be joined with '#'); inputs without a file get a deterministic synthetic image. The
// first number is the loop count (default 10), the second the NPU core mask (default 1). The core
// mask is applied after rknn_inputs_set and before the first run; on a platform without core
// selection (one NPU core, or a CPU-only machine) a refusal is a warning, not an error.
//
// Prints the model's attributes and memory figures, the warm-up and timed runs, the average, the
// top 5 of every output, and then runs once more in a context created with
// RKNN_FLAG_COLLECT_PERF_MASK to print the per-layer table. With --json the human-readable text
// goes to stderr and stdout gets one JSON object with every figure.
//
// Uses only rknn_api.h and librknnrt.so (plus ../common/sample_utils.c).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rknn_api.h"
#include "sample_utils.h"

namespace {

FILE* g_text = stdout;  // human-readable output; stderr with --json

struct Options {
  std::string model_path;
  std::vector<std::string> input_paths;
  int loops = 10;
  int warmup = 5;
  uint32_t core_mask = RKNN_NPU_CORE_0;
  bool json = false;
};

void print_usage(FILE* out, const char* program) {
  std::fprintf(out,
               "usage: %s model.rknn [input ...] [loops] [core_mask] [--warmup N] [--json]\n"
               "  input      .npy (any dtype) or .jpg/.png/.bmp, one per model input (also\n"
               "             'a.npy#b.jpg'); missing inputs get a synthetic image\n"
               "  loops      timed runs (default 10)\n"
               "  core_mask  NPU cores: 0 auto, 1, 2, 4, 3 (0_1), 7 (0_1_2), 0xffff all\n"
               "             (default 1)\n"
               "  --warmup N untimed runs first (default 5)\n"
               "  --json     print the figures as one JSON object on stdout (text to stderr)\n",
               program);
}

bool parse_number(const char* text, long long* out_value) {
  if (!text || !*text) return false;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *out_value = value;
  return true;
}

bool file_exists(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return false;
  std::fclose(file);
  return true;
}

// Returns 0 on success, 2 on a usage error (message printed), 1 for --help.
int parse_options(int argc, char** argv, Options* options) {
  int numbers = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    long long number = 0;
    if (arg == "-h" || arg == "--help") {
      print_usage(stdout, argv[0]);
      return 1;
    } else if (arg == "--json") {
      options->json = true;
    } else if (arg == "--warmup" && i + 1 < argc && parse_number(argv[i + 1], &number) &&
               number >= 0 && number <= 100000) {
      options->warmup = static_cast<int>(number);
      ++i;
    } else if (arg.size() > 1 && arg[0] == '-' && !parse_number(arg.c_str(), &number)) {
      std::fprintf(stderr, "unknown option or missing value: %s\n", arg.c_str());
      print_usage(stderr, argv[0]);
      return 2;
    } else if (options->model_path.empty()) {
      options->model_path = arg;
    } else if (parse_number(arg.c_str(), &number) && !file_exists(arg)) {
      if (numbers == 0) {
        if (number < 1 || number > 1000000) {
          std::fprintf(stderr, "loop count %lld is outside [1, 1000000]\n", number);
          return 2;
        }
        options->loops = static_cast<int>(number);
      } else if (numbers == 1) {
        if (number < 0 || number > 0xffffffffLL) {
          std::fprintf(stderr, "core mask %lld is not a 32-bit mask\n", number);
          return 2;
        }
        options->core_mask = static_cast<uint32_t>(number);
      } else {
        std::fprintf(stderr, "unexpected number %s (loops and core_mask already given)\n",
                     arg.c_str());
        return 2;
      }
      ++numbers;
    } else {
      // One file, or several joined with '#'.
      size_t start = 0;
      while (start <= arg.size()) {
        const size_t end = std::min(arg.find('#', start), arg.size());
        if (end > start) options->input_paths.push_back(arg.substr(start, end - start));
        start = end + 1;
      }
    }
  }
  if (options->model_path.empty()) {
    print_usage(stderr, argv[0]);
    return 2;
  }
  return 0;
}

std::string json_string(const char* text) {
  std::string out = "\"";
  for (const char* p = text; *p; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_attr(const rknn_tensor_attr& attr) {
  std::string dims;
  for (uint32_t d = 0; d < attr.n_dims && d < RKNN_MAX_DIMS; ++d) {
    dims += (d ? "," : "") + std::to_string(attr.dims[d]);
  }
  char tail[256];
  std::snprintf(tail, sizeof(tail),
                ",\"dims\":[%s],\"n_elems\":%u,\"size\":%u,\"fmt\":\"%s\",\"type\":\"%s\","
                "\"qnt_type\":\"%s\",\"zp\":%d,\"scale\":%g}",
                dims.c_str(), attr.n_elems, attr.size, get_format_string(attr.fmt),
                get_type_string(attr.type), get_qnt_type_string(attr.qnt_type), attr.zp,
                static_cast<double>(attr.scale));
  return "{\"index\":" + std::to_string(attr.index) + ",\"name\":" + json_string(attr.name) + tail;
}

// Everything the run measured, for the JSON report.
struct Report {
  rknn_sdk_version version{};
  rknn_mem_size memory{};
  rknn_custom_string custom_string{};
  std::vector<rknn_tensor_attr> input_attrs, output_attrs;
  std::vector<std::string> input_descriptions;
  bool core_mask_applied = false;
  int core_mask_ret = 0;
  std::vector<double> warmup_ms, run_ms;
  std::vector<std::vector<std::pair<int32_t, float>>> top5;
  long long perf_run_us = -1;
  std::string perf_detail;
};

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

void print_json(const Options& options, const Report& report) {
  double total = 0.0;
  for (double ms : report.run_ms) total += ms;
  const double average = report.run_ms.empty() ? 0.0 : total / report.run_ms.size();
  std::string out = "{";
  out += "\"model\":" + json_string(options.model_path.c_str());
  out += ",\"sdk_version\":" + json_string(report.version.api_version);
  out += ",\"driver_version\":" + json_string(report.version.drv_version);
  out += ",\"custom_string\":" + json_string(report.custom_string.string);
  out += ",\"inputs\":[";
  for (size_t i = 0; i < report.input_attrs.size(); ++i) {
    out += (i ? "," : "") + json_attr(report.input_attrs[i]);
    out.pop_back();  // add the data source to the attr object
    out += ",\"source\":" + json_string(report.input_descriptions[i].c_str()) + "}";
  }
  out += "],\"outputs\":[";
  for (size_t i = 0; i < report.output_attrs.size(); ++i) {
    out += (i ? "," : "") + json_attr(report.output_attrs[i]);
  }
  char figures[1024];
  std::snprintf(
      figures, sizeof(figures),
      "],\"memory\":{\"total_weight_size\":%u,\"total_internal_size\":%u,"
      "\"total_dma_allocated_size\":%llu,\"total_sram_size\":%u,\"free_sram_size\":%u},"
      "\"core_mask\":%u,\"core_mask_applied\":%s,\"core_mask_ret\":%d,"
      "\"warmup\":%d,\"loops\":%d,\"avg_ms\":%.4f,\"median_ms\":%.4f,\"min_ms\":%.4f,"
      "\"max_ms\":%.4f,\"avg_fps\":%.4f,\"perf_run_duration_us\":%lld",
      report.memory.total_weight_size, report.memory.total_internal_size,
      static_cast<unsigned long long>(report.memory.total_dma_allocated_size),
      report.memory.total_sram_size, report.memory.free_sram_size, options.core_mask,
      report.core_mask_applied ? "true" : "false", report.core_mask_ret, options.warmup,
      options.loops, average, median_of(report.run_ms),
      report.run_ms.empty() ? 0.0 : *std::min_element(report.run_ms.begin(), report.run_ms.end()),
      report.run_ms.empty() ? 0.0 : *std::max_element(report.run_ms.begin(), report.run_ms.end()),
      average > 0 ? 1000.0 / average : 0.0, report.perf_run_us);
  out += figures;
  out += ",\"run_ms\":[";
  for (size_t i = 0; i < report.run_ms.size(); ++i) {
    char value[32];
    std::snprintf(value, sizeof(value), "%s%.4f", i ? "," : "", report.run_ms[i]);
    out += value;
  }
  out += "],\"top5\":[";
  for (size_t i = 0; i < report.top5.size(); ++i) {
    out += i ? ",[" : "[";
    for (size_t k = 0; k < report.top5[i].size(); ++k) {
      char entry[64];
      const double value = static_cast<double>(report.top5[i][k].second);
      // JSON has no NaN or infinity.
      if (std::isfinite(value)) {
        std::snprintf(entry, sizeof(entry), "%s{\"index\":%d,\"value\":%g}", k ? "," : "",
                      report.top5[i][k].first, value);
      } else {
        std::snprintf(entry, sizeof(entry), "%s{\"index\":%d,\"value\":null}", k ? "," : "",
                      report.top5[i][k].first);
      }
      out += entry;
    }
    out += "]";
  }
  out += "],\"perf_detail\":" + json_string(report.perf_detail.c_str()) + "}";
  std::printf("%s\n", out.c_str());
}

int fail(const char* call, int ret) {
  std::fprintf(stderr, "%s fail! ret=%d (%s)\n", call, ret, sample_error_name(ret));
  return 1;
}

// Owns a context and the inputs loaded for it.
class Context {
 public:
  ~Context() {
    for (sample_input& input : data_) sample_free_input(&input);
    if (ctx_) rknn_destroy(ctx_);
  }
  rknn_context get() const { return ctx_; }

  int init(const std::string& path, uint32_t flags) {
    const int ret = rknn_init(&ctx_, const_cast<char*>(path.c_str()), 0, flags, nullptr);
    if (ret != RKNN_SUCC) ctx_ = 0;
    return ret;
  }

  // Loads (or synthesises) every input and calls rknn_inputs_set. Returns 0 or prints why not.
  int set_inputs(const std::vector<rknn_tensor_attr>& attrs, const std::vector<std::string>& paths,
                 std::vector<std::string>* descriptions) {
    data_.assign(attrs.size(), sample_input{});
    std::vector<rknn_input> inputs(attrs.size());
    for (size_t i = 0; i < attrs.size(); ++i) {
      char error[512] = {0};
      const int loaded =
          i < paths.size()
              ? sample_load_input(paths[i].c_str(), &attrs[i], &data_[i], error, sizeof(error))
              : sample_make_synthetic_input(&attrs[i], static_cast<uint32_t>(i), &data_[i], error,
                                            sizeof(error));
      if (loaded != 0) {
        std::fprintf(stderr, "input %zu: %s\n", i, error);
        return 1;
      }
      if (descriptions) descriptions->push_back(data_[i].description);
      inputs[i] = rknn_input{};
      inputs[i].index = static_cast<uint32_t>(i);
      inputs[i].buf = data_[i].data;
      inputs[i].size = data_[i].size;
      inputs[i].pass_through = 0;
      inputs[i].type = data_[i].type;
      inputs[i].fmt = data_[i].fmt;
    }
    const int ret = rknn_inputs_set(ctx_, static_cast<uint32_t>(inputs.size()), inputs.data());
    return ret == RKNN_SUCC ? 0 : fail("rknn_inputs_set", ret);
  }

 private:
  rknn_context ctx_ = 0;
  std::vector<sample_input> data_;
};

// Runs `count` times, printing one line per run; returns 0 or 1.
int timed_runs(rknn_context ctx, int count, std::vector<double>* out_ms) {
  for (int i = 0; i < count; ++i) {
    const int64_t start = sample_now_us();
    const int ret = rknn_run(ctx, nullptr);
    const int64_t elapsed = sample_now_us() - start;
    if (ret != RKNN_SUCC) return fail("rknn_run", ret);
    const double ms = static_cast<double>(elapsed) / 1000.0;
    out_ms->push_back(ms);
    std::fprintf(g_text, "%4d: Elapse Time = %.2fms, FPS = %.2f\n", i, ms,
                 elapsed > 0 ? 1e6 / static_cast<double>(elapsed) : 0.0);
  }
  return 0;
}

int run_benchmark(const Options& options) {
  Report report;
  Context context;
  int ret = context.init(options.model_path, 0);
  if (ret != RKNN_SUCC) {
    std::fprintf(stderr, "rknn_init fail! ret=%d (%s), model: %s\n", ret, sample_error_name(ret),
                 options.model_path.c_str());
    return 1;
  }
  const rknn_context ctx = context.get();
  std::fprintf(g_text, "model: %s\n", options.model_path.c_str());

  ret = rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &report.version, sizeof(report.version));
  if (ret != RKNN_SUCC) return fail("rknn_query(SDK_VERSION)", ret);
  std::fprintf(g_text, "rknn_api/rknnrt version: %s, driver version: %s\n",
               report.version.api_version, report.version.drv_version);

  ret = rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &report.memory, sizeof(report.memory));
  if (ret != RKNN_SUCC) return fail("rknn_query(MEM_SIZE)", ret);
  std::fprintf(g_text, "total weight size: %u, total internal size: %u\n",
               report.memory.total_weight_size, report.memory.total_internal_size);
  std::fprintf(g_text, "total dma used size: %llu\n",
               static_cast<unsigned long long>(report.memory.total_dma_allocated_size));
  if (report.memory.total_sram_size > 0) {
    std::fprintf(g_text, "total sram size: %u, free sram size: %u\n", report.memory.total_sram_size,
                 report.memory.free_sram_size);
  }

  rknn_input_output_num io_num{};
  ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
  if (ret != RKNN_SUCC) return fail("rknn_query(IN_OUT_NUM)", ret);
  std::fprintf(g_text, "model input num: %u, output num: %u\n", io_num.n_input, io_num.n_output);

  report.input_attrs.assign(io_num.n_input, rknn_tensor_attr{});
  report.output_attrs.assign(io_num.n_output, rknn_tensor_attr{});
  std::fprintf(g_text, "input tensors:\n");
  for (uint32_t i = 0; i < io_num.n_input; ++i) {
    report.input_attrs[i].index = i;
    ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &report.input_attrs[i], sizeof(rknn_tensor_attr));
    if (ret != RKNN_SUCC) return fail("rknn_query(INPUT_ATTR)", ret);
    sample_print_tensor_attr(g_text, &report.input_attrs[i]);
  }
  std::fprintf(g_text, "output tensors:\n");
  for (uint32_t i = 0; i < io_num.n_output; ++i) {
    report.output_attrs[i].index = i;
    ret =
        rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &report.output_attrs[i], sizeof(rknn_tensor_attr));
    if (ret != RKNN_SUCC) return fail("rknn_query(OUTPUT_ATTR)", ret);
    sample_print_tensor_attr(g_text, &report.output_attrs[i]);
  }
  ret = rknn_query(ctx, RKNN_QUERY_CUSTOM_STRING, &report.custom_string,
                   sizeof(report.custom_string));
  if (ret != RKNN_SUCC) return fail("rknn_query(CUSTOM_STRING)", ret);
  std::fprintf(g_text, "custom string: %s\n", report.custom_string.string);

  if (options.input_paths.size() > io_num.n_input) {
    std::fprintf(stderr, "%zu input files given, but the model has %u inputs\n",
                 options.input_paths.size(), io_num.n_input);
    return 1;
  }
  if (context.set_inputs(report.input_attrs, options.input_paths, &report.input_descriptions)) {
    return 1;
  }
  for (size_t i = 0; i < report.input_descriptions.size(); ++i) {
    std::fprintf(g_text, "input %zu: %s\n", i, report.input_descriptions[i].c_str());
  }

  // As the vendor benchmark: after inputs_set, before the first run.
  ret = rknn_set_core_mask(ctx, static_cast<rknn_core_mask>(options.core_mask));
  report.core_mask_ret = ret;
  report.core_mask_applied = ret == RKNN_SUCC;
  if (ret != RKNN_SUCC) {
    // Tell "this platform has no core selection" (AUTO refused too) from "bad mask".
    if (rknn_set_core_mask(ctx, RKNN_NPU_CORE_AUTO) == RKNN_SUCC) {
      std::fprintf(stderr, "rknn_set_core_mask(%u) fail! ret=%d (%s): not a valid mask here\n",
                   options.core_mask, ret, sample_error_name(ret));
      return 1;
    }
    std::fprintf(g_text,
                 "warning: rknn_set_core_mask(%u) returned %d (%s); this platform has no core "
                 "selection, continuing\n",
                 options.core_mask, ret, sample_error_name(ret));
  } else {
    std::fprintf(g_text, "core mask: %u\n", options.core_mask);
  }

  if (options.warmup > 0) {
    std::fprintf(g_text, "Warmup ...\n");
    if (timed_runs(ctx, options.warmup, &report.warmup_ms)) return 1;
  }
  std::fprintf(g_text, "Begin perf ...\n");
  if (timed_runs(ctx, options.loops, &report.run_ms)) return 1;
  double total = 0.0;
  for (double ms : report.run_ms) total += ms;
  const double average = total / report.run_ms.size();
  std::fprintf(g_text, "Avg Time %.2fms, Avg FPS = %.3f\n", average,
               average > 0 ? 1000.0 / average : 0.0);

  // Results of the last run.
  std::vector<rknn_output> outputs(io_num.n_output);
  for (uint32_t i = 0; i < io_num.n_output; ++i) {
    outputs[i] = rknn_output{};
    outputs[i].index = i;
    outputs[i].want_float = 1;
  }
  ret = rknn_outputs_get(ctx, io_num.n_output, outputs.data(), nullptr);
  if (ret != RKNN_SUCC) return fail("rknn_outputs_get", ret);
  for (uint32_t i = 0; i < io_num.n_output; ++i) {
    const uint32_t count = outputs[i].size / sizeof(float);
    const uint32_t top = std::min<uint32_t>(count, 5);
    int32_t classes[5];
    float values[5];
    sample_top_n(static_cast<const float*>(outputs[i].buf), count, top, classes, values);
    std::fprintf(g_text, "---- Top%u ----%s%s\n", top, io_num.n_output > 1 ? " output " : "",
                 io_num.n_output > 1 ? report.output_attrs[i].name : "");
    report.top5.emplace_back();
    for (uint32_t k = 0; k < top; ++k) {
      std::fprintf(g_text, "%8.6f - %d\n", values[k], classes[k]);
      report.top5.back().emplace_back(classes[k], values[k]);
    }
  }
  ret = rknn_outputs_release(ctx, io_num.n_output, outputs.data());
  if (ret != RKNN_SUCC) return fail("rknn_outputs_release", ret);

  // One more run with per-layer timing, in its own context so the timed runs above are not
  // slowed by the profiler.
  {
    Context perf_context;
    ret = perf_context.init(options.model_path, RKNN_FLAG_COLLECT_PERF_MASK);
    if (ret != RKNN_SUCC) return fail("rknn_init(COLLECT_PERF_MASK)", ret);
    if (perf_context.set_inputs(report.input_attrs, options.input_paths, nullptr)) return 1;
    if (report.core_mask_applied) {
      rknn_set_core_mask(perf_context.get(), static_cast<rknn_core_mask>(options.core_mask));
    }
    ret = rknn_run(perf_context.get(), nullptr);
    if (ret != RKNN_SUCC) return fail("rknn_run", ret);
    rknn_perf_detail detail{};
    ret = rknn_query(perf_context.get(), RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail));
    if (ret != RKNN_SUCC) return fail("rknn_query(PERF_DETAIL)", ret);
    if (detail.perf_data && detail.data_len > 0) {
      report.perf_detail.assign(detail.perf_data, static_cast<size_t>(detail.data_len));
      // The string may carry its terminating NUL inside data_len.
      while (!report.perf_detail.empty() && report.perf_detail.back() == '\0') {
        report.perf_detail.pop_back();
      }
    }
    std::fprintf(g_text, "rknn run perf detail is:\n%s%s", report.perf_detail.c_str(),
                 !report.perf_detail.empty() && report.perf_detail.back() == '\n' ? "" : "\n");
    rknn_perf_run perf_run{};
    ret = rknn_query(perf_context.get(), RKNN_QUERY_PERF_RUN, &perf_run, sizeof(perf_run));
    if (ret != RKNN_SUCC) return fail("rknn_query(PERF_RUN)", ret);
    report.perf_run_us = static_cast<long long>(perf_run.run_duration);
    std::fprintf(g_text, "perf run duration: %lld us\n", report.perf_run_us);
  }

  if (options.json) print_json(options, report);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const int parsed = parse_options(argc, argv, &options);
  if (parsed == 1) return 0;
  if (parsed != 0) return parsed;
  if (options.json) g_text = stderr;
  return run_benchmark(options);
}
