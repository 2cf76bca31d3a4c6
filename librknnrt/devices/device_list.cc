// The one place that lists the devices that exist, in priority order. NPU and GPU devices
// join here (before the CPU) when their backends are built.
#include "devices/device.h"

namespace orknn::devices {

std::vector<std::shared_ptr<Device>> available_devices() {
  static const std::vector<std::shared_ptr<Device>> devices = [] {
    std::vector<std::shared_ptr<Device>> found;
    // Used only where a context asks for it (Device::on_request_only).
    found.push_back(make_gpu_device());
    found.push_back(make_cpu_device());
    return found;
  }();
  return devices;
}

}  // namespace orknn::devices
