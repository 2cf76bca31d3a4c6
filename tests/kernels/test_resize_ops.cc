// Resize: nearest (every nearest_mode, N-D) and linear (last two dimensions) with every
// supported coordinate_transformation_mode, scales or sizes, the Resize-10 form, the opset-18
// axes attribute, validation errors and the refusals of what the kernels do not support.
// Expected values are hand-checked (several are the ONNX operator documentation's examples) or
// come from the ONNX formulas written out here.
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

TensorSpec float_operand(std::string name, std::vector<float> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  TensorSpec spec = constant(std::move(name), {count}, std::move(values));
  spec.role = QuantRole::kKeepFloat;  // scales stay float32 in every precision
  return spec;
}

// Resize-13 form: X, roi (omitted), scales, sizes.
NodeSpec with_scales(Shape shape, std::vector<float> x, std::vector<float> scales,
                     Attributes attributes = {}) {
  return node_spec("Resize",
                   {input("x", std::move(shape), std::move(x)), omitted(),
                    float_operand("scales", std::move(scales))},
                   std::move(attributes));
}

NodeSpec with_sizes(Shape shape, std::vector<float> x, std::vector<int64_t> sizes,
                    Attributes attributes = {}) {
  const int64_t count = static_cast<int64_t>(sizes.size());
  return node_spec("Resize",
                   {input("x", std::move(shape), std::move(x)), omitted(), omitted(),
                    int64_constant("sizes", {count}, std::move(sizes))},
                   std::move(attributes));
}

Attributes modes(const char* mode, const char* transform, const char* nearest = nullptr) {
  Attributes attributes = {{"mode", attr_string(mode)},
                           {"coordinate_transformation_mode", attr_string(transform)}};
  if (nearest) attributes["nearest_mode"] = attr_string(nearest);
  return attributes;
}

void test_nearest_documentation_examples(void**) {
  NodeRun run = run_ok(with_scales({1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 2, 3}));
  expect_shape(run.output_shapes[0], {1, 1, 4, 6});
  expect_close(run.outputs[0],
               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0);
  run = run_ok(with_scales({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 0.6f, 0.6f}));
  expect_shape(run.output_shapes[0], {1, 1, 1, 2});
  expect_close(run.outputs[0], {1, 3}, 0);
  run = run_ok(with_sizes({1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 7, 8}));
  expect_shape(run.output_shapes[0], {1, 1, 7, 8});
  // Rows: (y + 0.5) * 2/7 - 0.5 rounds to 0 for y <= 3 and to 1 from y = 4.
  for (int64_t y = 0; y < 7; ++y) {
    for (int64_t x = 0; x < 8; ++x) {
      const float expected = (y < 4 ? 1.0f : 3.0f) + (x < 4 ? 0.0f : 1.0f);
      if (run.outputs[0][static_cast<size_t>(y * 8 + x)] != expected)
        fail_msg("sizes case (%lld, %lld)", (long long)y, (long long)x);
    }
  }
}

void test_nearest_modes(void**) {
  // 1-D [10 20 30] doubled with asymmetric coordinates: x / 2 = 0, .5, 1, 1.5, 2, 2.5.
  struct Case {
    const char* nearest;
    std::vector<float> expected;
  };
  for (const Case& c :
       {Case{"floor", {10, 10, 20, 20, 30, 30}}, Case{"ceil", {10, 20, 20, 30, 30, 30}},
        Case{"round_prefer_floor", {10, 10, 20, 20, 30, 30}},
        Case{"round_prefer_ceil", {10, 20, 20, 30, 30, 30}}}) {
    expect_close(
        run_ok(with_scales({3}, {10, 20, 30}, {2}, modes("nearest", "asymmetric", c.nearest)))
            .outputs[0],
        c.expected, 0);
  }
  // align_corners: x * 2 / 5 = 0, .4, .8, 1.2, 1.6, 2.
  expect_close(
      run_ok(with_sizes({3}, {10, 20, 30}, {6}, modes("nearest", "align_corners"))).outputs[0],
      {10, 10, 20, 20, 30, 30}, 0);
  // half_pixel, round_prefer_ceil: (x + .5) / 2 - .5 = -.25, .25, .75, 1.25, 1.75, 2.25.
  expect_close(run_ok(with_scales({3}, {10, 20, 30}, {2},
                                  modes("nearest", "half_pixel", "round_prefer_ceil")))
                   .outputs[0],
               {10, 10, 20, 20, 30, 30}, 0);
  // pytorch_half_pixel to a single element reads index 0; half_pixel reads the middle.
  expect_close(
      run_ok(with_sizes({1, 4}, {1, 2, 3, 4}, {1, 1}, modes("nearest", "pytorch_half_pixel")))
          .outputs[0],
      {1}, 0);
  // (0 + .5) * 4 - .5 = 1.5, which round_prefer_floor takes down to index 1.
  expect_close(
      run_ok(with_sizes({1, 4}, {1, 2, 3, 4}, {1, 1}, modes("nearest", "half_pixel"))).outputs[0],
      {2}, 0);
}

