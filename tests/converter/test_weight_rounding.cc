// Error-compensated weight rounding, bias correction and the calibration rows they work from
// (quantize/weight_rounding.h, quantize/layer_inputs.h), and their options.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
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

// A fixed random layer: weights [outputs x columns] and inputs whose columns are correlated
// (mixtures of a few sources, as neighbouring pixels and channels are) with a non-zero mean.
struct RandomLayer {
  int64_t outputs = 0;
  std::vector<float> weights;
  std::vector<float> scales;
  LayerInputRows inputs;
};

RandomLayer random_layer(int64_t outputs, int64_t columns, int64_t rows, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  RandomLayer layer;
  layer.outputs = outputs;
  for (int64_t i = 0; i < outputs * columns; ++i) layer.weights.push_back(0.1f * normal(generator));
  for (int64_t c = 0; c < outputs; ++c) {
    float largest = 0.0f;
    for (int64_t k = 0; k < columns; ++k)
      largest = std::max(largest, std::fabs(layer.weights[static_cast<size_t>(c * columns + k)]));
    layer.scales.push_back(largest / 127.0f);
  }
  const int64_t sources = columns / 4;
  std::vector<float> mixing;
  for (int64_t i = 0; i < sources * columns; ++i) mixing.push_back(normal(generator));
  layer.inputs.columns = columns;
  std::vector<float> source(static_cast<size_t>(sources));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& value : source) value = normal(generator);
    for (int64_t k = 0; k < columns; ++k) {
      float value = 0.5f + 0.1f * normal(generator);  // mean 0.5 plus a little private noise
      for (int64_t s = 0; s < sources; ++s)
        value += source[static_cast<size_t>(s)] * mixing[static_cast<size_t>(s * columns + k)];
      layer.inputs.values.push_back(value);
    }
  }
  return layer;
}

// sum over rows and outputs of ((W_q - W) x)^2.
double output_error(const RandomLayer& layer, const std::vector<int8_t>& codes) {
  const int64_t columns = layer.inputs.columns;
  double total = 0.0;
  for (int64_t r = 0; r < layer.inputs.rows(); ++r) {
    const float* x = layer.inputs.values.data() + r * columns;
    for (int64_t c = 0; c < layer.outputs; ++c) {
      double error = 0.0;
      for (int64_t k = 0; k < columns; ++k) {
        const size_t index = static_cast<size_t>(c * columns + k);
        error += (codes[index] * static_cast<double>(layer.scales[static_cast<size_t>(c)]) -
                  layer.weights[index]) *
                 x[k];
      }
      total += error * error;
    }
  }
  return total;
}

void test_compensated_rounding_lowers_layer_output_error(void**) {
  const RandomLayer layer = random_layer(16, 72, 400, 1);
  const std::vector<int8_t> nearest =
      round_weights_to_nearest(layer.weights, layer.outputs, layer.scales);
  const std::vector<int8_t> compensated = round_weights_with_compensation(
      layer.weights, layer.outputs, layer.scales, layer.inputs, CompensatedRoundingSettings{});
  const double nearest_error = output_error(layer, nearest);
  const double compensated_error = output_error(layer, compensated);
  // GPTQ-style rounding typically removes well over half of the output error on correlated
  // inputs; nearest rounding cannot.
  if (!(compensated_error < 0.5 * nearest_error))
    fail_msg("compensated %g vs nearest %g", compensated_error, nearest_error);
  // The gain comes from choosing other codes for some weights (the scales are the same).
  size_t changed = 0;
  for (size_t i = 0; i < nearest.size(); ++i) changed += nearest[i] != compensated[i];
  assert_true(changed > 0);
}

void test_compensated_rounding_in_blocks(void**) {
  const RandomLayer layer = random_layer(8, 72, 300, 2);
  CompensatedRoundingSettings blocks;
  blocks.max_block_columns = 20;  // 72 columns: four blocks of 18
  const double nearest =
      output_error(layer, round_weights_to_nearest(layer.weights, layer.outputs, layer.scales));
  const double blocked =
      output_error(layer, round_weights_with_compensation(layer.weights, layer.outputs,
                                                          layer.scales, layer.inputs, blocks));
  const double whole = output_error(
      layer, round_weights_with_compensation(layer.weights, layer.outputs, layer.scales,
                                             layer.inputs, CompensatedRoundingSettings{}));
  if (!(blocked < nearest && whole <= blocked * 1.05))
    fail_msg("nearest %g, blocks %g, whole %g", nearest, blocked, whole);
}

