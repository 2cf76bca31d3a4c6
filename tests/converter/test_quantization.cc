// Precisions: float16, int8 (normal, kl_divergence, mmse; channel and layer), the parameter forms
// docs/quantization.md prescribes, sharing through data-movement ops, hybrid quantization files,
// and deterministic calibration.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "converter_test_util.h"
#include "dataset/npy_file.h"
#include "quantize/tensor_statistics.h"

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

// x [1,3,8,8] -> Conv(8, 3x3) -> Relu -> Conv(8, 1x1, bias) -> Reshape [1,8,64] -> Transpose
// -> MaxPool-free tail: Flatten -> Gemm(10) -> y
OnnxModel small_network() {
  OnnxModel model(13);
  model.input("x", {1, 3, 8, 8});
  model.initializer("w1", {8, 3, 3, 3}, random_values(216, 21, 0.3f));
  model.initializer("b1", {8}, random_values(8, 22, 0.1f));
  set_ints(&model.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  model.node("Relu", {"c1"}, {"r1"}, "relu1");
  model.initializer("w2", {8, 8, 1, 1}, random_values(64, 23, 0.5f));
  model.initializer("b2", {8}, random_values(8, 24, 0.1f));
  model.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  model.initializer_i64("shape", {3}, {1, 8, 64});
  model.node("Reshape", {"c2", "shape"}, {"reshaped"}, "reshape");
  set_ints(&model.node("Transpose", {"reshaped"}, {"transposed"}, "transpose"), "perm", {0, 2, 1});
  model.node("Flatten", {"transposed"}, {"flat"}, "flatten");
  model.initializer("g", {10, 512}, random_values(5120, 25, 0.05f));
  model.initializer("gb", {10}, random_values(10, 26, 0.1f));
  set_int(&model.node("Gemm", {"flat", "g", "gb"}, {"y"}, "gemm"), "transB", 1);
  model.output("y");
  return model;
}

// A dataset of `count` .npy samples for input shape [1,3,8,8].
void write_dataset(const TempDir& directory, int count) {
  std::ofstream list(directory.path("dataset.txt"));
  for (int i = 0; i < count; ++i) {
    const std::string name = "sample" + std::to_string(i) + ".npy";
    write_npy(directory.path(name), {1, 3, 8, 8}, random_values(192, 100 + i, 2.0f));
    list << name << "\n";
  }
}

ConvertOptions int8_options(const TempDir& directory, const std::string& output) {
  ConvertOptions options;
  options.model_path = directory.path("m.onnx");
  options.output_path = directory.path(output);
  options.dataset_path = directory.path("dataset.txt");
  options.quiet = true;
  return options;
}

std::vector<float> reference_output(const TempDir& directory, const std::vector<float>& x) {
  return convert_and_run(float32_options(directory.path("m.onnx"), directory.path("f32.rknn")),
                         {x});
}

void test_int8_channel_forms_and_accuracy(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 8);
  const std::vector<float> x = random_values(192, 100, 2.0f);
  const std::vector<float> reference = reference_output(directory, x);
  const ConvertOptions options = int8_options(directory, "i8.rknn");
  const std::vector<float> y = convert_and_run(options, {x});
  const double similarity = cosine(y, reference);
  if (similarity < 0.99) fail_msg("cosine %f < 0.99", similarity);

  const model::proto::Model graph = graph_of(options.output_path);
  for (const char* name : {"x", "r1", "c2", "reshaped", "transposed", "flat", "y"}) {
    const model::proto::Tensor* tensor = find_tensor(graph, name);
    if (!tensor) fail_msg("tensor %s missing", name);
    assert_int_equal(tensor->data_type(), model::proto::DATA_TYPE_INT8);
    assert_int_equal(tensor->quantization().scale_size(), 1);
  }
  // Data movement shares the producer's parameters (level 3), so bytes move unchanged.
  const model::proto::Tensor* produced = find_tensor(graph, "c2");
  for (const char* name : {"reshaped", "transposed", "flat"}) {
    const model::proto::Tensor* moved = find_tensor(graph, name);
    assert_true(moved->quantization().scale(0) == produced->quantization().scale(0));
    assert_int_equal(moved->quantization().zero_point(0), produced->quantization().zero_point(0));
  }
  // Weights: int8, symmetric, one scale per output channel (Conv axis 0, Gemm transB axis 0);
  // biases: int32 with scale input_scale x weight_scale[c].
  const model::proto::Tensor* input = find_tensor(graph, "x");
  for (const model::proto::Node& node : graph.nodes()) {
    if (node.op_type() != "Conv" && node.op_type() != "Gemm") continue;
    const model::proto::Tensor& weights = graph.tensors(node.inputs(1));
    const model::proto::Tensor& bias = graph.tensors(node.inputs(2));
    const model::proto::Tensor& in = graph.tensors(node.inputs(0));
    assert_int_equal(weights.data_type(), model::proto::DATA_TYPE_INT8);
    assert_int_equal(weights.quantization().scale_size(), weights.shape(0));
    assert_int_equal(weights.quantization().axis(), 0);
    for (int32_t zero_point : weights.quantization().zero_point()) assert_int_equal(zero_point, 0);
    assert_int_equal(bias.data_type(), model::proto::DATA_TYPE_INT32);
    for (int c = 0; c < bias.quantization().scale_size(); ++c) {
      assert_true(bias.quantization().scale(c) ==
                  in.quantization().scale(0) * weights.quantization().scale(c));
      assert_int_equal(bias.quantization().zero_point(c), 0);
    }
  }
  assert_non_null(input);
}

