// rknn_server end to end over loopback: upload, init, query, run with every dtype/layout
// combination (outputs bit-for-bit equal to a direct C API run of the same model and inputs),
// eval_perf (with fix_freq on a fake sysfs tree), eval_memory and the version strings.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>

#include "rknn_api.h"
#include "tensor_inputs.h"

#include "server_test_util.h"

namespace {

using namespace orknn::server_testing;

// What a direct C API run gives: an output per index, or the rknn_* error code.
struct DirectResult {
  int code = RKNN_SUCC;
  std::vector<std::string> outputs;
};

DirectResult run_directly(const std::vector<uint8_t>& model, const std::vector<v1::Tensor>& inputs,
                          bool want_float) {
  DirectResult result;
  rknn_context context = 0;
  std::vector<uint8_t> copy = model;
  assert_int_equal(rknn_init(&context, copy.data(), static_cast<uint32_t>(copy.size()), 0, nullptr),
                   RKNN_SUCC);
  std::vector<rknn_input> bindings;
  for (const v1::Tensor& tensor : inputs) bindings.push_back(to_rknn_input(tensor));
  result.code = rknn_inputs_set(context, static_cast<uint32_t>(bindings.size()), bindings.data());
  if (result.code == RKNN_SUCC) result.code = rknn_run(context, nullptr);
  if (result.code == RKNN_SUCC) {
    rknn_input_output_num io{};
    rknn_query(context, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
    std::vector<rknn_output> outputs(io.n_output);
    for (uint32_t i = 0; i < io.n_output; ++i) {
      outputs[i].index = i;
      outputs[i].want_float = want_float;
    }
    result.code = rknn_outputs_get(context, io.n_output, outputs.data(), nullptr);
    if (result.code == RKNN_SUCC) {
      for (const rknn_output& output : outputs) {
        result.outputs.emplace_back(static_cast<const char*>(output.buf), output.size);
      }
      rknn_outputs_release(context, io.n_output, outputs.data());
    }
  }
  rknn_destroy(context);
  return result;
}

void check_model_over_server(Fixture& fixture, SampleNetwork network, Precision precision,
                             int* out_compared) {
  const std::vector<uint8_t>& model = sample_model(network, precision);
  auto session = open_session(*fixture.connection);
  const uint64_t context_id = upload_and_init(*session, model);

  v1::QueryAttributesRequest query;
  query.set_session_id(session->id());
  query.set_context_id(context_id);
  v1::QueryAttributesResponse attributes;
  EXPECT_GRPC_OK(fixture.connection->stub().QueryAttributes(
      fixture.connection->call_context().get(), query, &attributes));

  // The attributes are the C API's.
  rknn_context direct = 0;
  std::vector<uint8_t> copy = model;
  assert_int_equal(rknn_init(&direct, copy.data(), static_cast<uint32_t>(copy.size()), 0, nullptr),
                   RKNN_SUCC);
  rknn_input_output_num io{};
  assert_int_equal(rknn_query(direct, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
  assert_int_equal(attributes.inputs_size(), io.n_input);
  assert_int_equal(attributes.outputs_size(), io.n_output);
  std::vector<rknn_tensor_attr> inputs(io.n_input), natives(io.n_input);
  for (uint32_t i = 0; i < io.n_input; ++i) {
    inputs[i].index = natives[i].index = i;
    assert_int_equal(rknn_query(direct, RKNN_QUERY_INPUT_ATTR, &inputs[i], sizeof(inputs[i])),
                     RKNN_SUCC);
    assert_int_equal(
        rknn_query(direct, RKNN_QUERY_NATIVE_INPUT_ATTR, &natives[i], sizeof(natives[i])),
        RKNN_SUCC);
    const v1::TensorAttr& remote = attributes.inputs(static_cast<int>(i));
    assert_string_equal(remote.name().c_str(), inputs[i].name);
    assert_int_equal(remote.shape_size(), inputs[i].n_dims);
    for (uint32_t d = 0; d < inputs[i].n_dims; ++d) {
      assert_int_equal(remote.shape(static_cast<int>(d)), inputs[i].dims[d]);
    }
    assert_int_equal(remote.dtype(), inputs[i].type);
    assert_int_equal(remote.layout(), inputs[i].fmt);
    assert_int_equal(remote.size_bytes(), inputs[i].size);
    assert_int_equal(attributes.native_inputs(static_cast<int>(i)).size_bytes(), natives[i].size);
  }
  for (uint32_t o = 0; o < io.n_output; ++o) {
    rknn_tensor_attr attr{};
    attr.index = o;
    assert_int_equal(rknn_query(direct, RKNN_QUERY_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    assert_string_equal(attributes.outputs(static_cast<int>(o)).name().c_str(), attr.name);
    assert_int_equal(attributes.outputs(static_cast<int>(o)).dtype(), attr.type);
  }
  rknn_destroy(direct);

  uint32_t seed = 1;
  for (const InputVariant& variant : input_variants()) {
    for (bool want_float : {true, false}) {
      v1::RunRequest request;
      request.set_session_id(session->id());
      request.set_context_id(context_id);
      request.set_want_float(want_float);
      std::vector<v1::Tensor> tensors;
      for (uint32_t i = 0; i < io.n_input; ++i) {
        tensors.push_back(make_input_tensor(inputs[i], natives[i], variant, seed++));
        *request.add_inputs() = tensors.back();
      }
      const DirectResult expected = run_directly(model, tensors, want_float);
      v1::RunResponse response;
      const grpc::Status status = fixture.connection->stub().Run(
          fixture.connection->call_context().get(), request, &response);
      if (expected.code != RKNN_SUCC) {
        // The runtime refuses this combination; the server must refuse it too, as a bad input.
        if (status.error_code() != grpc::StatusCode::INVALID_ARGUMENT) {
          fail_msg("%s want_float=%d: the C API returned %d but the server said %s",
                   variant.name().c_str(), want_float, expected.code,
                   orknn::client::status_text(status).c_str());
        }
        continue;
      }
      if (!status.ok()) {
        fail_msg("%s want_float=%d: %s", variant.name().c_str(), want_float,
                 orknn::client::status_text(status).c_str());
      }
      assert_int_equal(response.outputs_size(), expected.outputs.size());
      for (size_t o = 0; o < expected.outputs.size(); ++o) {
        const v1::Tensor& output = response.outputs(static_cast<int>(o));
        if (output.data() != expected.outputs[o]) {
          fail_msg(
              "%s want_float=%d: output %zu differs from the direct C API run (%zu vs %zu "
              "bytes)",
              variant.name().c_str(), want_float, o, output.data().size(),
              expected.outputs[o].size());
        }
        if (want_float) assert_int_equal(output.dtype(), v1::DATA_TYPE_FLOAT32);
      }
      ++*out_compared;
    }
  }
  EXPECT_GRPC_OK(session->close());
}

void test_runs_match_the_c_api(void**) {
  Fixture fixture;
  int compared = 0;
  for (Precision precision : orknn::sample_models::all_precisions()) {
    check_model_over_server(fixture, SampleNetwork::kTiny, precision, &compared);
  }
  check_model_over_server(fixture, SampleNetwork::kTwoInputs, Precision::kInt8, &compared);
  print_message("%d run combinations matched the C API bit for bit\n", compared);
  // At least the plain uint8/float32 inputs must have run on every model.
  assert_true(compared >= 4 * 4);
  fixture.stop_and_check();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text << "\n";
}

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

void make_directories(const std::string& path) {
  std::string partial;
  for (size_t at = 1; at != std::string::npos;) {
    at = path.find('/', at + 1);
    partial = path.substr(0, at);
    mkdir(partial.c_str(), 0755);
  }
}

void test_eval_perf_memory_and_versions(void**) {
  // A fake sysfs tree with an NPU devfreq and a CPU policy, for fix_freq.
  const std::string root = make_temporary_directory("sysfs");
  const std::string npu = root + "/sys/class/devfreq/fdab0000.npu";
  const std::string cpu = root + "/sys/devices/system/cpu/cpufreq/policy0";
  make_directories(npu);
  make_directories(cpu);
  write_text(npu + "/governor", "simple_ondemand");
  write_text(cpu + "/scaling_governor", "schedutil");
  make_directories(root + "/proc/device-tree");
  {
    std::ofstream compatible(root + "/proc/device-tree/compatible", std::ios::binary);
    compatible.write("rockchip,rk3588-evb\0rockchip,rk3588\0", 36);
  }

  Fixture fixture({"--sysfs_root", root});
  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  auto session = open_session(*fixture.connection);
  v1::InitContextRequest options;
  options.set_perf_debug(true);
  const uint64_t context_id = upload_and_init(*session, model, options);

  v1::EvalPerfRequest perf_request;
  perf_request.set_session_id(session->id());
  perf_request.set_context_id(context_id);
  perf_request.set_loops(3);
  perf_request.set_fix_freq(true);
  v1::EvalPerfResponse perf;
  EXPECT_GRPC_OK(fixture.connection->stub().EvalPerf(fixture.connection->call_context().get(),
                                                     perf_request, &perf));
  assert_int_equal(perf.run_times_us_size(), 3);
  assert_true(perf.layers_size() > 2);
  assert_string_equal(perf.layers(0).op_type().c_str(), "InputOperator");
  assert_true(perf.perf_detail_text().find("Network Layer Information Table") != std::string::npos);
  assert_true(perf.summary_text().find("Total Time(us): ") != std::string::npos);
  assert_true(perf.frequency_fixed());
  // The governors are back as they were.
  assert_string_equal(read_text(npu + "/governor").c_str(), "simple_ondemand");
  assert_string_equal(read_text(cpu + "/scaling_governor").c_str(), "schedutil");

  // Memory figures are the C API's.
  v1::EvalMemoryRequest memory_request;
  memory_request.set_session_id(session->id());
  memory_request.set_context_id(context_id);
  v1::EvalMemoryResponse memory;
  EXPECT_GRPC_OK(fixture.connection->stub().EvalMemory(fixture.connection->call_context().get(),
                                                       memory_request, &memory));
  rknn_context direct = 0;
  std::vector<uint8_t> copy = model;
  assert_int_equal(rknn_init(&direct, copy.data(), static_cast<uint32_t>(copy.size()), 0, nullptr),
                   RKNN_SUCC);
  rknn_mem_size sizes{};
  assert_int_equal(rknn_query(direct, RKNN_QUERY_MEM_SIZE, &sizes, sizeof(sizes)), RKNN_SUCC);
  rknn_sdk_version version{};
  assert_int_equal(rknn_query(direct, RKNN_QUERY_SDK_VERSION, &version, sizeof(version)),
                   RKNN_SUCC);
  rknn_destroy(direct);
  assert_int_equal(memory.weight_memory(), sizes.total_weight_size);
  assert_int_equal(memory.internal_memory(), sizes.total_internal_size);
  assert_int_equal(memory.total_memory(),
                   memory.weight_memory() + memory.internal_memory() + memory.other_memory());
  assert_int_equal(memory.model_size(), model.size());
  assert_true(memory.text().find("Memory Profile Info Dump") != std::string::npos);

  // Versions, with and without a context.
  v1::GetSdkVersionRequest version_request;
  version_request.set_session_id(session->id());
  version_request.set_context_id(context_id);
  v1::SdkVersion sdk;
  EXPECT_GRPC_OK(fixture.connection->stub().GetSdkVersion(fixture.connection->call_context().get(),
                                                          version_request, &sdk));
  assert_string_equal(sdk.api_version().c_str(), version.api_version);
  assert_string_equal(sdk.driver_version().c_str(), version.drv_version);
  assert_int_equal(sdk.lines_size(), 3);
  assert_true(sdk.lines(0).rfind("API: ", 0) == 0);
  assert_true(sdk.lines(1).rfind("DRV: rknn_server: 2.3.2 (", 0) == 0);
  assert_true(sdk.lines(2).rfind("DRV: rknnrt: ", 0) == 0);
  assert_true(sdk.runtime_version().size() > 5);
  v1::SdkVersion plain;
  EXPECT_GRPC_OK(fixture.connection->stub().GetSdkVersion(fixture.connection->call_context().get(),
                                                          v1::GetSdkVersionRequest(), &plain));
  assert_string_equal(plain.runtime_version().c_str(), sdk.runtime_version().c_str());

  v1::DeviceInfo info;
  EXPECT_GRPC_OK(fixture.connection->stub().GetDeviceInfo(fixture.connection->call_context().get(),
                                                          v1::GetDeviceInfoRequest(), &info));
  assert_string_equal(info.soc().c_str(), "rk3588");
  assert_int_equal(info.npu_core_count(), 3);
  assert_int_equal(info.protocol_version(), 1);
  assert_true(info.cpu_count() > 0);
  assert_string_equal(info.runtime_version().c_str(), sdk.runtime_version().c_str());

  // A release frees the context: its id is gone afterwards.
  v1::ReleaseContextRequest release;
  release.set_session_id(session->id());
  release.set_context_id(context_id);
  v1::ReleaseContextResponse released;
  EXPECT_GRPC_OK(fixture.connection->stub().ReleaseContext(fixture.connection->call_context().get(),
                                                           release, &released));
  EXPECT_GRPC_CODE(fixture.connection->stub().EvalMemory(fixture.connection->call_context().get(),
                                                         memory_request, &memory),
                   grpc::StatusCode::NOT_FOUND, "context");
  EXPECT_GRPC_OK(session->close());
  fixture.stop_and_check();
  std::system(("rm -rf '" + root + "'").c_str());
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_runs_match_the_c_api),
      cmocka_unit_test(test_eval_perf_memory_and_versions),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
