// Elementwise family: binary arithmetic with numpy broadcasting, PRelu, Pow and the unary
// activations. Expected values come from formulas written here (an independent index
// computation for broadcasting), never from the reference kernels under test.
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "common/op_test_harness.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;
using graph::Shape;

using BinaryFormula = std::function<float(float, float)>;
using UnaryFormula = std::function<float(float)>;

// Numpy broadcasting by explicit index arithmetic on each output element.
std::vector<float> broadcast_expected(const BinaryFormula& formula, const Shape& a_shape,
                                      const std::vector<float>& a, const Shape& b_shape,
                                      const std::vector<float>& b, Shape* out_shape) {
  const size_t rank = std::max(a_shape.size(), b_shape.size());
  auto dim = [&](const Shape& shape, size_t i) {
    return i + shape.size() < rank ? int64_t{1} : shape[i + shape.size() - rank];
  };
  Shape shape(rank);
  // A dimension of 1 takes the other side's size, even 0.
  for (size_t i = 0; i < rank; ++i)
    shape[i] = dim(a_shape, i) == 1 ? dim(b_shape, i) : dim(a_shape, i);
  auto source_index = [&](const Shape& source, const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t size = dim(source, i);
      offset = offset * size + (size == 1 ? 0 : index[i]);
    }
    return offset;
  };
  std::vector<float> result;
  for (int64_t linear = 0; linear < graph::element_count(shape); ++linear) {
    std::vector<int64_t> index(rank);
    int64_t rest = linear;
    for (size_t i = rank; i-- > 0;) {
      index[i] = rest % shape[i];
      rest /= shape[i];
    }
    result.push_back(formula(a[static_cast<size_t>(source_index(a_shape, index))],
                             b[static_cast<size_t>(source_index(b_shape, index))]));
  }
  *out_shape = shape;
  return result;
}

struct BinaryCase {
  const char* op_type;
  BinaryFormula formula;
};
const BinaryCase kBinaryCases[] = {
    {"Add", [](float a, float b) { return a + b; }},
    {"Sub", [](float a, float b) { return a - b; }},
    {"Mul", [](float a, float b) { return a * b; }},
    {"Div", [](float a, float b) { return a / b; }},
};

void check_broadcast(const Shape& a_shape, const Shape& b_shape, uint32_t seed) {
  const auto a = random_values(static_cast<size_t>(graph::element_count(a_shape)), -2, 2, seed);
  // Divisors kept away from zero.
  const auto b =
      random_values(static_cast<size_t>(graph::element_count(b_shape)), 0.5f, 2, seed + 1);
  for (const BinaryCase& op : kBinaryCases) {
    NodeSpec spec = node_spec(op.op_type, {input("a", a_shape, a), input("b", b_shape, b)}, {});
    NodeRun run = run_ok(spec);
    Shape expected_shape;
    const auto expected = broadcast_expected(op.formula, a_shape, a, b_shape, b, &expected_shape);
    expect_shape(run.output_shapes[0], expected_shape);
    expect_close(run.outputs[0], expected, 1e-6);
  }
}

void test_binary_hand_checked(void**) {
  NodeSpec add =
      node_spec("Add", {input("a", {2, 3}, {1, 2, 3, 4, 5, 6}), input("b", {3}, {10, 20, 30})}, {});
  expect_close(run_ok(add).outputs[0], {11, 22, 33, 14, 25, 36}, 0);
  NodeSpec sub = node_spec("Sub", {input("a", {2, 1}, {1, 2}), input("b", {1, 3}, {1, 2, 3})}, {});
  NodeRun run = run_ok(sub);
  expect_shape(run.output_shapes[0], {2, 3});
  expect_close(run.outputs[0], {0, -1, -2, 1, 0, -1}, 0);
  NodeSpec mul = node_spec("Mul", {input("a", {3}, {1, -2, 3}), constant("b", {}, {-2})}, {});
  expect_close(run_ok(mul).outputs[0], {-2, 4, -6}, 0);
  NodeSpec div = node_spec("Div", {input("a", {2}, {1, -3}), input("b", {2}, {4, 2})}, {});
  expect_close(run_ok(div).outputs[0], {0.25f, -1.5f}, 0);
}