void test_int8_layer_method(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 4);
  ConvertOptions options = int8_options(directory, "layer.rknn");
  options.quantized_method = QuantizedMethod::kLayer;
  const std::vector<float> x = random_values(192, 101, 2.0f);
  const std::vector<float> y = convert_and_run(options, {x});
  const double similarity = cosine(y, reference_output(directory, x));
  if (similarity < 0.98) fail_msg("cosine %f < 0.98", similarity);
  const model::proto::Model graph = graph_of(options.output_path);
  for (const model::proto::Node& node : graph.nodes()) {
    if (node.op_type() != "Conv" && node.op_type() != "Gemm") continue;
    assert_int_equal(graph.tensors(node.inputs(1)).quantization().scale_size(), 1);
    assert_int_equal(graph.tensors(node.inputs(2)).quantization().scale_size(), 1);
  }
}

void test_kl_divergence_and_mmse_convert_accurately(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 6);
  const std::vector<float> x = random_values(192, 102, 2.0f);
  const std::vector<float> reference = reference_output(directory, x);
  for (QuantizedAlgorithm algorithm :
       {QuantizedAlgorithm::kKlDivergence, QuantizedAlgorithm::kMmse}) {
    ConvertOptions options =
        int8_options(directory, std::string(algorithm_name(algorithm)) + ".rknn");
    options.quantized_algorithm = algorithm;
    const std::vector<float> y = convert_and_run(options, {x});
    const double similarity = cosine(y, reference);
    if (similarity < 0.98) fail_msg("%s: cosine %f < 0.98", algorithm_name(algorithm), similarity);
  }
}

