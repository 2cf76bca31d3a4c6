// Data-movement family: Concat, Split, Slice, Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
// Pad and Cast. Each op runs three ways: float32 through the harness, int8 in the float domain
// (harness int8 run: input and output quantizations differ), and int8 natively as a byte move
// (the harness's run_stored builds a node whose int8 tensors share one quantization, so the
// registry hands the kernel the stored bytes). Expected values are written out by hand or follow
// from an index formula in the test.
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "common/op_test_harness.h"
#include "reference/data_movement.h"

// cmocka needs these before its header, and its macros (fail) must come after the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

// NodeSpec literals leave trailing members (integer_outputs, ...) at their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

using namespace orknn;
using namespace orknn::testing;
using graph::Attribute;
using graph::Shape;
namespace reference = orknn::kernels::reference;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// --- helpers -------------------------------------------------------------------------------

void expect_exact(const std::vector<float>& actual, const std::vector<float>& expected,
                  const std::string& label) {
  if (actual.size() != expected.size()) {
    fail_msg("%s: %zu values, expected %zu", label.c_str(), actual.size(), expected.size());
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] != expected[i]) {
      fail_msg("%s: value %zu is %g, expected %g", label.c_str(), i, actual[i], expected[i]);
    }
  }
}

TensorSpec int_input(std::string name, Shape shape, std::vector<int64_t> values,
                     DataType type = DataType::kInt64) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.shape = std::move(shape);
  spec.data_type = type;
  spec.int_values = std::move(values);
  return spec;
}

// Stored runs (the harness's run_stored) keep the exact dtypes and quantizations given, so the
// registry's native byte-move path (or the Cast kernel's decode/encode) is exercised directly.
StoredTensor stored_int64_constant(std::string name, const std::vector<int64_t>& values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return stored(std::move(name), DataType::kInt64, {count}, values, {}, true);
}

StoredTensor stored_int8(std::string name, Shape shape, const std::vector<int8_t>& values,
                         const graph::Quantization& quantization) {
  return stored(std::move(name), DataType::kInt8, std::move(shape), values, quantization);
}

// The quantization the native int8 runs share between input and output; the bytes move
// unchanged, whatever it is.
const graph::Quantization kSharedInt8{{0.5f}, {-3}, 0};

void expect_int8(const std::vector<uint8_t>& bytes, const std::vector<int>& expected,
                 const std::string& label) {
  const std::vector<int8_t> actual = from_bytes<int8_t>(bytes);
  if (actual.size() != expected.size()) {
    fail_msg("%s: %zu values, expected %zu", label.c_str(), actual.size(), expected.size());
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] != expected[i]) {
      fail_msg("%s: byte %zu is %d, expected %d", label.c_str(), i, actual[i], expected[i]);
    }
  }
}

std::vector<int8_t> int8_iota(size_t count, int first = 0) {
  std::vector<int8_t> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<int8_t>(first + static_cast<int>(i));
  return values;
}

std::vector<int> as_ints(const std::vector<float>& values) {
  return std::vector<int>(values.begin(), values.end());
}

// Row-major multi-index helpers for formula-based expectations.
std::vector<int64_t> unravel(int64_t linear, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = linear % shape[k];
    linear /= shape[k];
  }
  return index;
}

int64_t ravel(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t linear = 0;
  for (size_t k = 0; k < shape.size(); ++k) linear = linear * shape[k] + index[k];
  return linear;
}

// --- reference kernels called directly ------------------------------------------------------

void test_reference_concat_split_two_byte_elements(void** state) {
  (void)state;
  // [2,1] and [2,2] int16 along axis 1.
  const std::vector<int16_t> a{1, 2}, b{3, 4, 5, 6};
  std::vector<int16_t> out(6);
  reference::ConcatParams params{2, 1, {1, 2}};
  const void* inputs[] = {a.data(), b.data()};
  reference::concat(2, params, inputs, out.data());
  assert_true((out == std::vector<int16_t>{1, 3, 4, 2, 5, 6}));
  std::vector<int16_t> back_a(2), back_b(4);
  void* outputs[] = {back_a.data(), back_b.data()};
  reference::split(2, params, out.data(), outputs);
  assert_true(back_a == a);
  assert_true(back_b == b);
}

void test_reference_slice_negative_steps(void** state) {
  (void)state;
  // x[3,4] = 0..11; rows 2,0 (step -2) and columns 3,2,1 (step -1).
  const std::vector<int32_t> x = [] {
    std::vector<int32_t> v(12);
    std::iota(v.begin(), v.end(), 0);
    return v;
  }();
  reference::SliceParams params{{3, 4}, {2, 3}, {-2, -1}, {2, 3}};
  std::vector<int32_t> out(6);
  reference::strided_copy(4, reference::slice_layout(params), x.data(), out.data());
  assert_true((out == std::vector<int32_t>{11, 10, 9, 3, 2, 1}));
}

