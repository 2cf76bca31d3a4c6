// Reduction family: ReduceSum/Mean/Max/Min with axes as attribute or constant input, keepdims
// and noop_with_empty_axes, and ArgMax/ArgMin. Expected values are computed here by
// scattering every input element into its output cell (the kernels gather instead).
#include <cmath>
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

// Reduces `x` of `shape` over the dimensions flagged in `mask` (bit d = dimension d).
std::vector<float> reduce_expected(const std::string& op, const Shape& shape,
                                   const std::vector<float>& x, unsigned mask) {
  Shape out_shape = shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (mask & (1u << d)) out_shape[d] = 1;
  }
  const size_t out_count = static_cast<size_t>(graph::element_count(out_shape));
  const bool is_max = op == "ReduceMax", is_min = op == "ReduceMin";
  std::vector<double> cells(out_count, is_max ? -INFINITY : (is_min ? INFINITY : 0.0));
  std::vector<size_t> counts(out_count, 0);
  for (size_t linear = 0; linear < x.size(); ++linear) {
    size_t rest = linear, out_index = 0, out_stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const size_t coordinate = rest % static_cast<size_t>(shape[d]);
      rest /= static_cast<size_t>(shape[d]);
      if (!(mask & (1u << d))) out_index += coordinate * out_stride;
      out_stride *= static_cast<size_t>(out_shape[d]);
    }
    double& cell = cells[out_index];
    cell = is_max   ? std::fmax(cell, x[linear])
           : is_min ? std::fmin(cell, x[linear])
                    : cell + x[linear];
    ++counts[out_index];
  }
  std::vector<float> result;
  for (size_t i = 0; i < out_count; ++i) {
    result.push_back(static_cast<float>(op == "ReduceMean" ? cells[i] / counts[i] : cells[i]));
  }
  return result;
}

void test_reduce_hand_checked(void**) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  NodeSpec sum = node_spec("ReduceSum", {input("x", {2, 3}, x)}, {{"axes", attr_ints({1})}});
  NodeRun run = run_ok(sum);
  expect_shape(run.output_shapes[0], {2, 1});
  expect_close(run.outputs[0], {6, 15}, 0);
  sum.attributes["keepdims"] = attr_int(0);
  run = run_ok(sum);
  expect_shape(run.output_shapes[0], {2});
  NodeSpec mean =
      node_spec("ReduceMean", {input("x", {2, 3}, x), int64_constant("axes", {1}, {0})}, {});
  run = run_ok(mean);
  expect_shape(run.output_shapes[0], {1, 3});
  expect_close(run.outputs[0], {2.5f, 3.5f, 4.5f}, 0);
  NodeSpec max = node_spec("ReduceMax", {input("x", {2, 3}, {1, 9, 3, 4, -5, 6})},
                           {{"axes", attr_ints({-1})}});
  expect_close(run_ok(max).outputs[0], {9, 6}, 0);
  NodeSpec min = node_spec("ReduceMin", {input("x", {2, 3}, {1, 9, 3, 4, -5, 6})},
                           {{"keepdims", attr_int(0)}});
  run = run_ok(min);
  expect_shape(run.output_shapes[0], {});
  expect_close(run.outputs[0], {-5}, 0);
  NodeSpec nan = node_spec("ReduceMax", {input("x", {3}, {1, NAN, 2})}, {});
  assert_true(std::isnan(run_ok(nan).outputs[0][0]));
}

