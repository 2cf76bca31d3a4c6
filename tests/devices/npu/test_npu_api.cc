// The NPU through the public C API, as an application sees it with ORKNN_NPU_BACKEND=emu: the
// per-layer table names the NPU with cycles, MAC usage and per-core workload, core masks are
// honoured, and two contexts run at once on different cores with the same results.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "rknn_api.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

std::vector<uint8_t> model_bytes() {
  const char* directory = std::getenv("ORKNN_NPU_MODELS");
  if (!directory) fail_msg("ORKNN_NPU_MODELS is not set");
  const std::string path = std::string(directory) + "/mobilenet_v2_64.rknn";
  std::ifstream file(path, std::ios::binary);
  if (!file) fail_msg("cannot read %s", path.c_str());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
}

rknn_context make_context(std::vector<uint8_t>& bytes, uint32_t flags) {
  rknn_context context = 0;
  assert_int_equal(
      rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()), flags, nullptr),
      RKNN_SUCC);
  return context;
}

// Runs with a fixed input; returns the first output's bytes.
std::vector<uint8_t> run_once(rknn_context context) {
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.index = 0;
  assert_int_equal(rknn_query(context, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
  std::vector<uint8_t> data(attr.size);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 % 200);
  rknn_input input;
  std::memset(&input, 0, sizeof(input));
  input.index = 0;
  input.buf = data.data();
  input.size = attr.size;
  input.pass_through = 1;
  assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  rknn_output output;
  std::memset(&output, 0, sizeof(output));
  assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_SUCC);
  std::vector<uint8_t> result(static_cast<uint8_t*>(output.buf),
                              static_cast<uint8_t*>(output.buf) + output.size);
  rknn_outputs_release(context, 1, &output);
  return result;
}

void test_perf_detail_has_npu_columns(void** state) {
  (void)state;
  std::vector<uint8_t> bytes = model_bytes();
  rknn_context context = make_context(bytes, RKNN_FLAG_COLLECT_PERF_MASK);
  assert_int_equal(rknn_set_core_mask(context, RKNN_NPU_CORE_0_1_2), RKNN_SUCC);
  run_once(context);
  rknn_perf_detail detail;
  std::memset(&detail, 0, sizeof(detail));
  assert_int_equal(rknn_query(context, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
  const std::string table(detail.perf_data, detail.data_len);
  std::printf("%s", table.substr(0, 1500).c_str());
  assert_true(table.find("  NPU  ") != std::string::npos);
  assert_true(table.find("are emulated") != std::string::npos);
  // A tri-core Conv row shows work on more than one core.
  bool split = false;
  for (size_t at = table.find("%/"); at != std::string::npos; at = table.find("%/", at + 1)) {
    const size_t line_start = table.rfind('\n', at) + 1;
    const std::string line = table.substr(line_start, table.find('\n', at) - line_start);
    if (line.find("Conv") != std::string::npos && line.find("/0%/0%") == std::string::npos &&
        line.find("  100%/") == std::string::npos) {
      split = true;
    }
  }
  assert_true(split);
  rknn_destroy(context);
}

void test_contexts_on_different_cores_agree(void** state) {
  (void)state;
  std::vector<uint8_t> bytes = model_bytes();
  rknn_context first = make_context(bytes, 0);
  rknn_context second = make_context(bytes, 0);
  assert_int_equal(rknn_set_core_mask(first, RKNN_NPU_CORE_0), RKNN_SUCC);
  assert_int_equal(rknn_set_core_mask(second, RKNN_NPU_CORE_1), RKNN_SUCC);
  std::vector<uint8_t> a, b;
  std::thread one([&] {
    for (int i = 0; i < 3; ++i) a = run_once(first);
  });
  std::thread two([&] {
    for (int i = 0; i < 3; ++i) b = run_once(second);
  });
  one.join();
  two.join();
  assert_true(!a.empty());
  assert_true(a == b);
  assert_int_equal(rknn_set_core_mask(first, RKNN_NPU_CORE_AUTO), RKNN_SUCC);
  assert_true(run_once(first) == a);
  // A mask naming no core of the RK3588 is refused with the valid ones listed.
  assert_int_equal(rknn_set_core_mask(first, static_cast<rknn_core_mask>(8)),
                   RKNN_ERR_PARAM_INVALID);
  rknn_destroy(first);
  rknn_destroy(second);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_perf_detail_has_npu_columns),
      cmocka_unit_test(test_contexts_on_different_cores_agree),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
