#include "model/graph_verifier.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/container_format.h"
#include "model/printable_text.h"
#include "model/proto_data_type.h"

namespace orknn::model {
namespace {

// What the checks learn about each tensor and need again later.
struct TensorFacts {
  DataType data_type = DataType::kFloat32;
  bool is_constant = false;
  bool is_graph_input = false;
  int producer = -1;  // index of the node that writes it
};

std::string tensor_label(const proto::Model& model, int index) {
  return str_cat("tensor ", index, " \"", printable_text(model.tensors(index).name()), "\"");
}

std::string node_label(const proto::Model& model, int index) {
  const proto::Node& node = model.nodes(index);
  const std::string op_type = printable_text(node.op_type());
  if (node.name().empty()) return str_cat("node ", index, " (", op_type, ")");
  return str_cat("node ", index, " \"", printable_text(node.name()), "\" (", op_type, ")");
}

std::string tensor_shape(const proto::Tensor& tensor) {
  return format_shape(tensor.shape().data(), static_cast<size_t>(tensor.shape_size()));
}

// Shapes from the file: dimensions >= 0, rank and element count within the caps.
Status check_shape(const int64_t* dims, size_t rank, const std::string& label) {
  if (rank > static_cast<size_t>(kMaxTensorRank)) {
    return invalid_model(label, ": rank ", rank, " exceeds the maximum ", kMaxTensorRank);
  }
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      return invalid_model(label, ": shape[", i, "] is ", dims[i], " (dimensions must be >= 0)");
    }
  }
  if (!checked_element_count(dims, rank)) {
    return invalid_model(label, ": shape ", format_shape(dims, rank), " has more than ",
                         kMaxTensorElements, " elements");
  }
  return ok_status();
}

bool zero_point_range(DataType type, int64_t* out_low, int64_t* out_high) {
  switch (type) {
    case DataType::kInt8:
      *out_low = -128, *out_high = 127;
      return true;
    case DataType::kUInt8:
      *out_low = 0, *out_high = 255;
      return true;
    case DataType::kInt16:
      *out_low = -32768, *out_high = 32767;
      return true;
    case DataType::kInt32:
      *out_low = std::numeric_limits<int32_t>::min();
      *out_high = std::numeric_limits<int32_t>::max();
      return true;
    default:
      return false;  // not a quantized type
  }
}

Status check_quantization(const proto::Tensor& tensor, DataType type, const std::string& label) {
  const proto::Quantization& quantization = tensor.quantization();
  const int count = quantization.scale_size();
  const int axis = quantization.axis();
  const int rank = tensor.shape_size();
  if (quantization.zero_point_size() != count) {
    return invalid_model(label, ": quantization has ", count, " scales but ",
                         quantization.zero_point_size(), " zero points (counts must be equal)");
  }
  if (count == 0) {
    if (axis != 0) return invalid_model(label, ": quantization axis ", axis, " without scales");
    return ok_status();
  }
  int64_t low = 0;
  int64_t high = 0;
  if (!zero_point_range(type, &low, &high)) {
    return invalid_model(label, ": quantization parameters on a ", data_type_name(type),
                         " tensor (only INT8, UINT8, INT16 and INT32 tensors are quantized)");
  }
  const bool axis_in_range = (axis >= 0 && axis < rank) || (rank == 0 && axis == 0);
  if (!axis_in_range) {
    return invalid_model(label, ": quantization axis ", axis, " is outside [0, ", rank, ")");
  }
  if (count > 1 && tensor.shape(axis) != count) {
    return invalid_model(label, ": ", count, " quantization scales, but dimension ", axis,
                         " of shape ", tensor_shape(tensor), " is ", tensor.shape(axis),
                         " (need 1 scale, or one per slice along the axis)");
  }
  for (int i = 0; i < count; ++i) {
    const float scale = quantization.scale(i);
    if (!std::isfinite(scale) || !(scale > 0.0f)) {
      return invalid_model(label, ": quantization scale[", i, "] is ", scale,
                           " (must be finite and > 0)");
    }
    const int64_t zero_point = quantization.zero_point(i);
    if (zero_point < low || zero_point > high) {
      return invalid_model(label, ": zero_point[", i, "] is ", zero_point, ", outside the ",
                           data_type_name(type), " range [", low, ", ", high, "]");
    }
  }
  return ok_status();
}

