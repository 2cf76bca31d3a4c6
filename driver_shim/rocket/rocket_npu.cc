#include "driver_shim/backends.h"

namespace orknn::driver_shim {

Result<std::shared_ptr<Npu>> open_rocket(const SystemCalls&) {
  return make_error(StatusCode::kDeviceUnavailable, "the rocket backend is not in this build yet");
}

}  // namespace orknn::driver_shim
