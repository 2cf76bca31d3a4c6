// Graph passes: constant folding, copy removal, BatchNormalization folding, activation and SiLU
// fusion, opset-specific forms, QDQ import. Each checks the structure of the written model and
// that the numbers are those of the unoptimized conversion (or a hand computation).
#include <cmath>
#include <fstream>

#include "converter_test_util.h"

#include "cmocka_last.h"  // last: cmocka's macros clash with standard headers

namespace {

using namespace orknn;
using namespace orknn::convert;
using namespace orknn::convert::test;

model::proto::Model graph_of(const std::string& path) {
  Result<model::proto::Model> graph = read_model_graph(path);
  if (!graph.ok()) fail_msg("%s", graph.status().message().c_str());
  return graph.value();
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  double relative) {
  assert_int_equal(actual.size(), expected.size());
  const double tolerance = relative * std::max(1e-6, max_abs(expected));
  const double difference = max_abs_difference(actual, expected);
  if (difference > tolerance) {
    fail_msg("max difference %g exceeds %g (max |expected| %g)", difference, tolerance,
             max_abs(expected));
  }
}

void test_shape_computation_is_folded(void**) {
  TempDir directory;
  OnnxModel model(13);
  model.input("x", {1, 3, 4, 4});
  model.node("Shape", {"x"}, {"shape"});
  model.initializer_i64("zero", {}, {0});
  set_int(&model.node("Gather", {"shape", "zero"}, {"batch"}), "axis", 0);
  model.initializer_i64("axes", {1}, {0});
  model.node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  model.initializer_i64("minus_one", {1}, {-1});
  set_int(&model.node("Concat", {"batch1", "minus_one"}, {"target"}), "axis", 0);
  model.node("Reshape", {"x", "target"}, {"y"});
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  const ConvertOptions options =
      float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(48, 4);
  const std::vector<float> y = convert_and_run(options, {x});
  assert_string_equal(op_sequence(graph_of(options.output_path)).c_str(), "Reshape");
  expect_close(y, x, 0.0);
  const model::proto::Model graph = graph_of(options.output_path);
  const model::proto::Tensor* output = find_tensor(graph, "y");
  assert_non_null(output);
  assert_int_equal(output->shape_size(), 2);
  assert_int_equal(output->shape(1), 48);
}

void test_copies_are_removed_and_output_names_kept(void**) {
  TempDir directory;
  OnnxModel model(13);
  model.input("x", {1, 8});
  model.node("Identity", {"x"}, {"a"});
  model.node("Dropout", {"a"}, {"b"});
  model.node("Relu", {"b"}, {"c"});
  model.node("Identity", {"c"}, {"y"});
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  const ConvertOptions options =
      float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(8, 5);
  const std::vector<float> y = convert_and_run(options, {x});
  const model::proto::Model graph = graph_of(options.output_path);
  assert_string_equal(op_sequence(graph).c_str(), "Relu");
  assert_string_equal(graph.tensors(graph.outputs(0)).name().c_str(), "y");
  for (size_t i = 0; i < x.size(); ++i) assert_true(y[i] == std::max(0.0f, x[i]));
}

// Conv -> BatchNormalization -> Relu, and a Gemm -> Clip (Relu6) and MatMul -> LeakyRelu.
OnnxModel fusion_model(int opset) {
  OnnxModel model(opset);
  model.input("x", {1, 3, 6, 6});
  model.initializer("w", {4, 3, 3, 3}, random_values(108, 6, 0.4f));
  model.initializer("b", {4}, random_values(4, 7, 0.2f));
  set_ints(&model.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  model.initializer("gamma", {4}, {1.2f, 0.8f, 1.0f, 1.5f});
  model.initializer("beta", {4}, {0.1f, -0.2f, 0.0f, 0.3f});
  model.initializer("mean", {4}, {0.05f, -0.1f, 0.2f, 0.0f});
  model.initializer("var", {4}, {1.5f, 0.7f, 1.1f, 2.0f});
  set_float(&model.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"}, "bn"),
            "epsilon", 1e-3f);
  model.node("Relu", {"n"}, {"r"}, "relu");
  model.node("Flatten", {"r"}, {"f"}, "flatten");
  model.initializer("g", {144, 10}, random_values(1440, 8, 0.1f));
  model.node("Gemm", {"f", "g"}, {"gm"}, "gemm");
  if (opset >= 11) {
    model.initializer("lo", {}, {0.0f});
    model.initializer("hi", {}, {0.5f});
    model.node("Clip", {"gm", "lo", "hi"}, {"clipped"}, "clip");
  } else {
    onnx::NodeProto& clip = model.node("Clip", {"gm"}, {"clipped"}, "clip");
    set_float(&clip, "min", 0.0f);
    set_float(&clip, "max", 0.5f);
  }
  model.initializer("m", {10, 5}, random_values(50, 9, 0.5f));
  model.node("MatMul", {"clipped", "m"}, {"mm"}, "matmul");
  set_float(&model.node("LeakyRelu", {"mm"}, {"y"}, "leaky"), "alpha", 0.2f);
  model.output("y");
  return model;
}

void test_batch_norm_and_activations_are_fused(void**) {
  TempDir directory;
  assert_true(fusion_model(13).save(directory.path("m.onnx")).ok());
  ConvertOptions optimized = float32_options(directory.path("m.onnx"), directory.path("o3.rknn"));
  ConvertOptions plain = optimized;
  plain.output_path = directory.path("o0.rknn");
  plain.optimization_level = 0;
  const std::vector<float> x = random_values(108, 10);
  const std::vector<float> fused = convert_and_run(optimized, {x});
  const std::vector<float> reference = convert_and_run(plain, {x});
  expect_close(fused, reference, 1e-5);

  const model::proto::Model graph = graph_of(optimized.output_path);
  assert_string_equal(op_sequence(graph).c_str(), "Conv,Flatten,Gemm,MatMul");
  assert_string_equal(find_attribute(graph, "Conv", "activation")->string_value().c_str(), "Relu");
  assert_string_equal(find_attribute(graph, "Gemm", "activation")->string_value().c_str(), "Clip");
  assert_true(find_attribute(graph, "Gemm", "activation_max")->float_value() == 0.5f);
  assert_string_equal(find_attribute(graph, "MatMul", "activation")->string_value().c_str(),
                      "LeakyRelu");
  assert_true(find_attribute(graph, "MatMul", "activation_alpha")->float_value() == 0.2f);
  assert_string_equal(op_sequence(graph_of(plain.output_path)).c_str(),
                      "Conv,BatchNormalization,Relu,Flatten,Gemm,Clip,MatMul,LeakyRelu");
}

void test_silu_is_fused(void**) {
  TempDir directory;
  OnnxModel model(13);
  model.input("x", {1, 2, 3, 3});
  model.node("Sigmoid", {"x"}, {"s"});
  model.node("Mul", {"s", "x"}, {"y"});
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  const ConvertOptions options =
      float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(18, 11, 4.0f);
  const std::vector<float> y = convert_and_run(options, {x});
  assert_string_equal(op_sequence(graph_of(options.output_path)).c_str(), "SiLU");
  std::vector<float> expected;
  for (float v : x) expected.push_back(v / (1.0f + std::exp(-v)));
  expect_close(y, expected, 1e-6);
}

// Conv + BatchNormalization + Sigmoid + Mul (YOLOv5's Conv block) becomes one Conv with a fused
// SiLU, in float32 (same numbers) and in int8 (one rounding: the Conv's output is not quantized
// before the SiLU).
void test_conv_silu_is_fused(void**) {
  TempDir directory;
  OnnxModel model(13);
  model.input("x", {1, 2, 4, 4});
  model.initializer("w", {3, 2, 3, 3}, random_values(54, 21, 0.5f));
  model.initializer("b", {3}, {0.1f, -0.2f, 0.3f});
  onnx::NodeProto& conv = model.node("Conv", {"x", "w", "b"}, {"c"});
  set_ints(&conv, "pads", {1, 1, 1, 1});
  model.node("Sigmoid", {"c"}, {"s"});
  model.node("Mul", {"c", "s"}, {"y"});
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(32, 22, 2.0f);
  const std::vector<float> fused = convert_and_run(options, {x});
  const model::proto::Model graph = graph_of(options.output_path);
  assert_string_equal(op_sequence(graph).c_str(), "Conv");
  assert_string_equal(find_attribute(graph, "Conv", "activation")->string_value().c_str(), "SiLU");
  ConvertOptions plain = options;
  plain.output_path = directory.path("plain.rknn");
  plain.optimization_level = 0;
  expect_close(fused, convert_and_run(plain, {x}), 1e-6);
  assert_string_equal(op_sequence(graph_of(plain.output_path)).c_str(), "Conv,Sigmoid,Mul");
}

// BatchNormalization with training_mode=1 (opset 14+) normalizes with the batch's statistics
// and updates the running ones; the converter writes it as the ops that compute that.
void test_batch_norm_training_mode(void**) {
  TempDir directory;
  OnnxModel model(15);
  model.input("x", {2, 3, 2, 2});
  model.initializer("scale", {3}, {1.0f, 2.0f, 0.5f});
  model.initializer("bias", {3}, {0.0f, 1.0f, -1.0f});
  model.initializer("mean", {3}, {0.5f, -0.5f, 2.0f});
  model.initializer("var", {3}, {1.0f, 4.0f, 0.25f});
  onnx::NodeProto& node = model.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
                                     {"y", "running_mean", "running_var"});
  set_int(&node, "training_mode", 1);
  set_float(&node, "momentum", 0.8f);
  set_float(&node, "epsilon", 0.01f);
  model.output("y").output("running_mean").output("running_var");
  assert_true(model.save(directory.path("m.onnx")).ok());
  const ConvertOptions options =
      float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(24, 23, 2.0f);

  // Per channel c: the 8 values of both images; population variance.
  const float scale[] = {1, 2, 0.5f}, bias[] = {0, 1, -1}, mean[] = {0.5f, -0.5f, 2};
  const float var[] = {1, 4, 0.25f};
  std::vector<float> y(24), running_mean, running_var;
  for (int c = 0; c < 3; ++c) {
    double sum = 0, squares = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) sum += x[(n * 3 + c) * 4 + i];
    const double batch_mean = sum / 8;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) squares += std::pow(x[(n * 3 + c) * 4 + i] - batch_mean, 2);
    const double batch_var = squares / 8;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) {
        const int at = (n * 3 + c) * 4 + i;
        y[at] = float((x[at] - batch_mean) / std::sqrt(batch_var + 0.01) * scale[c] + bias[c]);
      }
    running_mean.push_back(float(mean[c] * 0.8 + batch_mean * 0.2));
    running_var.push_back(float(var[c] * 0.8 + batch_var * 0.2));
  }
  expect_close(convert_and_run(options, {x}, 0), y, 1e-5);
  expect_close(convert_and_run(options, {x}, 1), running_mean, 1e-5);
  expect_close(convert_and_run(options, {x}, 2), running_var, 1e-5);
}

