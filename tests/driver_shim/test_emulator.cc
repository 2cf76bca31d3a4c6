// The emulated backend on hand-written register programs: the PC chain, per-task completion and
// cycles, parallel cores, and every misuse answered with a clear error instead of a crash.
#include <cstring>
#include <string>
#include <vector>

#include "driver_shim/npu.h"
#include "driver_shim/npu_registers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::driver_shim;
using namespace orknn::driver_shim::npu_reg;

// A stand-alone DPU table task copying a 1x1x4 int8 cube through `table` (x -> table[x + 128]).
std::vector<uint64_t> table_task(uint32_t source, uint32_t destination, int8_t offset) {
  std::vector<uint64_t> words = {command(kTargetDpu, kDpuDataCubeWidth, 3),
                                 command(kTargetDpu, kDpuDataCubeHeight, 0),
                                 command(kTargetDpu, kDpuDataCubeChannel, 15),
                                 command(kTargetDpu, kDpuDstBaseAddr, destination),
                                 command(kTargetDpu, kDpuDstSurfStride, 64),
                                 command(kTargetDpu, kDpuEwCfg, 1),
                                 command(kTargetDpu, kDpuLutCfg, 1),
                                 command(kTargetDpu, kDpuLutAccessCfg, 0)};
  for (int code = -128; code < 128; ++code) {
    words.push_back(command(kTargetDpu, kDpuLutAccessData,
                            static_cast<uint8_t>(static_cast<int8_t>(code + offset))));
  }
  words.push_back(command(kTargetDpuRdma, kRdmaSrcBaseAddr, source));
  return words;
}

// Writes tasks chained by their tails into `regcmd` and returns their NpuTask entries.
std::vector<NpuTask> chain(NpuMemory& regcmd, const std::vector<std::vector<uint64_t>>& tasks) {
  std::vector<NpuTask> entries;
  size_t position = 0;
  std::vector<size_t> starts;
  for (const auto& task : tasks) {
    starts.push_back(position);
    position += (task.size() + kTailWords + 7) / 8 * 8;
  }
  auto* words = reinterpret_cast<uint64_t*>(regcmd.host);
  std::memset(words, 0, position * 8);
  for (size_t t = 0; t < tasks.size(); ++t) {
    std::memcpy(words + starts[t], tasks[t].data(), tasks[t].size() * 8);
    uint64_t* tail = words + starts[t] + tasks[t].size();
    if (t + 1 < tasks.size()) {
      const uint32_t next_count = static_cast<uint32_t>(tasks[t + 1].size() + kTailWords);
      tail[0] =
          command(kTargetPc, kPcBaseAddress, regcmd.npu_address + uint32_t(starts[t + 1] * 8));
      tail[1] = command(kTargetPc, kPcRegisterAmounts, (next_count + 1) / 2 - 1);
    }
    tail[2] = command(kTargetBarrier, 0, 0);
    tail[3] = command(kTargetOpEnable, kPcOperationEnable, kEnableDpu | kEnableDpuRdma);
    entries.push_back({regcmd.npu_address + uint32_t(starts[t] * 8),
                       uint32_t(tasks[t].size() + kTailWords), kEnableDpu | kEnableDpuRdma});
  }
  return entries;
}

void test_chain_runs_every_task(void** state) {
  (void)state;
  auto npu = make_emulated_npu(3);
  assert_true(npu->info().emulated);
  auto regcmd = npu->create_memory(16384);
  auto a = npu->create_memory(64), b = npu->create_memory(64), c = npu->create_memory(64);
  assert_true(regcmd.ok() && a.ok() && b.ok() && c.ok());
  for (int i = 0; i < 4; ++i) a->host[i * 16] = static_cast<uint8_t>(i);
  // a -> b adds 1, b -> c adds 10: the second task runs only if the PC follows the tail.
  NpuJob job;
  job.core_mask = 2;
  job.core_tasks = {chain(*regcmd, {table_task(a->npu_address, b->npu_address, 1),
                                    table_task(b->npu_address, c->npu_address, 10)})};
  auto id = npu->submit(job);
  assert_true(id.ok());
  auto result = npu->wait(*id, 10000);
  if (!result.ok()) fail_msg("%s", result.status().message().c_str());
  assert_int_equal(result->cores_used, 2);
  assert_int_equal(result->task_cycles.size(), 1);
  assert_int_equal(result->task_cycles[0].size(), 2);
  assert_true(result->task_cycles[0][0] > 0 && result->elapsed_ns > 0);
  for (int i = 0; i < 4; ++i) assert_int_equal(c->host[i * 16], i + 11);
  for (NpuMemory* memory : {&*regcmd, &*a, &*b, &*c})
    assert_true(npu->destroy_memory(*memory).ok());
}

void test_misuse_is_reported(void** state) {
  (void)state;
  auto npu = make_emulated_npu(2);
  assert_int_equal(npu->info().core_count, 2);
  // Zero bytes.
  auto empty = npu->create_memory(0);
  assert_int_equal(static_cast<int>(empty.status().code()),
                   static_cast<int>(StatusCode::kInvalidArgument));
  auto regcmd = npu->create_memory(16384);
  auto a = npu->create_memory(64);
  assert_true(regcmd.ok() && a.ok());
  // A core the NPU does not have.
  NpuJob job;
  job.core_mask = 4;
  job.core_tasks = {chain(*regcmd, {table_task(a->npu_address, a->npu_address, 0)})};
  auto refused = npu->submit(job);
  assert_false(refused.ok());
  assert_non_null(std::strstr(refused.status().message().c_str(), "does not have"));
  // Chains that do not match the mask.
  job.core_mask = 3;
  assert_false(npu->submit(job).ok());
  // An address outside every buffer: a DMA error, reported by wait.
  job.core_mask = 1;
  job.core_tasks = {chain(*regcmd, {table_task(a->npu_address, 0x08000000, 0)})};
  auto id = npu->submit(job);
  assert_true(id.ok());
  auto failed = npu->wait(*id, 10000);
  assert_false(failed.ok());
  assert_non_null(std::strstr(failed.status().message().c_str(), "DMA error"));
  // Waiting twice, or for a job never submitted.
  assert_false(npu->wait(*id, 10).ok());
  assert_false(npu->wait(12345, 10).ok());
  // Freeing twice.
  NpuMemory copy = *a;
  assert_true(npu->destroy_memory(*a).ok());
  assert_false(npu->destroy_memory(copy).ok());
  assert_true(npu->reset().ok());
  assert_true(npu->destroy_memory(*regcmd).ok());
  // Backend names.
  auto unknown = open_npu("tpu");
  assert_false(unknown.ok());
  assert_non_null(std::strstr(unknown.status().message().c_str(), "emu"));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chain_runs_every_task),
      cmocka_unit_test(test_misuse_is_reported),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
