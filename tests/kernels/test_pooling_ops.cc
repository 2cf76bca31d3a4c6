// Pooling family: MaxPool (with Indices), AveragePool, GlobalAveragePool, GlobalMaxPool.
// Expected values are hand-checked or come from an independent window enumeration written
// here, never from the reference kernels under test.
#include <cmath>
#include <cstring>
#include <limits>
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

// ---- hand-checked ---------------------------------------------------------------------------

void test_max_pool_hand_checked(void**) {
  NodeSpec spec = node_spec("MaxPool", {input("x", {1, 1, 4, 4}, iota_values(16, 1))},
                            {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 2, 2});
  expect_close(run.outputs[0], {6, 8, 14, 16}, 0);

  // Padding never wins, even against negative values.
  spec = node_spec("MaxPool", {input("x", {1, 1, 3, 3}, iota_values(9, -9.0f))},
                   {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  expect_close(run_ok(spec).outputs[0], {-5, -4, -4, -2, -1, -1, -2, -1, -1}, 0);

  // ceil_mode keeps a partial last window: 4 with kernel 3, stride 2 gives 2, not 1.
  spec = node_spec("MaxPool", {input("x", {1, 1, 4, 4}, iota_values(16, 1))},
                   {{"kernel_shape", attr_ints({3, 3})},
                    {"strides", attr_ints({2, 2})},
                    {"ceil_mode", attr_int(1)}});
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 2, 2});
  expect_close(run.outputs[0], {11, 12, 15, 16}, 0);
  spec.attributes["ceil_mode"] = attr_int(0);
  expect_close(run_ok(spec).outputs[0], {11}, 0);

  // ...but drops one that would start in the end padding: length 5, kernel 2, stride 2, pads 1.
  spec = node_spec("MaxPool", {input("x", {1, 1, 5}, iota_values(5, 1))},
                   {{"kernel_shape", attr_ints({2})},
                    {"strides", attr_ints({2})},
                    {"pads", attr_ints({1, 1})},
                    {"ceil_mode", attr_int(1)}});
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 3});
  expect_close(run.outputs[0], {1, 3, 5}, 0);

  spec = node_spec("MaxPool", {input("x", {1, 1, 4, 4}, iota_values(16, 1))},
                   {{"kernel_shape", attr_ints({2, 2})}, {"dilations", attr_ints({2, 2})}});
  run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 2, 2});
  expect_close(run.outputs[0], {11, 12, 15, 16}, 0);
}

void test_max_pool_indices(void**) {
  NodeSpec spec =
      node_spec("MaxPool", {input("x", {1, 1, 5, 5}, iota_values(25, 1))},
                {{"kernel_shape", attr_ints({5, 5})}, {"pads", attr_ints({2, 2, 2, 2})}});
  spec.output_count = 2;
  spec.integer_outputs = {DataType::kFloat32, DataType::kInt64};
  NodeRun run = run_ok(spec);
  expect_close(run.outputs[0], {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25},
               0);
  std::vector<float> indices;
  for (float value : run.outputs[0]) indices.push_back(value - 1);
  expect_close(run.outputs[1], indices, 0);

  // storage_order 1 numbers the input column-major within each plane; planes stay outermost.
  spec = node_spec("MaxPool", {input("x", {1, 2, 5, 5}, iota_values(50, 1))},
                   {{"kernel_shape", attr_ints({2, 2})},
                    {"strides", attr_ints({2, 2})},
                    {"storage_order", attr_int(1)}});
  spec.output_count = 2;
  spec.integer_outputs = {DataType::kFloat32, DataType::kInt64};
  run = run_ok(spec);
  expect_close(run.outputs[0], {7, 9, 17, 19, 32, 34, 42, 44}, 0);
  expect_close(run.outputs[1], {6, 16, 8, 18, 31, 41, 33, 43}, 0);
  check_precisions_agree(spec, 1e-2, 0.02);
}