void test_legacy_softmax_is_marked(void**) {
  TempDir directory;
  OnnxModel model(11);
  model.input("x", {2, 3, 4});
  set_int(&model.node("Softmax", {"x"}, {"y"}), "axis", 1);
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  const ConvertOptions options =
      float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(24, 12, 3.0f);
  const std::vector<float> y = convert_and_run(options, {x});
  const model::proto::Model graph = graph_of(options.output_path);
  const model::proto::Attribute* legacy = find_attribute(graph, "Softmax", "legacy_coerce_2d");
  assert_non_null(legacy);
  assert_int_equal(legacy->int_value(), 1);
  // Opset < 13: softmax over the 12 values of each batch row, not over axis 1 alone.
  std::vector<float> expected(24);
  for (int n = 0; n < 2; ++n) {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += std::exp(x[n * 12 + i]);
    for (int i = 0; i < 12; ++i)
      expected[n * 12 + i] = static_cast<float>(std::exp(x[n * 12 + i]) / sum);
  }
  expect_close(y, expected, 1e-5);
}

// The same computation written with attribute operands (old opsets) and input operands (new
// opsets) converts to models that compute the same numbers.
struct OperandForms {
  const char* name;
  OnnxModel (*make)(bool new_form);
  std::vector<int64_t> input_shape;
};