void test_range_algorithms_clip_outliers(void**) {
  // 20000 bell-shaped values (a sum of uniforms, within [-1, 1]) and a few outliers at 50.
  TensorStatistics statistics(true);
  std::vector<float> values(20000, 0.0f);
  for (int part = 0; part < 4; ++part) {
    const std::vector<float> uniform = random_values(values.size(), 600 + part, 0.25f);
    for (size_t i = 0; i < values.size(); ++i) values[i] += uniform[i];
  }
  values.insert(values.end(), {50.0f, -3.0f});
  statistics.add(values.data(), values.size());
  const TensorRange normal = statistics.select_range(QuantizedAlgorithm::kNormal);
  assert_true(normal.max == 50.0f);
  const TensorRange kl = statistics.select_range(QuantizedAlgorithm::kKlDivergence);
  if (!(kl.max < 25.0f && kl.max >= 0.5f)) fail_msg("kl max %f", kl.max);
  // MMSE weighs the squared error: one outlier among 20000 values is worth keeping, so it may
  // stay, but the range is never wider than observed.
  const TensorRange mmse = statistics.select_range(QuantizedAlgorithm::kMmse);
  assert_true(mmse.max <= normal.max && mmse.min >= normal.min);

  // A long-tailed (Laplace) distribution: rounding error over the bulk outweighs clipping the
  // rare large values, so MMSE clips below the observed maximum.
  std::vector<float> laplace = random_values(200000, 610, 1.0f);
  for (float& value : laplace) {
    const float u = std::max(1e-7f, std::fabs(value));
    value = (value < 0 ? -1.0f : 1.0f) * -std::log(u);
  }
  TensorStatistics tails(true);
  tails.add(laplace.data(), laplace.size());
  const TensorRange observed = tails.select_range(QuantizedAlgorithm::kNormal);
  const TensorRange clipped = tails.select_range(QuantizedAlgorithm::kMmse);
  if (!(clipped.max < 0.99f * observed.max && clipped.max > 0.3f * observed.max)) {
    fail_msg("mmse %f vs observed %f", clipped.max, observed.max);
  }
}

void test_mmse_keeps_a_uniform_range_and_ignores_exact_zeros(void**) {
  // Uniform values: clipping any of them costs more than the finer step saves, so MMSE keeps
  // the observed range. Judging the rounding error at the histogram's bin centres (bins here
  // are 1/1024 wide against a step of 1/255) would favour whichever scale happens to put grid
  // points on them.
  std::vector<float> uniform = random_values(100000, 620, 0.5f);
  for (float& value : uniform) value += 0.5f;
  TensorStatistics statistics(true);
  statistics.add(uniform.data(), uniform.size());
  const TensorRange observed = statistics.select_range(QuantizedAlgorithm::kNormal);
  const TensorRange mmse = statistics.select_range(QuantizedAlgorithm::kMmse);
  if (mmse.max != observed.max) fail_msg("mmse max %f, observed %f", mmse.max, observed.max);

  // Exact zeros (a Relu's output) cost nothing on any grid: adding them changes nothing.
  std::vector<float> laplace = random_values(50000, 621, 1.0f);
  for (float& value : laplace) value = -std::log(std::max(1e-7f, std::fabs(value)));
  std::vector<float> tail_and_zeros = laplace;
  tail_and_zeros.insert(tail_and_zeros.end(), 150000, 0.0f);
  TensorStatistics a(true);
  TensorStatistics b(true);
  a.add(laplace.data(), laplace.size());
  b.add(tail_and_zeros.data(), tail_and_zeros.size());
  const TensorRange without = a.select_range(QuantizedAlgorithm::kMmse);
  const TensorRange with = b.select_range(QuantizedAlgorithm::kMmse);
  if (without.max != with.max || without.min != with.min) {
    fail_msg("mmse [%f, %f] without zeros, [%f, %f] with", without.min, without.max, with.min,
             with.max);
  }
  // The Laplace tail is still clipped (the test above checks the same for signed values).
  assert_true(with.max < 0.99f * a.select_range(QuantizedAlgorithm::kNormal).max);
}

void test_histogram_grows_exactly(void**) {
  // Values arriving in growing ranges give the same choice as all at once.
  std::vector<float> small = random_values(5000, 601, 0.01f);
  std::vector<float> large = random_values(5000, 602, 3.0f);
  TensorStatistics incremental(true);
  incremental.add(small.data(), small.size());
  incremental.add(large.data(), large.size());
  std::vector<float> all = small;
  all.insert(all.end(), large.begin(), large.end());
  TensorStatistics at_once(true);
  at_once.add(all.data(), all.size());
  for (QuantizedAlgorithm algorithm :
       {QuantizedAlgorithm::kKlDivergence, QuantizedAlgorithm::kMmse}) {
    const TensorRange a = incremental.select_range(algorithm);
    const TensorRange b = at_once.select_range(algorithm);
    assert_true(a.min == b.min && a.max == b.max);
  }
}

