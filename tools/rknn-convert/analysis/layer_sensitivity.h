// Automatic hybrid quantization: which layers lose the most in int8, by accuracy analysis.
//
// Each int8 node runs alone on the float model's values of its inputs (accuracy-analysis'
// "single" mode) and is scored by 1 - cosine similarity of its output to the float output; the
// highest scores are the layers to keep in float16. The score is the layer's own loss, which
// is what float16 removes; how much the network downstream amplifies it is not measured.
// Scoring by the loss a layer adds in the whole int8 model (its output's loss minus its inputs')
// was tried and chose worse: it favours layers that amplify their input's error, which float16
// does not change (yolov5n_320 mmse/channel with 20 float16 layers: 0.983 vs 0.989).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "options/convert_options.h"

namespace orknn::convert {

struct LayerLoss {
  std::string output;  // the node's first output tensor
  double loss = 0.0;   // 1 - cosine(single-layer int8 output, float output)
};

// Every int8 node of `quantized` scored on one sample (`sample_files`, one per input), worst
// first.
Result<std::vector<LayerLoss>> rank_layers_by_int8_loss(
    const ir::Graph& float_graph, const ir::Graph& quantized,
    const std::vector<std::string>& sample_files, const ConvertOptions& options);

}  // namespace orknn::convert
