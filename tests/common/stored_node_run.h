// Runs one operator on tensors exactly as a model stores them: the dtypes, quantizations and
// bytes given go into a one-node graph unchanged, through the real shape function and the CPU
// kernel registry, which picks its native int8, byte-move or float-domain path as it would for
// a model. run_node (op_test_harness.h) is built on this; tests use it directly to check bytes.
//
//   StoredRun run = run_stored("Transpose", {stored("x", DataType::kInt8, {2, 3}, codes, q)},
//                              {{"perm", attr_ints({1, 0})}}, {{DataType::kInt8, q}});
//   std::vector<int8_t> moved = from_bytes<int8_t>(run.outputs[0]);
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace orknn::testing {

using Attributes = std::map<std::string, graph::Attribute>;

struct StoredTensor {
  std::string name;  // empty: an omitted optional input
  DataType data_type = DataType::kFloat32;
  graph::Shape shape;
  std::vector<uint8_t> bytes;
  graph::Quantization quantization;
  bool constant = false;
};

// The dtype and quantization of one output; its shape comes from the shape function.
struct StoredOutput {
  DataType data_type = DataType::kFloat32;
  graph::Quantization quantization;
};

struct StoredRun {
  Status status;  // failure of shape inference, kernel build or run
  std::vector<graph::Shape> output_shapes;
  std::vector<std::vector<uint8_t>> outputs;  // exactly the bytes of each output tensor
};

// The values' bytes in memory order (little-endian on every target we run tests on).
template <typename Value>
std::vector<uint8_t> to_bytes(const std::vector<Value>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(Value));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename Value>
std::vector<Value> from_bytes(const std::vector<uint8_t>& bytes) {
  std::vector<Value> values(bytes.size() / sizeof(Value));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(Value));
  return values;
}

template <typename Value>
StoredTensor stored(std::string name, DataType data_type, graph::Shape shape,
                    const std::vector<Value>& values, graph::Quantization quantization = {},
                    bool constant = false) {
  return StoredTensor{std::move(name),         data_type, std::move(shape), to_bytes(values),
                      std::move(quantization), constant};
}

// The graph of one node `op_type` over `inputs` with `outputs.size()` outputs whose shapes the
// shape function infers (its failure is returned). The graph owns copies of the constant bytes.
Result<graph::Graph> single_node_graph(const std::string& op_type,
                                       const std::vector<StoredTensor>& inputs,
                                       const Attributes& attributes,
                                       const std::vector<StoredOutput>& outputs);

// Builds the CPU kernel of the node of `graph` (made by single_node_graph from `inputs`) and
// runs it on the bytes of `inputs`.
StoredRun run_single_node(const graph::Graph& graph, const std::vector<StoredTensor>& inputs);

// single_node_graph, then run_single_node.
StoredRun run_stored(const std::string& op_type, const std::vector<StoredTensor>& inputs,
                     const Attributes& attributes, const std::vector<StoredOutput>& outputs);

}  // namespace orknn::testing
