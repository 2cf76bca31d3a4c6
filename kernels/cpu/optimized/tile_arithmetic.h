// What the float32 and int8 GEMM drivers (convolution_gemm.cc, matrix_product.cc) do not share:
// the element types, the packed form (floats, or int16 pairs of int8 offsets), the micro-kernel
// and its tile type. The drivers are templates over one of these two policies, and
// for_each_tile() is their one panel loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optimized/blocking.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

struct FloatArithmetic {
  using Element = float;  // inputs, weights and outputs
  using Bias = float;
  using Packed = float;
  using Tile = FloatTile;
  // Matrix depth per packed step: 1 (floats) or 2 (int16 pairs).
  static constexpr size_t kStepDepth = 1;
  static size_t tile_rows(const MicroKernels& kernels) { return kernels.float_rows; }
  static size_t tile_columns(const MicroKernels& kernels) { return kernels.float_columns; }
  static void set_steps(Tile& tile, size_t steps) { tile.depth = steps; }
  static void run_tile(const MicroKernels& kernels, const Tile& tile) { kernels.float_tile(tile); }
  // The table's tiles for panels of one real column, several row panels per call (null: none).
  static void (*column_tiles(const MicroKernels& kernels))(const Tile*, size_t) {
    return kernels.float_column_tiles;
  }
  static Packed offset(Element value, int32_t) { return value; }
};

// int8 products accumulate sum (x - zx)(w - zw) exactly: the offsets are packed as int16 pairs
// and the tiles write int32 accumulators, requantized afterwards.
struct Int16PairArithmetic {
  using Element = int8_t;
  using Bias = int32_t;
  using Packed = int16_t;
  using Tile = Int16PairTile;
  static constexpr size_t kStepDepth = 2;
  static size_t tile_rows(const MicroKernels& kernels) { return kernels.int16_rows; }
  static size_t tile_columns(const MicroKernels& kernels) { return kernels.int16_columns; }
  static void set_steps(Tile& tile, size_t steps) { tile.depth_pairs = steps; }
  static void run_tile(const MicroKernels& kernels, const Tile& tile) {
    kernels.int16_pair_tile(tile);
  }
  static void (*column_tiles(const MicroKernels&))(const Tile*, size_t) { return nullptr; }
  static Packed offset(Element value, int32_t zero_point) {
    return static_cast<Packed>(value - zero_point);
  }
};

// The rows and columns of one task and how its tiles are walked.
struct TileGrid {
  size_t first_row = 0;
  size_t rows = 0;
  size_t columns = 0;  // from the task's first column
  // Rows per pass over the B panels: the A panels of one pass stay in L2.
  size_t row_block = 0;
  size_t mr = 0;
  size_t nr = 0;
  // false: per row block, per panel, per MR rows (a B panel stays in L1 while the A panels of
  // the block stream from L2). true: per row block, per MR rows, per panel (an A panel stays in
  // L1 while the task's B panels stream from L2, and C is written as MR sequential rows).
  bool panels_inner = false;
};

// The tiles of one panel of one real column over rows [block_row, block_end), up to
// kFloatColumnTileGroup row panels per call of the table's column tiles (see
// MicroKernels::float_column_tiles: several row panels' chains at once, in float_tile's order).
template <typename Arithmetic, typename Place>
void run_column_panel(void (*column_tiles)(const typename Arithmetic::Tile*, size_t),
                      const TileGrid& grid, const typename Arithmetic::Tile& tile, size_t panel,
                      size_t block_row, size_t block_end, Place& place) {
  typename Arithmetic::Tile group[kFloatColumnTileGroup];
  size_t count = 0;
  for (size_t row = block_row; row < block_end; row += grid.mr) {
    group[count] = tile;
    group[count].columns = 1;
    group[count].rows = std::min(grid.mr, block_end - row);
    place(group[count], row, panel);
    if (++count == kFloatColumnTileGroup) {
      column_tiles(group, count);
      count = 0;
    }
  }
  if (count) column_tiles(group, count);
}

