// How the blocked drivers split an output over threads (kernels/cpu/optimized/blocking.h
// choose_output_blocks): blocks cover the output in whole tiles within the cache limits; one
// thread gets the largest blocks; more threads get at most 4 tasks each and a split the cost
// model finds no slower than the largest blocks; the layers that scaled worst on two threads
// (7x7 and 14x14 pixels, which re-gathered their im2col block in up to 8 row blocks, or ran 9
// equal tasks) now pack B at most once per thread and share out evenly.
#include <algorithm>
#include <random>

#include "core/cpu_caches.h"
#include "optimized/blocking.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::kernels::cpu::optimized;

struct Tiling {
  size_t mr, nr;
  BlockLimits limits;
};

// The tiles and limits of the drivers: float32 (6x16 AVX2 on Zen4 caches, 8x8 NEON on
// Cortex-A76 caches), int16 pairs, VNNI dot products, and the matrix products' (A per task).
std::vector<Tiling> tilings() {
  return {{6, 16, float_convolution_limits({32 * 1024, 1024 * 1024}, 6, 16)},
          {8, 8, float_convolution_limits({64 * 1024, 512 * 1024}, 8, 8)},
          {6, 16, kInt16ConvolutionLimits},
          {8, 32, BlockLimits{256, 144, 192, 288, 64}},
          {6, 16, kFloatMatrixLimits},
          {4, 8, kInt16MatrixLimits}};
}

OutputBlocks largest_blocks(size_t rows, size_t columns, size_t independent, const Tiling& t) {
  return choose_output_blocks(rows, columns, independent, 1, t.mr, t.nr, t.limits);
}

void check_split(size_t rows, size_t columns, size_t independent, size_t threads, const Tiling& t) {
  const OutputBlocks blocks =
      choose_output_blocks(rows, columns, independent, threads, t.mr, t.nr, t.limits);
  const OutputBlocks largest = largest_blocks(rows, columns, independent, t);
  // Whole tiles, covering the output with no empty block.
  assert_int_equal(blocks.row_block % t.mr, 0);
  assert_int_equal(blocks.column_block % t.nr, 0);
  assert_true(blocks.row_blocks * blocks.row_block >= rows);
  assert_true((blocks.row_blocks - 1) * blocks.row_block < rows);
  assert_true(blocks.column_blocks * blocks.column_block >= columns);
  assert_true((blocks.column_blocks - 1) * blocks.column_block < columns);
  // Within the cache limits (the largest blocks are).
  assert_true(blocks.row_block <= largest.row_block);
  assert_true(blocks.column_block <= largest.column_block);
  assert_true(largest.column_block <= std::max(t.limits.column_block, t.nr));
  if (threads == 1) {
    assert_int_equal(blocks.row_blocks, largest.row_blocks);
    assert_int_equal(blocks.column_blocks, largest.column_blocks);
    return;
  }
  const size_t tasks = block_task_count(independent, blocks);
  assert_true(tasks <= std::max(4 * threads, block_task_count(independent, largest) + threads - 1));
  assert_true(
      modelled_split_time(rows, columns, independent, threads, t.mr, t.nr, t.limits, blocks) <=
      modelled_split_time(rows, columns, independent, threads, t.mr, t.nr, t.limits, largest));
  // Asking again gives the same split (answers are remembered per thread).
  const OutputBlocks again =
      choose_output_blocks(rows, columns, independent, threads, t.mr, t.nr, t.limits);
  assert_int_equal(again.row_block, blocks.row_block);
  assert_int_equal(again.column_block, blocks.column_block);
}

void test_random_shapes(void**) {
  std::mt19937 random(7);
  auto size = [&](size_t most) {
    // Tile edges (1, 5-7, 15-17, 31-33) as often as arbitrary sizes.
    static const size_t kEdges[] = {1, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 49, 196};
    return random() % 2 ? kEdges[random() % 14] : 1 + random() % most;
  };
  for (int repeat = 0; repeat < 3000; ++repeat) {
    const std::vector<Tiling> all = tilings();
    const Tiling& t = all[random() % all.size()];
    const size_t rows = size(3000);
    const size_t columns = size(30000);
    const size_t independent = 1 + random() % 3;
    for (size_t threads : {1u, 2u, 3u, 4u, 8u}) check_split(rows, columns, independent, threads, t);
  }
}

void test_empty_output_has_no_tasks(void**) {
  const Tiling t = tilings()[0];
  for (size_t threads : {1u, 2u}) {
    assert_int_equal(
        block_task_count(1, choose_output_blocks(0, 49, 1, threads, t.mr, t.nr, t.limits)), 0);
    assert_int_equal(
        block_task_count(1, choose_output_blocks(512, 0, 1, threads, t.mr, t.nr, t.limits)), 0);
  }
}

// The layers that scaled worst on two threads (per-task thread CPU time traced in resnet18 and
// mobilenet_v2, docs/cpu-kernels.md "Two threads, session 5").
void test_small_feature_maps_on_two_threads(void**) {
  for (const Tiling& t : tilings()) {
    // 512 channels over 7x7 pixels (resnet18's last stage): 8 row blocks, each gathering the
    // same B, before; now one gather per thread (or per row block the limits need).
    OutputBlocks blocks = choose_output_blocks(512, 49, 1, 2, t.mr, t.nr, t.limits);
    assert_true(blocks.row_blocks <= std::max<size_t>(2, largest_blocks(512, 49, 1, t).row_blocks));
    // The model's time is within 15% of half the one-thread time: the tasks share out evenly
    // (9 equal tasks of 256 x 196 ran 5 on one thread, 4 on the other), as far as whole tiles
    // allow (196 columns are 7 panels of 32).
    for (size_t rows : {160u, 256u, 384u, 960u}) {
      for (size_t columns : {49u, 196u, 784u}) {
        blocks = choose_output_blocks(rows, columns, 1, 2, t.mr, t.nr, t.limits);
        const size_t two = modelled_split_time(rows, columns, 1, 2, t.mr, t.nr, t.limits, blocks);
        const size_t one = modelled_split_time(rows, columns, 1, 1, t.mr, t.nr, t.limits,
                                               largest_blocks(rows, columns, 1, t));
        assert_true(two * 20 <= one * 23);
      }
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_shapes),
      cmocka_unit_test(test_empty_output_has_no_tasks),
      cmocka_unit_test(test_small_feature_maps_on_two_threads),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