Status check_tensor(const proto::Model& model, int index, uint64_t weights_size,
                    TensorFacts* out_facts) {
  const proto::Tensor& tensor = model.tensors(index);
  const std::string label = tensor_label(model, index);
  if (tensor.name().empty()) return invalid_model(label, ": name is empty");
  const std::optional<DataType> type = try_data_type_from_proto(tensor.data_type());
  if (!type) {
    return invalid_model(label, ": data_type ", static_cast<int>(tensor.data_type()),
                         " is not a known type (0..", kDataTypeCount - 1, ")");
  }
  ORKNN_RETURN_IF_ERROR(
      check_shape(tensor.shape().data(), static_cast<size_t>(tensor.shape_size()), label));
  const uint64_t bytes =
      *checked_element_count(tensor.shape().data(), static_cast<size_t>(tensor.shape_size())) *
      element_size(*type);
  if (tensor.is_constant()) {
    if (tensor.data_offset() % kWeightsAlignment != 0) {
      return invalid_model(label, ": data_offset ", tensor.data_offset(), " is not a multiple of ",
                           kWeightsAlignment);
    }
    if (tensor.data_size() != bytes) {
      return invalid_model(label, ": data_size ", tensor.data_size(), " does not match shape ",
                           tensor_shape(tensor), " ", data_type_name(*type), " (", bytes,
                           " bytes)");
    }
    if (tensor.data_offset() > weights_size ||
        tensor.data_size() > weights_size - tensor.data_offset()) {
      return invalid_model(label, ": data_offset ", tensor.data_offset(), " + data_size ",
                           tensor.data_size(), " exceeds the WEIGHTS section size ", weights_size);
    }
  } else if (tensor.data_offset() != 0 || tensor.data_size() != 0) {
    return invalid_model(label, ": not constant, but has data_offset ", tensor.data_offset(),
                         " and data_size ", tensor.data_size(), " (only constants have data)");
  }
  ORKNN_RETURN_IF_ERROR(check_quantization(tensor, *type, label));
  out_facts->data_type = *type;
  out_facts->is_constant = tensor.is_constant();
  return ok_status();
}

// mean and std: empty, or one finite value per channel (dimension 1 of the NCHW shape).
Status check_channel_values(const google::protobuf::RepeatedField<float>& values, const char* what,
                            const proto::Tensor& tensor, const std::string& label) {
  if (values.empty()) return ok_status();
  if (tensor.shape_size() < 2) {
    return invalid_model(label, ": ", values.size(), " ", what, " values, but shape ",
                         tensor_shape(tensor), " has no channel dimension 1");
  }
  if (values.size() != tensor.shape(1)) {
    return invalid_model(label, ": ", values.size(), " ", what, " values for ", tensor.shape(1),
                         " channels of shape ", tensor_shape(tensor), " (need 0 or ",
                         tensor.shape(1), ")");
  }
  const bool is_std = std::string_view(what) == "std";
  for (int i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || (is_std && values[i] == 0.0f)) {
      return invalid_model(label, ": ", what, "[", i, "] is ", values[i],
                           is_std ? " (must be finite and non-zero)" : " (must be finite)");
    }
  }
  return ok_status();
}

