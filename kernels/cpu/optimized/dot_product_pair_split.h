// The weights of a pair-limited table's A panels (dot_product_kernels.h, Int8PairCorrection):
// each depth group of a row split into the pairs its tile sums exactly in int16 and the
// corrections that carry the rest, so that A + corrections is the row's weights again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "optimized/dot_product_kernels.h"

namespace orknn::kernels::cpu::optimized {

// Whether u0 x w0 + u1 x w1 can leave int16 for unsigned bytes u0, u1: only when both weights
// have the same sign and |w0| + |w1| > 128 (255 x 129 > 32767; 255 x 128 = 32640 fits either
// sign, and with opposite signs the sum lies between the two products).
constexpr bool pair_may_saturate(int32_t w0, int32_t w1) {
  const bool same_sign = (w0 > 0 && w1 > 0) || (w0 < 0 && w1 < 0);
  const int32_t magnitudes = (w0 < 0 ? -w0 : w0) + (w1 < 0 ? -w1 : w1);
  return same_sign && magnitudes > 128;
}

// Makes the four weight offsets at `weights` (one row's depth group in an A panel) safe for a
// pair-limited tile: in each pair that may saturate, the larger weight becomes
// sign x (128 - |smaller|) and the difference goes into a correction for (`group`, `row`),
// appended to `corrections` when there is any. The difference, sign x (|w0| + |w1| - 128), fits
// int8 (-128 only from -128, -128) and the correction's other weight in that pair is 0, so its
// own pair sums are single products, exact. Returns whether it appended one.
bool split_pair_limited_group(int8_t* weights, uint32_t group, uint32_t row,
                              std::vector<Int8PairCorrection>& corrections);

// An order of the matrix depth for a pair-limited table that leaves few pairs needing a
// correction: position p of the packed depth holds depth index order[p]. `weights` are the
// offsets w - zw of `rows` output channels, `depth` each, row-major. Greedy: depth indices with
// the most large weights (|w| > 64) first, each paired with the unpaired index whose pair needs
// a correction in the fewest rows (searched from the indices with the fewest large weights,
// stopping at a pair that needs none); then the pairs with the most such rows first, so that
// pairs needing corrections in the same rows tend to share a group (one correction for both).
// The searches together compare at most about `largest_work` weight pairs; past that each index
// takes the unpaired one with the fewest large weights. It reads at most 128 of the rows, spread
// over the layer (the cost at rknn_init stays small on wide layers).
std::vector<uint32_t> pair_limited_depth_order(const int8_t* weights, size_t rows, size_t depth,
                                               size_t largest_work);

// The corrections of one A panel, sorted by group, and where each depth chunk's start
// (chunks of `chunk_groups` groups): chunk c's are [chunk_begin[c], chunk_begin[c + 1]).
struct PanelCorrections {
  std::vector<Int8PairCorrection> corrections;
  std::vector<uint32_t> chunk_begin;
};

// Sorts `corrections` (one panel's, each row's in group order) by group, stably, and indexes
// them by depth chunk: `depth_groups` groups in chunks of `chunk_groups`.
PanelCorrections index_panel_corrections(std::vector<Int8PairCorrection> corrections,
                                         size_t depth_groups, size_t chunk_groups);

}  // namespace orknn::kernels::cpu::optimized
