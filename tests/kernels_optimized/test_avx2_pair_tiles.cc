// The AVX2 VPMADDUBSW dot-product table (x86/avx2_dot_product_tiles.cc, avx2_pair_kernels())
// called directly, against plain C++ exact products, bit for bit: the tile on random packed
// panels (the layout of optimized/dot_product_kernels.h) for every real row count 1..MR and
// column count 1..NR, 1-70 depth groups, accumulating or not, with A's byte pairs "safe" as the
// convolution driver packs them (opposite signs, or |w0| + |w1| <= 128, the limits included:
// -128 with 0, 127 with 1, 64 with 64), B's bytes over all of 0..255 (255 often), and random
// corrections (Int8PairCorrection: several per row, the same group repeated, first_group > 0,
// weights up to +-127 alone in their pair). The check must see a tile that drops the corrections
// (it is run against one). Also the activation packer and the tap packer against the portable
// ones (the tap packer on random pieces over planes against guard pages, and three broken
// packers the check must see), and the requantizing tile (when the table has one) against the
// plain tile plus the constants and portable_micro_kernels().requantize_row. On a CPU without
// AVX2 and FMA: SKIPPED.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/dot_product_kernels.h"
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

bool avx2_available() {
  return testing::avx2_available_or_skip("avx2 pair tiles");
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : engine_(seed) {}
  int32_t integer(int32_t low, int32_t high) {
    return std::uniform_int_distribution<int32_t>(low, high)(engine_);
  }
  bool chance(int32_t one_in) { return integer(0, one_in - 1) == 0; }

 private:
  std::mt19937 engine_;
};

// A byte pair VPMADDUBSW sums exactly for every unsigned input: opposite signs (or a zero), or
// |w0| + |w1| <= 128; a fifth of the pairs are at the limits.
void safe_pair(Generator& random, int8_t* pair) {
  static const int8_t kLimits[][2] = {{-128, 0},   {0, -128},   {127, 1},   {1, 127},
                                      {64, 64},    {-64, -64},  {-127, -1}, {-1, -127},
                                      {-128, 127}, {127, -128}, {100, 28},  {-28, -100},
                                      {127, -127}, {0, 127},    {0, 0},     {-127, 127}};
  if (random.chance(5)) {
    const auto& limit = kLimits[random.integer(0, 15)];
    pair[0] = limit[0];
    pair[1] = limit[1];
    return;
  }
  const int32_t first = random.integer(-128, 127);
  int32_t second;
  if (random.chance(2)) {  // opposite sign (or zero)
    second = first >= 0 ? random.integer(-128, 0) : random.integer(0, 127);
  } else {  // same sign, |first| + |second| <= 128
    const int32_t room = 128 - (first < 0 ? -first : first);
    second = first >= 0 ? random.integer(0, room < 127 ? room : 127) : random.integer(-room, 0);
  }
  if (random.chance(2)) {
    pair[0] = static_cast<int8_t>(first);
    pair[1] = static_cast<int8_t>(second);
  } else {
    pair[0] = static_cast<int8_t>(second);
    pair[1] = static_cast<int8_t>(first);
  }
}

// An activation byte as packed (x + 128 as an unsigned byte): a third are 255 or 0.
int8_t activation_byte(Generator& random) {
  const int32_t kind = random.integer(0, 5);
  if (kind == 0) return static_cast<int8_t>(-1);  // 255
  if (kind == 1) return 0;
  return static_cast<int8_t>(random.integer(-128, 127));
}

struct TileCase {
  size_t rows, columns, depth_groups, c_stride;
  bool accumulate;
  size_t first_group;
  std::vector<int8_t> a, b;
  std::vector<optimized::Int8PairCorrection> corrections;
  std::vector<int32_t> c;  // initial contents (rows x c_stride, plus a guard row)
};