void test_compensated_rounding_degenerate_inputs_fall_back_to_nearest(void**) {
  RandomLayer layer = random_layer(4, 12, 50, 3);
  const std::vector<int8_t> nearest =
      round_weights_to_nearest(layer.weights, layer.outputs, layer.scales);
  const CompensatedRoundingSettings settings;
  // No rows, the wrong column count, inputs that are all zero.
  LayerInputRows empty;
  empty.columns = 12;
  assert_true(round_weights_with_compensation(layer.weights, 4, layer.scales, empty, settings) ==
              nearest);
  LayerInputRows wrong = layer.inputs;
  wrong.columns = 6;
  assert_true(round_weights_with_compensation(layer.weights, 4, layer.scales, wrong, settings) ==
              nearest);
  LayerInputRows zeros = layer.inputs;
  std::fill(zeros.values.begin(), zeros.values.end(), 0.0f);
  assert_true(round_weights_with_compensation(layer.weights, 4, layer.scales, zeros, settings) ==
              nearest);
  // A column that is always zero and a duplicated column (singular H): still valid codes, and
  // no worse than nearest on the layer's output.
  for (int64_t r = 0; r < layer.inputs.rows(); ++r) {
    float* x = layer.inputs.values.data() + r * 12;
    x[3] = 0.0f;
    x[7] = x[6];
  }
  const std::vector<int8_t> codes =
      round_weights_with_compensation(layer.weights, 4, layer.scales, layer.inputs, settings);
  assert_int_equal(codes.size(), nearest.size());
  assert_true(output_error(layer, codes) <= output_error(layer, nearest) * 1.0001);
  // One scale for all outputs (quantized_method: layer) works the same way.
  const std::vector<float> one_scale = {
      *std::max_element(layer.scales.begin(), layer.scales.end())};
  assert_int_equal(
      round_weights_with_compensation(layer.weights, 4, one_scale, layer.inputs, settings).size(),
      nearest.size());
}

void test_bias_correction_zeroes_the_mean_error(void**) {
  const RandomLayer layer = random_layer(6, 40, 200, 4);
  const std::vector<int8_t> codes =
      round_weights_to_nearest(layer.weights, layer.outputs, layer.scales);
  const std::vector<double> shift = mean_output_shift(layer.weights, codes, layer.outputs,
                                                      layer.scales, layer.inputs, layer.inputs);
  assert_int_equal(shift.size(), 6);
  double largest_shift = 0.0;
  for (int64_t c = 0; c < layer.outputs; ++c) {
    // The mean over rows of (W_q - W) x, minus the correction, is zero.
    double mean = 0.0;
    for (int64_t r = 0; r < layer.inputs.rows(); ++r) {
      const float* x = layer.inputs.values.data() + r * 40;
      for (int64_t k = 0; k < 40; ++k) {
        const size_t index = static_cast<size_t>(c * 40 + k);
        mean += (codes[index] * static_cast<double>(layer.scales[static_cast<size_t>(c)]) -
                 layer.weights[index]) *
                x[k];
      }
    }
    mean /= static_cast<double>(layer.inputs.rows());
    largest_shift = std::max(largest_shift, std::fabs(shift[static_cast<size_t>(c)]));
    if (std::fabs(mean - shift[static_cast<size_t>(c)]) > 1e-9)
      fail_msg("channel %d: mean error %g, correction %g", static_cast<int>(c), mean,
               shift[static_cast<size_t>(c)]);
  }
  assert_true(largest_shift > 1e-4);  // inputs with mean 0.5 do shift the output
  // Mismatched sizes give no correction rather than reading out of bounds.
  LayerInputRows wrong = layer.inputs;
  wrong.columns = 20;
  for (double value : mean_output_shift(layer.weights, codes, 6, layer.scales, wrong, wrong))
    assert_true(value == 0.0);
}

