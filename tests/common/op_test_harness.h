// Runs one operator through the real shape inference and CPU kernel path, in float32, float16
// or int8, so op tests state only the node, its inputs and the expected values.
//
//   NodeSpec spec = node_spec("Conv", {input("x", {1, 1, 3, 3}, x), weight("w", {1, 1, 2, 2}, w)},
//                             {{"pads", attr_ints({0, 0, 0, 0})}});
//   NodeRun run = run_ok(spec);                // float32; fails the test if the run fails
//   expect_close(run.outputs[0], expected, 1e-6);
//   check_precisions_agree(spec, 1e-2, 0.05);  // float16 and int8 runs track float32
//   expect_invalid_model(bad_spec, "group 3 does not divide");
//
// Tests that need exact bytes, dtypes and quantizations use stored_node_run.h (included here).
// The checking functions fail the current cmocka test; cmocka itself is included only by the
// .cc files, after the standard headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/stored_node_run.h"
#include "graph/graph.h"

namespace orknn::testing {

// How a tensor is represented in an int8 run.
enum class QuantRole {
  kActivation,  // int8, per-tensor asymmetric from the values' range (default for real tensors)
  kWeight,      // int8, symmetric (zero point 0), per channel along `per_channel_axis` if >= 0
  kBias,        // int32, scale = scale(input 0) x scale(input 1) per channel, zero point 0
  kKeepFloat,   // stays float32 even in the int8 run
};

struct TensorSpec {
  std::string name;  // empty: an omitted optional input
  graph::Shape shape;
  std::vector<float> values;                // real-valued tensors
  DataType data_type = DataType::kFloat32;  // kInt64/kInt32/kBool operands use int_values
  std::vector<int64_t> int_values;
  bool constant = false;
  QuantRole role = QuantRole::kActivation;
  int per_channel_axis = -1;  // kWeight only
};

TensorSpec input(std::string name, graph::Shape shape, std::vector<float> values);
TensorSpec constant(std::string name, graph::Shape shape, std::vector<float> values);
TensorSpec weight(std::string name, graph::Shape shape, std::vector<float> values,
                  int per_channel_axis = 0);
TensorSpec bias(std::string name, graph::Shape shape, std::vector<float> values);
TensorSpec int64_constant(std::string name, graph::Shape shape, std::vector<int64_t> values);
TensorSpec omitted();

graph::Attribute attr_int(int64_t value);
graph::Attribute attr_float(float value);
graph::Attribute attr_string(std::string value);
graph::Attribute attr_ints(std::vector<int64_t> values);
graph::Attribute attr_floats(std::vector<float> values);

struct NodeSpec {
  std::string op_type;
  std::vector<TensorSpec> inputs;
  Attributes attributes;
  int output_count = 1;
  // Data types of the outputs in every precision when they are not real-valued (ArgMax: kInt64).
  std::vector<DataType> integer_outputs;  // empty, or one entry per output (kFloat32 = real)
};

// A one-output node with real-valued outputs.
NodeSpec node_spec(std::string op_type, std::vector<TensorSpec> inputs, Attributes attributes = {});

enum class Precision { kFloat32, kFloat16, kInt8 };
const char* precision_name(Precision precision);

struct NodeRun {
  Status status;  // failure of shape inference, build or run
  std::vector<graph::Shape> output_shapes;
  std::vector<std::vector<float>> outputs;  // decoded to float32 (integer outputs converted)
};

// Runs the node. For kInt8 the output quantization comes from a float32 run of the same node.
NodeRun run_node(const NodeSpec& spec, Precision precision = Precision::kFloat32);

// run_node, failing the current test (naming the op, the precision and the error) unless it
// succeeds.
NodeRun run_ok(const NodeSpec& spec, Precision precision = Precision::kFloat32);

// Fail the current test unless the float32 run fails with `code` (kInvalidModel) and a message
// that contains `fragment`.
void expect_error(const NodeSpec& spec, StatusCode code, const char* fragment);
void expect_invalid_model(const NodeSpec& spec, const char* fragment);

// run_stored, failing the current test unless it succeeds.
StoredRun run_stored_ok(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                        const Attributes& attributes, const std::vector<StoredOutput>& outputs);

// Fails the current cmocka test (with a message naming the position and both values) unless
// |actual - expected| <= tolerance x max(1, max|expected|) everywhere and the sizes match.
void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  double tolerance);
void expect_shape(const graph::Shape& actual, const graph::Shape& expected);

// Runs spec in all three precisions and checks float16 and int8 against float32 with
// expect_close-style relative tolerances; int8 also requires cosine similarity >= 0.99 when the
// output has more than 8 elements.
void check_precisions_agree(const NodeSpec& spec, double float16_tolerance, double int8_tolerance);

// Deterministic uniform values in [low, high).
std::vector<float> random_values(size_t count, float low, float high, uint32_t seed);

// first, first + 1, ..., first + count - 1.
std::vector<float> iota_values(size_t count, float first = 0.0f);

}  // namespace orknn::testing