void test_average_pool_hand_checked(void**) {
  NodeSpec spec =
      node_spec("AveragePool", {input("x", {1, 1, 3, 3}, iota_values(9, 1))},
                {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}});
  NodeRun run = run_ok(spec);
  expect_shape(run.output_shapes[0], {1, 1, 4, 4});
  expect_close(run.outputs[0],
               {1, 1.5f, 2.5f, 3, 2.5f, 3, 4, 4.5f, 5.5f, 6, 7, 7.5f, 7, 7.5f, 8.5f, 9}, 1e-6);
  spec.attributes["count_include_pad"] = attr_int(1);
  expect_close(run_ok(spec).outputs[0],
               {0.25f, 0.75f, 1.25f, 0.75f, 1.25f, 3, 4, 2.25f, 2.75f, 6, 7, 3.75f, 1.75f, 3.75f,
                4.25f, 2.25f},
               1e-6);

  // A ceil-mode window past the padded input counts only the taps inside it, with or without
  // count_include_pad: [1 2] [3 4] [5 _].
  for (int include : {0, 1}) {
    spec = node_spec("AveragePool", {input("x", {1, 1, 5}, iota_values(5, 1))},
                     {{"kernel_shape", attr_ints({2})},
                      {"strides", attr_ints({2})},
                      {"ceil_mode", attr_int(1)},
                      {"count_include_pad", attr_int(include)}});
    expect_close(run_ok(spec).outputs[0], {1.5f, 3.5f, 5}, 1e-6);
  }
  // Asymmetric padding, count_include_pad: pads [1, 0] on [2 4 6] with kernel 2 stride 2:
  // windows [pad 2] [4 6].
  spec = node_spec("AveragePool", {input("x", {1, 1, 3}, {2, 4, 6})},
                   {{"kernel_shape", attr_ints({2})},
                    {"strides", attr_ints({2})},
                    {"pads", attr_ints({1, 0})},
                    {"count_include_pad", attr_int(1)}});
  expect_close(run_ok(spec).outputs[0], {1, 5}, 1e-6);
  // Dilation (opset 19): taps 0 and 2.
  spec = node_spec("AveragePool", {input("x", {1, 1, 4}, {1, 2, 3, 4})},
                   {{"kernel_shape", attr_ints({2})}, {"dilations", attr_ints({2})}});
  expect_close(run_ok(spec).outputs[0], {2, 3}, 1e-6);
}

void test_global_pools(void**) {
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -8};
  NodeRun run = run_ok(node_spec("GlobalAveragePool", {input("x", {1, 2, 2, 2}, x)}, {}));
  expect_shape(run.output_shapes[0], {1, 2, 1, 1});
  expect_close(run.outputs[0], {2.5f, -3.5f}, 1e-6);
  run = run_ok(node_spec("GlobalMaxPool", {input("x", {2, 1, 4}, x)}, {}));
  expect_shape(run.output_shapes[0], {2, 1, 1});
  expect_close(run.outputs[0], {4, -1}, 0);
  // Any number of spatial axes.
  run = run_ok(node_spec("GlobalMaxPool", {input("x", {1, 1, 2, 2, 2}, x)}, {}));
  expect_shape(run.output_shapes[0], {1, 1, 1, 1, 1});
  expect_close(run.outputs[0], {4}, 0);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    NodeSpec spec = node_spec(op, {input("x", {2, 3, 7, 5}, random_values(210, -2, 2, 9))}, {});
    check_precisions_agree(spec, 1e-2, 0.02);
    expect_error(node_spec(op, {input("x", {2, 3}, std::vector<float>(6))}, {}),
                 StatusCode::kInvalidModel, "must have rank >= 3");
  }
}

// ---- randomized variants against an independent enumeration ------------------------------------

struct Window {
  int64_t h = 1, w = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  bool ceil = false;
};

int64_t output_length(int64_t length, int64_t kernel, int64_t stride, int64_t dilation,
                      int64_t begin, int64_t end, bool ceil) {
  const double span = static_cast<double>(length + begin + end - dilation * (kernel - 1) - 1);
  int64_t out =
      static_cast<int64_t>(ceil ? std::ceil(span / stride) : std::floor(span / stride)) + 1;
  if (ceil && (out - 1) * stride >= length + begin) --out;
  return out;
}

// Enumerates every window tap, classifying it as inside the input, in the padding, or beyond.
std::vector<double> enumerate_pool(const Window& g, int64_t planes, const std::vector<float>& x,
                                   bool max, bool include_pad) {
  const int64_t oh = output_length(g.h, g.kh, g.sh, g.dh, g.top, g.bottom, g.ceil);
  const int64_t ow = output_length(g.w, g.kw, g.sw, g.dw, g.left, g.right, g.ceil);
  std::vector<double> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t y = oy * g.sh - g.top + ky * g.dh, xx = ox * g.sw - g.left + kx * g.dw;
            const bool in_padded =
                y >= -g.top && y < g.h + g.bottom && xx >= -g.left && xx < g.w + g.right;
            padded += in_padded;
            if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) continue;
            const double value = x[(p * g.h + y) * g.w + xx];
            best = std::max(best, value);
            sum += value;
            ++inside;
          }
        out.push_back(max ? best : sum / static_cast<double>(include_pad ? padded : inside));
      }
  return out;
}

