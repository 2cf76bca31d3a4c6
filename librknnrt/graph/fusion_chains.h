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

// A run of nodes that starts at a node. A node's single result "passes on" when the next node
// is all that reads it (no other node, no graph output).
struct FusionRun {
  enum class Kind {
    kNone,
    // An Add, Sub, Mul or Div whose result passes on to an element-wise activation (Relu, Clip,
    // Sigmoid, ...) with one output, reading it as input 0. Length 2.
    kBinaryActivation,
    // A float32 Conv whose result passes on to an Add (a residual Add): length 2; 3 when the
    // Add's result in turn passes on to an activation as above. (The int8 convolutions take
    // no residual, and their outputs then keep the in-place places of the plan above.)
    kResidualConvolution,
  };
  Kind kind = Kind::kNone;
  size_t length = 0;
};

// Per node, the run that starts there. One pass over the graph.
std::vector<FusionRun> fusion_runs(const Graph& graph);

// Per node, the earliest step at which a fused kernel may write its outputs: the first node of
// the run that contains it, else its own index.
std::vector<size_t> earliest_write_steps(const Graph& graph);

}  // namespace orknn::graph
