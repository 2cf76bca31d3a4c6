// Shapes and attribute validation of MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool
// (ONNX semantics, NCHW). The window arithmetic is Conv's (spatial_window.cc) plus ceil_mode.
#include "graph/op_schema.h"
#include "graph/ops/node_error.h"
#include "graph/ops/pooling_attributes.h"

namespace orknn::graph {
namespace {

Status check_pool_input(const Node& node, const Shape& input) {
  ORKNN_RETURN_IF_ERROR(check_spatial_input_rank(node, input));
  for (size_t i = 2; i < input.size(); ++i) {
    if (input[i] < 1) {
      return node_error(node, "input shape ", shape_to_string(input), " has an empty spatial axis");
    }
  }
  return ok_status();
}

// A 0/1 flag attribute.
Result<bool> flag_attribute(const Node& node, const char* key) {
  ORKNN_ASSIGN_OR_RETURN(int64_t value, node.int_attribute(key, 0));
  if (value != 0 && value != 1)
    return node_error(node, "'", key, "' is ", value, ", expected 0 or 1");
  return value == 1;
}

}  // namespace

Result<PoolAttributes> parse_pool(const Node& node, const Shape& input) {
  ORKNN_RETURN_IF_ERROR(check_pool_input(node, input));
  const size_t rank = input.size() - 2;
  if (!node.has_attribute("kernel_shape")) return node_error(node, "'kernel_shape' is required");
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, node.ints_attribute("kernel_shape", {}));
  if (kernel.size() != rank) {
    return node_error(node, "'kernel_shape' has ", kernel.size(), " values for ", rank,
                      " spatial axes");
  }
  for (size_t i = 0; i < rank; ++i) {
    if (kernel[i] < 1) return node_error(node, "'kernel_shape' value ", kernel[i], " at axis ", i);
  }
  PoolAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(bool ceil_mode, flag_attribute(node, "ceil_mode"));
  const Shape spatial(input.begin() + 2, input.end());
  ORKNN_ASSIGN_OR_RETURN(attributes.window, forward_window(node, spatial, kernel, ceil_mode));
  const SpatialWindow& window = attributes.window;
  for (size_t i = 0; i < rank; ++i) {
    // Larger pads would allow windows made only of padding.
    const int64_t extent = window.dilations[i] * (kernel[i] - 1) + 1;
    if (window.pads_begin[i] >= extent || window.pads_end[i] >= extent) {
      return node_error(node, "pads ", window.pads_begin[i], ", ", window.pads_end[i],
                        " at spatial axis ", i, " must be smaller than the kernel extent ", extent);
    }
  }
  if (node.op_type == "MaxPool") {
    ORKNN_ASSIGN_OR_RETURN(attributes.column_major_indices, flag_attribute(node, "storage_order"));
  } else {
    ORKNN_ASSIGN_OR_RETURN(attributes.count_include_pad, flag_attribute(node, "count_include_pad"));
  }
  attributes.output_shape = {input[0], input[1]};
  for (int64_t length : window.output) attributes.output_shape.push_back(length);
  return attributes;
}

namespace {

Status pool_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(PoolAttributes attributes, parse_pool(ctx.node(), ctx.input_shape(0)));
  // MaxPool's optional second output (Indices) has the shape of the first.
  out_shapes->assign(ctx.node().outputs.size(), attributes.output_shape);
  return ok_status();
}

Status global_pool_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  const Shape& input = ctx.input_shape(0);
  ORKNN_RETURN_IF_ERROR(check_pool_input(ctx.node(), input));
  Shape output(input.size(), 1);
  output[0] = input[0];
  output[1] = input[1];
  out_shapes->assign(1, output);
  return ok_status();
}

}  // namespace

std::vector<OpSchema> pooling_op_schemas() {
  return {
      {"MaxPool", 1, 1, 1, 2, pool_shape},
      {"AveragePool", 1, 1, 1, 1, pool_shape},
      {"GlobalAveragePool", 1, 1, 1, 1, global_pool_shape},
      {"GlobalMaxPool", 1, 1, 1, 1, global_pool_shape},
  };
}

}  // namespace orknn::graph