void test_reference_transpose_eight_byte_elements(void** state) {
  (void)state;
  const std::vector<int64_t> x{1, 2, 3, 4, 5, 6};  // [2,3]
  std::vector<int64_t> out(6);
  reference::strided_copy(8, reference::transpose_layout({2, 3}, {1, 0}), x.data(), out.data());
  assert_true((out == std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

void test_reference_pad_one_byte_elements(void** state) {
  (void)state;
  const std::vector<uint8_t> x{1, 2, 3};
  const uint8_t fill = 9;
  std::vector<uint8_t> out(7);
  reference::PadParams params{{3}, {2}, {2}, reference::PadMode::kConstant};
  reference::pad(1, params, x.data(), &fill, out.data());
  assert_true((out == std::vector<uint8_t>{9, 9, 1, 2, 3, 9, 9}));
  params.mode = reference::PadMode::kEdge;
  reference::pad(1, params, x.data(), &fill, out.data());
  assert_true((out == std::vector<uint8_t>{1, 1, 1, 2, 3, 3, 3}));
  params.mode = reference::PadMode::kReflect;
  reference::pad(1, params, x.data(), &fill, out.data());
  assert_true((out == std::vector<uint8_t>{3, 2, 1, 2, 3, 2, 1}));
  params.mode = reference::PadMode::kWrap;
  reference::pad(1, params, x.data(), &fill, out.data());
  assert_true((out == std::vector<uint8_t>{2, 3, 1, 2, 3, 1, 2}));
}

template <typename From, typename To>
std::vector<To> cast_values(DataType from, const std::vector<From>& values, DataType to) {
  std::vector<To> out(values.size());
  reference::cast(from, values.data(), to, out.data(), static_cast<int64_t>(values.size()));
  return out;
}

void test_reference_cast_float_to_integers(void** state) {
  (void)state;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{-2.9f, -0.5f, 0.5f, 2.9f, 127.9f, 128.5f, -128.9f, -1e30f, nan};
  assert_true((cast_values<float, int8_t>(DataType::kFloat32, x, DataType::kInt8) ==
               std::vector<int8_t>{-2, 0, 0, 2, 127, 127, -128, -128, 0}));
  assert_true((cast_values<float, uint8_t>(DataType::kFloat32, x, DataType::kUInt8) ==
               std::vector<uint8_t>{0, 0, 0, 2, 127, 128, 0, 0, 0}));
  const std::vector<float> wide{3e9f, -3e9f, 40000.5f, -40000.5f, 1e19f, -1e19f, -7.99f, nan};
  assert_true((cast_values<float, int32_t>(DataType::kFloat32, wide, DataType::kInt32) ==
               std::vector<int32_t>{2147483647, -2147483647 - 1, 40000, -40000, 2147483647,
                                    -2147483647 - 1, -7, 0}));
  assert_true((cast_values<float, int16_t>(DataType::kFloat32, wide, DataType::kInt16) ==
               std::vector<int16_t>{32767, -32768, 32767, -32768, 32767, -32768, -7, 0}));
  assert_true(
      (cast_values<float, int64_t>(DataType::kFloat32, wide, DataType::kInt64) ==
       std::vector<int64_t>{3000000000, -3000000000, 40000, -40000, kInt64Max, kInt64Min, -7, 0}));
  // 2^63 exactly is out of range, -2^63 is the minimum itself.
  const std::vector<float> edges{9.223372036854775808e18f, -9.223372036854775808e18f};
  assert_true((cast_values<float, int64_t>(DataType::kFloat32, edges, DataType::kInt64) ==
               std::vector<int64_t>{kInt64Max, kInt64Min}));
  const std::vector<float> truth{0.0f, -0.0f, 0.1f, nan, -3.0f};
  assert_true((cast_values<float, uint8_t>(DataType::kFloat32, truth, DataType::kBool) ==
               std::vector<uint8_t>{0, 0, 1, 1, 1}));
}

void test_reference_cast_integers(void** state) {
  (void)state;
  const std::vector<int64_t> x{300, -129, 128, -1, 65537, kInt64Max};
  assert_true((cast_values<int64_t, int8_t>(DataType::kInt64, x, DataType::kInt8) ==
               std::vector<int8_t>{44, 127, -128, -1, 1, -1}));
  assert_true((cast_values<int64_t, uint8_t>(DataType::kInt64, x, DataType::kUInt8) ==
               std::vector<uint8_t>{44, 127, 128, 255, 1, 255}));
  assert_true((cast_values<int64_t, int16_t>(DataType::kInt64, x, DataType::kInt16) ==
               std::vector<int16_t>{300, -129, 128, -1, 1, -1}));
  assert_true((cast_values<int64_t, int32_t>(DataType::kInt64, x, DataType::kInt32) ==
               std::vector<int32_t>{300, -129, 128, -1, 65537, -1}));
  assert_true((cast_values<int64_t, uint8_t>(DataType::kInt64, x, DataType::kBool) ==
               std::vector<uint8_t>{1, 1, 1, 1, 1, 1}));
  const std::vector<uint8_t> u{200, 0, 255};
  assert_true((cast_values<uint8_t, int8_t>(DataType::kUInt8, u, DataType::kInt8) ==
               std::vector<int8_t>{-56, 0, -1}));
  const std::vector<int8_t> s{-1, 5};
  assert_true((cast_values<int8_t, int64_t>(DataType::kInt8, s, DataType::kInt64) ==
               std::vector<int64_t>{-1, 5}));
  assert_true((cast_values<int8_t, uint8_t>(DataType::kInt8, s, DataType::kUInt8) ==
               std::vector<uint8_t>{255, 5}));
  // Stored booleans other than 0/1 still read as true.
  const std::vector<uint8_t> flags{0, 1, 2};
  assert_true((cast_values<uint8_t, int32_t>(DataType::kBool, flags, DataType::kInt32) ==
               std::vector<int32_t>{0, 1, 1}));
  assert_true((cast_values<uint8_t, float>(DataType::kBool, flags, DataType::kFloat32) ==
               std::vector<float>{0.0f, 1.0f, 1.0f}));
  const std::vector<int64_t> big{16777217, kInt64Max, -5};
  assert_true((cast_values<int64_t, float>(DataType::kInt64, big, DataType::kFloat32) ==
               std::vector<float>{16777216.0f, 9.223372036854775808e18f, -5.0f}));
}

void test_reference_cast_float16(void** state) {
  (void)state;
  const std::vector<float> x{1.0f, 65504.0f, 65520.0f, 0.1f, -2.0f};
  assert_true((cast_values<float, uint16_t>(DataType::kFloat32, x, DataType::kFloat16) ==
               std::vector<uint16_t>{0x3C00, 0x7BFF, 0x7C00, 0x2E66, 0xC000}));
  const std::vector<uint16_t> h{0xC0A0, 0x3C00, 0x7C00, 0x0000};  // -2.3125, 1, inf, 0
  assert_true((cast_values<uint16_t, int32_t>(DataType::kFloat16, h, DataType::kInt32) ==
               std::vector<int32_t>{-2, 1, 2147483647, 0}));
  assert_true((cast_values<uint16_t, float>(DataType::kFloat16, h, DataType::kFloat32) ==
               std::vector<float>{-2.3125f, 1.0f, INFINITY, 0.0f}));
  const std::vector<int32_t> i{3, 70000, -2049};
  assert_true((cast_values<int32_t, uint16_t>(DataType::kInt32, i, DataType::kFloat16) ==
               std::vector<uint16_t>{0x4200, 0x7C00, 0xE800}));
}

// --- Concat ----------------------------------------------------------------------------------

void test_concat_values(void** state) {
  (void)state;
  NodeSpec spec{"Concat",
                {input("a", {2, 1}, {1, 2}), input("b", {2, 3}, {3, 4, 5, 6, 7, 8})},
                {{"axis", attr_int(1)}}};
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {2, 4});
  expect_exact(run.outputs[0], {1, 3, 4, 5, 2, 6, 7, 8}, "axis 1");

  NodeSpec three{
      "Concat",
      {input("a", {1, 2}, {1, 2}), input("b", {2, 2}, {3, 4, 5, 6}), input("c", {1, 2}, {7, 8})},
      {{"axis", attr_int(-2)}}};
  run = run_ok(three);
  expect_shape(run.output_shapes[0], {4, 2});
  expect_exact(run.outputs[0], iota_values(8, 1), "three inputs, axis -2");

  NodeSpec single{"Concat", {input("a", {3}, {1, 2, 3})}, {{"axis", attr_int(0)}}};
  run = run_ok(single);
  expect_exact(run.outputs[0], {1, 2, 3}, "one input");

  // An empty input contributes nothing.
  NodeSpec empty{
      "Concat", {input("a", {2, 0}, {}), input("b", {2, 1}, {5, 6})}, {{"axis", attr_int(1)}}};
  run = run_ok(empty);
  expect_shape(run.output_shapes[0], {2, 1});
  expect_exact(run.outputs[0], {5, 6}, "empty input");
}

void test_concat_native_and_integer(void** state) {
  (void)state;
  StoredRun run = run_stored_ok("Concat",
                                {stored_int8("a", {2, 1}, {1, 2}, kSharedInt8),
                                 stored_int8("b", {2, 2}, {3, 4, 5, 6}, kSharedInt8)},
                                {{"axis", attr_int(-1)}}, {{DataType::kInt8, kSharedInt8}});
  expect_int8(run.outputs[0], {1, 3, 4, 2, 5, 6}, "int8 native");

  run = run_stored_ok("Concat",
                      {stored<int64_t>("a", DataType::kInt64, {2}, {kInt64Max, -1}),
                       stored<int64_t>("b", DataType::kInt64, {1}, {kInt64Min})},
                      {{"axis", attr_int(0)}}, {{DataType::kInt64, {}}});
  assert_true(
      (from_bytes<int64_t>(run.outputs[0]) == std::vector<int64_t>{kInt64Max, -1, kInt64Min}));

  // Different quantizations go through the float domain: real values are kept.
  const graph::Quantization other{{0.25f}, {0}, 0};
  run = run_stored_ok(
      "Concat", {stored_int8("a", {2}, {2, 4}, kSharedInt8), stored_int8("b", {1}, {8}, other)},
      {{"axis", attr_int(0)}}, {{DataType::kInt8, kSharedInt8}});
  // a: (2+3)*0.5=2.5, (4+3)*0.5=3.5; b: 8*0.25=2 -> requantized with scale 0.5, zero point -3.
  expect_int8(run.outputs[0], {2, 4, 1}, "int8 mixed quantization");
}

void test_concat_errors(void** state) {
  (void)state;
  expect_invalid_model({"Concat", {input("a", {2}, {1, 2}), input("b", {2}, {1, 2})}, {}},
                       "attribute 'axis' is required");
  expect_invalid_model(
      {"Concat", {input("a", {2}, {1, 2}), input("b", {1, 2}, {1, 2})}, {{"axis", attr_int(0)}}},
      "input 1 has rank 2 but input 0 has rank 1");
  expect_invalid_model({"Concat",
                        {input("a", {2, 2}, {1, 2, 3, 4}), input("b", {2, 3}, iota_values(6))},
                        {{"axis", attr_int(0)}}},
                       "differs from input 0 (2x2) in dimension 1");
  expect_invalid_model({"Concat", {input("a", {2}, {1, 2})}, {{"axis", attr_int(1)}}},
                       "axis 1 is out of range");
  expect_invalid_model(
      {"Concat", {input("a", {2}, {1, 2}), int_input("b", {1}, {3})}, {{"axis", attr_int(0)}}},
      "must share one element type");
}

void test_concat_precisions(void** state) {
  (void)state;
  NodeSpec spec{"Concat",
                {input("a", {2, 3, 5}, random_values(30, -2, 2, 1)),
                 input("b", {2, 4, 5}, random_values(40, -1, 3, 2))},
                {{"axis", attr_int(1)}}};
  check_precisions_agree(spec, 1e-3, 0.02);
}

// --- Split -----------------------------------------------------------------------------------

void test_split_equal_and_uneven(void** state) {
  (void)state;
  NodeSpec equal{"Split", {input("x", {6}, iota_values(6))}, {}, 3};
  NodeRun run = run_ok(equal);
  expect_exact(run.outputs[0], {0, 1}, "equal 0");
  expect_exact(run.outputs[1], {2, 3}, "equal 1");
  expect_exact(run.outputs[2], {4, 5}, "equal 2");

  NodeSpec last_axis{"Split", {input("x", {2, 4}, iota_values(8))}, {{"axis", attr_int(-1)}}, 2};
  run = run_ok(last_axis);
  expect_exact(run.outputs[0], {0, 1, 4, 5}, "axis -1, 0");
  expect_exact(run.outputs[1], {2, 3, 6, 7}, "axis -1, 1");

  // Opset 13+: sizes as a constant input.
  NodeSpec uneven{"Split",
                  {input("x", {2, 7}, iota_values(14)), int64_constant("split", {2}, {2, 5})},
                  {{"axis", attr_int(1)}},
                  2};
  run = run_ok(uneven);
  expect_shape(run.output_shapes[0], {2, 2});
  expect_shape(run.output_shapes[1], {2, 5});
  expect_exact(run.outputs[0], {0, 1, 7, 8}, "uneven 0");
  expect_exact(run.outputs[1], {2, 3, 4, 5, 6, 9, 10, 11, 12, 13}, "uneven 1");
  run = run_ok(uneven, Precision::kInt8);
  expect_close(run.outputs[1], {2, 3, 4, 5, 6, 9, 10, 11, 12, 13}, 0.02);

  // Opsets before 13: the `split` attribute; zero-sized parts are allowed.
  NodeSpec attribute{
      "Split", {input("x", {4}, iota_values(4))}, {{"split", attr_ints({1, 0, 3})}}, 3};
  run = run_ok(attribute);
  expect_exact(run.outputs[0], {0}, "attribute 0");
  expect_shape(run.output_shapes[1], {0});
  expect_exact(run.outputs[2], {1, 2, 3}, "attribute 2");

  // Opset 18: num_outputs gives chunks of ceil(7 / 3) = 3, the last one smaller.
  NodeSpec chunks{"Split", {input("x", {7}, iota_values(7))}, {{"num_outputs", attr_int(3)}}, 3};
  run = run_ok(chunks);
  expect_exact(run.outputs[0], {0, 1, 2}, "num_outputs 0");
  expect_exact(run.outputs[1], {3, 4, 5}, "num_outputs 1");
  expect_exact(run.outputs[2], {6}, "num_outputs 2");
}

void test_split_native(void** state) {
  (void)state;
  StoredRun run = run_stored_ok("Split",
                                {stored_int8("x", {2, 7}, int8_iota(14), kSharedInt8),
                                 stored_int64_constant("split", {2, 5})},
                                {{"axis", attr_int(1)}},
                                {{DataType::kInt8, kSharedInt8}, {DataType::kInt8, kSharedInt8}});
  expect_int8(run.outputs[0], {0, 1, 7, 8}, "int8 native uneven 0");
  expect_int8(run.outputs[1], {2, 3, 4, 5, 6, 9, 10, 11, 12, 13}, "int8 native uneven 1");

  run = run_stored_ok("Split", {stored_int8("x", {5}, int8_iota(5, -2), kSharedInt8)},
                      {{"num_outputs", attr_int(2)}},
                      {{DataType::kInt8, kSharedInt8}, {DataType::kInt8, kSharedInt8}});
  expect_int8(run.outputs[0], {-2, -1, 0}, "int8 num_outputs 0");
  expect_int8(run.outputs[1], {1, 2}, "int8 num_outputs 1");
}

void test_split_errors(void** state) {
  (void)state;
  expect_invalid_model({"Split", {input("x", {7}, iota_values(7))}, {}, 2},
                       "does not split into 2 equal parts");
  expect_invalid_model(
      {"Split", {input("x", {7}, iota_values(7)), int64_constant("split", {2}, {3, 3})}, {}, 2},
      "split sizes sum to 6 but dimension 0 of the input is 7");
  expect_invalid_model(
      {"Split", {input("x", {7}, iota_values(7)), int64_constant("split", {2}, {3, 4})}, {}, 3},
      "split has 2 sizes for 3 outputs");
  expect_invalid_model(
      {"Split", {input("x", {7}, iota_values(7)), int64_constant("split", {2}, {-1, 8})}, {}, 2},
      "split[0] = -1 is outside [0, 7]");
  expect_invalid_model(
      {"Split", {input("x", {7}, iota_values(7))}, {{"num_outputs", attr_int(3)}}, 2},
      "num_outputs is 3 but the node has 2 outputs");
  expect_invalid_model(
      {"Split", {input("x", {5}, iota_values(5))}, {{"num_outputs", attr_int(4)}}, 4},
      "cannot be split into 4 chunks of 2");
  expect_invalid_model({"Split", {input("x", {4}, iota_values(4))}, {{"axis", attr_int(1)}}, 2},
                       "axis 1 is out of range");
  expect_invalid_model(
      {"Split", {input("x", {4}, iota_values(4)), input("split", {2}, {2, 2})}, {}, 2},
      "must be INT64 or INT32");
}

void test_split_precisions(void** state) {
  (void)state;
  NodeSpec spec{
      "Split",
      {input("x", {3, 7, 2}, random_values(42, -2, 2, 3)), int64_constant("split", {3}, {2, 4, 1})},
      {{"axis", attr_int(1)}},
      3};
  check_precisions_agree(spec, 1e-3, 0.02);
}

// --- Slice -----------------------------------------------------------------------------------

struct SliceCase {
  int64_t start, end, step;
  std::vector<float> expected;  // indices of x = 0..9 that survive, in order
};

// Every clamping rule of the ONNX Slice spec on one axis of 10 elements.
const std::vector<SliceCase>& slice_cases() {
  static const std::vector<SliceCase> cases{
      {2, 5, 1, {2, 3, 4}},
      {-3, kInt64Max, 1, {7, 8, 9}},                   // negative start, "to the end"
      {0, -1, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8}},         // negative end
      {-100, 100, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},  // both clamped to [0, 10]
      {20, 30, 1, {}},                                 // start clamped to 10: empty
      {5, 5, 1, {}},
      {3, 1, 1, {}},  // end before start with a positive step
      {1, 8, 3, {1, 4, 7}},
      {1, 9, 3, {1, 4, 7}},
      {1, 10, 3, {1, 4, 7}},
      {kInt64Min, kInt64Max, 4, {0, 4, 8}},
      {2, 10, kInt64Max, {2}},  // a step longer than the axis reads only the start
      {8, 2, -2, {8, 6, 4}},
      {kInt64Max, kInt64Min, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},  // full reverse
      {-1, -11, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},               // end -11 -> -1 reaches index 0
      {-1, -10, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1}},  // end -10 -> 0 stops before index 0
      {100, -100, -3, {9, 6, 3, 0}},               // start clamped to 9, end to -1
      {10, 0, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1}},    // start 10 clamps to 9
      {-5, kInt64Min, -1, {5, 4, 3, 2, 1, 0}},
      {0, 10, -1, {}},  // backwards from 0 to 9: empty
      {5, 0, kInt64Min, {5}},
      {3, 3, -1, {}},
  };
  return cases;
}

