#include "reference/reduction.h"

#include <cmath>
#include <limits>

namespace orknn::kernels::reference {
namespace {

// Calls visit(value) for every element of the reduced dimensions below `base`.
template <typename Visit>
void visit_reduced(const ReduceParams& params, size_t dimension, const float* base, Visit& visit) {
  if (dimension == params.reduced_sizes.size()) {
    visit(*base);
    return;
  }
  const int64_t stride = params.reduced_strides[dimension];
  for (int64_t i = 0; i < params.reduced_sizes[dimension]; ++i) {
    visit_reduced(params, dimension + 1, base + i * stride, visit);
  }
}

float reduce_one(const ReduceParams& params, const float* base) {
  switch (params.operation) {
    case ReduceOperation::kSum:
    case ReduceOperation::kMean: {
      double sum = 0.0;
      int64_t count = 0;
      auto add = [&](float value) {
        sum += value;
        ++count;
      };
      visit_reduced(params, 0, base, add);
      if (params.operation == ReduceOperation::kSum) return static_cast<float>(sum);
      return count > 0 ? static_cast<float>(sum / static_cast<double>(count))
                       : std::numeric_limits<float>::quiet_NaN();
    }
    case ReduceOperation::kMax:
    case ReduceOperation::kMin: {
      const bool maximum = params.operation == ReduceOperation::kMax;
      float best = maximum ? -std::numeric_limits<float>::infinity()
                           : std::numeric_limits<float>::infinity();
      auto keep_best = [&](float value) {
        if (std::isnan(best)) return;
        if (std::isnan(value) || (maximum ? value > best : value < best)) best = value;
      };
      visit_reduced(params, 0, base, keep_best);
      return best;
    }
  }
  return 0.0f;
}

void visit_kept(const ReduceParams& params, size_t dimension, const float* base, float** output) {
  if (dimension == params.kept_sizes.size()) {
    *(*output)++ = reduce_one(params, base);
    return;
  }
  const int64_t stride = params.kept_strides[dimension];
  for (int64_t i = 0; i < params.kept_sizes[dimension]; ++i) {
    visit_kept(params, dimension + 1, base + i * stride, output);
  }
}

}  // namespace

ReduceParams make_reduce_params(ReduceOperation operation, const std::vector<int64_t>& shape,
                                const std::vector<bool>& reduced) {
  ReduceParams params;
  params.operation = operation;
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    (reduced[i] ? params.reduced_sizes : params.kept_sizes).push_back(shape[i]);
    (reduced[i] ? params.reduced_strides : params.kept_strides).push_back(strides[i]);
  }
  return params;
}

void reduce(const ReduceParams& params, const float* input, float* output) {
  visit_kept(params, 0, input, &output);
}

void arg_reduce(const ArgReduceParams& params, const float* input, int64_t* output) {
  for (int64_t n = 0; n < params.outer; ++n) {
    for (int64_t i = 0; i < params.inner; ++i) {
      const float* base = input + n * params.axis_size * params.inner + i;
      int64_t best_index = 0;
      float best = base[0];
      for (int64_t k = 1; k < params.axis_size; ++k) {
        const float value = base[k * params.inner];
        const bool better = params.select_maximum ? value > best : value < best;
        if (better || (params.select_last_index && value == best)) {
          best = value;
          best_index = k;
        }
      }
      output[n * params.inner + i] = best_index;
    }
  }
}

}  // namespace orknn::kernels::reference
