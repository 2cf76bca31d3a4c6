// The big-core selection of core/cpu_topology.h on fake sysfs and procfs trees: RK3588 and
// RK3576 capacities, uniform CPUs, cpuinfo part numbers when capacities are absent, an
// affinity mask that excludes some big cores, and unreadable or malformed files.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/cpu_caches.h"
#include "core/cpu_topology.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

namespace {

using orknn::fastest_cpus;

// A temporary directory tree, removed (files and directories) at the end.
class FakeRoot {
 public:
  FakeRoot() {
    char name[] = "/tmp/orknn_topology_XXXXXX";
    root_ = mkdtemp(name) ? name : "";
  }
  ~FakeRoot() {
    for (auto it = files_.rbegin(); it != files_.rend(); ++it) std::remove(it->c_str());
    for (auto it = directories_.rbegin(); it != directories_.rend(); ++it) rmdir(it->c_str());
    rmdir(root_.c_str());
  }
  const std::string& path() const { return root_; }

  void write(const std::string& relative, const std::string& text) {
    std::string directory = root_;
    size_t start = 0;
    for (size_t slash; (slash = relative.find('/', start)) != std::string::npos;
         start = slash + 1) {
      directory += "/" + relative.substr(start, slash - start);
      if (mkdir(directory.c_str(), 0755) == 0) directories_.push_back(directory);
    }
    const std::string file = root_ + "/" + relative;
    std::ofstream(file) << text;
    files_.push_back(file);
  }

  void capacities(const std::vector<int>& values) {
    for (size_t cpu = 0; cpu < values.size(); ++cpu) {
      write("devices/system/cpu/cpu" + std::to_string(cpu) + "/cpu_capacity",
            std::to_string(values[cpu]) + "\n");
    }
  }

