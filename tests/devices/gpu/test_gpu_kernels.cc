// Conformance of every GPU kernel against the CPU device over randomized shapes and attributes,
// in float32 (1e-4 relative) and float16 (1e-2). Each case runs one node with the GPU forced.
#include <string>
#include <vector>

#include "common/op_test_harness.h"
#include "devices/gpu/gpu_test_support.h"

// cmocka after the standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include <cmocka.h>
}

using namespace orknn;
using namespace orknn::testing;
using graph::Shape;

namespace {

constexpr int kCasesPerOp = 4;

#define SKIP_WITHOUT_GPU()        \
  do {                            \
    if (!gpu_available()) skip(); \
  } while (0)

std::string case_name(const char* op, int index) {
  return str_cat(op, " case ", index);
}

void test_conv(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(11);
  for (int i = 0; i < 2 * kCasesPerOp; ++i) {
    const bool depthwise = i % 2 == 1;
    const int64_t group = depthwise ? random.integer(2, 6) : (random.coin() ? 1 : 2);
    const int64_t channels = depthwise ? group : group * random.integer(1, 4);
    const int64_t out_channels = depthwise ? group : group * random.integer(1, 4);
    const int64_t kernel = random.integer(1, 3), stride = random.integer(1, 2);
    const int64_t dilation = kernel > 1 ? random.integer(1, 2) : 1, pad = random.integer(0, 1);
    const Shape x = {random.integer(1, 2), channels, random.integer(kernel * dilation, 11),
                     random.integer(kernel * dilation, 13)};
    const Shape w = {out_channels, channels / group, kernel, kernel};
    std::vector<StoredTensor> inputs = {real_tensor("x", x, random.values(x)),
                                        real_tensor("w", w, random.values(w), true)};
    if (random.coin())
      inputs.push_back(real_tensor("b", {out_channels}, random.values({out_channels}), true));
    Attributes attributes = {{"group", attr_int(group)},
                             {"strides", attr_ints({stride, stride})},
                             {"dilations", attr_ints({dilation, dilation})},
                             {"pads", attr_ints({pad, pad, pad, pad})}};
    if (i % 4 == 2) attributes["activation"] = attr_string("Relu");
    if (i % 4 == 3) {
      attributes["activation"] = attr_string("Clip");
      attributes["activation_min"] = attr_float(0.0f);
      attributes["activation_max"] = attr_float(0.5f);
    }
    expect_gpu_matches_cpu_in_both_precisions(case_name("Conv", i), "Conv", inputs, attributes);
  }
}

// 1x1, stride 1, no padding: the matrix-kernel path, with and without bias.
void test_pointwise_conv(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(19);
  for (int i = 0; i < kCasesPerOp; ++i) {
    const int64_t channels = random.integer(1, 40), out_channels = random.integer(1, 24);
    const Shape x = {random.integer(1, 2), channels, random.integer(1, 9), random.integer(1, 9)};
    const Shape w = {out_channels, channels, 1, 1};
    std::vector<StoredTensor> inputs = {real_tensor("x", x, random.values(x)),
                                        real_tensor("w", w, random.values(w), true)};
    if (i % 2 == 0) {
      inputs.push_back(real_tensor("b", {out_channels}, random.values({out_channels}), true));
    }
    Attributes attributes;
    if (i == 1) attributes["activation"] = attr_string("Relu");
    expect_gpu_matches_cpu_in_both_precisions(case_name("pointwise Conv", i), "Conv", inputs,
                                              attributes);
  }
}

void test_gemm_and_matmul(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(12);
  for (int i = 0; i < kCasesPerOp; ++i) {
    const int64_t m = random.integer(1, 9), n = random.integer(1, 17), k = random.integer(1, 33);
    const bool transpose_a = random.coin(), transpose_b = random.coin();
    const Shape a = transpose_a ? Shape{k, m} : Shape{m, k};
    const Shape b = transpose_b ? Shape{n, k} : Shape{k, n};
    const Shape c = random.coin() ? Shape{n} : Shape{m, n};
    expect_gpu_matches_cpu_in_both_precisions(
        case_name("Gemm", i), "Gemm",
        {real_tensor("a", a, random.values(a)), real_tensor("b", b, random.values(b), true),
         real_tensor("c", c, random.values(c), true)},
        {{"transA", attr_int(transpose_a)},
         {"transB", attr_int(transpose_b)},
         {"alpha", attr_float(0.75f)},
         {"beta", attr_float(1.5f)}});
  }
  const std::vector<std::pair<Shape, Shape>> matmul_shapes = {{{3, 5}, {5, 4}},
                                                              {{2, 1, 3, 6}, {3, 6, 2}},
                                                              {{4, 7}, {7}},
                                                              {{7}, {2, 7, 3}},
                                                              {{2, 3, 4}, {4, 5}}};
  int index = 0;
  for (const auto& shapes : matmul_shapes) {
    expect_gpu_matches_cpu_in_both_precisions(
        case_name("MatMul", index++), "MatMul",
        {real_tensor("a", shapes.first, random.values(shapes.first)),
         real_tensor("b", shapes.second, random.values(shapes.second))},
        {});
  }
}

void test_binary_broadcast(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(13);
  int index = 0;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) {
    for (int i = 0; i < kCasesPerOp; ++i) {
      const Shape out = {random.integer(1, 3), random.integer(1, 5), random.integer(1, 6),
                         random.integer(1, 7)};
      Shape b_shape = out;
      // Broadcast: drop leading axes and set some to 1.
      const size_t dropped = static_cast<size_t>(random.integer(0, 2));
      b_shape.erase(b_shape.begin(), b_shape.begin() + static_cast<std::ptrdiff_t>(dropped));
      for (int64_t& dim : b_shape) {
        if (random.coin()) dim = 1;
      }
      const bool positive = std::string(op) == "Pow" || std::string(op) == "Div";
      const bool b_first = std::string(op) != "PRelu" && random.coin();
      StoredTensor a = real_tensor("a", out, random.values(out, positive ? 0.5f : -1.0f, 1.0f));
      StoredTensor b =
          real_tensor("b", b_shape, random.values(b_shape, positive ? 0.5f : -1.0f, 1.5f));
      std::vector<StoredTensor> inputs = {a, b};
      if (b_first) std::swap(inputs[0], inputs[1]);
      expect_gpu_matches_cpu_in_both_precisions(case_name(op, index++), op, inputs, {});
    }
  }
}

