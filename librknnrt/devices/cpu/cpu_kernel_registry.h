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

}  // namespace orknn::devices::cpu
