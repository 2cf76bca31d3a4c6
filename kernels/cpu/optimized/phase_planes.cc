// The phase planes of phase_planes.h: their layout and the split.
#include "optimized/phase_planes.h"

#include <algorithm>
#include <cstring>

#include "optimized/even_elements.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// floor(value / 2) for either sign.
int64_t floor_half(int64_t value) {
  return value >= 0 ? value / 2 : -((1 - value) / 2);
}

// Plane P[py][kx] of one input plane: P(i, ox) = input(2 i + py, 2 ox + kx - pad_left).
void split_phase_plane(const reference::Window2D& w, const PhaseLayout& layout, const int8_t* plane,
                       int64_t py, int64_t kx, int8_t pad, int8_t* target) {
  const auto columns = static_cast<int64_t>(layout.columns);
  const int64_t shift = kx - w.pad_left;
  // Outputs ox with 0 <= 2 ox + shift < width.
  const int64_t low = std::clamp<int64_t>(shift < 0 ? (1 - shift) / 2 : 0, 0, columns);
  const int64_t high = std::clamp<int64_t>(
      w.input_width - shift > 0 ? (w.input_width - shift + 1) / 2 : 0, low, columns);
  for (size_t r = 0; r < layout.rows; ++r, target += layout.columns) {
    const int64_t y = 2 * (layout.first_row + static_cast<int64_t>(r)) + py;
    if (y < 0 || y >= w.input_height || low == high) {
      std::memset(target, pad, layout.columns);
      continue;
    }
    // The pads at the ends are 0-3 bytes: a loop, not a library call per row.
    for (int64_t t = 0; t < low; ++t) target[t] = pad;
    const int8_t* row = plane + y * w.input_width + 2 * low + shift;
    copy_even_elements(row, target + low, static_cast<size_t>(high - low),
                       static_cast<size_t>(w.input_width - 2 * low - shift));
    for (int64_t t = high; t < columns; ++t) target[t] = pad;
  }
}

}  // namespace

bool phase_planes_apply(const reference::Window2D& w) {
  return w.stride_height == 2 && w.stride_width == 2 && w.dilation_height == 1 &&
         w.dilation_width == 1 && w.output_height >= 1 && w.output_width >= 1 &&
         w.kernel_height >= 1 && w.kernel_width >= 1 && w.pad_top >= 0 && w.pad_left >= 0;
}

PhaseLayout phase_layout(const reference::Window2D& w) {
  return phase_layout(w, 0, w.output_height);
}

PhaseLayout phase_layout(const reference::Window2D& w, int64_t first_output_row,
                         int64_t output_rows) {
  // Row i = oy + floor((ky - pad_top) / 2) over outputs oy and taps ky.
  const int64_t first = first_output_row + floor_half(-w.pad_top);
  const int64_t last =
      first_output_row + output_rows - 1 + floor_half(w.kernel_height - 1 - w.pad_top);
  return PhaseLayout{first_output_row, first, static_cast<size_t>(last - first + 1),
                     static_cast<size_t>(w.output_width), static_cast<size_t>(w.kernel_width)};
}

size_t phase_tap_offset(const reference::Window2D& w, const PhaseLayout& layout, int64_t ky,
                        int64_t kx) {
  const int64_t a = ky - w.pad_top;
  const int64_t row = floor_half(a);
  const int64_t py = a - 2 * row;
  return static_cast<size_t>(py * w.kernel_width + kx) * layout.plane_bytes() +
         static_cast<size_t>(layout.first_output_row + row - layout.first_row) * layout.columns;
}

void split_phase_planes(const reference::Window2D& w, const PhaseLayout& layout,
                        const int8_t* input, size_t planes, int8_t pad, int8_t* phases) {
  const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
  for (size_t plane = 0; plane < planes; ++plane) {
    int8_t* target = phases + plane * layout.channel_bytes();
    for (int64_t py = 0; py < 2; ++py) {
      for (int64_t kx = 0; kx < w.kernel_width; ++kx, target += layout.plane_bytes()) {
        split_phase_plane(w, layout, input + plane * input_plane, py, kx, pad, target);
      }
    }
  }
}

void split_phase_planes(const reference::Window2D& w, const PhaseLayout& layout,
                        const int8_t* input, size_t planes, int8_t pad, int8_t* phases,
                        ThreadPool& pool) {
  const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
  pool.parallel_for(planes, [&](size_t plane, size_t) {
    split_phase_planes(w, layout, input + plane * input_plane, 1, pad,
                       phases + plane * layout.channel_bytes());
  });
}

}  // namespace orknn::kernels::cpu::optimized
