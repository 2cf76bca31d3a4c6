// rknn_init / rknn_dup_context / rknn_destroy / core masks: every accepted form and every
// rejected argument.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "api/api_test_util.h"

using namespace orknn::api_testing;

namespace {

std::vector<uint8_t> affine_bytes() {
  return build_affine_model(AffineModelOptions{});
}

// Runs the affine model on a fixed input and checks the first output.
void expect_context_works(rknn_context context) {
  std::vector<uint8_t> image = {12, 24, 38, 10, 20, 30, 8, 16, 22, 14, 28, 46};
  rknn_input input = make_input(0, image.data(), 12, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
  assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  std::vector<float> user(image.begin(), image.end());
  expect_near_all(get_float_output(context, 0, 12), affine_model_expected(user, false), 1e-5);
}

void test_init_from_buffer_copies_it(void**) {
  std::vector<uint8_t> bytes = affine_bytes();
  rknn_context context = init_or_fail(bytes);
  std::fill(bytes.begin(), bytes.end(), 0xAB);  // the runtime must not depend on the buffer
  bytes.clear();
  bytes.shrink_to_fit();
  expect_context_works(context);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
}

void test_init_from_path(void**) {
  const std::string path = write_temporary_file(affine_bytes(), "path");
  rknn_context context = 0;
  assert_int_equal(rknn_init(&context, const_cast<char*>(path.c_str()), 0, 0, nullptr), RKNN_SUCC);
  expect_context_works(context);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  std::remove(path.c_str());
}

void test_init_with_model_window(void**) {
  const std::vector<uint8_t> model = affine_bytes();
  // 100 bytes before the model and 37 after it, as when a model is embedded in a bigger file.
  std::vector<uint8_t> container(100 + model.size() + 37, 0x55);
  std::copy(model.begin(), model.end(), container.begin() + 100);
  rknn_init_extend extend;
  std::memset(&extend, 0, sizeof(extend));
  extend.real_model_offset = 100;
  extend.real_model_size = static_cast<uint32_t>(model.size());

  rknn_context context = 0;
  assert_int_equal(
      rknn_init(&context, container.data(), static_cast<uint32_t>(container.size()), 0, &extend),
      RKNN_SUCC);
  expect_context_works(context);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);

  const std::string path = write_temporary_file(container, "window");
  assert_int_equal(rknn_init(&context, const_cast<char*>(path.c_str()), 0, 0, &extend), RKNN_SUCC);
  expect_context_works(context);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);

  // A window past the end of the file or buffer is refused.
  extend.real_model_size = static_cast<uint32_t>(container.size());
  assert_int_not_equal(rknn_init(&context, const_cast<char*>(path.c_str()), 0, 0, &extend),
                       RKNN_SUCC);
  assert_int_equal(
      rknn_init(&context, container.data(), static_cast<uint32_t>(container.size()), 0, &extend),
      RKNN_ERR_PARAM_INVALID);
  extend.real_model_offset = -4;
  extend.real_model_size = 10;
  assert_int_equal(
      rknn_init(&context, container.data(), static_cast<uint32_t>(container.size()), 0, &extend),
      RKNN_ERR_PARAM_INVALID);
  std::remove(path.c_str());
}

void test_init_rejects_bad_arguments(void**) {
  std::vector<uint8_t> bytes = affine_bytes();
  rknn_context context = 0;
  assert_int_equal(
      rknn_init(nullptr, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr),
      RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_init(&context, nullptr, 100, 0, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_init(&context, const_cast<char*>(""), 0, 0, nullptr),
                   RKNN_ERR_PARAM_INVALID);
  const int missing =
      rknn_init(&context, const_cast<char*>("/nonexistent/model.rknn"), 0, 0, nullptr);
  assert_true(missing == RKNN_ERR_PARAM_INVALID || missing == RKNN_ERR_MODEL_INVALID ||
              missing == RKNN_ERR_FAIL);
  // Not a model at all.
  std::vector<uint8_t> text(300, 'x');
  assert_int_equal(rknn_init(&context, text.data(), static_cast<uint32_t>(text.size()), 0, nullptr),
                   RKNN_ERR_MODEL_INVALID);
  // A zero-copy model buffer must be described by extend and come from rknn_create_mem*.
  assert_int_equal(rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()),
                             RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, nullptr),
                   RKNN_ERR_PARAM_INVALID);
  // Weight sharing needs a live context to share with.
  rknn_init_extend extend;
  std::memset(&extend, 0, sizeof(extend));
  extend.ctx = 12345;
  assert_int_equal(rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()),
                             RKNN_FLAG_SHARE_WEIGHT_MEM, &extend),
                   RKNN_ERR_CTX_INVALID);
}

void test_vendor_models_are_refused(void**) {
  const char* shared = std::getenv("ORKNN_SHARED_DIR");
  if (!shared) skip();
  for (const char* name :
       {"multiple_input_demo.rk3588.v6.rknn", "multiple_input_demo.rk3588.v2.rknn",
        "dual_residual_custom.rk3588.v6.rknn"}) {
    const std::string path = std::string(shared) + "/vendor-models/" + name;
    std::ifstream probe(path);
    if (!probe) {
      std::printf("skipping %s: not found\n", path.c_str());
      continue;
    }
    rknn_context context = 0;
    assert_int_equal(rknn_init(&context, const_cast<char*>(path.c_str()), 0, 0, nullptr),
                     RKNN_ERR_MODEL_INVALID);
  }
}

