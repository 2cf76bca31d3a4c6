// Rockchip USB devices (vendor 0x2207) and the mode each is in, through an interface so that
// the listing is tested without hardware (LibusbEnumerator is the real one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orknn::client {

constexpr uint16_t kRockchipVendorId = 0x2207;

struct UsbDeviceInfo {
  uint16_t vendor_id = 0;
  uint16_t product_id = 0;
  uint16_t bcd_usb = 0;
  uint8_t bus = 0;
  uint8_t address = 0;
  bool has_adb_interface = false;  // an interface of class 0xff, subclass 0x42, protocol 0x01
};

class UsbEnumerator {
 public:
  virtual ~UsbEnumerator() = default;
  // False with `error` when USB cannot be read (no libusb access).
  virtual bool list(std::vector<UsbDeviceInfo>* out, std::string* error) = 0;
};

class LibusbEnumerator final : public UsbEnumerator {
 public:
  bool list(std::vector<UsbDeviceInfo>* out, std::string* error) override;
};

// "adb" (running system with adbd), "loader" (the bootloader's USB download mode), "maskrom"
// (the boot ROM), or "" for a device that is not Rockchip's. The boot ROM and the loader use
// the same product ids; like rkdeveloptool we tell them apart by bit 0 of bcdUSB (set: loader).
std::string rockchip_usb_mode(const UsbDeviceInfo& device);

}  // namespace orknn::client