 private:
  std::string root_;
  std::vector<std::string> directories_;
  std::vector<std::string> files_;
};

const std::vector<int> kEight{0, 1, 2, 3, 4, 5, 6, 7};

void expect(const std::vector<int>& actual, const std::vector<int>& expected, const char* what) {
  if (actual != expected) {
    std::string text;
    for (int cpu : actual) text += std::to_string(cpu) + " ";
    fail_msg("%s: chose CPUs [%s]", what, text.c_str());
  }
}

void test_rk3588_capacities(void**) {
  FakeRoot root;
  root.capacities({414, 414, 414, 414, 1024, 1024, 1024, 1024});
  expect(fastest_cpus(kEight, root.path(), root.path()), {4, 5, 6, 7}, "RK3588");
  // The process may not run on CPUs 5 and 6: the big cores it may use.
  expect(fastest_cpus({0, 1, 4, 7}, root.path(), root.path()), {4, 7}, "masked RK3588");
  // No big core allowed: the fastest of the allowed ones are all alike.
  expect(fastest_cpus({0, 2}, root.path(), root.path()), {0, 2}, "little cores only");
}

void test_uniform_or_unreadable(void**) {
  FakeRoot uniform;
  uniform.capacities({1024, 1024, 1024, 1024});
  expect(fastest_cpus({0, 1, 2, 3}, uniform.path(), uniform.path()), {0, 1, 2, 3}, "uniform");
  FakeRoot empty;
  expect(fastest_cpus(kEight, empty.path(), empty.path()), kEight, "nothing readable");
  FakeRoot malformed;
  malformed.write("devices/system/cpu/cpu0/cpu_capacity", "big\n");
  malformed.write("devices/system/cpu/cpu1/cpu_capacity", "-5\n");
  malformed.write("devices/system/cpu/cpu2/cpu_capacity", "\n");
  expect(fastest_cpus({0, 1, 2}, malformed.path(), malformed.path()), {0, 1, 2}, "malformed");
}

void test_cpuinfo_parts(void**) {
  // RK3576 without cpu_capacity: Cortex-A53 (0xd03) on 0-3, Cortex-A72 (0xd08) on 4-7.
  FakeRoot root;
  std::string cpuinfo;
  for (int cpu = 0; cpu < 8; ++cpu) {
    cpuinfo += "processor\t: " + std::to_string(cpu) +
               "\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\nCPU part\t: " +
               (cpu < 4 ? "0xd03" : "0xd08") + "\n\n";
  }
  root.write("cpuinfo", cpuinfo);
  expect(fastest_cpus(kEight, root.path(), root.path()), {4, 5, 6, 7}, "RK3576 cpuinfo");
  // Capacities, when present, win over part numbers.
  root.capacities({1024, 1024, 1024, 1024, 500, 500, 500, 500});
  expect(fastest_cpus(kEight, root.path(), root.path()), {0, 1, 2, 3}, "capacity first");
}

void test_this_machine(void**) {
  const std::vector<int> allowed = orknn::allowed_cpus();
  assert_false(allowed.empty());
  const std::vector<int>& preferred = orknn::preferred_cpus();
  assert_false(preferred.empty());
  for (int cpu : preferred) {
    bool found = false;
    for (int candidate : allowed) found = found || candidate == cpu;
    assert_true(found);
  }
}

// core/cpu_caches.h: the L1 data and L2 sizes of one CPU from its cache/index* directories.
void write_cache(FakeRoot& root, int cpu, int index, const char* level, const char* type,
                 const char* size) {
  const std::string directory =
      "devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index) + "/";
  root.write(directory + "level", std::string(level) + "\n");
  root.write(directory + "type", std::string(type) + "\n");
  root.write(directory + "size", std::string(size) + "\n");
}

void test_cache_sizes(void**) {
  FakeRoot root;
  // Zen4: L1i and L1d 32K, L2 1024K, L3 32768K.
  write_cache(root, 0, 0, "1", "Data", "32K");
  write_cache(root, 0, 1, "1", "Instruction", "32K");
  write_cache(root, 0, 2, "2", "Unified", "1024K");
  write_cache(root, 0, 3, "3", "Unified", "32768K");
  orknn::CpuCacheSizes sizes = orknn::read_cpu_cache_sizes(0, root.path());
  assert_int_equal(sizes.level1_data, 32 * 1024);
  assert_int_equal(sizes.level2, 1024 * 1024);
  // A Cortex-A76 (CPU 4) with sizes in M and a missing L2 size on CPU 1 (the fallback).
  write_cache(root, 4, 0, "1", "Data", "64K");
  write_cache(root, 4, 1, "2", "Unified", "1M");
  sizes = orknn::read_cpu_cache_sizes(4, root.path());
  assert_int_equal(sizes.level1_data, 64 * 1024);
  assert_int_equal(sizes.level2, 1024 * 1024);
  write_cache(root, 1, 0, "1", "Data", "48K");
  write_cache(root, 1, 1, "2", "Unified", "bogus");
  sizes = orknn::read_cpu_cache_sizes(1, root.path());
  assert_int_equal(sizes.level1_data, 48 * 1024);
  assert_int_equal(sizes.level2, orknn::kFallbackCacheSizes.level2);
  // Nothing readable at all, and an implausible size.
  sizes = orknn::read_cpu_cache_sizes(7, root.path());
  assert_int_equal(sizes.level1_data, orknn::kFallbackCacheSizes.level1_data);
  assert_int_equal(sizes.level2, orknn::kFallbackCacheSizes.level2);
  write_cache(root, 2, 0, "1", "Data", "1");
  assert_int_equal(orknn::read_cpu_cache_sizes(2, root.path()).level1_data,
                   orknn::kFallbackCacheSizes.level1_data);
  // This machine: whatever it reports is within the plausible range.
  const orknn::CpuCacheSizes& here = orknn::cpu_cache_sizes();
  assert_true(here.level1_data >= 4096 && here.level2 >= 4096);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rk3588_capacities), cmocka_unit_test(test_uniform_or_unreadable),
      cmocka_unit_test(test_cpuinfo_parts),     cmocka_unit_test(test_this_machine),
      cmocka_unit_test(test_cache_sizes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
