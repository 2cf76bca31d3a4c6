#include "devices/gpu/program_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/logging.h"

namespace orknn::devices::gpu {
namespace {

constexpr char kFileMagic[8] = {'O', 'R', 'K', 'N', 'N', 'C', 'L', '1'};

uint64_t fnv1a(uint64_t hash, const std::string& text) {
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash ^ 0xff;  // separates the fields hashed one after another
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// mkdir -p; failures show up when the file is written.
void make_directories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = slash == std::string::npos ? path : path.substr(0, slash);
    mkdir(prefix.c_str(), 0755);
    if (slash == std::string::npos) break;
  }
}

std::string build_log(const ProgramRequest& request, cl_program program) {
  size_t size = 0;
  request.library->GetProgramBuildInfo(program, request.device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                                       &size);
  std::string log(size, '\0');
  if (size > 0) {
    request.library->GetProgramBuildInfo(program, request.device, CL_PROGRAM_BUILD_LOG, size,
                                         log.data(), nullptr);
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log.size() > 2000 ? log.substr(0, 2000) + "..." : log;
}

Result<cl_program> build_from_binary(const ProgramRequest& request,
                                     const std::vector<uint8_t>& binary) {
  const OpenClLibrary& cl = *request.library;
  const unsigned char* data = binary.data();
  const size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS, error = CL_SUCCESS;
  cl_program program = cl.CreateProgramWithBinary(request.context, 1, &request.device, &size, &data,
                                                  &binary_status, &error);
  if (error != CL_SUCCESS || binary_status != CL_SUCCESS) {
    if (program) cl.ReleaseProgram(program);
    return internal_failure("cached program binary refused: ",
                            opencl_error_name(error != CL_SUCCESS ? error : binary_status));
  }
  error = cl.BuildProgram(program, 1, &request.device, request.options.c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    cl.ReleaseProgram(program);
    return internal_failure("cached program binary does not build: ", opencl_error_name(error));
  }
  return program;
}

Result<cl_program> build_from_source(const ProgramRequest& request) {
  const OpenClLibrary& cl = *request.library;
  const char* text = request.source.c_str();
  const size_t length = request.source.size();
  cl_int error = CL_SUCCESS;
  cl_program program = cl.CreateProgramWithSource(request.context, 1, &text, &length, &error);
  if (error != CL_SUCCESS) {
    return make_error(StatusCode::kDeviceUnavailable,
                      "clCreateProgramWithSource failed: ", opencl_error_name(error));
  }
  error = cl.BuildProgram(program, 1, &request.device, request.options.c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    const std::string log = build_log(request, program);
    cl.ReleaseProgram(program);
    return make_error(StatusCode::kDeviceUnavailable, "the OpenCL kernels do not build (",
                      opencl_error_name(error), ", options '", request.options, "'): ", log);
  }
  return program;
}

std::vector<uint8_t> program_binary(const ProgramRequest& request, cl_program program) {
  size_t size = 0;
  if (request.library->GetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size,
                                      nullptr) != CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::vector<uint8_t> binary(size);
  unsigned char* data = binary.data();
  if (request.library->GetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  return binary;
}

// The binary stored for `key`, or empty when there is none (or it is for another key).
std::vector<uint8_t> read_cache_file(const std::string& path, uint64_t key) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  const size_t header = sizeof(kFileMagic) + sizeof(key);
  if (bytes.size() <= header || std::memcmp(bytes.data(), kFileMagic, sizeof(kFileMagic)) != 0) {
    return {};
  }
  uint64_t stored_key = 0;
  std::memcpy(&stored_key, bytes.data() + sizeof(kFileMagic), sizeof(stored_key));
  if (stored_key != key) return {};
  return std::vector<uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
}

void write_cache_file(const std::string& directory, const std::string& path, uint64_t key,
                      const std::vector<uint8_t>& binary) {
  make_directories(directory);
  const std::string temporary = str_cat(path, ".", getpid(), ".tmp");
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(kFileMagic, sizeof(kFileMagic));
    file.write(reinterpret_cast<const char*>(&key), sizeof(key));
    file.write(reinterpret_cast<const char*>(binary.data()),
               static_cast<std::streamsize>(binary.size()));
    if (!file) {
      log_info("GPU: cannot write the program cache file ", temporary, ": ", std::strerror(errno));
      std::remove(temporary.c_str());
      return;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) std::remove(temporary.c_str());
}

}  // namespace

std::string program_cache_directory() {
  if (const char* configured = std::getenv("ORKNN_GPU_CACHE_DIR")) {
    const std::string value = configured;
    return value == "off" ? std::string() : value;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return str_cat(xdg, "/openrknn/cl");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return str_cat(home, "/.cache/openrknn/cl");
  }
  return {};
}

Result<BuiltProgram> build_program(const ProgramRequest& request) {
  BuiltProgram built;
  const uint64_t key = fnv1a(
      fnv1a(fnv1a(0xcbf29ce484222325ull, request.device_key), request.options), request.source);
  if (!request.cache_directory.empty()) {
    built.cache_file = str_cat(request.cache_directory, "/", hex(key), ".bin");
    const std::vector<uint8_t> binary = read_cache_file(built.cache_file, key);
    if (!binary.empty()) {
      Result<cl_program> cached = build_from_binary(request, binary);
      if (cached.ok()) {
        built.program = cached.value();
        built.from_cache = true;
        return built;
      }
      log_info("GPU: ", cached.status().message(), "; rebuilding ", built.cache_file);
    }
  }
  ORKNN_ASSIGN_OR_RETURN(built.program, build_from_source(request));
  if (!built.cache_file.empty()) {
    const std::vector<uint8_t> binary = program_binary(request, built.program);
    if (!binary.empty()) write_cache_file(request.cache_directory, built.cache_file, key, binary);
  }
  return built;
}

}  // namespace orknn::devices::gpu
