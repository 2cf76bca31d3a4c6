// Normalization family: BatchNormalization (inference), InstanceNormalization,
// LayerNormalization and Softmax (opset-13 single axis and the legacy coerce-to-2D form).
// Expected values are computed here by hand or by direct formulas.
#include <cmath>
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

// Mean and population variance of values[begin + k * stride], k < count.
void moments(const std::vector<float>& values, size_t begin, size_t stride, size_t count,
             double* mean, double* variance) {
  double sum = 0, squares = 0;
  for (size_t k = 0; k < count; ++k) sum += values[begin + k * stride];
  *mean = sum / count;
  for (size_t k = 0; k < count; ++k) {
    squares += (values[begin + k * stride] - *mean) * (values[begin + k * stride] - *mean);
  }
  *variance = squares / count;
}

// --- BatchNormalization -------------------------------------------------------------------

NodeSpec batch_norm_spec(const Shape& shape, std::vector<float> x, size_t channels,
                         std::map<std::string, graph::Attribute> attributes = {}) {
  const auto c = static_cast<int64_t>(channels);
  return node_spec(
      "BatchNormalization",
      {input("x", shape, std::move(x)), constant("scale", {c}, random_values(channels, 0.5f, 2, 1)),
       constant("B", {c}, random_values(channels, -1, 1, 2)),
       constant("mean", {c}, random_values(channels, -1, 1, 3)),
       constant("var", {c}, random_values(channels, 0.2f, 3, 4))},
      attributes);
}

void test_batch_normalization(void**) {
  NodeSpec hand = node_spec(
      "BatchNormalization",
      {input("x", {1, 2, 1, 2}, {1, 2, 3, 4}), constant("scale", {2}, {1, 2}),
       constant("B", {2}, {0, 1}), constant("mean", {2}, {1, 3}), constant("var", {2}, {4, 1})},
      {{"epsilon", attr_float(0)}, {"momentum", attr_float(0.9f)}});
  // Channel 0: (x - 1) / 2; channel 1: 2 (x - 3) + 1.
  expect_close(run_ok(hand).outputs[0], {0, 0.5f, 1, 3}, 1e-7);

  // Ranks 2, 3 and 5 with the default epsilon, against the formula.
  for (const Shape& shape : {Shape{3, 5}, Shape{2, 5, 7}, Shape{1, 5, 2, 3, 2}}) {
    const size_t count = static_cast<size_t>(graph::element_count(shape));
    const size_t inner = count / static_cast<size_t>(shape[0] * shape[1]);
    NodeSpec spec = batch_norm_spec(shape, random_values(count, -3, 3, 9), 5);
    std::vector<float> expected(count);
    for (size_t i = 0; i < count; ++i) {
      const size_t c = (i / inner) % 5;
      const auto& v = spec.inputs;
      expected[i] =
          v[1].values[c] * (v[0].values[i] - v[3].values[c]) / std::sqrt(v[4].values[c] + 1e-5f) +
          v[2].values[c];
    }
    expect_close(run_ok(spec).outputs[0], expected, 1e-5);
    check_precisions_agree(spec, 1e-2, 0.05);
  }
}

void test_batch_normalization_errors(void**) {
  NodeSpec wrong_scale = batch_norm_spec({1, 2, 2}, std::vector<float>(4), 2);
  wrong_scale.inputs[1] = constant("scale", {3}, {1, 1, 1});
  expect_invalid_model(wrong_scale, "scale (input 1) has shape 3, expected 2");
  NodeSpec wrong_var = batch_norm_spec({1, 2, 2}, std::vector<float>(4), 2);
  wrong_var.inputs[4] = constant("var", {2, 1}, {1, 1});
  expect_invalid_model(wrong_var, "var (input 4) has shape 2x1");
  expect_invalid_model(
      batch_norm_spec({1, 2, 2}, std::vector<float>(4), 2, {{"training_mode", attr_int(1)}}),
      "training_mode=1 is not supported");
  expect_invalid_model(
      batch_norm_spec({1, 2, 2}, std::vector<float>(4), 2, {{"spatial", attr_int(0)}}),
      "spatial=0");
  expect_invalid_model(
      batch_norm_spec({1, 2, 2}, std::vector<float>(4), 2, {{"epsilon", attr_float(-1)}}),
      "epsilon -1 is negative");
  NodeSpec rank1 = batch_norm_spec({2}, {1, 2}, 2);
  expect_invalid_model(rank1, "input rank 1 < 2");
  NodeSpec training_outputs = batch_norm_spec({1, 2, 2}, std::vector<float>(4), 2);
  training_outputs.output_count = 3;
  expect_invalid_model(training_outputs, "only output Y is supported");
}

