// What the preloaded fake NPU kernel saw, for tests to check the protocol. The test finds the
// query with dlsym(RTLD_DEFAULT, kFakeNpuCountersSymbol), so it does not link the fake itself;
// a missing symbol means the test runs without the preload.
#pragma once

#include <stdint.h>

struct OrknnFakeNpuCounters {
  int resets;
  int submits;
  int old_mem_creates;
  int wide_mem_creates;
  uint32_t last_core_mask;
  uint32_t cores_run;              // mask of the cores that executed tasks
  int prime_exports;               // DRM_IOCTL_PRIME_HANDLE_TO_FD that succeeded
  int prime_imports;               // PRIME_FD_TO_HANDLE / misc MEM_CREATE imports that succeeded
  int live_bos;                    // BOs alive now
  uint32_t last_mem_create_flags;  // rknpu: flags of the last MEM_CREATE
  int mem_syncs;                   // rknpu MEM_SYNC, rocket PREP_BO and FINI_BO that succeeded
};

// extern "C" OrknnFakeNpuCounters orknn_fake_npu_counters(void);
#define ORKNN_FAKE_NPU_COUNTERS_SYMBOL "orknn_fake_npu_counters"
typedef struct OrknnFakeNpuCounters (*OrknnFakeNpuCountersQuery)(void);