void test_calibration_is_deterministic_across_threads(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 6);
  ConvertOptions one = int8_options(directory, "one.rknn");
  one.calibration_threads = 1;
  one.quantized_algorithm = QuantizedAlgorithm::kKlDivergence;
  ConvertOptions two = one;
  two.output_path = directory.path("two.rknn");
  two.calibration_threads = 2;
  assert_true(convert_model(one, nullptr).ok());
  assert_true(convert_model(two, nullptr).ok());
  std::ifstream a(one.output_path, std::ios::binary), b(two.output_path, std::ios::binary);
  std::stringstream bytes_a, bytes_b;
  bytes_a << a.rdbuf();
  bytes_b << b.rdbuf();
  assert_true(bytes_a.str() == bytes_b.str());
}

void test_float16_conversion(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("f16.rknn"));
  options.float_dtype = FloatType::kFloat16;
  const std::vector<float> x = random_values(192, 503, 2.0f);
  const std::vector<float> reference = reference_output(directory, x);
  const std::vector<float> y = convert_and_run(options, {x});
  const double relative = max_abs_difference(y, reference) / max_abs(reference);
  if (relative > 2e-2) fail_msg("float16 relative error %g", relative);
  const model::proto::Model graph = graph_of(options.output_path);
  for (const model::proto::Tensor& tensor : graph.tensors()) {
    if (tensor.data_type() == model::proto::DATA_TYPE_INT64) continue;
    if (tensor.data_type() != model::proto::DATA_TYPE_FLOAT16)
      fail_msg("%s is not float16", tensor.name().c_str());
  }
}

void test_hybrid_two_steps(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 4);
  ConvertOptions step1 = int8_options(directory, "m.quantization.yaml");
  assert_true(write_quantization_config(step1).ok());
  std::ifstream file(step1.output_path);
  std::stringstream text;
  text << file.rdbuf();
  assert_true(text.str().find("custom_quantize_layers") != std::string::npos);
  assert_true(text.str().find("r1:") != std::string::npos);
  assert_true(text.str().find("ori_max") != std::string::npos);

  // Keep conv2 in float16 and fix the range of r1, the way a user edits the file.
  std::string edited = text.str();
  const std::string empty_layers = "custom_quantize_layers: {}";
  const size_t layers = edited.find(empty_layers);
  assert_true(layers != std::string::npos);
  edited.replace(layers, empty_layers.size(), "custom_quantize_layers:\n  c2: float16");
  std::ofstream(directory.path("edited.yaml")) << edited;
  ConvertOptions step2 = int8_options(directory, "hybrid.rknn");
  step2.dataset_path.clear();  // a complete file needs no dataset
  step2.quantization_config_path = directory.path("edited.yaml");
  const std::vector<float> x = random_values(192, 100, 2.0f);
  const std::vector<float> y = convert_and_run(step2, {x});
  const double similarity = cosine(y, reference_output(directory, x));
  if (similarity < 0.99) fail_msg("cosine %f", similarity);
  const model::proto::Model graph = graph_of(step2.output_path);
  assert_int_equal(find_tensor(graph, "c2")->data_type(), model::proto::DATA_TYPE_FLOAT16);
  assert_int_equal(find_tensor(graph, "r1")->data_type(), model::proto::DATA_TYPE_INT8);
  for (const model::proto::Node& node : graph.nodes()) {
    const std::string& output = graph.tensors(node.outputs(0)).name();
    if (output != "c2") continue;
    assert_int_equal(graph.tensors(node.inputs(1)).data_type(), model::proto::DATA_TYPE_FLOAT16);
  }
}

