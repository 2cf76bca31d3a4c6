#include "report/summary.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace orknn::convert {

std::string format_bytes(uint64_t bytes) {
  char text[64];
  if (bytes >= (uint64_t{1} << 20)) {
    std::snprintf(text, sizeof(text), "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof(text), "%.2f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

void describe_graph(const ir::Graph& graph, const ConvertOptions& options,
                    ConversionSummary* summary) {
  summary->node_count = graph.nodes.size();
  summary->op_counts.clear();
  for (const ir::Node& node : graph.nodes) {
    std::string device = "CPU";
    for (const std::string& output : node.outputs) {
      auto target = options.op_target.find(output);
      if (target == options.op_target.end()) continue;
      device = target->second;
      std::transform(device.begin(), device.end(), device.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    }
    summary->op_counts[node.op_type][device] += 1;
  }
  summary->weight_bytes = graph.constant_bytes();
  summary->inputs.clear();
  summary->outputs.clear();
  for (const std::string& name : graph.inputs) {
    summary->inputs.emplace_back(name, graph.tensor(name).shape);
  }
  for (const std::string& name : graph.outputs) {
    summary->outputs.emplace_back(name, graph.tensor(name).shape);
  }
}

std::string format_summary(const ConversionSummary& summary) {
  std::string text;
  auto line = [&](const std::string& value) { text += value + "\n"; };
  char buffer[256];
  line("rknn-convert summary");
  line("  source:        " + summary.model_path + " (" +
       (summary.source.producer.empty() ? "unknown producer" : summary.source.producer) + ", IR " +
       std::to_string(summary.source.ir_version) + ", opset " +
       std::to_string(summary.source.opset) + ", " + std::to_string(summary.source.node_count) +
       " nodes)");
  line("  output:        " + summary.output_path + " (" + format_bytes(summary.output_bytes) + ")");
  line("  platform:      " +
       (summary.target_platform.empty() ? std::string("any") : summary.target_platform) +
       ", optimization level " + std::to_string(summary.optimization_level));
  for (const auto& [name, shape] : summary.inputs)
    line("  input:         " + name + " " + ir::shape_to_string(shape));
  for (const auto& [name, shape] : summary.outputs)
    line("  output tensor: " + name + " " + ir::shape_to_string(shape));
  line("  precision:     " + summary.precision);
  if (summary.qdq_pairs > 0) {
    line("  QDQ import:    " + std::to_string(summary.qdq_pairs) +
         " QuantizeLinear/DequantizeLinear pairs taken as int8 tensors");
  }
  if (summary.calibration_samples > 0) {
    const double rate = summary.calibration_seconds > 0
                            ? summary.calibration_samples / summary.calibration_seconds
                            : 0.0;
    std::snprintf(buffer, sizeof(buffer),
                  "  calibration:   %d samples in %.1f s (%.3f samples/s, %.2f s per sample)",
                  summary.calibration_samples, summary.calibration_seconds, rate,
                  rate > 0 ? 1.0 / rate : 0.0);
    line(buffer);
  }
  if (!summary.float16_layers.empty()) {
    std::string layers;
    for (size_t i = 0; i < summary.float16_layers.size(); ++i) {
      layers += (i ? ", " : "") + summary.float16_layers[i];
    }
    line("  float16 layers (hybrid): " + layers);
  }
  line("  weights:       " + format_bytes(static_cast<uint64_t>(summary.weight_bytes)));
  line("  operators:     " + std::to_string(summary.node_count) + " nodes");
  std::snprintf(buffer, sizeof(buffer), "    %-24s %6s  %s", "op type", "count", "device");
  line(buffer);
  for (const auto& [op, devices] : summary.op_counts) {
    for (const auto& [device, count] : devices) {
      std::snprintf(buffer, sizeof(buffer), "    %-24s %6d  %s", op.c_str(), count, device.c_str());
      line(buffer);
    }
  }
  for (const std::string& note : summary.notes) line("  note: " + note);
  std::snprintf(buffer, sizeof(buffer), "  time:          %.1f s", summary.total_seconds);
  line(buffer);
  return text;
}

}  // namespace orknn::convert
