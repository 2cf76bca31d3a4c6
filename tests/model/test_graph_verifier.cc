// One test per graph rule of docs/model-format.md: each breaks exactly one rule in the sample
// model's graph, packs it without verification, and checks the reader's error message.
#include <cmath>
#include <limits>
#include <string>

#include "model/model_file.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace {

using namespace orknn;
using namespace orknn::model;
using namespace orknn::model::testing;

// Applies `edit` to the sample graph and expects the reader to refuse it with `words`.
template <typename Edit>
void expect_graph_error(Edit edit, std::initializer_list<const char*> words) {
  const SampleModel sample = make_sample_model();
  proto::Model graph = sample.builder.graph();
  edit(sample, graph);
  expect_invalid_model(pack_unverified(graph, sample.builder.weights()), words);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfinity = std::numeric_limits<float>::infinity();

void test_sample_graph_is_valid(void** state) {
  const SampleModel sample = make_sample_model();
  const std::vector<uint8_t> file =
      pack_unverified(sample.builder.graph(), sample.builder.weights());
  assert_true(ModelFile::parse(file).ok());
}

// --- Model-level fields -------------------------------------------------------------------------

void test_custom_string_too_long(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.set_custom_string(std::string(1024, 'c')); },
      {"custom_string is 1024 bytes", "maximum 1023"});
  // Exactly 1023 bytes is allowed.
  SampleModel sample = make_sample_model();
  sample.builder.set_custom_string(std::string(1023, 'c'));
  assert_true(sample.builder.serialize().ok());
}

// --- Tensors ------------------------------------------------------------------------------------

void test_tensor_name_empty(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_tensors(s.sum)->set_name(""); },
      {"tensor 6 \"\": name is empty"});
}

void test_tensor_name_duplicate(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_tensors(s.sum)->set_name("input"); },
      {"tensor 6 \"input\": name already used by tensor 0"});
}

void test_tensor_data_type_unknown(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.sum)->set_data_type(static_cast<proto::DataType>(99));
      },
      {"tensor 6 \"sum\": data_type 99 is not a known type (0..7)"});
}

void test_tensor_rank_too_large(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        for (int i = 0; i < 13; ++i) g.mutable_tensors(s.sum)->add_shape(1);
      },
      {"tensor 6 \"sum\": rank 17 exceeds the maximum 16"});
}

void test_tensor_negative_dimension(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_tensors(s.sum)->set_shape(2, -3); },
      {"tensor 6 \"sum\": shape[2] is -3", "must be >= 0"});
}

void test_tensor_element_count_overflow(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        proto::Tensor* tensor = g.mutable_tensors(s.sum);
        tensor->set_shape(0, 1 << 20);
        tensor->set_shape(1, 1 << 20);  // 2^40 x 16 elements
      },
      {"tensor 6 \"sum\": shape [1048576,1048576,4,4] has more than 2147483648 elements"});
  // A product that wraps around 2^64 when multiplied naively.
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        proto::Tensor* tensor = g.mutable_tensors(s.sum);
        tensor->set_shape(0, int64_t{1} << 32);
        tensor->set_shape(1, int64_t{1} << 32);
        tensor->set_shape(2, 0);
      },
      {"tensor 6", "more than 2147483648 elements"});
}

void test_constant_offset_unaligned(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_tensors(s.bias)->set_data_offset(8); },
      {"tensor 3 \"conv.bias\": data_offset 8 is not a multiple of 64"});
}

void test_constant_size_does_not_match_shape(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_tensors(s.bias)->set_data_size(12); },
      {"tensor 3 \"conv.bias\": data_size 12 does not match shape [2] FP32 (8 bytes)"});
}

void test_constant_outside_weights(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.bias)->set_data_offset(s.builder.weights().size() + 64 -
                                                   s.builder.weights().size() % 64);
      },
      {"tensor 3 \"conv.bias\": data_offset", "+ data_size 8 exceeds the WEIGHTS section size"});
  // Offsets near 2^64 must not wrap around the bounds check.
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.bias)->set_data_offset(UINT64_MAX - 63);
      },
      {"tensor 3", "exceeds the WEIGHTS section size"});
}

void test_non_constant_with_data(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_tensors(s.sum)->set_data_size(8); },
      {"tensor 6 \"sum\": not constant, but has data_offset 0 and data_size 8",
       "only constants have data"});
}

