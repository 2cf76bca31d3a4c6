// Convolution family in float32: Conv, ConvTranspose, Gemm and MatMul against hand-checked
// values and the independent formulations of convolution_formulas.h for every attribute
// variant, their validation errors, and fp16/int8 agreement with float32. The int8 kernels are
// checked bit-exactly in test_convolution_int8_ops.cc.
#include <cmath>
#include <string>

#include "common/op_test_harness.h"
#include "kernels/convolution_formulas.h"

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

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}
std::vector<double> to_double(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

Shape spatial_shape(const Geometry& g, int64_t batch, int64_t channels, int64_t h, int64_t w,
                    bool one_d) {
  return one_d ? Shape{batch, channels, w} : Shape{batch, channels, h, w};
}

// ---- Conv -------------------------------------------------------------------------------

void test_conv_hand_checked(void**) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  NodeSpec spec =
      node_spec("Conv", {input("x", {1, 1, 3, 3}, x), weight("w", {1, 1, 2, 2}, {1, 1, 1, 1})});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 2, 2});
  expect_close(run.outputs[0], {12, 16, 24, 28}, 1e-6);

  spec.inputs.push_back(bias("b", {1}, {0.5f}));
  spec.attributes["pads"] = attr_ints({1, 1, 1, 1});
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 4, 4});
  expect_close(run.outputs[0],
               {1.5f, 3.5f, 5.5f, 3.5f, 5.5f, 12.5f, 16.5f, 9.5f, 11.5f, 24.5f, 28.5f, 15.5f, 7.5f,
                15.5f, 17.5f, 9.5f},
               1e-6);

  // Stride 2 with asymmetric padding: only the bottom/right pad is used.
  spec.attributes["pads"] = attr_ints({0, 0, 1, 1});
  spec.attributes["strides"] = attr_ints({2, 2});
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 2, 2});
  expect_close(run.outputs[0], {12.5f, 9.5f, 15.5f, 9.5f}, 1e-6);
}

struct ConvVariant {
  const char* name;
  Geometry g;
  bool one_d = false;
  bool with_bias = true;
};

std::vector<ConvVariant> conv_variants() {
  std::vector<ConvVariant> variants;
  auto add = [&](const char* name, auto edit, bool one_d = false, bool with_bias = true) {
    Geometry g;
    g.n = 2, g.c = 3, g.h = 7, g.w = 5, g.m = 4, g.kh = 3, g.kw = 3;
    edit(g);
    variants.push_back({name, g, one_d, with_bias});
  };
  add("plain", [](Geometry&) {});
  add(
      "no bias", [](Geometry&) {}, false, false);
  add("strides", [](Geometry& g) { g.stride_h = 2, g.stride_w = 3; });
  add("dilations", [](Geometry& g) { g.dilation_h = 2, g.dilation_w = 2, g.h = 9, g.w = 8; });
  add("asymmetric pads",
      [](Geometry& g) { g.pad_top = 2, g.pad_left = 0, g.pad_bottom = 1, g.pad_right = 3; });
  add("groups", [](Geometry& g) { g.c = 6, g.m = 4, g.group = 2; });
  add("depthwise", [](Geometry& g) {
    g.c = 5, g.m = 5, g.group = 5, g.pad_top = g.pad_left = g.pad_bottom = g.pad_right = 1;
  });
  add("depthwise multiplier", [](Geometry& g) { g.c = 3, g.m = 6, g.group = 3; });
  add("1x1", [](Geometry& g) { g.kh = g.kw = 1, g.c = 13, g.m = 7; });
  add("kernel covers input", [](Geometry& g) { g.kh = 7, g.kw = 5, g.h = 7, g.w = 5; });
  add("primes", [](Geometry& g) {
    g.n = 1, g.c = 5, g.h = 11, g.w = 13, g.m = 3, g.kh = 5, g.kw = 2, g.stride_h = 3,
    g.dilation_w = 3, g.pad_top = 4, g.pad_right = 2;
  });
  add(
      "1-D",
      [](Geometry& g) {
        g.h = 1, g.kh = 1, g.w = 17, g.kw = 4, g.stride_w = 2, g.pad_left = 1, g.pad_right = 2,
        g.dilation_w = 2;
      },
      true);
  add(
      "1-D groups",
      [](Geometry& g) { g.h = 1, g.kh = 1, g.w = 6, g.kw = 3, g.c = 4, g.m = 2, g.group = 2; },
      true);
  return variants;
}

