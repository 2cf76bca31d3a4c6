#include "quantize/tensor_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orknn::convert {
namespace {

// The asymmetric int8 grid over [lo, hi] (zero included), as quantize/quantization_math does it.
struct Grid {
  double scale;
  double zero_point;
};

Grid grid_for(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  const double scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
  double zero_point = std::nearbyint(-128.0 - lo / scale);
  zero_point = std::min(127.0, std::max(-128.0, zero_point));
  return {scale, zero_point};
}

// The expected squared error of quantizing a value near `value` on `grid`: clipping to the
// grid's ends outside them, and step^2 / 12 inside, the mean rounding error of values spread
// over a step. The rounding error of the bin centre itself would be an artefact of where the
// centres fall on the grid: a bin is a good fraction of a step wide (1/64 over a range of +-16
// against a step of 0.04 for [-0.3, 10]), so the centres sample the rounding error at a few
// phases only, which alias and favour scales that happen to put grid points near them.
double expected_quantization_error(double value, const Grid& grid) {
  const double low = (-128.0 - grid.zero_point) * grid.scale;
  const double high = (127.0 - grid.zero_point) * grid.scale;
  if (value < low) return (value - low) * (value - low);
  if (value > high) return (value - high) * (value - high);
  return grid.scale * grid.scale / 12.0;
}

}  // namespace

void TensorStatistics::add(const float* values, size_t count) {
  float low = std::numeric_limits<float>::max();
  float high = std::numeric_limits<float>::lowest();
  size_t finite = 0;
  for (size_t i = 0; i < count; ++i) {
    const float value = values[i];
    if (!std::isfinite(value)) continue;  // an overflowed value says nothing about the range
    low = std::min(low, value);
    high = std::max(high, value);
    ++finite;
  }
  if (finite == 0) return;
  if (count_ == 0) {
    min_ = low;
    max_ = high;
  } else {
    min_ = std::min(min_, low);
    max_ = std::max(max_, high);
  }
  count_ += finite;
  if (!keep_histogram_) return;
  for (size_t i = 0; i < count; ++i) zeros_ += values[i] == 0.0f;

  const double magnitude =
      std::max(std::fabs(static_cast<double>(low)), std::fabs(static_cast<double>(high)));
  if (bins_.empty()) {
    bins_.assign(kBins, 0.0);
    half_range_ = std::ldexp(1.0, -20);
  }
  grow_to(magnitude);
  const double inverse_width = 1.0 / bin_width();
  for (size_t i = 0; i < count; ++i) {
    const float value = values[i];
    if (!std::isfinite(value)) continue;
    int bin = static_cast<int>((static_cast<double>(value) + half_range_) * inverse_width);
    bin = std::min(std::max(bin, 0), kBins - 1);
    bins_[static_cast<size_t>(bin)] += 1.0;
  }
}

void TensorStatistics::grow_to(double magnitude) {
  while (magnitude > half_range_) {
    // Doubling R: old bins 2k and 2k+1 become new bin B/4 + k (the old range is the new middle).
    std::vector<double> merged(kBins, 0.0);
    for (int k = 0; k < kBins; ++k)
      merged[static_cast<size_t>(kBins / 4 + k / 2)] += bins_[static_cast<size_t>(k)];
    bins_ = std::move(merged);
    half_range_ *= 2.0;
  }
}

TensorRange TensorStatistics::select_range(QuantizedAlgorithm algorithm) const {
  if (count_ == 0) return {0.0f, 0.0f};
  if (!keep_histogram_ || bins_.empty()) return observed();
  switch (algorithm) {
    case QuantizedAlgorithm::kNormal:
      return observed();
    case QuantizedAlgorithm::kKlDivergence:
      return select_kl_divergence();
    case QuantizedAlgorithm::kMmse:
      return select_mmse();
  }
  return observed();
}

