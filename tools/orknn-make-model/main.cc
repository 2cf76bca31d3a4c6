// orknn-make-model: writes one of the sample networks (tools/sample_models) as an open-format
// .rknn file, optionally with matching synthetic inputs as .npy files for the samples and
// benchmarks.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sample_models.h"

namespace {

using orknn::sample_models::Precision;
using orknn::sample_models::SampleModelOptions;
using orknn::sample_models::SampleNetwork;

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: orknn-make-model <mobilenet_mini|two_inputs|tiny> <fp32|fp16|int8> "
               "<out.rknn> [options]\n"
               "\n"
               "Writes a sample network with seeded random weights in our open .rknn format.\n"
               "\n"
               "options:\n"
               "  --platform NAME             target platform recorded in the model (default "
               "rk3588)\n"
               "  --seed N                    weight seed (default 1)\n"
               "  --calibration-samples N     int8: synthetic images used to measure activation\n"
               "                              ranges (default 12)\n"
               "  --fuse-activations          Relu6 as Conv attributes instead of Clip nodes\n"
               "  --input-npy PATH            also write a synthetic input (uint8 NHWC .npy);\n"
               "                              repeat once per model input, or give it once and\n"
               "                              inputs 1, 2, ... go to PATH_1.npy, PATH_2.npy, ...\n"
               "  --input-seed N              seed of the synthetic inputs (default: --seed)\n"
               "  -h, --help                  this text\n");
}

bool parse_unsigned(const char* text, uint64_t* out_value) {
  if (!text || !*text || *text == '-') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *out_value = value;
  return true;
}

// "in.npy" -> "in_2.npy"; names without the extension get "_2.npy" appended.
std::string numbered_path(const std::string& path, size_t index) {
  const std::string extension = ".npy";
  const bool has_extension =
      path.size() > extension.size() &&
      path.compare(path.size() - extension.size(), extension.size(), extension) == 0;
  const std::string stem = has_extension ? path.substr(0, path.size() - extension.size()) : path;
  return stem + "_" + std::to_string(index) + extension;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  SampleModelOptions options;
  std::vector<std::string> npy_paths;
  bool input_seed_given = false;
  uint64_t input_seed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    uint64_t number = 0;
    if (arg == "-h" || arg == "--help") {
      print_usage(stdout);
      return 0;
    } else if (arg == "--platform" && value) {
      options.target_platform = value;
      ++i;
    } else if (arg == "--seed" && parse_unsigned(value, &number)) {
      options.seed = number;
      ++i;
    } else if (arg == "--calibration-samples" && parse_unsigned(value, &number) && number > 0 &&
               number <= 1000) {
      options.calibration_samples = static_cast<int>(number);
      ++i;
    } else if (arg == "--fuse-activations") {
      options.fuse_activations = true;
    } else if (arg == "--input-npy" && value) {
      npy_paths.push_back(value);
      ++i;
    } else if (arg == "--input-seed" && parse_unsigned(value, &number)) {
      input_seed = number;
      input_seed_given = true;
      ++i;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "orknn-make-model: bad option or missing/invalid value: %s\n",
                   arg.c_str());
      print_usage(stderr);
      return 2;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 3) {
    print_usage(stderr);
    return 2;
  }
  const orknn::Result<SampleNetwork> network = orknn::sample_models::parse_network(positional[0]);
  const orknn::Result<Precision> precision = orknn::sample_models::parse_precision(positional[1]);
  if (!network.ok() || !precision.ok()) {
    std::fprintf(stderr, "orknn-make-model: %s\n",
                 (!network.ok() ? network.status() : precision.status()).message().c_str());
    return 2;
  }
  const std::string& output_path = positional[2];

  const orknn::Status status = orknn::sample_models::write_sample_model(
      network.value(), precision.value(), options, output_path);
  if (!status.ok()) {
    std::fprintf(stderr, "orknn-make-model: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("wrote %s: %s %s for %s, seed %llu, %.1f M multiply-accumulates\n",
              output_path.c_str(), positional[0].c_str(), positional[1].c_str(),
              options.target_platform.c_str(), static_cast<unsigned long long>(options.seed),
              orknn::sample_models::sample_model_multiply_accumulates(network.value()) / 1e6);

  if (!npy_paths.empty()) {
    const size_t input_count = orknn::sample_models::sample_input_dims(network.value()).size();
    if (npy_paths.size() > input_count) {
      std::fprintf(stderr, "orknn-make-model: %zu --input-npy paths for %zu model inputs\n",
                   npy_paths.size(), input_count);
      return 2;
    }
    for (size_t i = 0; i < input_count; ++i) {
      const std::string path = i < npy_paths.size()    ? npy_paths[i]
                               : npy_paths.size() == 1 ? numbered_path(npy_paths[0], i)
                                                       : std::string();
      if (path.empty()) continue;
      const orknn::sample_models::SampleInput input = orknn::sample_models::make_sample_input(
          network.value(), static_cast<int>(i), input_seed_given ? input_seed : options.seed);
      const orknn::Status written =
          orknn::sample_models::write_npy_uint8(path, input.nhwc_dims, input.pixels);
      if (!written.ok()) {
        std::fprintf(stderr, "orknn-make-model: %s\n", written.message().c_str());
        return 1;
      }
      std::printf(
          "wrote %s: input %zu, uint8 NHWC [%lld, %lld, %lld, %lld]\n", path.c_str(), i,
          static_cast<long long>(input.nhwc_dims[0]), static_cast<long long>(input.nhwc_dims[1]),
          static_cast<long long>(input.nhwc_dims[2]), static_cast<long long>(input.nhwc_dims[3]));
    }
  }
  return 0;
}