void test_activations(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(14);
  const std::vector<std::pair<const char*, Attributes>> ops = {
      {"Relu", {}},      {"LeakyRelu", {{"alpha", attr_float(0.2f)}}},
      {"Sigmoid", {}},   {"HardSigmoid", {{"alpha", attr_float(0.3f)}, {"beta", attr_float(0.4f)}}},
      {"HardSwish", {}}, {"Tanh", {}},
      {"Exp", {}},       {"Neg", {}},
      {"Abs", {}},       {"Clip", {{"min", attr_float(-0.5f)}, {"max", attr_float(0.25f)}}}};
  for (const auto& op : ops) {
    const Shape x = {random.integer(1, 3), random.integer(1, 8), random.integer(1, 9)};
    expect_gpu_matches_cpu_in_both_precisions(
        op.first, op.first, {real_tensor("x", x, random.values(x, -4.0f, 4.0f))}, op.second);
  }
  const Shape x = {2, 3, 5};
  expect_gpu_matches_cpu_in_both_precisions(
      "Sqrt", "Sqrt", {real_tensor("x", x, random.values(x, 0.1f, 4.0f))}, {});
  expect_gpu_matches_cpu_in_both_precisions(
      "Reciprocal", "Reciprocal", {real_tensor("x", x, random.values(x, 0.5f, 4.0f))}, {});
  expect_gpu_matches_cpu_in_both_precisions(
      "Clip with constant bound inputs", "Clip",
      {real_tensor("x", x, random.values(x)), real_tensor("low", {}, {-0.25f}, true),
       real_tensor("high", {}, {0.5f}, true)},
      {});
  const Shape c = {1, 3, 4, 4};
  expect_gpu_matches_cpu_in_both_precisions(
      "BatchNormalization", "BatchNormalization",
      {real_tensor("x", c, random.values(c)), real_tensor("scale", {3}, random.values({3}), true),
       real_tensor("bias", {3}, random.values({3}), true),
       real_tensor("mean", {3}, random.values({3}), true),
       real_tensor("variance", {3}, random.values({3}, 0.5f, 2.0f), true)},
      {});
}