void test_nearest_n_dimensional(void**) {
  // Every dimension scales independently; asymmetric + floor makes index = floor(x / scale).
  const Shape shape = {2, 3, 2, 3};
  std::vector<float> x(36);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const std::vector<float> scales = {1.5f, 1, 2, 0.7f};
  NodeRun run = run_ok(with_scales(shape, x, scales, modes("nearest", "asymmetric", "floor")));
  const Shape out = {3, 3, 4, 2};
  expect_shape(run.output_shapes[0], out);
  std::vector<float> expected;
  for (int64_t a = 0; a < out[0]; ++a)
    for (int64_t b = 0; b < out[1]; ++b)
      for (int64_t c = 0; c < out[2]; ++c)
        for (int64_t d = 0; d < out[3]; ++d) {
          const int64_t ia = static_cast<int64_t>(std::floor(a / 1.5f));
          const int64_t ic = c / 2;
          const int64_t id = static_cast<int64_t>(std::floor(d / 0.7f));
          expected.push_back(x[((ia * 3 + b) * 2 + ic) * 3 + id]);
        }
  expect_close(run.outputs[0], expected, 0);
  check_precisions_agree(with_scales(shape, random_values(36, -2, 2, 3), scales), 1e-2, 0.02);
}

void test_linear(void**) {
  NodeRun run =
      run_ok(with_scales({1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 2, 2}, modes("linear", "half_pixel")));
  expect_close(
      run.outputs[0],
      {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4},
      1e-6);
  run = run_ok(
      with_scales({1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 2, 2}, modes("linear", "align_corners")));
  const float third = 1.0f / 3.0f;
  expect_close(run.outputs[0],
               {1, 1 + third, 2 - third, 2, 2 - third, 2, 2 + third, 3 - third, 2 + third,
                3 - third, 3, 3 + third, 3, 3 + third, 4 - third, 4},
               1e-6);
  run = run_ok(with_scales({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 0.6f, 0.6f},
                           modes("linear", "half_pixel")));
  expect_close(run.outputs[0], {2.6666667f, 4.3333333f}, 1e-6);
  // asymmetric: x / 2 = 0, .5, 1, 1.5 -> the last clamps to the edge.
  run = run_ok(with_scales({1, 2}, {10, 20}, {1, 2}, modes("linear", "asymmetric")));
  expect_close(run.outputs[0], {10, 15, 20, 20}, 1e-6);
  // pytorch_half_pixel: (x + .5) / 1.5 - .5 on length 2 -> 3: -1/6, 0.5, 7/6 -> clamps at both
  // ends.
  run = run_ok(
      with_sizes({2, 1, 2}, {10, 20, 30, 40}, {2, 1, 3}, modes("linear", "pytorch_half_pixel")));
  expect_close(run.outputs[0], {10, 15, 20, 30, 35, 40}, 1e-5);
  // 1-D linear.
  run = run_ok(with_scales({2}, {10, 20}, {2}, modes("linear", "asymmetric")));
  expect_close(run.outputs[0], {10, 15, 20, 20}, 1e-6);
}

