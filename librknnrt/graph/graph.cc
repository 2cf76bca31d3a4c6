#include "graph/graph.h"

namespace orknn::graph {

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += 'x';
    text += std::to_string(shape[i]);
  }
  return shape.empty() ? "scalar" : text;
}

namespace {

const char* attribute_kind_name(Attribute::Kind kind) {
  switch (kind) {
    case Attribute::Kind::kInt:
      return "int";
    case Attribute::Kind::kFloat:
      return "float";
    case Attribute::Kind::kString:
      return "string";
    case Attribute::Kind::kInts:
      return "ints";
    case Attribute::Kind::kFloats:
      return "floats";
  }
  return "?";
}

// Finds `key` and checks its kind; returns nullptr when absent.
Result<const Attribute*> find_attribute(const Node& node, const std::string& key,
                                        Attribute::Kind kind) {
  auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return static_cast<const Attribute*>(nullptr);
  if (it->second.kind != kind) {
    return invalid_model(node.describe(), ": attribute '", key, "' is ",
                         attribute_kind_name(it->second.kind), ", expected ",
                         attribute_kind_name(kind));
  }
  return &it->second;
}

}  // namespace

Result<int64_t> Node::int_attribute(const std::string& key, int64_t fallback) const {
  ORKNN_ASSIGN_OR_RETURN(const Attribute* attribute,
                         find_attribute(*this, key, Attribute::Kind::kInt));
  return attribute ? attribute->int_value : fallback;
}

Result<float> Node::float_attribute(const std::string& key, float fallback) const {
  ORKNN_ASSIGN_OR_RETURN(const Attribute* attribute,
                         find_attribute(*this, key, Attribute::Kind::kFloat));
  return attribute ? attribute->float_value : fallback;
}

Result<std::string> Node::string_attribute(const std::string& key,
                                           const std::string& fallback) const {
  ORKNN_ASSIGN_OR_RETURN(const Attribute* attribute,
                         find_attribute(*this, key, Attribute::Kind::kString));
  return attribute ? attribute->string_value : fallback;
}

Result<std::vector<int64_t>> Node::ints_attribute(const std::string& key,
                                                  const std::vector<int64_t>& fallback) const {
  ORKNN_ASSIGN_OR_RETURN(const Attribute* attribute,
                         find_attribute(*this, key, Attribute::Kind::kInts));
  return attribute ? attribute->ints : fallback;
}

Result<std::vector<float>> Node::floats_attribute(const std::string& key,
                                                  const std::vector<float>& fallback) const {
  ORKNN_ASSIGN_OR_RETURN(const Attribute* attribute,
                         find_attribute(*this, key, Attribute::Kind::kFloats));
  return attribute ? attribute->floats : fallback;
}

std::string Node::describe() const {
  return str_cat(op_type, " '", name, "'");
}

size_t Graph::weight_bytes() const {
  size_t total = 0;
  for (const Tensor& tensor : tensors) total += tensor.constant_size;
  return total;
}

}  // namespace orknn::graph
