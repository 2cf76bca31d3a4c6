#include "exec/memory_planner.h"

#include <algorithm>

#include "graph/fusion_chains.h"

namespace orknn::exec {
namespace {

struct Interval {
  int32_t tensor;
  int first_step;  // step that may write it (graph/fusion_chains.h earliest_write_steps)
  int last_step;   // last node index that reads it
  size_t bytes;
};

bool lifetimes_overlap(const Interval& a, const Interval& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// The lifetime of every intermediate tensor (not a graph input, output or constant), with its
// size rounded up to `alignment`; from its producer's step, or with `fused_runs` from the step
// that may write it.
std::vector<Interval> intermediate_lifetimes(const graph::Graph& graph,
                                             const std::vector<graph::Shape>& shapes,
                                             size_t alignment, bool fused_runs) {
  const size_t tensor_count = graph.tensors.size();

  std::vector<bool> external(tensor_count, false);
  for (const graph::GraphInput& input : graph.inputs) external[input.tensor] = true;
  for (int32_t output : graph.outputs) external[output] = true;

  // A tensor is live from the step that may write it: its producer's, or the first step of a
  // run of nodes the CPU device may fuse into one kernel (graph/fusion_chains.h), which writes
  // the run's outputs while its first node's inputs are still being read.
  const std::vector<size_t> write_steps =
      fused_runs ? graph::earliest_write_steps(graph) : std::vector<size_t>();
  std::vector<int> producer(tensor_count, -1), last_reader(tensor_count, -1);
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    for (int32_t index : graph.nodes[step].inputs) {
      if (index >= 0) last_reader[index] = static_cast<int>(step);
    }
    for (int32_t index : graph.nodes[step].outputs) {
      producer[index] = static_cast<int>(fused_runs ? write_steps[step] : step);
    }
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

// Tensors that live inside another: a Concat's inputs inside its output, a Split's outputs
// inside its input, a fused activation's output on an operand (plan_memory's comment says
// when).
struct InPlaceGroup {
  int32_t whole;
  std::vector<std::pair<int32_t, size_t>> parts;  // tensor, byte offset in `whole`
};

std::vector<InPlaceGroup> in_place_groups(const graph::Graph& graph,
                                          const std::vector<graph::Shape>& shapes,
                                          const std::vector<bool>& host_nodes,
                                          const std::vector<Interval>& intervals) {
  std::vector<InPlaceGroup> groups;
  const size_t tensor_count = graph.tensors.size();
  // Intermediate tensors (those with an interval) and the node producing each.
  std::vector<bool> intermediate(tensor_count, false);
  for (const Interval& interval : intervals) intermediate[interval.tensor] = true;
  std::vector<int> producer(tensor_count, -1), last_reader(tensor_count, -1);
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    for (int32_t index : graph.nodes[step].inputs) {
      if (index >= 0) last_reader[index] = static_cast<int>(step);
    }
    for (int32_t index : graph.nodes[step].outputs) producer[index] = static_cast<int>(step);
  }
  std::vector<bool> taken(tensor_count, false);  // in a group already, whole or part
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    const graph::Node& node = graph.nodes[step];
    const bool concat = node.op_type == "Concat" && node.outputs.size() == 1;
    // A Reshape-like node's output is its input's bytes: one part, the whole of it.
    const bool view = (node.op_type == "Reshape" || node.op_type == "Flatten" ||
                       node.op_type == "Squeeze" || node.op_type == "Unsqueeze") &&
                      node.outputs.size() == 1;
    const bool split =
        (node.op_type == "Split" || view) && !node.inputs.empty() && node.inputs[0] >= 0;
    if (!(concat || split) || host_nodes.size() != graph.nodes.size() || !host_nodes[step]) {
      continue;
    }
    const int32_t whole = concat ? node.outputs[0] : node.inputs[0];
    const std::vector<int32_t>& parts = concat ? node.inputs : node.outputs;
    if (!intermediate[whole] || taken[whole] || parts.empty()) continue;
    const graph::Shape& shape = shapes[whole];
    Result<int64_t> attribute = node.int_attribute("axis", 0);
    if (!view && !attribute.ok()) continue;
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t axis = view ? 0 : (*attribute < 0 ? *attribute + rank : *attribute);
    if (!view && (axis < 0 || axis >= rank)) continue;
    bool usable = true;
    for (int64_t d = 0; d < axis; ++d) usable = usable && shape[d] == 1;
    const graph::Tensor& joined = graph.tensor(whole);
    InPlaceGroup group{whole, {}};
    size_t offset = 0;
    for (int32_t part : parts) {
      if (!usable) break;
      const graph::Tensor& piece = graph.tensor(part);
      // A Concat's inputs are written in place by their producers: those must be host nodes
      // too. A Split's outputs are its own.
      usable = part >= 0 && intermediate[part] && !taken[part] && producer[part] >= 0 &&
               host_nodes[static_cast<size_t>(producer[part])] &&
               piece.data_type == joined.data_type && piece.quantization == joined.quantization &&
               offset % kTensorAlignment == 0;
      for (const auto& [earlier, unused] : group.parts) usable = usable && earlier != part;
      if (!usable) break;
      group.parts.emplace_back(part, offset);
      offset +=
          static_cast<size_t>(graph::element_count(shapes[part])) * element_size(piece.data_type);
    }
    if (!usable) continue;
    taken[whole] = true;
    for (const auto& [part, unused] : group.parts) taken[part] = true;
    groups.push_back(std::move(group));
  }
  // A fused binary node and activation (graph/fusion_chains.h) write the activation's output
  // while they read the binary node's operands, element by element at the same index. Their
  // output may take the bytes of an operand of its shape that dies there: in place at the same
  // offset is safe (where a shifted overlap would not be), and costs no memory, as the plan
  // without the run rule gave. If the nodes run apart, the operand is dead when the activation
  // writes.
  // A Conv + Add (+ activation) run's output takes the Conv result's bytes: the fused kernel
  // never writes that result, so it costs no memory of its own. The kernel writes the output
  // while it reads the Conv's input and the residual, which the run rule keeps apart from it.
  // Run apart, the Add (with its activation) writes in place on the result, element by
  // element, or the activation does when the result is dead.
  auto take_in_place = [&](int32_t operand, int32_t output) {
    if (operand < 0 || output < 0 || !intermediate[operand] || !intermediate[output] ||
        taken[operand] || taken[output] || shapes[operand] != shapes[output] ||
        graph.tensor(operand).data_type != graph.tensor(output).data_type) {
      return false;
    }
    taken[operand] = taken[output] = true;
    groups.push_back(InPlaceGroup{operand, {{output, 0}}});
    return true;
  };
  const std::vector<graph::FusionRun> runs = graph::fusion_runs(graph);
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    const graph::FusionRun& run = runs[step];
    if (run.kind == graph::FusionRun::Kind::kResidualConvolution) {
      take_in_place(graph.nodes[step].outputs[0], graph.nodes[step + run.length - 1].outputs[0]);
      continue;
    }
    if (run.kind != graph::FusionRun::Kind::kBinaryActivation) continue;
    const int32_t output = graph.nodes[step + 1].outputs[0];
    for (int32_t operand : graph.nodes[step].inputs) {
      if (operand >= 0 && last_reader[operand] == static_cast<int>(step) &&
          take_in_place(operand, output)) {
        break;
      }
    }
  }
  return groups;
}

}  // namespace

