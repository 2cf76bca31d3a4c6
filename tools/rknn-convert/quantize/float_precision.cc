#include "quantize/float_precision.h"

#include <cstring>

namespace orknn::convert {
namespace {

// Inputs the runtime's shape functions and kernels read as float32 numbers, not as data.
bool is_float_operand(const ir::Node& node, size_t position) {
  if (node.op_type == "Resize") return position == 1 || position == 2;
  if (node.op_type == "Clip") return position == 1 || position == 2;
  return false;
}

}  // namespace

bool is_convertible_real(const ir::Graph& graph, const ir::Tensor& tensor) {
  if (tensor.type != DataType::kFloat32 || tensor.is_quantized()) return false;
  if (!tensor.is_constant()) return true;
  for (const ir::Node& node : graph.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == tensor.name && is_float_operand(node, i)) return false;
    }
  }
  return true;
}

void convert_to_float16(ir::Graph* graph, const std::function<bool(const ir::Tensor&)>& selected) {
  for (auto& [name, tensor] : graph->tensors) {
    if (!is_convertible_real(*graph, tensor) || !selected(tensor)) continue;
    tensor.type = DataType::kFloat16;
    if (!tensor.is_constant()) continue;
    const std::vector<float> values = ir::constant_as_floats([&] {
      ir::Tensor view = tensor;
      view.type = DataType::kFloat32;
      return view;
    }());
    ir::Bytes bytes(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const Float16Bits half = float_to_half(values[i]);
      std::memcpy(bytes.data() + 2 * i, &half, 2);
    }
    tensor.data = std::make_shared<const ir::Bytes>(std::move(bytes));
  }
}

}  // namespace orknn::convert