void test_conv_variants(void**) {
  uint32_t seed = 1;
  for (const ConvVariant& variant : conv_variants()) {
    const Geometry& g = variant.g;
    const std::vector<float> x = random_values(g.n * g.c * g.h * g.w, -1, 1, seed++);
    const std::vector<float> w = random_values(g.m * (g.c / g.group) * g.kh * g.kw, -1, 1, seed++);
    const std::vector<float> b =
        variant.with_bias ? random_values(g.m, -1, 1, seed++) : std::vector<float>();
    const Shape w_shape =
        variant.one_d ? Shape{g.m, g.c / g.group, g.kw} : Shape{g.m, g.c / g.group, g.kh, g.kw};
    NodeSpec spec = node_spec("Conv",
                              {input("x", spatial_shape(g, g.n, g.c, g.h, g.w, variant.one_d), x),
                               weight("w", w_shape, w)},
                              window_attributes(g, variant.one_d));
    if (variant.with_bias) spec.inputs.push_back(bias("b", {g.m}, b));
    NodeRun run = run_ok(spec);
    expect_shape(run.output_shapes[0],
                 spatial_shape(g, g.n, g.m, g.conv_out_h(), g.conv_out_w(), variant.one_d));
    expect_close(run.outputs[0], to_float(direct_conv(g, to_double(x), to_double(w), to_double(b))),
                 1e-5);
    check_precisions_agree(spec, 1e-2, 0.06);
  }
}

void test_conv_auto_pad(void**) {
  // Input 7 with kernel 3, stride 2: output ceil(7/2) = 4 needs total padding 2 along H;
  // input 6 with kernel 2, stride 1: output 6 needs 1, which SAME_UPPER puts at the end.
  Geometry g;
  g.c = 2, g.m = 3, g.h = 7, g.w = 6, g.kh = 3, g.kw = 2, g.stride_h = 2;
  const std::vector<float> x = random_values(g.c * g.h * g.w, -1, 1, 7);
  const std::vector<float> w = random_values(g.m * g.c * g.kh * g.kw, -1, 1, 8);
  struct Case {
    const char* mode;
    int64_t top, left, bottom, right;
  };
  for (const Case& c : {Case{"SAME_UPPER", 1, 0, 1, 1}, Case{"SAME_LOWER", 1, 1, 1, 0},
                        Case{"VALID", 0, 0, 0, 0}, Case{"NOTSET", 0, 0, 0, 0}}) {
    Geometry padded = g;
    padded.pad_top = c.top, padded.pad_left = c.left, padded.pad_bottom = c.bottom,
    padded.pad_right = c.right;
    NodeSpec spec = node_spec("Conv", {input("x", {1, 2, 7, 6}, x), weight("w", {3, 2, 3, 2}, w)},
                              {{"auto_pad", attr_string(c.mode)}, {"strides", attr_ints({2, 1})}});
    NodeRun run = run_ok(spec);
    expect_shape(run.output_shapes[0], {1, 3, padded.conv_out_h(), padded.conv_out_w()});
    expect_close(run.outputs[0], to_float(direct_conv(padded, to_double(x), to_double(w), {})),
                 1e-5);
  }
}

void test_conv_fused_activation(void**) {
  const std::vector<float> x = {-3, -1, 0, 2, 5, -4};
  auto spec_with = [&](Attributes attributes) {
    return node_spec(
        "Conv", {input("x", {1, 1, 6}, x), weight("w", {1, 1, 1}, {1.0f}), bias("b", {1}, {0.5f})},
        std::move(attributes));
  };
  expect_close(run_ok(spec_with({{"activation", attr_string("Relu")}})).outputs[0],
               {0, 0, 0.5f, 2.5f, 5.5f, 0}, 1e-6);
  expect_close(run_ok(spec_with({{"activation", attr_string("Clip")},
                                 {"activation_min", attr_float(-1.0f)},
                                 {"activation_max", attr_float(3.0f)}}))
                   .outputs[0],
               {-1, -0.5f, 0.5f, 2.5f, 3, -1}, 1e-6);
  expect_close(run_ok(spec_with({{"activation", attr_string("LeakyRelu")},
                                 {"activation_alpha", attr_float(0.25f)}}))
                   .outputs[0],
               {-0.625f, -0.125f, 0.5f, 2.5f, 5.5f, -0.875f}, 1e-6);
  // LeakyRelu's default alpha is ONNX's 0.01.
  expect_close(run_ok(spec_with({{"activation", attr_string("LeakyRelu")}})).outputs[0],
               {-0.025f, -0.005f, 0.5f, 2.5f, 5.5f, -0.035f}, 1e-6);
  // SiLU: x * sigmoid(x) of the biased result, applied after the kernel; also for Gemm.
  std::vector<float> silu;
  for (float value : {-2.5f, -0.5f, 0.5f, 2.5f, 5.5f, -3.5f}) {
    silu.push_back(static_cast<float>(value / (1.0 + std::exp(-double(value)))));
  }
  NodeSpec conv_silu = spec_with({{"activation", attr_string("SiLU")}});
  expect_close(run_ok(conv_silu).outputs[0], silu, 1e-6);
  check_precisions_agree(conv_silu, 1e-2, 0.03);
  NodeSpec gemm_silu = node_spec(
      "Gemm", {input("a", {6, 1}, x), weight("b", {1, 1}, {1.0f}), bias("c", {1}, {0.5f})},
      {{"activation", attr_string("SiLU")}});
  expect_close(run_ok(gemm_silu).outputs[0], silu, 1e-6);
  expect_error(spec_with({{"activation", attr_string("Sigmoid")}}), StatusCode::kInvalidModel,
               "fused activation 'Sigmoid' is not one of Relu, Clip, LeakyRelu, SiLU");
}

