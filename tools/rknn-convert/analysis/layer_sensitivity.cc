#include "analysis/layer_sensitivity.h"

#include <algorithm>

#include "analysis/accuracy_analysis.h"

namespace orknn::convert {

Result<std::vector<LayerLoss>> rank_layers_by_int8_loss(
    const ir::Graph& float_graph, const ir::Graph& quantized,
    const std::vector<std::string>& sample_files, const ConvertOptions& options) {
  ORKNN_ASSIGN_OR_RETURN(TensorValues golden,
                         run_with_all_activations(float_graph, sample_files, options));
  std::vector<LayerLoss> losses;
  for (const ir::Node& node : quantized.nodes) {
    if (node.outputs.empty() || node.outputs[0].empty()) continue;
    const std::string& output = node.outputs[0];
    if (!golden.count(output) || quantized.tensor(output).type != DataType::kInt8) continue;
    Result<TensorValues> single = run_single_layer(quantized, node, golden);
    if (!single.ok()) {
      return std::move(single).take_status().add_context("automatic hybrid quantization: " +
                                                         node.describe());
    }
    auto value = single.value().find(output);
    if (value == single.value().end()) continue;
    losses.push_back({output, 1.0 - cosine_similarity(golden.at(output), value->second)});
  }
  std::stable_sort(losses.begin(), losses.end(),
                   [](const LayerLoss& a, const LayerLoss& b) { return a.loss > b.loss; });
  return losses;
}

}  // namespace orknn::convert
