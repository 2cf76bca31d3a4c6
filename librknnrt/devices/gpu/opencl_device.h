// The process-wide OpenCL device the GPU device runs on: found once (the first platform with a
// GPU, else the first platform with any device, which is how PoCL shows up in CI), with its
// context and the two built programs (float and half storage) shared by every rknn context.
//
// Thread-safe: programs are built under a lock; everything else is immutable after open().
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "devices/gpu/opencl_library.h"

namespace orknn::devices::gpu {

class OpenClDevice {
 public:
  ~OpenClDevice();
  OpenClDevice(const OpenClDevice&) = delete;
  OpenClDevice& operator=(const OpenClDevice&) = delete;

  // The device of this process, found on first call; the error says why there is none (no ICD
  // loader, no platform, ORKNN_GPU=off, ...). The answer never changes within a process.
  static Result<std::shared_ptr<OpenClDevice>> shared();

  const OpenClLibrary& cl() const { return *library_; }
  cl_context context() const { return context_; }
  cl_device_id device() const { return device_; }
  // "pthread-haswell-AMD EPYC (Portable Computing Language, OpenCL 3.0 PoCL ..., driver 3.1)"
  const std::string& description() const { return description_; }
  bool reports_fp16() const { return reports_fp16_; }
  // The work-group width every launch uses along its first axis (1 along the others). One
  // fixed shape means one compiled variant per kernel on drivers that specialise on it (PoCL
  // compiles each kernel per local size, with LLVM, at first launch).
  size_t work_group_width() const { return work_group_width_; }

  // The kernels built for float (half_storage false) or IEEE half tensors: from the disk cache
  // when it holds them (program_cache.h), else compiled and stored there.
  Result<cl_program> program(bool half_storage);
  // How the last program(...) build went: true when it came from the disk cache.
  bool last_build_from_cache() const { return last_build_from_cache_; }

 private:
  OpenClDevice() = default;
  static Result<std::shared_ptr<OpenClDevice>> open();

  const OpenClLibrary* library_ = nullptr;
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  std::string description_;
  std::string device_key_;
  bool reports_fp16_ = false;
  size_t work_group_width_ = 1;

  std::mutex program_mutex_;
  cl_program programs_[2] = {nullptr, nullptr};
  bool last_build_from_cache_ = false;
};

}  // namespace orknn::devices::gpu