void test_conv_errors(void**) {
  auto conv = [](Shape x, Shape w, Attributes attributes = {}, std::vector<TensorSpec> extra = {}) {
    std::vector<TensorSpec> inputs = {input("x", x, std::vector<float>(graph::element_count(x))),
                                      weight("w", w, std::vector<float>(graph::element_count(w)))};
    for (TensorSpec& spec : extra) inputs.push_back(spec);
    return node_spec("Conv", inputs, std::move(attributes));
  };
  const StatusCode invalid = StatusCode::kInvalidModel;
  expect_error(conv({1, 8, 5, 5}, {6, 3, 1, 1}, {{"group", attr_int(3)}}), invalid,
               "group 3 does not divide input channels 8");
  expect_error(conv({1, 8, 5, 5}, {6, 3, 1, 1}), invalid, "3 input channels per group, expected 8");
  expect_error(conv({1, 4, 5, 5}, {6, 1, 1, 1}, {{"group", attr_int(4)}}), invalid,
               "group 4 does not divide output channels 6");
  expect_error(conv({1, 4, 5, 5}, {2, 4, 1, 1}, {{"group", attr_int(0)}}), invalid, "group 0");
  expect_error(conv({1, 1, 2, 2}, {1, 1, 3, 3}), invalid,
               "kernel extent 3 (kernel 3, dilation 1) is larger than the padded input 2");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"dilations", attr_ints({3, 1})}}), invalid,
               "kernel extent 7");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"strides", attr_ints({1})}}), invalid,
               "'strides' has 1 values, expected 2");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"strides", attr_ints({1, 0})}}), invalid,
               "'strides' value 0 at position 1 is below 1");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"pads", attr_ints({0, -1, 0, 0})}}), invalid,
               "'pads' value -1");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"pads", attr_ints({1, 1})}}), invalid,
               "'pads' has 2 values, expected 4");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"auto_pad", attr_string("SAME")}}), invalid,
               "auto_pad 'SAME'");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3},
                    {{"auto_pad", attr_string("VALID")}, {"pads", attr_ints({1, 1, 1, 1})}}),
               invalid, "cannot be combined with auto_pad");
  expect_error(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {{"kernel_shape", attr_ints({3, 2})}}), invalid,
               "kernel_shape 3x2 differs from the weights' spatial shape 3x3");
  expect_error(conv({1, 5, 5}, {1, 5, 3, 3}), invalid, "must have the rank of the input");
  expect_error(conv({5, 5}, {1, 5}), invalid, "must have rank >= 3");
  expect_error(conv({1, 2, 5, 5}, {3, 2, 3, 3}, {}, {bias("b", {2}, {0, 0})}), invalid,
               "bias shape 2 must be [3]");
  expect_error(conv({1, 2, 5, 5}, {3, 2, 3, 3}, {{"group", attr_float(1.0f)}}), invalid,
               "attribute 'group' is float, expected int");
  // Up to 6 spatial axes run; 7 are refused.
  expect_error(conv({1, 1, 2, 2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
               StatusCode::kUnimplemented,
               "7-D convolution is not supported by the CPU kernels (up to 6-D is)");
}

// ---- ConvTranspose ------------------------------------------------------------------------

void test_conv_transpose_hand_checked(void**) {
  // The ONNX operator documentation's examples: 0..8 through a 3x3 all-ones kernel, 2 outputs.
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = static_cast<float>(i);
  const std::vector<float> ones(18, 1.0f);
  NodeSpec spec =
      node_spec("ConvTranspose", {input("x", {1, 1, 3, 3}, x), weight("w", {1, 2, 3, 3}, ones, 1)});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 2, 5, 5});
  const std::vector<float> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                    27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<float> both = plane;
  both.insert(both.end(), plane.begin(), plane.end());
  expect_close(run.outputs[0], both, 1e-6);

  spec.attributes = {{"strides", attr_ints({3, 2})}, {"pads", attr_ints({1, 2, 1, 2})}};
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 2, 7, 3});
  const std::vector<float> strided = {1, 1, 3, 1, 1,  3, 7,  4,  9, 7, 4,
                                      9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  both = strided;
  both.insert(both.end(), strided.begin(), strided.end());
  expect_close(run.outputs[0], both, 1e-6);

  // output_shape beyond the full output (9x7 here) leaves the extra row and column empty.
  spec.attributes = {{"strides", attr_ints({3, 2})}, {"output_shape", attr_ints({10, 8})}};
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 2, 10, 8});
  const float row0[] = {0, 0, 1, 1, 3, 2, 2, 0}, row3[] = {3, 3, 7, 4, 9, 5, 5, 0},
              row6[] = {6, 6, 13, 7, 15, 8, 8, 0};
  for (int r = 0; r < 10; ++r) {
    const float* expected = r < 3 ? row0 : r < 6 ? row3 : r < 9 ? row6 : nullptr;
    for (int c = 0; c < 8; ++c) {
      const float value = run.outputs[0][static_cast<size_t>(r * 8 + c)];
      if (value != (expected ? expected[c] : 0.0f))
        fail_msg("output_shape case: row %d column %d is %g", r, c, value);
    }
  }
}

