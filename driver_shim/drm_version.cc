#include "driver_shim/drm_version.h"

#include <drm.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace orknn::driver_shim {

bool query_drm_version(const SystemCalls& calls, int fd, DrmDriverVersion* out_version) {
  char name[64] = {};
  drm_version version;
  std::memset(&version, 0, sizeof(version));
  version.name = name;
  version.name_len = sizeof(name) - 1;
  if (calls.ioctl(fd, DRM_IOCTL_VERSION, &version) != 0) return false;
  out_version->name.assign(name, strnlen(name, sizeof(name)));
  out_version->major = version.version_major;
  out_version->minor = version.version_minor;
  out_version->patch = version.version_patchlevel;
  return true;
}

int open_drm_node(const SystemCalls& calls, const std::vector<std::string>& paths,
                  const char* driver_name, DrmDriverVersion* out_version, std::string* out_path,
                  std::string* out_error) {
  std::string denied, others;
  for (const std::string& path : paths) {
    const int fd = calls.open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == EACCES || errno == EPERM) denied += (denied.empty() ? "" : ", ") + path;
      continue;
    }
    DrmDriverVersion version;
    if (query_drm_version(calls, fd, &version) && version.name == driver_name) {
      *out_version = version;
      *out_path = path;
      return fd;
    }
    if (!version.name.empty())
      others += (others.empty() ? "" : ", ") + path + " (" + version.name + ")";
    calls.close(fd);
  }
  if (!denied.empty()) {
    *out_error = "permission denied opening " + denied +
                 ": add the user to the group owning the node (usually 'render': sudo usermod "
                 "-aG render $USER, then log in again) or install a udev rule for it";
  } else {
    *out_error = std::string("no ") + driver_name + " device node" +
                 (others.empty() ? "" : " (found other drivers: " + others + ")");
  }
  return -1;
}

}  // namespace orknn::driver_shim