void test_broadcast_patterns(void**) {
  check_broadcast({}, {}, 1);                                  // scalar and scalar
  check_broadcast({2, 3, 4}, {}, 2);                           // scalar right
  check_broadcast({1}, {5}, 3);                                // 1-element left
  check_broadcast({2, 3, 4, 5}, {3, 1, 1}, 4);                 // per channel
  check_broadcast({1, 3, 1, 1}, {2, 3, 4, 5}, 5);              // per channel, left side
  check_broadcast({2, 7, 13}, {2, 7, 13}, 6);                  // full, prime sizes
  check_broadcast({2, 1, 3}, {1, 4, 1}, 7);                    // both sides broadcast
  check_broadcast({5, 1}, {1, 1, 4}, 8);                       // rank differs, both broadcast
  check_broadcast({2, 1, 3, 1, 2, 1}, {1, 3, 1, 2, 1, 3}, 9);  // rank 6 alternating
  check_broadcast({2, 3, 0}, {3, 1}, 10);                      // empty output
}

void test_broadcast_random_ranks(void**) {
  std::mt19937 generator(42);
  const int64_t sizes[] = {2, 3, 5};
  for (int trial = 0; trial < 60; ++trial) {
    const size_t rank = static_cast<size_t>(trial % 7);  // 0..6
    Shape full(rank);
    for (int64_t& d : full) d = sizes[generator() % 3];
    auto derive = [&]() {
      Shape shape = full;
      for (int64_t& d : shape) {
        if (generator() % 3 == 0) d = 1;
      }
      const size_t drop = rank ? generator() % (rank + 1) : 0;
      return Shape(shape.begin() + static_cast<std::ptrdiff_t>(drop), shape.end());
    };
    check_broadcast(derive(), derive(), 100 + static_cast<uint32_t>(trial));
  }
}

void test_binary_errors(void**) {
  NodeSpec bad = node_spec(
      "Add", {input("a", {2, 3}, std::vector<float>(6)), input("b", {4}, std::vector<float>(4))},
      {});
  expect_error(bad, StatusCode::kInvalidModel, "cannot be broadcast");
  NodeSpec legacy =
      node_spec("Mul", {input("a", {2, 3}, std::vector<float>(6)), input("b", {2}, {1, 2})},
                {{"broadcast", attr_int(1)}, {"axis", attr_int(0)}});
  expect_error(legacy, StatusCode::kInvalidModel, "legacy 'axis'");
  NodeSpec integers =
      node_spec("Add", {int64_constant("a", {2}, {1, 2}), int64_constant("b", {2}, {3, 4})}, {});
  expect_error(integers, StatusCode::kUnimplemented, "INT64");
}

void test_pow(void**) {
  NodeSpec square =
      node_spec("Pow", {input("x", {4}, {-2, 0.5f, 3, 0}), constant("y", {}, {2})}, {});
  expect_close(run_ok(square).outputs[0], {4, 0.25f, 9, 0}, 1e-6);
  NodeSpec per_column =
      node_spec("Pow", {input("x", {2, 2}, {4, 4, 9, 9}), input("y", {2}, {0.5f, -1})}, {});
  expect_close(run_ok(per_column).outputs[0], {2, 0.25f, 3, 1.0f / 9}, 1e-6);
  NodeSpec integer =
      node_spec("Pow", {input("x", {3}, {-2, 3, 1.5f}), int64_constant("y", {}, {3})}, {});
  expect_close(run_ok(integer).outputs[0], {-8, 27, 3.375f}, 1e-6);
  // An integer exponent that is not a constant is converted on every run.
  TensorSpec runtime_exponent = int64_constant("y", {3}, {2, -1, 0});
  runtime_exponent.constant = false;
  NodeSpec per_run = node_spec("Pow", {input("x", {3}, {-3, 4, 5}), runtime_exponent}, {});
  expect_close(run_ok(per_run).outputs[0], {9, 0.25f, 1}, 1e-6);
  NodeSpec nan = node_spec("Pow", {input("x", {1}, {-8}), constant("y", {1}, {1.0f / 3})}, {});
  assert_true(std::isnan(run_ok(nan).outputs[0][0]));
  check_precisions_agree(
      node_spec("Pow", {input("x", {3, 5}, random_values(15, 0.5f, 2, 3)), constant("y", {}, {2})},
                {}),
      1e-2, 0.05);
}