void test_conv_transpose_variants(void**) {
  struct Variant {
    const char* name;
    Geometry g;
    bool one_d;
  };
  std::vector<Variant> variants;
  auto add = [&](const char* name, auto edit, bool one_d = false) {
    Geometry g;
    g.n = 2, g.c = 4, g.h = 4, g.w = 3, g.m = 3, g.kh = 3, g.kw = 2;
    edit(g);
    variants.push_back({name, g, one_d});
  };
  add("plain", [](Geometry&) {});
  add("strides", [](Geometry& g) { g.stride_h = 2, g.stride_w = 3; });
  add("pads", [](Geometry& g) { g.stride_h = 2, g.pad_top = 1, g.pad_bottom = 2, g.pad_left = 1; });
  add("output_padding",
      [](Geometry& g) { g.stride_h = 3, g.stride_w = 2, g.out_pad_h = 2, g.out_pad_w = 1; });
  add("dilations", [](Geometry& g) { g.dilation_h = 2, g.dilation_w = 3, g.stride_w = 2; });
  add("groups", [](Geometry& g) { g.group = 2, g.m = 6, g.stride_h = 2; });
  add("depthwise",
      [](Geometry& g) { g.group = 4, g.m = 4, g.stride_h = g.stride_w = 2, g.pad_top = 1; });
  add(
      "1-D",
      [](Geometry& g) {
        g.h = 1, g.kh = 1, g.w = 7, g.kw = 3, g.stride_w = 2, g.pad_left = 1, g.out_pad_w = 1;
      },
      true);
  uint32_t seed = 100;
  for (const Variant& variant : variants) {
    const Geometry& g = variant.g;
    const std::vector<float> x = random_values(g.n * g.c * g.h * g.w, -1, 1, seed++);
    const std::vector<float> w = random_values(g.c * (g.m / g.group) * g.kh * g.kw, -1, 1, seed++);
    const std::vector<float> b = random_values(g.m, -1, 1, seed++);
    Attributes attributes = window_attributes(g, variant.one_d);
    attributes["output_padding"] =
        variant.one_d ? attr_ints({g.out_pad_w}) : attr_ints({g.out_pad_h, g.out_pad_w});
    const Shape w_shape =
        variant.one_d ? Shape{g.c, g.m / g.group, g.kw} : Shape{g.c, g.m / g.group, g.kh, g.kw};
    NodeSpec spec = node_spec("ConvTranspose",
                              {input("x", spatial_shape(g, g.n, g.c, g.h, g.w, variant.one_d), x),
                               weight("w", w_shape, w, 1), bias("b", {g.m}, b)},
                              attributes);
    NodeRun run = run_ok(spec);
    const int64_t oh = g.transpose_out_h(), ow = g.transpose_out_w();
    expect_shape(run.output_shapes[0], spatial_shape(g, g.n, g.m, oh, ow, variant.one_d));
    expect_close(
        run.outputs[0],
        to_float(scatter_conv_transpose(g, oh, ow, to_double(x), to_double(w), to_double(b))),
        1e-5);
    check_precisions_agree(spec, 1e-2, 0.06);
  }
}

