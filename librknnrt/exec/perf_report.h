// The per-layer performance table returned by RKNN_QUERY_PERF_DETAIL and printed by
// rknn_benchmark, in the vendor runtime's layout so existing tools parse it:
//   a "Network Layer Information Table" (one row per operator, plus InputOperator and
//   OutputOperator rows for the data conversions), the per-frame totals, and an
//   "Operator Time Consuming Ranking Table" grouped by op type.
// Columns a CPU cannot measure (cycles, MAC usage, per-core workload) print as "\"; NPU nodes
// fill them from the NPU's cycle counts (modeled on the emulator, which the table then says).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/profiler.h"
#include "graph/graph.h"

namespace orknn::exec {

struct PerfReportInput {
  const graph::Graph* graph = nullptr;
  const std::vector<graph::Shape>* shapes = nullptr;  // current shape of every tensor
  std::vector<const char*> node_targets;              // device name per node
  std::vector<int64_t> node_microseconds;             // per node, from the last run
  std::vector<int64_t> input_microseconds;            // per graph input: last conversion
  std::vector<int64_t> output_microseconds;           // per graph output: last conversion
  std::vector<NpuNodeTiming> npu_timings;             // per node; fills the NPU columns
};

std::string format_perf_report(const PerfReportInput& input);

}  // namespace orknn::exec
