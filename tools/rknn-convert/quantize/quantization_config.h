// Hybrid quantization files: per-tensor overrides of what calibration would choose, in the
// layout of the toolkit's {model}.quantization.cfg (YAML):
//
//   custom_quantize_layers:        # tensor -> float16: the node producing it computes in float16
//     /backbone/conv5/Relu_output_0: float16
//   quantize_parameters:           # per activation tensor
//     images:
//       dtype: int8                # or float16 (same as listing it above)
//       min: [-2.117]              # min/max, when present, replace the calibrated range
//       max: [2.64]
//       scale: [0.01868]           # written for information; without min/max they define it
//       zero_point: [-15]
//       ori_min: [-2.117]          # what calibration observed (written, never read)
//       ori_max: [2.64]
//
// `hybrid-step1` writes a complete file from a calibration run; a conversion with
// `quantization_config` reads it back (a full file needs no dataset; a partial one only
// overrides the tensors it names, the rest is calibrated).
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/graph.h"
#include "quantize/calibration.h"

namespace orknn::convert {

struct QuantizationOverrides {
  std::set<std::string> float16_tensors;
  std::map<std::string, TensorRange> ranges;
};

Result<QuantizationOverrides> read_quantization_config(const std::string& path);

// Checks that every tensor the overrides name exists in `graph` (names change with fusion: the
// message lists similar names).
Status check_overrides_against(const QuantizationOverrides& overrides, const ir::Graph& graph,
                               const std::string& path);

// Writes the file for `quantized` (the int8 graph: its parameters) from `calibration` (ranges).
Status write_quantization_config_file(const std::string& path, const ir::Graph& quantized,
                                      const std::vector<std::string>& activations,
                                      const CalibrationResult& calibration,
                                      const std::map<std::string, TensorRange>& ranges,
                                      const std::set<std::string>& float16_tensors);

}  // namespace orknn::convert
