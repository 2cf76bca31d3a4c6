// The OpenCL entry points the GPU device uses, loaded with dlopen from the ICD loader
// (libOpenCL.so.1) on first use. Loading at run time rather than linking means librknnrt.so
// starts on a machine without any OpenCL package installed; such a machine simply has no GPU
// device (docs/gpu.md).
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

#include "core/status.h"

namespace orknn::devices::gpu {

struct OpenClLibrary {
  decltype(&::clGetPlatformIDs) GetPlatformIDs = nullptr;
  decltype(&::clGetPlatformInfo) GetPlatformInfo = nullptr;
  decltype(&::clGetDeviceIDs) GetDeviceIDs = nullptr;
  decltype(&::clGetDeviceInfo) GetDeviceInfo = nullptr;
  decltype(&::clCreateContext) CreateContext = nullptr;
  decltype(&::clReleaseContext) ReleaseContext = nullptr;
  decltype(&::clCreateCommandQueue) CreateCommandQueue = nullptr;
  decltype(&::clReleaseCommandQueue) ReleaseCommandQueue = nullptr;
  decltype(&::clCreateBuffer) CreateBuffer = nullptr;
  decltype(&::clReleaseMemObject) ReleaseMemObject = nullptr;
  decltype(&::clCreateProgramWithSource) CreateProgramWithSource = nullptr;
  decltype(&::clCreateProgramWithBinary) CreateProgramWithBinary = nullptr;
  decltype(&::clBuildProgram) BuildProgram = nullptr;
  decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo = nullptr;
  decltype(&::clGetProgramInfo) GetProgramInfo = nullptr;
  decltype(&::clReleaseProgram) ReleaseProgram = nullptr;
  decltype(&::clCreateKernel) CreateKernel = nullptr;
  decltype(&::clReleaseKernel) ReleaseKernel = nullptr;
  decltype(&::clSetKernelArg) SetKernelArg = nullptr;
  decltype(&::clEnqueueNDRangeKernel) EnqueueNDRangeKernel = nullptr;
  decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer = nullptr;
  decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer = nullptr;
  decltype(&::clEnqueueCopyBuffer) EnqueueCopyBuffer = nullptr;
  decltype(&::clFinish) Finish = nullptr;
  decltype(&::clGetEventProfilingInfo) GetEventProfilingInfo = nullptr;
  decltype(&::clReleaseEvent) ReleaseEvent = nullptr;

  // Loads the library once per process; later calls return the same table (or the same error).
  static Result<const OpenClLibrary*> load();
};

// "CL_OUT_OF_RESOURCES (-5)" for messages.
std::string opencl_error_name(cl_int code);

}  // namespace orknn::devices::gpu
