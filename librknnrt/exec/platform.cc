#include "exec/platform.h"

#include <cctype>

namespace orknn::exec {
namespace {

constexpr PlatformInfo kPlatforms[] = {
    {"rk3588", 3, 16, 8},  {"rk3576", 2, 16, 8}, {"rk3562", 1, 16, 8},  {"rk3566", 1, 8, 4},
    {"rk3568", 1, 8, 4},   {"rv1103", 1, 16, 8}, {"rv1106", 1, 16, 8},  {"rv1103b", 1, 16, 8},
    {"rv1106b", 1, 16, 8}, {"rk2118", 1, 16, 8}, {"rv1126b", 1, 16, 8},
};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

const PlatformInfo* find_platform(std::string_view name) {
  for (const PlatformInfo& platform : kPlatforms) {
    if (equal_ignoring_case(name, platform.name)) return &platform;
  }
  return nullptr;
}

std::string known_platform_names() {
  std::string names;
  for (const PlatformInfo& platform : kPlatforms) {
    if (!names.empty()) names += ", ";
    names += platform.name;
  }
  return names;
}

const PlatformInfo& default_platform() {
  return kPlatforms[0];
}

}  // namespace orknn::exec