void test_pooling(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(15);
  int index = 0;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (int i = 0; i < kCasesPerOp; ++i) {
      const int64_t kernel = random.integer(1, 3), stride = random.integer(1, 2);
      const int64_t pad = kernel > 1 ? random.integer(0, 1) : 0;
      const Shape x = {random.integer(1, 2), random.integer(1, 4), random.integer(kernel, 12),
                       random.integer(kernel, 12)};
      Attributes attributes = {{"kernel_shape", attr_ints({kernel, kernel})},
                               {"strides", attr_ints({stride, stride})},
                               {"pads", attr_ints({pad, pad, pad, pad})},
                               {"ceil_mode", attr_int(random.coin())}};
      if (std::string(op) == "AveragePool") {
        attributes["count_include_pad"] = attr_int(random.coin());
      }
      expect_gpu_matches_cpu_in_both_precisions(
          case_name(op, index++), op, {real_tensor("x", x, random.values(x))}, attributes);
    }
  }
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    const Shape x = {2, random.integer(1, 5), random.integer(1, 9), random.integer(1, 9)};
    expect_gpu_matches_cpu_in_both_precisions(op, op, {real_tensor("x", x, random.values(x))}, {});
  }
}

void test_softmax_and_reduce(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(16);
  for (int i = 0; i < kCasesPerOp; ++i) {
    const Shape x = {random.integer(1, 3), random.integer(1, 6), random.integer(1, 10)};
    expect_gpu_matches_cpu_in_both_precisions(case_name("Softmax", i), "Softmax",
                                              {real_tensor("x", x, random.values(x, -3.0f, 3.0f))},
                                              {{"axis", attr_int(random.integer(-3, 2))}});
  }
  int index = 0;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    for (int i = 0; i < kCasesPerOp; ++i) {
      const Shape x = {random.integer(1, 3), random.integer(1, 5), random.integer(1, 6),
                       random.integer(1, 4)};
      std::vector<int64_t> axes;
      for (int64_t axis = 0; axis < 4; ++axis) {
        if (random.coin()) axes.push_back(axis - (random.coin() ? 4 : 0));
      }
      if (axes.empty()) axes.push_back(1);
      // ReduceSum takes its axes as an input from opset 13; the others as an attribute here.
      std::vector<StoredTensor> inputs = {real_tensor("x", x, random.values(x))};
      Attributes attributes = {{"keepdims", attr_int(random.coin())}};
      if (std::string(op) == "ReduceSum") {
        inputs.push_back(int64_tensor("axes", {static_cast<int64_t>(axes.size())}, axes));
      } else {
        attributes["axes"] = attr_ints(axes);
      }
      expect_gpu_matches_cpu_in_both_precisions(case_name(op, index++), op, inputs, attributes);
    }
  }
}