void test_conv_transpose_auto_pad(void**) {
  // Input 3, stride 2, kernel 3: full length 7, SAME wants 6, so 1 padding element is cropped:
  // at the end for SAME_UPPER, at the start for SAME_LOWER and for output_shape without auto_pad.
  Geometry g;
  g.c = 1, g.m = 2, g.h = 3, g.w = 3, g.kh = 3, g.kw = 3, g.stride_h = g.stride_w = 2;
  const std::vector<float> x = random_values(9, -1, 1, 5);
  const std::vector<float> w = random_values(18, -1, 1, 6);
  struct Case {
    Attributes attributes;
    int64_t begin, end;
  };
  std::vector<Case> cases = {
      {{{"auto_pad", attr_string("SAME_UPPER")}}, 0, 1},
      {{{"auto_pad", attr_string("SAME_LOWER")}}, 1, 0},
      {{{"output_shape", attr_ints({6, 6})}}, 1, 0},
      {{{"output_shape", attr_ints({1, 2, 6, 6})}}, 1, 0},
      {{{"auto_pad", attr_string("SAME_UPPER")}, {"output_shape", attr_ints({5, 5})}}, 1, 1},
      {{{"auto_pad", attr_string("VALID")}}, 0, 0}};
  for (Case& c : cases) {
    c.attributes["strides"] = attr_ints({2, 2});
    Geometry padded = g;
    padded.pad_top = padded.pad_left = c.begin;
    padded.pad_bottom = padded.pad_right = c.end;
    NodeSpec spec =
        node_spec("ConvTranspose", {input("x", {1, 1, 3, 3}, x), weight("w", {1, 2, 3, 3}, w, 1)},
                  c.attributes);
    NodeRun run = run_ok(spec);
    const int64_t oh = padded.transpose_out_h(), ow = padded.transpose_out_w();
    expect_shape(run.output_shapes[0], {1, 2, oh, ow});
    expect_close(run.outputs[0],
                 to_float(scatter_conv_transpose(padded, oh, ow, to_double(x), to_double(w), {})),
                 1e-5);
  }
}

