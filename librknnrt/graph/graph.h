// The in-memory graph the runtime plans and executes: typed tensors with quantization
// parameters, nodes in topological order, and the model's metadata.
//
// A Graph is immutable once built (graph_from_model) and shared by every context made from the
// same model (rknn_dup_context). Constant tensors point into the model's weights section, which
// the Graph keeps alive.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace orknn::graph {

using Shape = std::vector<int64_t>;

int64_t element_count(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "1x3x224x224"

struct Quantization {
  std::vector<float> scales;         // empty: not quantized
  std::vector<int32_t> zero_points;  // same length as scales
  int32_t axis = 0;                  // meaningful when there is more than one scale

  bool is_quantized() const { return !scales.empty(); }
  bool is_per_channel() const { return scales.size() > 1; }
  bool operator==(const Quantization& other) const {
    return scales == other.scales && zero_points == other.zero_points &&
           (scales.size() <= 1 || axis == other.axis);
  }
};

struct Tensor {
  std::string name;
  DataType data_type = DataType::kFloat32;
  Shape shape;
  Quantization quantization;
  // Constants (weights, shape operands) point into the model's weights; a constant with no
  // elements may have a null pointer, hence the separate flag.
  bool constant = false;
  const uint8_t* constant_data = nullptr;
  size_t constant_size = 0;

  bool is_constant() const { return constant; }
  int64_t elements() const { return element_count(shape); }
  size_t bytes() const { return static_cast<size_t>(elements()) * element_size(data_type); }
};

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats };
  Kind kind = Kind::kInt;
  int64_t int_value = 0;
  float float_value = 0.0f;
  std::string string_value;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

struct Node {
  std::string name;
  std::string op_type;
  std::vector<int32_t> inputs;   // tensor indices; -1 for an omitted optional input
  std::vector<int32_t> outputs;  // tensor indices
  std::map<std::string, Attribute> attributes;

  bool has_input(size_t position) const {
    return position < inputs.size() && inputs[position] >= 0;
  }
  bool has_attribute(const std::string& key) const { return attributes.count(key) != 0; }
  // Typed attribute access. A missing attribute yields the fallback; a present attribute of the
  // wrong kind is an invalid model.
  Result<int64_t> int_attribute(const std::string& key, int64_t fallback) const;
  Result<float> float_attribute(const std::string& key, float fallback) const;
  Result<std::string> string_attribute(const std::string& key, const std::string& fallback) const;
  Result<std::vector<int64_t>> ints_attribute(const std::string& key,
                                              const std::vector<int64_t>& fallback) const;
  Result<std::vector<float>> floats_attribute(const std::string& key,
                                              const std::vector<float>& fallback) const;
  // "Conv 'conv1'" for messages.
  std::string describe() const;
};

struct GraphInput {
  int32_t tensor = -1;
  std::vector<float> mean;  // per channel; empty means 0
  std::vector<float> std;   // per channel; empty means 1
  bool nhwc_layout = false;
  bool reverse_channels = false;
};

struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string target_platform;
  std::string custom_string;
  std::string source_framework;
  uint32_t format_version = 0;
};

class Graph {
 public:
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // topological order
  std::vector<GraphInput> inputs;
  std::vector<int32_t> outputs;
  std::vector<std::vector<Shape>> dynamic_shape_sets;  // [set][input]
  ModelMetadata metadata;
  // Keeps the bytes that constant tensors point into alive.
  std::shared_ptr<const void> storage;

  const Tensor& tensor(int32_t index) const { return tensors[static_cast<size_t>(index)]; }
  size_t weight_bytes() const;  // total bytes of constant tensors
};

}  // namespace orknn::graph
