// Calibration: the float32 model runs through the runtime on every dataset sample, with every
// activation exposed as an extra output, and TensorStatistics collects what each tensor holds.
// Samples run in parallel on independent Sessions (one per core by default); statistics are
// merged in sample order, so results do not depend on thread timing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dataset/dataset.h"
#include "ir/graph.h"
#include "options/convert_options.h"
#include "quantize/layer_inputs.h"
#include "quantize/tensor_statistics.h"

namespace orknn::convert {

struct CalibrationResult {
  std::map<std::string, TensorRange> ranges;    // chosen by the algorithm
  std::map<std::string, TensorRange> observed;  // plain min/max (ori_min/ori_max in configs)
  int samples = 0;
  double seconds = 0;
};

// How each graph input of `graph` is fed (image or not, RGB->BGR), from the options.
std::vector<InputDescription> describe_inputs(const ir::Graph& graph,
                                              const ConvertOptions& options);

// Runs `float_graph` (float32, every op a runtime op) on the dataset. `tensors` are the names to
// observe (quantize/int8_rewrite.h: calibration_tensors). `layer_inputs`, when given, receives
// every sample's values in sample order (its input tensors must be among `tensors`).
Result<CalibrationResult> calibrate(const ir::Graph& float_graph, const Dataset& dataset,
                                    const std::vector<std::string>& tensors,
                                    const ConvertOptions& options,
                                    LayerInputCollector* layer_inputs = nullptr);

}  // namespace orknn::convert
