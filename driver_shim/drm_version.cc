#include "driver_shim/drm_version.h"

#include <fcntl.h>
#include <unistd.h>
#include <xf86drm.h>

#include <cerrno>

namespace orknn::driver_shim {

bool query_drm_version(int fd, DrmDriverVersion* out_version) {
  drmVersionPtr version = drmGetVersion(fd);
  if (!version) return false;
  out_version->name.assign(version->name ? version->name : "",
                           version->name ? static_cast<size_t>(version->name_len) : 0);
  out_version->major = version->version_major;
  out_version->minor = version->version_minor;
  out_version->patch = version->version_patchlevel;
  drmFreeVersion(version);
  return true;
}

int open_drm_node(const std::vector<std::string>& paths, const char* driver_name,
                  DrmDriverVersion* out_version, std::string* out_path, std::string* out_error) {
  std::string denied, others;
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == EACCES || errno == EPERM) denied += (denied.empty() ? "" : ", ") + path;
      continue;
    }
    DrmDriverVersion version;
    if (query_drm_version(fd, &version) && version.name == driver_name) {
      *out_version = version;
      *out_path = path;
      return fd;
    }
    if (!version.name.empty())
      others += (others.empty() ? "" : ", ") + path + " (" + version.name + ")";
    ::close(fd);
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
