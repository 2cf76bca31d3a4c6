// Which device runs which node. Devices are asked in priority order; a device that is used only
// on request (the GPU) is asked only for nodes the context wants there. Runs of GPU nodes that
// would cost more in transfers than they compute are then given back to the CPU, unless the
// context asked for every supported node on the GPU (tests).
#pragma once

#include <memory>
#include <vector>

#include "devices/device.h"
#include "graph/graph.h"

namespace orknn::exec {

struct PlacementOptions {
  // RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU: nodes the GPU supports go there.
  bool prefer_gpu = false;
  // Every node the GPU supports goes there, with no weighing of transfers.
  bool gpu_for_every_supported_node = false;
};

// The options after the ORKNN_GPU environment variable: "prefer" acts as the flag, "all" as
// gpu_for_every_supported_node, "off" (also read by the GPU device) disables the GPU.
PlacementOptions placement_from_environment(PlacementOptions options);

// The device of every node (never null: the last device supports every node the runtime
// knows), or an error naming a node no device supports. A node's string attribute
// `op_target` ("gpu" or "cpu", as the converter's op_target option) overrides the options.
Result<std::vector<std::shared_ptr<devices::Device>>> place_nodes(
    const graph::Graph& graph, const std::vector<graph::Shape>& shapes,
    const std::vector<std::shared_ptr<devices::Device>>& devices, const PlacementOptions& options);

}  // namespace orknn::exec
