// Recognition of vendor-compiled RKNN files (Rockchip's RKNN-Toolkit2 output). OpenRKNN cannot run
// them, since they hold NPU register programs compiled by a closed compiler, so the runtime
// refuses them with a message that says what the file is and what to do instead.
//
// Layout facts used here (observed in files from toolkit 1.3 to 1.6, see docs/model-format.md):
//   bytes 0..7    "RKNN" and four zero bytes
//   bytes 8..15   u64 LE format version (2, 6, ...)
//   bytes 16..23  u64 LE size of the model payload (a FlatBuffer) that starts at byte 64
//   then          u64 LE length of a JSON description, and the JSON itself, which holds
//                 "target_platform": ["rk3588"] and "version": "<toolkit version>"
// The payload also holds a string "<toolkit>(compiler version: <compiler> (...))".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace orknn::model {

struct VendorModelInfo {
  uint64_t format_version = 0;   // 0 when the file is too short to hold it
  std::string target_platform;   // "rk3588" (several joined by "/"); empty when not found
  std::string toolkit_version;   // "1.6.2-source_code"; empty when not found
  std::string compiler_version;  // "1.6.2b0"; empty when not found
};

// std::nullopt unless the bytes start with the vendor magic. The metadata is best effort: every
// read is bounded by `size`, and fields that cannot be found, or do not look like short printable
// text, are left empty. Safe on any input.
std::optional<VendorModelInfo> detect_vendor_model(const uint8_t* data, size_t size);

// The message the runtime reports when it refuses a vendor file.
std::string describe_vendor_model(const VendorModelInfo& info);

}  // namespace orknn::model
