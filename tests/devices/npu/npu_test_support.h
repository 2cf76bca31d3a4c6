// Runs a graph on the CPU alone and on the emulated NPU (then the CPU for what the NPU does not
// claim), so tests can compare bytes.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "devices/device.h"
#include "driver_shim/npu.h"
#include "exec/executor.h"

namespace orknn::testing {

struct DeviceRun {
  Status status;
  std::vector<std::vector<uint8_t>> outputs;
  size_t npu_nodes = 0;
  uint64_t npu_macs = 0, total_macs = 0;
  exec::Profiler profiler;
};

// `npu` null: CPU only. `core_mask` as rknn_set_core_mask takes it, `batch_core_num` as
// rknn_set_batch_core_num (0: not set).
DeviceRun run_graph(std::shared_ptr<const graph::Graph> graph,
                    const std::vector<std::vector<uint8_t>>& inputs,
                    std::shared_ptr<driver_shim::Npu> npu, uint32_t core_mask,
                    int batch_core_num = 0);

// The three-core emulated NPU the op tests share.
std::shared_ptr<driver_shim::Npu> emulated_npu();

inline int uniform(std::mt19937& rng, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(rng);
}

}  // namespace orknn::testing