OnnxModel slice_model(bool new_form) {
  OnnxModel model(new_form ? 13 : 9);
  model.input("x", {2, 6, 5});
  if (new_form) {
    model.initializer_i64("starts", {2}, {1, -4});
    model.initializer_i64("ends", {2}, {5, 100});
    model.initializer_i64("axes", {2}, {1, 2});
    model.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  } else {
    onnx::NodeProto& node = model.node("Slice", {"x"}, {"y"});
    set_ints(&node, "starts", {1, -4});
    set_ints(&node, "ends", {5, 100});
    set_ints(&node, "axes", {1, 2});
  }
  model.output("y");
  return model;
}

OnnxModel pad_model(bool new_form) {
  OnnxModel model(new_form ? 13 : 9);
  model.input("x", {1, 2, 3, 3});
  if (new_form) {
    model.initializer_i64("pads", {8}, {0, 0, 1, 2, 0, 0, 2, 1});
    model.initializer("value", {}, {0.75f});
    model.node("Pad", {"x", "pads", "value"}, {"y"});
  } else {
    onnx::NodeProto& node = model.node("Pad", {"x"}, {"y"});
    set_ints(&node, "pads", {0, 0, 1, 2, 0, 0, 2, 1});
    set_float(&node, "value", 0.75f);
  }
  model.output("y");
  return model;
}

