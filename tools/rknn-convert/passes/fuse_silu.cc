// Exporters write SiLU (Swish with beta 1, YOLOv5's activation) as x * Sigmoid(x). The runtime
// has SiLU as one op: one pass over the data instead of two, and in int8 one table lookup
// instead of a table plus a float-domain Mul with an intermediate quantization.
#include "passes/passes.h"

namespace orknn::convert {

Status fuse_silu(ir::Graph* graph) {
  std::set<int> removed;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    ir::Node& mul = graph->nodes[i];
    if (mul.op_type != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string& gate = mul.inputs[static_cast<size_t>(side)];
      const std::string& value = mul.inputs[static_cast<size_t>(1 - side)];
      const int producer = graph->producer(gate);
      if (producer < 0 || removed.count(producer)) continue;
      const ir::Node& sigmoid = graph->nodes[static_cast<size_t>(producer)];
      if (sigmoid.op_type != "Sigmoid" || !sigmoid.domain.empty() || sigmoid.inputs[0] != value) {
        continue;
      }
      if (graph->use_count(gate) != 1) continue;  // the sigmoid itself is needed elsewhere
      const ir::Tensor& x = graph->tensor(value);
      const ir::Tensor& product = graph->tensor(mul.outputs[0]);
      if (x.shape != product.shape) continue;  // Mul broadcast: not an elementwise SiLU
      mul.op_type = "SiLU";
      mul.inputs = {value};
      mul.attributes.clear();
      removed.insert(producer);
      break;
    }
  }
  graph->remove_nodes(removed);
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