void test_slice_clamping_float(void** state) {
  (void)state;
  const std::vector<SliceCase>& cases = slice_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const SliceCase& c = cases[i];
    NodeSpec spec{"Slice",
                  {input("x", {10}, iota_values(10)), int64_constant("starts", {1}, {c.start}),
                   int64_constant("ends", {1}, {c.end}), int64_constant("axes", {1}, {0}),
                   int64_constant("steps", {1}, {c.step})}};
    NodeRun run = run_ok(spec);
    expect_shape(run.output_shapes[0], {static_cast<int64_t>(c.expected.size())});
    expect_exact(run.outputs[0], c.expected, str_cat("float32 slice case ", i));
    // int8 through the float domain (the harness quantizes input and output differently).
    run = run_ok(spec, Precision::kInt8);
    expect_close(run.outputs[0], c.expected, 0.02);
  }
}

void test_slice_clamping_native(void** state) {
  (void)state;
  const std::vector<SliceCase>& cases = slice_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const SliceCase& c = cases[i];
    StoredRun run = run_stored_ok(
        "Slice",
        {stored_int8("x", {10}, int8_iota(10), kSharedInt8),
         stored_int64_constant("starts", {c.start}), stored_int64_constant("ends", {c.end}),
         stored_int64_constant("axes", {0}), stored_int64_constant("steps", {c.step})},
        {}, {{DataType::kInt8, kSharedInt8}});
    expect_int8(run.outputs[0], as_ints(c.expected), str_cat("int8 native slice case ", i));
    // Eight-byte elements move the same way.
    std::vector<int64_t> wide(10);
    for (size_t k = 0; k < wide.size(); ++k) wide[k] = 1000 + static_cast<int64_t>(k);
    run = run_stored_ok(
        "Slice",
        {stored("x", DataType::kInt64, {10}, wide), stored_int64_constant("starts", {c.start}),
         stored_int64_constant("ends", {c.end}), stored_int64_constant("axes", {0}),
         stored_int64_constant("steps", {c.step})},
        {}, {{DataType::kInt64, {}}});
    const std::vector<int64_t> actual = from_bytes<int64_t>(run.outputs[0]);
    assert_int_equal(actual.size(), c.expected.size());
    for (size_t k = 0; k < actual.size(); ++k) {
      assert_int_equal(actual[k], 1000 + static_cast<int64_t>(c.expected[k]));
    }
  }
}