OnnxModel split_model(bool new_form) {
  OnnxModel model(new_form ? 13 : 11);
  model.input("x", {1, 6, 2});
  onnx::NodeProto* node;
  if (new_form) {
    model.initializer_i64("split", {2}, {2, 4});
    node = &model.node("Split", {"x", "split"}, {"a", "b"});
  } else {
    node = &model.node("Split", {"x"}, {"a", "b"});
    set_ints(node, "split", {2, 4});
  }
  set_int(node, "axis", 1);
  model.node("Relu", {"b"}, {"y"});
  model.output("y");
  return model;
}

OnnxModel squeeze_model(bool new_form) {
  OnnxModel model(new_form ? 13 : 11);
  model.input("x", {1, 4, 1, 3});
  if (new_form) {
    model.initializer_i64("axes", {1}, {2});
    model.node("Squeeze", {"x", "axes"}, {"s"});
    model.initializer_i64("axes2", {1}, {-1});
    model.node("Unsqueeze", {"s", "axes2"}, {"y"});
  } else {
    set_ints(&model.node("Squeeze", {"x"}, {"s"}), "axes", {2});
    set_ints(&model.node("Unsqueeze", {"s"}, {"y"}), "axes", {3});
  }
  model.output("y");
  return model;
}

OnnxModel reduce_model(bool new_form) {
  OnnxModel model(new_form ? 18 : 13);
  model.input("x", {2, 3, 4});
  if (new_form) {
    model.initializer_i64("axes", {1}, {1});
    set_int(&model.node("ReduceMean", {"x", "axes"}, {"y"}), "keepdims", 0);
  } else {
    onnx::NodeProto& node = model.node("ReduceMean", {"x"}, {"y"});
    set_ints(&node, "axes", {1});
    set_int(&node, "keepdims", 0);
  }
  model.output("y");
  return model;
}

OnnxModel resize_model(bool new_form) {
  OnnxModel model(new_form ? 13 : 9);
  model.input("x", {1, 2, 3, 3});
  model.initializer("scales", {4}, {1, 1, 2, 2});
  if (new_form) {
    // Resize-13 nearest with asymmetric/floor is Upsample's arithmetic.
    onnx::NodeProto& node = model.node("Resize", {"x", "", "scales"}, {"y"});
    set_string(&node, "mode", "nearest");
    set_string(&node, "coordinate_transformation_mode", "asymmetric");
    set_string(&node, "nearest_mode", "floor");
  } else {
    set_string(&model.node("Upsample", {"x", "scales"}, {"y"}), "mode", "nearest");
  }
  model.output("y");
  return model;
}

void test_operand_forms_agree(void**) {
  const OperandForms cases[] = {
      {"Slice", slice_model, {2, 6, 5}},       {"Pad", pad_model, {1, 2, 3, 3}},
      {"Split", split_model, {1, 6, 2}},       {"Squeeze/Unsqueeze", squeeze_model, {1, 4, 1, 3}},
      {"ReduceMean", reduce_model, {2, 3, 4}}, {"Resize/Upsample", resize_model, {1, 2, 3, 3}},
  };
  for (const OperandForms& form : cases) {
    TempDir directory;
    assert_true(form.make(false).save(directory.path("old.onnx")).ok());
    assert_true(form.make(true).save(directory.path("new.onnx")).ok());
    int64_t count = 1;
    for (int64_t d : form.input_shape) count *= d;
    const std::vector<float> x = random_values(static_cast<size_t>(count), 13);
    const std::vector<float> old_values = convert_and_run(
        float32_options(directory.path("old.onnx"), directory.path("old.rknn")), {x});
    const std::vector<float> new_values = convert_and_run(
        float32_options(directory.path("new.onnx"), directory.path("new.rknn")), {x});
    if (old_values != new_values || old_values.empty()) fail_msg("%s: the forms differ", form.name);
  }
}