TensorRange TensorStatistics::select_kl_divergence() const {
  int first = 0;
  int last = kBins - 1;
  while (first < kBins && bins_[static_cast<size_t>(first)] == 0) ++first;
  while (last >= 0 && bins_[static_cast<size_t>(last)] == 0) --last;
  if (first > last) return observed();
  const int middle = kBins / 2;  // bin `middle` starts at 0
  const int widest = std::max(middle - first, last + 1 - middle);
  constexpr int kLevels = 256;
  // Clipping at +-t, t = k bin widths; the smallest k keeps at least one bin per level.
  int narrowest = widest;
  for (int k = 1; k <= widest; ++k) {
    const int lo = std::max(first, middle - k);
    const int hi = std::min(last, middle + k - 1);
    if (hi - lo + 1 >= kLevels) {
      narrowest = k;
      break;
    }
  }
  if (narrowest >= widest) return observed();
  const int stride = std::max(1, (widest - narrowest) / 512);

  double best_divergence = std::numeric_limits<double>::max();
  int best_k = widest;
  std::vector<double> reference;
  std::vector<double> candidate;
  for (int k = narrowest; k <= widest; k += stride) {
    const int lo = std::max(first, middle - k);
    const int hi = std::min(last, middle + k - 1);
    const int n = hi - lo + 1;
    // Reference: the distribution as clipping sees it, outliers piled on the edge bins.
    reference.assign(bins_.begin() + lo, bins_.begin() + hi + 1);
    for (int i = first; i < lo; ++i) reference.front() += bins_[static_cast<size_t>(i)];
    for (int i = hi + 1; i <= last; ++i) reference.back() += bins_[static_cast<size_t>(i)];
    // Candidate: the unclipped bins merged into the quantization levels, each level's mass
    // spread evenly over the bins the reference occupies (so the edge bins holding clipped
    // outliers get their level's share, not nothing).
    candidate.assign(static_cast<size_t>(n), 0.0);
    for (int level = 0; level < kLevels; ++level) {
      const int begin = level * n / kLevels;
      const int end = (level + 1) * n / kLevels;
      double mass = 0;
      int occupied = 0;
      for (int i = begin; i < end; ++i) {
        mass += bins_[static_cast<size_t>(lo + i)];
        occupied += reference[static_cast<size_t>(i)] > 0;
      }
      if (occupied == 0) continue;
      for (int i = begin; i < end; ++i) {
        if (reference[static_cast<size_t>(i)] > 0)
          candidate[static_cast<size_t>(i)] = mass / occupied;
      }
    }
    double reference_total = 0;
    double candidate_total = 0;
    for (int i = 0; i < n; ++i) {
      reference_total += reference[static_cast<size_t>(i)];
      candidate_total += candidate[static_cast<size_t>(i)];
    }
    if (reference_total <= 0 || candidate_total <= 0) continue;
    double divergence = 0;
    for (int i = 0; i < n; ++i) {
      const double p = reference[static_cast<size_t>(i)] / reference_total;
      if (p <= 0) continue;
      // An empty candidate bin under reference mass (clipped outliers): a small floor keeps the
      // divergence finite while still penalising it heavily.
      const double q = std::max(candidate[static_cast<size_t>(i)] / candidate_total, 1e-12);
      divergence += p * std::log(p / q);
    }
    if (divergence < best_divergence) {
      best_divergence = divergence;
      best_k = k;
    }
  }
  const double threshold = best_k * bin_width();
  return {static_cast<float>(std::max<double>(min_, -threshold)),
          static_cast<float>(std::min<double>(max_, threshold))};
}

TensorRange TensorStatistics::select_mmse() const {
  const double width = bin_width();
  std::vector<std::pair<double, double>> occupied;  // bin centre, count
  for (int i = 0; i < kBins; ++i) {
    double count = bins_[static_cast<size_t>(i)];
    // Exact zeros (Relu, padding) are represented exactly by every grid: no error.
    if (i == kBins / 2) count -= static_cast<double>(zeros_);
    if (count > 0) occupied.emplace_back(-half_range_ + (i + 0.5) * width, count);
  }
  if (occupied.empty()) return observed();
  const double low = std::min<double>(min_, 0.0);
  const double high = std::max<double>(max_, 0.0);
  double best_error = std::numeric_limits<double>::max();
  TensorRange best = observed();
  constexpr int kSteps = 29;  // factors 1.0, 0.975, ..., 0.3 for each end
  for (int a = 0; a < kSteps; ++a) {
    const double lo = low * (1.0 - 0.025 * a);
    for (int b = 0; b < kSteps; ++b) {
      const double hi = high * (1.0 - 0.025 * b);
      if (hi <= lo) continue;
      const Grid grid = grid_for(lo, hi);
      double error = 0;
      for (const auto& [value, count] : occupied)
        error += count * expected_quantization_error(value, grid);
      // Ties (e.g. a side with no data) keep the wider, earlier candidate.
      if (error < best_error * (1.0 - 1e-9)) {
        best_error = error;
        best = {static_cast<float>(lo), static_cast<float>(hi)};
      }
    }
  }
  return best;
}

}  // namespace orknn::convert