void test_slice_multi_axis(void** state) {
  (void)state;
  // x[3,4,5] = 0..59; axes given unsorted and negative: axis 2 from 4 down by 2, axis 0 from 1.
  const Shape shape{3, 4, 5};
  NodeSpec spec{"Slice",
                {input("x", shape, iota_values(60)), int64_constant("starts", {2}, {4, 1}),
                 int64_constant("ends", {2}, {kInt64Min, 3}), int64_constant("axes", {2}, {-1, 0}),
                 int64_constant("steps", {2}, {-2, 1})}};
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {2, 4, 3});
  std::vector<float> expected;
  for (int64_t a = 1; a < 3; ++a) {
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t c = 4; c >= 0; c -= 2)
        expected.push_back(static_cast<float>(a * 20 + b * 5 + c));
    }
  }
  expect_exact(run.outputs[0], expected, "unsorted negative axes");

  // Axes and steps omitted: starts/ends apply to the leading axes.
  NodeSpec leading{"Slice",
                   {input("x", shape, iota_values(60)), int64_constant("starts", {2}, {2, -1}),
                    int64_constant("ends", {2}, {3, 4})}};
  run = run_ok(leading);
  expect_shape(run.output_shapes[0], {1, 1, 5});
  expect_exact(run.outputs[0], {55, 56, 57, 58, 59}, "leading axes");

  // Opsets 1-9: attributes, no steps.
  NodeSpec attributes{
      "Slice",
      {input("x", {2, 3}, iota_values(6))},
      {{"starts", attr_ints({1})}, {"ends", attr_ints({kInt64Max})}, {"axes", attr_ints({1})}}};
  run = run_ok(attributes);
  expect_shape(run.output_shapes[0], {2, 2});
  expect_exact(run.outputs[0], {1, 2, 4, 5}, "attribute form");

  // INT32 operands are accepted too.
  TensorSpec starts = int_input("starts", {1}, {-2}, DataType::kInt32);
  starts.constant = true;
  TensorSpec ends = int_input("ends", {1}, {100}, DataType::kInt32);
  ends.constant = true;
  run = run_ok({"Slice", {input("x", {4}, iota_values(4)), starts, ends}});
  expect_exact(run.outputs[0], {2, 3}, "int32 operands");
}

void test_slice_errors(void** state) {
  (void)state;
  const TensorSpec x = input("x", {4, 4}, iota_values(16));
  expect_invalid_model({"Slice",
                        {x, int64_constant("s", {1}, {0}), int64_constant("e", {1}, {2}),
                         int64_constant("a", {1}, {0}), int64_constant("st", {1}, {0})}},
                       "steps[0] is 0");
  expect_invalid_model(
      {"Slice", {x, int64_constant("s", {2}, {0, 0}), int64_constant("e", {1}, {2})}},
      "starts has 2 values but ends has 1");
  expect_invalid_model({"Slice",
                        {x, int64_constant("s", {2}, {0, 0}), int64_constant("e", {2}, {2, 2}),
                         int64_constant("a", {2}, {1, -1})}},
                       "axes names axis 1 more than once");
  expect_invalid_model({"Slice",
                        {x, int64_constant("s", {1}, {0}), int64_constant("e", {1}, {2}),
                         int64_constant("a", {1}, {2})}},
                       "axes[0] = 2 is out of range for rank 2");
  expect_invalid_model(
      {"Slice", {x, int64_constant("s", {3}, {0, 0, 0}), int64_constant("e", {3}, {1, 1, 1})}},
      "starts has 3 values for an input of rank 2");
  expect_invalid_model({"Slice", {x, int_input("s", {1}, {0}), int64_constant("e", {1}, {2})}},
                       "must be a constant");
  expect_invalid_model({"Slice", {x, int64_constant("s", {1}, {0})}}, "ends (input 2) is required");
  expect_invalid_model({"Slice", {x}}, "needs starts and ends");
  expect_invalid_model({"Slice",
                        {x, int64_constant("s", {1}, {0}), int64_constant("e", {1}, {2}), omitted(),
                         int64_constant("st", {2}, {1, 1})}},
                       "starts has 1 values but steps has 2");
}

void test_slice_precisions(void** state) {
  (void)state;
  NodeSpec spec{"Slice",
                {input("x", {4, 7, 5}, random_values(140, -3, 3, 4)),
                 int64_constant("starts", {2}, {1, -1}), int64_constant("ends", {2}, {4, -8}),
                 int64_constant("axes", {2}, {0, 1}), int64_constant("steps", {2}, {2, -2})}};
  check_precisions_agree(spec, 1e-3, 0.02);
}

// --- Transpose -------------------------------------------------------------------------------

void test_transpose_values(void** state) {
  (void)state;
  NodeRun run = run_ok({"Transpose", {input("x", {2, 3}, {1, 2, 3, 4, 5, 6})}});
  expect_shape(run.output_shapes[0], {3, 2});
  expect_exact(run.outputs[0], {1, 4, 2, 5, 3, 6}, "default reverse 2D");

  const Shape shape{2, 3, 5, 7};
  const std::vector<int64_t> perm{0, 2, 3, 1};
  run = run_ok({"Transpose", {input("x", shape, iota_values(210))}, {{"perm", attr_ints(perm)}}});
  const Shape out_shape{2, 5, 7, 3};
  expect_shape(run.output_shapes[0], out_shape);
  std::vector<float> expected(210);
  for (int64_t o = 0; o < 210; ++o) {
    const std::vector<int64_t> out_index = unravel(o, out_shape);
    std::vector<int64_t> in_index(4);
    for (size_t k = 0; k < 4; ++k) in_index[static_cast<size_t>(perm[k])] = out_index[k];
    expected[static_cast<size_t>(o)] = static_cast<float>(ravel(in_index, shape));
  }
  expect_exact(run.outputs[0], expected, "NCHW to NHWC");

  run = run_ok({"Transpose", {input("x", {1}, {7})}});
  expect_exact(run.outputs[0], {7}, "rank 1");

  StoredRun raw_run =
      run_stored_ok("Transpose", {stored_int8("x", {2, 3}, int8_iota(6, -1), kSharedInt8)},
                    {{"perm", attr_ints({1, 0})}}, {{DataType::kInt8, kSharedInt8}});
  expect_int8(raw_run.outputs[0], {-1, 2, 0, 3, 1, 4}, "int8 native");
}