void test_destroy_and_invalid_contexts(void**) {
  rknn_context context = init_or_fail(affine_bytes());
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  assert_int_equal(rknn_destroy(context), RKNN_ERR_CTX_INVALID);
  assert_int_equal(rknn_run(context, nullptr), RKNN_ERR_CTX_INVALID);
  rknn_input_output_num numbers;
  assert_int_equal(rknn_query(context, RKNN_QUERY_IN_OUT_NUM, &numbers, sizeof(numbers)),
                   RKNN_ERR_CTX_INVALID);
  assert_int_equal(rknn_destroy(0), RKNN_ERR_CTX_INVALID);
  assert_int_equal(rknn_run(0xdeadbeef, nullptr), RKNN_ERR_CTX_INVALID);
  assert_int_equal(rknn_set_core_mask(0, RKNN_NPU_CORE_AUTO), RKNN_ERR_CTX_INVALID);
}

void test_dup_context_shares_the_model(void**) {
  rknn_context original = init_or_fail(affine_bytes());
  rknn_context copy = 0;
  assert_int_equal(rknn_dup_context(&original, &copy), RKNN_SUCC);
  assert_true(copy != original);
  expect_context_works(copy);
  // Either may be destroyed first.
  assert_int_equal(rknn_destroy(original), RKNN_SUCC);
  expect_context_works(copy);
  assert_int_equal(rknn_destroy(copy), RKNN_SUCC);

  assert_int_equal(rknn_dup_context(nullptr, &copy), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_dup_context(&original, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_dup_context(&original, &copy), RKNN_ERR_CTX_INVALID);  // destroyed
}

void test_model_info_only_context(void**) {
  rknn_context context = init_or_fail(affine_bytes(), RKNN_FLAG_COLLECT_MODEL_INFO_ONLY);
  rknn_mem_size memory;
  assert_int_equal(rknn_query(context, RKNN_QUERY_MEM_SIZE, &memory, sizeof(memory)), RKNN_SUCC);
  assert_true(memory.total_weight_size > 0);
  assert_int_equal(rknn_run(context, nullptr), RKNN_ERR_PARAM_INVALID);
  // The vendor's dynamic-shape demo then calls rknn_init again on the same variable.
  rknn_context first = context;
  context = init_or_fail(affine_bytes());
  expect_context_works(context);
  assert_int_equal(rknn_destroy(first), RKNN_SUCC);
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
}

void test_core_masks_per_platform(void**) {
  struct Case {
    const char* platform;
    std::vector<uint32_t> valid;
    std::vector<uint32_t> invalid;
  };
  const Case cases[] = {
      {"rk3588", {0, 1, 2, 4, 3, 7, 0xffff}, {5, 6, 8, 0x10000, 0xfffe}},
      {"rk3576", {0, 1, 2, 3, 0xffff}, {4, 5, 6, 7, 0x10000}},
      {"rk3566", {}, {0, 1, 2, 0xffff}},
  };
  for (const Case& c : cases) {
    AffineModelOptions options;
    options.target_platform = c.platform;
    rknn_context context = init_or_fail(build_affine_model(options));
    for (uint32_t mask : c.valid) {
      assert_int_equal(rknn_set_core_mask(context, static_cast<rknn_core_mask>(mask)), RKNN_SUCC);
    }
    for (uint32_t mask : c.invalid) {
      assert_int_equal(rknn_set_core_mask(context, static_cast<rknn_core_mask>(mask)),
                       RKNN_ERR_PARAM_INVALID);
    }
    expect_context_works(context);
    const int cores = std::string(c.platform) == "rk3588"   ? 3
                      : std::string(c.platform) == "rk3576" ? 2
                                                            : 1;
    assert_int_equal(rknn_set_batch_core_num(context, cores),
                     cores > 1 ? RKNN_SUCC : RKNN_ERR_PARAM_INVALID);
    assert_int_equal(rknn_set_batch_core_num(context, cores + 1), RKNN_ERR_PARAM_INVALID);
    assert_int_equal(rknn_set_batch_core_num(context, 0), RKNN_ERR_PARAM_INVALID);
    assert_int_equal(rknn_destroy(context), RKNN_SUCC);
  }
}

void test_unknown_platform_is_refused(void**) {
  AffineModelOptions options;
  options.target_platform = "rk9999";
  std::vector<uint8_t> bytes;
  try {
    bytes = build_affine_model(options);
  } catch (...) {
    skip();  // the writer may already refuse it
  }
  rknn_context context = 0;
  assert_int_equal(
      rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr),
      RKNN_ERR_MODEL_INVALID);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_from_buffer_copies_it),
      cmocka_unit_test(test_init_from_path),
      cmocka_unit_test(test_init_with_model_window),
      cmocka_unit_test(test_init_rejects_bad_arguments),
      cmocka_unit_test(test_vendor_models_are_refused),
      cmocka_unit_test(test_destroy_and_invalid_contexts),
      cmocka_unit_test(test_dup_context_shares_the_model),
      cmocka_unit_test(test_model_info_only_context),
      cmocka_unit_test(test_core_masks_per_platform),
      cmocka_unit_test(test_unknown_platform_is_refused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
