#include "model/vendor_model.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/container_format.h"

namespace orknn::model {
namespace {

constexpr uint8_t kVendorMagic[8] = {'R', 'K', 'N', 'N', 0, 0, 0, 0};
constexpr uint64_t kVendorPayloadOffset = 64;
// Platform names and version strings are short; anything longer is not what we are looking for.
constexpr size_t kMaxFieldLength = 64;
constexpr size_t kMaxPlatforms = 8;

bool is_printable(char c) {
  return c >= 0x20 && c < 0x7f;
}

// Skips spaces, tabs and line breaks from `position`.
size_t skip_space(std::string_view text, size_t position) {
  while (position < text.size() && (text[position] == ' ' || text[position] == '\t' ||
                                    text[position] == '\n' || text[position] == '\r')) {
    ++position;
  }
  return position;
}

// Reads a JSON string without escapes that starts at the quote at `position`. Returns
// std::nullopt for anything else (escapes, control bytes, too long, unterminated).
std::optional<std::string> read_plain_string(std::string_view text, size_t* position) {
  if (*position >= text.size() || text[*position] != '"') return std::nullopt;
  std::string value;
  for (size_t i = *position + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      *position = i + 1;
      return value;
    }
    if (c == '\\' || !is_printable(c) || value.size() == kMaxFieldLength) return std::nullopt;
    value += c;
  }
  return std::nullopt;
}

// The values of the first `"key": "value"` or `"key": ["value", ...]` member in a JSON text. A
// small scanner rather than a JSON parser: it only needs these flat members, and it must stay
// safe on text that is not JSON at all.
std::vector<std::string> json_string_values(std::string_view json, std::string_view key) {
  const std::string quoted_key = str_cat('"', key, '"');
  for (size_t found = json.find(quoted_key); found != std::string_view::npos;
       found = json.find(quoted_key, found + 1)) {
    size_t position = skip_space(json, found + quoted_key.size());
    if (position >= json.size() || json[position] != ':') continue;  // a value, not a key
    position = skip_space(json, position + 1);
    std::vector<std::string> values;
    if (position < json.size() && json[position] == '[') {
      position = skip_space(json, position + 1);
      while (values.size() < kMaxPlatforms) {
        std::optional<std::string> value = read_plain_string(json, &position);
        if (!value) break;
        values.push_back(std::move(*value));
        position = skip_space(json, position);
        if (position >= json.size() || json[position] != ',') break;
        position = skip_space(json, position + 1);
      }
    } else if (std::optional<std::string> value = read_plain_string(json, &position)) {
      values.push_back(std::move(*value));
    }
    return values;
  }
  return {};
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string joined;
  for (const std::string& part : parts) {
    if (!joined.empty()) joined += separator;
    joined += part;
  }
  return joined;
}

// The JSON description that follows the payload, or an empty view when the sizes do not add up.
std::string_view find_json_description(const uint8_t* data, size_t size, uint64_t payload_size) {
  if (size < kVendorPayloadOffset || payload_size > size - kVendorPayloadOffset) return {};
  const uint64_t length_offset = kVendorPayloadOffset + payload_size;
  if (size - length_offset < 8) return {};
  const uint64_t json_length = load_u64_le(data + length_offset);
  if (json_length > size - length_offset - 8) return {};
  return std::string_view(reinterpret_cast<const char*>(data + length_offset + 8),
                          static_cast<size_t>(json_length));
}

// A FlatBuffer string is a u32 LE length, the bytes, and a zero byte. True when `text[begin, end)`
// is exactly such a string.
bool is_flatbuffer_string(std::string_view text, size_t begin, size_t end) {
  if (begin < 4 || end >= text.size() || text[end] != '\0') return false;
  const auto* length_bytes = reinterpret_cast<const uint8_t*>(text.data() + begin - 4);
  return load_u32_le(length_bytes) == end - begin;
}

// "1.6.2b0" and "1.6.2-source_code" from "1.6.2-source_code(compiler version: 1.6.2b0 (...))".
void find_versions_in_payload(std::string_view payload, VendorModelInfo* info) {
  constexpr std::string_view kMarker = "(compiler version: ";
  const size_t marker = payload.find(kMarker);
  if (marker == std::string_view::npos) return;
  std::string compiler;
  for (size_t i = marker + kMarker.size(); i < payload.size() && compiler.size() < kMaxFieldLength;
       ++i) {
    const char c = payload[i];
    if (c == ' ' || c == ')' || !is_printable(c)) break;
    compiler += c;
  }
  info->compiler_version = compiler;
  if (!info->toolkit_version.empty()) return;
  // The toolkit version is the start of the same string: find where it begins from its length.
  const size_t end = payload.find('\0', marker);
  if (end == std::string_view::npos) return;
  for (size_t begin = marker; begin + kMaxFieldLength >= marker && begin >= 4; --begin) {
    if (begin < marker && !is_printable(payload[begin])) break;
    if (is_flatbuffer_string(payload, begin, end)) {
      info->toolkit_version = std::string(payload.substr(begin, marker - begin));
      return;
    }
  }
}

// Platform names look like rk3588, rk3566, rv1106, rk2118: "rk" or "rv", four digits, and maybe a
// suffix. Used only when the JSON description is missing.
bool looks_like_platform(std::string_view text) {
  if (text.size() < 6) return false;
  if (text[0] != 'r' || (text[1] != 'k' && text[1] != 'v')) return false;
  for (size_t i = 2; i < 6; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return std::all_of(text.begin() + 6, text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); });
}