void test_resize(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(17);
  const char* transforms[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  for (int i = 0; i < 2 * kCasesPerOp; ++i) {
    const Shape x = {1, random.integer(1, 3), random.integer(1, 7), random.integer(1, 7)};
    // align_corners with a scale that does not give a whole output length is a variant the
    // GPU leaves to the CPU's general resampler: use whole scales for it.
    const float step = std::string(transforms[i % 4]) == "align_corners" ? 1.0f : 0.5f;
    const float scale_h = static_cast<float>(random.integer(1, 8)) * step;
    const float scale_w = static_cast<float>(random.integer(1, 8)) * step;
    const bool linear = i % 2 == 1;
    Attributes attributes = {{"mode", attr_string(linear ? "linear" : "nearest")},
                             {"coordinate_transformation_mode", attr_string(transforms[i % 4])}};
    if (!linear)
      attributes["nearest_mode"] = attr_string(random.coin() ? "floor" : "round_prefer_ceil");
    expect_gpu_matches_cpu_in_both_precisions(
        case_name("Resize", i), "Resize",
        {real_tensor("x", x, random.values(x)), StoredTensor{},
         real_tensor("keep_scales", {4}, {1.0f, 1.0f, scale_h, scale_w}, true)},
        attributes);
  }
}

void test_data_movement(void**) {
  SKIP_WITHOUT_GPU();
  Randomizer random(18);
  for (int i = 0; i < kCasesPerOp; ++i) {
    const int64_t axis = random.integer(0, 2);
    std::vector<StoredTensor> inputs;
    const int count = static_cast<int>(random.integer(1, 3));
    Shape base = {random.integer(1, 3), random.integer(1, 4), random.integer(1, 5)};
    for (int input = 0; input < count; ++input) {
      Shape shape = base;
      shape[static_cast<size_t>(axis)] = random.integer(1, 4);
      inputs.push_back(real_tensor(str_cat("x", input), shape, random.values(shape)));
    }
    expect_gpu_matches_cpu_in_both_precisions(case_name("Concat", i), "Concat", inputs,
                                              {{"axis", attr_int(axis)}});
  }
  const std::vector<std::vector<int64_t>> perms = {
      {1, 0, 2}, {2, 0, 1}, {0, 2, 3, 1}, {3, 2, 1, 0}};
  for (size_t i = 0; i < perms.size(); ++i) {
    Shape x;
    for (size_t d = 0; d < perms[i].size(); ++d) x.push_back(random.integer(1, 5));
    expect_gpu_matches_cpu_in_both_precisions(case_name("Transpose", static_cast<int>(i)),
                                              "Transpose", {real_tensor("x", x, random.values(x))},
                                              {{"perm", attr_ints(perms[i])}});
  }
  const Shape x = {2, 6, 5};
  expect_gpu_matches_cpu_in_both_precisions(
      "Slice with steps", "Slice",
      {real_tensor("x", x, random.values(x)), int64_tensor("starts", {2}, {1, -1}),
       int64_tensor("ends", {2}, {6, 0}), int64_tensor("axes", {2}, {1, 2}),
       int64_tensor("steps", {2}, {2, -2})},
      {});
  expect_gpu_matches_cpu_in_both_precisions(
      "Reshape", "Reshape",
      {real_tensor("x", x, random.values(x)), int64_tensor("shape", {2}, {6, -1})}, {});
}

// Tensors with no elements: no launch, no transfer, and the same (empty) result as the CPU.
void test_empty_tensors(void**) {
  SKIP_WITHOUT_GPU();
  const Shape empty = {0, 3};
  expect_gpu_matches_cpu_in_both_precisions(
      "empty Add", "Add", {real_tensor("a", empty, {}), real_tensor("b", {3}, {1, 2, 3}, true)},
      {});
  expect_gpu_matches_cpu_in_both_precisions("empty Relu", "Relu", {real_tensor("x", empty, {})},
                                            {});
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv),
      cmocka_unit_test(test_pointwise_conv),
      cmocka_unit_test(test_gemm_and_matmul),
      cmocka_unit_test(test_binary_broadcast),
      cmocka_unit_test(test_activations),
      cmocka_unit_test(test_pooling),
      cmocka_unit_test(test_softmax_and_reduce),
      cmocka_unit_test(test_resize),
      cmocka_unit_test(test_data_movement),
      cmocka_unit_test(test_empty_tensors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
