// Layer fusion inside an NPU segment: Conv + Add (the DPU's element-wise stage after the
// convolution) and Conv/Add + activation table (the DPU's LUT). Each fused result is computed
// exactly as the separate layers would compute it: the intermediate int8 value still exists
// inside the DPU pipeline, it is just not written to memory.
#include <algorithm>

#include "devices/npu/npu_layer.h"

namespace orknn::devices::npu {
namespace {

// Readers of `tensor` anywhere in the graph, and whether it is a graph output.
size_t reader_count(const graph::Graph& graph, int32_t tensor) {
  size_t readers = 0;
  for (const graph::Node& node : graph.nodes) {
    readers += static_cast<size_t>(std::count(node.inputs.begin(), node.inputs.end(), tensor));
  }
  for (int32_t output : graph.outputs) readers += output == tensor ? 2 : 0;
  return readers;
}

// The node index that produces `tensor`, or SIZE_MAX for graph inputs and constants.
size_t producer(const graph::Graph& graph, int32_t tensor) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const auto& outputs = graph.nodes[n].outputs;
    if (std::find(outputs.begin(), outputs.end(), tensor) != outputs.end()) return n;
  }
  return SIZE_MAX;
}

// The layer reading `tensor`, if exactly one layer does and nothing else reads it.
NpuLayer* sole_reader(const graph::Graph& graph, std::vector<NpuLayer>& layers, int32_t tensor) {
  if (reader_count(graph, tensor) != 1) return nullptr;
  for (NpuLayer& layer : layers) {
    if (layer.input_tensor == tensor || layer.operand_tensor == tensor) return &layer;
  }
  return nullptr;
}

bool fuse_add(const graph::Graph& graph, NpuLayer& conv, NpuLayer& add) {
  if (conv.kind != LayerKind::kConvolution || conv.fused_add || conv.use_lut ||
      conv.has_final_clamp() || add.kind != LayerKind::kAdd || add.use_lut ||
      add.has_final_clamp() || conv.float16 != add.float16) {
    return false;
  }
  const bool conv_first = add.input_tensor == conv.output_tensor;
  const int32_t other = conv_first ? add.operand_tensor : add.input_tensor;
  if (other == conv.output_tensor) return false;  // conv + itself
  // The other operand must exist when the convolution runs.
  const size_t other_producer = producer(graph, other);
  if (other_producer != SIZE_MAX && other_producer > conv.node_index) return false;
  conv.fused_add = true;
  conv.operand_tensor = other;
  conv.operand_scale = conv_first ? add.operand_scale : add.input_scale;
  conv.operand_zero_point = conv_first ? add.operand_zero_point : add.input_zero_point;
  conv.fused_output_scale = add.output_scale;
  conv.fused_output_zero_point = add.output_zero_point;
  conv.output_tensor = add.output_tensor;
  conv.fused_nodes.push_back(add.node_index);
  return true;
}

// The producer now writes what `fused` wrote, and reports `fused`'s node as folded into it.
void take_over_output(NpuLayer& producer_layer, const NpuLayer& fused) {
  producer_layer.output_tensor = fused.output_tensor;
  producer_layer.output = fused.output;
  producer_layer.fused_nodes.push_back(fused.node_index);
}

// float16: a Relu/Clip after a Conv or Add becomes its final clamp. Two clamps compose into
// one only when their ranges overlap (otherwise the result is a constant, left unfused).
bool fuse_float16_clamp(NpuLayer& producer_layer, const NpuLayer& clamp) {
  const float low = std::max(producer_layer.final_low, clamp.final_low);
  const float high = std::min(producer_layer.final_high, clamp.final_high);
  if (!(low <= high)) return false;
  producer_layer.final_low = low;
  producer_layer.final_high = high;
  take_over_output(producer_layer, clamp);
  return true;
}

bool fuse_table(NpuLayer& producer_layer, const NpuLayer& table) {
  if (table.kind != LayerKind::kLookupTable || table.concat_part ||
      (producer_layer.kind != LayerKind::kConvolution && producer_layer.kind != LayerKind::kAdd) ||
      producer_layer.float16 != table.float16) {
    return false;
  }
  if (table.float16) return fuse_float16_clamp(producer_layer, table);
  std::array<int8_t, 256> composed = table.lut;
  if (producer_layer.use_lut) {
    for (size_t i = 0; i < 256; ++i) {
      composed[i] = table.lut[static_cast<size_t>(producer_layer.lut[i] + 128)];
    }
  }
  producer_layer.use_lut = true;
  producer_layer.lut = composed;
  take_over_output(producer_layer, table);
  return true;
}

}  // namespace

void fuse_layers(const graph::Graph& graph, std::vector<NpuLayer>* layers) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < layers->size() && !changed; ++i) {
      NpuLayer& first = (*layers)[i];
      NpuLayer* next = sole_reader(graph, *layers, first.output_tensor);
      if (!next || next == &first) continue;
      if (fuse_add(graph, first, *next) || fuse_table(first, *next)) {
        layers->erase(layers->begin() + (next - layers->data()));
        changed = true;
      }
    }
  }
}

}  // namespace orknn::devices::npu
