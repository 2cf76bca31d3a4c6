// Recognition of vendor-compiled RKNN files, with the real files in the shared folder.
#include <cstdlib>
#include <cstring>
#include <string>

#include "model/model_file.h"
#include "model/vendor_model.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace {

using namespace orknn;
using namespace orknn::model;
using namespace orknn::model::testing;

// Loads ${ORKNN_SHARED_DIR}/vendor-models/<name>; skips the test when the folder is missing.
std::vector<uint8_t> load_vendor_file(const char* name) {
  const char* shared = std::getenv("ORKNN_SHARED_DIR");
  if (shared == nullptr) {
    print_message("ORKNN_SHARED_DIR is not set: skipping (run through ctest)\n");
    skip();
  }
  const std::string path = std::string(shared) + "/vendor-models/" + name;
  Result<std::vector<uint8_t>> bytes = read_model_file(path);
  if (!bytes.ok()) {
    print_message("vendor model not available, skipping: %s\n", bytes.status().message().c_str());
    skip();
  }
  return std::move(bytes).value();
}

void expect_info(const std::vector<uint8_t>& file, uint64_t version, const char* toolkit,
                 const char* compiler) {
  std::optional<VendorModelInfo> info = detect_vendor_model(file.data(), file.size());
  assert_true(info.has_value());
  assert_int_equal(info->format_version, version);
  assert_string_equal(info->target_platform.c_str(), "rk3588");
  assert_string_equal(info->toolkit_version.c_str(), toolkit);
  assert_string_equal(info->compiler_version.c_str(), compiler);
}

void test_v6_model(void** state) {
  const std::vector<uint8_t> file = load_vendor_file("multiple_input_demo.rk3588.v6.rknn");
  expect_info(file, 6, "1.6.2-source_code", "1.6.2b0");
}

void test_v2_model(void** state) {
  const std::vector<uint8_t> file = load_vendor_file("multiple_input_demo.rk3588.v2.rknn");
  expect_info(file, 2, "1.3.4-source_code", "1.4.2b4");
}

void test_custom_op_model(void** state) {
  const std::vector<uint8_t> file = load_vendor_file("dual_residual_custom.rk3588.v6.rknn");
  expect_info(file, 6, "1.6.1-source_code", "1.6.1b12");
}

void test_parse_refuses_with_description(void** state) {
  const std::vector<uint8_t> file = load_vendor_file("multiple_input_demo.rk3588.v6.rknn");
  expect_invalid_model(file,
                       {"vendor-compiled RKNN model", "format version 6", "target platform rk3588",
                        "toolkit version 1.6.2-source_code", "cannot run", "rknn-convert"});
}

void test_describe_message(void** state) {
  VendorModelInfo info;
  info.format_version = 6;
  info.target_platform = "rk3576";
  assert_string_equal(describe_vendor_model(info).c_str(),
                      "this is a vendor-compiled RKNN model (format version 6, target platform "
                      "rk3576), which OpenRKNN cannot run; convert the source model (ONNX) with "
                      "rknn-convert to get a model in the open format");
  VendorModelInfo unknown;
  const std::string text = describe_vendor_model(unknown);
  assert_non_null(std::strstr(text.c_str(), "format version unknown"));
  assert_non_null(std::strstr(text.c_str(), "target platform unknown"));
}

// Without the JSON description (cut off), the platform and versions still come from the payload.
void test_metadata_from_payload_when_json_missing(void** state) {
  std::vector<uint8_t> file = load_vendor_file("multiple_input_demo.rk3588.v6.rknn");
  const uint64_t payload_size = load_u64_le(file.data() + 16);
  file.resize(64 + payload_size);
  expect_info(file, 6, "1.6.2-source_code", "1.6.2b0");
}

void test_not_vendor(void** state) {
  assert_false(detect_vendor_model(nullptr, 0).has_value());
  const uint8_t almost[8] = {'R', 'K', 'N', 'N', 0, 0, 0, 1};
  assert_false(detect_vendor_model(almost, sizeof(almost)).has_value());
  const std::vector<uint8_t> ours = sample_model_bytes();
  assert_false(detect_vendor_model(ours.data(), ours.size()).has_value());
  const uint8_t short_magic[4] = {'R', 'K', 'N', 'N'};
  assert_false(detect_vendor_model(short_magic, sizeof(short_magic)).has_value());
}

void test_truncated_magic_only(void** state) {
  const uint8_t magic_only[12] = {'R', 'K', 'N', 'N', 0, 0, 0, 0, 6, 0, 0, 0};
  std::optional<VendorModelInfo> info = detect_vendor_model(magic_only, sizeof(magic_only));
  assert_true(info.has_value());
  assert_int_equal(info->format_version, 0);  // not all 8 bytes of it are there
  assert_true(info->target_platform.empty());
}

// Every prefix and every byte flip of a real file: detection stays in bounds (ASan) and never
// reports a platform that is not in the file.
void test_hostile_vendor_bytes(void** state) {
  const std::vector<uint8_t> file = load_vendor_file("dual_residual_custom.rk3588.v6.rknn");
  for (size_t length = 0; length <= file.size(); ++length) {
    // A fresh exact-size copy, so that ASan sees a read past `length`.
    const std::vector<uint8_t> prefix(file.begin(), file.begin() + length);
    std::optional<VendorModelInfo> info = detect_vendor_model(prefix.data(), prefix.size());
    assert_int_equal(info.has_value(), length >= 8);
    if (info && !info->target_platform.empty()) {
      assert_string_equal(info->target_platform.c_str(), "rk3588");
    }
  }
  std::vector<uint8_t> corrupted = file;
  for (size_t position = 8; position < 64 + 16; ++position) {
    for (uint8_t value : {0x00, 0x7F, 0xFF}) {
      const uint8_t saved = corrupted[position];
      corrupted[position] = value;
      detect_vendor_model(corrupted.data(), corrupted.size());
      corrupted[position] = saved;
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_v6_model),
      cmocka_unit_test(test_v2_model),
      cmocka_unit_test(test_custom_op_model),
      cmocka_unit_test(test_parse_refuses_with_description),
      cmocka_unit_test(test_describe_message),
      cmocka_unit_test(test_metadata_from_payload_when_json_missing),
      cmocka_unit_test(test_not_vendor),
      cmocka_unit_test(test_truncated_magic_only),
      cmocka_unit_test(test_hostile_vendor_bytes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