void test_clip_bounds_from_inputs_and_attributes(void**) {
  TempDir directory;
  for (int opset : {9, 13}) {
    OnnxModel model(opset);
    model.input("x", {1, 10});
    if (opset >= 11) {
      model.initializer("lo", {}, {-0.25f});
      model.initializer("hi", {}, {0.5f});
      model.node("Clip", {"x", "lo", "hi"}, {"y"});
    } else {
      onnx::NodeProto& node = model.node("Clip", {"x"}, {"y"});
      set_float(&node, "min", -0.25f);
      set_float(&node, "max", 0.5f);
    }
    model.output("y");
    const std::string name = "clip" + std::to_string(opset);
    assert_true(model.save(directory.path(name + ".onnx")).ok());
    const std::vector<float> x = random_values(10, 14);
    const std::vector<float> y = convert_and_run(
        float32_options(directory.path(name + ".onnx"), directory.path(name + ".rknn")), {x});
    for (size_t i = 0; i < x.size(); ++i)
      assert_true(y[i] == std::min(0.5f, std::max(-0.25f, x[i])));
  }
}

void test_float_subgraph_folding_follows_the_level(void**) {
  TempDir directory;
  OnnxModel model(13);
  model.input("x", {2, 3});
  model.initializer("wt", {4, 3}, random_values(12, 15));
  set_ints(&model.node("Transpose", {"wt"}, {"w"}), "perm", {1, 0});
  model.node("MatMul", {"x", "w"}, {"y"});
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  ConvertOptions folded = float32_options(directory.path("m.onnx"), directory.path("f.rknn"));
  ConvertOptions kept = folded;
  kept.output_path = directory.path("k.rknn");
  kept.optimization_level = 0;
  const std::vector<float> x = random_values(6, 16);
  const std::vector<float> a = convert_and_run(folded, {x});
  const std::vector<float> b = convert_and_run(kept, {x});
  assert_true(a == b);
  assert_string_equal(op_sequence(graph_of(folded.output_path)).c_str(), "MatMul");
  assert_string_equal(op_sequence(graph_of(kept.output_path)).c_str(), "Transpose,MatMul");
}

std::string int8_bytes(const std::vector<int8_t>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size());
}

