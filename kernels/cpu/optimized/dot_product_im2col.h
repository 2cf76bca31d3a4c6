// The im2col of the dot-product convolution without gathered rows: a block's columns are cut
// into segments at output rows and B panels once, and from them, once per kernel tap, the
// pieces (dot_product_kernels.h Int8TapPiece) that say which lanes of which panel read which
// stretch of a channel plane. Every input channel's im2col row of that tap has the same pieces,
// so packing a depth row is a few masked vector loads per panel, with no division, bounds test
// or padding fill per row (the row gather cost about 40% of the tile time in ResNet18).
#pragma once

#include <cstddef>
#include <cstdint>

#include "optimized/blocking.h"
#include "optimized/dot_product_kernels.h"

namespace orknn::kernels::cpu::optimized {

// At most this many segments, cut at output rows and at panels of `panel_columns`, describe a
// block of `columns` pixels of an output `output_width` wide.
inline size_t max_panel_segments(size_t columns, size_t panel_columns, size_t output_width) {
  return divide_round_up(columns, panel_columns) + divide_round_up(columns, output_width) + 1;
}

// The pieces of every tap (kernel row, kernel column) of `geometry` (panel_columns x stride <=
// 64) for a block whose
// `segment_count` segments were built with build_segments(..., panel_columns = NR, ...) over
// `panels` panels: tap t's pieces of panel q are pieces[first_piece[t * (panels + 1) + q] ..
// first_piece[t * (panels + 1) + q + 1]). `pieces` holds taps x segment_count entries,
// `first_piece` taps x (panels + 1).
void build_tap_pieces(const Im2colGeometry& geometry, const Segment* segments, size_t segment_count,
                      size_t panels, Int8TapPiece* pieces, uint32_t* first_piece);

}  // namespace orknn::kernels::cpu::optimized
