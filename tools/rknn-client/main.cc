// rknn-client: the host CLI of rknn_server.
//   rknn-client devices
//   rknn-client [--addr HOST:PORT | --device SERIAL] info | version
//   rknn-client ... run MODEL --input a.npy|a.jpg ... --out DIR [--float|--native]
//   rknn-client ... perf MODEL [--loops N] [--core-mask M] [--chart FILE.html|FILE.svg]
//   rknn-client ... mem MODEL
// --device sets up `adb forward` to the board's daemon and removes it afterwards.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adb.h"
#include "image_input.h"
#include "npy.h"
#include "perf_chart.h"
#include "rknn_api.h"
#include "server_client.h"
#include "usb_devices.h"

namespace {

using namespace orknn::client;

constexpr char kUsage[] =
    "usage: rknn-client [--addr HOST:PORT | --device SERIAL [--port P]] [--token T] "
    "[--timeout S] COMMAND\n"
    "commands:\n"
    "  devices                         boards over ADB, Rockchip USB devices and their mode,\n"
    "                                  configured addresses ($RKNN_CLIENT_ADDRESSES_FILE or\n"
    "                                  ~/.config/openrknn/devices)\n"
    "  info                            the board: SoC, NPU, versions, CPU, GPU\n"
    "  version                         API / DRV: rknn_server / DRV: rknnrt\n"
    "  run MODEL --input F ... --out DIR [--native] [--core-mask M]\n"
    "                                  F: .npy or .jpg, one per model input, in order\n"
    "  perf MODEL [--loops N] [--core-mask M] [--chart FILE.html|.svg] [--no-fix-freq]\n"
    "  mem MODEL\n";

struct Options {
  std::string address = "127.0.0.1:50051";
  std::string device;
  int remote_port = 50051;
  std::string token;
  int timeout_seconds = 300;
  std::string command;
  std::string model;
  std::vector<std::string> inputs;
  std::string out_dir;
  bool want_float = true;
  uint32_t core_mask = 0;
  uint32_t loops = 10;
  bool fix_freq = true;
  std::string chart = "perf_chart.html";
};

int fail(const std::string& message) {
  std::fprintf(stderr, "rknn-client: %s\n", message.c_str());
  return 1;
}

bool parse_options(int argc, char** argv, Options* options, std::string* error) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--addr") {
      if (!value(&options->address)) return false;
    } else if (arg == "--device") {
      if (!value(&options->device)) return false;
    } else if (arg == "--token") {
      if (!value(&options->token)) return false;
    } else if (arg == "--port" || arg == "--timeout" || arg == "--loops" || arg == "--core-mask") {
      if (!value(&text)) return false;
      char* end = nullptr;
      const unsigned long number = std::strtoul(text.c_str(), &end, 0);
      if (text.empty() || *end != '\0') {
        *error = arg + " '" + text + "' is not a number";
        return false;
      }
      if (arg == "--port") options->remote_port = static_cast<int>(number);
      if (arg == "--timeout") options->timeout_seconds = static_cast<int>(number);
      if (arg == "--loops") options->loops = static_cast<uint32_t>(number);
      if (arg == "--core-mask") options->core_mask = static_cast<uint32_t>(number);
    } else if (arg == "--input") {
      if (!value(&text)) return false;
      options->inputs.push_back(text);
    } else if (arg == "--out") {
      if (!value(&options->out_dir)) return false;
    } else if (arg == "--chart") {
      if (!value(&options->chart)) return false;
    } else if (arg == "--native") {
      options->want_float = false;
    } else if (arg == "--float") {
      options->want_float = true;
    } else if (arg == "--no-fix-freq") {
      options->fix_freq = false;
    } else if (!arg.empty() && arg[0] == '-') {
      *error = "unknown option " + arg;
      return false;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.empty()) {
    *error = "no command";
    return false;
  }
  options->command = positional[0];
  if (positional.size() > 1) options->model = positional[1];
  return true;
}

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

int list_devices() {
  ProcessRunner runner;
  AdbClient adb(runner);
  LibusbEnumerator usb;
  std::printf("*************************\nall device(s) with adb mode:\n");
  std::vector<AdbDevice> adb_devices;
  std::string error;
  if (!adb.list_devices(&adb_devices, &error)) std::printf("  (%s)\n", error.c_str());
  for (const AdbDevice& device : adb_devices) {
    std::printf("%s\t%s\n", device.serial.c_str(), device.state.c_str());
  }
  std::printf("Rockchip USB device(s):\n");
  std::vector<UsbDeviceInfo> usb_devices;
  if (!usb.list(&usb_devices, &error)) std::printf("  (%s)\n", error.c_str());
  for (const UsbDeviceInfo& device : usb_devices) {
    const std::string mode = rockchip_usb_mode(device);
    if (mode.empty()) continue;
    std::printf("bus %u address %u  %04x:%04x  %s\n", device.bus, device.address, device.vendor_id,
                device.product_id, mode.c_str());
  }
  const char* file = std::getenv("RKNN_CLIENT_ADDRESSES_FILE");
  const char* home = std::getenv("HOME");
  const std::string path =
      file ? file : std::string(home ? home : ".") + "/.config/openrknn/devices";
  std::printf("configured network address(es):\n%s", read_text(path).c_str());
  std::printf("*************************\n");
  return 0;
}