// Error-compensated rounding and bias correction (the defaults) change the weights and biases
// nearest rounding would give, and both stay accurate.
void test_weight_rounding_options(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 8);
  const std::vector<float> x = random_values(192, 100, 2.0f);
  const std::vector<float> reference = reference_output(directory, x);
  ConvertOptions nearest = int8_options(directory, "nearest.rknn");
  nearest.weight_rounding = WeightRounding::kNearest;
  nearest.bias_correction = false;
  const ConvertOptions compensated = int8_options(directory, "compensated.rknn");
  std::vector<std::vector<float>> outputs;
  for (const ConvertOptions* options : std::vector<const ConvertOptions*>{&nearest, &compensated}) {
    outputs.push_back(convert_and_run(*options, {x}));
    const double similarity = cosine(outputs.back(), reference);
    if (similarity < 0.99) fail_msg("%s: cosine %f", options->output_path.c_str(), similarity);
  }
  assert_true(max_abs_difference(outputs[0], outputs[1]) > 0.0);  // the options took effect
  const model::proto::Model a = graph_of(nearest.output_path);
  const model::proto::Model b = graph_of(compensated.output_path);
  for (int i = 0; i < a.nodes_size(); ++i) {
    if (a.nodes(i).op_type() != "Conv" && a.nodes(i).op_type() != "Gemm") continue;
    // Same scales: only the codes are chosen differently.
    const model::proto::Tensor& weights_a = a.tensors(a.nodes(i).inputs(1));
    const model::proto::Tensor& weights_b = b.tensors(b.nodes(i).inputs(1));
    assert_int_equal(weights_a.quantization().scale_size(), weights_b.quantization().scale_size());
    for (int c = 0; c < weights_a.quantization().scale_size(); ++c)
      assert_true(weights_a.quantization().scale(c) == weights_b.quantization().scale(c));
  }
}

// auto_hybrid_layers: N keeps N int8 layers in float16, those with the largest single-layer
// loss, so the N-layer choice contains the (N-1)-layer one.
void test_automatic_hybrid(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 4);
  const std::vector<float> x = random_values(192, 100, 2.0f);
  std::vector<std::set<std::string>> float16_outputs;
  for (int layers : {1, 2}) {
    ConvertOptions options = int8_options(directory, "auto" + std::to_string(layers) + ".rknn");
    options.auto_hybrid_layers = layers;
    const double similarity = cosine(convert_and_run(options, {x}), reference_output(directory, x));
    if (similarity < 0.99) fail_msg("%d layers: cosine %f", layers, similarity);
    const model::proto::Model graph = graph_of(options.output_path);
    std::set<std::string> names;
    for (const model::proto::Node& node : graph.nodes()) {
      const model::proto::Tensor& output = graph.tensors(node.outputs(0));
      if (output.data_type() == model::proto::DATA_TYPE_FLOAT16) names.insert(output.name());
    }
    assert_int_equal(names.size(), static_cast<size_t>(layers));
    float16_outputs.push_back(names);
  }
  assert_true(float16_outputs[1].count(*float16_outputs[0].begin()) == 1);
}

void test_hybrid_one_command_with_overrides(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 4);
  std::ofstream(directory.path("overrides.yaml"))
      << "custom_quantize_layers:\n  r1: float16\nquantize_parameters:\n  y:\n    min: [-8]\n    "
         "max: [8]\n";
  ConvertOptions options = int8_options(directory, "one.rknn");
  options.quantization_config_path = directory.path("overrides.yaml");
  const std::vector<float> x = random_values(192, 505, 2.0f);
  convert_and_run(options, {x});
  const model::proto::Model graph = graph_of(options.output_path);
  assert_int_equal(find_tensor(graph, "r1")->data_type(), model::proto::DATA_TYPE_FLOAT16);
  const model::proto::Tensor* y = find_tensor(graph, "y");
  assert_true(std::fabs(y->quantization().scale(0) - 16.0f / 255.0f) < 1e-7f);
  assert_true(std::abs(y->quantization().zero_point(0)) <= 1);

  std::ofstream(directory.path("bad.yaml"))
      << "custom_quantize_layers:\n  no_such_tensor: float16\n";
  options.quantization_config_path = directory.path("bad.yaml");
  ASSERT_FAILS_WITH(convert_model(options, nullptr), "bad.yaml", "'no_such_tensor'");
  std::ofstream(directory.path("int16.yaml")) << "custom_quantize_layers:\n  r1: int16\n";
  options.quantization_config_path = directory.path("int16.yaml");
  ASSERT_FAILS_WITH(convert_model(options, nullptr), "int16", "float16 only");
}