void test_reduce_every_axis_subset(void**) {
  const Shape shape = {2, 3, 5, 7};
  const auto x = random_values(210, -3, 3, 21);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    for (unsigned mask = 1; mask < 16; ++mask) {
      std::vector<int64_t> axes;
      for (int64_t d = 0; d < 4; ++d) {
        // Alternate positive and negative spellings of the same axis.
        if (mask & (1u << d)) axes.push_back(mask % 2 ? d : d - 4);
      }
      const auto expected = reduce_expected(op, shape, x, mask);
      // As a constant input (opset 13/18+) with keepdims=0, and as an attribute (older).
      NodeSpec as_input = node_spec(
          op,
          {input("x", shape, x), int64_constant("axes", {static_cast<int64_t>(axes.size())}, axes)},
          {{"keepdims", attr_int(0)}});
      NodeRun run = run_ok(as_input);
      Shape squeezed;
      for (size_t d = 0; d < 4; ++d) {
        if (!(mask & (1u << d))) squeezed.push_back(shape[d]);
      }
      expect_shape(run.output_shapes[0], squeezed);
      expect_close(run.outputs[0], expected, 1e-5);
      NodeSpec as_attribute = node_spec(op, {input("x", shape, x)}, {{"axes", attr_ints(axes)}});
      expect_close(run_ok(as_attribute).outputs[0], expected, 1e-5);
      if (mask == 5) check_precisions_agree(as_input, 1e-2, 0.05);
      if (mask == 10 || mask == 15) check_precisions_agree(as_attribute, 1e-2, 0.05);
    }
  }
}

void test_reduce_empty_axes(void**) {
  const auto x = random_values(12, -1, 1, 22);
  const float total = reduce_expected("ReduceSum", {3, 4}, x, 3)[0];
  // No axes reduce everything.
  NodeRun run = run_ok(node_spec("ReduceSum", {input("x", {3, 4}, x)}, {}));
  expect_shape(run.output_shapes[0], {1, 1});
  expect_close(run.outputs[0], {total}, 1e-6);
  run =
      run_ok(node_spec("ReduceSum", {input("x", {3, 4}, x), int64_constant("axes", {0}, {})}, {}));
  expect_close(run.outputs[0], {total}, 1e-6);
  // ... unless noop_with_empty_axes=1, which passes the input through.
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    NodeSpec noop = node_spec(op, {input("x", {3, 4}, x), int64_constant("axes", {0}, {})},
                              {{"noop_with_empty_axes", attr_int(1)}, {"keepdims", attr_int(0)}});
    run = run_ok(noop);
    expect_shape(run.output_shapes[0], {3, 4});
    expect_close(run.outputs[0], x, 0);
    noop.inputs.pop_back();
    expect_close(run_ok(noop).outputs[0], x, 0);
  }
  // Awkward shapes: a dimension of 1, a rank-1 prime length, a scalar input.
  run = run_ok(node_spec("ReduceMean", {input("x", {1, 13}, random_values(13, 0, 1, 23))},
                         {{"axes", attr_ints({0})}}));
  expect_shape(run.output_shapes[0], {1, 13});
  run = run_ok(node_spec("ReduceSum", {input("x", {}, {2.5f})}, {}));
  expect_shape(run.output_shapes[0], {});
  expect_close(run.outputs[0], {2.5f}, 0);
}

void test_reduce_errors(void**) {
  const std::vector<float> x(6);
  expect_invalid_model(
      node_spec("ReduceSum", {input("x", {2, 3}, x)}, {{"axes", attr_ints({1, -1})}}),
      "axis -1 is listed twice");
  expect_invalid_model(node_spec("ReduceMean", {input("x", {2, 3}, x)}, {{"axes", attr_ints({2})}}),
                       "axis 2 is out of range for rank 2");
  expect_invalid_model(
      node_spec("ReduceMax", {input("x", {2, 3}, x), int64_constant("axes", {1}, {0})},
                {{"axes", attr_ints({0})}}),
      "both as attribute and as input 1");
  TensorSpec runtime_axes = int64_constant("axes", {1}, {0});
  runtime_axes.constant = false;
  expect_invalid_model(node_spec("ReduceSum", {input("x", {2, 3}, x), runtime_axes}, {}),
                       "axes (input 1, 'axes') must be a constant");
  expect_invalid_model(
      node_spec("ReduceSum", {input("x", {2, 3}, x), constant("axes", {1}, {0})}, {}),
      "must be INT64 or INT32, not FP32");
  expect_invalid_model(
      node_spec("ReduceSum", {input("x", {2, 3}, x), int64_constant("axes", {1, 1}, {0})}, {}),
      "axes (input 1) must be 1-D");
  expect_invalid_model(node_spec("ReduceSum", {input("x", {2, 3}, x)}, {{"axes", attr_int(0)}}),
                       "attribute 'axes' is int");
}

