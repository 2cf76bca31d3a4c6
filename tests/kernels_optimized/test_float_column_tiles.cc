// Every table's float_column_tiles (one-column float tiles, up to four row panels per call:
// avx2's in x86/avx2_gemm_tiles.cc, neon's in arm/neon_micro_kernels.cc) against the same
// table's float_tile run on each tile alone, bit for bit: the column tiles must keep float_tile's
// order of additions (avx2: C or the bias first, then every depth step by one FMA; neon: the
// steps from 0, then C or the bias), which the one-row Gemm path and the depth chunking rely on.
// Random panels of every row count 1..MR (in turn, so each count meets each panel position), 1-4
// panels per call, depths 1-300, B read with a stride (in place) or packed, accumulating into C
// or starting from row and column biases, with and without an activation (a leaky one too).
// Each A panel ends at a guard page (PROT_NONE), so a read past it (avx2's last depth step loads
// through a mask) faults. Where no table this CPU runs has column tiles (x86-64 without AVX2 and
// FMA, or a build for another architecture): SKIPPED.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/micro_kernels.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
namespace optimized = kernels::cpu::optimized;
using kernels::cpu::KernelVariant;

// `count` floats that end where an inaccessible page starts.
class GuardedFloats {
 public:
  explicit GuardedFloats(size_t count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_pages = (count * sizeof(float) + page - 1) / page;
    bytes_ = (data_pages + 1) * page;
    void* memory = mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(memory != MAP_FAILED);
    base_ = static_cast<uint8_t*>(memory);
    assert_int_equal(mprotect(base_, data_pages * page, PROT_READ | PROT_WRITE), 0);
    data_ = reinterpret_cast<float*>(base_ + data_pages * page) - count;
  }
  ~GuardedFloats() { munmap(base_, bytes_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() const { return data_; }

 private:
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
  float* data_ = nullptr;
};

// The tables this build and CPU run that have column tiles.
std::vector<const optimized::MicroKernels*> column_tables() {
  std::vector<const optimized::MicroKernels*> tables;
  for (const optimized::MicroKernels* table : testing::optimized_micro_kernels()) {
    if (table->float_column_tiles) tables.push_back(table);
  }
  if (tables.empty()) {
    std::printf("SKIPPED column tiles: no table this CPU runs has them (detected: '%s')\n",
                kernels::cpu::detected_cpu_features());
  }
  return tables;
}

struct Case {
  size_t depth = 0;
  size_t b_stride = 0;
  bool accumulate = false;
  bool with_activation = false;
  std::vector<float> b;
  size_t mr = 0;                                  // rows of an A panel
  std::vector<std::unique_ptr<GuardedFloats>> a;  // one panel each (depth x mr), guarded
  std::vector<std::vector<float>> c;              // per panel, mr rows of c_stride
  std::vector<std::vector<float>> row_bias;       // per panel, mr
  std::vector<float> column_bias;
  std::vector<size_t> rows;
  optimized::FloatActivation activation{};
};

constexpr size_t kCStride = 5;

// Panel p of the case has 1 + (first_rows + p) % mr real rows.
Case random_case(std::mt19937& engine, size_t mr, size_t panels, size_t depth, size_t first_rows) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  Case t;
  t.mr = mr;
  t.depth = depth;
  t.b_stride = engine() % 2 ? 16 : 37;
  t.accumulate = engine() % 3 == 0;
  t.with_activation = engine() % 2 == 0;
  t.activation = {-0.5f, 1.5f, engine() % 2 == 0, 0.125f};
  t.b.resize(depth * t.b_stride);
  for (float& x : t.b) x = value(engine);
  t.column_bias = {value(engine)};
  for (size_t p = 0; p < panels; ++p) {
    t.a.push_back(std::make_unique<GuardedFloats>(depth * mr));
    for (size_t i = 0; i < depth * mr; ++i) t.a.back()->data()[i] = value(engine);
    t.c.emplace_back(mr * kCStride);
    for (float& x : t.c.back()) x = value(engine);
    t.row_bias.emplace_back(mr);
    for (float& x : t.row_bias.back()) x = value(engine);
    t.rows.push_back(1 + (first_rows + p) % mr);
  }
  return t;
}

optimized::FloatTile tile_of(const Case& t, size_t p, float* c) {
  optimized::FloatTile tile{};
  tile.rows = t.rows[p];
  tile.columns = 1;
  tile.depth = t.depth;
  tile.a = t.a[p]->data();
  tile.b = t.b.data();
  tile.b_stride = t.b_stride;
  tile.c = c;
  tile.c_stride = kCStride;
  tile.accumulate = t.accumulate;
  tile.row_bias = t.accumulate ? nullptr : t.row_bias[p].data();
  tile.column_bias = t.accumulate ? nullptr : t.column_bias.data();
  tile.activation = t.with_activation ? &t.activation : nullptr;
  return tile;
}

// How many panels of `seed`'s cases differ from `table`'s float_tile in any bit (c is compared
// whole: nothing past a tile's rows or its one column may be written).
size_t mismatches(const optimized::MicroKernels& table, uint32_t seed) {
  std::mt19937 engine(seed);
  size_t failures = 0;
  // 24 cases per seed, the row counts in turn from a start that moves 6 a seed: over the four
  // seeds, every count up to MR = 8 meets every panel position (the fourth's 6 cases a seed).
  size_t case_index = 6 * seed;
  for (size_t panels = 1; panels <= optimized::kFloatColumnTileGroup; ++panels) {
    for (size_t depth : {size_t{1}, size_t{2}, size_t{3}, size_t{17}, size_t{256}, size_t{300}}) {
      Case t = random_case(engine, table.float_rows, panels, depth, case_index++);
      std::vector<std::vector<float>> expected = t.c, actual = t.c;
      std::vector<optimized::FloatTile> tiles;
      for (size_t p = 0; p < panels; ++p) {
        table.float_tile(tile_of(t, p, expected[p].data()));
        tiles.push_back(tile_of(t, p, actual[p].data()));
      }
      table.float_column_tiles(tiles.data(), tiles.size());
      for (size_t p = 0; p < panels; ++p) {
        if (std::memcmp(expected[p].data(), actual[p].data(), expected[p].size() * sizeof(float))) {
          ++failures;
          std::printf("%s mismatch: %zu panels, depth %zu, panel %zu of %zu rows, accumulate %d\n",
                      table.name, panels, depth, p, t.rows[p], t.accumulate ? 1 : 0);
        }
      }
    }
  }
  return failures;
}

// x86-64 with AVX2 and FMA has avx2's column tiles, every AArch64 CPU neon's.
void test_tables(void**) {
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    assert_non_null(optimized::avx2_micro_kernels().float_column_tiles);
  }
#elif defined(__aarch64__)
  assert_non_null(optimized::neon_micro_kernels().float_column_tiles);
#endif
  for (const optimized::MicroKernels* table : column_tables()) {
    assert_in_range(table->float_rows, 1, 8);  // the row counts each case cycles through
  }
}

void test_column_tiles_are_float_tile_bits(void**) {
  for (const optimized::MicroKernels* table : column_tables()) {
    for (uint32_t seed : {1u, 2u, 3u, 4u}) assert_int_equal(mismatches(*table, seed), 0);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tables),
      cmocka_unit_test(test_column_tiles_are_float_tile_bits),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