// Uploads MODEL and makes a context; prints the error and returns false on failure.
bool open_model(ServerConnection& connection, const Options& options,
                const openrknn::server::v1::InitContextRequest& init,
                std::unique_ptr<RemoteSession>* session, uint64_t* context_id) {
  std::vector<uint8_t> bytes;
  if (!read_binary_file(options.model, &bytes) || bytes.empty()) {
    fail("cannot read model '" + options.model + "'");
    return false;
  }
  grpc::Status status = RemoteSession::open(connection, "rknn-client", session);
  uint64_t model_id = 0;
  if (status.ok()) status = (*session)->upload_model(bytes, options.model, &model_id);
  if (status.ok()) status = (*session)->init_context(model_id, init, context_id);
  if (!status.ok()) {
    fail(status_text(status));
    return false;
  }
  return true;
}

// The layout an input file is in: the model's own when the dims match it, else the other
// 4-D image order when they match that.
openrknn::server::v1::Layout guess_layout(const NpyArray& array,
                                          const openrknn::server::v1::TensorAttr& attr) {
  const auto& dims = attr.shape();
  if (array.shape.size() == 4 && dims.size() == 4) {
    const bool same = std::equal(array.shape.begin(), array.shape.end(), dims.begin());
    if (!same && attr.layout() == openrknn::server::v1::LAYOUT_NCHW) {
      return openrknn::server::v1::LAYOUT_NHWC;
    }
    if (!same && attr.layout() == openrknn::server::v1::LAYOUT_NHWC) {
      return openrknn::server::v1::LAYOUT_NCHW;
    }
  }
  return attr.layout();
}

int run_model(ServerConnection& connection, const Options& options) {
  if (options.out_dir.empty()) return fail("run needs --out DIR");
  openrknn::server::v1::InitContextRequest init;
  init.set_core_mask(options.core_mask);
  std::unique_ptr<RemoteSession> session;
  uint64_t context_id = 0;
  if (!open_model(connection, options, init, &session, &context_id)) return 1;
  openrknn::server::v1::QueryAttributesRequest query;
  query.set_session_id(session->id());
  query.set_context_id(context_id);
  openrknn::server::v1::QueryAttributesResponse attributes;
  grpc::Status status =
      connection.stub().QueryAttributes(connection.call_context().get(), query, &attributes);
  if (!status.ok()) return fail(status_text(status));
  if (static_cast<int>(options.inputs.size()) != attributes.inputs_size()) {
    return fail("the model has " + std::to_string(attributes.inputs_size()) + " inputs, got " +
                std::to_string(options.inputs.size()) + " --input files");
  }
  openrknn::server::v1::RunRequest request;
  request.set_session_id(session->id());
  request.set_context_id(context_id);
  request.set_want_float(options.want_float);
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& path = options.inputs[i];
    NpyArray array;
    std::string error;
    const bool jpeg = path.size() > 4 && (path.substr(path.size() - 4) == ".jpg" ||
                                          path.substr(path.size() - 5) == ".jpeg");
    if (!(jpeg ? read_jpeg(path, &array, &error) : read_npy(path, &array, &error))) {
      return fail(error);
    }
    openrknn::server::v1::Tensor* tensor = request.add_inputs();
    tensor->set_index(static_cast<uint32_t>(i));
    tensor->set_dtype(static_cast<openrknn::server::v1::DataType>(array.dtype));
    tensor->set_layout(guess_layout(array, attributes.inputs(static_cast<int>(i))));
    for (uint32_t dim : array.shape) tensor->add_shape(dim);
    tensor->set_data(std::move(array.data));
  }
  openrknn::server::v1::RunResponse response;
  status = connection.stub().Run(connection.call_context().get(), request, &response);
  if (!status.ok()) return fail(status_text(status));
  mkdir(options.out_dir.c_str(), 0755);
  for (const auto& output : response.outputs()) {
    NpyArray array;
    array.dtype = static_cast<uint32_t>(output.dtype());
    array.shape.assign(output.shape().begin(), output.shape().end());
    array.data = output.data();
    const std::string path = options.out_dir + "/output_" + std::to_string(output.index()) + ".npy";
    std::string error;
    if (!write_npy(path, array, &error)) return fail(error);
    std::printf("output %u: %s -> %s\n", output.index(),
                attributes.outputs(static_cast<int>(output.index())).name().c_str(), path.c_str());
  }
  std::printf("run time: %lld us\n", static_cast<long long>(response.run_duration_us()));
  return 0;
}

