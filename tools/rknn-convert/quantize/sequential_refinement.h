// Sequential (layer-by-layer) refinement of a w8a8 model's weights and biases.
//
// The one-shot rewrite (quantize/int8_rewrite.h) rounds each Conv/Gemm's weights against the
// float model's inputs and corrects the bias for the weights' own mean error. In the deployed
// model a layer sees other inputs: the outputs of the quantized layers before it, which carry
// their rounding noise and, where a nonlinearity such as MaxPool turns noise into a bias, a
// mean shift (docs/testing-converter.md, "Where YOLOv5's int8 error comes from"). This pass
// walks the quantized graph once in topological order, running every node through the runtime
// (the same int8 kernels rknn_run uses) on every calibration sample, and, before it runs a
// Conv/Gemm, re-chooses that layer's weights from the inputs the quantized model actually gives
// it (error-compensated rounding driven by the quantized rows) and sets its bias so that the
// layer's mean output per channel matches the float model's on the calibration rows
// (mean of W_q x_q - W x_float). Upstream layers are final when a layer is refined, so each
// correction sees what earlier corrections left, and nothing is corrected twice. One run of
// the model per sample in total, node by node.
#pragma once

#include <map>
#include <string>

#include "dataset/dataset.h"
#include "ir/graph.h"
#include "options/convert_options.h"
#include "quantize/layer_inputs.h"

namespace orknn::convert {

struct SequentialRefinementInput {
  const ir::Graph* float_graph = nullptr;  // float32, the graph calibration ran
  const Dataset* dataset = nullptr;        // the calibration samples, in calibration's order
  // The collector that took `float_rows` during calibration: it gives the quantized model's
  // rows at the same output positions.
  const LayerInputCollector* collector = nullptr;
  const std::map<std::string, LayerInputRows>* float_rows = nullptr;
  const ConvertOptions* options = nullptr;  // weight_rounding, bias_correction, threads, quiet
};

struct SequentialRefinementResult {
  int refined_layers = 0;  // Conv/Gemm layers whose weights and bias were re-chosen
  double seconds = 0;
};

// Rewrites in place the int8 weight codes and int32 biases of the int8 Conv/Gemm layers of
// `quantized` (rewrite_to_int8's result for input.float_graph) that have float rows. Scales and
// every other parameter stay as they are.
Result<SequentialRefinementResult> refine_layers_sequentially(
    const SequentialRefinementInput& input, ir::Graph* quantized);

}  // namespace orknn::convert
