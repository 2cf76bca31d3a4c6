// rknn_inputs_set / rknn_outputs_get / rknn_outputs_release: every input type and layout
// conversion, pass-through, mean/std and channel order, output types and allocation modes,
// and every rejected argument.
#include <cmath>
#include <vector>

#include "api/api_test_util.h"
#include "core/dtype.h"

using namespace orknn::api_testing;

namespace {

// User pixel values (NHWC) chosen so the normalised values stay inside the int8 model's
// input range in either channel order.
const std::vector<float> kImage = {12, 24, 18, 10, 20, 22, 8, 16, 14, 14, 22, 25};

const Precision kAllPrecisions[] = {Precision::kFloat32, Precision::kFloat16, Precision::kInt8};

rknn_context init_affine(Precision precision, bool reverse = false) {
  AffineModelOptions options;
  options.precision = precision;
  options.reverse_channels = reverse;
  return init_or_fail(build_affine_model(options));
}

std::vector<float> nhwc_to_nchw(const std::vector<float>& nhwc) {
  std::vector<float> nchw(12);
  for (int c = 0; c < 3; ++c)
    for (int s = 0; s < 4; ++s) nchw[c * 4 + s] = nhwc[s * 3 + c];
  return nchw;
}

// The image encoded in `type`.
std::vector<uint8_t> encode(const std::vector<float>& values, rknn_tensor_type type) {
  std::vector<uint8_t> bytes;
  for (float value : values) {
    switch (type) {
      case RKNN_TENSOR_UINT8:
        bytes.push_back(static_cast<uint8_t>(value));
        break;
      case RKNN_TENSOR_INT8:
        bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(value)));
        break;
      case RKNN_TENSOR_FLOAT16: {
        const orknn::Float16Bits half = orknn::float_to_half(value);
        bytes.push_back(static_cast<uint8_t>(half & 0xff));
        bytes.push_back(static_cast<uint8_t>(half >> 8));
        break;
      }
      default: {
        uint8_t raw[4];
        std::memcpy(raw, &value, 4);
        bytes.insert(bytes.end(), raw, raw + 4);
      }
    }
  }
  return bytes;
}

void run_and_check(rknn_context context, rknn_input input, const std::vector<float>& expected,
                   double tolerance) {
  assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  expect_near_all(get_float_output(context, 0, 12), expected, tolerance);
  expect_near_all(get_float_output(context, 1, 12), expected, tolerance);  // flattened copy
}

void test_every_user_type_and_layout(void**) {
  const std::vector<float> expected = affine_model_expected(kImage, false);
  for (Precision precision : kAllPrecisions) {
    rknn_context context = init_affine(precision);
    for (rknn_tensor_type type :
         {RKNN_TENSOR_UINT8, RKNN_TENSOR_INT8, RKNN_TENSOR_FLOAT16, RKNN_TENSOR_FLOAT32}) {
      for (rknn_tensor_format format : {RKNN_TENSOR_NHWC, RKNN_TENSOR_NCHW}) {
        std::vector<uint8_t> bytes =
            encode(format == RKNN_TENSOR_NHWC ? kImage : nhwc_to_nchw(kImage), type);
        run_and_check(
            context, make_input(0, bytes.data(), static_cast<uint32_t>(bytes.size()), type, format),
            expected, affine_tolerance(precision));
      }
    }
    rknn_destroy(context);
  }
}

void test_reversed_channels(void**) {
  const std::vector<float> expected = affine_model_expected(kImage, true);
  for (Precision precision : kAllPrecisions) {
    rknn_context context = init_affine(precision, true);
    std::vector<uint8_t> bytes = encode(kImage, RKNN_TENSOR_UINT8);
    run_and_check(context, make_input(0, bytes.data(), 12, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC),
                  expected, affine_tolerance(precision));
    rknn_destroy(context);
  }
}

