#include "exec/memory_planner.h"

#include <algorithm>

namespace orknn::exec {
namespace {

struct Interval {
  int32_t tensor;
  int first_step;  // node index that produces it
  int last_step;   // last node index that reads it
  size_t bytes;
};

bool lifetimes_overlap(const Interval& a, const Interval& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// The lifetime of every intermediate tensor (not a graph input, output or constant), with its
// size rounded up to `alignment`.
std::vector<Interval> intermediate_lifetimes(const graph::Graph& graph,
                                             const std::vector<graph::Shape>& shapes,
                                             size_t alignment) {
  const size_t tensor_count = graph.tensors.size();

  std::vector<bool> external(tensor_count, false);
  for (const graph::GraphInput& input : graph.inputs) external[input.tensor] = true;
  for (int32_t output : graph.outputs) external[output] = true;

  std::vector<int> producer(tensor_count, -1), last_reader(tensor_count, -1);
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    for (int32_t index : graph.nodes[step].inputs) {
      if (index >= 0) last_reader[index] = static_cast<int>(step);
    }
    for (int32_t index : graph.nodes[step].outputs) producer[index] = static_cast<int>(step);
  }

  std::vector<Interval> intervals;
  for (size_t i = 0; i < tensor_count; ++i) {
    if (external[i] || graph.tensors[i].is_constant() || producer[i] < 0) continue;
    const size_t bytes = static_cast<size_t>(graph::element_count(shapes[i])) *
                         element_size(graph.tensors[i].data_type);
    // A tensor nobody reads still needs space while its producer writes it.
    const int last = std::max(last_reader[i], producer[i]);
    intervals.push_back({static_cast<int32_t>(i), producer[i], last, align_up(bytes, alignment)});
  }
  return intervals;
}

}  // namespace

MemoryPlan plan_memory(const graph::Graph& graph, const std::vector<graph::Shape>& shapes) {
  MemoryPlan plan;
  plan.offsets.assign(graph.tensors.size(), MemoryPlan::kNotInArena);
  std::vector<Interval> intervals = intermediate_lifetimes(graph, shapes, kTensorAlignment);
  // Largest first, then best fit into the gaps left by tensors already placed that are alive
  // at the same time: a simple heuristic that is close to optimal for chain-like CNNs.
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const Interval& a, const Interval& b) { return a.bytes > b.bytes; });
  std::vector<const Interval*> placed;
  for (const Interval& interval : intervals) {
    std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of live neighbours
    for (const Interval* other : placed) {
      if (lifetimes_overlap(interval, *other)) {
        const size_t begin = static_cast<size_t>(plan.offsets[other->tensor]);
        busy.emplace_back(begin, begin + other->bytes);
      }
    }
    std::sort(busy.begin(), busy.end());
    size_t best_offset = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const auto& [begin, end] : busy) {
      if (begin >= cursor && begin - cursor >= interval.bytes && begin - cursor < best_gap) {
        best_gap = begin - cursor;
        best_offset = cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best_offset == SIZE_MAX) best_offset = cursor;
    plan.offsets[interval.tensor] = static_cast<int64_t>(best_offset);
    plan.arena_bytes = std::max(plan.arena_bytes, best_offset + interval.bytes);
    placed.push_back(&interval);
  }
  return plan;
}

size_t arena_lower_bound(const graph::Graph& graph, const std::vector<graph::Shape>& shapes) {
  const std::vector<Interval> intervals = intermediate_lifetimes(graph, shapes, 1);
  size_t largest = 0;
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    size_t live = 0;
    for (const Interval& interval : intervals) {
      if (interval.first_step <= static_cast<int>(step) &&
          static_cast<int>(step) <= interval.last_step) {
        live += interval.bytes;
      }
    }
    largest = std::max(largest, live);
  }
  return largest;
}

WeightLayout plan_weights(const graph::Graph& graph) {
  WeightLayout layout;
  layout.offsets.assign(graph.tensors.size(), WeightLayout::kNotAWeight);
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    if (!graph.tensors[i].is_constant()) continue;
    layout.offsets[i] = static_cast<int64_t>(layout.total_bytes);
    layout.total_bytes += align_up(graph.tensors[i].constant_size, kTensorAlignment);
  }
  return layout;
}

}  // namespace orknn::exec
