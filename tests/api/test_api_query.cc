// rknn_query: every command, in every precision, and every way to call it wrongly.
#include <string>
#include <vector>

#include "api/api_test_util.h"

using namespace orknn::api_testing;

namespace {

struct PrecisionCase {
  Precision precision;
  rknn_tensor_type type;
  uint32_t element_bytes;
};
const PrecisionCase kPrecisions[] = {
    {Precision::kFloat32, RKNN_TENSOR_FLOAT32, 4},
    {Precision::kFloat16, RKNN_TENSOR_FLOAT16, 2},
    {Precision::kInt8, RKNN_TENSOR_INT8, 1},
};

rknn_context init_affine(Precision precision, const char* platform = "rk3588", uint32_t flags = 0) {
  AffineModelOptions options;
  options.precision = precision;
  options.target_platform = platform;
  return init_or_fail(build_affine_model(options), flags);
}

void expect_dims(const rknn_tensor_attr& attr, std::vector<uint32_t> dims) {
  assert_int_equal(attr.n_dims, dims.size());
  for (size_t i = 0; i < dims.size(); ++i) assert_int_equal(attr.dims[i], dims[i]);
  for (size_t i = dims.size(); i < RKNN_MAX_DIMS; ++i) assert_int_equal(attr.dims[i], 0);
}

void test_in_out_num(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  rknn_input_output_num numbers{99, 99};
  assert_int_equal(rknn_query(context, RKNN_QUERY_IN_OUT_NUM, &numbers, sizeof(numbers)),
                   RKNN_SUCC);
  assert_int_equal(numbers.n_input, 1);
  assert_int_equal(numbers.n_output, 2);
  rknn_destroy(context);
}

void test_input_and_output_attrs(void**) {
  for (const PrecisionCase& c : kPrecisions) {
    rknn_context context = init_affine(c.precision);
    for (rknn_query_cmd command :
         {RKNN_QUERY_INPUT_ATTR, RKNN_QUERY_NATIVE_INPUT_ATTR, RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR,
          RKNN_QUERY_CURRENT_INPUT_ATTR}) {
      rknn_tensor_attr input = query_attr(context, command, 0);
      assert_string_equal(input.name, "x");
      expect_dims(input, {1, 2, 2, 3});
      assert_int_equal(input.fmt, RKNN_TENSOR_NHWC);
      assert_int_equal(input.type, c.type);
      assert_int_equal(input.n_elems, 12);
      assert_int_equal(input.size, 12 * c.element_bytes);
      assert_int_equal(input.size_with_stride, input.size);
      assert_int_equal(input.w_stride, 2);
      if (c.precision == Precision::kInt8) {
        assert_int_equal(input.qnt_type, RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
        assert_int_equal(input.zp, 0);
        assert_float_equal(input.scale, 1.0f / 16, 1e-9);
      } else {
        assert_int_equal(input.qnt_type, RKNN_TENSOR_QNT_NONE);
      }
    }
    rknn_tensor_attr y = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 0);
    assert_string_equal(y.name, "y");
    expect_dims(y, {1, 3, 2, 2});
    assert_int_equal(y.fmt, RKNN_TENSOR_NCHW);
    assert_int_equal(y.type, c.type);
    assert_int_equal(y.size, 12 * c.element_bytes);
    rknn_tensor_attr z = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 1);
    expect_dims(z, {1, 12});
    assert_int_equal(z.fmt, RKNN_TENSOR_UNDEFINED);
    if (c.precision == Precision::kInt8) {
      assert_int_equal(z.zp, -8);
      assert_float_equal(z.scale, 0.125f, 1e-9);
    }
    rknn_tensor_attr nhwc = query_attr(context, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 0);
    expect_dims(nhwc, {1, 2, 2, 3});
    assert_int_equal(nhwc.fmt, RKNN_TENSOR_NHWC);
    rknn_destroy(context);
  }
}