void test_conv_transpose_errors(void**) {
  auto deconv = [](Shape x, Shape w, Attributes attributes = {}) {
    return node_spec("ConvTranspose",
                     {input("x", x, std::vector<float>(graph::element_count(x))),
                      weight("w", w, std::vector<float>(graph::element_count(w)), 1)},
                     std::move(attributes));
  };
  const StatusCode invalid = StatusCode::kInvalidModel;
  expect_error(deconv({1, 4, 3, 3}, {3, 2, 3, 3}), invalid, "has 3 input channels, expected 4");
  expect_error(deconv({1, 4, 3, 3}, {4, 2, 3, 3}, {{"group", attr_int(3)}}), invalid,
               "group 3 does not divide input channels 4");
  expect_error(deconv({1, 1, 3, 3}, {1, 1, 3, 3}, {{"output_padding", attr_ints({1, 0})}}), invalid,
               "output_padding 1 at spatial axis 0 must be smaller than the stride 1");
  expect_error(deconv({1, 1, 3, 3}, {1, 1, 3, 3}, {{"pads", attr_ints({3, 0, 3, 0})}}), invalid,
               "leave no output along spatial axis 0");
  expect_error(deconv({1, 1, 3, 3}, {1, 1, 3, 3}, {{"output_shape", attr_ints({5})}}), invalid,
               "'output_shape' has 1 values, expected 2");
  expect_error(deconv({1, 1, 3, 3}, {1, 1, 3, 3}, {{"strides", attr_ints({2, 2, 2})}}), invalid,
               "'strides' has 3 values, expected 2");
  expect_error(deconv({1, 1, 2, 2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
               StatusCode::kUnimplemented, "7-D convolution is not supported");
}

// ---- 3-D (volume) convolutions ---------------------------------------------------------------

struct Volume3 {
  int64_t d, h, w;
};

// Direct 3-D convolution written per output (gather) and transposed convolution written as a
// scatter of every input value through every kernel tap, then cropped by the pads.
std::vector<double> direct_conv3d(const std::vector<float>& x, Volume3 in, int64_t c, int64_t m,
                                  int64_t groups, const std::vector<float>& w, Volume3 k,
                                  Volume3 stride, Volume3 pad, Volume3 dilation,
                                  const std::vector<float>& b, Volume3* out) {
  out->d = (in.d + 2 * pad.d - dilation.d * (k.d - 1) - 1) / stride.d + 1;
  out->h = (in.h + 2 * pad.h - dilation.h * (k.h - 1) - 1) / stride.h + 1;
  out->w = (in.w + 2 * pad.w - dilation.w * (k.w - 1) - 1) / stride.w + 1;
  const int64_t cg = c / groups, mg = m / groups;
  std::vector<double> y;
  for (int64_t oc = 0; oc < m; ++oc)
    for (int64_t od = 0; od < out->d; ++od)
      for (int64_t oh = 0; oh < out->h; ++oh)
        for (int64_t ow = 0; ow < out->w; ++ow) {
          double sum = b.empty() ? 0.0 : b[oc];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kd = 0; kd < k.d; ++kd)
              for (int64_t kh = 0; kh < k.h; ++kh)
                for (int64_t kw = 0; kw < k.w; ++kw) {
                  const int64_t id = od * stride.d - pad.d + kd * dilation.d;
                  const int64_t ih = oh * stride.h - pad.h + kh * dilation.h;
                  const int64_t iw = ow * stride.w - pad.w + kw * dilation.w;
                  if (id < 0 || ih < 0 || iw < 0 || id >= in.d || ih >= in.h || iw >= in.w)
                    continue;
                  const int64_t ic = oc / mg * cg + ci;
                  sum += double(x[((ic * in.d + id) * in.h + ih) * in.w + iw]) *
                         w[(((oc * cg + ci) * k.d + kd) * k.h + kh) * k.w + kw];
                }
          y.push_back(sum);
        }
  return y;
}

std::vector<double> scatter_conv_transpose3d(const std::vector<float>& x, Volume3 in, int64_t c,
                                             int64_t m, const std::vector<float>& w, Volume3 k,
                                             Volume3 stride, Volume3 pad, Volume3* out) {
  const Volume3 full = {(in.d - 1) * stride.d + k.d, (in.h - 1) * stride.h + k.h,
                        (in.w - 1) * stride.w + k.w};
  std::vector<double> y(size_t(m * full.d * full.h * full.w), 0.0);
  for (int64_t ic = 0; ic < c; ++ic)
    for (int64_t id = 0; id < in.d; ++id)
      for (int64_t ih = 0; ih < in.h; ++ih)
        for (int64_t iw = 0; iw < in.w; ++iw)
          for (int64_t oc = 0; oc < m; ++oc)
            for (int64_t kd = 0; kd < k.d; ++kd)
              for (int64_t kh = 0; kh < k.h; ++kh)
                for (int64_t kw = 0; kw < k.w; ++kw) {
                  const int64_t od = id * stride.d + kd, oh = ih * stride.h + kh,
                                ow = iw * stride.w + kw;
                  y[size_t(((oc * full.d + od) * full.h + oh) * full.w + ow)] +=
                      double(x[((ic * in.d + id) * in.h + ih) * in.w + iw]) *
                      w[(((ic * m + oc) * k.d + kd) * k.h + kh) * k.w + kw];
                }
  *out = {full.d - 2 * pad.d, full.h - 2 * pad.h, full.w - 2 * pad.w};
  std::vector<double> cropped;
  for (int64_t oc = 0; oc < m; ++oc)
    for (int64_t od = 0; od < out->d; ++od)
      for (int64_t oh = 0; oh < out->h; ++oh)
        for (int64_t ow = 0; ow < out->w; ++ow)
          cropped.push_back(
              y[size_t(((oc * full.d + od + pad.d) * full.h + oh + pad.h) * full.w + ow + pad.w)]);
  return cropped;
}

void test_conv_3d(void**) {
  const Volume3 in = {4, 5, 6}, k = {2, 3, 2};
  const int64_t c = 4, m = 6, groups = 2;
  const std::vector<float> x = random_values(size_t(c * in.d * in.h * in.w), -1, 1, 61);
  const std::vector<float> w = random_values(size_t(m * (c / groups) * 12), -1, 1, 62);
  const std::vector<float> b = random_values(size_t(m), -1, 1, 63);
  Volume3 out;
  const std::vector<double> expected =
      direct_conv3d(x, in, c, m, groups, w, k, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, b, &out);
  NodeSpec spec = node_spec("Conv",
                            {input("x", {1, c, in.d, in.h, in.w}, x),
                             weight("w", {m, c / groups, k.d, k.h, k.w}, w), bias("b", {m}, b)},
                            {{"group", attr_int(groups)},
                             {"strides", attr_ints({2, 1, 2})},
                             {"pads", attr_ints({1, 0, 1, 1, 0, 1})},
                             {"dilations", attr_ints({1, 2, 1})},
                             {"activation", attr_string("Relu")}});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, m, out.d, out.h, out.w});
  std::vector<float> relu;
  for (double value : expected) relu.push_back(float(std::max(value, 0.0)));
  expect_close(run.outputs[0], relu, 1e-5);
  check_precisions_agree(spec, 1e-2, 0.03);
}

