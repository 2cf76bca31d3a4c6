// Options: YAML and JSON config files (flat or in toolkit sections), the command line, their
// precedence, value syntax, and refusals that name the key.
#include <fstream>

#include "converter_test_util.h"
#include "options/option_parsing.h"

#include "cmocka_last.h"  // last: cmocka's macros clash with standard headers

namespace {

using namespace orknn;
using namespace orknn::convert;
using namespace orknn::convert::test;

ConvertOptions parse_text(const std::string& text) {
  ConvertOptions options;
  const Status status = apply_config_text(text, "/base", "test.yaml", &options);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
  return options;
}

Result<ParsedCommandLine> parse_arguments(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), "rknn-convert");
  return parse_command_line(arguments);
}

void test_yaml_config_with_toolkit_sections(void**) {
  const ConvertOptions options = parse_text(R"(
config:
  mean_values: [[123.675, 116.28, 103.53]]
  std_values: [[58.395, 57.12, 57.375]]
  quant_img_RGB2BGR: true
  target_platform: RK3588
  custom_string: "hello"
  quantized_algorithm: kl_divergence
  quantized_method: layer
  optimization_level: 2
  op_target: {conv1_out: cpu}
  dynamic_input: [[[1,3,224,224]], [[1,3,160,160]]]
load_onnx:
  model: models/net.onnx
  inputs: [images]
  input_size_list: [[1, 3, 224, 224]]
  outputs: [out0, out1]
build:
  do_quantization: true
  dataset: ./dataset.txt
  rknn_batch_size: 2
export_rknn:
  export_path: out/net.rknn
)");
  assert_int_equal(options.mean_values.size(), 1);
  assert_true(options.mean_values[0][1] == 116.28f);
  assert_true(options.std_values[0][2] == 57.375f);
  assert_true(options.quant_img_rgb2bgr.size() == 1 && options.quant_img_rgb2bgr[0]);
  assert_string_equal(options.target_platform.c_str(), "rk3588");
  assert_string_equal(options.custom_string.c_str(), "hello");
  assert_true(options.quantized_algorithm == QuantizedAlgorithm::kKlDivergence);
  assert_true(options.quantized_method == QuantizedMethod::kLayer);
  assert_int_equal(options.optimization_level, 2);
  assert_string_equal(options.op_target.at("conv1_out").c_str(), "cpu");
  assert_int_equal(options.dynamic_input.size(), 2);
  assert_int_equal(options.dynamic_input[1][0][3], 160);
  assert_string_equal(options.model_path.c_str(), "/base/models/net.onnx");
  assert_string_equal(options.inputs[0].c_str(), "images");
  assert_int_equal(options.input_size_list[0][1], 3);
  assert_int_equal(options.outputs.size(), 2);
  assert_true(options.do_quantization);
  assert_string_equal(options.dataset_path.c_str(), "/base/dataset.txt");
  assert_int_equal(options.rknn_batch_size, 2);
  assert_string_equal(options.output_path.c_str(), "/base/out/net.rknn");
}

void test_json_config_and_flat_lists(void**) {
  const ConvertOptions options = parse_text(R"({
    "model": "/abs/net.onnx", "mean_values": [0, 0, 0], "std_values": [255, 255, 255],
    "do_quantization": false, "float_dtype": "float32", "quantized_dtype": "asymmetric_quantized-8"
  })");
  assert_string_equal(options.model_path.c_str(), "/abs/net.onnx");
  assert_int_equal(options.mean_values.size(), 1);
  assert_int_equal(options.mean_values[0].size(), 3);
  assert_true(options.std_values[0][0] == 255.0f);
  assert_false(options.do_quantization);
  assert_true(options.float_dtype == FloatType::kFloat32);
  assert_string_equal(options.quantized_dtype.c_str(), "w8a8");
}

