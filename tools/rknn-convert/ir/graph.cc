#include "ir/graph.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace orknn::convert::ir {

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dimension : shape) count *= dimension;
  return count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return text + "]";
}

std::string Node::describe() const {
  if (name.empty())
    return op_type + " (unnamed, output '" + (outputs.empty() ? "" : outputs[0]) + "')";
  return op_type + " '" + name + "'";
}

Tensor& Graph::tensor_or_new(const std::string& name) {
  auto [position, inserted] = tensors.try_emplace(name);
  if (inserted) position->second.name = name;
  return position->second;
}

std::string Graph::unique_name(const std::string& base) const {
  auto used = [&](const std::string& candidate) {
    if (tensors.count(candidate)) return true;
    for (const Node& node : nodes) {
      if (node.name == candidate) return true;
    }
    return false;
  };
  if (!used(base)) return base;
  for (int suffix = 2;; ++suffix) {
    std::string candidate = base + "_" + std::to_string(suffix);
    if (!used(candidate)) return candidate;
  }
}

std::string Graph::add_constant(const std::string& base, DataType type, Shape shape, Bytes bytes) {
  const std::string name = unique_name(base);
  Tensor& tensor = tensor_or_new(name);
  tensor.type = type;
  tensor.shape = std::move(shape);
  tensor.shape_known = true;
  tensor.data = std::make_shared<const Bytes>(std::move(bytes));
  return name;
}

std::string Graph::add_constant_f32(const std::string& base, Shape shape,
                                    const std::vector<float>& values) {
  return add_constant(base, DataType::kFloat32, std::move(shape), bytes_from_floats(values));
}

std::string Graph::add_constant_i64(const std::string& base, Shape shape,
                                    const std::vector<int64_t>& values) {
  return add_constant(base, DataType::kInt64, std::move(shape), bytes_from_ints(values));
}

bool Graph::is_graph_input(const std::string& name) const {
  return std::find(inputs.begin(), inputs.end(), name) != inputs.end();
}

bool Graph::is_graph_output(const std::string& name) const {
  return std::find(outputs.begin(), outputs.end(), name) != outputs.end();
}

int Graph::producer(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& output : nodes[i].outputs) {
      if (output == name) return static_cast<int>(i);
    }
  }
  return -1;
}

std::vector<int> Graph::consumers(const std::string& name) const {
  std::vector<int> result;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& inputs_of_node = nodes[i].inputs;
    if (std::find(inputs_of_node.begin(), inputs_of_node.end(), name) != inputs_of_node.end()) {
      result.push_back(static_cast<int>(i));
    }
  }
  return result;
}

int Graph::use_count(const std::string& name) const {
  int count = is_graph_output(name) ? 1 : 0;
  for (const Node& node : nodes) {
    count += static_cast<int>(std::count(node.inputs.begin(), node.inputs.end(), name));
  }
  return count;
}

void Graph::replace_uses(const std::string& from, const std::string& to) {
  for (Node& node : nodes) {
    for (std::string& input : node.inputs) {
      if (input == from) input = to;
    }
  }
  for (std::string& output : outputs) {
    if (output == from) output = to;
  }
}

void Graph::rename_tensor(const std::string& from, const std::string& to) {
  if (from == to) return;
  for (Node& node : nodes) {
    for (std::string& name : node.inputs) {
      if (name == from) name = to;
    }
    for (std::string& name : node.outputs) {
      if (name == from) name = to;
    }
  }
  for (std::string& name : inputs) {
    if (name == from) name = to;
  }
  for (std::string& name : outputs) {
    if (name == from) name = to;
  }
  auto preprocessing_entry = preprocessing.find(from);
  if (preprocessing_entry != preprocessing.end()) {
    preprocessing[to] = preprocessing_entry->second;
    preprocessing.erase(from);
  }
  auto entry = tensors.find(from);
  if (entry != tensors.end()) {
    Tensor tensor = std::move(entry->second);
    tensors.erase(entry);
    tensor.name = to;
    tensors[to] = std::move(tensor);
  }
}

void Graph::remove_nodes(const std::set<int>& indices) {
  if (indices.empty()) return;
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!indices.count(static_cast<int>(i))) kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
}

void Graph::remove_dead_code() {
  // Walk backwards from the outputs: a node is live when one of its outputs is needed.
  std::unordered_set<std::string> needed(outputs.begin(), outputs.end());
  std::vector<bool> live(nodes.size(), false);
  for (size_t i = nodes.size(); i-- > 0;) {
    for (const std::string& output : nodes[i].outputs) {
      if (!output.empty() && needed.count(output)) live[i] = true;
    }
    if (!live[i]) continue;
    for (const std::string& input : nodes[i].inputs) {
      if (!input.empty()) needed.insert(input);
    }
  }
  std::set<int> dead;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!live[i]) dead.insert(static_cast<int>(i));
  }
  remove_nodes(dead);

  std::unordered_set<std::string> referenced(inputs.begin(), inputs.end());
  referenced.insert(outputs.begin(), outputs.end());
  for (Node& node : nodes) {
    for (const std::string& name : node.inputs) referenced.insert(name);
    for (std::string& name : node.outputs) {
      // Outputs nobody reads stay on the node (ONNX position matters) but need no tensor
      // entry beyond the one they have.
      referenced.insert(name);
    }
  }
  for (auto it = tensors.begin(); it != tensors.end();) {
    it = referenced.count(it->first) ? std::next(it) : tensors.erase(it);
  }
}

