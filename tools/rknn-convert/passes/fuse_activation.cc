// An activation right after a Conv, ConvTranspose, Gemm or MatMul (Relu, Clip, SiLU; LeakyRelu
// outside int8) becomes attributes of that node (`activation`, `activation_min`,
// `activation_max`, `activation_alpha`; the top of librknnrt/graph/ops/convolution.cc defines
// them): the result is written once instead of twice, and in int8 Relu and Clip are a clamp
// inside the requantization (docs/quantization.md 4.3) while SiLU is computed in float before it;
// either way one quantization step fewer. Exact in float: same operations in the same order.
#include <limits>

#include "passes/passes.h"

namespace orknn::convert {
namespace {

bool is_fusion_target(const ir::Node& node) {
  return node.domain.empty() && (node.op_type == "Conv" || node.op_type == "ConvTranspose" ||
                                 node.op_type == "Gemm" || node.op_type == "MatMul");
}

// The attributes that express `activation`, or false when it cannot be fused.
bool activation_attributes(const ir::Node& activation, bool allow_leaky_relu,
                           std::map<std::string, ir::Attribute>* out) {
  if (!activation.domain.empty()) return false;
  if (activation.op_type == "Relu") {
    (*out)["activation"] = ir::make_string_attribute("Relu");
    return true;
  }
  if (activation.op_type == "Clip") {
    if (activation.inputs.size() > 1) return false;  // bounds only known at run time
    (*out)["activation"] = ir::make_string_attribute("Clip");
    (*out)["activation_min"] = ir::make_float_attribute(
        ir::float_attribute(activation, "min", std::numeric_limits<float>::lowest()));
    (*out)["activation_max"] = ir::make_float_attribute(
        ir::float_attribute(activation, "max", std::numeric_limits<float>::max()));
    return true;
  }
  if (activation.op_type == "SiLU") {
    // Also in int8: the runtime computes the fused SiLU in float from the Conv's real result and
    // rounds once, where a separate SiLU would round the Conv's output to int8 first (the main
    // int8 error of YOLOv5-style networks; docs/quantization.md).
    (*out)["activation"] = ir::make_string_attribute("SiLU");
    return true;
  }
  if (activation.op_type == "LeakyRelu" && allow_leaky_relu) {
    (*out)["activation"] = ir::make_string_attribute("LeakyRelu");
    (*out)["activation_alpha"] =
        ir::make_float_attribute(ir::float_attribute(activation, "alpha", 0.01f));
    return true;
  }
  return false;
}

}  // namespace

Status fuse_activation(ir::Graph* graph, bool allow_leaky_relu) {
  std::set<int> removed;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const ir::Node& activation = graph->nodes[i];
    if (activation.inputs.empty()) continue;
    const std::string& input = activation.inputs[0];
    const int producer = graph->producer(input);
    if (producer < 0) continue;
    ir::Node& target = graph->nodes[static_cast<size_t>(producer)];
    if (!is_fusion_target(target) || target.has_attribute("activation")) continue;
    if (graph->use_count(input) != 1) continue;
    std::map<std::string, ir::Attribute> attributes;
    if (!activation_attributes(activation, allow_leaky_relu, &attributes)) continue;
    for (auto& [key, value] : attributes) target.attributes[key] = value;
    target.outputs[0] = activation.outputs[0];
    removed.insert(static_cast<int>(i));
  }
  graph->remove_nodes(removed);
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