void test_native_output_is_nc1hwc2(void**) {
  struct Case {
    Precision precision;
    const char* platform;
    uint32_t c2;
  };
  const Case cases[] = {{Precision::kInt8, "rk3588", 16},
                        {Precision::kFloat16, "rk3588", 8},
                        {Precision::kInt8, "rk3566", 8},
                        {Precision::kFloat16, "rk3568", 4},
                        {Precision::kFloat32, "rk3588", 4}};
  for (const Case& c : cases) {
    rknn_context context = init_affine(c.precision, c.platform);
    for (rknn_query_cmd command :
         {RKNN_QUERY_NATIVE_OUTPUT_ATTR, RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR}) {
      rknn_tensor_attr attr = query_attr(context, command, 0);
      assert_int_equal(attr.fmt, RKNN_TENSOR_NC1HWC2);
      expect_dims(attr, {1, 1, 2, 2, c.c2});
      assert_int_equal(attr.n_elems, 12);
      const uint32_t element_bytes = c.precision == Precision::kInt8      ? 1
                                     : c.precision == Precision::kFloat16 ? 2
                                                                          : 4;
      assert_int_equal(attr.size_with_stride, 4 * c.c2 * element_bytes);
    }
    // The 2-D output has no native blocking.
    rknn_tensor_attr flat = query_attr(context, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
    assert_int_equal(flat.fmt, RKNN_TENSOR_UNDEFINED);
    rknn_destroy(context);
  }
}

void test_sdk_version_and_custom_string(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  rknn_sdk_version version;
  assert_int_equal(rknn_query(context, RKNN_QUERY_SDK_VERSION, &version, sizeof(version)),
                   RKNN_SUCC);
  assert_true(std::string(version.api_version).rfind("2.3.2 (", 0) == 0);
  assert_true(std::string(version.drv_version).size() > 0);
  rknn_custom_string custom;
  assert_int_equal(rknn_query(context, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof(custom)),
                   RKNN_SUCC);
  assert_string_equal(custom.string, "model=affine;test=1");
  rknn_destroy(context);

  AffineModelOptions options;
  options.custom_string = "";
  context = init_or_fail(build_affine_model(options));
  assert_int_equal(rknn_query(context, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof(custom)),
                   RKNN_SUCC);
  assert_string_equal(custom.string, "");
  rknn_destroy(context);
}

void test_mem_size(void**) {
  for (const PrecisionCase& c : kPrecisions) {
    rknn_context context = init_affine(c.precision);
    rknn_mem_size memory;
    assert_int_equal(rknn_query(context, RKNN_QUERY_MEM_SIZE, &memory, sizeof(memory)), RKNN_SUCC);
    // Two [1,3,1,1] constants, each at a 64-byte boundary (the rknn_set_weight_mem layout).
    assert_true(3 * c.element_bytes <= 64);
    assert_int_equal(memory.total_weight_size, 2 * 64);
    // One intermediate tensor ("scaled", 12 elements, 64-byte aligned).
    assert_int_equal(memory.total_internal_size, 64);
    assert_true(memory.total_dma_allocated_size >=
                memory.total_weight_size + memory.total_internal_size);
    assert_int_equal(memory.total_sram_size, 0);
    assert_int_equal(memory.free_sram_size, 0);
    rknn_destroy(context);
  }
}

void test_perf_queries(void**) {
  // Without the collect flag PERF_DETAIL still succeeds (vendor demos rely on it).
  rknn_context context = init_affine(Precision::kFloat32);
  rknn_perf_detail detail;
  assert_int_equal(rknn_query(context, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
  assert_non_null(detail.perf_data);
  assert_int_equal(detail.data_len, std::string(detail.perf_data).size());
  assert_non_null(std::strstr(detail.perf_data, "Network Layer Information Table"));
  assert_non_null(std::strstr(detail.perf_data, "RKNN_FLAG_COLLECT_PERF_MASK"));
  rknn_destroy(context);

  context = init_affine(Precision::kInt8, "rk3588", RKNN_FLAG_COLLECT_PERF_MASK);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  rknn_perf_run run;
  assert_int_equal(rknn_query(context, RKNN_QUERY_PERF_RUN, &run, sizeof(run)), RKNN_SUCC);
  assert_true(run.run_duration >= 0);
  assert_int_equal(rknn_query(context, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
  const std::string table(detail.perf_data, detail.data_len);
  for (const char* expected : {"ID",
                               "OpType",
                               "DataType",
                               "Target",
                               "InputShape",
                               "OutputShape",
                               "Time(us)",
                               "RW(KB)",
                               "FullName",
                               "InputOperator",
                               "OutputOperator",
                               "Mul",
                               "Add",
                               "Flatten",
                               "(1,3,2,2)",
                               "INT8",
                               "CPU",
                               "Total Operator Elapsed Per Frame Time(us):",
                               "Total Memory Read/Write Per Frame Size(KB):",
                               "Operator Time Consuming Ranking Table",
                               "CallNumber",
                               "TimeRatio(%)"}) {
    if (table.find(expected) == std::string::npos)
      fail_msg("table lacks '%s':\n%s", expected, table.c_str());
  }
  assert_null(std::strstr(detail.perf_data, "RKNN_FLAG_COLLECT_PERF_MASK"));
  rknn_destroy(context);
}

void test_dynamic_range_and_device_memory_on_static_model(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  static rknn_input_range range;  // 33 KB: keep it off the stack
  std::memset(&range, 0, sizeof(range));
  assert_int_equal(rknn_query(context, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)),
                   RKNN_ERR_MODEL_INVALID);
  rknn_tensor_mem memory;
  assert_int_equal(rknn_query(context, RKNN_QUERY_DEVICE_MEM_INFO, &memory, sizeof(memory)),
                   RKNN_ERR_FAIL);
  rknn_destroy(context);
}

void test_bad_query_arguments(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  // Unknown commands.
  for (int command : {-1, static_cast<int>(RKNN_QUERY_CMD_MAX), 100}) {
    assert_int_equal(rknn_query(context, static_cast<rknn_query_cmd>(command), &attr, sizeof(attr)),
                     RKNN_ERR_PARAM_INVALID);
  }
  // NULL info for every command.
  for (int command = 0; command < RKNN_QUERY_CMD_MAX; ++command) {
    assert_int_equal(rknn_query(context, static_cast<rknn_query_cmd>(command), nullptr, 4096),
                     RKNN_ERR_PARAM_INVALID);
  }
  // Each command refuses a struct one byte too small.
  const struct {
    rknn_query_cmd command;
    uint32_t size;
  } sizes[] = {
      {RKNN_QUERY_IN_OUT_NUM, sizeof(rknn_input_output_num)},
      {RKNN_QUERY_INPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_OUTPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_PERF_DETAIL, sizeof(rknn_perf_detail)},
      {RKNN_QUERY_PERF_RUN, sizeof(rknn_perf_run)},
      {RKNN_QUERY_SDK_VERSION, sizeof(rknn_sdk_version)},
      {RKNN_QUERY_MEM_SIZE, sizeof(rknn_mem_size)},
      {RKNN_QUERY_CUSTOM_STRING, sizeof(rknn_custom_string)},
      {RKNN_QUERY_NATIVE_INPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_NATIVE_OUTPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_INPUT_DYNAMIC_RANGE, sizeof(rknn_input_range)},
      {RKNN_QUERY_CURRENT_INPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_CURRENT_OUTPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, sizeof(rknn_tensor_attr)},
      {RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, sizeof(rknn_tensor_attr)},
  };
  static rknn_input_range buffer;  // large enough for every struct
  for (const auto& entry : sizes) {
    std::memset(&buffer, 0, sizeof(buffer));
    assert_int_equal(rknn_query(context, entry.command, &buffer, entry.size - 1),
                     RKNN_ERR_PARAM_INVALID);
    assert_int_equal(rknn_query(context, entry.command, &buffer, 0), RKNN_ERR_PARAM_INVALID);
  }
  // A larger struct size is fine.
  rknn_input_output_num numbers[2];
  assert_int_equal(rknn_query(context, RKNN_QUERY_IN_OUT_NUM, numbers, sizeof(numbers)), RKNN_SUCC);
  // Indices out of range.
  for (rknn_query_cmd command :
       {RKNN_QUERY_INPUT_ATTR, RKNN_QUERY_NATIVE_INPUT_ATTR, RKNN_QUERY_CURRENT_INPUT_ATTR}) {
    attr.index = 1;
    assert_int_equal(rknn_query(context, command, &attr, sizeof(attr)), RKNN_ERR_PARAM_INVALID);
  }
  for (rknn_query_cmd command : {RKNN_QUERY_OUTPUT_ATTR, RKNN_QUERY_NATIVE_OUTPUT_ATTR,
                                 RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR}) {
    attr.index = 2;
    assert_int_equal(rknn_query(context, command, &attr, sizeof(attr)), RKNN_ERR_PARAM_INVALID);
    attr.index = 0xffffffffu;
    assert_int_equal(rknn_query(context, command, &attr, sizeof(attr)), RKNN_ERR_PARAM_INVALID);
  }
  rknn_destroy(context);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_in_out_num),
      cmocka_unit_test(test_input_and_output_attrs),
      cmocka_unit_test(test_native_output_is_nc1hwc2),
      cmocka_unit_test(test_sdk_version_and_custom_string),
      cmocka_unit_test(test_mem_size),
      cmocka_unit_test(test_perf_queries),
      cmocka_unit_test(test_dynamic_range_and_device_memory_on_static_model),
      cmocka_unit_test(test_bad_query_arguments),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