Status check_inputs(const proto::Model& model, std::vector<TensorFacts>* facts) {
  const int tensor_count = model.tensors_size();
  if (model.inputs_size() == 0) return invalid_model("the graph has no inputs");
  std::vector<int> input_position(static_cast<size_t>(tensor_count), -1);
  for (int position = 0; position < model.inputs_size(); ++position) {
    const proto::InputInfo& input = model.inputs(position);
    const int index = input.tensor();
    if (index < 0 || index >= tensor_count) {
      return invalid_model("input ", position, ": tensor index ", index, " is outside [0, ",
                           tensor_count, ")");
    }
    const std::string label = str_cat("input ", position, " (", tensor_label(model, index), ")");
    if (input_position[index] >= 0) {
      return invalid_model(label, ": already input ", input_position[index],
                           " (inputs must be unique)");
    }
    input_position[index] = position;
    if ((*facts)[index].is_constant) return invalid_model(label, ": is a constant");
    (*facts)[index].is_graph_input = true;
    const proto::Tensor& tensor = model.tensors(index);
    ORKNN_RETURN_IF_ERROR(check_channel_values(input.mean(), "mean", tensor, label));
    ORKNN_RETURN_IF_ERROR(check_channel_values(input.std(), "std", tensor, label));
    if ((input.nhwc_layout() || input.reverse_channels()) && tensor.shape_size() != 4) {
      return invalid_model(label, ": ", input.nhwc_layout() ? "nhwc_layout" : "reverse_channels",
                           " needs a 4-D input, but the shape is ", tensor_shape(tensor));
    }
  }
  return ok_status();
}

Status check_attributes(const proto::Node& node, const std::string& label) {
  std::unordered_set<std::string_view> names;  // a set, so hostile nodes cannot make this slow
  for (int i = 0; i < node.attributes_size(); ++i) {
    const proto::Attribute& attribute = node.attributes(i);
    if (attribute.name().empty()) return invalid_model(label, ": attribute ", i, " has no name");
    if (attribute.value_case() == proto::Attribute::VALUE_NOT_SET) {
      return invalid_model(label, ": attribute \"", printable_text(attribute.name()),
                           "\" has no value");
    }
    if (!names.insert(attribute.name()).second) {
      return invalid_model(label, ": attribute \"", printable_text(attribute.name()),
                           "\" appears twice");
    }
  }
  return ok_status();
}

// Walks the nodes in file order: an input must already be available when its node runs, which
// is exactly the topological-order rule, and each output gets exactly one producer.
Status check_nodes(const proto::Model& model, std::vector<TensorFacts>* facts) {
  const int tensor_count = model.tensors_size();
  for (int node_index = 0; node_index < model.nodes_size(); ++node_index) {
    const proto::Node& node = model.nodes(node_index);
    const std::string label = node_label(model, node_index);
    if (node.op_type().empty()) return invalid_model(label, ": op_type is empty");
    for (int i = 0; i < node.inputs_size(); ++i) {
      const int index = node.inputs(i);
      if (index == -1) continue;  // an omitted optional input
      if (index < 0 || index >= tensor_count) {
        return invalid_model(label, ": input ", i, " is tensor index ", index, ", outside [0, ",
                             tensor_count, ") (-1 marks an omitted input)");
      }
      const TensorFacts& input = (*facts)[index];
      if (!input.is_constant && !input.is_graph_input && input.producer < 0) {
        return invalid_model(label, ": input ", i, " is ", tensor_label(model, index),
                             ", which is not produced by an earlier node, a graph input or a "
                             "constant (nodes must be in topological order)");
      }
    }
    for (int i = 0; i < node.outputs_size(); ++i) {
      const int index = node.outputs(i);
      if (index < 0 || index >= tensor_count) {
        return invalid_model(label, ": output ", i, " is tensor index ", index, ", outside [0, ",
                             tensor_count, ")");
      }
      TensorFacts& output = (*facts)[index];
      const std::string output_label = tensor_label(model, index);
      if (output.is_constant) {
        return invalid_model(label, ": output ", i, " is ", output_label, ", a constant");
      }
      if (output.is_graph_input) {
        return invalid_model(label, ": output ", i, " is ", output_label, ", a graph input");
      }
      if (output.producer >= 0) {
        return invalid_model(label, ": output ", i, " is ", output_label, ", already produced by ",
                             node_label(model, output.producer), " (each tensor has one producer)");
      }
      output.producer = node_index;
    }
    ORKNN_RETURN_IF_ERROR(check_attributes(node, label));
  }
  for (int index = 0; index < tensor_count; ++index) {
    const TensorFacts& tensor = (*facts)[index];
    if (!tensor.is_constant && !tensor.is_graph_input && tensor.producer < 0) {
      return invalid_model(tensor_label(model, index),
                           " is neither a constant, a graph input, nor produced by any node");
    }
  }
  return ok_status();
}