// --- ArgMax / ArgMin -----------------------------------------------------------------------

NodeSpec arg_spec(const char* op, const Shape& shape, std::vector<float> x,
                  std::map<std::string, graph::Attribute> attributes) {
  NodeSpec spec = node_spec(op, {input("x", shape, std::move(x))}, std::move(attributes));
  spec.integer_outputs = {DataType::kInt64};
  return spec;
}

void test_arg_max(void**) {
  const std::vector<float> x = {1, 7, 7, 0, 5, 2, 5, -1};  // 2 x 4, ties in both rows
  NodeRun run = run_ok(arg_spec("ArgMax", {2, 4}, x, {{"axis", attr_int(1)}}));
  expect_shape(run.output_shapes[0], {2, 1});
  expect_close(run.outputs[0], {1, 0}, 0);
  run = run_ok(
      arg_spec("ArgMax", {2, 4}, x, {{"axis", attr_int(-1)}, {"select_last_index", attr_int(1)}}));
  expect_close(run.outputs[0], {2, 2}, 0);
  run = run_ok(arg_spec("ArgMin", {2, 4}, x, {{"axis", attr_int(1)}, {"keepdims", attr_int(0)}}));
  expect_shape(run.output_shapes[0], {2});
  expect_close(run.outputs[0], {3, 3}, 0);
  run = run_ok(arg_spec("ArgMax", {2, 4}, x, {}));  // axis 0 by default
  expect_shape(run.output_shapes[0], {1, 4});
  expect_close(run.outputs[0], {1, 0, 0, 0}, 0);
  run = run_ok(
      arg_spec("ArgMax", {2, 4}, {1, 1, 1, 1, 1, 1, 1, 1}, {{"select_last_index", attr_int(1)}}));
  expect_close(run.outputs[0], {1, 1, 1, 1}, 0);

  // Middle axis of 3 x 5 x 7 against a direct search; distinct values so every precision
  // (int8 keeps steps of 1 over a range of 105 distinct) finds the same index.
  std::vector<float> values(105);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 105) - 52;
  std::vector<float> expected;
  for (size_t n = 0; n < 3; ++n) {
    for (size_t i = 0; i < 7; ++i) {
      size_t best = 0;
      for (size_t k = 1; k < 5; ++k) {
        if (values[n * 35 + k * 7 + i] > values[n * 35 + best * 7 + i]) best = k;
      }
      expected.push_back(static_cast<float>(best));
    }
  }
  const NodeSpec spec =
      arg_spec("ArgMax", {3, 5, 7}, values, {{"axis", attr_int(1)}, {"keepdims", attr_int(0)}});
  for (Precision precision : {Precision::kFloat32, Precision::kFloat16, Precision::kInt8}) {
    run = run_ok(spec, precision);
    expect_shape(run.output_shapes[0], {3, 7});
    expect_close(run.outputs[0], expected, 0);
  }
}

void test_arg_max_errors(void**) {
  expect_invalid_model(arg_spec("ArgMax", {2, 3}, std::vector<float>(6), {{"axis", attr_int(2)}}),
                       "axis 2 is out of range for rank 2");
  expect_invalid_model(arg_spec("ArgMin", {}, {1}, {}), "axis 0 is out of range for rank 0");
  expect_invalid_model(arg_spec("ArgMax", {2, 0}, {}, {{"axis", attr_int(1)}}),
                       "axis 1 has size 0");
  NodeSpec float_output = node_spec("ArgMax", {input("x", {3}, {1, 2, 3})}, {});
  NodeRun run = run_node(float_output);
  assert_int_equal(static_cast<int>(run.status.code()),
                   static_cast<int>(StatusCode::kUnimplemented));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_hand_checked),
      cmocka_unit_test(test_reduce_every_axis_subset),
      cmocka_unit_test(test_reduce_empty_axes),
      cmocka_unit_test(test_reduce_errors),
      cmocka_unit_test(test_arg_max),
      cmocka_unit_test(test_arg_max_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
