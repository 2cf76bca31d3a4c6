// Bad input to rknn-convert: each case fails with one clear error naming the thing that is wrong,
// and no output file (nor a temporary one) is left behind.
#include <filesystem>
#include <fstream>

#include "converter_test_util.h"
#include "onnx_import/onnx_loader.h"
#include "options/option_parsing.h"

#include "cmocka_last.h"  // last: cmocka's macros clash with standard headers

namespace {

using namespace orknn;
using namespace orknn::convert;
using namespace orknn::convert::test;

// x [1,3,8,8] -> Conv(4 filters 3x3, pad 1) -> Relu -> y
OnnxModel conv_model(int opset = 13, std::vector<int64_t> input_dims = {1, 3, 8, 8}) {
  OnnxModel model(opset);
  model.input("x", input_dims);
  model.initializer("w", {4, 3, 3, 3}, random_values(108, 1, 0.5f));
  onnx::NodeProto& conv = model.node("Conv", {"x", "w"}, {"c"}, "conv");
  set_ints(&conv, "pads", {1, 1, 1, 1});
  model.node("Relu", {"c"}, {"y"}, "relu");
  model.output("y");
  return model;
}

// Converts and checks the failure: the message holds every fragment, and the directory holds
// nothing but the inputs the test made.
void expect_failure(const ConvertOptions& options, const TempDir& directory,
                    std::initializer_list<const char*> fragments) {
  const size_t files_before = directory.files().size();
  const Status status = convert_model(options, nullptr);
  if (status.ok()) fail_msg("expected the conversion to fail");
  for (const char* fragment : fragments) {
    if (status.message().find(fragment) == std::string::npos) {
      fail_msg("message \"%s\" lacks \"%s\"", status.message().c_str(), fragment);
    }
  }
  assert_false(file_exists(options.output_path));
  assert_int_equal(directory.files().size(), files_before);
}

void test_garbage_file_is_not_onnx(void**) {
  TempDir directory;
  std::ofstream(directory.path("bad.onnx")) << "this is not a protobuf \xff\xff\xff\xff\x01";
  expect_failure(float32_options(directory.path("bad.onnx"), directory.path("out.rknn")), directory,
                 {"bad.onnx", "not a valid ONNX file"});
}

void test_empty_file(void**) {
  TempDir directory;
  std::ofstream(directory.path("empty.onnx")).close();
  expect_failure(float32_options(directory.path("empty.onnx"), directory.path("out.rknn")),
                 directory, {"empty.onnx", "empty"});
}

void test_missing_file(void**) {
  TempDir directory;
  expect_failure(float32_options(directory.path("absent.onnx"), directory.path("out.rknn")),
                 directory, {"absent.onnx", "not found"});
}

void test_truncated_file(void**) {
  TempDir directory;
  OnnxModel model = conv_model();
  std::string bytes;
  model.proto().SerializeToString(&bytes);
  // Cut inside the weights: the protobuf ends in the middle of a field.
  std::ofstream(directory.path("cut.onnx"), std::ios::binary)
      << bytes.substr(0, bytes.size() * 2 / 3);
  expect_failure(float32_options(directory.path("cut.onnx"), directory.path("out.rknn")), directory,
                 {"cut.onnx", "truncated"});
}

void test_node_reading_undefined_tensor(void**) {
  TempDir directory;
  OnnxModel model = conv_model();
  model.node("Add", {"y", "nowhere"}, {"z"}, "adder");
  model.proto().mutable_graph()->mutable_output(0)->set_name("z");
  assert_true(model.save(directory.path("m.onnx")).ok());
  expect_failure(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), directory,
                 {"nowhere"});
}

void test_missing_external_data(void**) {
  TempDir directory;
  OnnxModel model = conv_model();
  onnx::TensorProto* weights = model.proto().mutable_graph()->mutable_initializer(0);
  weights->clear_raw_data();
  weights->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = weights->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  assert_true(model.save(directory.path("m.onnx")).ok());
  expect_failure(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), directory,
                 {"initializer 'w'", "weights.bin", "missing"});
}