int perf_model(ServerConnection& connection, const Options& options) {
  openrknn::server::v1::InitContextRequest init;
  init.set_perf_debug(true);
  init.set_core_mask(options.core_mask);
  std::unique_ptr<RemoteSession> session;
  uint64_t context_id = 0;
  if (!open_model(connection, options, init, &session, &context_id)) return 1;
  openrknn::server::v1::EvalPerfRequest request;
  request.set_session_id(session->id());
  request.set_context_id(context_id);
  request.set_loops(options.loops);
  request.set_fix_freq(options.fix_freq);
  openrknn::server::v1::EvalPerfResponse perf;
  const grpc::Status status =
      connection.stub().EvalPerf(connection.call_context().get(), request, &perf);
  if (!status.ok()) return fail(status_text(status));
  std::printf("%s%s", perf.perf_detail_text().c_str(), perf.summary_text().c_str());
  std::printf("frequency: %s\n", perf.frequency_message().c_str());
  const bool svg =
      options.chart.size() > 4 && options.chart.substr(options.chart.size() - 4) == ".svg";
  std::ofstream chart(options.chart);
  chart << (svg ? perf_chart_svg(perf, options.model) : perf_chart_html(perf, options.model));
  if (!chart) return fail("cannot write chart '" + options.chart + "'");
  std::printf("chart: %s\n", options.chart.c_str());
  return 0;
}

int memory_model(ServerConnection& connection, const Options& options) {
  openrknn::server::v1::InitContextRequest init;
  init.set_eval_mem(true);
  std::unique_ptr<RemoteSession> session;
  uint64_t context_id = 0;
  if (!open_model(connection, options, init, &session, &context_id)) return 1;
  openrknn::server::v1::EvalMemoryRequest request;
  request.set_session_id(session->id());
  request.set_context_id(context_id);
  openrknn::server::v1::EvalMemoryResponse memory;
  const grpc::Status status =
      connection.stub().EvalMemory(connection.call_context().get(), request, &memory);
  if (!status.ok()) return fail(status_text(status));
  std::printf("%s", memory.text().c_str());
  return 0;
}

int device_info(ServerConnection& connection) {
  openrknn::server::v1::DeviceInfo info;
  const grpc::Status status = connection.stub().GetDeviceInfo(
      connection.call_context().get(), openrknn::server::v1::GetDeviceInfoRequest(), &info);
  if (!status.ok()) return fail(status_text(status));
  std::printf(
      "soc: %s\nplatform: %s\nnpu: %s, %u core(s)\ndriver: %s\nruntime: %s\n"
      "server: %s\ngpu: %s\ncpu: %s x %u (%s)\nprotocol: v%u\n",
      info.soc().c_str(), info.platform().c_str(), info.npu_backend().c_str(),
      info.npu_core_count(), info.driver_version().c_str(), info.runtime_version().c_str(),
      info.server_version().c_str(), info.gpu().c_str(), info.cpu().c_str(), info.cpu_count(),
      info.architecture().c_str(), info.protocol_version());
  return 0;
}

int sdk_version(ServerConnection& connection) {
  openrknn::server::v1::SdkVersion version;
  const grpc::Status status = connection.stub().GetSdkVersion(
      connection.call_context().get(), openrknn::server::v1::GetSdkVersionRequest(), &version);
  if (!status.ok()) return fail(status_text(status));
  std::printf("==============================================\nRKNN VERSION:\n");
  for (const std::string& line : version.lines()) std::printf("    %s\n", line.c_str());
  std::printf("==============================================\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::string error;
  if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!parse_options(argc, argv, &options, &error)) {
    std::fprintf(stderr, "rknn-client: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  if (options.command == "devices") return list_devices();
  const bool needs_model =
      options.command == "run" || options.command == "perf" || options.command == "mem";
  if (needs_model && options.model.empty()) return fail(options.command + " needs a MODEL");

  ProcessRunner runner;
  AdbClient adb(runner);
  std::unique_ptr<AdbForward> forward;  // removed when main returns
  if (!options.device.empty()) {
    forward = AdbForward::create(adb, options.device, options.remote_port, &error);
    if (!forward) return fail(error);
    options.address = "127.0.0.1:" + std::to_string(forward->local_port());
  }
  ConnectOptions connect;
  connect.address = options.address;
  connect.token = options.token;
  connect.timeout_seconds = options.timeout_seconds;
  ServerConnection connection(connect);
  if (options.command == "info") return device_info(connection);
  if (options.command == "version") return sdk_version(connection);
  if (options.command == "run") return run_model(connection, options);
  if (options.command == "perf") return perf_model(connection, options);
  if (options.command == "mem") return memory_model(connection, options);
  std::fprintf(stderr, "rknn-client: unknown command '%s'\n%s", options.command.c_str(), kUsage);
  return 2;
}
