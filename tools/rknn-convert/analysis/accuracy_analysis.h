// accuracy-analysis (the toolkit's accuracy_analysis): where does quantization lose accuracy?
// Runs the float32 model and the quantized model through the runtime on one sample and writes,
// under the output directory:
//   golden/<tensor>.npy      every activation of the float model
//   quantized/<tensor>.npy   the same tensors of the quantized model, dequantized to float32
//   error_analysis.txt       per layer: cosine similarity and euclidean distance to the float
//                            values for the whole quantized model (entire) and for the layer
//                            alone fed the float model's inputs (single); cosine < 0.99 is marked
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "options/convert_options.h"

namespace orknn::convert {

struct AccuracyAnalysisInput {
  const ir::Graph* float_graph = nullptr;      // float32, the reference
  const ir::Graph* quantized_graph = nullptr;  // same tensor names, int8 / float16
  const ConvertOptions* options = nullptr;     // analysis_inputs, output directory, RGB2BGR
};

Status analyze_accuracy(const AccuracyAnalysisInput& input);

using TensorValues = std::map<std::string, std::vector<float>>;
// Runs `graph` on one sample (one file per input) with every activation as an output.
Result<TensorValues> run_with_all_activations(const ir::Graph& graph,
                                              const std::vector<std::string>& files,
                                              const ConvertOptions& options);
// `node` of `quantized` alone, its run-time inputs fed from `golden` (the float model's values);
// empty when an input has no float value.
Result<TensorValues> run_single_layer(const ir::Graph& quantized, const ir::Node& node,
                                      const TensorValues& golden);

// Comparison figures; exposed for tests. Cosine of two zero vectors is 1.
double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b);
double euclidean_distance(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace orknn::convert