std::string find_platform_in_payload(std::string_view payload) {
  constexpr size_t kMaxPlatformLength = 16;
  for (size_t found = payload.find('r'); found != std::string_view::npos;
       found = payload.find('r', found + 1)) {
    // Bounded look-ahead keeps the scan linear even on a file made of 'r' bytes.
    const size_t length = payload.substr(found, kMaxPlatformLength + 1).find('\0');
    if (length == std::string_view::npos) continue;
    if (looks_like_platform(payload.substr(found, length)) &&
        is_flatbuffer_string(payload, found, found + length)) {
      return std::string(payload.substr(found, length));
    }
  }
  return {};
}

}  // namespace

std::optional<VendorModelInfo> detect_vendor_model(const uint8_t* data, size_t size) {
  if (data == nullptr || size < sizeof(kVendorMagic) ||
      std::memcmp(data, kVendorMagic, sizeof(kVendorMagic)) != 0) {
    return std::nullopt;
  }
  VendorModelInfo info;
  if (size < 16) return info;
  info.format_version = load_u64_le(data + 8);
  if (size < 24) return info;
  const uint64_t payload_size = load_u64_le(data + 16);

  const std::string_view json = find_json_description(data, size, payload_size);
  info.target_platform = join(json_string_values(json, "target_platform"), "/");
  const std::vector<std::string> versions = json_string_values(json, "version");
  if (!versions.empty()) info.toolkit_version = versions.front();

  // Without a trustworthy payload size, search the whole file: the searches are bounded anyway.
  std::string_view payload(reinterpret_cast<const char*>(data), size);
  if (size >= kVendorPayloadOffset && payload_size <= size - kVendorPayloadOffset) {
    payload = payload.substr(kVendorPayloadOffset, static_cast<size_t>(payload_size));
  }
  find_versions_in_payload(payload, &info);
  if (info.target_platform.empty()) info.target_platform = find_platform_in_payload(payload);
  return info;
}

std::string describe_vendor_model(const VendorModelInfo& info) {
  std::string details = info.format_version != 0
                            ? str_cat("format version ", info.format_version)
                            : std::string("format version unknown: the file is truncated");
  details += ", target platform " +
             (info.target_platform.empty() ? std::string("unknown") : info.target_platform);
  if (!info.toolkit_version.empty()) details += ", toolkit version " + info.toolkit_version;
  if (!info.compiler_version.empty()) details += ", compiler version " + info.compiler_version;
  return str_cat("this is a vendor-compiled RKNN model (", details,
                 "), which OpenRKNN cannot run; convert the source model (ONNX) with "
                 "rknn-convert to get a model in the open format");
}

}  // namespace orknn::model