// Bilinear interpolation written from the ONNX formulas, in double.
std::vector<float> bilinear(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w,
                            int64_t oh, int64_t ow, double sy, double sx, const std::string& mode) {
  auto coordinate = [&](int64_t o, double scale, int64_t in, int64_t out) {
    double c = 0;
    if (mode == "half_pixel") c = (o + 0.5) / scale - 0.5;
    if (mode == "pytorch_half_pixel") c = out > 1 ? (o + 0.5) / scale - 0.5 : 0;
    if (mode == "align_corners") c = out > 1 ? o * double(in - 1) / double(out - 1) : 0;
    if (mode == "asymmetric") c = o / scale;
    return std::min(std::max(c, 0.0), double(in - 1));
  };
  std::vector<float> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const double cy = coordinate(i, sy, h, oh), cx = coordinate(j, sx, w, ow);
        const int64_t y0 = int64_t(std::floor(cy)), x0 = int64_t(std::floor(cx));
        const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
        const double fy = cy - y0, fx = cx - x0;
        auto at = [&](int64_t y, int64_t xx) { return double(x[(p * h + y) * w + xx]); };
        out.push_back(float(at(y0, x0) * (1 - fy) * (1 - fx) + at(y0, x1) * (1 - fy) * fx +
                            at(y1, x0) * fy * (1 - fx) + at(y1, x1) * fy * fx));
      }
  return out;
}

void test_linear_variants(void**) {
  uint32_t seed = 10;
  for (const char* mode : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    struct Case {
      int64_t h, w, oh, ow;
    };
    for (const Case& c :
         {Case{5, 7, 11, 3}, Case{4, 4, 8, 8}, Case{9, 3, 2, 1}, Case{1, 6, 3, 13}}) {
      const std::vector<float> x = random_values(2 * 3 * c.h * c.w, -2, 2, seed++);
      NodeSpec spec = with_sizes({2, 3, c.h, c.w}, x, {2, 3, c.oh, c.ow}, modes("linear", mode));
      NodeRun run = run_ok(spec);
      expect_shape(run.output_shapes[0], {2, 3, c.oh, c.ow});
      expect_close(run.outputs[0],
                   bilinear(x, 6, c.h, c.w, c.oh, c.ow, float(c.oh) / float(c.h),
                            float(c.ow) / float(c.w), mode),
                   1e-5);
      check_precisions_agree(spec, 1e-2, 0.02);
    }
  }
}

void test_forms(void**) {
  // Resize-10: (X, scales), asymmetric coordinates with floor.
  NodeSpec spec =
      node_spec("Resize", {input("x", {1, 3}, {10, 20, 30}), float_operand("scales", {1, 1.6f})});
  NodeRun run = run_ok(spec);
  // floor(3 * 1.6) = 4 outputs at x / 1.6 = 0, .625, 1.25, 1.875.
  expect_close(run.outputs[0], {10, 10, 20, 20}, 0);
  spec.attributes = {{"mode", attr_string("linear")}};
  expect_close(run_ok(spec).outputs[0], {10, 16.25f, 22.5f, 28.75f}, 1e-5);

  // Resize-11: (X, roi, scales); roi is ignored.
  spec.inputs = {input("x", {1, 3}, {10, 20, 30}), float_operand("roi", {0, 0, 1, 1}),
                 float_operand("scales", {1, 2})};
  spec.attributes = modes("nearest", "asymmetric", "floor");
  expect_close(run_ok(spec).outputs[0], {10, 10, 20, 20, 30, 30}, 0);
  // An empty scales operand with sizes (opset 13).
  spec.inputs = {input("x", {1, 3}, {10, 20, 30}), omitted(), float_operand("scales", {}),
                 int64_constant("sizes", {2}, {1, 6})};
  expect_close(run_ok(spec).outputs[0], {10, 10, 20, 20, 30, 30}, 0);
  // axes (opset 18): sizes for the listed axes only, negative axes allowed.
  spec.inputs = {input("x", {1, 3}, {10, 20, 30}), omitted(), omitted(),
                 int64_constant("sizes", {1}, {6})};
  spec.attributes["axes"] = attr_ints({-1});
  NodeRun axes_run = run_ok(spec);
  expect_shape(axes_run.output_shapes[0], {1, 6});
  expect_close(axes_run.outputs[0], {10, 10, 20, 20, 30, 30}, 0);
}