void test_image_dataset_with_mean_std(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  std::ofstream list(directory.path("dataset.txt"));
  for (int i = 0; i < 4; ++i) {
    const std::string name = "image" + std::to_string(i) + ".png";
    write_image(directory.path(name), 8, 8, 3, 700 + static_cast<uint32_t>(i));
    list << name << "\n";
  }
  list.close();
  ConvertOptions options = int8_options(directory, "image.rknn");
  options.mean_values = {{127.5f, 127.5f, 127.5f}};
  options.std_values = {{127.5f, 127.5f, 127.5f}};
  options.quant_img_rgb2bgr = {true};
  assert_true(convert_model(options, nullptr).ok());
  const model::proto::Model graph = graph_of(options.output_path);
  const model::proto::Tensor* input = find_tensor(graph, "x");
  // Normalized pixels lie in [-1, 1]: the input's int8 scale is close to 2/255.
  const float scale = input->quantization().scale(0);
  if (!(scale > 1.8f / 255 && scale <= 2.0f / 255 + 1e-6f)) fail_msg("input scale %g", scale);
  assert_true(graph.inputs(0).nhwc_layout());
  assert_int_equal(graph.inputs(0).mean_size(), 3);
  assert_false(graph.inputs(0).reverse_channels());  // quant_img_RGB2BGR is not stored
}

void test_batch_size(void**) {
  TempDir directory;
  assert_true(small_network().save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("b4.rknn"));
  options.rknn_batch_size = 4;
  std::vector<float> batch;
  std::vector<std::vector<float>> singles;
  for (int i = 0; i < 4; ++i) {
    singles.push_back(random_values(192, 800 + i));
    batch.insert(batch.end(), singles.back().begin(), singles.back().end());
  }
  const std::vector<float> y = convert_and_run(options, {batch});
  assert_int_equal(y.size(), 40);
  const model::proto::Model graph = graph_of(options.output_path);
  assert_int_equal(find_tensor(graph, "x")->shape(0), 4);
  for (int i = 0; i < 4; ++i) {
    const std::vector<float> one = reference_output(directory, singles[static_cast<size_t>(i)]);
    const std::vector<float> part(y.begin() + i * 10, y.begin() + (i + 1) * 10);
    assert_true(max_abs_difference(part, one) <= 1e-5 * max_abs(one));
  }
}

void test_dynamic_input_sets(void**) {
  TempDir directory;
  OnnxModel model(13);
  model.input("x", {1, 3, -1, -1});
  model.initializer("w", {2, 3, 1, 1}, random_values(6, 30));
  model.node("Conv", {"x", "w"}, {"y"});
  model.output("y");
  assert_true(model.save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("d.rknn"));
  options.dynamic_input = {{{1, 3, 8, 8}}, {{1, 3, 4, 6}}};
  assert_true(convert_model(options, nullptr).ok());
  const model::proto::Model graph = graph_of(options.output_path);
  assert_int_equal(graph.dynamic_shapes_size(), 2);
  assert_int_equal(graph.dynamic_shapes(1).shapes(0).dims(3), 6);

  // A model that bakes its input shape into a constant cannot take several shapes.
  OnnxModel baked(13);
  baked.input("x", {1, 3, -1, -1});
  baked.node("Shape", {"x"}, {"s"});
  baked.node("Reshape", {"x", "s"}, {"y"});
  baked.output("y");
  assert_true(baked.save(directory.path("baked.onnx")).ok());
  options.model_path = directory.path("baked.onnx");
  options.output_path = directory.path("baked.rknn");
  ASSERT_FAILS_WITH(convert_model(options, nullptr), "dynamic_input", "set 1", "Reshape");
  assert_false(file_exists(options.output_path));
}