// --- InstanceNormalization ----------------------------------------------------------------

void test_instance_normalization(void**) {
  NodeSpec hand = node_spec(
      "InstanceNormalization",
      {input("x", {1, 1, 4}, {1, 2, 3, 4}), constant("scale", {1}, {2}), constant("B", {1}, {1})},
      {{"epsilon", attr_float(0)}});
  // mean 2.5, variance 1.25.
  const float s = 2.0f / std::sqrt(1.25f);
  expect_close(run_ok(hand).outputs[0], {1 - 1.5f * s, 1 - 0.5f * s, 1 + 0.5f * s, 1 + 1.5f * s},
               1e-6);

  const Shape shape = {2, 3, 5, 7};
  const auto x = random_values(210, -2, 4, 5);
  const auto scale = random_values(3, 0.5f, 2, 6);
  const auto b = random_values(3, -1, 1, 7);
  NodeSpec spec =
      node_spec("InstanceNormalization",
                {input("x", shape, x), constant("scale", {3}, scale), constant("B", {3}, b)},
                {{"epsilon", attr_float(1e-3f)}});
  std::vector<float> expected(210);
  for (size_t plane = 0; plane < 6; ++plane) {
    double mean, variance;
    moments(x, plane * 35, 1, 35, &mean, &variance);
    for (size_t i = 0; i < 35; ++i) {
      expected[plane * 35 + i] = static_cast<float>(scale[plane % 3] * (x[plane * 35 + i] - mean) /
                                                        std::sqrt(variance + 1e-3) +
                                                    b[plane % 3]);
    }
  }
  expect_close(run_ok(spec).outputs[0], expected, 1e-5);
  check_precisions_agree(spec, 1e-2, 0.05);

  NodeSpec rank2 = node_spec("InstanceNormalization",
                             {input("x", {2, 3}, std::vector<float>(6)),
                              constant("scale", {3}, {1, 1, 1}), constant("B", {3}, {0, 0, 0})},
                             {});
  expect_invalid_model(rank2, "input rank 2 < 3");
  NodeSpec wrong_bias = spec;
  wrong_bias.inputs[2] = constant("B", {2}, {0, 0});
  expect_invalid_model(wrong_bias, "B (input 2) has shape 2, expected 3");
}

// --- LayerNormalization -------------------------------------------------------------------

// Independent LayerNormalization over the trailing `row_size` elements; scale and bias are
// already one value per element of the row.
std::vector<float> layer_norm_expected(const std::vector<float>& x, size_t row_size,
                                       const std::vector<float>& scale,
                                       const std::vector<float>& bias, double epsilon,
                                       std::vector<float>* means, std::vector<float>* inverse) {
  std::vector<float> y(x.size());
  for (size_t row = 0; row * row_size < x.size(); ++row) {
    double mean, variance;
    moments(x, row * row_size, 1, row_size, &mean, &variance);
    const double inv = 1 / std::sqrt(variance + epsilon);
    for (size_t j = 0; j < row_size; ++j) {
      y[row * row_size + j] = static_cast<float>((x[row * row_size + j] - mean) * inv * scale[j] +
                                                 (bias.empty() ? 0.0 : bias[j]));
    }
    means->push_back(static_cast<float>(mean));
    inverse->push_back(static_cast<float>(inv));
  }
  return y;
}

