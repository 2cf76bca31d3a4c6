// Inference BatchNormalization after a convolution is an affine map per output channel, so it
// can be folded into the convolution's weights and bias: one op less, and (in int8) one
// quantization step less. The arithmetic is done in double and rounded once to float32, which
// changes results by at most float rounding; that is why it runs at optimization level >= 2.
#include <cmath>

#include "passes/passes.h"

namespace orknn::convert {
namespace {

bool is_float32_constant(const ir::Graph& graph, const std::string& name) {
  if (name.empty() || !graph.has_tensor(name)) return false;
  const ir::Tensor& tensor = graph.tensor(name);
  return tensor.is_constant() && tensor.type == DataType::kFloat32;
}

// Folds BatchNormalization node `bn` into convolution node `conv`; false if the pattern does
// not fit (non-constant parameters, unexpected shapes).
bool try_fold(ir::Graph* graph, ir::Node* conv, const ir::Node& bn) {
  for (size_t i = 1; i < 5; ++i) {
    if (!is_float32_constant(*graph, bn.inputs[i])) return false;
  }
  if (!is_float32_constant(*graph, conv->inputs[1])) return false;
  if (conv->has_input(2) && !is_float32_constant(*graph, conv->inputs[2])) return false;
  const bool transposed = conv->op_type == "ConvTranspose";
  const ir::Tensor& weights = graph->tensor(conv->inputs[1]);
  if (weights.shape.size() < 3) return false;
  const int64_t group = ir::int_attribute(*conv, "group", 1);
  const int64_t channels = transposed ? weights.shape[1] * group : weights.shape[0];
  const std::vector<float> scale = ir::constant_as_floats(graph->tensor(bn.inputs[1]));
  const std::vector<float> offset = ir::constant_as_floats(graph->tensor(bn.inputs[2]));
  const std::vector<float> mean = ir::constant_as_floats(graph->tensor(bn.inputs[3]));
  const std::vector<float> variance = ir::constant_as_floats(graph->tensor(bn.inputs[4]));
  const size_t count = static_cast<size_t>(channels);
  if (scale.size() != count || offset.size() != count || mean.size() != count ||
      variance.size() != count) {
    return false;
  }
  const double epsilon = ir::float_attribute(bn, "epsilon", 1e-5f);
  std::vector<double> factor(count);
  for (size_t c = 0; c < count; ++c) {
    factor[c] =
        static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(variance[c]) + epsilon);
  }

  std::vector<float> new_weights = ir::constant_as_floats(weights);
  const int64_t per_channel = weights.elements() / (weights.shape[0] * weights.shape[1]);
  for (int64_t a = 0; a < weights.shape[0]; ++a) {
    for (int64_t b = 0; b < weights.shape[1]; ++b) {
      size_t channel;
      if (transposed) {
        // W[C_in, M/group, k...]: output channel = group index * M/group + b.
        const int64_t inputs_per_group = weights.shape[0] / group;
        channel = static_cast<size_t>((a / inputs_per_group) * weights.shape[1] + b);
      } else {
        channel = static_cast<size_t>(a);
      }
      float* values = new_weights.data() + (a * weights.shape[1] + b) * per_channel;
      for (int64_t k = 0; k < per_channel; ++k) {
        values[k] = static_cast<float>(values[k] * factor[channel]);
      }
    }
  }
  std::vector<float> bias(count, 0.0f);
  if (conv->has_input(2)) {
    bias = ir::constant_as_floats(graph->tensor(conv->inputs[2]));
    if (bias.size() != count) return false;
  }
  for (size_t c = 0; c < count; ++c) {
    bias[c] = static_cast<float>((static_cast<double>(bias[c]) - mean[c]) * factor[c] + offset[c]);
  }
  const std::string weight_name =
      graph->add_constant_f32(conv->inputs[1] + "_bn_folded", weights.shape, new_weights);
  const std::string bias_name = graph->add_constant_f32(
      (conv->has_input(2) ? conv->inputs[2] : conv->outputs[0]) + "_bias_bn_folded", {channels},
      bias);
  conv->inputs[1] = weight_name;
  if (conv->inputs.size() < 3) conv->inputs.resize(3);
  conv->inputs[2] = bias_name;
  return true;
}

}  // namespace

Status fold_batch_norm(ir::Graph* graph) {
  std::set<int> removed;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const ir::Node& bn = graph->nodes[i];
    if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5) continue;
    const std::string& input = bn.inputs[0];
    const int producer = graph->producer(input);
    if (producer < 0) continue;
    ir::Node& conv = graph->nodes[static_cast<size_t>(producer)];
    if ((conv.op_type != "Conv" && conv.op_type != "ConvTranspose") ||
        conv.has_attribute("activation")) {
      continue;
    }
    if (graph->use_count(input) != 1) continue;  // someone else needs the un-normalized value
    if (!try_fold(graph, &conv, bn)) continue;
    conv.outputs[0] = bn.outputs[0];
    removed.insert(static_cast<int>(i));
  }
  graph->remove_nodes(removed);
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
