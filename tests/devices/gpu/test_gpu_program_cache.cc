// The on-disk program cache: a second build of the same program loads the stored binary, a
// damaged file is rebuilt, another device key does not share the file, and a second process
// (a second rknn_init after a restart) finds the kernels built by the first.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "devices/gpu/gpu_test_support.h"
#include "devices/gpu/opencl_device.h"
#include "devices/gpu/program_cache.h"

// cmocka after the standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

extern char** environ;

using namespace orknn;
using namespace orknn::devices::gpu;

namespace {

const char* self_path = nullptr;

std::string make_temporary_directory() {
  char pattern[] = "/tmp/orknn-gpu-cache-XXXXXX";
  const char* made = mkdtemp(pattern);
  assert_non_null(made);
  return made;
}

void remove_directory(const std::string& path) {
  const std::string command = "rm -rf '" + path + "'";
  assert_int_equal(std::system(command.c_str()), 0);
}

bool file_exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

ProgramRequest tiny_request(const OpenClDevice& device, const std::string& directory) {
  ProgramRequest request;
  request.library = &device.cl();
  request.context = device.context();
  request.device = device.device();
  request.device_key = "test device";
  request.source = "__kernel void fill(__global float* x) { x[get_global_id(0)] = 1.0f; }";
  request.options = "-cl-std=CL1.2";
  request.cache_directory = directory;
  return request;
}

BuiltProgram build_ok(const ProgramRequest& request) {
  Result<BuiltProgram> built = build_program(request);
  if (!built.ok()) fail_msg("build_program: %s", built.status().message().c_str());
  request.library->ReleaseProgram(built.value().program);
  return built.value();
}

void test_second_build_comes_from_the_cache(void**) {
  if (!testing::gpu_available()) skip();
  std::shared_ptr<OpenClDevice> device = OpenClDevice::shared().value();
  const std::string directory = make_temporary_directory() + "/nested/cl";
  const ProgramRequest request = tiny_request(*device, directory);

  const BuiltProgram first = build_ok(request);
  assert_false(first.from_cache);
  assert_true(file_exists(first.cache_file));
  const BuiltProgram second = build_ok(request);
  assert_true(second.from_cache);
  assert_string_equal(second.cache_file.c_str(), first.cache_file.c_str());

  // A damaged file is not trusted: rebuilt from source and rewritten.
  { std::ofstream(first.cache_file, std::ios::trunc) << "not a program binary"; }
  assert_false(build_ok(request).from_cache);
  assert_true(build_ok(request).from_cache);

  // Another driver (device key) or other build options never read this binary.
  ProgramRequest other_driver = request;
  other_driver.device_key = "test device, driver 2";
  const BuiltProgram other = build_ok(other_driver);
  assert_false(other.from_cache);
  assert_string_not_equal(other.cache_file.c_str(), first.cache_file.c_str());

  // No directory: nothing cached, nothing written.
  ProgramRequest uncached = request;
  uncached.cache_directory.clear();
  const BuiltProgram built = build_ok(uncached);
  assert_false(built.from_cache);
  assert_true(built.cache_file.empty());
  remove_directory(directory.substr(0, directory.size() - std::strlen("/nested/cl")));
}

// Runs this program with --child in a fresh process (a restarted application) and returns
// its exit status: 1 when the runtime's float program came from the disk cache, 0 when it
// was compiled, anything else on failure.
int run_child(const std::string& cache_directory) {
  setenv("ORKNN_GPU_CACHE_DIR", cache_directory.c_str(), 1);
  char child_flag[] = "--child";
  char* arguments[] = {const_cast<char*>(self_path), child_flag, nullptr};
  pid_t child = 0;
  assert_int_equal(posix_spawn(&child, self_path, nullptr, nullptr, arguments, environ), 0);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

void test_second_process_loads_the_runtime_kernels(void**) {
  if (!testing::gpu_available()) skip();
  const std::string directory = make_temporary_directory();
  assert_int_equal(run_child(directory), 0);
  assert_int_equal(run_child(directory), 1);
  remove_directory(directory);
}

int child_main() {
  Result<std::shared_ptr<OpenClDevice>> device = OpenClDevice::shared();
  if (!device.ok()) return 2;
  Result<cl_program> program = device.value()->program(false);
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", program.status().message().c_str());
    return 3;
  }
  return device.value()->last_build_from_cache() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  self_path = argv[0];
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return child_main();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_second_build_comes_from_the_cache),
      cmocka_unit_test(test_second_process_loads_the_runtime_kernels),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