// --- Quantization -----------------------------------------------------------------------------

void test_quantization_count_mismatch(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.aux)->mutable_quantization()->add_scale(0.5f);
      },
      {"tensor 1 \"aux\": quantization has 2 scales but 1 zero points"});
}

void test_quantization_axis_without_scales(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.sum)->mutable_quantization()->set_axis(1);
      },
      {"tensor 6 \"sum\": quantization axis 1 without scales"});
}

void test_quantization_on_float_tensor(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        proto::Quantization* quantization = g.mutable_tensors(s.sum)->mutable_quantization();
        quantization->add_scale(1.0f);
        quantization->add_zero_point(0);
      },
      {"tensor 6 \"sum\": quantization parameters on a FP32 tensor"});
}

void test_quantization_axis_out_of_range(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.weight)->mutable_quantization()->set_axis(4);
      },
      {"tensor 2 \"conv.weight\": quantization axis 4 is outside [0, 4)"});
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.weight)->mutable_quantization()->set_axis(-1);
      },
      {"quantization axis -1 is outside [0, 4)"});
}

void test_quantization_count_does_not_match_axis(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.weight)->mutable_quantization()->set_axis(1);  // dimension 1 is 3
      },
      {"tensor 2 \"conv.weight\": 2 quantization scales, but dimension 1 of shape [2,3,1,1] is 3"});
}

void test_quantization_scale_invalid(void** state) {
  for (float bad : {0.0f, -0.5f, kNaN, kInfinity}) {
    const std::string value = str_cat(bad);
    const std::string words = "quantization scale[1] is " + value;
    expect_graph_error(
        [bad](const SampleModel& s, proto::Model& g) {
          g.mutable_tensors(s.weight)->mutable_quantization()->set_scale(1, bad);
        },
        {"tensor 2 \"conv.weight\"", words.c_str(), "must be finite and > 0"});
  }
}

void test_quantization_zero_point_out_of_range(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        g.mutable_tensors(s.aux)->mutable_quantization()->set_zero_point(0, 128);
      },
      {"tensor 1 \"aux\": zero_point[0] is 128, outside the INT8 range [-128, 127]"});
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        proto::Tensor* tensor = g.mutable_tensors(s.aux);
        tensor->set_data_type(proto::DATA_TYPE_UINT8);
        tensor->mutable_quantization()->set_zero_point(0, -1);
      },
      {"zero_point[0] is -1, outside the UINT8 range [0, 255]"});
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) {
        proto::Tensor* tensor = g.mutable_tensors(s.aux);
        tensor->set_data_type(proto::DATA_TYPE_INT16);
        tensor->mutable_quantization()->set_zero_point(0, 40000);
      },
      {"zero_point[0] is 40000, outside the INT16 range [-32768, 32767]"});
}

// --- Inputs -------------------------------------------------------------------------------------

void test_no_inputs(void** state) {
  expect_graph_error([](const SampleModel&, proto::Model& g) { g.clear_inputs(); },
                     {"the graph has no inputs"});
}

void test_input_index_out_of_range(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_inputs(1)->set_tensor(13); },
      {"input 1: tensor index 13 is outside [0, 13)"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_inputs(0)->set_tensor(-1); },
      {"input 0: tensor index -1 is outside [0, 13)"});
}

void test_input_duplicate(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_inputs(1)->set_tensor(s.input); },
      {"input 1 (tensor 0 \"input\"): already input 0"});
}

void test_input_is_constant(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_inputs(1)->set_tensor(s.bias); },
      {"input 1 (tensor 3 \"conv.bias\"): is a constant"});
}

void test_input_mean_count(void** state) {
  expect_graph_error([](const SampleModel&,
                        proto::Model& g) { g.mutable_inputs(0)->mutable_mean()->RemoveLast(); },
                     {"input 0 (tensor 0 \"input\"): 2 mean values for 3 channels", "need 0 or 3"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_inputs(0)->add_std(1.0f); },
      {"input 0", "4 std values for 3 channels"});
}

void test_input_mean_without_channel_dimension(void** state) {
  ModelBuilder builder;
  const int x = builder.add_tensor("x", DataType::kFloat32, {4});
  const int y = builder.add_tensor("y", DataType::kFloat32, {4});
  builder.add_node("Relu", {x}, {y});
  builder.add_input(x, {{0.5f}, {}});
  builder.add_output(y);
  expect_error(builder.serialize().status(), StatusCode::kInvalidModel,
               {"input 0 (tensor 0 \"x\"): 1 mean values, but shape [4] has no channel dimension"});
}

