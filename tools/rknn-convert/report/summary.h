// The end-of-conversion summary: what was written, which ops it holds and which device each is
// meant for, how big the weights are, and how it was quantized.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx_import/onnx_graph_import.h"
#include "options/convert_options.h"

namespace orknn::convert {

struct ConversionSummary {
  std::string model_path;
  std::string output_path;
  uint64_t output_bytes = 0;
  SourceModelInfo source;
  size_t node_count = 0;
  // op type -> device -> count
  std::map<std::string, std::map<std::string, int>> op_counts;
  int64_t weight_bytes = 0;
  std::string precision;  // "float16", "int8 (w8a8, normal, channel)", ...
  int calibration_samples = 0;
  double calibration_seconds = 0;
  int qdq_pairs = 0;
  std::vector<std::string> float16_layers;  // hybrid: tensors kept in float16
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;  // name, shape
  std::vector<std::pair<std::string, std::vector<int64_t>>> outputs;
  std::string target_platform;
  int optimization_level = 3;
  double total_seconds = 0;
};

// Fills the graph-derived fields (ops per type and device, weights, inputs and outputs).
// Devices: op_target by output tensor name, else "CPU" (the runtime may still move int8 nodes
// to the NPU of a board).
void describe_graph(const ir::Graph& graph, const ConvertOptions& options,
                    ConversionSummary* summary);

std::string format_summary(const ConversionSummary& summary);

// "12.34 MiB", "473.00 KiB", "812 B": the vendor tools' size format.
std::string format_bytes(uint64_t bytes);

}  // namespace orknn::convert
