// Builds the CPU kernel for one node, applying the shared precision rules of cpu_kernel.h.
#pragma once

#include <memory>
#include <vector>

#include "devices/cpu/cpu_kernel.h"

namespace orknn::devices::cpu {

const std::vector<CpuOpDefinition>& all_cpu_ops();

// `shapes` holds the current shape of every tensor of the graph (they differ from the stored
// shapes only for dynamic-shape models).
Result<std::unique_ptr<CpuKernel>> build_cpu_kernel(const graph::Graph& graph,
                                                    const graph::Node& node,
                                                    const std::vector<graph::Shape>& shapes);

// One kernel for `node` and `activation`, the node that alone consumes node's only output
// (make_binary_activation_kernel): it reads node's inputs and writes activation's outputs.
// kUnimplemented when the pair is not fused.
Result<std::unique_ptr<CpuKernel>> build_fused_activation_kernel(
    const graph::Graph& graph, const graph::Node& node, const graph::Node& activation,
    const std::vector<graph::Shape>& shapes);

// One kernel for a Conv, the residual Add that alone reads its output and, when given, the
// activation that alone reads the Add's (make_residual_convolution_kernel): it reads the Conv's
// inputs (X, W, B or null) and the Add's other operand, and writes the last node's outputs.
// kUnimplemented when they are not fused.
Result<std::unique_ptr<CpuKernel>> build_residual_convolution_kernel(
    const graph::Graph& graph, const graph::Node& convolution, const graph::Node& add,
    const graph::Node* activation, const std::vector<graph::Shape>& shapes);

}  // namespace orknn::devices::cpu
