// QDQ models (ONNX Runtime's quantizer, PyTorch quantization export) describe int8 inference as a
// float graph with QuantizeLinear/DequantizeLinear pairs around each quantized tensor. Our model
// stores the int8 tensors themselves, with their scale and zero point, and the runtime's kernels
// do the int8 arithmetic, so each pair is absorbed into the tensor it quantizes:
//   x -> Q(s, z) -> DQ(s, z) -> consumers      =>  x is INT8 (s, z); consumers read x
//   constant q -> DQ(s, z, axis) -> consumer     =>  an INT8 / INT32 constant with (s, z, axis)
//   constant float w -> Q -> DQ -> consumer      =>  w quantized here, as QuantizeLinear would
// UINT8 tensors become INT8 with the zero point lowered by 128, which represents the same reals
// exactly and lets the native int8 kernels take them.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "passes/passes.h"

namespace orknn::convert {
namespace {

struct QuantizationOperands {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int axis = 0;
  DataType type = DataType::kUInt8;  // of the quantized values (ONNX default uint8)
};

Result<QuantizationOperands> read_operands(const ir::Graph& graph, const ir::Node& node,
                                           const ir::Shape& shape) {
  QuantizationOperands operands;
  if (!node.has_input(1) || !graph.tensor(node.inputs[1]).is_constant()) {
    return invalid_model(node.describe(), ": the scale must be a constant");
  }
  operands.scales = ir::constant_as_floats(graph.tensor(node.inputs[1]));
  if (node.has_input(2)) {
    const ir::Tensor& zero_point = graph.tensor(node.inputs[2]);
    if (!zero_point.is_constant()) {
      return invalid_model(node.describe(), ": the zero point must be a constant");
    }
    operands.type = zero_point.type;
    for (int64_t value : ir::constant_as_ints(zero_point)) {
      operands.zero_points.push_back(static_cast<int32_t>(value));
    }
  } else {
    operands.zero_points.assign(operands.scales.size(), 0);
  }
  if (operands.type != DataType::kUInt8 && operands.type != DataType::kInt8 &&
      operands.type != DataType::kInt32) {
    return invalid_model(node.describe(), ": quantized type ", data_type_name(operands.type),
                         " is not supported (UINT8, INT8, and INT32 for biases)");
  }
  if (operands.zero_points.size() != operands.scales.size() || operands.scales.empty()) {
    return invalid_model(node.describe(), ": scale and zero point differ in size");
  }
  for (float scale : operands.scales) {
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      return invalid_model(node.describe(), ": scale ", scale, " is not a positive number");
    }
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = ir::int_attribute(node, "axis", 1);
  if (operands.scales.size() > 1) {
    if (axis < -rank || axis >= rank) {
      return invalid_model(node.describe(), ": axis ", axis, " is out of range for rank ", rank);
    }
    if (axis < 0) axis += rank;
    if (shape[static_cast<size_t>(axis)] != static_cast<int64_t>(operands.scales.size())) {
      return invalid_model(node.describe(), ": ", operands.scales.size(), " scales for dimension ",
                           axis, " of size ", shape[static_cast<size_t>(axis)]);
    }
    operands.axis = static_cast<int>(axis);
  }
  if (ir::int_attribute(node, "block_size", 0) != 0) {
    return invalid_model(node.describe(), ": blocked quantization is not supported");
  }
  return operands;
}

// The stored form: uint8 shifted to int8.
model::Quantization stored_quantization(const QuantizationOperands& operands) {
  model::Quantization quantization;
  quantization.scales = operands.scales;
  quantization.zero_points = operands.zero_points;
  if (operands.type == DataType::kUInt8) {
    for (int32_t& zero_point : quantization.zero_points) zero_point -= 128;
  }
  quantization.axis = operands.axis;
  return quantization;
}

DataType stored_type(const QuantizationOperands& operands) {
  return operands.type == DataType::kInt32 ? DataType::kInt32 : DataType::kInt8;
}

bool same_parameters(const QuantizationOperands& a, const QuantizationOperands& b) {
  return a.scales == b.scales && a.zero_points == b.zero_points && a.type == b.type &&
         (a.scales.size() <= 1 || a.axis == b.axis);
}

// Integer codes of a constant, re-based to the stored type.
ir::Bytes stored_codes(const ir::Tensor& tensor, const QuantizationOperands& operands) {
  const std::vector<int64_t> codes = ir::constant_as_ints(tensor);
  if (operands.type == DataType::kInt32) {
    ir::Bytes bytes(codes.size() * 4);
    for (size_t i = 0; i < codes.size(); ++i) {
      const int32_t value = static_cast<int32_t>(codes[i]);
      std::memcpy(bytes.data() + 4 * i, &value, 4);
    }
    return bytes;
  }
  ir::Bytes bytes(codes.size());
  const int64_t shift = operands.type == DataType::kUInt8 ? 128 : 0;
  for (size_t i = 0; i < codes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(codes[i] - shift));
  }
  return bytes;
}

// QuantizeLinear of a float constant, with the runtime's rounding rule (docs/quantization.md 2).
ir::Bytes quantize_constant(const ir::Tensor& tensor, const QuantizationOperands& operands) {
  const std::vector<float> values = ir::constant_as_floats(tensor);
  const model::Quantization quantization = stored_quantization(operands);
  int64_t inner = 1;
  if (operands.scales.size() > 1) {
    for (size_t d = static_cast<size_t>(operands.axis) + 1; d < tensor.shape.size(); ++d) {
      inner *= tensor.shape[d];
    }
  }
  const size_t channels = operands.scales.size();
  ir::Bytes bytes(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t channel = channels > 1 ? (i / static_cast<size_t>(inner)) % channels : 0;
    bytes[i] = static_cast<uint8_t>(
        quantize_int8(values[i], quantization.scales[channel], quantization.zero_points[channel]));
  }
  return bytes;
}

}  // namespace