TileCase random_case(Generator& random, size_t mr, size_t nr, size_t rows, size_t columns,
                     size_t depth_groups, bool accumulate) {
  TileCase t;
  t.rows = rows;
  t.columns = columns;
  t.depth_groups = depth_groups;
  t.c_stride = columns + static_cast<size_t>(random.integer(0, 9));
  t.accumulate = accumulate;
  t.first_group = random.chance(3) ? 0 : static_cast<size_t>(random.integer(1, 5000));
  // Exact sizes, so a read past a panel shows under the sanitizers. A's padding rows and B's
  // padding columns are random too: nothing of them may reach the stored sums.
  t.a.resize(depth_groups * mr * 4);
  for (size_t i = 0; i < t.a.size(); i += 2) safe_pair(random, &t.a[i]);
  t.b.resize(depth_groups * nr * 4);
  for (int8_t& byte : t.b) byte = activation_byte(random);
  // 0-3 corrections per real row on average, some in the same group as another (of the same
  // row or not), and some on A's padding rows (rows..mr-1, which the tile must ignore), sorted
  // by group, as index_panel_corrections gives a tile's.
  const size_t count = static_cast<size_t>(random.integer(0, static_cast<int32_t>(3 * rows)));
  for (size_t i = 0; i < count; ++i) {
    optimized::Int8PairCorrection correction{};
    if (!t.corrections.empty() && random.chance(3)) {
      correction.group = t.corrections[random.integer(0, int32_t(t.corrections.size()) - 1)].group;
    } else {
      correction.group = static_cast<uint32_t>(
          t.first_group + static_cast<size_t>(random.integer(0, int32_t(depth_groups) - 1)));
    }
    const bool padding_row = rows < mr && random.chance(6);
    correction.row = static_cast<uint32_t>(
        padding_row ? random.integer(static_cast<int32_t>(rows), static_cast<int32_t>(mr) - 1)
                    : random.integer(0, static_cast<int32_t>(rows) - 1));
    // Each weight up to +-127 and alone in its pair (the other byte 0), or the pair unused.
    for (size_t pair = 0; pair < 2; ++pair) {
      const int32_t kind = random.integer(0, 4);
      const int32_t weight =
          random.chance(4) ? (random.chance(2) ? 127 : -127) : random.integer(-127, 127);
      correction.weights[2 * pair] = kind == 0 ? static_cast<int8_t>(weight) : 0;
      correction.weights[2 * pair + 1] = kind == 1 ? static_cast<int8_t>(weight) : 0;
      if (kind >= 2 && random.chance(2))
        correction.weights[2 * pair + random.integer(0, 1)] = static_cast<int8_t>(weight);
    }
    t.corrections.push_back(correction);
  }
  std::stable_sort(t.corrections.begin(), t.corrections.end(),
                   [](const auto& x, const auto& y) { return x.group < y.group; });
  t.c.resize((rows + 1) * t.c_stride);
  for (int32_t& value : t.c) value = random.integer(INT32_MIN, INT32_MAX);
  return t;
}

// The exact product (plus c when accumulating, plus the corrections), modulo 2^32; entries
// outside the real rows and columns keep their values.
std::vector<int32_t> expected_c(const TileCase& t, size_t mr, size_t nr) {
  std::vector<int32_t> c = t.c;
  for (size_t r = 0; r < t.rows; ++r) {
    for (size_t j = 0; j < t.columns; ++j) {
      int64_t sum = 0;
      for (size_t g = 0; g < t.depth_groups; ++g) {
        for (size_t d = 0; d < 4; ++d) {
          sum += int64_t{t.a[(g * mr + r) * 4 + d]} *
                 int64_t{static_cast<uint8_t>(t.b[(g * nr + j) * 4 + d])};
        }
      }
      for (const auto& correction : t.corrections) {
        if (correction.row != r) continue;
        const size_t g = correction.group - t.first_group;
        for (size_t d = 0; d < 4; ++d) {
          sum += int64_t{correction.weights[d]} *
                 int64_t{static_cast<uint8_t>(t.b[(g * nr + j) * 4 + d])};
        }
      }
      uint32_t value = static_cast<uint32_t>(static_cast<uint64_t>(sum));
      if (t.accumulate) value += static_cast<uint32_t>(c[r * t.c_stride + j]);
      c[r * t.c_stride + j] = static_cast<int32_t>(value);
    }
  }
  return c;
}

