// Builds OpenCL programs through an on-disk cache of program binaries, so only the first
// rknn_init on a machine pays for the OpenCL compiler (PoCL compiles with LLVM: seconds).
//
// A cache file is named by a hash of the device key (platform, device and driver versions),
// the build options and the source, and starts with that hash; a file that does not match,
// or a binary the driver refuses, is rebuilt from source and rewritten. Files are written
// to a temporary name and renamed, so concurrent processes never read half a file.
#pragma once

#include <string>

#include "devices/gpu/opencl_library.h"

namespace orknn::devices::gpu {

// ORKNN_GPU_CACHE_DIR if set ("off" or empty disables the cache), else
// $XDG_CACHE_HOME/openrknn/cl, else $HOME/.cache/openrknn/cl; empty when there is none.
std::string program_cache_directory();

struct BuiltProgram {
  cl_program program = nullptr;  // owned by the caller
  bool from_cache = false;
  std::string cache_file;  // empty when the cache is disabled
};

struct ProgramRequest {
  const OpenClLibrary* library = nullptr;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  std::string device_key;  // what makes a binary valid: platform, device and driver versions
  std::string source;
  std::string options;
  std::string cache_directory;  // empty: no cache
};

Result<BuiltProgram> build_program(const ProgramRequest& request);

}  // namespace orknn::devices::gpu