void test_config_errors_name_the_key(void**) {
  ConvertOptions options;
  ASSERT_FAILS_WITH(apply_config_text("mean_valuez: [1]", "", "c.yaml", &options), "c.yaml",
                    "unknown option 'mean_valuez'");
  ASSERT_FAILS_WITH(
      apply_config_text("config: {quantized_algorithm: fast}", "", "c.yaml", &options),
      "config.quantized_algorithm", "'fast'", "normal, kl_divergence, mmse");
  ASSERT_FAILS_WITH(apply_config_text("quantized_dtype: w16a16i", "", "c.yaml", &options),
                    "quantized_dtype", "w16a16i", "w8a8");
  ASSERT_FAILS_WITH(apply_config_text("target_platform: rk9999", "", "c.yaml", &options), "rk9999",
                    "rk3588");
  ASSERT_FAILS_WITH(apply_config_text("optimization_level: 7", "", "c.yaml", &options),
                    "optimization_level", "7");
  ASSERT_FAILS_WITH(apply_config_text("compress_weight: true", "", "c.yaml", &options),
                    "compress_weight", "not supported");
  ASSERT_FAILS_WITH(apply_config_text("op_target: {a: tpu}", "", "c.yaml", &options), "'tpu'");
  ASSERT_FAILS_WITH(apply_config_text("mean_values: [[1, x]]", "", "c.yaml", &options),
                    "mean_values", "expected a number");
  ASSERT_FAILS_WITH(apply_config_text("model: [", "", "c.yaml", &options), "not valid YAML");
  ASSERT_FAILS_WITH(apply_config_text("dynamic_input: [[1,3,224,224]]", "", "c.yaml", &options),
                    "dynamic_input", "shape sets");
  // Options the toolkit has but that ask for nothing are accepted.
  assert_true(
      apply_config_text("compress_weight: false\nremove_weight: null", "", "c.yaml", &options)
          .ok());
}

void test_command_line(void**) {
  Result<ParsedCommandLine> parsed = parse_arguments(
      {"net.onnx", "-o", "net.rknn", "--mean-values", "0,0,0", "--std_values", "[[1,2,3]]",
       "--dataset=ds.txt", "--quantized-algorithm", "mmse", "--op-target", "a:gpu,b:cpu",
       "--input-size-list", "1,3,224,224;1,4", "--do-quantization", "false", "-q"});
  if (!parsed.ok()) fail_msg("%s", parsed.status().message().c_str());
  const ConvertOptions& options = parsed->options;
  assert_true(parsed->command == Command::kConvert);
  assert_string_equal(options.model_path.c_str(), "net.onnx");
  assert_string_equal(options.output_path.c_str(), "net.rknn");
  assert_int_equal(options.mean_values[0].size(), 3);
  assert_true(options.std_values[0][2] == 3.0f);
  assert_string_equal(options.dataset_path.c_str(), "ds.txt");
  assert_true(options.quantized_algorithm == QuantizedAlgorithm::kMmse);
  assert_string_equal(options.op_target.at("a").c_str(), "gpu");
  assert_int_equal(options.input_size_list.size(), 2);
  assert_int_equal(options.input_size_list[1][1], 4);
  assert_false(options.do_quantization);
  assert_true(options.quiet);

  ASSERT_FAILS_WITH(parse_arguments({"a.onnx", "b.onnx"}).status(), "unexpected argument 'b.onnx'");
  ASSERT_FAILS_WITH(parse_arguments({"a.onnx", "--dataset"}).status(), "--dataset needs a value");
  ASSERT_FAILS_WITH(parse_arguments({"a.onnx", "--frobnicate", "1"}).status(), "'frobnicate'");
  assert_true(parse_arguments({"--help"})->command == Command::kHelp);
  assert_true(parse_arguments({"hybrid-step1", "a.onnx"})->command == Command::kHybridStep1);
  Result<ParsedCommandLine> analysis =
      parse_arguments({"accuracy-analysis", "a.onnx", "x.jpg", "y.npy"});
  assert_true(analysis->command == Command::kAccuracyAnalysis);
  assert_int_equal(analysis->options.analysis_inputs.size(), 2);
}

void test_command_line_overrides_config_file(void**) {
  TempDir directory;
  std::ofstream(directory.path("c.yaml")) << "model: net.onnx\nexport_path: a.rknn\n"
                                          << "quantized_method: layer\ncustom_string: file\n";
  Result<ParsedCommandLine> parsed = parse_arguments(
      {"--custom-string", "line", "--config", directory.path("c.yaml"), "-o", "b.rknn"});
  if (!parsed.ok()) fail_msg("%s", parsed.status().message().c_str());
  const ConvertOptions& options = parsed->options;
  assert_string_equal(options.custom_string.c_str(), "line");
  assert_string_equal(options.output_path.c_str(), "b.rknn");
  assert_true(options.quantized_method == QuantizedMethod::kLayer);
  assert_string_equal(options.model_path.c_str(), directory.path("net.onnx").c_str());
  ASSERT_FAILS_WITH(parse_arguments({"--config", directory.path("missing.yaml")}).status(),
                    "missing.yaml");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_config_with_toolkit_sections),
      cmocka_unit_test(test_json_config_and_flat_lists),
      cmocka_unit_test(test_config_errors_name_the_key),
      cmocka_unit_test(test_command_line),
      cmocka_unit_test(test_command_line_overrides_config_file),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