void test_prelu(void**) {
  // Slope per channel [C,1,1] on N x C x H x W, as PyTorch exports it.
  NodeSpec spec = node_spec("PRelu",
                            {input("x", {1, 2, 1, 3}, {-1, 2, -3, -4, 5, -6}),
                             constant("slope", {2, 1, 1}, {0.5f, 0.25f})},
                            {});
  expect_close(run_ok(spec).outputs[0], {-0.5f, 2, -1.5f, -1, 5, -1.5f}, 0);
  NodeSpec scalar =
      node_spec("PRelu", {input("x", {3}, {-2, 0, 2}), constant("slope", {1}, {0.1f})}, {});
  expect_close(run_ok(scalar).outputs[0], {-0.2f, 0, 2}, 1e-7);
  NodeSpec wrong = node_spec("PRelu",
                             {input("x", {2, 3}, std::vector<float>(6)),
                              constant("slope", {2, 1, 3}, std::vector<float>(6))},
                             {});
  expect_error(wrong, StatusCode::kInvalidModel, "does not broadcast to the input shape");
  NodeSpec mismatch = node_spec(
      "PRelu", {input("x", {2, 3}, std::vector<float>(6)), constant("slope", {2}, {1, 2})}, {});
  expect_error(mismatch, StatusCode::kInvalidModel, "slope shape 2");
  check_precisions_agree(node_spec("PRelu",
                                   {input("x", {1, 3, 4, 5}, random_values(60, -2, 2, 4)),
                                    constant("slope", {3, 1, 1}, {0.1f, 0.2f, 0.3f})},
                                   {}),
                         1e-2, 0.05);
}

void test_binary_precisions(void**) {
  for (const BinaryCase& op : kBinaryCases) {
    NodeSpec spec = node_spec(op.op_type,
                              {input("a", {2, 3, 4, 5}, random_values(120, -2, 2, 11)),
                               input("b", {3, 1, 5}, random_values(15, 0.5f, 2, 12))},
                              {});
    check_precisions_agree(spec, 1e-2, 0.05);
  }
}

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