// A .npy file written byte by byte: `descr` and `fortran` in the header, then `data`.
void write_raw_npy(const std::string& path, const std::string& descr, bool fortran,
                   const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  file << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size() & 0xff)
       << static_cast<char>(header.size() >> 8) << header << data;
}

void test_npy_dtypes_and_fortran_order(void**) {
  TempDir directory;
  // A 2x3 array 0..5 stored column-major: 0 3 1 4 2 5.
  const uint8_t column_major[] = {0, 3, 1, 4, 2, 5};
  write_raw_npy(directory.path("f.npy"), "|u1", true, "(2, 3)",
                std::string(reinterpret_cast<const char*>(column_major), 6));
  Result<NpyArray> fortran = read_npy(directory.path("f.npy"));
  if (!fortran.ok()) fail_msg("%s", fortran.status().message().c_str());
  for (int i = 0; i < 6; ++i) assert_true(fortran->values[static_cast<size_t>(i)] == i);

  const int64_t wide[] = {-5, 1LL << 40};
  write_raw_npy(directory.path("i8.npy"), "<i8", false, "(2,)",
                std::string(reinterpret_cast<const char*>(wide), sizeof(wide)));
  Result<NpyArray> integers = read_npy(directory.path("i8.npy"));
  assert_true(integers.ok());
  assert_true(integers->values[0] == -5.0 && integers->values[1] == 1099511627776.0);

  const double doubles[] = {0.25, -1.5, 3.0};
  write_raw_npy(directory.path("f8.npy"), "<f8", false, "(3,)",
                std::string(reinterpret_cast<const char*>(doubles), sizeof(doubles)));
  assert_true(read_npy(directory.path("f8.npy"))->values[1] == -1.5);

  write_raw_npy(directory.path("short.npy"), "<f4", false, "(4,)", std::string(8, '\0'));
  ASSERT_FAILS_WITH(read_npy(directory.path("short.npy")).status(), "short.npy", "truncated");
  write_raw_npy(directory.path("big.npy"), ">f4", false, "(1,)", std::string(4, '\0'));
  ASSERT_FAILS_WITH(read_npy(directory.path("big.npy")).status(), "big-endian");
  write_raw_npy(directory.path("complex.npy"), "<c8", false, "(1,)", std::string(8, '\0'));
  ASSERT_FAILS_WITH(read_npy(directory.path("complex.npy")).status(), "'c8'", "not supported");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_channel_forms_and_accuracy),
      cmocka_unit_test(test_int8_layer_method),
      cmocka_unit_test(test_kl_divergence_and_mmse_convert_accurately),
      cmocka_unit_test(test_range_algorithms_clip_outliers),
      cmocka_unit_test(test_mmse_keeps_a_uniform_range_and_ignores_exact_zeros),
      cmocka_unit_test(test_histogram_grows_exactly),
      cmocka_unit_test(test_calibration_is_deterministic_across_threads),
      cmocka_unit_test(test_float16_conversion),
      cmocka_unit_test(test_hybrid_two_steps),
      cmocka_unit_test(test_hybrid_one_command_with_overrides),
      cmocka_unit_test(test_weight_rounding_options),
      cmocka_unit_test(test_automatic_hybrid),
      cmocka_unit_test(test_image_dataset_with_mean_std),
      cmocka_unit_test(test_batch_size),
      cmocka_unit_test(test_dynamic_input_sets),
      cmocka_unit_test(test_npy_dtypes_and_fortran_order),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