void test_layer_normalization(void**) {
  // Rows {1,2,3} and {2,4,6}: both normalize to -sqrt(1.5), 0, sqrt(1.5).
  NodeSpec hand =
      node_spec("LayerNormalization",
                {input("x", {2, 3}, {1, 2, 3, 2, 4, 6}), constant("scale", {3}, {1, 1, 1})},
                {{"epsilon", attr_float(0)}});
  const float r = std::sqrt(1.5f);
  expect_close(run_ok(hand).outputs[0], {-r, 0, r, -r, 0, r}, 1e-6);

  // axis 1 of 2x3x4: rows of 12; Scale given as [4] broadcasts over the normalized 3x4.
  const auto x = random_values(24, -3, 3, 8);
  const auto scale4 = random_values(4, 0.5f, 2, 9);
  const auto bias12 = random_values(12, -1, 1, 10);
  std::vector<float> scale12;
  for (int i = 0; i < 3; ++i) scale12.insert(scale12.end(), scale4.begin(), scale4.end());
  NodeSpec spec = node_spec(
      "LayerNormalization",
      {input("x", {2, 3, 4}, x), constant("scale", {4}, scale4), constant("B", {3, 4}, bias12)},
      {{"axis", attr_int(1)}});
  spec.output_count = 3;
  std::vector<float> means, inverse;
  const auto expected = layer_norm_expected(x, 12, scale12, bias12, 1e-5, &means, &inverse);
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {2, 3, 4});
  expect_shape(run.output_shapes[1], {2, 1, 1});
  expect_shape(run.output_shapes[2], {2, 1, 1});
  expect_close(run.outputs[0], expected, 1e-5);
  expect_close(run.outputs[1], means, 1e-6);
  expect_close(run.outputs[2], inverse, 1e-5);

  // Default axis -1, no bias, odd row length.
  const auto x2 = random_values(3 * 13, -2, 2, 11);
  const auto scale13 = random_values(13, 0.5f, 2, 12);
  NodeSpec last = node_spec("LayerNormalization",
                            {input("x", {3, 13}, x2), constant("scale", {13}, scale13)}, {});
  std::vector<float> unused_means, unused_inverse;
  expect_close(run_ok(last).outputs[0],
               layer_norm_expected(x2, 13, scale13, {}, 1e-5, &unused_means, &unused_inverse),
               1e-5);
  check_precisions_agree(last, 1e-2, 0.05);
  spec.output_count = 1;
  check_precisions_agree(spec, 1e-2, 0.05);
}

void test_layer_normalization_errors(void**) {
  NodeSpec bad_axis =
      node_spec("LayerNormalization",
                {input("x", {2, 3}, std::vector<float>(6)), constant("scale", {3}, {1, 1, 1})},
                {{"axis", attr_int(2)}});
  expect_invalid_model(bad_axis, "axis 2 is out of range for rank 2");
  NodeSpec bad_scale =
      node_spec("LayerNormalization",
                {input("x", {2, 3}, std::vector<float>(6)), constant("scale", {2}, {1, 1})}, {});
  expect_invalid_model(bad_scale,
                       "Scale (input 1) shape 2 does not broadcast to the normalized shape 3");
  NodeSpec bad_bias =
      node_spec("LayerNormalization",
                {input("x", {2, 3}, std::vector<float>(6)), constant("scale", {3}, {1, 1, 1}),
                 constant("B", {2, 3}, std::vector<float>(6))},
                {{"axis", attr_int(1)}});
  expect_invalid_model(bad_bias, "B (input 2) shape 2x3 does not broadcast");
}

// --- Softmax ------------------------------------------------------------------------------

// Softmax of `count` values at values[begin + k * stride].
void softmax_expected(const std::vector<float>& x, size_t begin, size_t stride, size_t count,
                      std::vector<float>* y) {
  double largest = -INFINITY, sum = 0;
  for (size_t k = 0; k < count; ++k) largest = std::fmax(largest, x[begin + k * stride]);
  for (size_t k = 0; k < count; ++k) sum += std::exp(x[begin + k * stride] - largest);
  for (size_t k = 0; k < count; ++k) {
    (*y)[begin + k * stride] = static_cast<float>(std::exp(x[begin + k * stride] - largest) / sum);
  }
}