void test_pool_variants(void**) {
  std::vector<std::pair<const char*, Window>> windows;
  auto add = [&](const char* name, auto edit) {
    Window g;
    g.h = 7, g.w = 6, g.kh = 3, g.kw = 2;
    edit(g);
    windows.push_back({name, g});
  };
  add("plain", [](Window&) {});
  add("strides", [](Window& g) { g.sh = 2, g.sw = 3; });
  add("asymmetric pads", [](Window& g) { g.top = 2, g.bottom = 0, g.left = 0, g.right = 1; });
  add("ceil", [](Window& g) { g.sh = 2, g.sw = 4, g.ceil = true, g.bottom = 1; });
  add("ceil drops",
      [](Window& g) { g.h = 5, g.kh = 2, g.sh = 2, g.top = g.bottom = 1, g.ceil = true; });
  add("dilations", [](Window& g) { g.dh = 2, g.dw = 3, g.top = 1, g.right = 1; });
  add("primes", [](Window& g) {
    g.h = 13, g.w = 11, g.kh = 5, g.kw = 3, g.sh = 3, g.sw = 2, g.top = 2, g.bottom = 4, g.left = 1,
    g.ceil = true;
  });
  add("1x1 stride", [](Window& g) { g.kh = g.kw = 1, g.sh = g.sw = 2; });
  uint32_t seed = 1;
  for (const auto& [name, g] : windows) {
    const int64_t n = 2, c = 3;
    const std::vector<float> x = random_values(n * c * g.h * g.w, -3, 3, seed++);
    const Attributes attributes = {{"kernel_shape", attr_ints({g.kh, g.kw})},
                                   {"strides", attr_ints({g.sh, g.sw})},
                                   {"dilations", attr_ints({g.dh, g.dw})},
                                   {"pads", attr_ints({g.top, g.left, g.bottom, g.right})},
                                   {"ceil_mode", attr_int(g.ceil)}};
    const Shape out_shape = {n, c, output_length(g.h, g.kh, g.sh, g.dh, g.top, g.bottom, g.ceil),
                             output_length(g.w, g.kw, g.sw, g.dw, g.left, g.right, g.ceil)};
    for (int variant = 0; variant < 3; ++variant) {
      const bool max = variant == 0, include_pad = variant == 2;
      Attributes with = attributes;
      if (!max) with["count_include_pad"] = attr_int(include_pad);
      NodeSpec spec =
          node_spec(max ? "MaxPool" : "AveragePool", {input("x", {n, c, g.h, g.w}, x)}, with);
      NodeRun run = run_ok(spec);
      expect_shape(run.output_shapes[0], out_shape);
      const std::vector<double> expected = enumerate_pool(g, n * c, x, max, include_pad);
      expect_close(run.outputs[0], std::vector<float>(expected.begin(), expected.end()), 1e-5);
      check_precisions_agree(spec, 1e-2, 0.03);
    }
  }
}

void test_pool_auto_pad(void**) {
  // Length 7, kernel 3, stride 2: SAME gives 4 outputs with total padding 2 (1 + 1); length 6,
  // kernel 2, stride 1: 6 outputs with padding 1, at the end (UPPER) or the start (LOWER).
  const std::vector<float> x = random_values(42, -1, 1, 77);
  struct Case {
    const char* mode;
    int64_t top, left, bottom, right;
  };
  for (const Case& c : {Case{"SAME_UPPER", 1, 0, 1, 1}, Case{"SAME_LOWER", 1, 1, 1, 0},
                        Case{"VALID", 0, 0, 0, 0}}) {
    Window g;
    g.h = 7, g.w = 6, g.kh = 3, g.kw = 2, g.sh = 2;
    g.top = c.top, g.left = c.left, g.bottom = c.bottom, g.right = c.right;
    for (bool max : {true, false}) {
      NodeSpec spec = node_spec(max ? "MaxPool" : "AveragePool", {input("x", {1, 1, 7, 6}, x)},
                                {{"kernel_shape", attr_ints({3, 2})},
                                 {"strides", attr_ints({2, 1})},
                                 {"auto_pad", attr_string(c.mode)}});
      const std::vector<double> expected = enumerate_pool(g, 1, x, max, false);
      expect_close(run_ok(spec).outputs[0], std::vector<float>(expected.begin(), expected.end()),
                   1e-5);
    }
  }
}

// ---- 3-D windows and integer data -------------------------------------------------------------

struct Volume {
  int64_t size[3], kernel[3], stride[3], dilation[3], begin[3], end[3];
  bool ceil;
};

