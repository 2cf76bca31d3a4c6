// What calibration learns about one tensor over the dataset, and how a quantization range is
// chosen from it (build's quantized_algorithm):
//   normal         the observed [min, max]
//   kl_divergence  the clipping range whose 256-level quantization keeps the value distribution
//                  closest (smallest Kullback-Leibler divergence) to the observed one
//   mmse           the clipping range with the smallest expected mean squared quantization
//                  error (clipping, plus step^2 / 12 for the values inside the range)
// The last two need the distribution, kept as a histogram whose symmetric range [-R, R] doubles
// (merging bin pairs, which is exact) whenever a value falls outside, so one pass over the data
// suffices and results do not depend on sample order beyond the order itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "options/convert_options.h"

namespace orknn::convert {

struct TensorRange {
  float min = 0.0f;
  float max = 0.0f;
};

class TensorStatistics {
 public:
  static constexpr int kBins = 2048;

  explicit TensorStatistics(bool keep_histogram) : keep_histogram_(keep_histogram) {}

  void add(const float* values, size_t count);
  bool empty() const { return count_ == 0; }
  TensorRange observed() const { return {min_, max_}; }
  TensorRange select_range(QuantizedAlgorithm algorithm) const;

 private:
  void grow_to(double magnitude);
  double bin_width() const { return 2.0 * half_range_ / kBins; }
  TensorRange select_kl_divergence() const;
  TensorRange select_mmse() const;

  bool keep_histogram_;
  uint64_t count_ = 0;
  uint64_t zeros_ = 0;  // values exactly 0, in the histogram's bin [0, width)
  float min_ = 0.0f;
  float max_ = 0.0f;
  double half_range_ = 0.0;  // R: bins cover [-R, R)
  std::vector<double> bins_;
};

}  // namespace orknn::convert