MemoryPlan plan_memory(const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
                       const std::vector<bool>& host_nodes) {
  MemoryPlan plan;
  plan.offsets.assign(graph.tensors.size(), MemoryPlan::kNotInArena);
  std::vector<Interval> intervals =
      intermediate_lifetimes(graph, shapes, kTensorAlignment, /*fused_runs=*/true);
  const std::vector<InPlaceGroup> groups = in_place_groups(graph, shapes, host_nodes, intervals);
  if (!groups.empty()) {
    // A part takes no space of its own; the whole holds it, and is live for as long as any of
    // them.
    std::vector<int> interval_of(graph.tensors.size(), -1);
    for (size_t i = 0; i < intervals.size(); ++i) {
      interval_of[intervals[i].tensor] = static_cast<int>(i);
    }
    std::vector<bool> inside(graph.tensors.size(), false);
    for (const InPlaceGroup& group : groups) {
      Interval& whole = intervals[static_cast<size_t>(interval_of[group.whole])];
      for (const auto& [part, unused] : group.parts) {
        const Interval& piece = intervals[static_cast<size_t>(interval_of[part])];
        whole.first_step = std::min(whole.first_step, piece.first_step);
        whole.last_step = std::max(whole.last_step, piece.last_step);
        inside[part] = true;
      }
    }
    intervals.erase(std::remove_if(intervals.begin(), intervals.end(),
                                   [&](const Interval& i) { return inside[i.tensor]; }),
                    intervals.end());
  }
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
  for (const InPlaceGroup& group : groups) {
    for (const auto& [part, offset] : group.parts) {
      plan.offsets[part] = plan.offsets[group.whole] + static_cast<int64_t>(offset);
    }
  }
  return plan;
}

size_t arena_lower_bound(const graph::Graph& graph, const std::vector<graph::Shape>& shapes) {
  // Tensors from their producers: a fused run's output on its operand (in_place_groups) is
  // what the plain lifetimes allow, and a bound counting both would not be one.
  const std::vector<Interval> intervals =
      intermediate_lifetimes(graph, shapes, 1, /*fused_runs=*/false);
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