// Runs the tiles of one depth chunk: per row block, per B panel, per MR rows. `place(tile, row,
// panel)` sets the tile's operands (a, b, c, biases) for matrix row `row` and panel `panel`;
// rows and columns are set here. A last panel of one real column goes to the table's column
// tiles when it has them (run_column_panel), before the block's other panels.
// `rows_done(first_row, rows)` is told as soon as rows have run over all the grid's columns:
// per MR rows with panels inner, per row block otherwise (a fused epilogue then finds them in
// cache).
template <typename Arithmetic, typename Place, typename RowsDone>
void for_each_tile(const MicroKernels& kernels, const TileGrid& grid,
                   typename Arithmetic::Tile& tile, Place&& place, RowsDone&& rows_done) {
  const size_t panels = divide_round_up(grid.columns, grid.nr);
  const auto column_tiles = Arithmetic::column_tiles(kernels);
  // The panels the row loops below run: all but a one-column last panel with column tiles.
  const bool column_panel = column_tiles && grid.columns % grid.nr == 1;
  const size_t tile_panels = column_panel ? panels - 1 : panels;
  const size_t end_row = grid.first_row + grid.rows;
  for (size_t block_row = grid.first_row; block_row < end_row; block_row += grid.row_block) {
    const size_t block_end = std::min(end_row, block_row + grid.row_block);
    if (column_panel) {
      run_column_panel<Arithmetic>(column_tiles, grid, tile, panels - 1, block_row, block_end,
                                   place);
    }
    if (grid.panels_inner) {
      for (size_t row = block_row; row < block_end; row += grid.mr) {
        tile.rows = std::min(grid.mr, block_end - row);
        for (size_t panel = 0; panel < tile_panels; ++panel) {
          tile.columns = std::min(grid.nr, grid.columns - panel * grid.nr);
          place(tile, row, panel);
          Arithmetic::run_tile(kernels, tile);
        }
        rows_done(row, tile.rows);
      }
      continue;
    }
    for (size_t panel = 0; panel < tile_panels; ++panel) {
      tile.columns = std::min(grid.nr, grid.columns - panel * grid.nr);
      for (size_t row = block_row; row < block_end; row += grid.mr) {
        tile.rows = std::min(grid.mr, block_end - row);
        place(tile, row, panel);
        Arithmetic::run_tile(kernels, tile);
      }
    }
    rows_done(block_row, block_end - block_row);
  }
}

template <typename Arithmetic, typename Place>
void for_each_tile(const MicroKernels& kernels, const TileGrid& grid,
                   typename Arithmetic::Tile& tile, Place&& place) {
  for_each_tile<Arithmetic>(kernels, grid, tile, place, [](size_t, size_t) {});
}

// Matrix rows of `weights` ([rows][depth], zero points per row) into panels of MR rows, as the
// tiles read A: element (r, k) of panel p at ((p * steps + k / S) * MR + r) * S + k % S, S the
// step depth; rows and depth past the matrix are zero.
template <typename Arithmetic>
void pack_row_panels(const typename Arithmetic::Element* weights, const int32_t* zero_points,
                     size_t rows, size_t depth, size_t mr, typename Arithmetic::Packed* packed) {
  constexpr size_t kStep = Arithmetic::kStepDepth;
  const size_t steps = divide_round_up(depth, kStep);
  for (size_t row0 = 0; row0 < rows; row0 += mr) {
    for (size_t step = 0; step < steps; ++step) {
      for (size_t r = 0; r < mr; ++r) {
        const size_t row = row0 + r;
        for (size_t half = 0; half < kStep; ++half) {
          const size_t k = step * kStep + half;
          *packed++ =
              row < rows && k < depth
                  ? Arithmetic::offset(weights[row * depth + k], zero_points ? zero_points[row] : 0)
                  : typename Arithmetic::Packed{0};
        }
      }
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
