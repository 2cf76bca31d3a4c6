// The NPU device: claims the int8 nodes it can run bit-exact with the CPU (npu_lowering.cc) and
// compiles segments into register programs for driver_shim.
#include "core/logging.h"
#include "devices/device.h"
#include "devices/npu/npu_executable.h"
#include "devices/npu/npu_layer.h"
#include "devices/npu/npu_memory.h"
#include "driver_shim/npu.h"

namespace orknn::devices {
namespace {

class NpuDevice final : public Device {
 public:
  explicit NpuDevice(std::shared_ptr<driver_shim::Npu> npu) : npu_(std::move(npu)) {}
  const char* name() const override { return "NPU"; }

  bool supports(const graph::Graph& graph, const graph::Node& node) const override {
    std::vector<graph::Shape> shapes;
    shapes.reserve(graph.tensors.size());
    for (const graph::Tensor& tensor : graph.tensors) shapes.push_back(tensor.shape);
    const size_t index = static_cast<size_t>(&node - graph.nodes.data());
    if (index >= graph.nodes.size()) return false;
    return npu::lower_node(graph, index, shapes).ok();
  }

  Result<std::unique_ptr<Executable>> compile(const graph::Graph& graph,
                                              const std::vector<size_t>& node_indices,
                                              const std::vector<graph::Shape>& shapes) override {
    return npu::compile_npu_segment(npu_, graph, node_indices, shapes);
  }

 private:
  std::shared_ptr<driver_shim::Npu> npu_;
};

}  // namespace

std::shared_ptr<Device> make_npu_device(std::shared_ptr<driver_shim::Npu> npu) {
  return std::make_shared<NpuDevice>(std::move(npu));
}

std::shared_ptr<Device> make_default_npu_device() {
  auto npu = driver_shim::open_default_npu();
  if (!npu.ok()) {
    log_debug("NPU not used: ", npu.status().message());
    return nullptr;
  }
  const driver_shim::NpuInfo& info = (*npu)->info();
  log_info("NPU backend ", info.backend, " (", info.device_path, "), ", info.core_count,
           " cores, driver version ", info.driver_version, info.emulated ? ", emulated" : "");
  // While the NPU is open (for the rest of the process), rknn_create_mem* memory comes from its
  // driver, so the NPU can address it without a copy.
  set_device_memory_allocator(npu::make_npu_memory_allocator(*npu));
  return make_npu_device(*npu);
}

}  // namespace orknn::devices