// x -> Q/DQ (uint8) -> Conv(DQ(int8 per-channel weights), DQ(int32 bias)) -> Relu -> Q/DQ -> y
OnnxModel qdq_model() {
  OnnxModel model(13);
  model.input("x", {1, 2, 4, 4});
  model.initializer("x_scale", {}, {0.02f});
  model.initializer_typed("x_zero", {}, onnx::TensorProto::UINT8, std::string(1, '\x80'));
  model.node("QuantizeLinear", {"x", "x_scale", "x_zero"}, {"xq"});
  model.node("DequantizeLinear", {"xq", "x_scale", "x_zero"}, {"xd"});
  std::vector<int8_t> weights(3 * 2 * 3 * 3);
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = static_cast<int8_t>((i * 37 % 255) - 127);
  model.initializer_typed("w_q", {3, 2, 3, 3}, onnx::TensorProto::INT8, int8_bytes(weights));
  model.initializer("w_scale", {3}, {0.004f, 0.002f, 0.003f});
  model.initializer_typed("w_zero", {3}, onnx::TensorProto::INT8, std::string(3, '\0'));
  set_int(&model.node("DequantizeLinear", {"w_q", "w_scale", "w_zero"}, {"w"}), "axis", 0);
  const std::vector<int32_t> bias = {100, -200, 50};
  model.initializer_typed("b_q", {3}, onnx::TensorProto::INT32,
                          std::string(reinterpret_cast<const char*>(bias.data()), 12));
  model.initializer("b_scale", {3}, {0.02f * 0.004f, 0.02f * 0.002f, 0.02f * 0.003f});
  model.initializer_typed("b_zero", {3}, onnx::TensorProto::INT32, std::string(12, '\0'));
  set_int(&model.node("DequantizeLinear", {"b_q", "b_scale", "b_zero"}, {"b"}), "axis", 0);
  set_ints(&model.node("Conv", {"xd", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  model.node("Relu", {"c"}, {"r"}, "relu");
  model.initializer("y_scale", {}, {0.01f});
  model.initializer_typed("y_zero", {}, onnx::TensorProto::INT8, std::string(1, '\x80'));
  model.node("QuantizeLinear", {"r", "y_scale", "y_zero"}, {"yq"});
  model.node("DequantizeLinear", {"yq", "y_scale", "y_zero"}, {"y"});
  model.output("y");
  return model;
}

void test_qdq_model_is_imported_as_int8(void**) {
  TempDir directory;
  assert_true(qdq_model().save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  const std::vector<float> x = random_values(32, 17, 2.0f);
  const std::vector<float> y = convert_and_run(options, {x});
  const model::proto::Model graph = graph_of(options.output_path);
  assert_string_equal(op_sequence(graph).c_str(), "Conv");
  const model::proto::Tensor* input = find_tensor(graph, "x");
  assert_int_equal(input->data_type(), model::proto::DATA_TYPE_INT8);
  assert_int_equal(input->quantization().zero_point(0), 0);  // uint8 128 shifted to int8 0
  const model::proto::Tensor* output = find_tensor(graph, "y");
  assert_int_equal(output->data_type(), model::proto::DATA_TYPE_INT8);
  assert_true(output->quantization().scale(0) == 0.01f);
  assert_int_equal(output->quantization().zero_point(0), -128);

  // The same arithmetic done by hand: quantize x, convolve the integer codes, requantize.
  const float w_scale[3] = {0.004f, 0.002f, 0.003f};
  const int32_t bias[3] = {100, -200, 50};
  std::vector<float> expected(48);
  for (int oc = 0; oc < 3; ++oc) {
    for (int oy = 0; oy < 4; ++oy) {
      for (int ox = 0; ox < 4; ++ox) {
        int64_t accumulator = bias[oc];
        for (int ic = 0; ic < 2; ++ic) {
          for (int ky = 0; ky < 3; ++ky) {
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy + ky - 1, ix = ox + kx - 1;
              if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
              const int xq = quantize_int8(x[(ic * 4 + iy) * 4 + ix], 0.02f, 0);
              const size_t wi = static_cast<size_t>(((oc * 2 + ic) * 3 + ky) * 3 + kx);
              accumulator += static_cast<int64_t>(xq) * static_cast<int8_t>((wi * 37 % 255) - 127);
            }
          }
        }
        const double real = static_cast<double>(accumulator) * 0.02 * w_scale[oc];
        const int q = quantize_int8(static_cast<float>(std::max(0.0, real)), 0.01f, -128);
        expected[static_cast<size_t>((oc * 4 + oy) * 4 + ox)] = (q + 128) * 0.01f;
      }
    }
  }
  // One quantization step of difference is allowed (the runtime rounds the product once).
  expect_close(y, expected, 0.0101 / max_abs(expected));
}

void test_graph_cut_at_named_inputs_and_outputs(void**) {
  TempDir directory;
  assert_true(fusion_model(13).save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("o.rknn"));
  options.inputs = {"f"};
  options.input_size_list = {{1, 144}};
  options.outputs = {"clipped"};
  const std::vector<float> x = random_values(144, 18);
  convert_and_run(options, {x});
  const model::proto::Model graph = graph_of(options.output_path);
  assert_string_equal(op_sequence(graph).c_str(), "Gemm");
  assert_string_equal(graph.tensors(graph.inputs(0).tensor()).name().c_str(), "f");
  assert_string_equal(graph.tensors(graph.outputs(0)).name().c_str(), "clipped");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape_computation_is_folded),
      cmocka_unit_test(test_copies_are_removed_and_output_names_kept),
      cmocka_unit_test(test_batch_norm_and_activations_are_fused),
      cmocka_unit_test(test_silu_is_fused),
      cmocka_unit_test(test_conv_silu_is_fused),
      cmocka_unit_test(test_batch_norm_training_mode),
      cmocka_unit_test(test_legacy_softmax_is_marked),
      cmocka_unit_test(test_operand_forms_agree),
      cmocka_unit_test(test_clip_bounds_from_inputs_and_attributes),
      cmocka_unit_test(test_float_subgraph_folding_follows_the_level),
      cmocka_unit_test(test_qdq_model_is_imported_as_int8),
      cmocka_unit_test(test_graph_cut_at_named_inputs_and_outputs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
