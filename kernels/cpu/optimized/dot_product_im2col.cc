#include "optimized/dot_product_im2col.h"

#include <algorithm>

namespace orknn::kernels::cpu::optimized {
namespace {

// Bits j * stride for j in [begin, end) (end * stride <= 64 or the bits stop at 63): a range,
// every other bit of a range for stride 2, else one by one.
uint64_t strided_bits(size_t begin, size_t end, size_t stride) {
  auto below = [](size_t bit) { return bit >= 64 ? ~uint64_t{0} : (uint64_t{1} << bit) - 1; };
  if (stride == 1) return below(end) & ~below(begin);
  if (stride == 2) return below(2 * end) & ~below(2 * begin) & 0x5555555555555555ull;
  uint64_t bits = 0;
  for (size_t j = begin; j < end && j * stride < 64; ++j) bits |= uint64_t{1} << (j * stride);
  return bits;
}

}  // namespace

void build_tap_pieces(const Im2colGeometry& geometry, const Segment* segments, size_t segment_count,
                      size_t panels, Int8TapPiece* pieces, uint32_t* first_piece) {
  const reference::Window2D& w = geometry.window;
  const int64_t stride = w.stride_width;
  uint32_t count = 0;
  for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
    for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
      const int64_t row_offset = ky * w.dilation_height;
      const int64_t column_offset = kx * w.dilation_width;
      size_t s = 0;
      for (size_t q = 0; q < panels; ++q) {
        const uint32_t panel_begin = count;
        *first_piece++ = count;
        for (; s < segment_count && segments[s].panel == q; ++s) {
          const Segment& segment = segments[s];
          const int64_t input_row = segment.input_row + row_offset;
          if (input_row < 0 || input_row >= w.input_height) continue;  // all padding
          // Valid t (lanes from the segment's first): 0 <= first + t * stride < width, as in
          // the row gather (blocking.cc).
          const int64_t length = segment.length;
          const int64_t first = segment.input_column + column_offset;
          const int64_t low =
              std::clamp<int64_t>(first < 0 ? (-first + stride - 1) / stride : 0, 0, length);
          const int64_t past = w.input_width - first;
          const int64_t high =
              std::clamp<int64_t>(past > 0 ? (past + stride - 1) / stride : 0, low, length);
          if (low == high) continue;
          const int64_t lane = segment.lane;
          const auto source =
              static_cast<int32_t>(input_row * w.input_width + first - lane * stride);
          const auto lanes = static_cast<uint32_t>(
              strided_bits(static_cast<size_t>(lane + low), static_cast<size_t>(lane + high), 1));
          const uint64_t bytes =
              strided_bits(static_cast<size_t>(lane + low), static_cast<size_t>(lane + high),
                           static_cast<size_t>(stride));
          // The panel's previous piece reads from the same lane-0 offset: one piece.
          if (count > panel_begin && pieces[count - 1].source == source) {
            pieces[count - 1].lanes |= lanes;
            pieces[count - 1].bytes |= bytes;
          } else {
            pieces[count++] = Int8TapPiece{source, lanes, bytes};
          }
        }
      }
      *first_piece++ = count;
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