void test_transpose_errors(void** state) {
  (void)state;
  const TensorSpec x = input("x", {2, 3}, iota_values(6));
  expect_invalid_model({"Transpose", {x}, {{"perm", attr_ints({0})}}}, "perm has 1 entries");
  expect_invalid_model({"Transpose", {x}, {{"perm", attr_ints({0, 0})}}}, "not a permutation");
  expect_invalid_model({"Transpose", {x}, {{"perm", attr_ints({0, 2})}}}, "not a permutation");
  expect_invalid_model({"Transpose", {x}, {{"perm", attr_ints({-1, 0})}}}, "not a permutation");
}

void test_transpose_precisions(void** state) {
  (void)state;
  check_precisions_agree({"Transpose",
                          {input("x", {2, 3, 5, 7}, random_values(210, -1, 4, 5))},
                          {{"perm", attr_ints({3, 1, 0, 2})}}},
                         1e-3, 0.02);
}

// --- Reshape, Flatten, Squeeze, Unsqueeze ----------------------------------------------------

NodeSpec reshape_spec(const Shape& input_shape, std::vector<int64_t> target,
                      int64_t allow_zero = 0) {
  const size_t count = static_cast<size_t>(graph::element_count(input_shape));
  const int64_t rank = static_cast<int64_t>(target.size());
  NodeSpec spec{"Reshape",
                {input("x", input_shape, iota_values(count)),
                 int64_constant("shape", {rank}, std::move(target))}};
  if (allow_zero) spec.attributes["allowzero"] = attr_int(allow_zero);
  return spec;
}

void test_reshape_zero_and_minus_one(void** state) {
  (void)state;
  struct Case {
    Shape input;
    std::vector<int64_t> target;
    Shape expected;
  };
  const std::vector<Case> cases{
      {{2, 3, 4}, {0, -1}, {2, 12}},  // 0 copies dim 0, -1 takes the rest
      {{2, 3, 4}, {-1}, {24}},
      {{2, 3, 4}, {4, 0, 2}, {4, 3, 2}},  // 0 copies dim 1 (3)
      {{2, 3, 4}, {0, 0, -1, 1}, {2, 3, 4, 1}},
      {{2, 3, 4}, {-1, 0}, {8, 3}},
      {{1, 1}, {}, {}},  // to a scalar: an empty shape operand
      {{5}, {1, -1, 1}, {1, 5, 1}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const size_t count = static_cast<size_t>(graph::element_count(c.input));
    NodeRun run = run_ok(reshape_spec(c.input, c.target));
    expect_shape(run.output_shapes[0], c.expected);
    expect_exact(run.outputs[0], iota_values(count), str_cat("float32 reshape case ", i));
    run = run_ok(reshape_spec(c.input, c.target), Precision::kInt8);
    expect_close(run.outputs[0], iota_values(count), 0.02);

    const int64_t rank = static_cast<int64_t>(c.target.size());
    StoredRun raw_run = run_stored_ok(
        "Reshape",
        {stored_int8("x", c.input, int8_iota(count, -5), kSharedInt8),
         StoredTensor{"shape", DataType::kInt64, {rank}, to_bytes(c.target), {}, true}},
        {}, {{DataType::kInt8, kSharedInt8}});
    expect_shape(raw_run.output_shapes[0], c.expected);
    expect_int8(raw_run.outputs[0], as_ints(iota_values(count, -5)),
                str_cat("int8 native reshape case ", i));
  }

  // allowzero=1: 0 is a real zero-sized dimension.
  NodeRun run = run_ok(reshape_spec({2, 0, 3}, {0, 6}, 1));
  expect_shape(run.output_shapes[0], {0, 6});
  // Opsets 1-4: the `shape` attribute.
  run = run_ok({"Reshape", {input("x", {6}, iota_values(6))}, {{"shape", attr_ints({3, -1})}}});
  expect_shape(run.output_shapes[0], {3, 2});
}

void test_reshape_errors(void** state) {
  (void)state;
  expect_invalid_model(reshape_spec({2, 3}, {-1, -1}), "more than one -1");
  expect_invalid_model(reshape_spec({2, 3}, {4, 2}),
                       "cannot reshape 2x3 (6 elements) to 4x2 (8 elements)");
  expect_invalid_model(reshape_spec({2, 3}, {-2, 3}), "shape[0] = -2");
  expect_invalid_model(reshape_spec({6}, {3, 0}), "shape[1] = 0 copies input dimension 1");
  expect_invalid_model(reshape_spec({2, 0, 3}, {0, -1}, 1), "cannot contain both 0 and -1");
  expect_invalid_model(reshape_spec({2, 3}, {4, -1}), "cannot infer the -1");
  // Without allowzero a 0 copies the input's zero dim and leaves -1 undetermined.
  expect_invalid_model(reshape_spec({0, 3}, {0, -1}), "cannot infer the -1");
  expect_invalid_model(reshape_spec({2, 0, 3}, {0, 6}), "cannot reshape");
  expect_invalid_model({"Reshape", {input("x", {2}, {1, 2})}}, "needs the target shape");
  expect_invalid_model({"Reshape", {input("x", {2}, {1, 2}), int_input("shape", {1}, {2})}},
                       "must be a constant");
}

void test_flatten(void** state) {
  (void)state;
  const Shape shape{2, 3, 4, 5};
  struct Case {
    int64_t axis;
    Shape expected;
  };
  for (const Case& c : std::vector<Case>{
           {0, {1, 120}}, {2, {6, 20}}, {-1, {24, 5}}, {4, {120, 1}}, {-4, {1, 120}}}) {
    NodeRun run =
        run_ok({"Flatten", {input("x", shape, iota_values(120))}, {{"axis", attr_int(c.axis)}}});
    expect_shape(run.output_shapes[0], c.expected);
    expect_exact(run.outputs[0], iota_values(120), "flatten values");
  }
  NodeRun run = run_ok({"Flatten", {input("x", {3, 2}, iota_values(6))}});
  expect_shape(run.output_shapes[0], {3, 2});  // default axis 1
  StoredRun raw_run =
      run_stored_ok("Flatten", {stored_int8("x", {2, 2}, {4, 3, 2, 1}, kSharedInt8)},
                    {{"axis", attr_int(0)}}, {{DataType::kInt8, kSharedInt8}});
  expect_shape(raw_run.output_shapes[0], {1, 4});
  expect_int8(raw_run.outputs[0], {4, 3, 2, 1}, "int8 native flatten");
  expect_invalid_model({"Flatten", {input("x", shape, iota_values(120))}, {{"axis", attr_int(5)}}},
                       "axis 5 is out of range [-4, 4]");
  expect_invalid_model({"Flatten", {input("x", shape, iota_values(120))}, {{"axis", attr_int(-5)}}},
                       "axis -5 is out of range");
}

void test_squeeze(void** state) {
  (void)state;
  const Shape shape{1, 3, 1, 2};
  const TensorSpec x = input("x", shape, iota_values(6));
  NodeRun run = run_ok({"Squeeze", {x}, {{"axes", attr_ints({0, 2})}}});
  expect_shape(run.output_shapes[0], {3, 2});
  expect_exact(run.outputs[0], iota_values(6), "squeeze values");
  run = run_ok({"Squeeze", {x, int64_constant("axes", {1}, {-2})}});
  expect_shape(run.output_shapes[0], {1, 3, 2});
  run = run_ok({"Squeeze", {x}});
  expect_shape(run.output_shapes[0], {3, 2});
  run = run_ok({"Squeeze", {input("x", {1, 1}, {5})}});
  expect_shape(run.output_shapes[0], {});
  expect_exact(run.outputs[0], {5}, "squeeze to a scalar");
  StoredRun raw_run = run_stored_ok("Squeeze", {stored_int8("x", {1, 2}, {-7, 9}, kSharedInt8)}, {},
                                    {{DataType::kInt8, kSharedInt8}});
  expect_int8(raw_run.outputs[0], {-7, 9}, "int8 native squeeze");

  expect_invalid_model({"Squeeze", {x}, {{"axes", attr_ints({1})}}},
                       "cannot squeeze axis 1 of size 3");
  expect_invalid_model({"Squeeze", {x}, {{"axes", attr_ints({4})}}}, "axes[0] = 4 is out of range");
  expect_invalid_model({"Squeeze", {x}, {{"axes", attr_ints({0, -4})}}},
                       "names axis 0 more than once");
}

void test_unsqueeze(void** state) {
  (void)state;
  const TensorSpec x = input("x", {2, 3}, iota_values(6));
  struct Case {
    std::vector<int64_t> axes;
    Shape expected;
  };
  for (const Case& c : std::vector<Case>{{{0, 3}, {1, 2, 3, 1}},
                                         {{3, 0}, {1, 2, 3, 1}},  // unsorted
                                         {{-1}, {2, 3, 1}},       // relative to the output rank
                                         {{1, -1}, {2, 1, 3, 1}},
                                         {{2}, {2, 3, 1}},
                                         {{-3}, {1, 2, 3}}}) {
    const int64_t count = static_cast<int64_t>(c.axes.size());
    NodeRun run = run_ok({"Unsqueeze", {x, int64_constant("axes", {count}, c.axes)}});
    expect_shape(run.output_shapes[0], c.expected);
    expect_exact(run.outputs[0], iota_values(6), "unsqueeze values");
    run = run_ok({"Unsqueeze", {x}, {{"axes", attr_ints(c.axes)}}});  // before opset 13
    expect_shape(run.output_shapes[0], c.expected);
  }
  StoredRun raw_run = run_stored_ok(
      "Unsqueeze",
      {stored_int8("x", {2}, {-7, 9}, kSharedInt8), stored_int64_constant("axes", {0})}, {},
      {{DataType::kInt8, kSharedInt8}});
  expect_shape(raw_run.output_shapes[0], {1, 2});
  expect_int8(raw_run.outputs[0], {-7, 9}, "int8 native unsqueeze");

  expect_invalid_model({"Unsqueeze", {x}}, "needs axes");
  expect_invalid_model({"Unsqueeze", {x}, {{"axes", attr_ints({0, 0})}}},
                       "names axis 0 more than once");
  expect_invalid_model({"Unsqueeze", {x}, {{"axes", attr_ints({0, -4})}}},
                       "names axis 0 more than once");
  expect_invalid_model({"Unsqueeze", {x}, {{"axes", attr_ints({3})}}},
                       "axes[0] = 3 is out of range for rank 3");
}

void test_shape_ops_precisions(void** state) {
  (void)state;
  const std::vector<float> values = random_values(60, -2, 5, 6);
  check_precisions_agree(reshape_spec({3, 4, 5}, {0, -1}), 1e-3, 0.02);
  check_precisions_agree({"Flatten", {input("x", {3, 4, 5}, values)}, {{"axis", attr_int(2)}}},
                         1e-3, 0.02);
  check_precisions_agree({"Squeeze", {input("x", {3, 1, 20}, values)}}, 1e-3, 0.02);
  check_precisions_agree(
      {"Unsqueeze", {input("x", {3, 20}, values), int64_constant("a", {1}, {1})}}, 1e-3, 0.02);
}

// --- Pad -------------------------------------------------------------------------------------

constexpr int kPadded = -100;  // marks a constant-padding position in PadCase::expected

struct PadCase {
  const char* mode;
  int64_t begin, end;
  std::vector<int> expected;  // from x = 1..5; empty with `error` set for invalid pads
  const char* error;
};

// Edges of every mode on one axis of 5 elements, including negative (cropping) pads.
const std::vector<PadCase>& pad_cases() {
  const int P = kPadded;
  static const std::vector<PadCase> cases{
      {"constant", 2, 1, {P, P, 1, 2, 3, 4, 5, P}, nullptr},
      {"constant", -2, 1, {3, 4, 5, P}, nullptr},
      {"constant", -5, 2, {P, P}, nullptr},  // everything cropped, then padded
      {"constant", -3, -2, {}, nullptr},
      {"constant", -6, 0, {}, "crop more than the dimension 5"},
      {"edge", 3, 2, {1, 1, 1, 1, 2, 3, 4, 5, 5, 5}, nullptr},
      {"edge", -1, 2, {2, 3, 4, 5, 5, 5}, nullptr},
      {"edge", 2, -4, {1, 1, 1}, nullptr},
      {"edge", 0, 0, {1, 2, 3, 4, 5}, nullptr},
      {"edge", 1, -5, {}, "edge cannot pad an empty dimension"},
      {"reflect", 4, 4, {5, 4, 3, 2, 1, 2, 3, 4, 5, 4, 3, 2, 1}, nullptr},  // the largest reach
      {"reflect", 1, 1, {2, 1, 2, 3, 4, 5, 4}, nullptr},
      {"reflect", 0, 4, {1, 2, 3, 4, 5, 4, 3, 2, 1}, nullptr},
      {"reflect", 2, -1, {3, 2, 1, 2, 3, 4}, nullptr},  // reflects within what survives
      {"reflect", -2, 2, {3, 4, 5, 4, 3}, nullptr},
      {"reflect", -1, -1, {2, 3, 4}, nullptr},
      {"reflect", 5, 0, {}, "reach beyond the dimension (5 elements allow at most 4"},
      {"reflect", 0, 5, {}, "reach beyond the dimension"},
      {"reflect", 3, -2, {}, "(3 elements allow at most 2"},
      {"reflect", -2, 3, {}, "(3 elements allow at most 2"},
      {"wrap", 2, 1, {4, 5, 1, 2, 3, 4, 5, 1}, nullptr},
      {"wrap", 7, 6, {4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1}, nullptr},  // periods
      {"wrap", 2, -1, {4, 5, 1, 2, 3, 4}, nullptr},  // wraps the whole axis, then crops
      {"wrap", 1, -5, {}, "wrap cannot pad an empty dimension"},
  };
  return cases;
}

NodeSpec pad_1d_spec(const PadCase& c) {
  return {"Pad",
          {input("x", {5}, iota_values(5, 1)), int64_constant("pads", {2}, {c.begin, c.end})},
          {{"mode", attr_string(c.mode)}}};
}

void test_pad_edges_float(void** state) {
  (void)state;
  const std::vector<PadCase>& cases = pad_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const PadCase& c = cases[i];
    if (c.error) {
      expect_invalid_model(pad_1d_spec(c), c.error);
      continue;
    }
    std::vector<float> expected;
    for (int value : c.expected) expected.push_back(value == kPadded ? 0.0f : value);
    NodeRun run = run_ok(pad_1d_spec(c));
    expect_exact(run.outputs[0], expected, str_cat("float32 pad case ", i));
    run = run_ok(pad_1d_spec(c), Precision::kInt8);
    expect_close(run.outputs[0], expected, 0.02);
  }
}