// Every window tap of a 3-D pooling, enumerated per output; also the flat index of each maximum.
std::vector<double> enumerate_pool_3d(const Volume& v, int64_t planes, const std::vector<float>& x,
                                      bool max, bool include_pad, std::vector<float>* argmax) {
  int64_t out[3];
  for (int d = 0; d < 3; ++d) {
    out[d] = output_length(v.size[d], v.kernel[d], v.stride[d], v.dilation[d], v.begin[d], v.end[d],
                           v.ceil);
  }
  const int64_t volume = v.size[0] * v.size[1] * v.size[2];
  std::vector<double> result;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t inside = 0, padded = 0, best_index = 0;
          const int64_t o[3] = {o0, o1, o2};
          for (int64_t k0 = 0; k0 < v.kernel[0]; ++k0)
            for (int64_t k1 = 0; k1 < v.kernel[1]; ++k1)
              for (int64_t k2 = 0; k2 < v.kernel[2]; ++k2) {
                const int64_t k[3] = {k0, k1, k2};
                int64_t at[3];
                bool in_input = true, in_padded = true;
                for (int d = 0; d < 3; ++d) {
                  at[d] = o[d] * v.stride[d] - v.begin[d] + k[d] * v.dilation[d];
                  in_input = in_input && at[d] >= 0 && at[d] < v.size[d];
                  in_padded = in_padded && at[d] >= -v.begin[d] && at[d] < v.size[d] + v.end[d];
                }
                padded += in_padded;
                if (!in_input) continue;
                const int64_t index = (at[0] * v.size[1] + at[1]) * v.size[2] + at[2];
                const double value = x[p * volume + index];
                if (value > best) best = value, best_index = p * volume + index;
                sum += value;
                ++inside;
              }
          result.push_back(max ? best : sum / double(include_pad ? padded : inside));
          if (argmax) argmax->push_back(float(best_index));
        }
  return result;
}

void test_pool_3d(void**) {
  const Volume volumes[] = {
      {{4, 5, 6}, {2, 3, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false},
      {{5, 4, 7}, {3, 2, 3}, {2, 1, 3}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}, false},
      {{7, 6, 5}, {2, 2, 2}, {2, 2, 1}, {2, 1, 2}, {0, 1, 1}, {1, 0, 1}, true},
  };
  uint32_t seed = 40;
  for (const Volume& v : volumes) {
    const int64_t n = 1, c = 2;
    const std::vector<float> x =
        random_values(n * c * v.size[0] * v.size[1] * v.size[2], -3, 3, seed++);
    const Attributes attributes = {
        {"kernel_shape", attr_ints({v.kernel[0], v.kernel[1], v.kernel[2]})},
        {"strides", attr_ints({v.stride[0], v.stride[1], v.stride[2]})},
        {"dilations", attr_ints({v.dilation[0], v.dilation[1], v.dilation[2]})},
        {"pads", attr_ints({v.begin[0], v.begin[1], v.begin[2], v.end[0], v.end[1], v.end[2]})},
        {"ceil_mode", attr_int(v.ceil)}};
    for (int variant = 0; variant < 3; ++variant) {
      const bool max = variant == 0, include_pad = variant == 2;
      Attributes with = attributes;
      if (!max) with["count_include_pad"] = attr_int(include_pad);
      NodeSpec spec = node_spec(max ? "MaxPool" : "AveragePool",
                                {input("x", {n, c, v.size[0], v.size[1], v.size[2]}, x)}, with);
      if (max) {
        spec.output_count = 2;
        spec.integer_outputs = {DataType::kFloat32, DataType::kInt64};
      }
      NodeRun run = run_ok(spec);
      std::vector<float> argmax;
      const std::vector<double> expected =
          enumerate_pool_3d(v, n * c, x, max, include_pad, &argmax);
      expect_close(run.outputs[0], std::vector<float>(expected.begin(), expected.end()), 1e-5);
      if (max) expect_close(run.outputs[1], argmax, 0);
    }
  }
  // Column-major indices are a 2-D notion.
  NodeSpec spec =
      node_spec("MaxPool", {input("x", {1, 1, 2, 2, 2}, iota_values(8))},
                {{"kernel_shape", attr_ints({2, 2, 2})}, {"storage_order", attr_int(1)}});
  spec.output_count = 2;
  spec.integer_outputs = {DataType::kFloat32, DataType::kInt64};
  expect_error(spec, StatusCode::kUnimplemented, "storage_order 1 (column-major indices)");
}