Status check_outputs(const proto::Model& model) {
  const int tensor_count = model.tensors_size();
  if (model.outputs_size() == 0) return invalid_model("the graph has no outputs");
  std::vector<int> output_position(static_cast<size_t>(tensor_count), -1);
  for (int position = 0; position < model.outputs_size(); ++position) {
    const int index = model.outputs(position);
    if (index < 0 || index >= tensor_count) {
      return invalid_model("output ", position, ": tensor index ", index, " is outside [0, ",
                           tensor_count, ")");
    }
    if (output_position[index] >= 0) {
      return invalid_model("output ", position, " (", tensor_label(model, index),
                           "): already output ", output_position[index],
                           " (outputs must be unique)");
    }
    output_position[index] = position;
  }
  return ok_status();
}

Status check_dynamic_shapes(const proto::Model& model) {
  for (int set_index = 0; set_index < model.dynamic_shapes_size(); ++set_index) {
    const proto::ShapeSet& set = model.dynamic_shapes(set_index);
    if (set.shapes_size() != model.inputs_size()) {
      return invalid_model("dynamic shape set ", set_index, ": ", set.shapes_size(), " shapes for ",
                           model.inputs_size(), " inputs (need one per input)");
    }
    for (int position = 0; position < set.shapes_size(); ++position) {
      const proto::Shape& shape = set.shapes(position);
      const proto::Tensor& tensor = model.tensors(model.inputs(position).tensor());
      const std::string label = str_cat("dynamic shape set ", set_index, ", input ", position);
      if (shape.dims_size() != tensor.shape_size()) {
        return invalid_model(label, ": shape ",
                             format_shape(shape.dims().data(), shape.dims_size()), " has rank ",
                             shape.dims_size(), ", the input \"", printable_text(tensor.name()),
                             "\" has rank ", tensor.shape_size());
      }
      ORKNN_RETURN_IF_ERROR(
          check_shape(shape.dims().data(), static_cast<size_t>(shape.dims_size()), label));
    }
  }
  return ok_status();
}

}  // namespace

std::optional<uint64_t> checked_element_count(const int64_t* dims, size_t rank) {
  uint64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::nullopt;
    // Each dimension is capped on its own too, so that a zero elsewhere cannot hide an absurd one.
    const uint64_t dim = static_cast<uint64_t>(dims[i]);
    if (dim > kMaxTensorElements) return std::nullopt;
    count *= dim;  // count and dim are both <= 2^31 here, so the product fits in 64 bits
    if (count > kMaxTensorElements) return std::nullopt;
  }
  return count;
}

std::string format_shape(const int64_t* dims, size_t rank) {
  std::string text = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

Status verify_graph(const proto::Model& model, uint64_t weights_size) {
  if (model.custom_string().size() > kMaxCustomStringBytes) {
    return invalid_model("custom_string is ", model.custom_string().size(),
                         " bytes, more than the maximum ", kMaxCustomStringBytes);
  }
  const int tensor_count = model.tensors_size();
  std::vector<TensorFacts> facts(static_cast<size_t>(tensor_count));
  std::unordered_map<std::string_view, int> names;
  names.reserve(static_cast<size_t>(tensor_count));
  for (int index = 0; index < tensor_count; ++index) {
    ORKNN_RETURN_IF_ERROR(check_tensor(model, index, weights_size, &facts[index]));
    const auto [existing, inserted] = names.emplace(model.tensors(index).name(), index);
    if (!inserted) {
      return invalid_model(tensor_label(model, index), ": name already used by tensor ",
                           existing->second, " (names must be unique)");
    }
  }
  ORKNN_RETURN_IF_ERROR(check_inputs(model, &facts));
  ORKNN_RETURN_IF_ERROR(check_nodes(model, &facts));
  ORKNN_RETURN_IF_ERROR(check_outputs(model));
  ORKNN_RETURN_IF_ERROR(check_dynamic_shapes(model));
  return ok_status();
}

}  // namespace orknn::model
