// Facts about each Rockchip SoC the model files can target: NPU core count and the channel
// block (C2) of the NC1HWC2 native layout per element size.
#pragma once

#include <string>
#include <string_view>

namespace orknn::exec {

struct PlatformInfo {
  const char* name;
  int npu_cores;
  int c2_int8;     // C2 for 1-byte elements
  int c2_float16;  // C2 for 2-byte elements
};

// Case-insensitive lookup; nullptr for an unknown name.
const PlatformInfo* find_platform(std::string_view name);
// The list of names, comma separated, for error messages.
std::string known_platform_names();
// The platform a model without a target platform is treated as.
const PlatformInfo& default_platform();

}  // namespace orknn::exec