void test_errors_and_refusals(void**) {
  const StatusCode invalid = StatusCode::kInvalidModel;
  const std::vector<float> x(4);
  NodeSpec both = with_scales({1, 4}, x, {1, 2});
  both.inputs.push_back(int64_constant("sizes", {2}, {1, 8}));
  expect_error(both, invalid, "exactly one of scales and sizes must be given (got both)");
  NodeSpec neither = with_scales({1, 4}, x, {});
  expect_error(neither, invalid, "(got neither)");
  expect_error(with_scales({1, 4}, x, {2}), invalid, "scales has 1 values, expected 2");
  expect_error(with_scales({1, 4}, x, {1, -2}), invalid, "scale -2 for axis 1 must be positive");
  expect_error(with_scales({1, 4}, x, {1, 0.2f}), invalid, "makes axis 1 (length 4) empty");
  expect_error(with_sizes({1, 4}, x, {1, 0}), invalid, "size 0 for axis 1 must be >= 1");
  expect_error(with_sizes({1, 4}, x, {8}), invalid, "sizes has 1 values, expected 2");
  NodeSpec dynamic = with_scales({1, 4}, x, {1, 2});
  dynamic.inputs[2] = input("scales", {2}, {1, 2});
  dynamic.inputs[2].role = QuantRole::kKeepFloat;
  expect_error(dynamic, invalid, "scales ('scales') must be a constant");
  expect_error(with_scales({1, 4}, x, {1, 2}, {{"mode", attr_string("bilinear")}}), invalid,
               "mode 'bilinear' is not one of nearest, linear, cubic");
  expect_error(with_scales({1, 4}, x, {1, 2}, {{"nearest_mode", attr_string("round")}}), invalid,
               "nearest_mode 'round'");
  expect_error(
      with_scales({1, 4}, x, {1, 2}, {{"coordinate_transformation_mode", attr_string("center")}}),
      invalid, "coordinate_transformation_mode 'center' is unknown");
  NodeSpec bad_axes = with_sizes({1, 4}, x, {8}, {{"axes", attr_ints({2})}});
  expect_error(bad_axes, invalid, "axis 2 is out of range for rank 2");

  // Valid ONNX that the kernels do not run: refused with kUnimplemented, naming what.
  const StatusCode refused = StatusCode::kUnimplemented;
  expect_error(with_scales({1, 4}, x, {1, 2}, {{"mode", attr_string("cubic")}}), refused,
               "mode 'cubic' is not supported");
  expect_error(with_scales({1, 4}, x, {1, 2}, modes("nearest", "tf_crop_and_resize")), refused,
               "coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  expect_error(with_scales({1, 4}, x, {1, 2}, {{"antialias", attr_int(1)}}), refused,
               "antialias is not supported");
  expect_error(
      with_sizes({1, 4}, x, {2, 8}, {{"keep_aspect_ratio_policy", attr_string("not_larger")}}),
      refused, "keep_aspect_ratio_policy 'not_larger' is not supported");
  expect_error(
      with_scales({2, 1, 4}, std::vector<float>(8), {2, 1, 2}, {{"mode", attr_string("linear")}}),
      refused, "linear mode resizes only the last two dimensions; axis 0 changes (2 -> 4)");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nearest_documentation_examples),
      cmocka_unit_test(test_nearest_modes),
      cmocka_unit_test(test_nearest_n_dimensional),
      cmocka_unit_test(test_linear),
      cmocka_unit_test(test_linear_variants),
      cmocka_unit_test(test_forms),
      cmocka_unit_test(test_errors_and_refusals),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
