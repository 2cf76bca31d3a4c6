// Places every intermediate tensor at an offset in one arena, reusing memory between tensors
// whose lifetimes do not overlap. Graph inputs and outputs are not placed: they live in their
// own buffers so applications can bind their own memory to them.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace orknn::exec {

constexpr size_t kTensorAlignment = 64;

struct MemoryPlan {
  static constexpr int64_t kNotInArena = -1;
  std::vector<int64_t> offsets;  // per tensor; kNotInArena for constants, inputs and outputs
  size_t arena_bytes = 0;
};

// `shapes` gives the current shape of every tensor.
//
// `host_nodes` (by node index; empty: none) marks the nodes that read and write their tensors
// through plain host pointers (the CPU device's). A Concat among them whose inputs are all
// produced by such nodes gets its inputs placed inside its output, each where the Concat would
// copy it, so the producers write there and the Concat has nothing left to copy; a Split among
// them gets its outputs placed inside its input the same way, and a Reshape, Flatten, Squeeze
// or Unsqueeze its output on its input (the same bytes). Their kernels skip the pieces already
// in place. Only when that is a plain byte move of contiguous pieces: the dims before
// the axis are all 1, every piece has the whole tensor's type and quantization, each piece is
// an intermediate tensor of its own (no graph input, output, constant or repeated piece, in no
// other such group) and starts at a multiple of kTensorAlignment within the whole. The whole
// tensor's memory is then reserved for as long as any of them is alive.
//
// Nodes the CPU device may fuse (graph/fusion_chains.h: a binary node and its activation, a
// float32 Conv with its residual Add and activation) write the run's output at the run's first
// step, so that output lives from there, on any device. A binary run's output takes the bytes of
// an operand of its shape and type that dies at the binary node (the fused kernel works in
// place, element by element); a Conv run's takes the Conv result's (never written when fused);
// otherwise it overlaps none.
MemoryPlan plan_memory(const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
                       const std::vector<bool>& host_nodes = {});

// The largest sum of the (unaligned) sizes of intermediate tensors alive at the same step: no
// arena can be smaller, so plan.arena_bytes / this is how far the planner is from optimal.
size_t arena_lower_bound(const graph::Graph& graph, const std::vector<graph::Shape>& shapes);

// Where each constant goes in application-supplied weight memory (rknn_set_weight_mem): packed
// in tensor order, each at a 64-byte boundary like in the model file.
struct WeightLayout {
  static constexpr int64_t kNotAWeight = -1;
  std::vector<int64_t> offsets;  // per tensor
  size_t total_bytes = 0;
};
WeightLayout plan_weights(const graph::Graph& graph);

inline size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace orknn::exec
