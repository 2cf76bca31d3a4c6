// Reference kernels of the reduction family on float32: ReduceSum/Mean/Max/Min over any set
// of axes, and ArgMax/ArgMin along one axis. Sums are accumulated in double.
#pragma once

#include <cstdint>
#include <vector>

namespace orknn::kernels::reference {

enum class ReduceOperation { kSum, kMean, kMax, kMin };

// The input split into kept and reduced dimensions (each in input order) with their element
// strides. The output holds one value per kept index, in row-major order of the kept
// dimensions, which is the layout with and without keepdims.
struct ReduceParams {
  ReduceOperation operation = ReduceOperation::kSum;
  std::vector<int64_t> kept_sizes;
  std::vector<int64_t> kept_strides;
  std::vector<int64_t> reduced_sizes;
  std::vector<int64_t> reduced_strides;
};

// `reduced[d]` says whether dimension d of `shape` is reduced.
ReduceParams make_reduce_params(ReduceOperation operation, const std::vector<int64_t>& shape,
                                const std::vector<bool>& reduced);

// An empty reduction gives 0 (Sum), NaN (Mean), -inf (Max) or +inf (Min). Max and Min
// propagate NaN.
void reduce(const ReduceParams& params, const float* input, float* output);

// Index of the largest (or smallest) value along the middle dimension of an
// [outer, axis_size, inner] view; ties give the first index, or the last with
// select_last_index. Precondition: axis_size > 0.
struct ArgReduceParams {
  int64_t outer = 1;
  int64_t axis_size = 1;
  int64_t inner = 1;
  bool select_maximum = true;  // false: ArgMin
  bool select_last_index = false;
};

void arg_reduce(const ArgReduceParams& params, const float* input, int64_t* output);

}  // namespace orknn::kernels::reference
