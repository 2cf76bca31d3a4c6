#include "optimized/dot_product_pair_split.h"

#include <algorithm>

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