optimized::Int8DotTile tile_of(const TileCase& t, int32_t* c) {
  optimized::Int8DotTile tile{t.rows,     t.columns, t.depth_groups, t.a.data(),
                              t.b.data(), c,         t.c_stride,     t.accumulate};
  tile.corrections = t.corrections.data();
  tile.correction_count = t.corrections.size();
  tile.first_group = t.first_group;
  return tile;
}

// A tile that forgets the corrections: the check below must reject it.
void tile_without_corrections(const optimized::Int8DotTile& tile) {
  optimized::Int8DotTile copy = tile;
  copy.correction_count = 0;
  optimized::avx2_pair_kernels().tile_activations_in_b(copy);
}

// Runs `tile_function` over every rows x columns and a spread of depths; returns how many cases
// differed from the exact product.
size_t mismatches(void (*tile_function)(const optimized::Int8DotTile&), uint32_t seed,
                  bool report) {
  const optimized::DotProductKernels& table = optimized::avx2_pair_kernels();
  const size_t mr = table.rows, nr = table.columns;
  Generator random(seed);
  size_t failures = 0;
  for (size_t rows = 1; rows <= mr; ++rows) {
    for (size_t columns = 1; columns <= nr; ++columns) {
      for (size_t depth : {size_t{1}, size_t{2}, size_t{3}, size_t{17},
                           static_cast<size_t>(random.integer(4, 70)), size_t{70}}) {
        for (bool accumulate : {false, true}) {
          const TileCase t = random_case(random, mr, nr, rows, columns, depth, accumulate);
          std::vector<int32_t> c = t.c;
          tile_function(tile_of(t, c.data()));
          const std::vector<int32_t> expected = expected_c(t, mr, nr);
          if (c != expected) {
            ++failures;
            if (report && failures <= 5) {
              std::printf(
                  "mismatch: rows %zu columns %zu depth groups %zu accumulate %d "
                  "corrections %zu first group %zu\n",
                  rows, columns, depth, accumulate ? 1 : 0, t.corrections.size(), t.first_group);
            }
          }
        }
      }
    }
  }
  return failures;
}

void test_table(void**) {
  if (!avx2_available()) return;
  const optimized::DotProductKernels& table = optimized::avx2_pair_kernels();
  assert_string_equal(table.name, "avx2");
  assert_int_equal(table.group_depth, 4);
  assert_int_equal(table.activation_offset, 128);
  assert_true(table.pair_sums_limited);
  assert_true(table.tile_activations_in_b != nullptr);
  assert_true(table.tile_activations_in_a == nullptr);
  assert_true(table.tile_direct == nullptr && table.interleave_quad_row == nullptr);
  assert_int_equal(table.direct_columns, 0);
  // The driver's blocks: 144 rows, 192 columns.
  assert_int_equal(144 % table.rows, 0);
  assert_int_equal(192 % table.columns, 0);
}

void test_tile(void**) {
  if (!avx2_available()) return;
  for (uint32_t seed : {1u, 2u, 3u}) {
    assert_int_equal(mismatches(optimized::avx2_pair_kernels().tile_activations_in_b, seed, true),
                     0);
  }
}

// The check itself: a tile without the corrections must fail it (in most cases: those
// without corrections, or whose corrections meet zero activations, still pass).
void test_check_sees_missing_corrections(void**) {
  if (!avx2_available()) return;
  assert_true(mismatches(tile_without_corrections, 1, false) > 100);
}

void test_packer(void**) {
  if (!avx2_available()) return;
  const optimized::DotProductKernels& table = optimized::avx2_pair_kernels();
  const size_t nr = table.columns;
  Generator random(11);
  for (size_t columns = 1; columns <= 200; ++columns) {
    for (int8_t flip : {int8_t{0}, int8_t{-128}}) {
      const size_t panels = (columns + nr - 1) / nr;
      const size_t panel_stride = nr * 4 * static_cast<size_t>(random.integer(1, 3));
      std::vector<std::vector<int8_t>> rows(4, std::vector<int8_t>(columns));
      for (auto& row : rows) {
        for (int8_t& byte : row) byte = static_cast<int8_t>(random.integer(-128, 127));
      }
      // One panel more than the columns need, which neither may write.
      std::vector<int8_t> expected((panels + 1) * panel_stride, 0x5A), actual = expected;
      optimized::Int8GroupRows group{};
      for (size_t d = 0; d < 4; ++d) group.rows[d] = rows[d].data();
      group.columns = columns;
      group.group_depth = 4;
      group.panel_columns = nr;
      group.panel_stride = panel_stride;
      group.flip = flip;
      group.out = expected.data();
      optimized::portable_pack_activation_groups(group);
      group.out = actual.data();
      table.pack_activation_groups(group);
      if (actual != expected) std::printf("packer mismatch: columns %zu\n", columns);
      assert_true(actual == expected);
    }
  }
}

