// Resize: nearest (every nearest_mode, N-D) and linear (last two dimensions) with every
// common coordinate_transformation_mode, scales or sizes, the Resize-10 form, the opset-18
// axes attribute; the general resampler (cubic, antialias, exclude_outside, tf_crop_and_resize
// with extrapolation, half_pixel_symmetric, keep_aspect_ratio_policy, linear over leading
// dimensions); and validation errors.
// Expected values are hand-checked (several are the ONNX operator documentation's examples) or
// come from the ONNX formulas written out here.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/op_test_harness.h"
#include "reference/resize.h"

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

  // Resize-11: (X, roi, scales); roi matters only to tf_crop_and_resize.
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

// --- the general separable resampler ------------------------------------------------------------

// Keys' cubic convolution weight of a tap at `distance` from the sampling point.
double keys_cubic(double distance, double a) {
  const double d = std::fabs(distance);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

// Bicubic half_pixel resize written per output from distances: the four taps around the
// sampling point, clamped into the input (edge padding).
std::vector<float> bicubic(const std::vector<float>& x, int64_t h, int64_t w, int64_t oh,
                           int64_t ow, double a) {
  std::vector<float> out;
  for (int64_t r = 0; r < oh; ++r) {
    const double sy = (r + 0.5) * double(h) / double(oh) - 0.5;
    for (int64_t c = 0; c < ow; ++c) {
      const double sx = (c + 0.5) * double(w) / double(ow) - 0.5;
      double sum = 0;
      for (int64_t i = int64_t(std::floor(sy)) - 1; i <= int64_t(std::floor(sy)) + 2; ++i) {
        for (int64_t j = int64_t(std::floor(sx)) - 1; j <= int64_t(std::floor(sx)) + 2; ++j) {
          const int64_t ci = std::min(std::max(i, int64_t{0}), h - 1);
          const int64_t cj = std::min(std::max(j, int64_t{0}), w - 1);
          sum += keys_cubic(sy - double(i), a) * keys_cubic(sx - double(j), a) * x[ci * w + cj];
        }
      }
      out.push_back(float(sum));
    }
  }
  return out;
}

void test_cubic(void**) {
  // The ONNX documentation's resize_upsample_scales_cubic, first row.
  NodeRun run = run_ok(with_scales({1, 1, 4, 4}, iota_values(16, 1), {1, 1, 2, 2},
                                   {{"mode", attr_string("cubic")}}));
  expect_shape(run.output_shapes[0], {1, 1, 8, 8});
  const std::vector<float> first_row(run.outputs[0].begin(), run.outputs[0].begin() + 8);
  expect_close(first_row,
               {0.47265625f, 0.76953125f, 1.24609375f, 1.875f, 2.28125f, 2.91015625f, 3.38671875f,
                3.68359375f},
               1e-6);
  // Up in one axis, down in the other, another coefficient; and fp16 / int8 agree.
  const std::vector<float> x = random_values(5 * 7, -2, 2, 31);
  NodeSpec spec =
      with_sizes({1, 1, 5, 7}, x, {1, 1, 9, 3},
                 {{"mode", attr_string("cubic")}, {"cubic_coeff_a", attr_float(-0.5f)}});
  expect_close(run_ok(spec).outputs[0], bicubic(x, 5, 7, 9, 3, -0.5), 1e-5);
  check_precisions_agree(spec, 1e-2, 0.03);
  // exclude_outside: taps beyond the border get weight 0 and the rest are renormalised, so a
  // constant input stays constant and a ramp's border output differs from edge padding.
  NodeSpec excluded =
      with_scales({1, 4}, {0, 1, 2, 3}, {1, 2},
                  {{"mode", attr_string("cubic")}, {"exclude_outside", attr_int(1)}});
  const std::vector<float> values = run_ok(excluded).outputs[0];
  // Output 0 samples at -0.25: taps -2..1, of which 0 and 1 remain, weights k(0.25), k(1.25).
  const double w0 = keys_cubic(0.25, -0.75), w1 = keys_cubic(1.25, -0.75);
  expect_close({values[0]}, {float(w1 / (w0 + w1))}, 1e-6);
}

void test_linear_antialias_and_symmetric(void**) {
  // Downsampling [1, 2, 3, 4] by 0.5 with a triangle filter 4 taps wide: sampling points 0.5 and
  // 2.5, weights 1/8, 3/8, 3/8, 1/8 over taps -1..2 (edge padded) and 1..4.
  NodeSpec spec = with_scales({1, 4}, {1, 2, 3, 4}, {1, 0.5f},
                              {{"mode", attr_string("linear")}, {"antialias", attr_int(1)}});
  expect_close(run_ok(spec).outputs[0], {1.625f, 3.375f}, 1e-6);
  // Upsampling is unaffected by antialias.
  spec = with_scales({1, 3}, {0, 3, 6}, {1, 2},
                     {{"mode", attr_string("linear")}, {"antialias", attr_int(1)}});
  expect_close(run_ok(spec).outputs[0], {0, 0.75f, 2.25f, 3.75f, 5.25f, 6}, 1e-6);
  // half_pixel_symmetric (the documentation's example): 4 -> floor(2.4) = 2 outputs centred.
  spec = with_scales({1, 1, 1, 4}, {1, 2, 3, 4}, {1, 1, 1, 0.6f},
                     modes("linear", "half_pixel_symmetric"));
  expect_close(run_ok(spec).outputs[0], {1.6666666f, 3.3333333f}, 1e-5);
  // align_corners divides by scale x length - 1 (2.4 - 1), not by the output length - 1.
  spec = with_scales({1, 1, 2, 4}, iota_values(8, 1), {1, 1, 0.6f, 0.6f},
                     modes("linear", "align_corners"));
  expect_close(run_ok(spec).outputs[0], {1, 3.142857f}, 1e-5);
}

void test_linear_leading_dimensions(void**) {
  // x[a][0][c] = 10 a + c is linear, so a separable linear resize of both axes gives the
  // resampled coordinates: half_pixel with edge clamping.
  std::vector<float> x;
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 4; ++c) x.push_back(float(10 * a + c));
  }
  NodeRun run = run_ok(with_scales({2, 1, 4}, x, {2, 1, 2}, {{"mode", attr_string("linear")}}));
  expect_shape(run.output_shapes[0], {4, 1, 8});
  const float rows[] = {0, 0.25f, 0.75f, 1};
  const float columns[] = {0, 0.25f, 0.75f, 1.25f, 1.75f, 2.25f, 2.75f, 3};
  std::vector<float> expected;
  for (float row : rows) {
    for (float column : columns) expected.push_back(10 * row + column);
  }
  expect_close(run.outputs[0], expected, 1e-5);
}

