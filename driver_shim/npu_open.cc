// Backend selection: ORKNN_NPU_BACKEND forces one; otherwise the vendor driver, then the
// mainline one. The emulator is never picked automatically, so a machine without an NPU keeps
// running models on the CPU.
#include <cstdlib>
#include <string>

#include "driver_shim/backends.h"
#include "driver_shim/npu.h"

namespace orknn::driver_shim {

Result<std::shared_ptr<Npu>> open_npu(std::string_view backend) {
  if (backend == "emu" || backend == "emu:rk3588") return make_emulated_npu(3);
  if (backend == "emu:rk3576") return make_emulated_npu(2);
  if (backend == "rknpu") return open_rknpu();
  if (backend == "rocket") return open_rocket();
  if (backend == "auto") {
    auto vendor = open_rknpu();
    if (vendor.ok()) return vendor;
    auto mainline = open_rocket();
    if (mainline.ok()) return mainline;
    return make_error(StatusCode::kDeviceUnavailable, "no NPU found: ", vendor.status().message(),
                      "; ", mainline.status().message());
  }
  return invalid_argument("NPU backend '", std::string(backend),
                          "' is not one of emu, emu:rk3588, emu:rk3576, rknpu, rocket, auto, none");
}

Result<std::shared_ptr<Npu>> open_default_npu() {
  const char* forced = std::getenv("ORKNN_NPU_BACKEND");
  const std::string backend = forced && *forced ? forced : "auto";
  if (backend == "none") {
    return make_error(StatusCode::kDeviceUnavailable, "ORKNN_NPU_BACKEND=none: NPU disabled");
  }
  return open_npu(backend);
}

}  // namespace orknn::driver_shim
