// An int8 activation as a 256-entry table on the micro-kernels' lookup_int8_row, cut into
// chunks the pool's threads share.
#include <algorithm>
#include <array>

#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// Bytes per task: large enough that a task (about 2 us at the scalar loop's ~1 byte/cycle,
// less with VBMI) outweighs handing it to another thread.
constexpr size_t kLookupChunk = 64 * 1024;

class OptimizedLookupInt8 final : public LookupInt8 {
 public:
  OptimizedLookupInt8(const MicroKernels& kernels, const int8_t* table, size_t count)
      : kernels_(kernels), count_(count) {
    std::copy(table, table + table_.size(), table_.begin());
  }

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const int8_t* input, int8_t* output, ThreadPool& pool) const override {
    const size_t tasks = (count_ + kLookupChunk - 1) / kLookupChunk;
    auto task = [&](size_t index, size_t) {
      const size_t begin = index * kLookupChunk;
      kernels_.lookup_int8_row(table_.data(), input + begin, output + begin,
                               std::min(kLookupChunk, count_ - begin));
    };
    if (tasks == 1) {
      task(0, 0);
      return;
    }
    pool.parallel_for(tasks, task);
  }

 private:
  const MicroKernels& kernels_;
  std::array<int8_t, 256> table_;
  size_t count_;
};

}  // namespace

std::unique_ptr<LookupInt8> make_lookup_int8(const MicroKernels& kernels, const int8_t* table,
                                             int64_t count) {
  if (count <= 0) return nullptr;
  return std::make_unique<OptimizedLookupInt8>(kernels, table, static_cast<size_t>(count));
}

}  // namespace orknn::kernels::cpu::optimized
