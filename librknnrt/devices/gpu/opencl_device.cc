#include "devices/gpu/opencl_device.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/logging.h"
#include "devices/gpu/program_cache.h"
#include "launch_description.h"

namespace orknn::devices::gpu {
namespace {

// A string property through clGetPlatformInfo or clGetDeviceInfo (`query`), empty on failure.
template <typename Object, typename Property, typename Query>
std::string info_text(Query query, Object object, Property property) {
  size_t size = 0;
  if (query(object, property, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  query(object, property, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// The first device of `type` on any platform.
bool find_device(const OpenClLibrary& cl, const std::vector<cl_platform_id>& platforms,
                 cl_device_type type, cl_platform_id* out_platform, cl_device_id* out_device) {
  for (cl_platform_id platform : platforms) {
    cl_device_id device = nullptr;
    cl_uint count = 0;
    if (cl.GetDeviceIDs(platform, type, 1, &device, &count) == CL_SUCCESS && count > 0) {
      *out_platform = platform;
      *out_device = device;
      return true;
    }
  }
  return false;
}

}  // namespace

OpenClDevice::~OpenClDevice() {
  for (cl_program program : programs_) {
    if (program) library_->ReleaseProgram(program);
  }
  if (context_) library_->ReleaseContext(context_);
}

Result<std::shared_ptr<OpenClDevice>> OpenClDevice::open() {
  if (const char* setting = std::getenv("ORKNN_GPU"); setting && std::strcmp(setting, "off") == 0) {
    return make_error(StatusCode::kDeviceUnavailable, "the GPU is disabled by ORKNN_GPU=off");
  }
  ORKNN_ASSIGN_OR_RETURN(const OpenClLibrary* library, OpenClLibrary::load());
  const OpenClLibrary& cl = *library;
  cl_uint platform_count = 0;
  cl_int error = cl.GetPlatformIDs(0, nullptr, &platform_count);
  if (error != CL_SUCCESS || platform_count == 0) {
    return make_error(StatusCode::kDeviceUnavailable, "the OpenCL ICD loader finds no platform (",
                      error != CL_SUCCESS ? opencl_error_name(error) : std::string("0 platforms"),
                      "; check OCL_ICD_VENDORS and /etc/OpenCL/vendors)");
  }
  std::vector<cl_platform_id> platforms(platform_count);
  error = cl.GetPlatformIDs(platform_count, platforms.data(), nullptr);
  if (error != CL_SUCCESS) {
    return make_error(StatusCode::kDeviceUnavailable,
                      "clGetPlatformIDs failed: ", opencl_error_name(error));
  }
  std::shared_ptr<OpenClDevice> opened(new OpenClDevice());
  opened->library_ = library;
  if (!find_device(cl, platforms, CL_DEVICE_TYPE_GPU, &opened->platform_, &opened->device_) &&
      !find_device(cl, platforms, CL_DEVICE_TYPE_ALL, &opened->platform_, &opened->device_)) {
    return make_error(StatusCode::kDeviceUnavailable, "none of the ", platform_count,
                      " OpenCL platforms has a device");
  }
  opened->context_ = cl.CreateContext(nullptr, 1, &opened->device_, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) {
    opened->context_ = nullptr;
    return make_error(StatusCode::kDeviceUnavailable,
                      "clCreateContext failed: ", opencl_error_name(error));
  }
  const std::string platform_name =
      info_text(cl.GetPlatformInfo, opened->platform_, CL_PLATFORM_NAME);
  const std::string platform_version =
      info_text(cl.GetPlatformInfo, opened->platform_, CL_PLATFORM_VERSION);
  const std::string device_name = info_text(cl.GetDeviceInfo, opened->device_, CL_DEVICE_NAME);
  const std::string driver_version =
      info_text(cl.GetDeviceInfo, opened->device_, CL_DRIVER_VERSION);
  const std::string device_version =
      info_text(cl.GetDeviceInfo, opened->device_, CL_DEVICE_VERSION);
  opened->reports_fp16_ =
      info_text(cl.GetDeviceInfo, opened->device_, CL_DEVICE_EXTENSIONS).find("cl_khr_fp16") !=
      std::string::npos;
  // 32 work items: whole SIMD groups on Mali and desktop GPUs, and four AVX2 vectors on PoCL.
  size_t max_group = 1;
  cl.GetDeviceInfo(opened->device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(max_group), &max_group,
                   nullptr);
  opened->work_group_width_ = std::max<size_t>(1, std::min<size_t>(32, max_group));
  opened->description_ = str_cat(device_name, " (", platform_name, ", ", device_version,
                                 ", driver ", driver_version, ")");
  opened->device_key_ = str_cat(platform_name, "|", platform_version, "|", device_name, "|",
                                device_version, "|", driver_version);
  return opened;
}

Result<std::shared_ptr<OpenClDevice>> OpenClDevice::shared() {
  // Never destroyed: at process exit the OpenCL implementation may already be torn down.
  static const auto* device = new Result<std::shared_ptr<OpenClDevice>>([] {
    Result<std::shared_ptr<OpenClDevice>> opened = open();
    if (opened.ok()) {
      log_info("GPU: OpenCL device ", opened.value()->description(),
               opened.value()->reports_fp16() ? ", cl_khr_fp16" : "");
    } else {
      log_warning("GPU: no GPU device, the GPU's share of the work runs on the CPU: ",
                  opened.status().message());
    }
    return opened;
  }());
  return *device;
}

Result<cl_program> OpenClDevice::program(bool half_storage) {
  std::lock_guard<std::mutex> lock(program_mutex_);
  cl_program& slot = programs_[half_storage ? 1 : 0];
  if (slot) return slot;
  ProgramRequest request;
  request.library = library_;
  request.context = context_;
  request.device = device_;
  request.device_key = device_key_;
  request.source = kernels::gpu::kernel_source();
  request.options = half_storage ? "-cl-std=CL1.2 -DORKNN_STORAGE_HALF=1" : "-cl-std=CL1.2";
  request.cache_directory = program_cache_directory();
  const auto start = std::chrono::steady_clock::now();
  ORKNN_ASSIGN_OR_RETURN(BuiltProgram built, build_program(request));
  const auto milliseconds = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  log_info("GPU: ", half_storage ? "half" : "float", " program ",
           built.from_cache ? "loaded from " : "compiled", built.from_cache ? built.cache_file : "",
           " in ", milliseconds, " ms");
  last_build_from_cache_ = built.from_cache;
  slot = built.program;
  return slot;
}

}  // namespace orknn::devices::gpu
