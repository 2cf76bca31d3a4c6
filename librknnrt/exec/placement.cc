#include "exec/placement.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/logging.h"

namespace orknn::exec {
namespace {

// A GPU run is worth its transfers when it does at least this many multiply-adds (or element
// operations) per byte it moves across the device boundary. Transfers cost about a byte per
// nanosecond or worse on the boards' shared memory path (and a copy on PoCL), while a mobile
// GPU does tens of multiply-adds per nanosecond, so a run below this ratio is transfer-bound
// and the CPU is as fast without the round trip.
constexpr double kOperationsPerTransferredByte = 16.0;

enum class NodeWish { kDefault, kGpu, kCpu };

NodeWish node_wish(const graph::Node& node) {
  auto found = node.attributes.find("op_target");
  if (found == node.attributes.end() || found->second.kind != graph::Attribute::Kind::kString) {
    return NodeWish::kDefault;
  }
  if (found->second.string_value == "gpu") return NodeWish::kGpu;
  if (found->second.string_value == "cpu") return NodeWish::kCpu;
  return NodeWish::kDefault;
}

size_t tensor_bytes(const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
                    int32_t index) {
  return static_cast<size_t>(graph::element_count(shapes[static_cast<size_t>(index)])) *
         element_size(graph.tensor(index).data_type);
}

// A rough operation count: multiply-adds for the matrix ops, one per output element otherwise.
double node_operations(const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
                       const graph::Node& node) {
  const double outputs =
      static_cast<double>(graph::element_count(shapes[static_cast<size_t>(node.outputs[0])]));
  if ((node.op_type == "Conv" || node.op_type == "Gemm" || node.op_type == "MatMul") &&
      node.inputs.size() >= 2 && node.inputs[1] >= 0) {
    const graph::Shape& weights = shapes[static_cast<size_t>(node.inputs[1])];
    double per_output = 1.0;
    if (node.op_type == "Conv") {
      for (size_t d = 1; d < weights.size(); ++d) per_output *= static_cast<double>(weights[d]);
    } else if (weights.size() >= 2) {
      per_output =
          static_cast<double>(std::min(weights[weights.size() - 2], weights[weights.size() - 1]));
    }
    return outputs * per_output;
  }
  return outputs;
}

// Gives runs of on-request nodes whose operations do not pay for their boundary transfers back
// to `fallback[node]`.
void demote_transfer_bound_runs(const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
                                const std::vector<std::shared_ptr<devices::Device>>& fallback,
                                const std::vector<bool>& wished,
                                std::vector<std::shared_ptr<devices::Device>>& placed) {
  const size_t count = graph.nodes.size();
  std::vector<int64_t> producer(graph.tensors.size(), -1);
  for (size_t index = 0; index < count; ++index) {
    for (int32_t output : graph.nodes[index].outputs) producer[static_cast<size_t>(output)] = index;
  }
  std::vector<std::vector<size_t>> consumers(graph.tensors.size());
  for (size_t index = 0; index < count; ++index) {
    for (int32_t input : graph.nodes[index].inputs) {
      if (input >= 0) consumers[static_cast<size_t>(input)].push_back(index);
    }
  }
  for (size_t begin = 0; begin < count;) {
    if (!placed[begin]->on_request_only()) {
      ++begin;
      continue;
    }
    size_t end = begin;
    while (end < count && placed[end] == placed[begin]) ++end;
    double operations = 0.0, moved_bytes = 0.0;
    bool any_wished = false;
    for (size_t index = begin; index < end; ++index) {
      const graph::Node& node = graph.nodes[index];
      operations += node_operations(graph, shapes, node);
      any_wished = any_wished || wished[index];
      for (int32_t input : node.inputs) {
        if (input < 0 || graph.tensor(input).is_constant()) continue;
        const int64_t from = producer[static_cast<size_t>(input)];
        if (from < static_cast<int64_t>(begin)) {
          moved_bytes += static_cast<double>(tensor_bytes(graph, shapes, input));
        }
      }
      for (int32_t output : node.outputs) {
        bool leaves = false;
        for (size_t consumer : consumers[static_cast<size_t>(output)]) {
          leaves = leaves || consumer >= end;
        }
        for (int32_t graph_output : graph.outputs) leaves = leaves || graph_output == output;
        if (leaves) moved_bytes += static_cast<double>(tensor_bytes(graph, shapes, output));
      }
    }
    if (!any_wished && operations < kOperationsPerTransferredByte * moved_bytes) {
      log_debug("placement: nodes ", begin, "..", end - 1, " stay on the CPU (", operations,
                " operations for ", moved_bytes, " bytes of transfers)");
      for (size_t index = begin; index < end; ++index) placed[index] = fallback[index];
    }
    begin = end;
  }
}

}  // namespace

PlacementOptions placement_from_environment(PlacementOptions options) {
  const char* setting = std::getenv("ORKNN_GPU");
  if (!setting) return options;
  if (std::strcmp(setting, "prefer") == 0) options.prefer_gpu = true;
  if (std::strcmp(setting, "all") == 0) options.gpu_for_every_supported_node = true;
  if (std::strcmp(setting, "off") == 0) {
    options.prefer_gpu = false;
    options.gpu_for_every_supported_node = false;
  }
  return options;
}

Result<std::vector<std::shared_ptr<devices::Device>>> place_nodes(
    const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
    const std::vector<std::shared_ptr<devices::Device>>& devices, const PlacementOptions& options) {
  const bool want_gpu = options.prefer_gpu || options.gpu_for_every_supported_node;
  std::vector<std::shared_ptr<devices::Device>> placed(graph.nodes.size());
  std::vector<std::shared_ptr<devices::Device>> fallback(graph.nodes.size());
  std::vector<bool> wished(graph.nodes.size(), false);
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::Node& node = graph.nodes[index];
    const NodeWish wish = node_wish(node);
    wished[index] = wish == NodeWish::kGpu;
    for (const auto& device : devices) {
      // An explicit op_target leaves out the devices taken by default (the NPU): "gpu" means
      // the GPU, else the CPU; "cpu" means the CPU (always the last device).
      if (wish != NodeWish::kDefault && !device->on_request_only() && device != devices.back()) {
        continue;
      }
      const bool asked = device->on_request_only()
                             ? (wish == NodeWish::kGpu || (want_gpu && wish != NodeWish::kCpu))
                             : true;
      if (!asked || !device->supports(graph, node)) continue;
      if (!placed[index]) placed[index] = device;
      if (!device->on_request_only()) {
        fallback[index] = device;
        break;
      }
    }
    if (!placed[index]) {
      return unimplemented(node.describe(), ": no device supports op type ", node.op_type);
    }
    if (!fallback[index]) fallback[index] = placed[index];
  }
  if (!options.gpu_for_every_supported_node) {
    demote_transfer_bound_runs(graph, shapes, fallback, wished, placed);
  }
  return placed;
}

}  // namespace orknn::exec
