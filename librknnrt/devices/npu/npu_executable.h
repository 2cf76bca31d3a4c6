// A compiled NPU segment: NPU buffers for its tensors (NC1HWC2), its constants, and register
// programs for one, two and three cores. Running converts the segment's inputs from the
// runtime's layout (NCHW int8) into NPU buffers, submits the programs through driver_shim on the
// cores the context's core mask allows, and converts the outputs other devices read back.
#pragma once

#include <memory>
#include <vector>

#include "devices/device.h"
#include "devices/npu/npu_layer.h"
#include "driver_shim/npu.h"

namespace orknn::devices::npu {

Result<std::unique_ptr<Executable>> compile_npu_segment(std::shared_ptr<driver_shim::Npu> npu,
                                                        const graph::Graph& graph,
                                                        const std::vector<size_t>& node_indices,
                                                        const std::vector<graph::Shape>& shapes);

// How many segment inputs and outputs NPU runs in this process converted between the runtime's
// layout and the NPU's (one per tensor and run). Inputs and outputs bound in place
// (Executable::bind_native) are not converted, so tests use this to prove zero-copy runs.
uint64_t layout_conversion_count();

}  // namespace orknn::devices::npu
