// Runs of adjacent nodes the CPU device may execute as one kernel (devices/cpu/cpu_device.cc).
// Such a kernel writes the run's last outputs at its first node's step, while that node's
// inputs are still being read; the memory planner (exec/memory_planner.cc) therefore starts
// the lifetime of every output of the run at its first step, so no output shares memory with a
// tensor the fused kernel reads. The rules are structural only: the device may still decline
// a run (a kernel that does not cover it) and then runs the nodes one by one, which is safe
// with the same memory plan.
#pragma once

#include <cstddef>
#include <vector>

#include "graph/graph.h"

namespace orknn::graph {

// Whether `next` reads `node`'s single output and nothing else does: no other node (nor `next`
// twice), no graph output. The tensor between them is then never observed.
bool reads_alone(const Graph& graph, const Node& node, const Node& next);

// An Add, Sub, Mul or Div at `first` and, at first + 1, an element-wise activation (Relu, Clip,
// Sigmoid, ...) that alone reads its result as input 0.
bool binary_activation_run(const Graph& graph, size_t first);

// Per node, the earliest step at which a fused kernel may write its outputs: the first node of
// the run above that contains it, else its own index.
std::vector<size_t> earliest_write_steps(const Graph& graph);

}  // namespace orknn::graph