// Channel planes for the tap packer's test, each placed against an inaccessible page (at the end
// of its accessible page, or at the start of the next), so that a read past a plane faults.
class GuardedPlanes {
 public:
  GuardedPlanes() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    // Per plane: guard, page, page, guard.
    bytes_ = kPlanes * 4 * page_;
    void* memory = mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(memory != MAP_FAILED);
    base_ = static_cast<int8_t*>(memory);
    for (size_t p = 0; p < kPlanes; ++p) {
      assert_int_equal(mprotect(base_ + (4 * p + 1) * page_, 2 * page_, PROT_READ | PROT_WRITE), 0);
    }
  }
  ~GuardedPlanes() { munmap(base_, bytes_); }
  GuardedPlanes(const GuardedPlanes&) = delete;
  GuardedPlanes& operator=(const GuardedPlanes&) = delete;

  // Plane p of `size` bytes (at most a page): ending at a guard page, or starting right after one.
  int8_t* plane(size_t p, size_t size, bool at_end) const {
    return at_end ? base_ + (4 * p + 3) * page_ - size : base_ + (4 * p + 1) * page_;
  }
  static constexpr size_t kPlanes = 4;

 private:
  size_t page_ = 0;
  size_t bytes_ = 0;
  int8_t* base_ = nullptr;
};

using TapPacker = void (*)(const optimized::Int8TapGroup&);

