// How applications hand each input to the runtime, stored in the model: per-channel mean/std
// (the runtime computes (x - mean) / std, as the vendor runtime does), and NHWC presentation for
// image inputs, i.e. 4-D inputs with 1, 3 or 4 channels (apps feed uint8 NHWC pixels as on the
// vendor runtime). Other inputs keep the ONNX layout.
#include <cmath>

#include "passes/passes.h"

namespace orknn::convert {
namespace {

bool is_image_input(const ir::Tensor& tensor) {
  return tensor.shape.size() == 4 &&
         (tensor.shape[1] == 1 || tensor.shape[1] == 3 || tensor.shape[1] == 4);
}

Status check_per_channel(const char* option, const std::vector<std::vector<float>>& lists,
                         const ir::Graph& graph) {
  if (lists.empty()) return ok_status();
  if (lists.size() != graph.inputs.size()) {
    return invalid_argument(option, " has ", lists.size(), " list", lists.size() == 1 ? "" : "s",
                            " but the model has ", graph.inputs.size(), " input",
                            graph.inputs.size() == 1 ? "" : "s",
                            " (give one list per input, one value per channel)");
  }
  for (size_t i = 0; i < lists.size(); ++i) {
    const ir::Tensor& tensor = graph.tensor(graph.inputs[i]);
    const std::string what = std::string(option) + " for input " + std::to_string(i) + " ('" +
                             tensor.name + "', " + ir::shape_to_string(tensor.shape) + ")";
    if (lists[i].empty()) continue;
    if (tensor.type != DataType::kFloat32 && tensor.type != DataType::kFloat16) {
      return invalid_argument(what, ": the input is ", data_type_name(tensor.type),
                              ", not a real-valued tensor; give an empty list for it");
    }
    if (tensor.shape.size() < 2) {
      return invalid_argument(what, ": the input has no channel dimension (rank ",
                              tensor.shape.size(), ")");
    }
    const size_t channels = static_cast<size_t>(tensor.shape[1]);
    if (lists[i].size() != channels) {
      return invalid_argument(what, " has ", lists[i].size(), " value",
                              lists[i].size() == 1 ? "" : "s", "; it needs one per channel (",
                              channels, ")");
    }
    if (std::string(option) == "std_values") {
      for (float value : lists[i]) {
        if (value == 0.0f || !std::isfinite(value)) {
          return invalid_argument(what, ": ", value, " cannot divide (std must be non-zero)");
        }
      }
    }
  }
  return ok_status();
}

}  // namespace

Status assign_input_preprocessing(ir::Graph* graph, const ConvertOptions& options) {
  ORKNN_RETURN_IF_ERROR(check_per_channel("mean_values", options.mean_values, *graph));
  ORKNN_RETURN_IF_ERROR(check_per_channel("std_values", options.std_values, *graph));
  if (options.quant_img_rgb2bgr.size() > 1 &&
      options.quant_img_rgb2bgr.size() != graph->inputs.size()) {
    return invalid_argument("quant_img_RGB2BGR has ", options.quant_img_rgb2bgr.size(),
                            " values but the model has ", graph->inputs.size(), " inputs");
  }
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    const ir::Tensor& tensor = graph->tensor(graph->inputs[i]);
    ir::InputPreprocessing preprocessing;
    if (!options.mean_values.empty()) preprocessing.mean = options.mean_values[i];
    if (!options.std_values.empty()) preprocessing.std = options.std_values[i];
    preprocessing.nhwc_layout = is_image_input(tensor);
    graph->preprocessing[tensor.name] = preprocessing;
  }
  return ok_status();
}

}  // namespace orknn::convert
