#include "optimized/dot_product_pair_split.h"

#include <algorithm>
#include <cstdint>

namespace orknn::kernels::cpu::optimized {

bool split_pair_limited_group(int8_t* weights, uint32_t group, uint32_t row,
                              std::vector<Int8PairCorrection>& corrections) {
  Int8PairCorrection correction{group, row, {0, 0, 0, 0}};
  bool needed = false;
  for (size_t pair = 0; pair < 4; pair += 2) {
    const int32_t w0 = weights[pair];
    const int32_t w1 = weights[pair + 1];
    if (!pair_may_saturate(w0, w1)) continue;
    const size_t larger = (w0 < 0 ? -w0 : w0) >= (w1 < 0 ? -w1 : w1) ? pair : pair + 1;
    const size_t smaller = larger == pair ? pair + 1 : pair;
    const int32_t sign = weights[larger] < 0 ? -1 : 1;
    const int32_t small_magnitude = weights[smaller] * sign;  // same sign: positive, <= 127
    const int32_t kept = sign * (128 - small_magnitude);
    correction.weights[larger] = static_cast<int8_t>(weights[larger] - kept);
    weights[larger] = static_cast<int8_t>(kept);
    needed = true;
  }
  if (needed) corrections.push_back(correction);
  return needed;
}

// The deepest matrix pair_limited_depth_order reorders.
constexpr size_t kDeepestSearch = 288;

std::vector<uint32_t> pair_limited_depth_order(const int8_t* weights, size_t rows, size_t depth,
                                               size_t largest_work) {
  std::vector<uint32_t> order(depth);
  for (size_t k = 0; k < depth; ++k) order[k] = static_cast<uint32_t>(k);
  if (depth < 3 || rows == 0) return order;
  // Deep layers need corrections in a few percent of their groups in the identity order
  // already (ResNet50's: 2-5% from 256 input channels on), where a reordering saves less than
  // it costs at rknn_init (a transposed copy of the weights and the search).
  if (depth > kDeepestSearch) return order;
  // Per depth index and row, as bytes: the positive and the negative part of the weight and
  // their complements to 128, so that a pair needs a correction in a row exactly when
  // positive[a] > 128 - positive[b] or negative[a] > 128 - negative[b]: branch-free byte
  // comparisons the compiler vectorizes.
  std::vector<uint8_t> positive(depth * rows), negative(depth * rows);
  std::vector<uint8_t> positive_room(depth * rows), negative_room(depth * rows);
  std::vector<uint32_t> large(depth, 0);
  // Transposed in 32 x 32 blocks: element by element, the strided writes took longer than
  // the search itself on deep layers.
  constexpr size_t kBlock = 32;
  for (size_t r0 = 0; r0 < rows; r0 += kBlock) {
    const size_t r1 = r0 + kBlock < rows ? r0 + kBlock : rows;
    for (size_t k0 = 0; k0 < depth; k0 += kBlock) {
      const size_t k1 = k0 + kBlock < depth ? k0 + kBlock : depth;
      for (size_t k = k0; k < k1; ++k) {
        for (size_t r = r0; r < r1; ++r) {
          const int32_t w = weights[r * depth + k];
          const size_t at = k * rows + r;
          positive[at] = static_cast<uint8_t>(w > 0 ? w : 0);
          negative[at] = static_cast<uint8_t>(w < 0 ? -w : 0);
          positive_room[at] = static_cast<uint8_t>(128 - positive[at]);
          negative_room[at] = static_cast<uint8_t>(128 - negative[at]);
          large[k] += w > 64 || w < -64;
        }
      }
    }
  }
  auto rows_needing_correction = [&](size_t a, size_t b) {
    const uint8_t* pa = positive.data() + a * rows;
    const uint8_t* na = negative.data() + a * rows;
    const uint8_t* pb = positive_room.data() + b * rows;
    const uint8_t* nb = negative_room.data() + b * rows;
    uint32_t count = 0;
    for (size_t r = 0; r < rows; ++r)
      count += static_cast<uint32_t>((pa[r] > pb[r]) | (na[r] > nb[r]));
    return count;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return large[a] > large[b]; });
  struct Pair {
    uint32_t first, second, cost;
  };
  std::vector<Pair> pairs;
  std::vector<bool> paired(depth, false);
  size_t work = 0;
  size_t last = depth;  // order[last - 1] is the unpaired index with the fewest large weights
  for (const uint32_t a : order) {
    if (paired[a]) continue;
    paired[a] = true;
    while (last > 0 && paired[order[last - 1]]) --last;
    if (last == 0) {
      pairs.push_back({a, UINT32_MAX, 0});  // the last, odd one: paired with the padding
      break;
    }
    // Candidates from those with the fewest large weights, which most often need no correction
    // (the search stops at the first such); past the work budget, that first candidate.
    uint32_t best = order[last - 1];
    uint32_t best_cost = UINT32_MAX;
    for (size_t i = last; i-- > 0 && work <= largest_work;) {
      const uint32_t b = order[i];
      if (paired[b]) continue;
      const uint32_t cost = rows_needing_correction(a, b);
      work += rows;
      if (cost < best_cost) {
        best = b;
        best_cost = cost;
        if (cost == 0) break;
      }
    }
    if (best_cost == UINT32_MAX) best_cost = rows_needing_correction(a, best);
    paired[best] = true;
    pairs.push_back({a, best, best_cost});
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Pair& a, const Pair& b) { return a.cost > b.cost; });
  // An odd depth's lone index goes last, next to the zero padding.
  std::stable_partition(pairs.begin(), pairs.end(),
                        [](const Pair& pair) { return pair.second != UINT32_MAX; });
  order.clear();
  for (const Pair& pair : pairs) {
    order.push_back(pair.first);
    if (pair.second != UINT32_MAX) order.push_back(pair.second);
  }
  return order;
}

PanelCorrections index_panel_corrections(std::vector<Int8PairCorrection> corrections,
                                         size_t depth_groups, size_t chunk_groups) {
  std::stable_sort(
      corrections.begin(), corrections.end(),
      [](const Int8PairCorrection& a, const Int8PairCorrection& b) { return a.group < b.group; });
  PanelCorrections panel;
  const size_t chunks = (depth_groups + chunk_groups - 1) / chunk_groups;
  panel.chunk_begin.resize(chunks + 1);
  size_t index = 0;
  for (size_t chunk = 0; chunk <= chunks; ++chunk) {
    const size_t first_group = chunk * chunk_groups;
    while (index < corrections.size() && corrections[index].group < first_group) ++index;
    panel.chunk_begin[chunk] = static_cast<uint32_t>(index);
  }
  panel.chunk_begin[chunks] = static_cast<uint32_t>(corrections.size());
  panel.corrections = std::move(corrections);
  return panel;
}

}  // namespace orknn::kernels::cpu::optimized
