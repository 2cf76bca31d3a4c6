// Stride-2 windows read on planes of the input's row phases, one per column tap. A window with
// stride 2 in both directions reads input pixel (2 oy + ky - pad_top, 2 ox + kx - pad_left) for
// output (oy, ox). Row 2 oy + ky - pad_top is row oy + di of row phase py (di, py: the floor and
// remainder of (ky - pad_top) / 2), so with planes
//   P[py][kx](i, ox) = input(2 i + py, 2 ox + kx - pad_left),  ox in [0, output width),
// padding written in, every im2col row (channel, ky, kx) is one contiguous stretch of P[py][kx]
// starting at row di: the driver packs it in place as a pointwise layer's rows, instead of
// gathering it with stride 2 per output row. The planes hold 2 x kernel width / 4 times the
// input rows they cover (1.5x for 3x3); the driver splits the rows each block reads
// (docs/cpu-kernels-journal/session-14-strided.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/thread_pool.h"
#include "reference/window_geometry.h"

namespace orknn::kernels::cpu::optimized {

// Where a channel's planes start and how large they are: every plane holds rows
// [first_row, first_row + rows) of its row phase, `columns` (the output width) wide, so that
// every tap's rows (below) lie inside it for every output pixel of output rows
// [first_output_row, + output rows).
struct PhaseLayout {
  int64_t first_output_row = 0;
  int64_t first_row = 0;
  size_t rows = 0;
  size_t columns = 0;
  size_t kernel_width = 0;
  size_t plane_bytes() const { return rows * columns; }
  // Two row phases x kernel_width column taps, py-major.
  size_t channel_bytes() const { return 2 * kernel_width * plane_bytes(); }
};

// Stride 2 in both directions, dilation 1, a non-empty output.
bool phase_planes_apply(const reference::Window2D& window);

// The planes of every output row, or of output rows [first_output_row, + output_rows) only (a
// block of columns: the driver splits what each block reads, in its task's scratch).
PhaseLayout phase_layout(const reference::Window2D& window);
PhaseLayout phase_layout(const reference::Window2D& window, int64_t first_output_row,
                         int64_t output_rows);

// The byte offset, inside a channel's planes, of what tap (ky, kx) reads for output
// (first_output_row, 0); output (oy, ox) reads it at + (oy - first_output_row) x layout.columns +
// ox, so output pixel p at + p - first_output_row x layout.columns.
size_t phase_tap_offset(const reference::Window2D& window, const PhaseLayout& layout, int64_t ky,
                        int64_t kx);

// Writes the planes of `planes` input planes (H x W each, one after the other), padding with
// `pad`, layout.channel_bytes() per input plane in the same order: on the calling thread, or one
// task per plane on `pool`.
void split_phase_planes(const reference::Window2D& window, const PhaseLayout& layout,
                        const int8_t* input, size_t planes, int8_t pad, int8_t* phases);
void split_phase_planes(const reference::Window2D& window, const PhaseLayout& layout,
                        const int8_t* input, size_t planes, int8_t pad, int8_t* phases,
                        ThreadPool& pool);

}  // namespace orknn::kernels::cpu::optimized