void test_input_std_invalid(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_inputs(0)->set_std(1, 0.0f); },
      {"input 0", "std[1] is 0", "finite and non-zero"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_inputs(0)->set_std(2, kInfinity); },
      {"std[2] is inf", "finite and non-zero"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_inputs(0)->set_mean(0, kNaN); },
      {"mean[0] is nan", "must be finite"});
}

void test_input_layout_needs_4d(void** state) {
  ModelBuilder builder;
  const int x = builder.add_tensor("x", DataType::kFloat32, {1, 3});
  const int y = builder.add_tensor("y", DataType::kFloat32, {1, 3});
  builder.add_node("Relu", {x}, {y});
  builder.add_input(x, {{}, {}, true, false});
  builder.add_output(y);
  expect_error(builder.serialize().status(), StatusCode::kInvalidModel,
               {"input 0 (tensor 0 \"x\"): nhwc_layout needs a 4-D input, but the shape is [1,3]"});
  ModelBuilder reversed;
  const int a = reversed.add_tensor("a", DataType::kFloat32, {3});
  const int b = reversed.add_tensor("b", DataType::kFloat32, {3});
  reversed.add_node("Relu", {a}, {b});
  reversed.add_input(a, {{}, {}, false, true});
  reversed.add_output(b);
  expect_error(reversed.serialize().status(), StatusCode::kInvalidModel,
               {"reverse_channels needs a 4-D input"});
}

// --- Nodes --------------------------------------------------------------------------------------

void test_node_op_type_empty(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_nodes(2)->set_op_type(""); },
      {"node 2 (): op_type is empty"});
}

void test_node_input_out_of_range(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_nodes(0)->set_inputs(1, 13); },
      {"node 0 \"conv\" (Conv): input 1 is tensor index 13, outside [0, 13)"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_nodes(3)->set_inputs(1, -2); },
      {"node 3 \"clip\" (Clip): input 1 is tensor index -2", "-1 marks an omitted input"});
}

void test_node_output_out_of_range(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_nodes(2)->set_outputs(0, -1); },
      {"node 2 (Add): output 0 is tensor index -1, outside [0, 13)"});
}

void test_nodes_out_of_topological_order(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) { g.mutable_nodes()->SwapElements(0, 2); },
      {"node 0 (Add): input 0 is tensor 4 \"conv.out\"", "topological order"});
  // A node reading its own output is the smallest cycle.
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_nodes(4)->set_inputs(0, s.activated); },
      {"node 4 \"leaky\" (LeakyRelu): input 0 is tensor 9 \"activated\"", "topological order"});
}

void test_node_output_is_constant(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_nodes(1)->set_outputs(0, s.clip_max); },
      {"node 1 \"cast\" (Cast): output 0 is tensor 7 \"clip.max\", a constant"});
}

void test_node_output_is_graph_input(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_nodes(1)->set_outputs(0, s.input); },
      {"node 1 \"cast\" (Cast): output 0 is tensor 0 \"input\", a graph input"});
}

void test_tensor_with_two_producers(void** state) {
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_nodes(2)->set_outputs(0, s.conv_out); },
      {"node 2 (Add): output 0 is tensor 4 \"conv.out\", already produced by node 0 \"conv\" "
       "(Conv)"});
  expect_graph_error(
      [](const SampleModel& s, proto::Model& g) { g.mutable_nodes(2)->add_outputs(s.sum); },
      {"node 2 (Add): output 1 is tensor 6 \"sum\", already produced by node 2 (Add)"});
}

void test_tensor_without_producer(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        proto::Tensor* orphan = g.add_tensors();
        orphan->set_name("orphan");
        orphan->add_shape(1);
      },
      {"tensor 13 \"orphan\" is neither a constant, a graph input, nor produced by any node"});
}

void test_attribute_rules(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_nodes(0)->mutable_attributes(1)->set_name("");
      },
      {"node 0 \"conv\" (Conv): attribute 1 has no name"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_nodes(0)->mutable_attributes(2)->clear_value();
      },
      {"node 0 \"conv\" (Conv): attribute \"strides\" has no value"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_nodes(0)->mutable_attributes(2)->set_name("pads");
      },
      {"node 0 \"conv\" (Conv): attribute \"pads\" appears twice"});
}

