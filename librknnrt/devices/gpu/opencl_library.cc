#include "devices/gpu/opencl_library.h"

#include <dlfcn.h>

namespace orknn::devices::gpu {
namespace {

Result<const OpenClLibrary*> load_once() {
  // libOpenCL.so.1 is the ICD loader's soname; the unversioned name covers vendor installs
  // (Mali driver packages on boards) that ship only that.
  void* handle = nullptr;
  std::string errors;
  for (const char* name : {"libOpenCL.so.1", "libOpenCL.so"}) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
    const char* error = dlerror();
    errors += str_cat(errors.empty() ? "" : "; ", error ? error : name);
  }
  if (!handle) {
    return make_error(StatusCode::kDeviceUnavailable, "no OpenCL ICD loader (", errors, ")");
  }
  // Never dlclose: kernels and buffers of live contexts point into the implementation.
  static OpenClLibrary library;
  bool missing = false;
  std::string missing_names;
  auto resolve = [&](auto& pointer, const char* symbol) {
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(dlsym(handle, symbol));
    if (!pointer) {
      missing = true;
      missing_names += str_cat(missing_names.empty() ? "" : ", ", symbol);
    }
  };
  resolve(library.GetPlatformIDs, "clGetPlatformIDs");
  resolve(library.GetPlatformInfo, "clGetPlatformInfo");
  resolve(library.GetDeviceIDs, "clGetDeviceIDs");
  resolve(library.GetDeviceInfo, "clGetDeviceInfo");
  resolve(library.CreateContext, "clCreateContext");
  resolve(library.ReleaseContext, "clReleaseContext");
  resolve(library.CreateCommandQueue, "clCreateCommandQueue");
  resolve(library.ReleaseCommandQueue, "clReleaseCommandQueue");
  resolve(library.CreateBuffer, "clCreateBuffer");
  resolve(library.ReleaseMemObject, "clReleaseMemObject");
  resolve(library.CreateProgramWithSource, "clCreateProgramWithSource");
  resolve(library.CreateProgramWithBinary, "clCreateProgramWithBinary");
  resolve(library.BuildProgram, "clBuildProgram");
  resolve(library.GetProgramBuildInfo, "clGetProgramBuildInfo");
  resolve(library.GetProgramInfo, "clGetProgramInfo");
  resolve(library.ReleaseProgram, "clReleaseProgram");
  resolve(library.CreateKernel, "clCreateKernel");
  resolve(library.ReleaseKernel, "clReleaseKernel");
  resolve(library.SetKernelArg, "clSetKernelArg");
  resolve(library.EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  resolve(library.EnqueueWriteBuffer, "clEnqueueWriteBuffer");
  resolve(library.EnqueueReadBuffer, "clEnqueueReadBuffer");
  resolve(library.EnqueueCopyBuffer, "clEnqueueCopyBuffer");
  resolve(library.Finish, "clFinish");
  resolve(library.GetEventProfilingInfo, "clGetEventProfilingInfo");
  resolve(library.ReleaseEvent, "clReleaseEvent");
  if (missing) {
    return make_error(StatusCode::kDeviceUnavailable,
                      "the OpenCL library lacks OpenCL 1.2 entry points: ", missing_names);
  }
  return &library;
}

}  // namespace

Result<const OpenClLibrary*> OpenClLibrary::load() {
  static const Result<const OpenClLibrary*> loaded = load_once();
  return loaded;
}

std::string opencl_error_name(cl_int code) {
  const char* name = "unknown OpenCL error";
  switch (code) {
    case CL_DEVICE_NOT_FOUND:
      name = "CL_DEVICE_NOT_FOUND";
      break;
    case CL_DEVICE_NOT_AVAILABLE:
      name = "CL_DEVICE_NOT_AVAILABLE";
      break;
    case CL_COMPILER_NOT_AVAILABLE:
      name = "CL_COMPILER_NOT_AVAILABLE";
      break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
      name = "CL_MEM_OBJECT_ALLOCATION_FAILURE";
      break;
    case CL_OUT_OF_RESOURCES:
      name = "CL_OUT_OF_RESOURCES";
      break;
    case CL_OUT_OF_HOST_MEMORY:
      name = "CL_OUT_OF_HOST_MEMORY";
      break;
    case CL_BUILD_PROGRAM_FAILURE:
      name = "CL_BUILD_PROGRAM_FAILURE";
      break;
    case CL_INVALID_VALUE:
      name = "CL_INVALID_VALUE";
      break;
    case CL_INVALID_PLATFORM:
      name = "CL_INVALID_PLATFORM";
      break;
    case CL_INVALID_DEVICE:
      name = "CL_INVALID_DEVICE";
      break;
    case CL_INVALID_BINARY:
      name = "CL_INVALID_BINARY";
      break;
    case CL_INVALID_BUILD_OPTIONS:
      name = "CL_INVALID_BUILD_OPTIONS";
      break;
    case CL_INVALID_PROGRAM_EXECUTABLE:
      name = "CL_INVALID_PROGRAM_EXECUTABLE";
      break;
    case CL_INVALID_KERNEL_NAME:
      name = "CL_INVALID_KERNEL_NAME";
      break;
    case CL_INVALID_KERNEL_ARGS:
      name = "CL_INVALID_KERNEL_ARGS";
      break;
    case CL_INVALID_ARG_INDEX:
      name = "CL_INVALID_ARG_INDEX";
      break;
    case CL_INVALID_ARG_SIZE:
      name = "CL_INVALID_ARG_SIZE";
      break;
    case CL_INVALID_WORK_GROUP_SIZE:
      name = "CL_INVALID_WORK_GROUP_SIZE";
      break;
    case CL_INVALID_BUFFER_SIZE:
      name = "CL_INVALID_BUFFER_SIZE";
      break;
    case CL_INVALID_MEM_OBJECT:
      name = "CL_INVALID_MEM_OBJECT";
      break;
    case -1001:
      name = "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform is installed)";
      break;
    default:
      break;
  }
  return str_cat(name, " (", code, ")");
}

}  // namespace orknn::devices::gpu
