// Convolution family: Conv, ConvTranspose, Gemm, MatMul in float32 (hand-checked values and an
// independent direct computation for every attribute variant), their validation errors, the
// int8 kernels bit-exactly against the rule of docs/quantization.md computed here, the float
// fallback of int8 nodes the int8 kernels refuse, and fp16/int8 agreement with float32.
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "common/op_test_harness.h"
#include "devices/cpu/cpu_kernel_registry.h"
#include "graph/op_schema.h"

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
using graph::Attribute;
using graph::Shape;
using Attributes = std::map<std::string, Attribute>;

NodeSpec node_spec(std::string op_type, std::vector<TensorSpec> inputs,
                   Attributes attributes = {}) {
  NodeSpec spec;
  spec.op_type = std::move(op_type);
  spec.inputs = std::move(inputs);
  spec.attributes = std::move(attributes);
  return spec;
}

NodeRun run_ok(const NodeSpec& spec, Precision precision = Precision::kFloat32) {
  NodeRun run = run_node(spec, precision);
  if (!run.status.ok()) {
    fail_msg("%s (%s) failed: %s", spec.op_type.c_str(), precision_name(precision),
             run.status.message().c_str());
  }
  return run;
}

void expect_error(const NodeSpec& spec, StatusCode code, const char* fragment) {
  NodeRun run = run_node(spec);
  if (run.status.code() != code) {
    fail_msg("%s: expected %s, got %s (%s)", spec.op_type.c_str(), status_code_name(code),
             status_code_name(run.status.code()), run.status.message().c_str());
  }
  if (run.status.message().find(fragment) == std::string::npos) {
    fail_msg("message '%s' lacks '%s'", run.status.message().c_str(), fragment);
  }
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}
std::vector<double> to_double(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

// ---- independent float formulations -------------------------------------------------------

// 2-D geometry; 1-D cases use h = kh = 1.
struct Geometry {
  int64_t n = 1, c = 1, h = 1, w = 1, m = 1, kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t group = 1;
  int64_t out_pad_h = 0, out_pad_w = 0;  // ConvTranspose output_padding

  int64_t conv_out_h() const {
    return (h + pad_top + pad_bottom - dilation_h * (kh - 1) - 1) / stride_h + 1;
  }
  int64_t conv_out_w() const {
    return (w + pad_left + pad_right - dilation_w * (kw - 1) - 1) / stride_w + 1;
  }
  int64_t transpose_out_h() const {
    return stride_h * (h - 1) + out_pad_h + dilation_h * (kh - 1) + 1 - pad_top - pad_bottom;
  }
  int64_t transpose_out_w() const {
    return stride_w * (w - 1) + out_pad_w + dilation_w * (kw - 1) + 1 - pad_left - pad_right;
  }
};

// Convolution on an explicitly zero-padded copy of the input: no bounds checks in the sum.
std::vector<double> direct_conv(const Geometry& g, const std::vector<double>& x,
                                const std::vector<double>& w, const std::vector<double>& bias) {
  const int64_t ph = g.h + g.pad_top + g.pad_bottom, pw = g.w + g.pad_left + g.pad_right;
  std::vector<double> padded(static_cast<size_t>(g.n * g.c * ph * pw), 0.0);
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t y = 0; y < g.h; ++y)
      for (int64_t xx = 0; xx < g.w; ++xx)
        padded[(p * ph + y + g.pad_top) * pw + xx + g.pad_left] = x[(p * g.h + y) * g.w + xx];
  const int64_t oh = g.conv_out_h(), ow = g.conv_out_w();
  const int64_t cpg = g.c / g.group, mpg = g.m / g.group;
  std::vector<double> out;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = bias.empty() ? 0.0 : bias[m];
          for (int64_t cg = 0; cg < cpg; ++cg) {
            const int64_t c = (m / mpg) * cpg + cg;
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx)
                sum += padded[((n * g.c + c) * ph + oy * g.stride_h + ky * g.dilation_h) * pw +
                              ox * g.stride_w + kx * g.dilation_w] *
                       w[((m * cpg + cg) * g.kh + ky) * g.kw + kx];
          }
          out.push_back(sum);
        }
  return out;
}