Status import_qdq(ir::Graph* graph, int* out_count) {
  int count = 0;
  std::set<int> removed;

  // Dequantized constants: the constant is the int8 (or int32) tensor itself.
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const ir::Node& node = graph->nodes[i];
    if (node.op_type != "DequantizeLinear" || !node.domain.empty()) continue;
    const ir::Tensor& codes = graph->tensor(node.inputs[0]);
    if (!codes.is_constant()) continue;
    ORKNN_ASSIGN_OR_RETURN(QuantizationOperands operands, read_operands(*graph, node, codes.shape));
    if (codes.type != operands.type) {
      return invalid_model(node.describe(), ": values are ", data_type_name(codes.type),
                           " but the zero point is ", data_type_name(operands.type));
    }
    ir::Tensor& result = graph->tensor(node.outputs[0]);
    result.type = stored_type(operands);
    result.shape = codes.shape;
    result.shape_known = true;
    result.quantization = stored_quantization(operands);
    result.data = std::make_shared<const ir::Bytes>(stored_codes(codes, operands));
    removed.insert(static_cast<int>(i));
    ++count;
  }

  // Quantize -> Dequantize pairs on tensors (and on float constants).
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (removed.count(static_cast<int>(i))) continue;
    const ir::Node quantize = graph->nodes[i];
    if (quantize.op_type != "QuantizeLinear" || !quantize.domain.empty()) continue;
    const std::string source = quantize.inputs[0];
    const std::string codes = quantize.outputs[0];
    ORKNN_ASSIGN_OR_RETURN(QuantizationOperands operands,
                           read_operands(*graph, quantize, graph->tensor(source).shape));
    if (operands.type == DataType::kInt32) {
      return invalid_model(quantize.describe(), ": quantizing to INT32 is not supported");
    }
    std::vector<int> dequantizers;
    for (int consumer : graph->consumers(codes)) {
      const ir::Node& node = graph->nodes[static_cast<size_t>(consumer)];
      if (node.op_type != "DequantizeLinear" || node.inputs[0] != codes) {
        return invalid_model(quantize.describe(), ": its output '", codes, "' is read by ",
                             node.describe(), "; only DequantizeLinear may read quantized values");
      }
      ORKNN_ASSIGN_OR_RETURN(QuantizationOperands dequantize_operands,
                             read_operands(*graph, node, graph->tensor(codes).shape));
      if (!same_parameters(operands, dequantize_operands)) {
        return invalid_model(node.describe(), ": its scale/zero point differ from those of ",
                             quantize.describe(), "; requantization pairs are not supported");
      }
      dequantizers.push_back(consumer);
    }
    ir::Tensor& tensor = graph->tensor(source);
    if (tensor.is_constant()) {
      // Each dequantized copy becomes the quantized constant.
      const ir::Bytes quantized = quantize_constant(tensor, operands);
      for (int consumer : dequantizers) {
        ir::Tensor& result = graph->tensor(graph->nodes[static_cast<size_t>(consumer)].outputs[0]);
        result.type = DataType::kInt8;
        result.shape = tensor.shape;
        result.shape_known = true;
        result.quantization = stored_quantization(operands);
        result.data = std::make_shared<const ir::Bytes>(quantized);
        removed.insert(consumer);
      }
      if (graph->is_graph_output(codes)) {
        return invalid_model(quantize.describe(),
                             ": a quantized constant as graph output is not "
                             "supported");
      }
    } else {
      if (tensor.is_quantized() &&
          (tensor.quantization.scales != stored_quantization(operands).scales ||
           tensor.quantization.zero_points != stored_quantization(operands).zero_points)) {
        return invalid_model("tensor '", source,
                             "' is quantized twice with different scales or "
                             "zero points (",
                             quantize.describe(), ")");
      }
      tensor.type = DataType::kInt8;
      tensor.quantization = stored_quantization(operands);
      // A dequantized graph output keeps its name: the tensor it aliases takes that name.
      std::string output_name;
      const bool renamable = !graph->is_graph_input(source) && !graph->is_graph_output(source);
      for (int consumer : dequantizers) {
        const std::string dequantized = graph->nodes[static_cast<size_t>(consumer)].outputs[0];
        if (output_name.empty() && renamable && graph->is_graph_output(dequantized)) {
          output_name = dequantized;
        } else {
          graph->replace_uses(dequantized, source);
        }
        removed.insert(consumer);
      }
      if (graph->is_graph_output(codes)) graph->replace_uses(codes, source);
      if (!output_name.empty()) graph->rename_tensor(source, output_name);
    }
    removed.insert(static_cast<int>(i));
    ++count;
  }

  // Dequantize of a run-time tensor with no Quantize before it (a quantized graph input).
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (removed.count(static_cast<int>(i))) continue;
    const ir::Node node = graph->nodes[i];
    if (node.op_type != "DequantizeLinear" || !node.domain.empty()) continue;
    const std::string source = node.inputs[0];
    ir::Tensor& tensor = graph->tensor(source);
    ORKNN_ASSIGN_OR_RETURN(QuantizationOperands operands,
                           read_operands(*graph, node, tensor.shape));
    if (!graph->is_graph_input(source) || operands.type == DataType::kInt32) {
      return invalid_model(node.describe(), ": dequantizes '", source,
                           "', which is neither a constant nor a quantized graph input");
    }
    tensor.type = DataType::kInt8;
    tensor.quantization = stored_quantization(operands);
    graph->replace_uses(node.outputs[0], source);
    removed.insert(static_cast<int>(i));
    ++count;
  }

  graph->remove_nodes(removed);
  graph->remove_dead_code();
  *out_count = count;
  return graph->sort_topologically();
}

}  // namespace orknn::convert