void test_pad_edges_native(void** state) {
  (void)state;
  const std::vector<PadCase>& cases = pad_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const PadCase& c = cases[i];
    StoredRun run = run_stored("Pad",
                               {stored_int8("x", {5}, int8_iota(5, 1), kSharedInt8),
                                stored_int64_constant("pads", {c.begin, c.end})},
                               {{"mode", attr_string(c.mode)}}, {{DataType::kInt8, kSharedInt8}});
    if (c.error) {
      assert_int_equal(run.status.code(), StatusCode::kInvalidModel);
      continue;
    }
    if (!run.status.ok()) fail_msg("pad case %zu: %s", i, run.status.message().c_str());
    // Real 0 in the shared quantization is its zero point.
    std::vector<int> expected;
    for (int value : c.expected) expected.push_back(value == kPadded ? -3 : value);
    expect_int8(run.outputs[0], expected, str_cat("int8 native pad case ", i));
  }
}

void test_pad_two_dimensional(void** state) {
  (void)state;
  const TensorSpec x = input("x", {2, 3}, iota_values(6, 1));
  const std::vector<float> padded{9, 9, 9, 9, 1, 2, 3, 9, 4, 5, 6, 9};
  NodeRun run =
      run_ok({"Pad", {x, int64_constant("pads", {4}, {1, 0, 0, 1}), constant("value", {}, {9})}});
  expect_shape(run.output_shapes[0], {3, 4});
  expect_exact(run.outputs[0], padded, "constant_value input");
  // Opsets 2-10: pads and value attributes; opset 1 called them paddings.
  run = run_ok({"Pad", {x}, {{"pads", attr_ints({1, 0, 0, 1})}, {"value", attr_float(9)}}});
  expect_exact(run.outputs[0], padded, "attributes");
  run = run_ok({"Pad", {x}, {{"paddings", attr_ints({1, 0, 0, 1})}, {"value", attr_float(9)}}});
  expect_exact(run.outputs[0], padded, "opset 1 paddings");
  run = run_ok({"Pad", {x, int64_constant("pads", {4}, {0, -1, -1, 1})}});
  expect_shape(run.output_shapes[0], {1, 3});
  expect_exact(run.outputs[0], {2, 3, 0}, "crop and pad");
  // Opset 18: pads for the listed axes only.
  run = run_ok(
      {"Pad",
       {x, int64_constant("pads", {2}, {1, 2}), omitted(), int64_constant("axes", {1}, {-1})}});
  expect_shape(run.output_shapes[0], {2, 6});
  expect_exact(run.outputs[0], {0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0}, "axes input");

  run = run_ok({"Pad",
                {input("x", {2, 2}, {1, 2, 3, 4}), int64_constant("pads", {4}, {1, 1, 1, 1})},
                {{"mode", attr_string("edge")}}});
  expect_exact(run.outputs[0], {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, "edge 2D");
  run = run_ok({"Pad",
                {input("x", {3, 3}, iota_values(9, 1)), int64_constant("pads", {4}, {1, 1, 1, 1})},
                {{"mode", attr_string("reflect")}}});
  expect_exact(run.outputs[0],
               {5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5, 8, 7, 8, 9, 8, 5, 4, 5, 6, 5},
               "reflect 2D");

  // NCHW spatial padding, expected from the index formula.
  const Shape shape{1, 2, 2, 3};
  run = run_ok(
      {"Pad",
       {input("x", shape, iota_values(12, 1)),
        int64_constant("pads", {8}, {0, 0, 1, 2, 0, 0, 1, 0}), constant("value", {1}, {-1})}});
  const Shape out_shape{1, 2, 4, 5};
  expect_shape(run.output_shapes[0], out_shape);
  std::vector<float> expected;
  for (int64_t o = 0; o < 40; ++o) {
    std::vector<int64_t> index = unravel(o, out_shape);
    index[2] -= 1;
    index[3] -= 2;
    const bool inside = index[2] >= 0 && index[2] < 2 && index[3] >= 0 && index[3] < 3;
    expected.push_back(inside ? static_cast<float>(ravel(index, shape) + 1) : -1.0f);
  }
  expect_exact(run.outputs[0], expected, "NCHW");
}

void test_pad_value_representations(void** state) {
  (void)state;
  const std::vector<uint8_t> pads_bytes = to_bytes<int64_t>({1, 1});
  const StoredTensor pads{"pads", DataType::kInt64, {2}, pads_bytes, {}, true};
  const StoredTensor data = stored_int8("x", {2}, {1, 2}, kSharedInt8);  // reals 2.0, 2.5
  const std::vector<StoredOutput> int8_output{{DataType::kInt8, kSharedInt8}};
  const graph::Quantization other{{1.0f}, {0}, 0};
  auto constant_int8 = [](int8_t value, const graph::Quantization& quantization) {
    StoredTensor tensor = stored_int8("value", {}, {value}, quantization);
    tensor.constant = true;
    return tensor;
  };

  // Same quantization as the data: the value's byte is copied (native byte move).
  StoredRun run =
      run_stored_ok("Pad", {data, pads, constant_int8(7, kSharedInt8)}, {}, int8_output);
  expect_int8(run.outputs[0], {7, 1, 2, 7}, "value shares the quantization");
  // Another quantization: decoded to float (real 3.0), then encoded like the output.
  run = run_stored_ok("Pad", {data, pads, constant_int8(3, other)}, {}, int8_output);
  expect_int8(run.outputs[0], {3, 1, 2, 3}, "value with its own quantization");
  // A float32 value in an int8 model (real 4.0).
  StoredTensor float_value{"value", DataType::kFloat32, {1}, to_bytes<float>({4.0f}), {}, true};
  run = run_stored_ok("Pad", {data, pads, float_value}, {}, int8_output);
  expect_int8(run.outputs[0], {5, 1, 2, 5}, "float32 value");
  // No value: real zero is the zero point.
  run = run_stored_ok("Pad", {data, pads}, {}, int8_output);
  expect_int8(run.outputs[0], {-3, 1, 2, -3}, "default zero");
  // The opset 2-10 float attribute, encoded with the data's quantization (-1.0 -> -5).
  run = run_stored_ok("Pad", {data}, {{"pads", attr_ints({1, 1})}, {"value", attr_float(-1.0f)}},
                      int8_output);
  expect_int8(run.outputs[0], {-5, 1, 2, -5}, "value attribute");
  // Values that are graph inputs are read at each run.
  run = run_stored_ok("Pad", {data, pads, stored_int8("value", {1}, {7}, kSharedInt8)}, {},
                      int8_output);
  expect_int8(run.outputs[0], {7, 1, 2, 7}, "runtime value, native");
  run = run_stored_ok("Pad", {data, pads, stored_int8("value", {1}, {3}, other)}, {}, int8_output);
  expect_int8(run.outputs[0], {3, 1, 2, 3}, "runtime value, float domain");

  // Plain integer and float16 data.
  run = run_stored_ok(
      "Pad",
      {stored<int64_t>("x", DataType::kInt64, {2}, {10, 20}), pads,
       StoredTensor{"value", DataType::kInt64, {1}, to_bytes<int64_t>({-7}), {}, true}},
      {}, {{DataType::kInt64, {}}});
  assert_true((from_bytes<int64_t>(run.outputs[0]) == std::vector<int64_t>{-7, 10, 20, -7}));
  run = run_stored_ok("Pad", {stored<int32_t>("x", DataType::kInt32, {2}, {10, 20})},
                      {{"pads", attr_ints({1, 1})}, {"value", attr_float(2.7f)}},
                      {{DataType::kInt32, {}}});
  assert_true((from_bytes<int32_t>(run.outputs[0]) == std::vector<int32_t>{2, 10, 20, 2}));
  run = run_stored_ok("Pad", {stored<uint16_t>("x", DataType::kFloat16, {2}, {0x3C00, 0x4000})},
                      {{"pads", attr_ints({1, 1})}, {"value", attr_float(1.5f)}},
                      {{DataType::kFloat16, {}}});
  assert_true((from_bytes<uint16_t>(run.outputs[0]) ==
               std::vector<uint16_t>{0x3E00, 0x3C00, 0x4000, 0x3E00}));
}

void test_pad_errors(void** state) {
  (void)state;
  const TensorSpec x = input("x", {2, 3}, iota_values(6));
  expect_invalid_model(
      {"Pad", {x, int64_constant("pads", {4}, {0, 1, 0, 1})}, {{"mode", attr_string("circular")}}},
      "mode 'circular' is not one of constant, edge, reflect, wrap");
  expect_invalid_model({"Pad", {x, int64_constant("pads", {3}, {0, 1, 0})}},
                       "pads has 3 values, expected 4");
  expect_invalid_model(
      {"Pad", {x, int64_constant("pads", {4}, {0, 0, 0, 0}), constant("v", {2}, {1, 2})}},
      "must hold one element");
  expect_invalid_model(
      {"Pad", {x, int64_constant("pads", {4}, {0, 0, 0, 0}), int64_constant("v", {}, {1})}},
      "must share one element type");
  expect_invalid_model({"Pad", {x, int_input("pads", {4}, {0, 0, 0, 0})}}, "must be a constant");
  expect_invalid_model({"Pad", {x}}, "needs pads");
  expect_invalid_model(
      {"Pad",
       {x, int64_constant("pads", {2}, {1, 1}), omitted(), int64_constant("axes", {1}, {2})}},
      "axes[0] = 2 is out of range");
  expect_invalid_model({"Pad",
                        {input("x", {1}, {4}), int64_constant("pads", {2}, {1, 0})},
                        {{"mode", attr_string("reflect")}}},
                       "(1 elements allow at most 0");
  expect_invalid_model({"Pad", {x, int64_constant("pads", {4}, {0, kInt64Max, 0, 0})}},
                       "too large");
}

void test_pad_precisions(void** state) {
  (void)state;
  const std::vector<float> values = random_values(105, -2, 3, 7);
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    check_precisions_agree(
        {"Pad",
         {input("x", {1, 3, 5, 7}, values), int64_constant("pads", {8}, {0, 0, 2, 3, 0, 0, 4, -1}),
          constant("value", {}, {0.5f})},
         {{"mode", attr_string(mode)}}},
        1e-3, 0.02);
  }
}

