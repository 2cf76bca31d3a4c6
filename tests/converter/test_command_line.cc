// The rknn-convert binary: exit codes, the summary, the progress bar, errors on stderr, and that
// nothing is written when a conversion fails. Also accuracy-analysis's files.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/accuracy_analysis.h"
#include "converter_test_util.h"

#include "cmocka_last.h"  // last: cmocka's macros clash with standard headers

namespace {

using namespace orknn;
using namespace orknn::convert;
using namespace orknn::convert::test;

void expect_contains(const std::string& text, const char* fragment) {
  if (text.find(fragment) == std::string::npos)
    fail_msg("output lacks \"%s\":\n%s", fragment, text.c_str());
}

OnnxModel network() {
  OnnxModel model(13);
  model.input("x", {1, 3, 8, 8});
  model.initializer("w", {4, 3, 3, 3}, random_values(108, 40, 0.4f));
  model.initializer("b", {4}, random_values(4, 41, 0.1f));
  set_ints(&model.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  model.node("Relu", {"c"}, {"r"}, "relu");
  set_ints(&model.node("MaxPool", {"r"}, {"p"}, "pool"), "kernel_shape", {2, 2});
  model.node("Sigmoid", {"p"}, {"s"}, "sigmoid");
  model.node("Mul", {"p", "s"}, {"y"}, "mul");
  model.output("y");
  return model;
}

void write_dataset(const TempDir& directory, int count) {
  std::ofstream list(directory.path("dataset.txt"));
  for (int i = 0; i < count; ++i) {
    const std::string name = "s" + std::to_string(i) + ".npy";
    write_npy(directory.path(name), {1, 3, 8, 8}, random_values(192, 900 + i, 2.0f));
    list << name << "\n";
  }
}

void test_convert_prints_summary(void**) {
  TempDir directory;
  assert_true(network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 3);
  std::string output;
  const int status = run_tool(directory.path("m.onnx") + " -o " + directory.path("m.rknn") +
                                  " --dataset " + directory.path("dataset.txt") +
                                  " --target-platform rk3588 --custom-string hi --op-target y:gpu",
                              &output);
  if (status != 0) fail_msg("exit %d:\n%s", status, output.c_str());
  assert_true(file_exists(directory.path("m.rknn")));
  Result<model::proto::Model> graph = read_model_graph(directory.path("m.rknn"));
  if (!graph.ok()) fail_msg("%s", graph.status().message().c_str());
  assert_string_equal(graph->target_platform().c_str(), "rk3588");
  assert_string_equal(graph->custom_string().c_str(), "hi");
  assert_string_equal(graph->producer_name().c_str(), "rknn-convert");
  assert_string_equal(graph->source_framework().c_str(), "ONNX");
  expect_contains(output, "calibration [");
  expect_contains(output, "samples/s");
  expect_contains(output, "rknn-convert summary");
  expect_contains(output, "int8 (w8a8, normal, channel)");
  expect_contains(output, "rk3588");
  expect_contains(output, "weights:");
  expect_contains(output, "Conv");
  expect_contains(output, "SiLU");
  expect_contains(output, "GPU");  // the op_target of y, in the summary
  // ... and in the model, on the node that produces y, for the runtime's placement.
  std::string recorded;
  for (const model::proto::Node& node : graph->nodes()) {
    for (int32_t output_index : node.outputs()) {
      if (graph->tensors(output_index).name() != "y") continue;
      for (const model::proto::Attribute& attribute : node.attributes()) {
        if (attribute.name() == "op_target") recorded = attribute.string_value();
      }
    }
  }
  assert_string_equal(recorded.c_str(), "gpu");
}

void test_failure_exit_code_and_no_output(void**) {
  TempDir directory;
  std::ofstream(directory.path("bad.onnx")) << "garbage";
  std::string output;
  int status = run_tool(
      directory.path("bad.onnx") + " -o " + directory.path("x.rknn") + " --do-quantization false",
      &output);
  assert_int_equal(status, 1);
  expect_contains(output, "E rknn-convert:");
  expect_contains(output, "bad.onnx");
  assert_false(file_exists(directory.path("x.rknn")));

  status = run_tool("--no-such-option 1", &output);
  assert_int_equal(status, 2);
  expect_contains(output, "--help");

  assert_true(network().save(directory.path("m.onnx")).ok());
  status = run_tool(directory.path("m.onnx") + " -o " + directory.path("x.rknn"), &output);
  assert_int_equal(status, 1);
  expect_contains(output, "no dataset");
  assert_false(file_exists(directory.path("x.rknn")));
}

void test_config_file_run(void**) {
  TempDir directory;
  assert_true(network().save(directory.path("m.onnx")).ok());
  std::ofstream(directory.path("c.json"))
      << R"({"load_onnx": {"model": "m.onnx"}, "build": {"do_quantization": false},
            "config": {"float_dtype": "float16", "mean_values": [[0, 0, 0]]},
            "export_rknn": {"export_path": "from_config.rknn"}})";
  std::string output;
  const int status = run_tool("--config " + directory.path("c.json") + " -q", &output);
  if (status != 0) fail_msg("exit %d:\n%s", status, output.c_str());
  assert_true(file_exists(directory.path("from_config.rknn")));
  assert_true(output.empty());
}