void test_conv_transpose_3d(void**) {
  const Volume3 in = {3, 2, 4}, k = {3, 2, 3};
  const int64_t c = 2, m = 3;
  const std::vector<float> x = random_values(size_t(c * in.d * in.h * in.w), -1, 1, 64);
  const std::vector<float> w = random_values(size_t(c * m * 18), -1, 1, 65);
  Volume3 out;
  const std::vector<double> expected =
      scatter_conv_transpose3d(x, in, c, m, w, k, {2, 1, 2}, {1, 0, 1}, &out);
  NodeSpec spec =
      node_spec("ConvTranspose",
                {input("x", {1, c, in.d, in.h, in.w}, x), weight("w", {c, m, k.d, k.h, k.w}, w)},
                {{"strides", attr_ints({2, 1, 2})}, {"pads", attr_ints({1, 0, 1, 1, 0, 1})}});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, m, out.d, out.h, out.w});
  expect_close(run.outputs[0], std::vector<float>(expected.begin(), expected.end()), 1e-5);
  check_precisions_agree(spec, 1e-2, 0.03);
}

// ---- Gemm and MatMul ----------------------------------------------------------------------

std::vector<double> direct_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, double alpha,
                                double beta, const std::vector<float>& a,
                                const std::vector<float>& b, const std::vector<float>& c,
                                int64_t c_rows, int64_t c_columns) {
  std::vector<double> y;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      double value = alpha * sum;
      if (!c.empty())
        value += beta * c[(c_rows == 1 ? 0 : i) * c_columns + (c_columns == 1 ? 0 : j)];
      y.push_back(value);
    }
  return y;
}

void test_gemm(void**) {
  // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]
  NodeSpec spec = node_spec(
      "Gemm", {input("a", {2, 3}, {1, 2, 3, 4, 5, 6}), weight("b", {3, 2}, {1, 0, 0, 1, 1, 1}, 1)});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {2, 2});
  expect_close(run.outputs[0], {4, 5, 10, 11}, 1e-6);

  struct Case {
    bool ta, tb;
    float alpha, beta;
    Shape c_shape;  // {-1}: no C
  };
  const int64_t m = 5, n = 7, k = 3;
  uint32_t seed = 200;
  for (const Case& c : {Case{false, false, 1, 1, {n}}, Case{true, false, 0.5f, 2, {m, n}},
                        Case{false, true, 1, 1, {1, n}}, Case{true, true, -1.5f, 0.25f, {m, 1}},
                        Case{false, true, 1, 1, {}}, Case{false, false, 2, 1, {1}},
                        Case{true, false, 1, 1, {-1}}}) {
    const std::vector<float> a = random_values(m * k, -1, 1, seed++);
    const std::vector<float> b = random_values(k * n, -1, 1, seed++);
    const bool has_c = c.c_shape != Shape{-1};
    const std::vector<float> cv =
        has_c ? random_values(graph::element_count(c.c_shape), -1, 1, seed++)
              : std::vector<float>();
    const int64_t c_rows = c.c_shape.size() == 2 ? c.c_shape[0] : 1;
    const int64_t c_columns = c.c_shape.empty() ? 1 : c.c_shape.back();
    NodeSpec spec = node_spec("Gemm",
                              {input("a", c.ta ? Shape{k, m} : Shape{m, k}, a),
                               weight("b", c.tb ? Shape{n, k} : Shape{k, n}, b, c.tb ? 0 : 1)},
                              {{"transA", attr_int(c.ta)},
                               {"transB", attr_int(c.tb)},
                               {"alpha", attr_float(c.alpha)},
                               {"beta", attr_float(c.beta)}});
    if (has_c) spec.inputs.push_back(bias("c", c.c_shape, cv));
    run = run_ok(spec);
    expect_shape(run.output_shapes[0], {m, n});
    expect_close(
        run.outputs[0],
        to_float(direct_gemm(m, n, k, c.ta, c.tb, c.alpha, c.beta, a, b, cv, c_rows, c_columns)),
        1e-5);
    check_precisions_agree(spec, 1e-2, 0.06);
  }
  // Fused Relu applies after beta * C.
  spec = node_spec("Gemm",
                   {input("a", {1, 2}, {1, -2}), weight("b", {2, 2}, {1, 0, 0, 1}, 1),
                    bias("c", {2}, {0.5f, 0.5f})},
                   {{"activation", attr_string("Relu")}, {"beta", attr_float(2.0f)}});
  expect_close(run_ok(spec).outputs[0], {2, 0}, 1e-6);

  const StatusCode invalid = StatusCode::kInvalidModel;
  expect_error(node_spec("Gemm", {input("a", {2, 3}, std::vector<float>(6)),
                                  input("b", {2, 2}, std::vector<float>(4))}),
               invalid, "inner dimensions differ");
  expect_error(node_spec("Gemm",
                         {input("a", {2, 3}, std::vector<float>(6)),
                          input("b", {3, 4}, std::vector<float>(12))},
                         {{"transA", attr_int(1)}}),
               invalid, "A 2x3 (transposed) gives K = 2, B 3x4 gives K = 3");
  expect_error(node_spec("Gemm", {input("a", {2, 3}, std::vector<float>(6)),
                                  input("b", {3, 4}, std::vector<float>(12)),
                                  input("c", {3}, std::vector<float>(3))}),
               invalid, "C shape 3 does not broadcast to 2x4");
  expect_error(node_spec("Gemm", {input("a", {1, 2, 3}, std::vector<float>(6)),
                                  input("b", {3, 4}, std::vector<float>(12))}),
               invalid, "A shape 1x2x3 must be 2-D");
}

