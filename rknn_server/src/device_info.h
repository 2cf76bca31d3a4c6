// What the board is, from the device tree, /proc, /sys and /dev (under a configurable root)
// and from the runtime library's embedded version.
#pragma once

#include <string>

#include "openrknn/server/v1/rknn_server.pb.h"

namespace orknn::server {

openrknn::server::v1::DeviceInfo read_device_info(const std::string& sysfs_root);

}  // namespace orknn::server