// Transposed convolution as a scatter of every input element through every kernel tap.
std::vector<double> scatter_conv_transpose(const Geometry& g, int64_t oh, int64_t ow,
                                           const std::vector<double>& x,
                                           const std::vector<double>& w,
                                           const std::vector<double>& bias) {
  const int64_t cpg = g.c / g.group, mpg = g.m / g.group;
  std::vector<double> out(static_cast<size_t>(g.n * g.m * oh * ow), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t iy = 0; iy < g.h; ++iy)
        for (int64_t ix = 0; ix < g.w; ++ix)
          for (int64_t mg = 0; mg < mpg; ++mg)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t oy = iy * g.stride_h + ky * g.dilation_h - g.pad_top;
                const int64_t ox = ix * g.stride_w + kx * g.dilation_w - g.pad_left;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const int64_t m = (c / cpg) * mpg + mg;
                out[((n * g.m + m) * oh + oy) * ow + ox] +=
                    x[((n * g.c + c) * g.h + iy) * g.w + ix] *
                    w[((c * mpg + mg) * g.kh + ky) * g.kw + kx];
              }
  if (!bias.empty()) {
    for (size_t i = 0; i < out.size(); ++i) out[i] += bias[(i / (oh * ow)) % g.m];
  }
  return out;
}

Shape spatial_shape(const Geometry& g, int64_t batch, int64_t channels, int64_t h, int64_t w,
                    bool one_d) {
  return one_d ? Shape{batch, channels, w} : Shape{batch, channels, h, w};
}

