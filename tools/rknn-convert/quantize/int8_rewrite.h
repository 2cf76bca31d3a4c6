// Turns the float32 graph into the w8a8 model docs/quantization.md describes, from activation
// ranges (calibration, or a quantization config) and, for QDQ models, the parameters the model
// already carries.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "options/convert_options.h"
#include "quantize/tensor_statistics.h"
#include "quantize/weight_rounding.h"

namespace orknn::convert {

struct QuantizationPlan {
  // Activation ranges by tensor name; tensors without one (and without parameters of their own
  // from a QDQ model) stay float16.
  std::map<std::string, TensorRange> ranges;
  // Hybrid quantization: the nodes producing these tensors compute in float16 (their outputs
  // and weights are float16).
  std::set<std::string> float16_tensors;
  QuantizedMethod method = QuantizedMethod::kChannel;
  // Data-movement ops (Reshape, Transpose, MaxPool, Concat, ...) give their output the input's
  // parameters so the runtime moves bytes instead of requantizing (optimization level 3).
  bool share_through_data_movement = true;
  // Calibration inputs of Conv/Gemm layers by output tensor name (quantize/layer_inputs.h).
  // Layers that have them get their weights rounded as `weight_rounding` says and, with
  // `bias_correction`, their bias corrected (quantize/weight_rounding.h); others round to
  // nearest.
  const std::map<std::string, LayerInputRows>* layer_inputs = nullptr;
  WeightRounding weight_rounding = WeightRounding::kNearest;
  bool bias_correction = false;
  int threads = 0;  // for the weight rounding; 0: one per core
};

// Rewrites `graph` in place. *out_notes receives remarks for the summary (e.g. constants kept in
// float16). Tensor names do not change, so ranges and configs keep matching.
Status rewrite_to_int8(ir::Graph* graph, const QuantizationPlan& plan,
                       std::vector<std::string>* out_notes);

// The non-constant real tensors calibration must observe: graph inputs and node outputs of
// real type, in node order.
std::vector<std::string> calibration_tensors(const ir::Graph& graph);

}  // namespace orknn::convert
