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
MemoryPlan plan_memory(const graph::Graph& graph, const std::vector<graph::Shape>& shapes);

inline size_t align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace orknn::exec
