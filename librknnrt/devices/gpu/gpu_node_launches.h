// Turns one graph node into the kernel launches of kernels/gpu (launch_description.h) for the
// current shapes, or says why the GPU does not run it. This is the GPU's op list: the device
// claims exactly the nodes this accepts.
//
// Precision rule: the GPU runs real-valued nodes whose device operands and outputs all have one
// type, float32 or float16 (stored as half, computed in float). Quantized nodes stay on the
// CPU, which has the native int8 kernels (docs/gpu.md).
#pragma once

#include <vector>

#include "graph/graph.h"
#include "launch_description.h"

namespace orknn::devices::gpu {

// `shapes` holds the current shape of every tensor; null means the shapes stored in the graph
// (how supports() asks before shapes are inferred).
Result<kernels::gpu::NodeLaunches> describe_node(const graph::Graph& graph, const graph::Node& node,
                                                 const std::vector<graph::Shape>* shapes);

}  // namespace orknn::devices::gpu