void test_external_data_works_and_is_checked(void**) {
  TempDir directory;
  OnnxModel model = conv_model();
  onnx::TensorProto* weights = model.proto().mutable_graph()->mutable_initializer(0);
  const std::string raw = weights->raw_data();
  std::ofstream(directory.path("weights.bin"), std::ios::binary) << std::string(16, '\0') << raw;
  weights->clear_raw_data();
  weights->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    onnx::StringStringEntryProto* entry = weights->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", "weights.bin");
  add("offset", "16");
  add("length", std::to_string(raw.size()));
  assert_true(model.save(directory.path("m.onnx")).ok());
  const Status status =
      convert_model(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), nullptr);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
  assert_true(file_exists(directory.path("out.rknn")));

  // A length beyond the file is refused, naming the range.
  weights->mutable_external_data(2)->set_value(std::to_string(raw.size() + 100));
  assert_true(model.save(directory.path("m2.onnx")).ok());
  expect_failure(float32_options(directory.path("m2.onnx"), directory.path("out2.rknn")), directory,
                 {"weights.bin", "outside"});
}

void test_unknown_opsets(void**) {
  for (int opset : {5, 20, 99}) {
    TempDir directory;
    OnnxModel model = conv_model(opset);
    assert_true(model.save(directory.path("m.onnx")).ok());
    const std::string expected = "opset " + std::to_string(opset) + " is not supported";
    expect_failure(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), directory,
                   {expected.c_str(), "7 to 19"});
  }
}

void test_dynamic_dims_without_sizes(void**) {
  TempDir directory;
  OnnxModel model = conv_model(13, {-1, 3, -1, -1});
  assert_true(model.save(directory.path("m.onnx")).ok());
  expect_failure(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), directory,
                 {"input 'x'", "x_d0", "x_d2", "input_size_list"});

  // Given sizes, the same model converts.
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("out.rknn"));
  options.input_size_list = {{1, 3, 8, 8}};
  const Status status = convert_model(options, nullptr);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
}

void test_input_size_list_conflicts(void**) {
  TempDir directory;
  assert_true(conv_model().save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("out.rknn"));
  options.input_size_list = {{1, 3, 16, 16}};
  expect_failure(options, directory, {"input_size_list", "'x'", "fixed dimension 2"});
  options.input_size_list = {{1, 3, 8, 8}, {1, 3, 8, 8}};
  expect_failure(options, directory, {"input_size_list has 2 shapes", "1 inputs"});
}

void test_unsupported_operator(void**) {
  TempDir directory;
  OnnxModel model = conv_model(13);
  model.node("Erf", {"y"}, {"z"}, "the_erf");
  model.proto().mutable_graph()->mutable_output(0)->set_name("z");
  assert_true(model.save(directory.path("m.onnx")).ok());
  expect_failure(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), directory,
                 {"Erf 'the_erf'", "opset 13", "the runtime has no Erf", "supported operators",
                  "Conv", "Softmax"});
}

void test_foldable_op_on_runtime_values(void**) {
  TempDir directory;
  OnnxModel model = conv_model(13);
  model.initializer_i64("index", {}, {0});
  onnx::NodeProto& gather = model.node("Gather", {"y", "index"}, {"z"}, "pick");
  set_int(&gather, "axis", 1);
  model.proto().mutable_graph()->mutable_output(0)->set_name("z");
  assert_true(model.save(directory.path("m.onnx")).ok());
  expect_failure(float32_options(directory.path("m.onnx"), directory.path("out.rknn")), directory,
                 {"Gather 'pick'", "only known at run time", "'y'"});
}

void test_mean_std_of_the_wrong_length(void**) {
  TempDir directory;
  assert_true(conv_model().save(directory.path("m.onnx")).ok());
  ConvertOptions options = float32_options(directory.path("m.onnx"), directory.path("out.rknn"));
  options.mean_values = {{0, 0, 0, 0}};
  expect_failure(options, directory, {"mean_values", "'x'", "4 values", "one per channel (3)"});
  options.mean_values = {{0, 0, 0}, {1, 1, 1}};
  expect_failure(options, directory, {"mean_values has 2 lists", "1 input"});
  options.mean_values = {};
  options.std_values = {{1, 1}};
  expect_failure(options, directory, {"std_values", "2 values", "one per channel (3)"});
  options.std_values = {{1, 0, 1}};
  expect_failure(options, directory, {"std_values", "non-zero"});
}

// Quantized conversions with a dataset: the cases the dataset can get wrong.
ConvertOptions int8_options(const TempDir& directory) {
  ConvertOptions options;
  options.model_path = directory.path("m.onnx");
  options.output_path = directory.path("out.rknn");
  options.dataset_path = directory.path("dataset.txt");
  options.quiet = true;
  return options;
}

