// The `rknn-client devices` listing, from its three sources (each behind an interface or a
// plain text, so that tests use fakes).
#pragma once

#include <string>

#include "adb.h"
#include "usb_devices.h"

namespace orknn::client {

// `configured_addresses`: one host:port per line, as kept in the addresses file.
std::string format_device_list(AdbClient& adb, UsbEnumerator& usb,
                               const std::string& configured_addresses);

}  // namespace orknn::client
