// The GPU device of a build without the OpenCL headers: listed like the real one, supports
// nothing, and says why.
#include "devices/device.h"

namespace orknn::devices {
namespace {

class GpuDeviceNotBuilt final : public Device {
 public:
  const char* name() const override { return "GPU"; }
  bool on_request_only() const override { return true; }
  bool supports(const graph::Graph&, const graph::Node&) const override { return false; }
  Result<std::unique_ptr<Executable>> compile(const graph::Graph&, const std::vector<size_t>&,
                                              const std::vector<graph::Shape>&) override {
    return unimplemented(gpu_unavailable_reason());
  }
};

}  // namespace

std::shared_ptr<Device> make_gpu_device() {
  return std::make_shared<GpuDeviceNotBuilt>();
}

std::string gpu_unavailable_reason() {
  return "this librknnrt was built without the OpenCL headers, so it has no GPU device";
}

}  // namespace orknn::devices
