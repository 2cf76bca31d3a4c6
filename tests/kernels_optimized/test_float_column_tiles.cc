// The avx2 table's float_column_tiles (x86/avx2_gemm_tiles.cc: one-column float tiles, up to
// four row panels per call) against its own float_tile run on each tile alone, bit for bit: the
// column tiles must keep float_tile's order of additions (C or the bias first, then every depth
// step by one FMA), which the one-row Gemm path and the depth chunking rely on. Random panels
// of every row count 1..6 (in turn, so each count meets each panel position), 1-4 panels per
// call, depths 1-300, B read with a stride
// (in place) or packed, accumulating into C or starting from row and column biases, with and
// without an activation (a leaky one too). Each A panel ends at a guard page (PROT_NONE), so a
// read past it (the last depth step loads through a mask) faults. On a CPU without AVX2 and FMA:
// SKIPPED.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <sys/mman.h>
#include <unistd.h>
#endif

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

#if defined(__x86_64__)

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

bool avx2_available() {
  return testing::avx2_available_or_skip("avx2 column tiles");
}

struct Case {
  size_t depth = 0;
  size_t b_stride = 0;
  bool accumulate = false;
  bool with_activation = false;
  std::vector<float> b;
  std::vector<std::unique_ptr<GuardedFloats>> a;  // one panel each (depth x 6), guarded
  std::vector<std::vector<float>> c;              // per panel, 6 rows of c_stride
  std::vector<std::vector<float>> row_bias;       // per panel, 6
  std::vector<float> column_bias;
  std::vector<size_t> rows;
  optimized::FloatActivation activation{};
};

constexpr size_t kRows = 6;
constexpr size_t kCStride = 5;

// Panel p of the case has 1 + (first_rows + p) % 6 real rows.
Case random_case(std::mt19937& engine, size_t panels, size_t depth, size_t first_rows) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  Case t;
  t.depth = depth;
  t.b_stride = engine() % 2 ? 16 : 37;
  t.accumulate = engine() % 3 == 0;
  t.with_activation = engine() % 2 == 0;
  t.activation = {-0.5f, 1.5f, engine() % 2 == 0, 0.125f};
  t.b.resize(depth * t.b_stride);
  for (float& x : t.b) x = value(engine);
  t.column_bias = {value(engine)};
  for (size_t p = 0; p < panels; ++p) {
    t.a.push_back(std::make_unique<GuardedFloats>(depth * kRows));
    for (size_t i = 0; i < depth * kRows; ++i) t.a.back()->data()[i] = value(engine);
    t.c.emplace_back(kRows * kCStride);
    for (float& x : t.c.back()) x = value(engine);
    t.row_bias.emplace_back(kRows);
    for (float& x : t.row_bias.back()) x = value(engine);
    t.rows.push_back(1 + (first_rows + p) % kRows);
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

// How many panels of `seed`'s cases differ from float_tile in any bit (c is compared whole:
// nothing past a tile's rows or its one column may be written).
size_t mismatches(uint32_t seed) {
  const optimized::MicroKernels& table = optimized::avx2_micro_kernels();
  std::mt19937 engine(seed);
  size_t failures = 0;
  size_t case_index = 0;  // 24 cases per seed: every row count at every panel position
  for (size_t panels = 1; panels <= optimized::kFloatColumnTileGroup; ++panels) {
    for (size_t depth : {size_t{1}, size_t{2}, size_t{3}, size_t{17}, size_t{256}, size_t{300}}) {
      Case t = random_case(engine, panels, depth, case_index++);
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
          std::printf("mismatch: %zu panels, depth %zu, panel %zu of %zu rows, accumulate %d\n",
                      panels, depth, p, t.rows[p], t.accumulate ? 1 : 0);
        }
      }
    }
  }
  return failures;
}

void test_table(void**) {
  if (!avx2_available()) return;
  assert_non_null(optimized::avx2_micro_kernels().float_column_tiles);
  assert_int_equal(optimized::avx2_micro_kernels().float_rows, kRows);
}

void test_column_tiles_are_float_tile_bits(void**) {
  if (!avx2_available()) return;
  for (uint32_t seed : {1u, 2u, 3u, 4u}) assert_int_equal(mismatches(seed), 0);
}

#else

void test_table(void**) {
  std::printf("SKIPPED avx2 column tiles: not an x86-64 build\n");
}
void test_column_tiles_are_float_tile_bits(void**) {}

#endif

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_column_tiles_are_float_tile_bits),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
