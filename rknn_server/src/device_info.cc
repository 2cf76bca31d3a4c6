#include "device_info.h"

#include <glob.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "version.h"

namespace orknn::server {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::string();
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

bool exists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

bool any_match(const std::string& pattern) {
  glob_t found{};
  const bool matched = glob(pattern.c_str(), 0, nullptr, &found) == 0 && found.gl_pathc > 0;
  globfree(&found);
  return matched;
}

// "rockchip,rk3588-evb1-lp4-v10\0rockchip,rk3588\0" -> "rk3588": the last rockchip entry.
std::string soc_from_compatible(const std::string& compatible) {
  std::string soc;
  size_t at = 0;
  while (at < compatible.size()) {
    size_t end = compatible.find('\0', at);
    if (end == std::string::npos) end = compatible.size();
    const std::string entry = compatible.substr(at, end - at);
    if (entry.rfind("rockchip,", 0) == 0) soc = entry.substr(9);
    at = end + 1;
  }
  return soc.empty() ? "unknown" : soc;
}

uint32_t npu_cores(const std::string& soc) {
  if (soc.rfind("rk3588", 0) == 0) return 3;
  if (soc.rfind("rk3576", 0) == 0) return 2;
  if (soc.rfind("rk356", 0) == 0 || soc.rfind("rv110", 0) == 0) return 1;
  return 0;
}

std::string cpu_model(const std::string& cpuinfo) {
  for (const char* key : {"model name", "Hardware", "Processor"}) {
    const size_t at = cpuinfo.find(key);
    if (at == std::string::npos) continue;
    const size_t colon = cpuinfo.find(':', at);
    const size_t end = cpuinfo.find('\n', at);
    if (colon == std::string::npos || colon > end) continue;
    return cpuinfo.substr(colon + 2, end - colon - 2);
  }
  return "unknown";
}

std::string first_line(std::string text) {
  const size_t end = text.find_first_of("\n");
  if (end != std::string::npos) text.resize(end);
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

openrknn::server::v1::DeviceInfo read_device_info(const std::string& sysfs_root) {
  std::string root = sysfs_root;
  if (!root.empty() && root.back() == '/') root.pop_back();
  openrknn::server::v1::DeviceInfo info;
  utsname machine{};
  uname(&machine);
  info.set_architecture(machine.machine);
  info.set_soc(soc_from_compatible(read_file(root + "/proc/device-tree/compatible")));
  std::string model = first_line(read_file(root + "/proc/device-tree/model"));
  info.set_platform(model.empty() ? std::string(machine.sysname) + " " + machine.machine : model);
  if (any_match(root + "/dev/accel/accel*")) {
    info.set_npu_backend("rocket");
  } else if (exists(root + "/dev/rknpu") || any_match(root + "/sys/bus/platform/drivers/RKNPU") ||
             exists(root + "/sys/module/rknpu")) {
    info.set_npu_backend("rknpu");
  } else {
    info.set_npu_backend("none");
  }
  info.set_npu_core_count(npu_cores(info.soc()));
  info.set_driver_version(first_line(read_file(root + "/sys/module/rknpu/version")));
  info.set_runtime_version(runtime_library_version());
  info.set_server_version(server_version());
  info.set_gpu(exists(root + "/dev/mali0") ? "mali" : "none");
  info.set_cpu(cpu_model(read_file(root + "/proc/cpuinfo")));
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  info.set_cpu_count(cpus > 0 ? static_cast<uint32_t>(cpus) : 0);
  info.set_protocol_version(kProtocolVersion);
  return info;
}

}  // namespace orknn::server