void test_softmax(void**) {
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  const float sum = static_cast<float>(e1 + e2 + e3);
  NodeSpec hand = node_spec("Softmax", {input("x", {1, 3}, {1, 2, 3})}, {});
  expect_close(
      run_ok(hand).outputs[0],
      {static_cast<float>(e1) / sum, static_cast<float>(e2) / sum, static_cast<float>(e3) / sum},
      1e-7);
  NodeSpec huge = node_spec("Softmax", {input("x", {3}, {1000, 1000, -INFINITY})}, {});
  expect_close(run_ok(huge).outputs[0], {0.5f, 0.5f, 0}, 1e-7);

  const auto x = random_values(2 * 3 * 5, -4, 4, 13);
  // Opset 13 on axis 1: each of the 2 x 5 columns over 3 channels.
  std::vector<float> axis1(30);
  for (size_t n = 0; n < 2; ++n) {
    for (size_t i = 0; i < 5; ++i) softmax_expected(x, n * 15 + i, 5, 3, &axis1);
  }
  NodeSpec single = node_spec("Softmax", {input("x", {2, 3, 5}, x)}, {{"axis", attr_int(1)}});
  expect_close(run_ok(single).outputs[0], axis1, 1e-6);
  // Default axis is -1: rows of 5.
  std::vector<float> last(30);
  for (size_t row = 0; row < 6; ++row) softmax_expected(x, row * 5, 1, 5, &last);
  expect_close(run_ok(node_spec("Softmax", {input("x", {2, 3, 5}, x)}, {})).outputs[0], last, 1e-6);
  NodeSpec negative = node_spec("Softmax", {input("x", {2, 3, 5}, x)}, {{"axis", attr_int(-2)}});
  expect_close(run_ok(negative).outputs[0], axis1, 1e-6);
  // Legacy coerce-to-2D on axis 1: each batch's 15 values together; default axis is then 1.
  std::vector<float> flat(30);
  for (size_t n = 0; n < 2; ++n) softmax_expected(x, n * 15, 1, 15, &flat);
  NodeSpec legacy =
      node_spec("Softmax", {input("x", {2, 3, 5}, x)}, {{"legacy_coerce_2d", attr_int(1)}});
  expect_close(run_ok(legacy).outputs[0], flat, 1e-6);
  legacy.attributes["axis"] = attr_int(0);
  std::vector<float> whole(30);
  softmax_expected(x, 0, 1, 30, &whole);
  expect_close(run_ok(legacy).outputs[0], whole, 1e-6);

  check_precisions_agree(single, 1e-2, 0.05);
  check_precisions_agree(
      node_spec("Softmax", {input("x", {1, 7, 11}, random_values(77, -5, 5, 14))}, {}), 1e-2, 0.05);
}

void test_softmax_errors(void**) {
  expect_invalid_model(
      node_spec("Softmax", {input("x", {2, 3}, std::vector<float>(6))}, {{"axis", attr_int(2)}}),
      "axis 2 is out of range for rank 2");
  expect_invalid_model(node_spec("Softmax", {input("x", {2, 3}, std::vector<float>(6))},
                                 {{"legacy_coerce_2d", attr_int(2)}}),
                       "legacy_coerce_2d must be 0 or 1");
  expect_invalid_model(
      node_spec("Softmax", {input("x", {2, 3}, std::vector<float>(6))}, {{"axis", attr_float(1)}}),
      "attribute 'axis' is float");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_normalization),
      cmocka_unit_test(test_batch_normalization_errors),
      cmocka_unit_test(test_instance_normalization),
      cmocka_unit_test(test_layer_normalization),
      cmocka_unit_test(test_layer_normalization_errors),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_softmax_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
