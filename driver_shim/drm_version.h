// Asks a DRM node which driver it belongs to (libdrm's drmGetVersion, i.e. DRM_IOCTL_VERSION).
#pragma once

#include <string>
#include <vector>

namespace orknn::driver_shim {

struct DrmDriverVersion {
  std::string name;
  int major = 0, minor = 0, patch = 0;
};

// False when the ioctl fails (not a DRM node).
bool query_drm_version(int fd, DrmDriverVersion* out_version);

// Opens the first of `paths` whose driver is `driver_name`. On failure *out_error says what was
// tried and what to do (missing nodes, permissions).
int open_drm_node(const std::vector<std::string>& paths, const char* driver_name,
                  DrmDriverVersion* out_version, std::string* out_path, std::string* out_error);

}  // namespace orknn::driver_shim
