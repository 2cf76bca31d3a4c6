// libFuzzer target: the daemon's text parsers: command-line flags and config files, the
// vendor perf table reader, and the input-tensor check.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "perf_table.h"
#include "server_config.h"
#include "tensor_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using namespace orknn::server;

  // Flags: the input split at NUL bytes into argv.
  std::vector<std::string> arguments = {"rknn_server"};
  std::string current;
  for (char c : text) {
    if (c == '\0') {
      arguments.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  arguments.push_back(current);
  std::vector<const char*> argv;
  for (const std::string& argument : arguments) {
    // --config would read files named by the fuzzer; config files are fuzzed below instead.
    if (argument.find("config") != std::string::npos) return 0;
    argv.push_back(argument.c_str());
  }
  ServerConfig config;
  std::string error;
  if (parse_server_arguments(static_cast<int>(argv.size()), argv.data(), &config, &error)) {
    config.token_file.clear();
    validate_server_config(&config, &error);
  }

  // The same bytes as a config file.
  char path[] = "/tmp/orknn_fuzz_config_XXXXXX";
  const int fd = mkstemp(path);
  if (fd >= 0) {
    const bool written = write(fd, data, size) == static_cast<ssize_t>(size);
    close(fd);
    ServerConfig from_file;
    if (written && text.find("config") == std::string::npos)
      load_config_file(path, &from_file, &error);
    unlink(path);
  }

  // As a perf table.
  const auto layers = parse_perf_detail(text);
  format_perf_summary(layers, static_cast<int64_t>(size), 1.0);

  // As an input tensor against a fixed 1x32x32x3 NHWC uint8 input.
  openrknn::server::v1::Tensor tensor;
  if (tensor.ParseFromArray(data, static_cast<int>(size))) {
    rknn_tensor_attr attribute{};
    attribute.n_dims = 4;
    attribute.dims[0] = 1, attribute.dims[1] = 32, attribute.dims[2] = 32, attribute.dims[3] = 3;
    attribute.n_elems = 3072;
    attribute.size = 3072;
    attribute.fmt = RKNN_TENSOR_NHWC;
    attribute.type = RKNN_TENSOR_UINT8;
    rknn_tensor_attr native = attribute;
    native.size_with_stride = 3072;
    check_input_tensor(tensor, attribute, native);
  }
  return 0;
}
