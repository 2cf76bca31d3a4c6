#include "device_list.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace orknn::client {

std::string format_device_list(AdbClient& adb, UsbEnumerator& usb,
                               const std::string& configured_addresses) {
  std::string out = "*************************\nall device(s) with adb mode:\n";
  std::vector<AdbDevice> adb_devices;
  std::string error;
  if (!adb.list_devices(&adb_devices, &error)) out += "  (" + error + ")\n";
  for (const AdbDevice& device : adb_devices) out += device.serial + "\t" + device.state + "\n";
  out += "Rockchip USB device(s):\n";
  std::vector<UsbDeviceInfo> usb_devices;
  if (!usb.list(&usb_devices, &error)) out += "  (" + error + ")\n";
  for (const UsbDeviceInfo& device : usb_devices) {
    const std::string mode = rockchip_usb_mode(device);
    if (mode.empty()) continue;
    char line[128];
    std::snprintf(line, sizeof(line), "bus %03u device %03u  %04x:%04x  %s\n", device.bus,
                  device.address, device.vendor_id, device.product_id, mode.c_str());
    out += line;
  }
  out += "configured network address(es):\n";
  std::istringstream lines(configured_addresses);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) out += line + "\n";
  }
  out += "*************************\n";
  return out;
}

}  // namespace orknn::client