void test_pass_through_takes_native_values(void**) {
  // Native values are already normalised and in the model's type, NHWC.
  std::vector<float> normalised(12);
  const float mean[3] = {10, 20, 30}, std_dev[3] = {2, 4, 8};
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 3; ++c) normalised[s * 3 + c] = (kImage[s * 3 + c] - mean[c]) / std_dev[c];
  const std::vector<float> expected = affine_model_expected(kImage, false);
  for (Precision precision : kAllPrecisions) {
    rknn_context context = init_affine(precision);
    std::vector<uint8_t> bytes;
    if (precision == Precision::kFloat32) bytes = encode(normalised, RKNN_TENSOR_FLOAT32);
    if (precision == Precision::kFloat16) bytes = encode(normalised, RKNN_TENSOR_FLOAT16);
    if (precision == Precision::kInt8) {
      for (float value : normalised)
        bytes.push_back(static_cast<uint8_t>(orknn::quantize_int8(value, 1.0f / 16, 0)));
    }
    // type and fmt are ignored in pass-through mode.
    rknn_input input = make_input(0, bytes.data(), static_cast<uint32_t>(bytes.size()),
                                  RKNN_TENSOR_UINT8, RKNN_TENSOR_NCHW, 1);
    run_and_check(context, input, expected, affine_tolerance(precision));
    // Too small for the native size.
    input.size -= 1;
    assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_ERR_INPUT_INVALID);
    rknn_destroy(context);
  }
}

void test_outputs_in_model_type(void**) {
  const std::vector<float> expected = affine_model_expected(kImage, false);
  for (Precision precision : kAllPrecisions) {
    rknn_context context = init_affine(precision);
    std::vector<uint8_t> image = encode(kImage, RKNN_TENSOR_UINT8);
    rknn_input input = make_input(0, image.data(), 12, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
    assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
    rknn_output outputs[2];
    std::memset(outputs, 0, sizeof(outputs));
    outputs[0].index = 0;
    outputs[1].index = 1;
    assert_int_equal(rknn_outputs_get(context, 2, outputs, nullptr), RKNN_SUCC);
    const uint32_t element_bytes = precision == Precision::kFloat32   ? 4
                                   : precision == Precision::kFloat16 ? 2
                                                                      : 1;
    for (const rknn_output& output : outputs) {
      assert_non_null(output.buf);
      assert_int_equal(output.size, 12 * element_bytes);
      for (size_t i = 0; i < 12; ++i) {
        float value;
        if (precision == Precision::kFloat32) {
          std::memcpy(&value, static_cast<uint8_t*>(output.buf) + 4 * i, 4);
        } else if (precision == Precision::kFloat16) {
          orknn::Float16Bits half;
          std::memcpy(&half, static_cast<uint8_t*>(output.buf) + 2 * i, 2);
          value = orknn::half_to_float(half);
        } else {
          value = orknn::dequantize(static_cast<int8_t*>(output.buf)[i], 0.125f, -8);
        }
        assert_true(std::fabs(value - expected[i]) <= affine_tolerance(precision));
      }
    }
    assert_int_equal(rknn_outputs_release(context, 2, outputs), RKNN_SUCC);
    assert_null(outputs[0].buf);
    // Releasing again is harmless.
    assert_int_equal(rknn_outputs_release(context, 2, outputs), RKNN_SUCC);
    rknn_destroy(context);
  }
}

void test_unreleased_outputs_are_freed_by_destroy(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  rknn_output output;
  std::memset(&output, 0, sizeof(output));
  output.want_float = 1;
  for (int i = 0; i < 3; ++i)
    assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_SUCC);
  // LeakSanitizer would report these if rknn_destroy did not free them.
  assert_int_equal(rknn_destroy(context), RKNN_SUCC);
}

void test_release_ignores_foreign_buffers(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  float mine[12];
  rknn_output output;
  std::memset(&output, 0, sizeof(output));
  output.buf = mine;  // not allocated by the runtime: must not be freed
  assert_int_equal(rknn_outputs_release(context, 1, &output), RKNN_SUCC);
  assert_ptr_equal(output.buf, mine);
  rknn_destroy(context);
}