void test_collector_takes_im2col_rows(void**) {
  const ir::Graph graph = one_convolution_graph(5, 2);
  LayerInputCollector collector(graph, 1000, 2);
  assert_int_equal(collector.input_tensors().size(), 1);
  assert_string_equal(collector.input_tensors()[0].c_str(), "x");
  std::vector<float> x(50);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  for (int sample = 0; sample < 2; ++sample) {
    collector.add_sample(sample, [&](const std::string& name) -> const std::vector<float>* {
      return name == "x" ? &x : nullptr;
    });
  }
  std::map<std::string, LayerInputRows> rows = collector.take_rows();
  const LayerInputRows& y = rows.at("y");
  assert_int_equal(y.columns, 18);
  assert_int_equal(y.rows(), 18);  // 9 positions, both samples (under the 1000-row budget)
  // Position (1, 1) of the output reads input rows/columns 1..3 of each channel.
  const float* row = y.values.data() + 4 * 18;
  for (int c = 0; c < 2; ++c) {
    for (int ky = 0; ky < 3; ++ky) {
      for (int kx = 0; kx < 3; ++kx) {
        const float expected = static_cast<float>(c * 25 + (1 + ky) * 5 + (1 + kx) + 1);
        assert_true(row[c * 9 + ky * 3 + kx] == expected);
      }
    }
  }
  // Position (0, 0) starts in the padding: zeros, then x[0][0].
  assert_true(y.values[0] == 0.0f);
  assert_true(y.values[4] == 1.0f);
  // A budget smaller than the positions keeps evenly spread rows from each sample.
  LayerInputCollector small(graph, 8, 2);
  for (int sample = 0; sample < 2; ++sample) {
    small.add_sample(sample, [&](const std::string& name) -> const std::vector<float>* {
      return name == "x" ? &x : nullptr;
    });
  }
  assert_int_equal(small.take_rows().at("y").rows(), 8);
  // Missing or wrongly sized values are skipped, not read.
  LayerInputCollector skipped(graph, 100, 1);
  std::vector<float> short_values(10);
  skipped.add_sample(0, [&](const std::string&) { return &short_values; });
  assert_int_equal(skipped.take_rows().at("y").rows(), 0);
}

void test_options(void**) {
  ConvertOptions options;
  assert_true(options.weight_rounding == WeightRounding::kErrorCompensated);
  assert_true(options.bias_correction);
  assert_true(apply_config_text("weight_rounding: nearest\nbias_correction: false\n"
                                "weight_rounding_rows: 512\n",
                                "/base", "t.yaml", &options)
                  .ok());
  assert_true(options.weight_rounding == WeightRounding::kNearest);
  assert_false(options.bias_correction);
  assert_int_equal(options.weight_rounding_rows, 512);
  Status bad = apply_config_text("weight_rounding: gptq\n", "/base", "t.yaml", &options);
  assert_false(bad.ok());
  assert_non_null(strstr(bad.message().c_str(), "not one of nearest, error_compensated"));
  bad = apply_config_text("weight_rounding_rows: 3\n", "/base", "t.yaml", &options);
  assert_false(bad.ok());
  assert_non_null(strstr(bad.message().c_str(), "not in [16, 1000000]"));
  assert_false(apply_config_text("bias_correction: maybe\n", "/base", "t.yaml", &options).ok());
  assert_int_equal(options.auto_hybrid_layers, 0);
  assert_true(apply_config_text("auto_hybrid_layers: 7\n", "/base", "t.yaml", &options).ok());
  assert_int_equal(options.auto_hybrid_layers, 7);
  bad = apply_config_text("auto_hybrid_layers: -1\n", "/base", "t.yaml", &options);
  assert_false(bad.ok());
  assert_non_null(strstr(bad.message().c_str(), "not in [0, 100000]"));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compensated_rounding_lowers_layer_output_error),
      cmocka_unit_test(test_compensated_rounding_in_blocks),
      cmocka_unit_test(test_compensated_rounding_degenerate_inputs_fall_back_to_nearest),
      cmocka_unit_test(test_bias_correction_zeroes_the_mean_error),
      cmocka_unit_test(test_collector_takes_im2col_rows),
      cmocka_unit_test(test_options),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