void test_help_version_list_ops(void**) {
  std::string output;
  assert_int_equal(run_tool("--help", &output), 0);
  expect_contains(output, "accuracy-analysis");
  assert_int_equal(run_tool("--version", &output), 0);
  expect_contains(output, "rknn-convert");
  assert_int_equal(run_tool("--list-ops", &output), 0);
  expect_contains(output, "Conv");
}

void test_hybrid_steps_on_the_command_line(void**) {
  TempDir directory;
  assert_true(network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 2);
  std::string output;
  int status =
      run_tool("hybrid-step1 " + directory.path("m.onnx") + " --dataset " +
                   directory.path("dataset.txt") + " -o " + directory.path("q.yaml") + " -q",
               &output);
  if (status != 0) fail_msg("exit %d:\n%s", status, output.c_str());
  assert_true(file_exists(directory.path("q.yaml")));
  status = run_tool(directory.path("m.onnx") + " --quantization-config " +
                        directory.path("q.yaml") + " -o " + directory.path("h.rknn") + " -q",
                    &output);
  if (status != 0) fail_msg("exit %d:\n%s", status, output.c_str());
  assert_true(file_exists(directory.path("h.rknn")));
}

void test_accuracy_analysis_files(void**) {
  TempDir directory;
  assert_true(network().save(directory.path("m.onnx")).ok());
  write_dataset(directory, 3);
  write_npy(directory.path("probe.npy"), {1, 3, 8, 8}, random_values(192, 950, 2.0f));
  std::string output;
  const int status =
      run_tool("accuracy-analysis " + directory.path("m.onnx") + " " + directory.path("probe.npy") +
                   " --dataset " + directory.path("dataset.txt") + " --output-dir " +
                   directory.path("snapshot"),
               &output);
  if (status != 0) fail_msg("exit %d:\n%s", status, output.c_str());
  expect_contains(output, "accuracy analysis:");
  for (const char* file :
       {"snapshot/golden/x.npy", "snapshot/golden/r.npy", "snapshot/golden/y.npy",
        "snapshot/quantized/y.npy", "snapshot/error_analysis.txt"}) {
    if (!file_exists(directory.path(file))) fail_msg("%s missing", file);
  }
  std::ifstream report(directory.path("snapshot/error_analysis.txt"));
  std::stringstream text;
  text << report.rdbuf();
  expect_contains(text.str(), "entire_cos");
  expect_contains(text.str(), "single_euc");
  expect_contains(text.str(), "Conv");
  expect_contains(text.str(), "SiLU");
  // Identical vectors have cosine 1 and distance 0; opposite ones cosine -1.
  assert_true(cosine_similarity({1, 2, 3}, {1, 2, 3}) > 0.999999);
  assert_true(euclidean_distance({1, 2, 3}, {1, 2, 3}) == 0.0);
  assert_true(cosine_similarity({1, 0}, {-1, 0}) < -0.999999);
  assert_true(std::fabs(euclidean_distance({0, 0}, {3, 4}) - 5.0) < 1e-12);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_convert_prints_summary),
      cmocka_unit_test(test_failure_exit_code_and_no_output),
      cmocka_unit_test(test_config_file_run),
      cmocka_unit_test(test_help_version_list_ops),
      cmocka_unit_test(test_hybrid_steps_on_the_command_line),
      cmocka_unit_test(test_accuracy_analysis_files),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