Status Graph::sort_topologically() {
  std::unordered_set<std::string> available(inputs.begin(), inputs.end());
  for (const auto& [name, tensor] : tensors) {
    if (tensor.is_constant()) available.insert(name);
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  std::vector<bool> placed(nodes.size(), false);
  size_t remaining = nodes.size();
  // Repeatedly place every node whose inputs are available; ONNX files are usually sorted
  // already, so the first sweep places almost everything.
  while (remaining > 0) {
    bool progress = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (const std::string& input : nodes[i].inputs) {
        if (!input.empty() && !available.count(input)) {
          ready = false;
          break;
        }
      }
      if (!ready) continue;
      for (const std::string& output : nodes[i].outputs) {
        if (!output.empty()) available.insert(output);
      }
      sorted.push_back(nodes[i]);
      placed[i] = true;
      --remaining;
      progress = true;
    }
    if (progress) continue;
    // Name the first node that cannot run, and why.
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (placed[i]) continue;
      for (const std::string& input : nodes[i].inputs) {
        if (input.empty() || available.count(input)) continue;
        if (producer(input) < 0) {
          return invalid_model(nodes[i].describe(), ": input '", input,
                               "' is not a graph input, an initializer, or any node's output");
        }
      }
      return invalid_model(nodes[i].describe(),
                           ": the graph has a cycle through this node (its inputs depend on its "
                           "own outputs)");
    }
  }
  nodes = std::move(sorted);
  return ok_status();
}

int64_t Graph::constant_bytes() const {
  int64_t total = 0;
  for (const auto& [name, tensor] : tensors) {
    if (tensor.is_constant()) total += static_cast<int64_t>(tensor.data->size());
  }
  return total;
}

std::vector<float> constant_as_floats(const Tensor& tensor) {
  const size_t count = static_cast<size_t>(tensor.elements());
  std::vector<float> values(count);
  if (!tensor.data) return values;
  const uint8_t* bytes = tensor.data->data();
  if (tensor.type == DataType::kFloat32) {
    std::memcpy(values.data(), bytes, count * sizeof(float));
  } else if (tensor.type == DataType::kFloat16) {
    for (size_t i = 0; i < count; ++i) {
      Float16Bits half;
      std::memcpy(&half, bytes + 2 * i, 2);
      values[i] = half_to_float(half);
    }
  } else {
    std::vector<int64_t> ints = constant_as_ints(tensor);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(ints[i]);
  }
  return values;
}

std::vector<int64_t> constant_as_ints(const Tensor& tensor) {
  const size_t count = static_cast<size_t>(tensor.elements());
  std::vector<int64_t> values(count);
  if (!tensor.data) return values;
  const uint8_t* bytes = tensor.data->data();
  for (size_t i = 0; i < count; ++i) {
    switch (tensor.type) {
      case DataType::kInt64: {
        int64_t v;
        std::memcpy(&v, bytes + 8 * i, 8);
        values[i] = v;
        break;
      }
      case DataType::kInt32: {
        int32_t v;
        std::memcpy(&v, bytes + 4 * i, 4);
        values[i] = v;
        break;
      }
      case DataType::kInt16: {
        int16_t v;
        std::memcpy(&v, bytes + 2 * i, 2);
        values[i] = v;
        break;
      }
      case DataType::kInt8:
        values[i] = static_cast<int8_t>(bytes[i]);
        break;
      case DataType::kUInt8:
      case DataType::kBool:
        values[i] = bytes[i];
        break;
      case DataType::kFloat32: {
        float v;
        std::memcpy(&v, bytes + 4 * i, 4);
        values[i] = static_cast<int64_t>(v);
        break;
      }
      case DataType::kFloat16: {
        Float16Bits half;
        std::memcpy(&half, bytes + 2 * i, 2);
        values[i] = static_cast<int64_t>(half_to_float(half));
        break;
      }
    }
  }
  return values;
}

Bytes bytes_from_floats(const std::vector<float>& values) {
  Bytes bytes(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

Bytes bytes_from_ints(const std::vector<int64_t>& values) {
  Bytes bytes(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

int64_t int_attribute(const Node& node, const std::string& key, int64_t fallback) {
  auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return fallback;
  if (it->second.kind == Attribute::Kind::kFloat)
    return static_cast<int64_t>(it->second.float_value);
  return it->second.int_value;
}

float float_attribute(const Node& node, const std::string& key, float fallback) {
  auto it = node.attributes.find(key);
  if (it == node.attributes.end()) return fallback;
  if (it->second.kind == Attribute::Kind::kInt) return static_cast<float>(it->second.int_value);
  return it->second.float_value;
}

std::string string_attribute(const Node& node, const std::string& key,
                             const std::string& fallback) {
  auto it = node.attributes.find(key);
  return it == node.attributes.end() ? fallback : it->second.string_value;
}

std::vector<int64_t> ints_attribute(const Node& node, const std::string& key,
                                    const std::vector<int64_t>& fallback) {
  auto it = node.attributes.find(key);
  return it == node.attributes.end() ? fallback : it->second.ints;
}

Attribute make_int_attribute(int64_t value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInt;
  attribute.int_value = value;
  return attribute;
}

Attribute make_float_attribute(float value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloat;
  attribute.float_value = value;
  return attribute;
}

Attribute make_string_attribute(std::string value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kString;
  attribute.string_value = std::move(value);
  return attribute;
}

Attribute make_ints_attribute(std::vector<int64_t> values) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInts;
  attribute.ints = std::move(values);
  return attribute;
}

Attribute make_floats_attribute(std::vector<float> values) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloats;
  attribute.floats = std::move(values);
  return attribute;
}

}  // namespace orknn::convert::ir
