// The one place that lists the devices that exist, in priority order. NPU and GPU devices
// join here (before the CPU) when their backends are built.
#include "devices/device.h"

namespace orknn::devices {

std::vector<std::shared_ptr<Device>> available_devices() {
  static const std::vector<std::shared_ptr<Device>> devices = [] {
    std::vector<std::shared_ptr<Device>> list;
    if (auto npu = make_default_npu_device()) list.push_back(std::move(npu));
    // Used only where a context asks for it (Device::on_request_only).
    list.push_back(make_gpu_device());
    list.push_back(make_cpu_device());
    return list;
  }();
  return devices;
}

}  // namespace orknn::devices
