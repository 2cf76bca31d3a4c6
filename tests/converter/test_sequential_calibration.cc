// Sequential calibration (quantize/sequential_refinement.h): the paired rows it reads from the
// quantized model, the mean shift it corrects, and what it does to a converted model.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "converter_test_util.h"
#include "options/option_parsing.h"
#include "quantize/layer_inputs.h"
#include "quantize/weight_rounding.h"

#include "cmocka_last.h"  // last: cmocka's macros clash with standard headers

namespace {

using namespace orknn;
using namespace orknn::convert;
using namespace orknn::convert::test;

// The mean over rows of W_q x_q - W x, with x_q and x different rows at the same positions.
void test_mean_output_shift_compares_paired_rows(void**) {
  const int64_t outputs = 3;
  const int64_t columns = 5;
  const int64_t rows = 40;
  std::mt19937 generator(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weights;
  for (int64_t i = 0; i < outputs * columns; ++i) weights.push_back(0.2f * normal(generator));
  const std::vector<float> scales = {0.002f, 0.003f, 0.004f};
  const std::vector<int8_t> codes = round_weights_to_nearest(weights, outputs, scales);
  LayerInputRows float_rows;
  LayerInputRows quantized_rows;
  float_rows.columns = quantized_rows.columns = columns;
  for (int64_t i = 0; i < rows * columns; ++i) {
    const float x = normal(generator);
    float_rows.values.push_back(x);
    // The quantized model's inputs: the same values, noisy and shifted up (as after a MaxPool).
    quantized_rows.values.push_back(x + 0.05f + 0.02f * normal(generator));
  }
  const std::vector<double> shift =
      mean_output_shift(weights, codes, outputs, scales, quantized_rows, float_rows);
  assert_int_equal(shift.size(), outputs);
  for (int64_t c = 0; c < outputs; ++c) {
    double expected = 0.0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < columns; ++k) {
        const size_t w = static_cast<size_t>(c * columns + k);
        const size_t x = static_cast<size_t>(r * columns + k);
        expected += codes[w] * static_cast<double>(scales[static_cast<size_t>(c)]) *
                        quantized_rows.values[x] -
                    static_cast<double>(weights[w]) * float_rows.values[x];
      }
    }
    expected /= static_cast<double>(rows);
    if (std::fabs(expected - shift[static_cast<size_t>(c)]) > 1e-9)
      fail_msg("channel %d: expected %g, got %g", static_cast<int>(c), expected,
               shift[static_cast<size_t>(c)]);
  }
  // Rows that do not pair up give no shift rather than a wrong one.
  LayerInputRows fewer = quantized_rows;
  fewer.values.resize(static_cast<size_t>((rows - 1) * columns));
  for (double value : mean_output_shift(weights, codes, outputs, scales, fewer, float_rows))
    assert_true(value == 0.0);
}

// The rows taken for one layer and sample are those calibration took (same positions), so the
// quantized model's rows pair with the float ones.
void test_sample_rows_pair_with_calibration_rows(void**) {
  const ir::Graph graph = one_convolution_graph(6, 1);
  const int samples = 3;
  LayerInputCollector collector(graph, 30, samples);  // 10 of the 36 positions per sample
  std::vector<std::vector<float>> inputs;
  for (int s = 0; s < samples; ++s) inputs.push_back(random_values(72, 40 + s, 1.0f));
  for (int s = 0; s < samples; ++s) {
    collector.add_sample(s, [&](const std::string& name) -> const std::vector<float>* {
      return name == "x" ? &inputs[static_cast<size_t>(s)] : nullptr;
    });
  }
  LayerInputRows again;
  for (int s = 0; s < samples; ++s)
    assert_true(collector.append_sample_rows("y", s, inputs[static_cast<size_t>(s)], &again));
  const LayerInputRows taken = collector.take_rows().at("y");
  assert_int_equal(taken.rows(), 30);
  assert_int_equal(again.columns, 18);
  assert_true(again.values == taken.values);
  // Unknown layers and wrongly sized inputs are refused, not read.
  LayerInputRows none;
  assert_false(collector.append_sample_rows("x", 0, inputs[0], &none));
  std::vector<float> short_input(10);
  assert_false(collector.append_sample_rows("y", 0, short_input, &none));
  assert_int_equal(none.rows(), 0);
}

