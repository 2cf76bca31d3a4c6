// rknn_batch_size: the model takes N frames per inference instead of one. The graph was built
// (and calibrated) for batch 1; here the inputs get batch N and shapes are computed again with
// the runtime's shape functions. Exporters often fold the batch into Reshape targets as a
// literal 1 ([1, -1], [1, 3, 85, 80, 80]); such a target whose data has batch N follows it.
#include "evaluation/runtime_node.h"
#include "passes/passes.h"

namespace orknn::convert {

Status apply_batch_size(ir::Graph* graph, int batch_size) {
  if (batch_size <= 1) return ok_status();
  for (const std::string& name : graph->inputs) {
    ir::Tensor& input = graph->tensor(name);
    if (input.shape.empty() || input.shape[0] != 1) {
      return invalid_argument("rknn_batch_size: input '", name, "' has shape ",
                              ir::shape_to_string(input.shape),
                              "; batching needs inputs whose first dimension is 1");
    }
    input.shape[0] = batch_size;
  }
  for (ir::Node& node : graph->nodes) {
    if (node.op_type == "Reshape" && node.has_input(1)) {
      const ir::Tensor& data = graph->tensor(node.inputs[0]);
      const ir::Tensor& target = graph->tensor(node.inputs[1]);
      if (target.is_constant() && !data.shape.empty() && data.shape[0] == batch_size) {
        std::vector<int64_t> dims = ir::constant_as_ints(target);
        if (!dims.empty() && dims[0] == 1) {
          dims[0] = batch_size;
          node.inputs[1] = graph->add_constant_i64(node.inputs[1] + "_batch", target.shape, dims);
        }
      }
    }
    Result<std::vector<ir::Shape>> shapes = runtime_output_shapes(*graph, node);
    if (!shapes.ok()) {
      return std::move(shapes).take_status().add_context(
          "rknn_batch_size " + std::to_string(batch_size) +
          ": the model does not accept a larger batch");
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].empty()) graph->tensor(node.outputs[i]).shape = shapes.value()[i];
    }
  }
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