struct UnaryCase {
  const char* op_type;
  std::map<std::string, graph::Attribute> attributes;
  UnaryFormula formula;
  float low, high;  // input range for precision checks
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"Relu", {}, [](float x) { return x > 0 ? x : 0.0f; }, -3, 3},
      {"LeakyRelu", {}, [](float x) { return x > 0 ? x : 0.01f * x; }, -3, 3},
      {"LeakyRelu",
       {{"alpha", attr_float(0.2f)}},
       [](float x) { return x > 0 ? x : 0.2f * x; },
       -3,
       3},
      {"Sigmoid", {}, sigmoid, -6, 6},
      {"HardSigmoid",
       {},
       [](float x) { return std::fmax(0.0f, std::fmin(1.0f, 0.2f * x + 0.5f)); },
       -4,
       4},
      {"HardSigmoid",
       {{"alpha", attr_float(0.5f)}, {"beta", attr_float(0.25f)}},
       [](float x) { return std::fmax(0.0f, std::fmin(1.0f, 0.5f * x + 0.25f)); },
       -4,
       4},
      {"HardSwish",
       {},
       [](float x) { return x * std::fmax(0.0f, std::fmin(1.0f, (x + 3) / 6)); },
       -5,
       5},
      {"SiLU", {}, [](float x) { return x * sigmoid(x); }, -5, 5},
      {"Swish", {}, [](float x) { return x * sigmoid(x); }, -5, 5},
      {"Swish",
       {{"alpha", attr_float(1.702f)}},
       [](float x) { return x * sigmoid(1.702f * x); },
       -5,
       5},
      {"Tanh", {}, [](float x) { return std::tanh(x); }, -3, 3},
      {"Exp", {}, [](float x) { return std::exp(x); }, -3, 3},
      {"Sqrt", {}, [](float x) { return std::sqrt(x); }, 0, 9},
      {"Neg", {}, [](float x) { return -x; }, -3, 3},
      {"Abs", {}, [](float x) { return std::fabs(x); }, -3, 3},
      {"Reciprocal", {}, [](float x) { return 1 / x; }, 0.5f, 4},
      {"Clip",
       {{"min", attr_float(-1)}, {"max", attr_float(2)}},
       [](float x) { return std::fmin(2.0f, std::fmax(-1.0f, x)); },
       -3,
       3},
  };
}

void test_unary_hand_checked(void**) {
  const std::vector<float> values = {-7.5f, -3, -1, -0.25f, 0, 0.25f, 1, 2.5f, 3, 8};
  for (const UnaryCase& op : unary_cases()) {
    std::vector<float> x = values;
    if (op.low >= 0) {
      for (float& value : x) value = std::fabs(value) + 0.5f;
    }
    std::vector<float> expected;
    for (float value : x) expected.push_back(op.formula(value));
    NodeSpec spec = node_spec(op.op_type, {input("x", {2, 5}, x)}, op.attributes);
    NodeRun run = run_ok(spec);
    expect_shape(run.output_shapes[0], {2, 5});
    expect_close(run.outputs[0], expected, 2e-6);
  }
  NodeSpec negative_root = node_spec("Sqrt", {input("x", {2}, {-4, 4})}, {});
  const NodeRun run = run_ok(negative_root);
  assert_true(std::isnan(run.outputs[0][0]));
  assert_true(run.outputs[0][1] == 2.0f);
  NodeSpec extremes = node_spec("Sigmoid", {input("x", {3}, {-100, 0, 100})}, {});
  expect_close(run_ok(extremes).outputs[0], {0, 0.5f, 1}, 1e-30);
}

void test_unary_precisions(void**) {
  uint32_t seed = 20;
  for (const UnaryCase& op : unary_cases()) {
    // Prime-sized odd shape so vectorized variants later hit their tails.
    NodeSpec spec = node_spec(
        op.op_type, {input("x", {1, 3, 7, 11}, random_values(231, op.low, op.high, seed++))},
        op.attributes);
    check_precisions_agree(spec, 1e-2, 0.05);
  }
}