void test_matmul(void**) {
  NodeSpec spec =
      node_spec("MatMul", {input("a", {2, 2}, {1, 2, 3, 4}), input("b", {2, 2}, {5, 6, 7, 8})});
  expect_close(run_ok(spec).outputs[0], {19, 22, 43, 50}, 1e-6);
  spec = node_spec("MatMul", {input("a", {2}, {1, 2}), input("b", {2}, {3, 4})});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {});
  expect_close(run.outputs[0], {11}, 1e-6);

  struct Case {
    Shape a, b;
  };
  uint32_t seed = 300;
  for (const Case& c :
       {Case{{3, 4}, {4, 5}}, Case{{4}, {4, 5}}, Case{{3, 4}, {4}}, Case{{2, 3, 4}, {4, 5}},
        Case{{4}, {2, 4, 3}}, Case{{2, 1, 3, 4}, {5, 4, 2}}, Case{{1, 3, 4}, {7, 4, 1}},
        Case{{2, 3, 1, 4}, {3, 4, 6}}, Case{{1, 1}, {1, 13}}}) {
    const std::vector<float> a = random_values(graph::element_count(c.a), -1, 1, seed++);
    const std::vector<float> b = random_values(graph::element_count(c.b), -1, 1, seed++);
    Shape expected_shape;
    const std::vector<double> expected = direct_matmul(c.a, a, c.b, b, &expected_shape);
    for (bool constant_b : {false, true}) {
      spec = node_spec("MatMul",
                       {input("a", c.a, a),
                        constant_b ? weight("b", c.b, b, c.b.size() >= 2 ? int(c.b.size()) - 1 : -1)
                                   : input("b", c.b, b)});
      run = run_ok(spec);
      expect_shape(run.output_shapes[0], expected_shape);
      expect_close(run.outputs[0], to_float(expected), 1e-5);
      check_precisions_agree(spec, 1e-2, 0.06);
    }
  }
  const StatusCode invalid = StatusCode::kInvalidModel;
  expect_error(node_spec("MatMul", {input("a", {2, 3}, std::vector<float>(6)),
                                    input("b", {2, 3}, std::vector<float>(6))}),
               invalid, "inner dimensions differ: A 2x3 has K = 3, B 2x3 has K = 2");
  expect_error(node_spec("MatMul", {input("a", {2, 2, 3}, std::vector<float>(12)),
                                    input("b", {3, 3, 1}, std::vector<float>(9))}),
               invalid, "batch dimensions of 2x2x3 and 3x3x1 do not broadcast");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_hand_checked),
      cmocka_unit_test(test_conv_variants),
      cmocka_unit_test(test_conv_auto_pad),
      cmocka_unit_test(test_conv_fused_activation),
      cmocka_unit_test(test_conv_errors),
      cmocka_unit_test(test_conv_transpose_hand_checked),
      cmocka_unit_test(test_conv_transpose_variants),
      cmocka_unit_test(test_conv_transpose_auto_pad),
      cmocka_unit_test(test_conv_transpose_errors),
      cmocka_unit_test(test_conv_3d),
      cmocka_unit_test(test_conv_transpose_3d),
      cmocka_unit_test(test_gemm),
      cmocka_unit_test(test_matmul),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
