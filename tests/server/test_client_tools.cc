// rknn-client's parts with fakes: adb behind CommandRunner (and a fake `adb` script on PATH for
// the CLI), libusb behind UsbEnumerator; .npy files; the perf chart; and the CLI end to end
// against a daemon, through --device (adb forward set up and removed) and --addr.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "adb.h"
#include "device_list.h"
#include "npy.h"
#include "perf_chart.h"
#include "rknn_api.h"
#include "usb_devices.h"

#include "server_test_util.h"

namespace {

using namespace orknn::client;
using namespace orknn::server_testing;

class FakeRunner final : public CommandRunner {
 public:
  std::vector<std::vector<std::string>> calls;
  std::map<std::string, std::string> outputs;  // joined argv -> stdout
  int status = 0;
  int run(const std::vector<std::string>& argv, std::string* output) override {
    calls.push_back(argv);
    std::string joined;
    for (const std::string& arg : argv) joined += (joined.empty() ? "" : " ") + arg;
    *output = outputs[joined];
    return status;
  }
};

class FakeUsb final : public UsbEnumerator {
 public:
  std::vector<UsbDeviceInfo> devices;
  bool list(std::vector<UsbDeviceInfo>* out, std::string*) override {
    *out = devices;
    return true;
  }
};

void test_adb_forward_is_removed(void**) {
  FakeRunner runner;
  runner.outputs["adb -s SER1 forward tcp:0 tcp:50051"] = "41234\n";
  AdbClient adb(runner);
  std::string error;
  {
    std::unique_ptr<AdbForward> forward = AdbForward::create(adb, "SER1", 50051, &error);
    assert_non_null(forward.get());
    assert_int_equal(forward->local_port(), 41234);
    assert_int_equal(runner.calls.size(), 1);
  }
  assert_int_equal(runner.calls.size(), 2);
  const std::vector<std::string> expected = {"adb",     "-s",       "SER1",
                                             "forward", "--remove", "tcp:41234"};
  assert_true(runner.calls[1] == expected);
  // adb failing or printing no port: no forward object, nothing to remove, a clear error.
  runner.calls.clear();
  runner.outputs.clear();
  assert_null(AdbForward::create(adb, "SER2", 50051, &error).get());
  assert_true(error.find("forward tcp:0 tcp:50051") != std::string::npos);
  assert_int_equal(runner.calls.size(), 1);
}

void test_device_listing(void**) {
  FakeRunner runner;
  runner.outputs["adb devices"] =
      "* daemon started successfully\nList of devices attached\nVD46C3KM6N\tdevice\n"
      "515e9b401c060c0b\tunauthorized\n\n";
  AdbClient adb(runner);
  FakeUsb usb;
  UsbDeviceInfo board;
  board.vendor_id = kRockchipVendorId, board.product_id = 0x0006, board.bus = 1;
  board.address = 4, board.has_adb_interface = true;
  UsbDeviceInfo maskrom = board;
  maskrom.product_id = 0x350b, maskrom.address = 5, maskrom.has_adb_interface = false;
  maskrom.bcd_usb = 0x0200;
  UsbDeviceInfo loader = maskrom;
  loader.address = 6, loader.bcd_usb = 0x0201;
  UsbDeviceInfo mouse;
  mouse.vendor_id = 0x046d, mouse.product_id = 0xc077;
  usb.devices = {board, maskrom, loader, mouse};
  const std::string text =
      format_device_list(adb, usb, "# boards on the bench\n192.168.7.2:50051\n\n");
  assert_true(text.find("VD46C3KM6N\tdevice\n") != std::string::npos);
  assert_true(text.find("515e9b401c060c0b\tunauthorized\n") != std::string::npos);
  assert_true(text.find("bus 001 device 004  2207:0006  adb\n") != std::string::npos);
  assert_true(text.find("bus 001 device 005  2207:350b  maskrom\n") != std::string::npos);
  assert_true(text.find("bus 001 device 006  2207:350b  loader\n") != std::string::npos);
  assert_true(text.find("046d") == std::string::npos);
  assert_true(text.find("192.168.7.2:50051\n") != std::string::npos);
  assert_true(text.find("bench") == std::string::npos);
  // adb missing: said in the listing, the rest still listed.
  runner.status = -1;
  const std::string without_adb = format_device_list(adb, usb, "");
  assert_true(without_adb.find("'adb devices' failed") != std::string::npos);
  assert_true(without_adb.find("maskrom") != std::string::npos);
}

void test_npy_round_trip(void**) {
  const std::string directory = make_temporary_directory("npy");
  NpyArray array;
  array.dtype = RKNN_TENSOR_FLOAT32;
  array.shape = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, -6};
  array.data.assign(reinterpret_cast<const char*>(values), sizeof(values));
  std::string error;
  assert_true(write_npy(directory + "/a.npy", array, &error));
  NpyArray back;
  assert_true(read_npy(directory + "/a.npy", &back, &error));
  assert_int_equal(back.dtype, RKNN_TENSOR_FLOAT32);
  assert_true(back.shape == array.shape);
  assert_true(back.data == array.data);
  // Not .npy; truncated data.
  std::ofstream(directory + "/bad.npy") << "hello";
  assert_false(read_npy(directory + "/bad.npy", &back, &error));
  assert_true(error.find("bad magic") != std::string::npos);
  std::string bytes;
  {
    std::ifstream file(directory + "/a.npy", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  std::ofstream(directory + "/short.npy", std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  assert_false(read_npy(directory + "/short.npy", &back, &error));
  assert_true(error.find("needs 24") != std::string::npos);
  std::system(("rm -rf '" + directory + "'").c_str());
}

void test_perf_chart(void**) {
  v1::EvalPerfResponse perf;
  perf.set_total_time_us(300);
  perf.set_fps(3333.3);
  for (int i = 0; i < 3; ++i) {
    v1::LayerPerf* layer = perf.add_layers();
    layer->set_id(i + 1);
    layer->set_full_name(i == 1 ? "Conv:<conv&1>" : "Relu:r" + std::to_string(i));
    layer->set_target("CPU");
    layer->set_time_us(100 * i);
  }
  const std::string svg = perf_chart_svg(perf, "m.rknn");
  assert_true(svg.rfind("<svg ", 0) == 0);
  assert_true(svg.find("Conv:&lt;conv&amp;1&gt;") != std::string::npos);
  assert_true(svg.find("<conv") == std::string::npos);
  int bars = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) {
    ++bars;
  }
  assert_int_equal(bars, 3);
  const std::string html = perf_chart_html(perf, "m.rknn");
  assert_true(html.find("<!DOCTYPE html>") == 0 && html.find("<svg") != std::string::npos);
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

int run_cli(const std::vector<std::string>& arguments, const std::string& output_path) {
  std::string command = std::string("'") + ORKNN_CLIENT_BINARY + "'";
  for (const std::string& argument : arguments) command += " '" + argument + "'";
  command += " >'" + output_path + "' 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void test_cli_end_to_end(void**) {
  Fixture fixture;
  const std::string directory = make_temporary_directory("cli");
  // A fake adb: logs its arguments; `forward tcp:0 ...` prints the daemon's port, as adb
  // prints the local port it picked.
  const std::string log = directory + "/adb.log";
  {
    std::ofstream script(directory + "/adb");
    script << "#!/bin/sh\necho \"$*\" >> '" << log << "'\n"
           << "case \"$*\" in *'forward tcp:0 tcp:'*) echo " << fixture.daemon.port()
           << ";; esac\nexit 0\n";
  }
  chmod((directory + "/adb").c_str(), 0755);
  const std::string path = directory + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "");
  setenv("PATH", path.c_str(), 1);

  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  const std::string model_path = directory + "/tiny.rknn";
  std::ofstream(model_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(model.data()),
             static_cast<std::streamsize>(model.size()));
  NpyArray input;
  input.dtype = RKNN_TENSOR_UINT8;
  input.shape = {1, 32, 32, 3};
  input.data.assign(32 * 32 * 3, '\x21');
  std::string error;
  assert_true(write_npy(directory + "/in.npy", input, &error));

  const std::string out = directory + "/out.txt";
  if (run_cli({"--device", "FAKESERIAL", "--port", "50051", "run", model_path, "--input",
               directory + "/in.npy", "--out", directory + "/outputs"},
              out) != 0) {
    fail_msg("rknn-client run failed:\n%s", read_file(out).c_str());
  }
  const std::string adb_calls = read_file(log);
  assert_true(adb_calls.find("-s FAKESERIAL forward tcp:0 tcp:50051\n") != std::string::npos);
  assert_true(adb_calls.find("-s FAKESERIAL forward --remove tcp:" +
                             std::to_string(fixture.daemon.port()) + "\n") != std::string::npos);
  NpyArray output;
  assert_true(read_npy(directory + "/outputs/output_0.npy", &output, &error));
  assert_int_equal(output.dtype, RKNN_TENSOR_FLOAT32);

  const std::string address = fixture.daemon.address();
  assert_int_equal(run_cli({"--addr", address, "perf", model_path, "--loops", "2", "--chart",
                            directory + "/chart.svg"},
                           out),
                   0);
  assert_true(read_file(out).find("Total Time(us): ") != std::string::npos);
  assert_true(read_file(directory + "/chart.svg").rfind("<svg", 0) == 0);
  assert_int_equal(run_cli({"--addr", address, "mem", model_path}, out), 0);
  assert_true(read_file(out).find("Weight Memory: ") != std::string::npos);
  assert_int_equal(run_cli({"--addr", address, "version"}, out), 0);
  assert_true(read_file(out).find("DRV: rknn_server: ") != std::string::npos);
  assert_int_equal(run_cli({"--addr", address, "info"}, out), 0);
  assert_true(read_file(out).find("protocol: v1") != std::string::npos);
  // Errors say what is wrong and exit non-zero.
  assert_int_equal(
      run_cli({"--addr", address, "run", directory + "/missing.rknn", "--out", "x"}, out), 1);
  assert_true(read_file(out).find("cannot read model") != std::string::npos);
  assert_int_equal(run_cli({"--addr", address, "run", model_path, "--out", directory + "/o2"}, out),
                   1);
  assert_true(read_file(out).find("the model has 1 inputs, got 0") != std::string::npos);
  fixture.stop_and_check();
  std::system(("rm -rf '" + directory + "'").c_str());
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_adb_forward_is_removed), cmocka_unit_test(test_device_listing),
      cmocka_unit_test(test_npy_round_trip),         cmocka_unit_test(test_perf_chart),
      cmocka_unit_test(test_cli_end_to_end),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