// The table's tap packer (or `packer`, built on it) against portable_pack_activation_taps on
// random pieces (dot_product_kernels.h Int8TapPiece): strides 1 and 2, 1-48 columns and a few
// around 64, planes of 1-300 bytes against guard pages, 0-3 pieces per row and panel with lanes
// in one or two runs (the runs' first to last lane read inside the plane, touching its ends
// often), padding codes and both flips. Returns the cases that differ.
size_t tap_packer_mismatches(TapPacker packer, uint32_t seed, size_t trials) {
  const optimized::DotProductKernels& table = optimized::avx2_pair_kernels();
  const size_t nr = table.columns;
  GuardedPlanes guarded;
  Generator random(seed);
  size_t failures = 0;
  for (size_t trial = 0; trial < trials; ++trial) {
    const size_t stride = static_cast<size_t>(random.integer(1, 2));
    static const size_t kWideColumns[] = {63, 64, 65, 80};
    const size_t columns = random.chance(5) ? kWideColumns[random.integer(0, 3)]
                                            : static_cast<size_t>(random.integer(1, 48));
    const size_t panels = (columns + nr - 1) / nr;
    const size_t panel_stride = nr * 4 * static_cast<size_t>(random.integer(1, 3));
    optimized::Int8TapGroup group{};
    group.columns = columns;
    group.group_depth = 4;
    group.panel_columns = nr;
    group.panel_stride = panel_stride;
    group.stride = stride;
    group.pad = static_cast<int8_t>(random.integer(-128, 127));
    group.flip = random.chance(4) ? int8_t{0} : int8_t{-128};
    std::vector<optimized::Int8TapPiece> pieces;
    std::vector<std::vector<uint32_t>> first_piece(4);
    size_t plane_sizes[4];
    for (size_t d = 0; d < 4; ++d) {
      const size_t size =
          static_cast<size_t>(random.chance(3) ? random.integer(1, 40) : random.integer(1, 300));
      plane_sizes[d] = size;
      int8_t* plane = guarded.plane(d, size, random.chance(2));
      for (size_t i = 0; i < size; ++i) plane[i] = static_cast<int8_t>(random.integer(-128, 127));
      group.planes[d] = plane;
    }
    for (size_t d = 0; d < 4; ++d) {
      const auto size = static_cast<int32_t>(plane_sizes[d]);
      for (size_t q = 0; q < panels; ++q) {
        first_piece[d].push_back(static_cast<uint32_t>(pieces.size()));
        const size_t real = std::min(nr, columns - q * nr);
        const int32_t count = random.integer(0, 3);
        for (int32_t i = 0; i < count; ++i) {
          // A run of lanes (one time in four all of them), sometimes a second run after a gap.
          int32_t first = 0, last = static_cast<int32_t>(real) - 1;
          if (!random.chance(4)) {
            first = random.integer(0, last);
            last = random.integer(first, last);
          }
          uint32_t lanes = ((2u << last) - 1u) & ~((1u << first) - 1u);
          if (random.chance(4) && last + 2 < static_cast<int32_t>(real)) {
            const int32_t second = random.integer(last + 2, static_cast<int32_t>(real) - 1);
            const int32_t second_last = random.integer(second, static_cast<int32_t>(real) - 1);
            lanes |= ((2u << second_last) - 1u) & ~((1u << second) - 1u);
            last = second_last;
          }
          // The bytes from the first lane's to the last lane's must fit the plane.
          const int32_t span = (last - first) * static_cast<int32_t>(stride) + 1;
          if (span > size) continue;
          const int32_t kind = random.integer(0, 3);
          const int32_t start = kind == 0   ? 0
                                : kind == 1 ? size - span
                                            : random.integer(0, size - span);
          const auto source = start - first * static_cast<int32_t>(stride);
          uint64_t bytes = 0;
          for (int32_t lane = 0; lane < 32; ++lane) {
            if (lanes >> lane & 1) bytes |= uint64_t{1} << (lane * static_cast<int32_t>(stride));
          }
          pieces.push_back(optimized::Int8TapPiece{source, lanes, bytes});
        }
      }
      first_piece[d].push_back(static_cast<uint32_t>(pieces.size()));
    }
    group.pieces = pieces.data();
    for (size_t d = 0; d < 4; ++d) group.first_piece[d] = first_piece[d].data();
    // One panel more than the columns need, which neither may write.
    std::vector<int8_t> expected((panels + 1) * panel_stride, 0x5A), actual = expected;
    group.out = expected.data();
    optimized::portable_pack_activation_taps(group);
    group.out = actual.data();
    packer(group);
    if (actual != expected) {
      if (failures < 3) {
        std::printf("tap packer mismatch: trial %zu stride %zu columns %zu pieces %zu\n", trial,
                    stride, columns, pieces.size());
      }
      ++failures;
    }
  }
  return failures;
}

void table_tap_packer(const optimized::Int8TapGroup& group) {
  optimized::avx2_pair_kernels().pack_activation_taps(group);
}

// Deliberately broken packers, built on the table's, which the check must see: padding with
// the wrong code; each row's first piece of a panel dropped; columns past the block padded
// rather than zero.
void tap_packer_wrong_padding(const optimized::Int8TapGroup& group) {
  optimized::Int8TapGroup broken = group;
  broken.pad = static_cast<int8_t>(group.pad + 1);
  table_tap_packer(broken);
}
void tap_packer_dropping_pieces(const optimized::Int8TapGroup& group) {
  const size_t panels = (group.columns + group.panel_columns - 1) / group.panel_columns;
  std::vector<optimized::Int8TapPiece> pieces;
  std::vector<std::vector<uint32_t>> first_piece(4);
  for (size_t d = 0; d < 4; ++d) {
    for (size_t q = 0; q < panels; ++q) {
      first_piece[d].push_back(static_cast<uint32_t>(pieces.size()));
      for (uint32_t p = group.first_piece[d][q] + 1; p < group.first_piece[d][q + 1]; ++p) {
        pieces.push_back(group.pieces[p]);
      }
    }
    first_piece[d].push_back(static_cast<uint32_t>(pieces.size()));
  }
  optimized::Int8TapGroup broken = group;
  broken.pieces = pieces.data();
  for (size_t d = 0; d < 4; ++d) broken.first_piece[d] = first_piece[d].data();
  table_tap_packer(broken);
}
void tap_packer_padding_past_columns(const optimized::Int8TapGroup& group) {
  optimized::Int8TapGroup broken = group;
  broken.columns =
      (group.columns + group.panel_columns - 1) / group.panel_columns * group.panel_columns;
  table_tap_packer(broken);
}