void test_tf_crop_and_resize(void**) {
  // The documentation's example: x = 1 + 4 r + c on 4x4, roi rows [0.4, 0.6], columns
  // [0.6, 0.8], 3x3 output: rows sample 1.2, 1.5, 1.8 and columns 1.8, 2.1, 2.4.
  auto crop = [](std::vector<float> roi, Attributes attributes) {
    return node_spec(
        "Resize",
        {input("x", {1, 1, 4, 4}, iota_values(16, 1)), float_operand("roi", std::move(roi)),
         float_operand("scales", {}), int64_constant("sizes", {4}, {1, 1, 3, 3})},
        std::move(attributes));
  };
  NodeRun run =
      run_ok(crop({0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}, modes("linear", "tf_crop_and_resize")));
  expect_close(run.outputs[0], {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f}, 1e-5);
  // Beyond the input: rows sample 1.2, 2.4, 3.6 and columns 1.8, 3.45, 5.1; anything past 3
  // is the extrapolation value.
  Attributes attributes = modes("linear", "tf_crop_and_resize");
  attributes["extrapolation_value"] = attr_float(-1);
  run = run_ok(crop({0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}, attributes));
  expect_close(run.outputs[0], {7.6f, -1, -1, 12.4f, -1, -1, -1, -1, -1}, 1e-5);
}

