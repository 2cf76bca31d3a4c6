#include "exec/perf_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace orknn::exec {
namespace {

using Row = std::vector<std::string>;

std::string shape_in_parentheses(const graph::Shape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + ")";
}

// The vendor table spells the float types out.
const char* table_type_name(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "FLOAT32";
    case DataType::kFloat16:
      return "FLOAT16";
    default:
      return data_type_name(type);
  }
}

std::string kilobytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", bytes / 1024.0);
  return text;
}

std::string percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f%%", ratio * 100.0);
  return text;
}

// Left-aligned columns separated by two spaces, each as wide as its widest cell.
void append_table(std::string& out, const std::vector<Row>& rows) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const Row& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
}

// MAC usage: the node's MACs over what the cores that worked could have done in its cycles.
constexpr double kMacsPerCycle = 1024.0;

struct NpuColumns {
  std::string cycles = "\\", mac_usage = "\\", workload = "\\";
};

NpuColumns npu_columns(const NpuNodeTiming& timing) {
  NpuColumns columns;
  if (!timing.valid) return columns;
  columns.cycles = "\\/" + std::to_string(timing.cycles) + "/" + std::to_string(timing.cycles);
  uint64_t total = 0;
  int working = 0;
  for (uint64_t cycles : timing.core_cycles) {
    total += cycles;
    working += cycles > 0;
  }
  if (timing.cycles > 0 && working > 0) {
    columns.mac_usage =
        percent(double(timing.macs) / (double(timing.cycles) * kMacsPerCycle * working));
  }
  if (total > 0) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.0f%%/%.0f%%/%.0f%%", 100.0 * timing.core_cycles[0] / total,
                  100.0 * timing.core_cycles[1] / total, 100.0 * timing.core_cycles[2] / total);
    columns.workload = text;
  }
  return columns;
}

const char kRule[] =
    "----------------------------------------------------------------------------------------------"
    "-----\n";

}  // namespace

std::string format_perf_report(const PerfReportInput& input) {
  const graph::Graph& graph = *input.graph;
  const std::vector<graph::Shape>& shapes = *input.shapes;
  auto tensor_bytes = [&](int32_t index) {
    return static_cast<double>(graph::element_count(shapes[index])) *
           static_cast<double>(element_size(graph.tensor(index).data_type));
  };

  std::vector<Row> rows = {{"ID", "OpType", "DataType", "Target", "InputShape", "OutputShape",
                            "Cycles(DDR/NPU/Total)", "Time(us)", "MacUsage(%)", "WorkLoad(0/1/2)",
                            "RW(KB)", "FullName"}};
  struct TypeTotals {
    int calls = 0;
    int64_t cpu = 0, gpu = 0, npu = 0;
  };
  std::map<std::string, TypeTotals> by_type;
  int64_t total_microseconds = 0;
  double total_bytes = 0;
  int id = 1;
  bool emulated = false;
  auto add_row = [&](const std::string& op_type, DataType type, const char* target,
                     const std::string& inputs, const std::string& outputs, int64_t microseconds,
                     double bytes, const std::string& name, const NpuColumns& npu = {}) {
    rows.push_back({std::to_string(id++), op_type, table_type_name(type), target, inputs, outputs,
                    npu.cycles, std::to_string(microseconds), npu.mac_usage, npu.workload,
                    kilobytes(bytes), name});
    TypeTotals& totals = by_type[op_type];
    totals.calls++;
    const std::string device = target;
    (device == "NPU" ? totals.npu : device == "GPU" ? totals.gpu : totals.cpu) += microseconds;
    total_microseconds += microseconds;
    total_bytes += bytes;
  };

  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const int32_t tensor = graph.inputs[i].tensor;
    const int64_t us = i < input.input_microseconds.size() ? input.input_microseconds[i] : 0;
    add_row("InputOperator", graph.tensor(tensor).data_type, "CPU", "\\",
            shape_in_parentheses(shapes[tensor]), us, tensor_bytes(tensor),
            "InputOperator:" + graph.tensor(tensor).name);
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const graph::Node& node = graph.nodes[n];
    std::string inputs, outputs;
    double bytes = 0;
    for (int32_t index : node.inputs) {
      if (index < 0) continue;
      if (!inputs.empty()) inputs += ',';
      inputs += shape_in_parentheses(shapes[index]);
      bytes += tensor_bytes(index);
    }
    for (int32_t index : node.outputs) {
      if (!outputs.empty()) outputs += ',';
      outputs += shape_in_parentheses(shapes[index]);
      bytes += tensor_bytes(index);
    }
    const DataType type =
        node.outputs.empty() ? DataType::kFloat32 : graph.tensor(node.outputs[0]).data_type;
    const int64_t us = n < input.node_microseconds.size() ? input.node_microseconds[n] : 0;
    const NpuColumns npu =
        n < input.npu_timings.size() ? npu_columns(input.npu_timings[n]) : NpuColumns{};
    emulated |=
        n < input.npu_timings.size() && input.npu_timings[n].valid && input.npu_timings[n].emulated;
    add_row(node.op_type, type, input.node_targets[n], inputs, outputs, us, bytes,
            node.op_type + ":" + node.name, npu);
  }
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    const int32_t tensor = graph.outputs[o];
    const int64_t us = o < input.output_microseconds.size() ? input.output_microseconds[o] : 0;
    add_row("OutputOperator", graph.tensor(tensor).data_type, "CPU",
            shape_in_parentheses(shapes[tensor]), "\\", us, tensor_bytes(tensor),
            "OutputOperator:" + graph.tensor(tensor).name);
  }

  std::string out;
  out += kRule;
  out += "                         Network Layer Information Table\n";
  out += kRule;
  append_table(out, rows);
  out += kRule;
  out += "Total Operator Elapsed Per Frame Time(us): " + std::to_string(total_microseconds) + "\n";
  out += "Total Memory Read/Write Per Frame Size(KB): " + kilobytes(total_bytes) + "\n";
  if (emulated) {
    out +=
        "NPU cycles, times, MAC usage and workloads are emulated (driver_shim emu timing "
        "model), not measured\n";
  }
  out += kRule;

  std::vector<std::pair<std::string, TypeTotals>> ranking(by_type.begin(), by_type.end());
  std::stable_sort(ranking.begin(), ranking.end(), [](const auto& a, const auto& b) {
    return a.second.cpu + a.second.gpu + a.second.npu > b.second.cpu + b.second.gpu + b.second.npu;
  });
  std::vector<Row> ranking_rows = {{"OpType", "CallNumber", "CPUTime(us)", "GPUTime(us)",
                                    "NPUTime(us)", "TotalTime(us)", "TimeRatio(%)"}};
  for (const auto& [op_type, totals] : ranking) {
    const int64_t sum = totals.cpu + totals.gpu + totals.npu;
    ranking_rows.push_back({op_type, std::to_string(totals.calls), std::to_string(totals.cpu),
                            std::to_string(totals.gpu), std::to_string(totals.npu),
                            std::to_string(sum),
                            percent(total_microseconds ? double(sum) / total_microseconds : 0.0)});
  }
  out += "                         Operator Time Consuming Ranking Table\n";
  out += kRule;
  append_table(out, ranking_rows);
  out += kRule;
  return out;
}

}  // namespace orknn::exec
