// Softmax over [outer, channels, inner] (reference::softmax) on the micro-kernel table's rows:
// the maximum over the channels subtracted (binary_row), the table's vectorized exp
// (reproducible_exp_row), the exps summed in double, then one multiplication by the float
// inverse of the sum (binary_row). The reference recomputes exp in double and divides, so the
// two agree within a few float roundings: the exp's (2 ulp), the argument's (x - maximum rounds
// to float here, at most half an ulp of the difference, which moves exp(x - maximum) by that
// much relative) and the inverse's and product's (half an ulp each).
#include <algorithm>
#include <cstring>

#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// BinaryRow operation codes (micro_kernels.h).
constexpr int kSubtract = 1;
constexpr int kMultiply = 2;

// Columns per task when the channels are strided (inner > 1): the block's maxima (float) and
// sums (double), 6 KB, stay in L1 while the channel rows stream past.
constexpr size_t kColumnBlock = 512;
// A contiguous row's maximum: the row folded into this many partial maxima by max_row_float.
constexpr size_t kRowPiece = 64;
// Elements per task when the channels are contiguous (inner == 1): short rows share a task.
constexpr size_t kRowTaskElements = 16384;

// sums[j] += double(values[j]): independent lanes, which the compiler vectorizes (a single
// running sum would be a chain of dependent double additions).
void accumulate_double(const float* values, size_t count, double* sums) {
  for (size_t j = 0; j < count; ++j) sums[j] += static_cast<double>(values[j]);
}

double sum_double(const float* values, size_t count) {
  constexpr size_t kLanes = 8;
  double lanes[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) accumulate_double(values + i, kLanes, lanes);
  double sum = 0.0;
  for (; i < count; ++i) sum += static_cast<double>(values[i]);
  for (double lane : lanes) sum += lane;
  return sum;
}

class OptimizedSoftmax final : public SoftmaxFloat {
 public:
  OptimizedSoftmax(const MicroKernels& kernels, const reference::ChannelLayout& layout)
      : kernels_(kernels),
        outer_(static_cast<size_t>(layout.outer)),
        channels_(static_cast<size_t>(layout.channels)),
        inner_(static_cast<size_t>(layout.inner)),
        block_(std::min(kColumnBlock, inner_)) {}

  // A column block's sums (double) then its maxima (float).
  size_t scratch_bytes() const override {
    return inner_ == 1 ? 0 : block_ * (sizeof(double) + sizeof(float));
  }
  const char* algorithm() const override { return kernels_.name; }

  void run(const float* input, float* output, ThreadPool& pool) const override {
    if (inner_ == 1) {
      const size_t rows_per_task = std::max<size_t>(1, kRowTaskElements / channels_);
      const size_t tasks = divide_round_up(outer_, rows_per_task);
      pool.parallel_for(tasks, [&](size_t task, size_t) {
        const size_t first = task * rows_per_task;
        const size_t last = std::min(outer_, first + rows_per_task);
        for (size_t row = first; row < last; ++row) {
          softmax_row(input + row * channels_, output + row * channels_);
        }
      });
      return;
    }
    const size_t blocks = divide_round_up(inner_, block_);
    pool.parallel_for(outer_ * blocks, [&](size_t task, size_t thread) {
      const size_t n = task / blocks;
      const size_t first = (task % blocks) * block_;
      const size_t offset = n * channels_ * inner_ + first;
      softmax_columns(input + offset, output + offset, std::min(block_, inner_ - first),
                      pool.scratch(thread, scratch_bytes()));
    });
  }

 private:
  static size_t divide_round_up(size_t value, size_t divisor) {
    return (value + divisor - 1) / divisor;
  }

  // The largest of `count` contiguous values (a NaN may or may not win: a NaN input makes its
  // exp, the sum and so every output NaN either way, as in the reference).
  float row_maximum(const float* values) const {
    const size_t count = channels_;
    if (count < 2 * kRowPiece) return *std::max_element(values, values + count);
    float partial[kRowPiece];
    std::memcpy(partial, values, sizeof(partial));
    size_t i = kRowPiece;
    for (; i + kRowPiece <= count; i += kRowPiece) {
      kernels_.max_row_float(partial, values + i, kRowPiece);
    }
    kernels_.max_row_float(partial, values + i, count - i);
    return *std::max_element(partial, partial + kRowPiece);
  }

  void softmax_row(const float* input, float* output) const {
    const size_t count = channels_;
    const float maximum = row_maximum(input);
    kernels_.binary_row({kSubtract, input, 1, &maximum, 0, output, count});
    kernels_.reproducible_exp_row(output, output, count);
    const float inverse = static_cast<float>(1.0 / sum_double(output, count));
    kernels_.binary_row({kMultiply, output, 1, &inverse, 0, output, count});
  }

  // `count` columns of one outer index: channel c's values are input[c * inner_ + j].
  void softmax_columns(const float* input, float* output, size_t count, uint8_t* scratch) const {
    auto* sums = reinterpret_cast<double*>(scratch);
    auto* maxima = reinterpret_cast<float*>(scratch + block_ * sizeof(double));
    std::memcpy(maxima, input, count * sizeof(float));
    for (size_t c = 1; c < channels_; ++c)
      kernels_.max_row_float(maxima, input + c * inner_, count);
    std::fill(sums, sums + count, 0.0);
    for (size_t c = 0; c < channels_; ++c) {
      float* row = output + c * inner_;
      kernels_.binary_row({kSubtract, input + c * inner_, 1, maxima, 1, row, count});
      kernels_.reproducible_exp_row(row, row, count);
      accumulate_double(row, count, sums);
    }
    float* inverses = maxima;  // the maxima are no longer needed
    for (size_t j = 0; j < count; ++j) inverses[j] = static_cast<float>(1.0 / sums[j]);
    for (size_t c = 0; c < channels_; ++c) {
      float* row = output + c * inner_;
      kernels_.binary_row({kMultiply, row, 1, inverses, 1, row, count});
    }
  }

  const MicroKernels& kernels_;
  size_t outer_;
  size_t channels_;
  size_t inner_;
  size_t block_;  // columns per task when inner_ > 1
};

}  // namespace

std::unique_ptr<SoftmaxFloat> make_softmax(const MicroKernels& kernels,
                                           const reference::ChannelLayout& layout) {
  if (layout.outer <= 0 || layout.channels <= 0 || layout.inner <= 0) return nullptr;
  return std::make_unique<OptimizedSoftmax>(kernels, layout);
}

}  // namespace orknn::kernels::cpu::optimized