void test_clip_variants(void**) {
  const std::vector<float> x = {-5, -1, 0, 1, 5, 7};
  auto spec_with = [&](std::vector<TensorSpec> extra,
                       std::map<std::string, graph::Attribute> attributes) {
    std::vector<TensorSpec> inputs = {input("x", {6}, x)};
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    return node_spec("Clip", inputs, attributes);
  };
  expect_close(run_ok(spec_with({}, {})).outputs[0], x, 0);  // no bounds: identity
  expect_close(run_ok(spec_with({}, {{"min", attr_float(0)}})).outputs[0], {0, 0, 0, 1, 5, 7}, 0);
  expect_close(run_ok(spec_with({}, {{"max", attr_float(1)}})).outputs[0], {-5, -1, 0, 1, 1, 1}, 0);
  expect_close(
      run_ok(spec_with({constant("min", {}, {0}), constant("max", {}, {6})}, {})).outputs[0],
      {0, 0, 0, 1, 5, 6}, 0);
  expect_close(run_ok(spec_with({omitted(), constant("max", {1}, {0.5f})}, {})).outputs[0],
               {-5, -1, 0, 0.5f, 0.5f, 0.5f}, 0);
  expect_close(run_ok(spec_with({constant("min", {}, {-1})}, {})).outputs[0], {-1, -1, 0, 1, 5, 7},
               0);
  // Bounds fed at run time rather than as constants.
  expect_close(run_ok(spec_with({input("min", {}, {-2}), input("max", {}, {2})}, {})).outputs[0],
               {-2, -1, 0, 1, 2, 2}, 0);
  // min > max gives max everywhere, as ONNX specifies.
  expect_close(
      run_ok(spec_with({constant("min", {}, {3}), constant("max", {}, {1})}, {})).outputs[0],
      {1, 1, 1, 1, 1, 1}, 0);
  check_precisions_agree(spec_with({constant("min", {}, {0}), constant("max", {}, {6})}, {}), 1e-2,
                         0.05);

  expect_error(spec_with({constant("min", {2}, {0, 1})}, {}), StatusCode::kInvalidModel,
               "'min' (input 1) must be a scalar");
  expect_error(spec_with({constant("min", {}, {0})}, {{"min", attr_float(0)}}),
               StatusCode::kInvalidModel, "both as attribute and as input 1");
  expect_error(spec_with({}, {{"min", attr_int(0)}}), StatusCode::kInvalidModel,
               "attribute 'min' is int");
}

// The int8 table must equal the float domain exactly: decode, the float32 kernel, encode.
void check_int8_table(const char* op_type, const Attributes& attributes) {
  const graph::Quantization in_q{{0.05f}, {3}, 0};
  const graph::Quantization out_q{{0.031f}, {-7}, 0};
  std::vector<int8_t> codes(256);
  std::vector<float> reals(256);
  for (int i = 0; i < 256; ++i) {
    codes[i] = static_cast<int8_t>(i - 128);
    reals[i] = dequantize(codes[i], in_q.scales[0], in_q.zero_points[0]);
  }
  const StoredRun int8_run =
      run_stored_ok(op_type, {stored("x", DataType::kInt8, {256}, codes, in_q)}, attributes,
                    {{DataType::kInt8, out_q}});
  const StoredRun float_run =
      run_stored_ok(op_type, {stored("x", DataType::kFloat32, {256}, reals)}, attributes,
                    {{DataType::kFloat32, {}}});
  const std::vector<int8_t> int8_out = from_bytes<int8_t>(int8_run.outputs[0]);
  const std::vector<float> float_out = from_bytes<float>(float_run.outputs[0]);
  for (int i = 0; i < 256; ++i) {
    const int8_t expected = quantize_int8(float_out[i], out_q.scales[0], out_q.zero_points[0]);
    if (int8_out[i] != expected) {
      fail_msg("%s code %d: table %d, float domain %d", op_type, i - 128, int8_out[i], expected);
    }
  }
}

void test_int8_table_bit_exact(void**) {
  check_int8_table("Relu", {});
  check_int8_table("Clip", {{"min", attr_float(-0.5f)}, {"max", attr_float(1.5f)}});
  for (const UnaryCase& op : unary_cases()) check_int8_table(op.op_type, op.attributes);
  // Relu is exact in the quantized domain: dequantize(q) clamped at 0, requantized.
  NodeSpec relu = node_spec("Relu", {input("x", {5}, {-1, -0.5f, 0, 0.5f, 1})}, {});
  expect_close(run_ok(relu, Precision::kInt8).outputs[0], {0, 0, 0, 0.5f, 1}, 0.01);
}

// --- integer tensors (no quantization): the registry's integer path -------------------------

template <typename T>
std::vector<T> run_integer(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                           DataType output_type) {
  StoredRun run = run_stored_ok(op_type, inputs, {}, {{output_type, {}}});
  return from_bytes<T>(run.outputs[0]);
}

