#include "usb_devices.h"

#include <libusb.h>

namespace orknn::client {

std::string rockchip_usb_mode(const UsbDeviceInfo& device) {
  if (device.vendor_id != kRockchipVendorId) return std::string();
  if (device.has_adb_interface) return "adb";
  return (device.bcd_usb & 0x0001) ? "loader" : "maskrom";
}

bool LibusbEnumerator::list(std::vector<UsbDeviceInfo>* out, std::string* error) {
  libusb_context* context = nullptr;
  if (libusb_init(&context) != 0) {
    *error = "libusb_init failed (no USB access here)";
    return false;
  }
  libusb_device** devices = nullptr;
  const ssize_t count = libusb_get_device_list(context, &devices);
  if (count < 0) {
    libusb_exit(context);
    *error = "libusb_get_device_list failed";
    return false;
  }
  for (ssize_t i = 0; i < count; ++i) {
    libusb_device_descriptor descriptor{};
    if (libusb_get_device_descriptor(devices[i], &descriptor) != 0) continue;
    UsbDeviceInfo info;
    info.vendor_id = descriptor.idVendor;
    info.product_id = descriptor.idProduct;
    info.bcd_usb = descriptor.bcdUSB;
    info.bus = libusb_get_bus_number(devices[i]);
    info.address = libusb_get_device_address(devices[i]);
    libusb_config_descriptor* config = nullptr;
    if (info.vendor_id == kRockchipVendorId &&
        libusb_get_active_config_descriptor(devices[i], &config) == 0) {
      for (int k = 0; k < config->bNumInterfaces; ++k) {
        for (int a = 0; a < config->interface[k].num_altsetting; ++a) {
          const libusb_interface_descriptor& alt = config->interface[k].altsetting[a];
          if (alt.bInterfaceClass == 0xff && alt.bInterfaceSubClass == 0x42 &&
              alt.bInterfaceProtocol == 0x01) {
            info.has_adb_interface = true;
          }
        }
      }
      libusb_free_config_descriptor(config);
    }
    out->push_back(info);
  }
  libusb_free_device_list(devices, 1);
  libusb_exit(context);
  return true;
}

}  // namespace orknn::client