// --- Outputs ------------------------------------------------------------------------------------

void test_no_outputs(void** state) {
  expect_graph_error([](const SampleModel&, proto::Model& g) { g.clear_outputs(); },
                     {"the graph has no outputs"});
}

void test_output_index_out_of_range(void** state) {
  expect_graph_error([](const SampleModel&, proto::Model& g) { g.set_outputs(1, 42); },
                     {"output 1: tensor index 42 is outside [0, 13)"});
}

void test_output_duplicate(void** state) {
  expect_graph_error([](const SampleModel& s, proto::Model& g) { g.set_outputs(1, s.upsampled); },
                     {"output 1 (tensor 10 \"upsampled\"): already output 0"});
}

// --- Dynamic shapes ---------------------------------------------------------------------------

void test_dynamic_shape_set_size(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_dynamic_shapes(1)->mutable_shapes()->RemoveLast();
      },
      {"dynamic shape set 1: 1 shapes for 2 inputs"});
}

void test_dynamic_shape_rank(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_dynamic_shapes(0)->mutable_shapes(1)->mutable_dims()->RemoveLast();
      },
      {"dynamic shape set 0, input 1: shape [1,2,4] has rank 3, the input \"aux\" has rank 4"});
}

void test_dynamic_shape_dimensions(void** state) {
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_dynamic_shapes(1)->mutable_shapes(0)->set_dims(0, -1);
      },
      {"dynamic shape set 1, input 0: shape[0] is -1"});
  expect_graph_error(
      [](const SampleModel&, proto::Model& g) {
        g.mutable_dynamic_shapes(1)->mutable_shapes(0)->set_dims(0, int64_t{1} << 40);
      },
      {"dynamic shape set 1, input 0: shape", "more than 2147483648 elements"});
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sample_graph_is_valid),
      cmocka_unit_test(test_custom_string_too_long),
      cmocka_unit_test(test_tensor_name_empty),
      cmocka_unit_test(test_tensor_name_duplicate),
      cmocka_unit_test(test_tensor_data_type_unknown),
      cmocka_unit_test(test_tensor_rank_too_large),
      cmocka_unit_test(test_tensor_negative_dimension),
      cmocka_unit_test(test_tensor_element_count_overflow),
      cmocka_unit_test(test_constant_offset_unaligned),
      cmocka_unit_test(test_constant_size_does_not_match_shape),
      cmocka_unit_test(test_constant_outside_weights),
      cmocka_unit_test(test_non_constant_with_data),
      cmocka_unit_test(test_quantization_count_mismatch),
      cmocka_unit_test(test_quantization_axis_without_scales),
      cmocka_unit_test(test_quantization_on_float_tensor),
      cmocka_unit_test(test_quantization_axis_out_of_range),
      cmocka_unit_test(test_quantization_count_does_not_match_axis),
      cmocka_unit_test(test_quantization_scale_invalid),
      cmocka_unit_test(test_quantization_zero_point_out_of_range),
      cmocka_unit_test(test_no_inputs),
      cmocka_unit_test(test_input_index_out_of_range),
      cmocka_unit_test(test_input_duplicate),
      cmocka_unit_test(test_input_is_constant),
      cmocka_unit_test(test_input_mean_count),
      cmocka_unit_test(test_input_mean_without_channel_dimension),
      cmocka_unit_test(test_input_std_invalid),
      cmocka_unit_test(test_input_layout_needs_4d),
      cmocka_unit_test(test_node_op_type_empty),
      cmocka_unit_test(test_node_input_out_of_range),
      cmocka_unit_test(test_node_output_out_of_range),
      cmocka_unit_test(test_nodes_out_of_topological_order),
      cmocka_unit_test(test_node_output_is_constant),
      cmocka_unit_test(test_node_output_is_graph_input),
      cmocka_unit_test(test_tensor_with_two_producers),
      cmocka_unit_test(test_tensor_without_producer),
      cmocka_unit_test(test_attribute_rules),
      cmocka_unit_test(test_no_outputs),
      cmocka_unit_test(test_output_index_out_of_range),
      cmocka_unit_test(test_output_duplicate),
      cmocka_unit_test(test_dynamic_shape_set_size),
      cmocka_unit_test(test_dynamic_shape_rank),
      cmocka_unit_test(test_dynamic_shape_dimensions),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