// --- Cast ------------------------------------------------------------------------------------

void test_cast_through_harness(void** state) {
  (void)state;
  const std::vector<float> x{-2.7f, -0.5f, 0.5f, 2.7f, 100.9f};
  NodeSpec to_int{"Cast", {input("x", {5}, x)}, {{"to", attr_int(7)}}};
  to_int.integer_outputs = {DataType::kInt64};
  expect_exact(run_ok(to_int).outputs[0], {-2, 0, 0, 2, 100}, "float32 to INT64");
  expect_exact(run_ok(to_int, Precision::kFloat16).outputs[0], {-2, 0, 0, 2, 100},
               "float16 to INT64");
  NodeSpec identity{
      "Cast", {input("x", {2, 3, 5}, random_values(30, -3, 3, 8))}, {{"to", attr_int(1)}}};
  check_precisions_agree(identity, 1e-3, 0.02);
  NodeSpec from_int{"Cast", {int_input("x", {3}, {-4, 0, 9})}, {{"to", attr_int(1)}}};
  expect_exact(run_ok(from_int).outputs[0], {-4, 0, 9}, "INT64 to FLOAT");
}

void test_cast_quantized_tensors(void** state) {
  (void)state;
  const graph::Quantization q{{0.5f}, {-2}, 0};
  // A quantized int8 activation cast to FLOAT gives its real values.
  StoredRun run = run_stored_ok("Cast", {stored_int8("x", {5}, {-2, 0, 10, -128, 127}, q)},
                                {{"to", attr_int(1)}}, {{DataType::kFloat32, {}}});
  assert_true(
      (from_bytes<float>(run.outputs[0]) == std::vector<float>{0.0f, 1.0f, 6.0f, -63.0f, 64.5f}));
  // A FLOAT result stored quantized (a converter quantized the output) is encoded.
  run =
      run_stored_ok("Cast", {stored<float>("x", DataType::kFloat32, {5}, {0, 1, 6.2f, 100, -100})},
                    {{"to", attr_int(1)}}, {{DataType::kInt8, q}});
  expect_int8(run.outputs[0], {-2, 0, 10, 127, -128}, "FLOAT stored as int8");
  // Quantized to INT32 truncates the real values.
  run = run_stored_ok("Cast", {stored_int8("x", {4}, {5, -5, 10, 0}, {{0.3f}, {0}, 0})},
                      {{"to", attr_int(6)}}, {{DataType::kInt32, {}}});
  assert_true((from_bytes<int32_t>(run.outputs[0]) == std::vector<int32_t>{1, -1, 3, 0}));
  // A plain (not quantized) int8 tensor holds integers.
  run = run_stored_ok("Cast", {stored_int8("x", {2}, {-3, 5}, {})}, {{"to", attr_int(1)}},
                      {{DataType::kFloat32, {}}});
  assert_true((from_bytes<float>(run.outputs[0]) == std::vector<float>{-3.0f, 5.0f}));
  // Requantization between two int8 encodings of FLOAT.
  run = run_stored_ok("Cast", {stored_int8("x", {3}, {-2, 0, 10}, q)}, {{"to", attr_int(1)}},
                      {{DataType::kInt8, {{0.25f}, {1}, 0}}});
  expect_int8(run.outputs[0], {1, 5, 25}, "requantized");
  // Plain pairs: INT64 -> INT8 wraps, FLOAT -> BOOL, FLOAT16 -> FLOAT.
  run = run_stored_ok("Cast", {stored<int64_t>("x", DataType::kInt64, {2}, {300, -129})},
                      {{"to", attr_int(3)}}, {{DataType::kInt8, {}}});
  expect_int8(run.outputs[0], {44, 127}, "INT64 to INT8");
  run = run_stored_ok("Cast", {stored<float>("x", DataType::kFloat32, {3}, {0, 0.1f, -2})},
                      {{"to", attr_int(9)}}, {{DataType::kBool, {}}});
  assert_true((run.outputs[0] == std::vector<uint8_t>{0, 1, 1}));
  run = run_stored_ok("Cast", {stored<uint16_t>("x", DataType::kFloat16, {2}, {0x3E00, 0xC000})},
                      {{"to", attr_int(1)}}, {{DataType::kFloat32, {}}});
  assert_true((from_bytes<float>(run.outputs[0]) == std::vector<float>{1.5f, -2.0f}));
  // INT64 stored as INT32 (a converter narrowed the model's integers).
  run = run_stored_ok("Cast", {stored<float>("x", DataType::kFloat32, {2}, {3.9f, -3.9f})},
                      {{"to", attr_int(7)}}, {{DataType::kInt32, {}}});
  assert_true((from_bytes<int32_t>(run.outputs[0]) == std::vector<int32_t>{3, -3}));
}

