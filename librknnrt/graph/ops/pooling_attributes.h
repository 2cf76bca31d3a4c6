// Attribute parsing of MaxPool and AveragePool, shared by the shape functions (which validate)
// and the CPU kernel factories (which trust).
#pragma once

#include "graph/graph.h"
#include "graph/ops/spatial_window.h"

namespace orknn::graph {

struct PoolAttributes {
  SpatialWindow window;
  bool count_include_pad = false;     // AveragePool
  bool column_major_indices = false;  // MaxPool storage_order 1
  Shape output_shape;                 // also the shape of MaxPool's optional Indices output
};
// Reads the attributes of node.op_type ("MaxPool" or "AveragePool") for `input` [N, C, spatial...].
Result<PoolAttributes> parse_pool(const Node& node, const Shape& input);

}  // namespace orknn::graph
