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

// The most rows pair_limited_depth_order reads.
constexpr size_t kSampledRows = 128;

std::vector<uint32_t> pair_limited_depth_order(const int8_t* weights, size_t rows, size_t depth,
                                               size_t largest_work) {
  std::vector<uint32_t> order(depth);
  for (size_t k = 0; k < depth; ++k) order[k] = static_cast<uint32_t>(k);
  if (depth < 3 || rows == 0) return order;
  // The search reads at most kSampledRows rows, spread over the layer: its cost at rknn_init
  // (a transposed copy of those rows, then the comparisons) stays small on layers of thousands
  // of output channels, and the order it finds serves the other rows about as well.
  const size_t sampled = rows < kSampledRows ? rows : kSampledRows;
  // Per depth index and sampled row, as bytes: the positive part of the weight and the magnitude
  // of the negative one (capped at 127, an approximation that only steers the order: the split
  // stays exact whatever it is), so that a pair needs a correction in a row when positive[a] +
  // positive[b] > 128 or negative[a] + negative[b] > 128, byte sums below 256 the compiler
  // vectorizes.
  std::vector<uint8_t> positive(depth * sampled), negative(depth * sampled);
  std::vector<uint32_t> large(depth, 0);
  // Transposed in blocks of 32 depth indices: element by element, the strided writes took
  // longer than the search itself on deep layers.
  constexpr size_t kBlock = 32;
  for (size_t k0 = 0; k0 < depth; k0 += kBlock) {
    const size_t k1 = k0 + kBlock < depth ? k0 + kBlock : depth;
    for (size_t s = 0; s < sampled; ++s) {
      const int8_t* row = weights + (s * rows / sampled) * depth;
      for (size_t k = k0; k < k1; ++k) {
        const int32_t w = row[k];
        positive[k * sampled + s] = static_cast<uint8_t>(w > 0 ? w : 0);
        negative[k * sampled + s] = static_cast<uint8_t>(w < 0 ? (w < -127 ? 127 : -w) : 0);
        large[k] += w > 64 || w < -64;
      }
    }
  }
  auto rows_needing_correction = [&](size_t a, size_t b) {
    const uint8_t* pa = positive.data() + a * sampled;
    const uint8_t* na = negative.data() + a * sampled;
    const uint8_t* pb = positive.data() + b * sampled;
    const uint8_t* nb = negative.data() + b * sampled;
    uint32_t count = 0;
    for (size_t r = 0; r < sampled; ++r) {
      const uint8_t positive_sum = static_cast<uint8_t>(pa[r] + pb[r]);
      const uint8_t negative_sum = static_cast<uint8_t>(na[r] + nb[r]);
      count += static_cast<uint32_t>((positive_sum > 128) | (negative_sum > 128));
    }
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
      work += sampled;
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