void test_max_pool_integer(void**) {
  // uint8 beyond int8's range and int8 below zero: the maximum in the data's own type.
  StoredRun run = run_stored_ok(
      "MaxPool",
      {stored("x", DataType::kUInt8, {1, 1, 2, 3}, std::vector<uint8_t>{1, 250, 3, 200, 5, 255})},
      {{"kernel_shape", attr_ints({2, 2})}}, {{DataType::kUInt8, {}}});
  const std::vector<uint8_t> unsigned_max = from_bytes<uint8_t>(run.outputs[0]);
  assert_int_equal(unsigned_max.size(), 2);
  assert_int_equal(unsigned_max[0], 250);
  assert_int_equal(unsigned_max[1], 255);
  run = run_stored_ok("MaxPool",
                      {stored("x", DataType::kInt8, {1, 1, 2, 2, 2},
                              std::vector<int8_t>{-128, -7, -9, -100, -3, -50, -4, -120})},
                      {{"kernel_shape", attr_ints({2, 2, 2})}}, {{DataType::kInt8, {}}});
  const std::vector<int8_t> signed_max = from_bytes<int8_t>(run.outputs[0]);
  assert_int_equal(signed_max.size(), 1);
  assert_int_equal(signed_max[0], -3);
  // The output keeps the input's type.
  run =
      run_stored("MaxPool", {stored("x", DataType::kUInt8, {1, 1, 2}, std::vector<uint8_t>{1, 2})},
                 {{"kernel_shape", attr_ints({2})}}, {{DataType::kInt32, {}}});
  assert_false(run.status.ok());
  assert_non_null(strstr(run.status.message().c_str(), "must have the input's type UINT8"));
}

void test_pool_errors(void**) {
  auto pool = [](const char* op, Shape x, Attributes attributes) {
    return node_spec(op, {input("x", x, std::vector<float>(graph::element_count(x)))},
                     std::move(attributes));
  };
  const StatusCode invalid = StatusCode::kInvalidModel;
  expect_error(pool("MaxPool", {1, 1, 4, 4}, {}), invalid, "'kernel_shape' is required");
  expect_error(pool("AveragePool", {1, 1, 4, 4}, {{"kernel_shape", attr_ints({2})}}), invalid,
               "'kernel_shape' has 1 values for 2 spatial axes");
  expect_error(pool("MaxPool", {1, 1, 4, 4}, {{"kernel_shape", attr_ints({2, 0})}}), invalid,
               "'kernel_shape' value 0 at axis 1");
  expect_error(pool("MaxPool", {1, 1, 4, 4},
                    {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({0, 2, 0, 0})}}),
               invalid, "pads 2, 0 at spatial axis 1 must be smaller than the kernel extent 2");
  expect_error(pool("MaxPool", {1, 1, 4, 4},
                    {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({0, 1})}}),
               invalid, "'strides' value 0 at position 0 is below 1");
  expect_error(pool("MaxPool", {1, 1, 4, 4},
                    {{"kernel_shape", attr_ints({2, 2})}, {"storage_order", attr_int(2)}}),
               invalid, "'storage_order' is 2, expected 0 or 1");
  expect_error(pool("AveragePool", {1, 1, 4, 4},
                    {{"kernel_shape", attr_ints({2, 2})}, {"ceil_mode", attr_int(3)}}),
               invalid, "'ceil_mode' is 3, expected 0 or 1");
  expect_error(pool("AveragePool", {1, 1, 4, 4},
                    {{"kernel_shape", attr_ints({2, 2})}, {"auto_pad", attr_string("same")}}),
               invalid, "auto_pad 'same' is not one of");
  expect_error(pool("MaxPool", {1, 1, 3, 3}, {{"kernel_shape", attr_ints({5, 1})}}), invalid,
               "kernel extent 5 (kernel 5, dilation 1) is larger than the padded input 3");
  expect_error(pool("MaxPool", {4, 4}, {{"kernel_shape", attr_ints({2})}}), invalid,
               "must have rank >= 3");
  expect_error(pool("MaxPool", {1, 1, 2, 2, 2, 2, 2, 2, 2},
                    {{"kernel_shape", attr_ints({1, 1, 1, 1, 1, 1, 1})}}),
               StatusCode::kUnimplemented,
               "7-D pooling is not supported by the CPU kernels (up to 6-D is)");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_max_pool_hand_checked),
      cmocka_unit_test(test_max_pool_indices),
      cmocka_unit_test(test_average_pool_hand_checked),
      cmocka_unit_test(test_global_pools),
      cmocka_unit_test(test_pool_variants),
      cmocka_unit_test(test_pool_auto_pad),
      cmocka_unit_test(test_pool_3d),
      cmocka_unit_test(test_max_pool_integer),
      cmocka_unit_test(test_pool_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
