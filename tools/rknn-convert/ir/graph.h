// The converter's own graph: mutable, name-addressed, and owning its constant data.
//
// The runtime's graph::Graph is immutable and index-addressed, which suits execution; the
// converter instead rewrites the graph many times (folding, fusing, quantizing), so tensors are
// addressed by name and nodes are plain values that passes edit, remove and insert. Constant
// bytes are shared, immutable buffers: copying a Graph (to try a variant, or to keep the float
// version beside the quantized one) does not copy the weights.
//
// Node semantics are ONNX's (op types, attribute names, input order, NCHW), plus the
// attributes the runtime adds (fused `activation`, Softmax `legacy_coerce_2d`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "graph/graph.h"
#include "model/model_builder.h"

namespace orknn::convert::ir {

using Shape = std::vector<int64_t>;
using Bytes = std::vector<uint8_t>;
using Attribute = graph::Attribute;

int64_t element_count(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[1,3,224,224]"; -1 prints as "?"

struct Tensor {
  std::string name;
  DataType type = DataType::kFloat32;
  // Dimensions in ONNX order. Before shape inference a dimension may be -1 (unknown), and
  // `shape_known` is false for tensors no pass has given a shape yet.
  Shape shape;
  bool shape_known = false;
  // The symbolic names of unknown input dimensions ("batch", "height"), for messages.
  std::vector<std::string> dimension_names;
  // Constants own their little-endian bytes (element count x element size); null otherwise.
  std::shared_ptr<const Bytes> data;
  // Set by the precision passes (QDQ import, int8 rewrite); empty means not quantized.
  model::Quantization quantization;

  bool is_constant() const { return data != nullptr; }
  int64_t elements() const { return element_count(shape); }
  bool is_quantized() const { return !quantization.scales.empty(); }
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;                // "" for the default ONNX domain
  int opset = 0;                     // the version of the node's domain the model imports
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an unused optional output
  std::map<std::string, Attribute> attributes;
  // ONNX attributes of type TENSOR (ConstantOfShape's `value`), kept as constant tensors.
  std::map<std::string, Tensor> tensor_attributes;
  // Why the node cannot reach the runtime as it is, whatever its op (subgraph or string-list
  // attributes); empty normally. Reported only if the node survives to export.
  std::string unrepresentable;

  bool has_input(size_t position) const {
    return position < inputs.size() && !inputs[position].empty();
  }
  bool has_attribute(const std::string& key) const { return attributes.count(key) != 0; }
  // "Conv 'conv1'" (or "Conv (node 3)" when unnamed) for messages.
  std::string describe() const;
};

// Per graph input: how applications present it (see InputOptions in model_builder.h).
struct InputPreprocessing {
  std::vector<float> mean;
  std::vector<float> std;
  bool nhwc_layout = false;
};

class Graph {
 public:
  std::unordered_map<std::string, Tensor> tensors;
  std::vector<Node> nodes;  // topological order once import has finished
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, InputPreprocessing> preprocessing;  // by input name
  int default_opset = 0;                                    // the ai.onnx opset of the source model

  bool has_tensor(const std::string& name) const { return tensors.count(name) != 0; }
  // Precondition: has_tensor(name).
  Tensor& tensor(const std::string& name) { return tensors.at(name); }
  const Tensor& tensor(const std::string& name) const { return tensors.at(name); }
  // The tensor, created with only its name when missing.
  Tensor& tensor_or_new(const std::string& name);

  // A name not used by any tensor or node yet: `base`, or `base_2`, `base_3`, ...
  std::string unique_name(const std::string& base) const;
  // Adds a constant tensor under a fresh name derived from `base`; returns the name.
  std::string add_constant(const std::string& base, DataType type, Shape shape, Bytes bytes);
  std::string add_constant_f32(const std::string& base, Shape shape,
                               const std::vector<float>& values);
  std::string add_constant_i64(const std::string& base, Shape shape,
                               const std::vector<int64_t>& values);

  bool is_graph_input(const std::string& name) const;
  bool is_graph_output(const std::string& name) const;

  // Index of the node that produces `name`, or -1 (graph inputs, constants, unknown names).
  int producer(const std::string& name) const;
  // Indices of the nodes that read `name`, in node order (a node reading it twice is listed once).
  std::vector<int> consumers(const std::string& name) const;
  // Consumers counted over every use, plus one if it is a graph output.
  int use_count(const std::string& name) const;

  // Makes every reader of `from` (node inputs and graph outputs) read `to` instead.
  void replace_uses(const std::string& from, const std::string& to);
  // Renames tensor `from` to `to` everywhere (producer, readers, graph lists, tensor table).
  // Precondition: `to` is not used yet.
  void rename_tensor(const std::string& from, const std::string& to);

  // Removes the nodes whose indices are in `indices`, keeping the order of the others.
  void remove_nodes(const std::set<int>& indices);
  // Drops nodes whose outputs nobody needs, then tensors no node or graph list refers to.
  void remove_dead_code();
  // Orders nodes so every input is produced before use; fails naming a node on a cycle or an
  // input that nothing defines.
  Status sort_topologically();

  int64_t constant_bytes() const;  // total bytes of constant tensors still referenced
};

// Reading and writing constant data.
std::vector<float> constant_as_floats(const Tensor& tensor);  // float32/float16 only
std::vector<int64_t> constant_as_ints(const Tensor& tensor);  // integer types and bool
Bytes bytes_from_floats(const std::vector<float>& values);
Bytes bytes_from_ints(const std::vector<int64_t>& values);

// Typed attribute helpers; a missing attribute yields the fallback.
int64_t int_attribute(const Node& node, const std::string& key, int64_t fallback);
float float_attribute(const Node& node, const std::string& key, float fallback);
std::string string_attribute(const Node& node, const std::string& key, const std::string& fallback);
std::vector<int64_t> ints_attribute(const Node& node, const std::string& key,
                                    const std::vector<int64_t>& fallback);
Attribute make_int_attribute(int64_t value);
Attribute make_float_attribute(float value);
Attribute make_string_attribute(std::string value);
Attribute make_ints_attribute(std::vector<int64_t> values);
Attribute make_floats_attribute(std::vector<float> values);

}  // namespace orknn::convert::ir