void test_tap_packer(void**) {
  if (!avx2_available()) return;
  const optimized::DotProductKernels& table = optimized::avx2_pair_kernels();
  assert_non_null(table.pack_activation_taps);
  assert_int_equal(table.largest_tap_stride, 2);
  assert_int_equal(tap_packer_mismatches(table_tap_packer, 21, 20000), 0);
  assert_true(tap_packer_mismatches(tap_packer_wrong_padding, 22, 400) > 100);
  assert_true(tap_packer_mismatches(tap_packer_dropping_pieces, 23, 400) > 100);
  assert_true(tap_packer_mismatches(tap_packer_padding_past_columns, 24, 400) > 100);
}

// The requantizing tile (if the table has one) against the plain tile, the constants added
// modulo 2^32 and the portable requantization row (small multipliers), on the float path
// (in_float where the sums allow it, float_bounds) and the double path.
void test_requantized_tile(void**) {
  if (!avx2_available()) return;
  const optimized::DotProductKernels& table = optimized::avx2_pair_kernels();
  if (!table.tile_requantized_activations_in_b) {
    std::printf("avx2 pair table: no requantizing tile\n");
    return;
  }
  const size_t mr = table.rows, nr = table.columns;
  Generator random(21);
  size_t cases = 0;
  for (size_t rows = 1; rows <= mr; ++rows) {
    for (size_t columns = 1; columns <= nr; ++columns) {
      for (size_t depth : {size_t{1}, size_t{9}, size_t{70}}) {
        // 0: double, 1: float_bounds, 2: in_float (where the sums allow it), 3: float_bounds on
        // rows with one sum the float path gets wrong: above 2^24 on a tie (261 x 2^16 + 1
        // with m = 2^-17: 130.5 + 2^-17 rounds to 131, the float of the sum gives 130) and
        // below -1.5 x 2^23 / m (m = 0.45: the float sum wraps to the wrong sign).
        for (int mode = 0; mode < 4; ++mode) {
          const bool accumulate = random.chance(2);
          TileCase t = random_case(random, mr, nr, rows, columns, depth, accumulate);
          // Accumulated sums of the size a real chunk leaves (a wrap is not what this tests).
          for (int32_t& value : t.c) value = random.integer(-3000000, 3000000);
          std::vector<int32_t> sums = t.c;
          table.tile_activations_in_b(tile_of(t, sums.data()));
          std::vector<int32_t> constants(mr), bounds(mr);
          std::vector<float> multipliers(mr);
          const bool hard = mode == 3;
          const int32_t zero_point = hard ? -10 : random.integer(-128, 127);
          int32_t minimum = hard ? -128 : random.integer(-128, 0);
          int32_t maximum = hard ? 127 : random.integer(0, 127);
          if (!hard && random.chance(8)) std::swap(minimum, maximum);  // low > high: `maximum`
          bool provable = true;
          for (size_t r = 0; r < mr; ++r) {
            constants[r] = random.integer(-2000000, 2000000);
            // Most rows scaled so that their outputs spread over the int8 range (some
            // saturate); some at a power of two (exact ties, rounded half to even), some at
            // 0.49 (the largest small multiplier: beyond the float path's bound).
            double largest = 1.0;
            for (size_t j = 0; j < columns && r < rows; ++j) {
              const auto sum =
                  static_cast<int32_t>(static_cast<uint32_t>(sums[r * t.c_stride + j]) +
                                       static_cast<uint32_t>(constants[r]));
              largest = std::max(largest, std::abs(static_cast<double>(sum)));
            }
            const int32_t kind = random.integer(0, 9);
            if (kind == 0) {
              multipliers[r] = 0.49f;
            } else if (kind <= 3) {
              multipliers[r] = std::ldexp(1.0f, -random.integer(1, 20));
            } else {
              multipliers[r] = static_cast<float>(150.0 / largest * random.integer(1, 100) / 50.0);
            }
            if (random.chance(2)) multipliers[r] = -multipliers[r];
            if (hard && r < rows) {
              const bool tie = r % 2 == 0;
              // The last real column half of the time (in the second vector past 8 columns).
              const size_t hard_column =
                  random.chance(2) ? columns - 1
                                   : static_cast<size_t>(random.integer(0, int32_t(columns) - 1));
              const uint32_t target = tie ? 261u * 65536u + 1u : 0u - (1u << 25);
              constants[r] = static_cast<int32_t>(
                  target - static_cast<uint32_t>(sums[r * t.c_stride + hard_column]));
              multipliers[r] = tie ? std::ldexp(1.0f, -17) : 0.45f;
            }
            const double m = std::abs(static_cast<double>(multipliers[r]));
            double limit = 16777216.0;
            if (std::floor(2097152.0 / m) < limit) limit = std::floor(2097152.0 / m);
            bounds[r] = static_cast<int32_t>(limit) + 1;
            for (size_t j = 0; j < columns && r < rows; ++j) {
              const int64_t value =
                  int64_t{static_cast<int32_t>(static_cast<uint32_t>(sums[r * t.c_stride + j]) +
                                               static_cast<uint32_t>(constants[r]))};
              if (std::abs(static_cast<double>(value)) > limit) provable = false;
            }
          }
          // Expected bytes: the constant added, then requantize_row.
          const size_t output_stride = columns + static_cast<size_t>(random.integer(0, 5));
          std::vector<int8_t> expected((rows + 1) * output_stride, 0x33);
          std::vector<int8_t> actual = expected;
          for (size_t r = 0; r < rows; ++r) {
            std::vector<int32_t> row(columns);
            for (size_t j = 0; j < columns; ++j) {
              row[j] = static_cast<int32_t>(static_cast<uint32_t>(sums[r * t.c_stride + j]) +
                                            static_cast<uint32_t>(constants[r]));
            }
            optimized::RequantizeRow requantize{};
            requantize.accumulators = row.data();
            requantize.count = columns;
            requantize.multipliers = &multipliers[r];
            requantize.output_zero_point = zero_point;
            requantize.output_minimum = minimum;
            requantize.output_maximum = maximum;
            requantize.output = expected.data() + r * output_stride;
            requantize.small_multipliers = true;
            optimized::portable_micro_kernels().requantize_row(requantize);
          }
          std::vector<uint32_t> float_bounds(bounds.begin(), bounds.end());
          optimized::Int8TileRequantization requantization{};
          requantization.constants = constants.data();
          requantization.multipliers = multipliers.data();
          requantization.output_zero_point = zero_point;
          requantization.output_minimum = minimum;
          requantization.output_maximum = maximum;
          requantization.output = actual.data();
          requantization.output_stride = output_stride;
          requantization.in_float = mode == 2 && provable;
          requantization.float_bounds = mode == 1 || hard ? float_bounds.data() : nullptr;
          std::vector<int32_t> c = t.c;
          table.tile_requantized_activations_in_b(tile_of(t, c.data()), requantization);
          if (actual != expected) {
            std::printf("requantized mismatch: rows %zu columns %zu depth %zu mode %d\n", rows,
                        columns, depth, mode);
          }
          assert_true(actual == expected);
          assert_true(c == t.c);  // c is not written
          ++cases;
        }
      }
    }
  }
  std::printf("avx2 requantizing tile: %zu cases\n", cases);
}

#else

void test_table(void**) {
  std::printf("SKIPPED avx2 pair tiles: not an x86-64 build\n");
}
void test_tile(void**) {}
void test_check_sees_missing_corrections(void**) {}
void test_packer(void**) {}
void test_tap_packer(void**) {}
void test_requantized_tile(void**) {}

#endif

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_tile),
      cmocka_unit_test(test_check_sees_missing_corrections),
      cmocka_unit_test(test_packer),
      cmocka_unit_test(test_tap_packer),
      cmocka_unit_test(test_requantized_tile),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