template <typename T>
void expect_values(const std::vector<T>& actual, const std::vector<int64_t>& expected,
                   const char* label) {
  if (actual.size() != expected.size()) {
    fail_msg("%s: %zu values, expected %zu", label, actual.size(), expected.size());
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (static_cast<int64_t>(actual[i]) != expected[i]) {
      fail_msg("%s: [%zu] = %lld, expected %lld", label, i, static_cast<long long>(actual[i]),
               static_cast<long long>(expected[i]));
    }
  }
}

void test_integer_arithmetic(void**) {
  const std::vector<int8_t> a = {100, -100, 7, -7, -128, 0};
  const std::vector<int8_t> b = {100, 100, 2, 2, -1, 0};
  auto run8 = [&](const char* op) {
    return run_integer<int8_t>(
        op, {stored("a", DataType::kInt8, {6}, a), stored("b", DataType::kInt8, {6}, b)},
        DataType::kInt8);
  };
  // Wrap-around modulo 256 (numpy), Div truncating toward zero, x / 0 = 0, -128 / -1 wraps.
  expect_values(run8("Add"), {-56, 0, 9, -5, 127, 0}, "int8 Add");
  expect_values(run8("Sub"), {0, 56, 5, -9, -127, 0}, "int8 Sub");
  expect_values(run8("Mul"), {16, -16, 14, -14, -128, 0}, "int8 Mul");
  expect_values(run8("Div"), {1, -1, 3, -3, -128, 0}, "int8 Div");

  // Broadcasting a scalar, uint8 wrap-around and int64 beyond float's 24-bit mantissa.
  expect_values(run_integer<uint8_t>(
                    "Sub",
                    {stored("a", DataType::kUInt8, {2, 2}, std::vector<uint8_t>{0, 1, 200, 255}),
                     stored("b", DataType::kUInt8, {}, std::vector<uint8_t>{2})},
                    DataType::kUInt8),
                {254, 255, 198, 253}, "uint8 Sub broadcast");
  expect_values(
      run_integer<int64_t>(
          "Add",
          {stored("a", DataType::kInt64, {2}, std::vector<int64_t>{(int64_t{1} << 40) + 1, -3}),
           stored("b", DataType::kInt64, {2}, std::vector<int64_t>{1, 4})},
          DataType::kInt64),
      {(int64_t{1} << 40) + 2, 1}, "int64 Add exact");
  expect_values(
      run_integer<int16_t>("Mul",
                           {stored("a", DataType::kInt16, {2, 1}, std::vector<int16_t>{300, -2}),
                            stored("b", DataType::kInt16, {3}, std::vector<int16_t>{1, 2, 300})},
                           DataType::kInt16),
      {300, 600, 24464, -2, -4, -600}, "int16 Mul broadcast, 90000 wraps");
  expect_values(
      run_integer<int32_t>("Div",
                           {stored("a", DataType::kInt32, {4}, std::vector<int32_t>{-3, 3, -3, 3}),
                            stored("b", DataType::kInt32, {4}, std::vector<int32_t>{2, 2, -2, -2})},
                           DataType::kInt32),
      {-1, 1, 1, -1}, "int32 Div truncates");
}