Attributes window_attributes(const Geometry& g, bool one_d) {
  if (one_d) {
    return {{"strides", attr_ints({g.stride_w})},
            {"dilations", attr_ints({g.dilation_w})},
            {"pads", attr_ints({g.pad_left, g.pad_right})},
            {"group", attr_int(g.group)}};
  }
  return {{"strides", attr_ints({g.stride_h, g.stride_w})},
          {"dilations", attr_ints({g.dilation_h, g.dilation_w})},
          {"pads", attr_ints({g.pad_top, g.pad_left, g.pad_bottom, g.pad_right})},
          {"group", attr_int(g.group)}};
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
  expect_error(spec_with({{"activation", attr_string("Sigmoid")}}), StatusCode::kInvalidModel,
               "fused activation 'Sigmoid'");
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
  // 3-D convolution is valid ONNX that the CPU kernels refuse.
  expect_error(conv({1, 1, 3, 3, 3}, {1, 1, 2, 2, 2}), StatusCode::kUnimplemented,
               "3-D convolution is not supported");
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
  expect_error(deconv({1, 1, 3, 3, 3}, {1, 1, 2, 2, 2}), StatusCode::kUnimplemented,
               "3-D convolution is not supported");
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

// numpy matmul by explicit broadcast index arithmetic.
std::vector<double> direct_matmul(const Shape& a_shape, const std::vector<float>& a,
                                  const Shape& b_shape, const std::vector<float>& b,
                                  Shape* out_shape) {
  Shape as = a_shape, bs = b_shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const size_t rank = std::max(as.size(), bs.size());
  while (as.size() < rank) as.insert(as.begin(), 1);
  while (bs.size() < rank) bs.insert(bs.begin(), 1);
  Shape batch;
  for (size_t d = 0; d + 2 < rank; ++d) batch.push_back(std::max(as[d], bs[d]));
  std::vector<double> y;
  for (int64_t index = 0; index < graph::element_count(batch); ++index) {
    int64_t rest = index, a_offset = 0, b_offset = 0, a_stride = 1, b_stride = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t coordinate = rest % batch[d];
      rest /= batch[d];
      a_offset += (as[d] == 1 ? 0 : coordinate) * a_stride;
      b_offset += (bs[d] == 1 ? 0 : coordinate) * b_stride;
      a_stride *= as[d];
      b_stride *= bs[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(a[(a_offset * m + i) * k + p]) * b[(b_offset * k + p) * n + j];
        y.push_back(sum);
      }
  }
  *out_shape = batch;
  if (a_shape.size() > 1) out_shape->push_back(m);
  if (b_shape.size() > 1) out_shape->push_back(n);
  return y;
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

// ---- int8: bit-exact against the rule of docs/quantization.md -------------------------------

// A tensor as an int8 graph stores it.
struct StoredTensor {
  std::string name;
  Shape shape;
  DataType type = DataType::kInt8;
  graph::Quantization quantization;
  std::vector<uint8_t> bytes;
  bool constant = false;
};

template <typename T>
StoredTensor stored(std::string name, Shape shape, DataType type, const std::vector<T>& values,
                    graph::Quantization quantization, bool constant) {
  StoredTensor tensor{std::move(name), std::move(shape), type, std::move(quantization), {},
                      constant};
  tensor.bytes.resize(values.size() * sizeof(T));
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

graph::Quantization per_tensor(float scale, int32_t zero_point) {
  return {{scale}, {zero_point}, 0};
}

struct QuantizedRun {
  Status status;
  bool int8_kernel = false;  // the native int8 factory accepted the node
  std::string refusal;       // why it did not
  std::vector<int8_t> output;
};

QuantizedRun run_quantized(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                           const Attributes& attributes, const graph::Quantization& output_q) {
  QuantizedRun run;
  graph::Graph g;
  graph::Node node;
  node.name = "quantized";
  node.op_type = op_type;
  node.attributes = attributes;
  std::vector<Shape> shapes;
  for (const StoredTensor& spec : inputs) {
    graph::Tensor tensor;
    tensor.name = spec.name;
    tensor.shape = spec.shape;
    tensor.data_type = spec.type;
    tensor.quantization = spec.quantization;
    if (spec.constant) {
      tensor.constant = true;
      tensor.constant_data = spec.bytes.data();
      tensor.constant_size = spec.bytes.size();
    }
    node.inputs.push_back(static_cast<int32_t>(g.tensors.size()));
    shapes.push_back(spec.shape);
    g.tensors.push_back(tensor);
  }
  node.outputs = {static_cast<int32_t>(g.tensors.size())};
  std::vector<Shape> output_shapes;
  run.status = graph::find_op_schema(op_type)->infer_shapes(
      graph::ShapeInferenceContext(g, node, shapes), &output_shapes);
  if (!run.status.ok()) return run;
  graph::Tensor output;
  output.name = "y";
  output.data_type = DataType::kInt8;
  output.shape = output_shapes[0];
  output.quantization = output_q;
  g.tensors.push_back(output);
  shapes.push_back(output.shape);
  g.nodes.push_back(node);

  devices::cpu::KernelBuildContext context{g.nodes[0], {}, {&g.tensors.back()}};
  for (size_t i = 0; i < inputs.size(); ++i) context.inputs.push_back(&g.tensors[i]);
  const devices::cpu::CpuOpDefinition* op = devices::cpu::find_cpu_op(op_type);
  if (op->make_int8_kernel) {
    auto int8_kernel = op->make_int8_kernel(context);
    run.int8_kernel = int8_kernel.ok();
    if (!int8_kernel.ok()) run.refusal = int8_kernel.status().message();
  }

  auto kernel = devices::cpu::build_cpu_kernel(g, g.nodes[0], shapes);
  if (!kernel.ok()) {
    run.status = kernel.take_status();
    return run;
  }
  std::vector<const void*> in;
  for (const StoredTensor& spec : inputs) in.push_back(spec.bytes.data());
  run.output.resize(static_cast<size_t>(graph::element_count(output.shape)));
  void* out[] = {run.output.data()};
  run.status = kernel.value()->run(in.data(), out);
  return run;
}

std::vector<int8_t> random_codes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> distribution(-128, 127);
  std::vector<int8_t> codes(count);
  for (int8_t& code : codes) code = static_cast<int8_t>(distribution(generator));
  return codes;
}

std::vector<int32_t> random_ints(size_t count, int32_t low, int32_t high, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int32_t> distribution(low, high);
  std::vector<int32_t> values(count);
  for (int32_t& value : values) value = distribution(generator);
  return values;
}

// The requantization rule, written out independently of the kernels.
int8_t rule_output(double accumulator, double input_scale, double weight_scale, double output_scale,
                   int32_t zero_point, int32_t low, int32_t high) {
  const float multiplier = static_cast<float>(input_scale * weight_scale / output_scale);
  const double rounded = std::nearbyint(accumulator * static_cast<double>(multiplier));
  double value = std::min(std::max(rounded + zero_point, -128.0), 127.0);
  value = std::min(std::max(value, static_cast<double>(low)), static_cast<double>(high));
  return static_cast<int8_t>(value);
}

int32_t rule_quantize(float real, float scale, int32_t zero_point) {
  return static_cast<int32_t>(
      std::min(std::max(std::nearbyint(real / scale) + zero_point, -128.0f), 127.0f));
}

// A quantized product: codes with their zero points removed, the channel scales, and a bias
// quantized at input x weight scale.
struct QuantizedOperands {
  float input_scale = 0.02f;
  int32_t input_zero_point = 5;
  std::vector<float> weight_scales;
  std::vector<int32_t> weight_zero_points;
  std::vector<int8_t> x, w;
  std::vector<int32_t> bias;
  graph::Quantization weight_q(int axis) const { return {weight_scales, weight_zero_points, axis}; }
  graph::Quantization bias_q() const {
    graph::Quantization q;
    for (float scale : weight_scales) {
      q.scales.push_back(input_scale * scale);
      q.zero_points.push_back(0);
    }
    return q;
  }
};

QuantizedOperands make_operands(size_t x_count, size_t w_count, size_t channels, bool with_bias,
                                uint32_t seed) {
  QuantizedOperands q;
  for (size_t c = 0; c < channels; ++c) {
    q.weight_scales.push_back(0.004f + 0.003f * static_cast<float>(c % 5));
    q.weight_zero_points.push_back(static_cast<int32_t>(c % 3) - 1);  // -1, 0, 1: handled
  }
  q.x = random_codes(x_count, seed);
  q.w = random_codes(w_count, seed + 1);
  if (with_bias) q.bias = random_ints(channels, -3000, 3000, seed + 2);
  return q;
}

// Checks run.output against the rule for accumulators `sums` whose channel is
// channel_of(index); the output scale is chosen so that most outputs do not saturate.
template <typename ChannelOf>
void expect_rule(const QuantizedRun& run, const QuantizedOperands& q,
                 const std::vector<double>& sums, ChannelOf channel_of, float output_scale,
                 int32_t output_zero_point, int32_t low = -128, int32_t high = 127) {
  if (!run.status.ok()) fail_msg("int8 run failed: %s", run.status.message().c_str());
  if (!run.int8_kernel) fail_msg("the int8 kernel refused the node: %s", run.refusal.c_str());
  assert_int_equal(run.output.size(), sums.size());
  int saturated = 0;
  for (size_t i = 0; i < sums.size(); ++i) {
    const size_t c = channel_of(i);
    const int8_t expected = rule_output(sums[i], q.input_scale, q.weight_scales[c], output_scale,
                                        output_zero_point, low, high);
    if (run.output[i] != expected) {
      fail_msg("output %zu: %d, the rule gives %d (accumulator %.0f)", i, run.output[i], expected,
               sums[i]);
    }
    saturated += expected == -128 || expected == 127;
  }
  if (saturated * 4 > static_cast<int>(sums.size()))
    fail_msg("test setup: %d of %zu saturate", saturated, sums.size());
}

// Output scale that maps the largest real output to about 100 codes.
template <typename ChannelOf>
float output_scale_for(const QuantizedOperands& q, const std::vector<double>& sums,
                       ChannelOf channel_of) {
  double largest = 0;
  for (size_t i = 0; i < sums.size(); ++i) {
    largest =
        std::max(largest, std::fabs(sums[i]) * q.input_scale * q.weight_scales[channel_of(i)]);
  }
  return static_cast<float>(largest / 100.0);
}

std::vector<double> offsets(const std::vector<int8_t>& codes, int32_t zero_point) {
  std::vector<double> values;
  for (int8_t code : codes) values.push_back(code - zero_point);
  return values;
}

// Weight offsets with the zero point of each code's output channel.
std::vector<double> weight_offsets(const QuantizedOperands& q, size_t inner,
                                   size_t outer_channels_stride) {
  std::vector<double> values;
  for (size_t i = 0; i < q.w.size(); ++i) {
    const size_t channel = (i / inner) % outer_channels_stride;
    values.push_back(q.w[i] - q.weight_zero_points[channel]);
  }
  return values;
}

void test_int8_conv_bit_exact(void**) {
  Geometry g;
  g.n = 2, g.c = 6, g.h = 7, g.w = 6, g.m = 4, g.kh = 3, g.kw = 2, g.group = 2;
  g.stride_h = 2, g.dilation_w = 2, g.pad_top = 1, g.pad_bottom = 2, g.pad_right = 1;
  const size_t inner = static_cast<size_t>((g.c / g.group) * g.kh * g.kw);
  const QuantizedOperands q = make_operands(g.n * g.c * g.h * g.w, g.m * inner, g.m, true, 11);
  const std::vector<double> sums =
      direct_conv(g, offsets(q.x, q.input_zero_point), weight_offsets(q, inner, g.m),
                  std::vector<double>(q.bias.begin(), q.bias.end()));
  const size_t plane = static_cast<size_t>(g.conv_out_h() * g.conv_out_w());
  auto channel_of = [&](size_t i) { return (i / plane) % g.m; };
  const float output_scale = output_scale_for(q, sums, channel_of);
  const int32_t zy = -3;
  auto inputs = [&](const graph::Quantization& weight_q, const graph::Quantization& bias_q) {
    return std::vector<StoredTensor>{
        stored("x", {g.n, g.c, g.h, g.w}, DataType::kInt8, q.x,
               per_tensor(q.input_scale, q.input_zero_point), false),
        stored("w", {g.m, g.c / g.group, g.kh, g.kw}, DataType::kInt8, q.w, weight_q, true),
        stored("b", {g.m}, DataType::kInt32, q.bias, bias_q, true)};
  };
  const Attributes attributes = window_attributes(g, false);
  expect_rule(run_quantized("Conv", inputs(q.weight_q(0), q.bias_q()), attributes,
                            per_tensor(output_scale, zy)),
              q, sums, channel_of, output_scale, zy);

  // Fused Relu and Clip are clamps in the quantized domain.
  Attributes relu = attributes;
  relu["activation"] = attr_string("Relu");
  expect_rule(
      run_quantized("Conv", inputs(q.weight_q(0), q.bias_q()), relu, per_tensor(output_scale, zy)),
      q, sums, channel_of, output_scale, zy, zy, 127);
  Attributes clip = attributes;
  clip["activation"] = attr_string("Clip");
  clip["activation_min"] = attr_float(-0.3f);
  clip["activation_max"] = attr_float(0.45f);
  expect_rule(
      run_quantized("Conv", inputs(q.weight_q(0), q.bias_q()), clip, per_tensor(output_scale, zy)),
      q, sums, channel_of, output_scale, zy, rule_quantize(-0.3f, output_scale, zy),
      rule_quantize(0.45f, output_scale, zy));

  // Per-tensor weights: every channel uses channel 0's scale and zero point.
  QuantizedOperands shared = q;
  shared.weight_scales.assign(g.m, q.weight_scales[0]);
  shared.weight_zero_points.assign(g.m, q.weight_zero_points[0]);
  const std::vector<double> shared_sums =
      direct_conv(g, offsets(q.x, q.input_zero_point), weight_offsets(shared, inner, g.m),
                  std::vector<double>(q.bias.begin(), q.bias.end()));
  graph::Quantization shared_bias = shared.bias_q();
  shared_bias.scales.resize(1);
  shared_bias.zero_points.resize(1);
  expect_rule(
      run_quantized("Conv",
                    inputs(per_tensor(q.weight_scales[0], q.weight_zero_points[0]), shared_bias),
                    attributes, per_tensor(output_scale, zy)),
      shared, shared_sums, channel_of, output_scale, zy);
}

void test_int8_conv_transpose_bit_exact(void**) {
  for (int64_t group : {1, 2}) {
    Geometry g;
    g.n = 1, g.c = 4, g.h = 3, g.w = 5, g.m = 6, g.kh = 3, g.kw = 3, g.group = group;
    g.stride_h = 2, g.stride_w = 3, g.pad_top = 1, g.pad_left = 2, g.out_pad_h = 1;
    const int64_t mpg = g.m / group;
    const size_t inner = static_cast<size_t>(g.kh * g.kw);
    // One group: per-channel along axis 1. Two groups: per-tensor.
    QuantizedOperands q =
        make_operands(g.n * g.c * g.h * g.w, g.c * mpg * inner, g.m, true, 40 + group);
    if (group > 1) {
      q.weight_scales.assign(g.m, q.weight_scales[0]);
      q.weight_zero_points.assign(g.m, q.weight_zero_points[0]);
    }
    const int64_t oh = g.transpose_out_h(), ow = g.transpose_out_w();
    const std::vector<double> sums = scatter_conv_transpose(
        g, oh, ow, offsets(q.x, q.input_zero_point), weight_offsets(q, inner, mpg),
        std::vector<double>(q.bias.begin(), q.bias.end()));
    auto channel_of = [&](size_t i) { return (i / static_cast<size_t>(oh * ow)) % g.m; };
    const float output_scale = output_scale_for(q, sums, channel_of);
    graph::Quantization bias_q = q.bias_q();
    if (group > 1) bias_q = per_tensor(bias_q.scales[0], 0);
    const std::vector<StoredTensor> inputs = {
        stored("x", {g.n, g.c, g.h, g.w}, DataType::kInt8, q.x,
               per_tensor(q.input_scale, q.input_zero_point), false),
        stored("w", {g.c, mpg, g.kh, g.kw}, DataType::kInt8, q.w,
               group > 1 ? per_tensor(q.weight_scales[0], q.weight_zero_points[0]) : q.weight_q(1),
               true),
        stored("b", {g.m}, DataType::kInt32, q.bias, bias_q, true)};
    Attributes attributes = window_attributes(g, false);
    attributes["output_padding"] = attr_ints({g.out_pad_h, 0});
    expect_rule(run_quantized("ConvTranspose", inputs, attributes, per_tensor(output_scale, 7)), q,
                sums, channel_of, output_scale, 7);
  }
}

void test_int8_gemm_bit_exact(void**) {
  const int64_t m = 5, n = 6, k = 11;
  for (bool transpose : {false, true}) {
    const bool with_c = !transpose;
    const float alpha = transpose ? 0.75f : 1.0f;
    QuantizedOperands q = make_operands(m * k, k * n, n, with_c, 60 + transpose);
    // B is [K, N] (channel = column) or, transposed, [N, K] (channel = row).
    std::vector<double> sums;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = with_c ? q.bias[j] : 0;
        for (int64_t p = 0; p < k; ++p) {
          const double a = q.x[transpose ? p * m + i : i * k + p] - q.input_zero_point;
          const double b = q.w[transpose ? j * k + p : p * n + j] - q.weight_zero_points[j];
          sum += a * b;
        }
        sums.push_back(sum);
      }
    auto channel_of = [&](size_t i) { return i % n; };
    const float output_scale = output_scale_for(q, sums, channel_of) * alpha;
    std::vector<StoredTensor> inputs = {
        stored("a", transpose ? Shape{k, m} : Shape{m, k}, DataType::kInt8, q.x,
               per_tensor(q.input_scale, q.input_zero_point), false),
        stored("b", transpose ? Shape{n, k} : Shape{k, n}, DataType::kInt8, q.w,
               q.weight_q(transpose ? 0 : 1), true)};
    if (with_c) inputs.push_back(stored("c", {n}, DataType::kInt32, q.bias, q.bias_q(), true));
    QuantizedRun run = run_quantized("Gemm", inputs,
                                     {{"transA", attr_int(transpose)},
                                      {"transB", attr_int(transpose)},
                                      {"alpha", attr_float(alpha)}},
                                     per_tensor(output_scale, 2));
    // alpha folds into the multiplier: M = float(alpha * sa * sb / sy).
    QuantizedOperands scaled = q;
    for (float& scale : scaled.weight_scales)
      scale = static_cast<float>(scale * static_cast<double>(alpha));
    if (alpha == 1.0f) {
      expect_rule(run, q, sums, channel_of, output_scale, 2);
    } else {
      for (size_t i = 0; i < sums.size(); ++i) {
        const float multiplier = static_cast<float>(double(alpha) * q.input_scale *
                                                    q.weight_scales[i % n] / output_scale);
        const double value =
            std::min(std::max(std::nearbyint(sums[i] * double(multiplier)) + 2, -128.0), 127.0);
        if (run.output[i] != static_cast<int8_t>(value))
          fail_msg("gemm alpha output %zu: %d vs %g", i, run.output[i], value);
      }
      assert_true(run.int8_kernel);
    }
  }
}

void test_int8_matmul_bit_exact(void**) {
  // A [3, 2, 3, 4] x constant B [2, 4, 5] per channel along N; then B as a second activation.
  const Shape a_shape = {3, 2, 3, 4}, b_shape = {2, 4, 5};
  const int64_t n = 5;
  QuantizedOperands q = make_operands(72, 40, n, false, 80);
  std::vector<float> a_offsets, b_offsets;
  for (int8_t code : q.x) a_offsets.push_back(static_cast<float>(code - q.input_zero_point));
  for (size_t i = 0; i < q.w.size(); ++i)
    b_offsets.push_back(static_cast<float>(q.w[i] - q.weight_zero_points[i % n]));
  Shape out_shape;
  const std::vector<double> sums =
      direct_matmul(a_shape, a_offsets, b_shape, b_offsets, &out_shape);
  auto channel_of = [&](size_t i) { return i % n; };
  const float output_scale = output_scale_for(q, sums, channel_of);
  const graph::Quantization x_q = per_tensor(q.input_scale, q.input_zero_point);
  expect_rule(run_quantized("MatMul",
                            {stored("a", a_shape, DataType::kInt8, q.x, x_q, false),
                             stored("b", b_shape, DataType::kInt8, q.w, q.weight_q(2), true)},
                            {}, per_tensor(output_scale, -1)),
              q, sums, channel_of, output_scale, -1);

  QuantizedOperands activations = q;
  activations.weight_scales.assign(n, 0.011f);
  activations.weight_zero_points.assign(n, -4);
  std::vector<float> b_activation;
  for (int8_t code : q.w) b_activation.push_back(static_cast<float>(code + 4));
  const std::vector<double> activation_sums =
      direct_matmul(a_shape, a_offsets, b_shape, b_activation, &out_shape);
  const float activation_scale = output_scale_for(activations, activation_sums, channel_of);
  expect_rule(
      run_quantized("MatMul",
                    {stored("a", a_shape, DataType::kInt8, q.x, x_q, false),
                     stored("b", b_shape, DataType::kInt8, q.w, per_tensor(0.011f, -4), false)},
                    {}, per_tensor(activation_scale, 0)),
      activations, activation_sums, channel_of, activation_scale, 0);
}

// Nodes the int8 kernels refuse still run, through the float domain: dequantize, compute in
// float, quantize. Their results stay within one code of that computation done here in double.
void test_int8_fallbacks(void**) {
  const Shape x_shape = {1, 3, 4, 4}, w_shape = {2, 3, 3, 3};
  QuantizedOperands q = make_operands(48, 54, 2, true, 90);
  Geometry g;
  g.c = 3, g.h = 4, g.w = 4, g.m = 2, g.kh = 3, g.kw = 3,
  g.pad_top = g.pad_left = g.pad_bottom = g.pad_right = 1;
  std::vector<double> real_x, real_w, real_b;
  for (int8_t code : q.x) real_x.push_back((code - q.input_zero_point) * double(q.input_scale));
  for (size_t i = 0; i < q.w.size(); ++i)
    real_w.push_back((q.w[i] - q.weight_zero_points[i / 27]) * double(q.weight_scales[i / 27]));
  for (size_t c = 0; c < 2; ++c) real_b.push_back(q.bias[c] * double(q.bias_q().scales[c]));
  const std::vector<double> real = direct_conv(g, real_x, real_w, real_b);
  double largest = 0;
  for (double value : real) largest = std::max(largest, std::fabs(value));
  const float output_scale = static_cast<float>(largest / 100);
  auto expect_fallback = [&](const QuantizedRun& run, double alpha_for_negative) {
    if (!run.status.ok()) fail_msg("fallback run failed: %s", run.status.message().c_str());
    if (run.int8_kernel) fail_msg("the int8 kernel accepted a node it must refuse");
    for (size_t i = 0; i < real.size(); ++i) {
      const double value = real[i] < 0 ? real[i] * alpha_for_negative : real[i];
      const int expected = rule_quantize(static_cast<float>(value), output_scale, 0);
      if (std::abs(run.output[i] - expected) > 1)
        fail_msg("fallback output %zu: %d vs %d", i, run.output[i], expected);
    }
  };
  const StoredTensor x = stored("x", x_shape, DataType::kInt8, q.x,
                                per_tensor(q.input_scale, q.input_zero_point), false);
  const StoredTensor w = stored("w", w_shape, DataType::kInt8, q.w, q.weight_q(0), true);
  const StoredTensor b = stored("b", {2}, DataType::kInt32, q.bias, q.bias_q(), true);
  const Attributes pads = {{"pads", attr_ints({1, 1, 1, 1})}};
  Attributes leaky = pads;
  leaky["activation"] = attr_string("LeakyRelu");
  leaky["activation_alpha"] = attr_float(0.1f);
  expect_fallback(run_quantized("Conv", {x, w, b}, leaky, per_tensor(output_scale, 0)), 0.1);
  // A float bias, and an int32 bias at the wrong scale, are not the int8 rule's bias.
  std::vector<float> float_bias(real_b.begin(), real_b.end());
  expect_fallback(
      run_quantized("Conv", {x, w, stored("b", {2}, DataType::kFloat32, float_bias, {}, true)},
                    pads, per_tensor(output_scale, 0)),
      1.0);
  graph::Quantization wrong = q.bias_q();
  for (float& scale : wrong.scales) scale *= 2;
  std::vector<int32_t> halved;
  for (int32_t value : q.bias) halved.push_back(value / 2);
  QuantizedRun run =
      run_quantized("Conv", {x, w, stored("b", {2}, DataType::kInt32, halved, wrong, true)}, pads,
                    per_tensor(output_scale, 0));
  assert_true(run.status.ok() && !run.int8_kernel);

  // Gemm with beta != 1 and a C operand.
  QuantizedOperands gq = make_operands(6, 6, 2, true, 95);
  run = run_quantized(
      "Gemm",
      {stored("a", {3, 2}, DataType::kInt8, gq.x, per_tensor(gq.input_scale, 0), false),
       stored("b", {2, 2}, DataType::kInt8, gq.w, gq.weight_q(1), true),
       stored("c", {2}, DataType::kInt32, gq.bias, gq.bias_q(), true)},
      {{"beta", attr_float(2.0f)}}, per_tensor(0.05f, 0));
  assert_true(run.status.ok() && !run.int8_kernel);

  // An int32 accumulator could overflow: 40000 products of up to 255 x 255 (zero points 127
  // and -128 allow offsets of 255).
  const int64_t channels = 40000;
  run = run_quantized("Conv",
                      {stored("x", {1, channels, 1, 1}, DataType::kInt8, random_codes(channels, 1),
                              per_tensor(0.1f, 127), false),
                       stored("w", {1, channels, 1, 1}, DataType::kInt8, random_codes(channels, 2),
                              per_tensor(0.1f, -128), true)},
                      {}, per_tensor(10.0f, 0));
  assert_true(run.status.ok() && !run.int8_kernel);
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
      cmocka_unit_test(test_gemm),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_int8_conv_bit_exact),
      cmocka_unit_test(test_int8_conv_transpose_bit_exact),
      cmocka_unit_test(test_int8_gemm_bit_exact),
      cmocka_unit_test(test_int8_matmul_bit_exact),
      cmocka_unit_test(test_int8_fallbacks),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
