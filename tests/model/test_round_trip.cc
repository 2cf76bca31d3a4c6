// Build, serialize, parse and compare every field; file writing and reading.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "model/model_file.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace {

using namespace orknn;
using namespace orknn::model;
using namespace orknn::model::testing;

std::shared_ptr<const ModelFile> parse_ok(std::vector<uint8_t> bytes) {
  Result<std::shared_ptr<const ModelFile>> model = ModelFile::parse(std::move(bytes));
  if (!model.ok()) fail_msg("parse failed: %s", model.status().message().c_str());
  return model.value();
}

void expect_same_floats(const google::protobuf::RepeatedField<float>& actual,
                        const std::vector<float>& expected) {
  assert_int_equal(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) assert_true(actual[int(i)] == expected[i]);
}

void test_round_trip_preserves_every_field(void** state) {
  const SampleModel sample = make_sample_model();
  std::shared_ptr<const ModelFile> model = parse_ok(sample_model_bytes());
  const proto::Model& graph = model->graph();

  assert_int_equal(model->format_version(), 1);
  assert_string_equal(graph.producer_name().c_str(), "model-tests");
  assert_string_equal(graph.producer_version().c_str(), "1.2.3");
  assert_string_equal(graph.target_platform().c_str(), "rk3588");
  assert_string_equal(graph.custom_string().c_str(), "sample custom string");
  assert_string_equal(graph.source_framework().c_str(), "ONNX");

  assert_int_equal(graph.tensors_size(), 13);
  const proto::Tensor& input = graph.tensors(sample.input);
  assert_string_equal(input.name().c_str(), "input");
  assert_int_equal(data_type_from_proto(input.data_type()), DataType::kFloat32);
  assert_int_equal(input.shape_size(), 4);
  assert_int_equal(input.shape(1), 3);
  assert_false(input.is_constant());
  assert_int_equal(input.quantization().scale_size(), 0);

  const proto::Tensor& aux = graph.tensors(sample.aux);
  assert_int_equal(data_type_from_proto(aux.data_type()), DataType::kInt8);
  expect_same_floats(aux.quantization().scale(), {0.125f});
  assert_int_equal(aux.quantization().zero_point(0), -3);

  const proto::Tensor& weight = graph.tensors(sample.weight);
  assert_true(weight.is_constant());
  assert_int_equal(weight.data_size(), 6);
  assert_int_equal(weight.data_offset() % 64, 0);
  expect_same_floats(weight.quantization().scale(), {0.5f, 0.25f});
  assert_int_equal(weight.quantization().axis(), 0);
  const int8_t expected_weights[6] = {1, -2, 3, -4, 5, -6};
  assert_int_equal(model->constant_size(sample.weight), 6);
  assert_memory_equal(model->constant_data(sample.weight), expected_weights, 6);

  // Float and int64 constants are stored little-endian.
  const uint8_t expected_bias[8] = {0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0xbf};
  assert_memory_equal(model->constant_data(sample.bias), expected_bias, 8);
  const proto::Tensor& clip_max = graph.tensors(sample.clip_max);
  assert_int_equal(clip_max.shape_size(), 0);  // a scalar
  assert_int_equal(clip_max.data_size(), 4);
  const uint8_t expected_shape[16] = {1,    0,    0,    0,    0,    0,    0,    0,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  assert_memory_equal(model->constant_data(sample.shape), expected_shape, 16);

  // Every constant is 64-byte aligned in memory, where the runtime uses it in place.
  assert_int_equal(reinterpret_cast<uintptr_t>(model->weights()) % 64, 0);
  for (int i = 0; i < graph.tensors_size(); ++i) {
    if (graph.tensors(i).is_constant()) {
      assert_int_equal(reinterpret_cast<uintptr_t>(model->constant_data(i)) % 64, 0);
    } else {
      assert_null(model->constant_data(i));
      assert_int_equal(model->constant_size(i), 0);
    }
  }
  assert_null(model->constant_data(-1));
  assert_null(model->constant_data(graph.tensors_size()));

  assert_int_equal(graph.nodes_size(), 7);
  const proto::Node& conv = graph.nodes(0);
  assert_string_equal(conv.op_type().c_str(), "Conv");
  assert_string_equal(conv.name().c_str(), "conv");
  assert_int_equal(conv.inputs_size(), 3);
  assert_int_equal(conv.inputs(1), sample.weight);
  assert_int_equal(conv.outputs(0), sample.conv_out);
  assert_int_equal(conv.attributes_size(), 5);
  assert_string_equal(conv.attributes(0).name().c_str(), "kernel_shape");
  assert_int_equal(conv.attributes(0).ints().values_size(), 2);
  assert_int_equal(conv.attributes(3).int_value(), 1);
  assert_string_equal(conv.attributes(4).string_value().c_str(), "NOTSET");
  assert_string_equal(graph.nodes(2).name().c_str(), "");
  assert_int_equal(graph.nodes(3).inputs(1), -1);  // Clip without min
  assert_true(graph.nodes(4).attributes(0).float_value() == 0.1f);
  assert_int_equal(graph.nodes(5).attributes(1).floats().values_size(), 4);
  assert_true(graph.nodes(5).attributes(1).floats().values(3) == 2.0f);

  assert_int_equal(graph.inputs_size(), 2);
  assert_int_equal(graph.inputs(0).tensor(), sample.input);
  expect_same_floats(graph.inputs(0).mean(), {0.5f, 0.5f, 0.5f});
  expect_same_floats(graph.inputs(0).std(), {0.25f, 0.25f, 0.25f});
  assert_true(graph.inputs(0).nhwc_layout());
  assert_true(graph.inputs(0).reverse_channels());
  assert_false(graph.inputs(1).nhwc_layout());
  assert_int_equal(graph.inputs(1).mean_size(), 0);

  assert_int_equal(graph.outputs_size(), 2);
  assert_int_equal(graph.outputs(0), sample.upsampled);
  assert_int_equal(graph.outputs(1), sample.flat);

  assert_int_equal(graph.dynamic_shapes_size(), 2);
  assert_int_equal(graph.dynamic_shapes(1).shapes_size(), 2);
  assert_int_equal(graph.dynamic_shapes(1).shapes(0).dims(2), 8);

  // Nothing is lost or added: the decoded graph is the built graph.
  assert_true(graph.SerializeAsString() == sample.builder.graph().SerializeAsString());
  assert_int_equal(model->weights_size(), sample.builder.weights().size());
  assert_memory_equal(model->weights(), sample.builder.weights().data(), model->weights_size());
}

void test_serialize_is_deterministic(void** state) {
  assert_true(sample_model_bytes() == sample_model_bytes());
}

void test_model_without_constants_has_no_weights(void** state) {
  ModelBuilder builder;
  const int x = builder.add_tensor("x", DataType::kFloat32, {1, 4});
  const int y = builder.add_tensor("y", DataType::kFloat32, {1, 4});
  builder.add_node("Relu", {x}, {y});
  builder.add_input(x);
  builder.add_output(y);
  Result<std::vector<uint8_t>> bytes = builder.serialize();
  assert_true(bytes.ok());
  std::shared_ptr<const ModelFile> model = parse_ok(bytes.value());
  assert_int_equal(read_header(bytes.value()).section_count, 1);
  assert_null(model->weights());
  assert_int_equal(model->weights_size(), 0);
}

// The copy that keeps weights aligned is made only when the caller's buffer is misaligned; try
// buffers of many sizes so both paths run, and check the pointer every time.
void test_weights_aligned_for_any_buffer(void** state) {
  const std::vector<uint8_t> bytes = sample_model_bytes();
  const int weight = make_sample_model().weight;
  for (size_t extra = 0; extra < 64; ++extra) {
    std::vector<uint8_t> decoy(extra * 24 + 1);  // shifts where the allocator puts the next one
    std::shared_ptr<const ModelFile> model = parse_ok(bytes);
    assert_int_equal(reinterpret_cast<uintptr_t>(model->weights()) % 64, 0);
    assert_int_equal(model->constant_data(weight)[0], 1);  // the first weight value
  }
}

void test_builder_reports_constant_size_mismatch(void** state) {
  ModelBuilder builder;
  const float values[3] = {1, 2, 3};
  builder.add_constant("w", DataType::kFloat32, {2, 2}, values, sizeof(values));
  expect_error(builder.serialize().status(), StatusCode::kInvalidArgument,
               {"constant 0 \"w\"", "12 bytes given", "[2,2]", "FP32", "needs 16"});
}

void test_builder_refuses_invalid_graph(void** state) {
  SampleModel sample = make_sample_model();
  sample.builder.add_output(99);
  expect_error(sample.builder.serialize().status(), StatusCode::kInvalidModel,
               {"output 2", "tensor index 99"});
}

// --- Files ------------------------------------------------------------------------------------

std::string make_temporary_directory() {
  char pattern[] = "/tmp/orknn-model-test-XXXXXX";
  const char* made = mkdtemp(pattern);
  assert_non_null(made);
  return made;
}

std::vector<std::string> list_directory(const std::string& path) {
  std::vector<std::string> names;
  DIR* directory = opendir(path.c_str());
  assert_non_null(directory);
  while (dirent* entry = readdir(directory)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(directory);
  return names;
}

void remove_tree(const std::string& path) {
  const std::string command = "rm -rf '" + path + "'";
  assert_int_equal(std::system(command.c_str()), 0);
}

void test_write_file_then_read_model_file(void** state) {
  const std::string directory = make_temporary_directory();
  const std::string path = directory + "/sample.rknn";
  const SampleModel sample = make_sample_model();
  const Status written = sample.builder.write_file(path);
  if (!written.ok()) fail_msg("%s", written.message().c_str());
  assert_int_equal(list_directory(directory).size(), 1);  // no temporary file left

  Result<std::vector<uint8_t>> bytes = read_model_file(path);
  assert_true(bytes.ok());
  assert_true(bytes.value() == sample_model_bytes());
  parse_ok(bytes.value());
  remove_tree(directory);
}

void test_read_model_file_range(void** state) {
  // A model embedded in a bigger file, as rknn_init's offset/size form allows.
  const std::string directory = make_temporary_directory();
  const std::string path = directory + "/bundle.bin";
  const std::vector<uint8_t> model_bytes = sample_model_bytes();
  std::vector<uint8_t> bundle(100 + model_bytes.size() + 50, 0xCD);
  std::fill(bundle.begin(), bundle.begin() + 100, 0xAB);
  std::copy(model_bytes.begin(), model_bytes.end(), bundle.begin() + 100);
  FILE* file = fopen(path.c_str(), "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(bundle.data(), 1, bundle.size(), file), bundle.size());
  fclose(file);

  Result<std::vector<uint8_t>> exact = read_model_file(path, 100, model_bytes.size());
  assert_true(exact.ok());
  assert_true(exact.value() == model_bytes);
  Result<std::vector<uint8_t>> to_end = read_model_file(path, 100 + model_bytes.size());
  assert_true(to_end.ok());
  assert_int_equal(to_end.value().size(), 50);
  Result<std::vector<uint8_t>> all = read_model_file(path, 0, 0);
  assert_int_equal(all.value().size(), bundle.size());

  const std::string size_text = std::to_string(bundle.size());
  expect_error(read_model_file(path, bundle.size() + 1, 0).status(), StatusCode::kInvalidArgument,
               {path.c_str(), "offset", "beyond the file size"});
  expect_error(read_model_file(path, 100, bundle.size()).status(), StatusCode::kInvalidArgument,
               {path.c_str(), "offset 100", "exceeds the file size", size_text.c_str()});
  // offset + size wraps around 2^64: must still be refused.
  expect_error(read_model_file(path, 10, UINT64_MAX - 5).status(), StatusCode::kInvalidArgument,
               {"offset 10", "exceeds the file size"});
  remove_tree(directory);
}

void test_read_model_file_errors_name_the_path(void** state) {
  const std::string directory = make_temporary_directory();
  const std::string missing = directory + "/missing.rknn";
  expect_error(read_model_file(missing).status(), StatusCode::kInvalidArgument,
               {missing.c_str(), "No such file or directory"});
  expect_error(read_model_file(directory).status(), StatusCode::kInvalidArgument,
               {directory.c_str(), "not a regular file"});
  remove_tree(directory);
}

void test_write_file_leaves_nothing_behind_on_failure(void** state) {
  const std::string directory = make_temporary_directory();
  // The target is a non-empty directory, so the final rename fails after the data was written.
  const std::string target = directory + "/occupied";
  assert_int_equal(mkdir(target.c_str(), 0755), 0);
  assert_int_equal(mkdir((target + "/child").c_str(), 0755), 0);
  const SampleModel sample = make_sample_model();
  expect_error(sample.builder.write_file(target), StatusCode::kFailed,
               {"cannot rename", target.c_str()});
  assert_int_equal(list_directory(directory).size(), 1);  // only "occupied"

  // A missing folder fails at creation.
  expect_error(sample.builder.write_file(directory + "/no/such/dir/m.rknn"), StatusCode::kFailed,
               {"cannot create", "No such file or directory"});

  // An invalid model is refused before anything touches the disk.
  ModelBuilder empty;
  expect_error(empty.write_file(directory + "/empty.rknn"), StatusCode::kInvalidModel,
               {"no inputs"});
  assert_int_equal(list_directory(directory).size(), 1);
  remove_tree(directory);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_preserves_every_field),
      cmocka_unit_test(test_serialize_is_deterministic),
      cmocka_unit_test(test_model_without_constants_has_no_weights),
      cmocka_unit_test(test_weights_aligned_for_any_buffer),
      cmocka_unit_test(test_builder_reports_constant_size_mismatch),
      cmocka_unit_test(test_builder_refuses_invalid_graph),
      cmocka_unit_test(test_write_file_then_read_model_file),
      cmocka_unit_test(test_read_model_file_range),
      cmocka_unit_test(test_read_model_file_errors_name_the_path),
      cmocka_unit_test(test_write_file_leaves_nothing_behind_on_failure),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