// x [1,4,10,10] -> Conv(8, 3x3) + Relu -> MaxPool(3x3, stride 1) -> Conv(6, 1x1) -> y: the
// MaxPool turns the first layer's rounding noise into an upward shift, which the second layer
// sees only in the quantized model.
OnnxModel max_pool_network() {
  OnnxModel model(13);
  model.input("x", {1, 4, 10, 10});
  model.initializer("w1", {8, 4, 3, 3}, random_values(288, 61, 0.25f));
  model.initializer("b1", {8}, random_values(8, 62, 0.2f));
  set_ints(&model.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  model.node("Relu", {"c1"}, {"r1"}, "relu1");
  onnx::NodeProto& pool = model.node("MaxPool", {"r1"}, {"p1"}, "pool");
  set_ints(&pool, "kernel_shape", {3, 3});
  set_ints(&pool, "pads", {1, 1, 1, 1});
  model.initializer("w2", {6, 8, 1, 1}, random_values(48, 63, 0.5f));
  model.initializer("b2", {6}, random_values(6, 64, 0.1f));
  model.node("Conv", {"p1", "w2", "b2"}, {"y"}, "conv2");
  model.output("y");
  return model;
}

struct Network {
  TempDir directory;
  std::vector<std::vector<float>> samples;
};

// The dataset alone (samples for input x [1,4,10,10]); true when written.
bool write_dataset_only(Network* network, int count) {
  std::ofstream list(network->directory.path("dataset.txt"));
  for (int i = 0; i < count; ++i) {
    const std::string name = "sample" + std::to_string(i) + ".npy";
    network->samples.push_back(random_values(400, 300 + i, 1.5f));
    write_npy(network->directory.path(name), {1, 4, 10, 10}, network->samples.back());
    list << name << "\n";
  }
  return static_cast<bool>(list);
}

void write_network(Network* network, int count) {
  assert_true(max_pool_network().save(network->directory.path("m.onnx")).ok());
  assert_true(write_dataset_only(network, count));
}

ConvertOptions int8_options(const Network& network, const std::string& output) {
  ConvertOptions options;
  options.model_path = network.directory.path("m.onnx");
  options.output_path = network.directory.path(output);
  options.dataset_path = network.directory.path("dataset.txt");
  options.quiet = true;
  return options;
}

// Largest per-channel mean of (int8 output - float output) over the calibration samples,
// relative to the float output's standard deviation.
double largest_channel_shift(const ConvertOptions& options, const Network& network) {
  const ConvertOptions float32 =
      float32_options(network.directory.path("m.onnx"), network.directory.path("f32.rknn"));
  const int64_t channels = 6;
  const int64_t plane = 100;
  std::vector<double> shift(channels, 0.0);
  double sum = 0.0;
  double squares = 0.0;
  double count = 0.0;
  for (const std::vector<float>& x : network.samples) {
    const std::vector<float> reference = convert_and_run(float32, {x});
    const std::vector<float> quantized = convert_and_run(options, {x});
    assert_int_equal(reference.size(), channels * plane);
    for (int64_t i = 0; i < channels * plane; ++i) {
      shift[static_cast<size_t>(i / plane)] +=
          quantized[static_cast<size_t>(i)] - reference[static_cast<size_t>(i)];
      sum += reference[static_cast<size_t>(i)];
      squares += static_cast<double>(reference[static_cast<size_t>(i)]) *
                 reference[static_cast<size_t>(i)];
      count += 1.0;
    }
  }
  const double deviation = std::sqrt(squares / count - (sum / count) * (sum / count));
  double largest = 0.0;
  for (double value : shift)
    largest = std::max(largest, std::fabs(value / (count / channels)) / deviation);
  return largest;
}

// Corrected layer by layer, the output's mean matches the float model's on the calibration
// samples; the one-shot correction (float inputs) cannot see the MaxPool's shift.
void test_sequential_calibration_removes_the_mean_shift(void**) {
  Network network;
  write_network(&network, 6);
  const ConvertOptions one_shot = int8_options(network, "one_shot.rknn");
  ConvertOptions sequential = int8_options(network, "sequential.rknn");
  sequential.sequential_calibration = true;
  const double before = largest_channel_shift(one_shot, network);
  const double after = largest_channel_shift(sequential, network);
  print_message("largest channel shift / output deviation: one-shot %.5f, sequential %.5f\n",
                before, after);
  if (!(after < 0.5 * before)) fail_msg("one-shot %g, sequential %g", before, after);
  // The result does not depend on how many threads ran the samples.
  ConvertOptions one_thread = int8_options(network, "one_thread.rknn");
  one_thread.calibration_threads = 1;
  one_thread.sequential_calibration = true;
  ConvertOptions three_threads = int8_options(network, "three_threads.rknn");
  three_threads.calibration_threads = 3;
  three_threads.sequential_calibration = true;
  const std::vector<float>& x = network.samples[0];
  assert_true(convert_and_run(one_thread, {x}) == convert_and_run(three_threads, {x}));
}

// The graph input reaches the first layer through the model's mean/std, in the refinement as in
// calibration: rows of the raw input would shift that layer's bias by far more than its error.
void test_sequential_calibration_applies_input_preprocessing(void**) {
  Network network;
  write_network(&network, 4);
  const std::vector<std::vector<float>> mean = {{0.5f, -0.5f, 0.25f, 0.0f}};
  const std::vector<std::vector<float>> deviation = {{4.0f, 4.0f, 4.0f, 4.0f}};
  ConvertOptions float32 =
      float32_options(network.directory.path("m.onnx"), network.directory.path("f32.rknn"));
  float32.mean_values = mean;
  float32.std_values = deviation;
  ConvertOptions sequential = int8_options(network, "sequential.rknn");
  sequential.sequential_calibration = true;
  sequential.mean_values = mean;
  sequential.std_values = deviation;
  for (const std::vector<float>& x : network.samples) {
    const double similarity =
        cosine(convert_and_run(sequential, {x}), convert_and_run(float32, {x}));
    if (similarity < 0.999) fail_msg("cosine %f", similarity);
  }
}

// x [1,4,10,10] -> Conv(6, 3x3, stride 2) + Relu -> Flatten -> Gemm(B [150, 10], transB 0) -> y:
// a Gemm whose weights the rounding sees transposed, with per-channel and per-tensor weights.
void test_sequential_calibration_gemm_and_layer_method(void**) {
  Network network;
  assert_true(write_dataset_only(&network, 6));
  OnnxModel model(13);
  model.input("x", {1, 4, 10, 10});
  model.initializer("w1", {6, 4, 3, 3}, random_values(216, 71, 0.3f));
  model.initializer("b1", {6}, random_values(6, 72, 0.2f));
  onnx::NodeProto& conv = model.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  set_ints(&conv, "strides", {2, 2});
  set_ints(&conv, "pads", {1, 1, 1, 1});
  model.node("Relu", {"c1"}, {"r1"}, "relu1");
  model.node("Flatten", {"r1"}, {"flat"}, "flatten");
  model.initializer("g", {150, 10}, random_values(1500, 73, 0.2f));
  model.initializer("gb", {10}, random_values(10, 74, 0.1f));
  model.node("Gemm", {"flat", "g", "gb"}, {"y"}, "gemm");
  model.output("y");
  assert_true(model.save(network.directory.path("m.onnx")).ok());
  const ConvertOptions float32 =
      float32_options(network.directory.path("m.onnx"), network.directory.path("f32.rknn"));
  for (QuantizedMethod method : {QuantizedMethod::kChannel, QuantizedMethod::kLayer}) {
    ConvertOptions one_shot = int8_options(network, "one_shot.rknn");
    one_shot.quantized_method = method;
    ConvertOptions sequential = int8_options(network, "sequential.rknn");
    sequential.quantized_method = method;
    sequential.sequential_calibration = true;
    for (const std::vector<float>& x : network.samples) {
      const std::vector<float> reference = convert_and_run(float32, {x});
      const double before = cosine(convert_and_run(one_shot, {x}), reference);
      const double after = cosine(convert_and_run(sequential, {x}), reference);
      if (!(after > 0.999 && after > before - 0.001))
        fail_msg("method %d: one-shot %f, sequential %f", static_cast<int>(method), before, after);
    }
  }
}

void test_sequential_calibration_option(void**) {
  ConvertOptions options;
  assert_false(options.sequential_calibration);
  assert_true(
      apply_config_text("sequential_calibration: true\n", "/base", "t.yaml", &options).ok());
  assert_true(options.sequential_calibration);
  assert_false(
      apply_config_text("sequential_calibration: often\n", "/base", "t.yaml", &options).ok());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mean_output_shift_compares_paired_rows),
      cmocka_unit_test(test_sample_rows_pair_with_calibration_rows),
      cmocka_unit_test(test_sequential_calibration_removes_the_mean_shift),
      cmocka_unit_test(test_sequential_calibration_applies_input_preprocessing),
      cmocka_unit_test(test_sequential_calibration_gemm_and_layer_method),
      cmocka_unit_test(test_sequential_calibration_option),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