void test_dataset_of_zero_lines(void**) {
  TempDir directory;
  assert_true(conv_model().save(directory.path("m.onnx")).ok());
  std::ofstream(directory.path("dataset.txt")) << "\n   \n";
  expect_failure(int8_options(directory), directory, {"dataset.txt", "no samples"});
}

void test_dataset_missing(void**) {
  TempDir directory;
  assert_true(conv_model().save(directory.path("m.onnx")).ok());
  ConvertOptions options = int8_options(directory);
  options.dataset_path.clear();
  expect_failure(options, directory, {"no dataset", "--dataset"});
  options.dataset_path = directory.path("nowhere.txt");
  expect_failure(options, directory, {"nowhere.txt", "cannot open"});
}

void test_dataset_line_errors_name_file_and_line(void**) {
  TempDir directory;
  assert_true(conv_model().save(directory.path("m.onnx")).ok());
  write_npy(directory.path("a.npy"), {1, 3, 8, 8}, random_values(192, 3));
  std::ofstream(directory.path("dataset.txt")) << "a.npy\n\nabsent.npy\n";
  expect_failure(int8_options(directory), directory,
                 {"dataset.txt' line 3", "absent.npy", "not found"});

  std::ofstream(directory.path("dataset.txt")) << "a.npy\na.npy a.npy\n";
  expect_failure(int8_options(directory), directory, {"dataset.txt' line 2", "2 files", "1 input"});

  std::ofstream(directory.path("dataset.txt")) << "a.npy\ndataset.txt\n";
  expect_failure(int8_options(directory), directory, {"line 2", "not a .jpg"});

  write_npy(directory.path("wrong.npy"), {1, 3, 4, 4}, random_values(48, 3));
  std::ofstream(directory.path("dataset.txt")) << "a.npy\nwrong.npy\n";
  expect_failure(int8_options(directory), directory,
                 {"line 2", "wrong.npy", "[1,3,4,4]", "[1,3,8,8]"});
}

void test_dataset_images_must_match_the_input(void**) {
  TempDir directory;
  assert_true(conv_model().save(directory.path("m.onnx")).ok());
  write_image(directory.path("good.png"), 8, 8, 3, 1);
  write_image(directory.path("big.png"), 16, 8, 3, 2);
  write_image(directory.path("gray.png"), 8, 8, 1, 3);
  std::ofstream(directory.path("dataset.txt")) << "good.png\nbig.png\n";
  expect_failure(int8_options(directory), directory, {"line 2", "big.png", "16x8", "needs 8x8"});
  std::ofstream(directory.path("dataset.txt")) << "gray.png\n";
  expect_failure(int8_options(directory), directory,
                 {"line 1", "gray.png", "1 channel", "3 channels"});
  std::ofstream(directory.path("dataset.txt")) << "good.png\n";
  const Status status = convert_model(int8_options(directory), nullptr);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
}

void test_unsupported_quantized_dtype(void**) {
  std::vector<std::string> arguments = {"rknn-convert", "m.onnx", "--quantized-dtype", "w4a16"};
  Result<orknn::convert::ParsedCommandLine> parsed = parse_command_line(arguments);
  ASSERT_FAILS_WITH(parsed.status(), "--quantized-dtype", "w4a16", "w8a8");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_garbage_file_is_not_onnx),
      cmocka_unit_test(test_empty_file),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_truncated_file),
      cmocka_unit_test(test_node_reading_undefined_tensor),
      cmocka_unit_test(test_missing_external_data),
      cmocka_unit_test(test_external_data_works_and_is_checked),
      cmocka_unit_test(test_unknown_opsets),
      cmocka_unit_test(test_dynamic_dims_without_sizes),
      cmocka_unit_test(test_input_size_list_conflicts),
      cmocka_unit_test(test_unsupported_operator),
      cmocka_unit_test(test_foldable_op_on_runtime_values),
      cmocka_unit_test(test_mean_std_of_the_wrong_length),
      cmocka_unit_test(test_dataset_of_zero_lines),
      cmocka_unit_test(test_dataset_missing),
      cmocka_unit_test(test_dataset_line_errors_name_file_and_line),
      cmocka_unit_test(test_dataset_images_must_match_the_input),
      cmocka_unit_test(test_unsupported_quantized_dtype),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