void test_cast_errors(void** state) {
  (void)state;
  const TensorSpec x = input("x", {2}, {1, 2});
  expect_invalid_model({"Cast", {x}, {{"to", attr_int(11)}}}, "to=11 is not a supported type");
  expect_invalid_model({"Cast", {x}, {{"to", attr_int(8)}}}, "to=8 is not a supported type");
  expect_invalid_model({"Cast", {x}}, "attribute 'to' is required");
  expect_invalid_model({"Cast", {x}, {{"to", attr_string("FLOAT")}}}, "attribute 'to' is string");
  // The model stores the output as FLOAT32 but asks for INT64.
  expect_invalid_model({"Cast", {x}, {{"to", attr_int(7)}}},
                       "cannot hold the result of a Cast to INT64");
  StoredRun run = run_stored("Cast", {stored<float>("x", DataType::kFloat32, {1}, {1})},
                             {{"to", attr_int(1)}}, {{DataType::kInt64, {}}});
  assert_int_equal(run.status.code(), StatusCode::kInvalidModel);
  run = run_stored("Cast", {stored<float>("x", DataType::kFloat32, {1}, {1})},
                   {{"to", attr_int(3)}}, {{DataType::kInt8, {{0.5f}, {0}, 0}}});
  assert_int_equal(run.status.code(), StatusCode::kInvalidModel);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_concat_split_two_byte_elements),
      cmocka_unit_test(test_reference_slice_negative_steps),
      cmocka_unit_test(test_reference_transpose_eight_byte_elements),
      cmocka_unit_test(test_reference_pad_one_byte_elements),
      cmocka_unit_test(test_reference_cast_float_to_integers),
      cmocka_unit_test(test_reference_cast_integers),
      cmocka_unit_test(test_reference_cast_float16),
      cmocka_unit_test(test_concat_values),
      cmocka_unit_test(test_concat_native_and_integer),
      cmocka_unit_test(test_concat_errors),
      cmocka_unit_test(test_concat_precisions),
      cmocka_unit_test(test_split_equal_and_uneven),
      cmocka_unit_test(test_split_native),
      cmocka_unit_test(test_split_errors),
      cmocka_unit_test(test_split_precisions),
      cmocka_unit_test(test_slice_clamping_float),
      cmocka_unit_test(test_slice_clamping_native),
      cmocka_unit_test(test_slice_multi_axis),
      cmocka_unit_test(test_slice_errors),
      cmocka_unit_test(test_slice_precisions),
      cmocka_unit_test(test_transpose_values),
      cmocka_unit_test(test_transpose_errors),
      cmocka_unit_test(test_transpose_precisions),
      cmocka_unit_test(test_reshape_zero_and_minus_one),
      cmocka_unit_test(test_reshape_errors),
      cmocka_unit_test(test_flatten),
      cmocka_unit_test(test_squeeze),
      cmocka_unit_test(test_unsqueeze),
      cmocka_unit_test(test_shape_ops_precisions),
      cmocka_unit_test(test_pad_edges_float),
      cmocka_unit_test(test_pad_edges_native),
      cmocka_unit_test(test_pad_two_dimensional),
      cmocka_unit_test(test_pad_value_representations),
      cmocka_unit_test(test_pad_errors),
      cmocka_unit_test(test_pad_precisions),
      cmocka_unit_test(test_cast_through_harness),
      cmocka_unit_test(test_cast_quantized_tensors),
      cmocka_unit_test(test_cast_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