void test_integer_power(void**) {
  // Integer exponent of the base's type, and of another integer type.
  expect_values(run_integer<int32_t>(
                    "Pow",
                    {stored("x", DataType::kInt32, {5}, std::vector<int32_t>{2, -3, 1, -1, 5}),
                     stored("y", DataType::kInt32, {5}, std::vector<int32_t>{10, 3, -4, -3, 0})},
                    DataType::kInt32),
                {1024, -27, 1, -1, 1}, "int32 ** int32");
  expect_values(
      run_integer<int64_t>("Pow",
                           {stored("x", DataType::kInt64, {3}, std::vector<int64_t>{3, 2, 4}),
                            stored("y", DataType::kInt8, {3}, std::vector<int8_t>{39, -1, 2})},
                           DataType::kInt64),
      {4052555153018976267, 0, 16}, "int64 ** int8, 3^39 exact");
  // A float exponent, fractional ones truncated after std::pow (numpy's cast).
  expect_values(run_integer<int32_t>(
                    "Pow",
                    {stored("x", DataType::kInt32, {3}, std::vector<int32_t>{4, 2, 9}),
                     stored("y", DataType::kFloat32, {3}, std::vector<float>{0.5f, 3.0f, 0.5f})},
                    DataType::kInt32),
                {2, 8, 3}, "int32 ** float32");
}

void test_integer_clip(void**) {
  const auto x = stored("x", DataType::kInt8, {5}, std::vector<int8_t>{-128, -5, 0, 5, 127});
  expect_values(run_integer<int8_t>("Clip", {x}, DataType::kInt8), {-128, -5, 0, 5, 127},
                "int8 Clip without bounds");
  expect_values(
      run_integer<int8_t>("Clip",
                          {x, stored("min", DataType::kInt8, {}, std::vector<int8_t>{-3}, {}, true),
                           stored("max", DataType::kInt8, {}, std::vector<int8_t>{4}, {}, true)},
                          DataType::kInt8),
      {-3, -3, 0, 4, 4}, "int8 Clip [-3, 4]");
  expect_values(run_integer<int64_t>(
                    "Clip",
                    {stored("x", DataType::kInt64, {3}, std::vector<int64_t>{-9, 2, 9}),
                     StoredTensor{}, stored("max", DataType::kInt64, {}, std::vector<int64_t>{3})},
                    DataType::kInt64),
                {-9, 2, 3}, "int64 Clip, max only, given at run time");
}

void test_integer_errors(void**) {
  // Mixed integer types, a float result from integer inputs, bounds of another type, PRelu.
  StoredRun run = run_stored("Add",
                             {stored("a", DataType::kInt8, {2}, std::vector<int8_t>{1, 2}),
                              stored("b", DataType::kInt32, {2}, std::vector<int32_t>{1, 2})},
                             {}, {{DataType::kInt8, {}}});
  assert_false(run.status.ok());
  assert_non_null(strstr(run.status.message().c_str(), "one integer type"));
  run = run_stored("Clip",
                   {stored("x", DataType::kInt8, {2}, std::vector<int8_t>{1, 2}),
                    stored("min", DataType::kInt32, {}, std::vector<int32_t>{0}, {}, true)},
                   {}, {{DataType::kInt8, {}}});
  assert_false(run.status.ok());
  assert_non_null(strstr(run.status.message().c_str(), "must be a INT8 scalar"));
  run = run_stored("PRelu",
                   {stored("x", DataType::kInt32, {2}, std::vector<int32_t>{1, 2}),
                    stored("slope", DataType::kInt32, {2}, std::vector<int32_t>{1, 2})},
                   {}, {{DataType::kInt32, {}}});
  assert_false(run.status.ok());
  assert_non_null(strstr(run.status.message().c_str(), "PRelu on integer"));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_binary_hand_checked),
      cmocka_unit_test(test_broadcast_patterns),
      cmocka_unit_test(test_broadcast_random_ranks),
      cmocka_unit_test(test_binary_errors),
      cmocka_unit_test(test_binary_precisions),
      cmocka_unit_test(test_pow),
      cmocka_unit_test(test_prelu),
      cmocka_unit_test(test_unary_hand_checked),
      cmocka_unit_test(test_unary_precisions),
      cmocka_unit_test(test_clip_variants),
      cmocka_unit_test(test_int8_table_bit_exact),
      cmocka_unit_test(test_integer_arithmetic),
      cmocka_unit_test(test_integer_power),
      cmocka_unit_test(test_integer_clip),
      cmocka_unit_test(test_integer_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
