#include "npu_test_support.h"

#include <cstring>

#include "graph/shape_inference.h"

namespace orknn::testing {

std::shared_ptr<driver_shim::Npu> emulated_npu() {
  static std::shared_ptr<driver_shim::Npu> npu = driver_shim::make_emulated_npu(3);
  return npu;
}

DeviceRun run_graph(std::shared_ptr<const graph::Graph> graph,
                    const std::vector<std::vector<uint8_t>>& inputs,
                    std::shared_ptr<driver_shim::Npu> npu, uint32_t core_mask, int batch_core_num) {
  DeviceRun run;
  std::vector<std::shared_ptr<devices::Device>> devices;
  if (npu) devices.push_back(devices::make_npu_device(npu));
  devices.push_back(devices::make_cpu_device());
  auto executor = exec::Executor::create(graph, graph::stored_input_shapes(*graph), devices);
  if (!executor.ok()) {
    run.status = executor.status();
    return run;
  }
  (*executor)->set_run_options({core_mask, batch_core_num});
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy((*executor)->input_data(i), inputs[i].data(),
                std::min(inputs[i].size(), (*executor)->input_bytes(i)));
  }
  run.status = (*executor)->run(&run.profiler);
  if (!run.status.ok()) return run;
  for (size_t o = 0; o < graph->outputs.size(); ++o) {
    const uint8_t* data = (*executor)->output_data(o);
    run.outputs.emplace_back(data, data + (*executor)->output_bytes(o));
  }
  for (size_t n = 0; n < graph->nodes.size(); ++n) {
    const bool on_npu = std::strcmp((*executor)->node_target(n), "NPU") == 0;
    run.npu_nodes += on_npu;
    const exec::NpuNodeTiming& timing = run.profiler.npu_timings()[n];
    if (on_npu) run.npu_macs += timing.macs;
  }
  return run;
}

}  // namespace orknn::testing