void test_keep_aspect_ratio(void**) {
  // sizes 7x8 of a 2x2 input: scales 3.5 and 4; not_larger keeps 3.5 for both (7x7),
  // not_smaller 4 (8x8).
  for (const auto& [policy, side] : {std::pair<const char*, int64_t>{"not_larger", 7},
                                     std::pair<const char*, int64_t>{"not_smaller", 8}}) {
    NodeRun run = run_ok(with_sizes(
        {1, 1, 2, 2}, {1, 2, 3, 4}, {7, 8},
        {{"axes", attr_ints({2, 3})}, {"keep_aspect_ratio_policy", attr_string(policy)}}));
    expect_shape(run.output_shapes[0], {1, 1, side, side});
    // Nearest, half_pixel: the top-left and bottom-right quadrants hold 1 and 4.
    expect_close({run.outputs[0].front(), run.outputs[0].back()}, {1, 4}, 0);
  }
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

  expect_error(with_scales({1, 4}, x, {1, 2}, {{"antialias", attr_int(1)}}), invalid,
               "antialias applies to linear and cubic modes, not nearest");
  expect_error(with_scales({1, 4}, x, {1, 2}, modes("linear", "tf_crop_and_resize")), invalid,
               "tf_crop_and_resize needs the roi input");
  NodeSpec short_roi = with_scales({1, 4}, x, {1, 2}, modes("linear", "tf_crop_and_resize"));
  short_roi.inputs[1] = float_operand("roi", {0, 0, 1});
  expect_error(short_roi, invalid, "roi has 3 values, expected 4");
  expect_error(with_sizes({1, 4}, x, {2, 8}, {{"keep_aspect_ratio_policy", attr_string("fit")}}),
               invalid,
               "keep_aspect_ratio_policy 'fit' is not one of stretch, not_larger, not_smaller");
  expect_error(with_scales({1, 1, 1, 1, 1, 1, 1, 1, 4}, x, {1, 1, 1, 1, 1, 1, 1, 1, 2}), invalid,
               "input rank 9 is not in 1..8");
}

// int8 nearest Resize gathers codes (through a code table when the output has its own
// quantization); it must give the float domain's bytes: decode, the reference nearest, encode.
void test_int8_nearest_gathers_codes(void**) {
  const Shape shape = {1, 3, 5, 7};
  std::vector<int8_t> codes(105);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<int8_t>((i * 37) % 256 - 128);
  graph::Quantization in_q{{0.05f}, {-3}};
  const graph::Quantization outs[] = {in_q, {{0.07f}, {5}}, {{0.01f}, {-100}}};
  // {1, 1, 2, 2} with the input's quantization takes the doubling copy; the others the gather
  // with and without the table.
  const std::vector<float> scale_sets[] = {
      {1, 1, 2, 1.5f}, {1, 1, 0.6f, 2.3f}, {1, 2, 1, 1}, {1, 1, 2, 2}};
  for (const std::vector<float>& scales : scale_sets) {
    for (const graph::Quantization& out_q : outs) {
      StoredRun run =
          run_stored_ok("Resize",
                        {stored("x", DataType::kInt8, shape, codes, in_q), StoredTensor{},
                         stored("scales", DataType::kFloat32, {4}, scales, {}, true)},
                        {{"mode", attr_string("nearest")}}, {{DataType::kInt8, out_q}});
      kernels::reference::ResizeParams params;
      params.input_shape = shape;
      params.output_shape = run.output_shapes[0];
      params.scales = scales;
      std::vector<float> decoded(codes.size());
      for (size_t i = 0; i < codes.size(); ++i) {
        decoded[i] = static_cast<float>(codes[i] - in_q.zero_points[0]) * in_q.scales[0];
      }
      std::vector<float> resized(run.outputs[0].size());
      kernels::reference::resize_nearest(params, decoded.data(), resized.data());
      const std::vector<int8_t> actual = from_bytes<int8_t>(run.outputs[0]);
      for (size_t i = 0; i < resized.size(); ++i) {
        const int32_t expected =
            std::clamp(static_cast<int32_t>(std::nearbyint(resized[i] / out_q.scales[0])) +
                           out_q.zero_points[0],
                       -128, 127);
        if (actual[i] != expected) {
          fail_msg("int8 Resize scales (%g, %g), output scale %g: element %zu = %d, expected %d",
                   double{scales[2]}, double{scales[3]}, double{out_q.scales[0]}, i, int{actual[i]},
                   expected);
        }
      }
    }
  }
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
      cmocka_unit_test(test_cubic),
      cmocka_unit_test(test_linear_antialias_and_symmetric),
      cmocka_unit_test(test_linear_leading_dimensions),
      cmocka_unit_test(test_tf_crop_and_resize),
      cmocka_unit_test(test_keep_aspect_ratio),
      cmocka_unit_test(test_errors_and_refusals),
      cmocka_unit_test(test_int8_nearest_gathers_codes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