void test_bad_inputs(void**) {
  rknn_context context = init_affine(Precision::kInt8);
  std::vector<uint8_t> image = encode(kImage, RKNN_TENSOR_UINT8);
  rknn_input input = make_input(0, image.data(), 12, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
  assert_int_equal(rknn_inputs_set(context, 1, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_inputs_set(context, 0, &input), RKNN_ERR_PARAM_INVALID);
  rknn_input wrong = input;
  wrong.index = 1;
  assert_int_equal(rknn_inputs_set(context, 1, &wrong), RKNN_ERR_INPUT_INVALID);
  wrong = input;
  wrong.buf = nullptr;
  assert_int_equal(rknn_inputs_set(context, 1, &wrong), RKNN_ERR_INPUT_INVALID);
  wrong = input;
  wrong.size = 11;
  assert_int_equal(rknn_inputs_set(context, 1, &wrong), RKNN_ERR_INPUT_INVALID);
  wrong = input;
  wrong.type = RKNN_TENSOR_FLOAT32;  // 12 bytes are too few for 12 floats
  assert_int_equal(rknn_inputs_set(context, 1, &wrong), RKNN_ERR_INPUT_INVALID);
  for (int type : {static_cast<int>(RKNN_TENSOR_UINT16), static_cast<int>(RKNN_TENSOR_INT4),
                   static_cast<int>(RKNN_TENSOR_BFLOAT16), static_cast<int>(RKNN_TENSOR_INT64),
                   static_cast<int>(RKNN_TENSOR_TYPE_MAX), -1, 1000}) {
    wrong = input;
    wrong.type = static_cast<rknn_tensor_type>(type);
    wrong.size = 1000;
    assert_int_equal(rknn_inputs_set(context, 1, &wrong), RKNN_ERR_INPUT_INVALID);
  }
  for (int format : {static_cast<int>(RKNN_TENSOR_FORMAT_MAX), -1, 77}) {
    wrong = input;
    wrong.fmt = static_cast<rknn_tensor_format>(format);
    assert_int_equal(rknn_inputs_set(context, 1, &wrong), RKNN_ERR_INPUT_INVALID);
  }
  // A larger buffer than needed is fine, as is a count mismatch warning.
  std::vector<uint8_t> larger(image);
  larger.resize(100);
  rknn_input inputs[2] = {make_input(0, larger.data(), 100, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC),
                          input};
  assert_int_equal(rknn_inputs_set(context, 2, inputs), RKNN_SUCC);
  rknn_destroy(context);
}

void test_bad_outputs(void**) {
  rknn_context context = init_affine(Precision::kFloat32);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  rknn_output output;
  std::memset(&output, 0, sizeof(output));
  assert_int_equal(rknn_outputs_get(context, 1, nullptr, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_outputs_get(context, 0, &output, nullptr), RKNN_ERR_PARAM_INVALID);
  output.index = 2;
  assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_ERR_OUTPUT_INVALID);
  output.index = 127;
  assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_ERR_OUTPUT_INVALID);
  output.index = 0;
  output.is_prealloc = 1;
  output.buf = nullptr;
  output.size = 48;
  assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_ERR_OUTPUT_INVALID);
  float values[12];
  output.buf = values;
  output.size = 47;
  assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_ERR_OUTPUT_INVALID);
  output.size = 48;
  assert_int_equal(rknn_outputs_get(context, 1, &output, nullptr), RKNN_SUCC);
  // A failing entry after a good one allocates nothing (LeakSanitizer checks).
  rknn_output pair[2];
  std::memset(pair, 0, sizeof(pair));
  pair[0].index = 0;
  pair[1].index = 9;
  assert_int_equal(rknn_outputs_get(context, 2, pair, nullptr), RKNN_ERR_OUTPUT_INVALID);
  assert_null(pair[0].buf);
  assert_int_equal(rknn_outputs_release(context, 1, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_destroy(context);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_user_type_and_layout),
      cmocka_unit_test(test_reversed_channels),
      cmocka_unit_test(test_pass_through_takes_native_values),
      cmocka_unit_test(test_outputs_in_model_type),
      cmocka_unit_test(test_unreleased_outputs_are_freed_by_destroy),
      cmocka_unit_test(test_release_ignores_foreign_buffers),
      cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_bad_outputs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
