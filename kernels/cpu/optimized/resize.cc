// Nearest-neighbour Resize on float32 (reference::resize_nearest semantics, the same bits): the
// input index of every output coordinate is computed once per dimension when the kernel is built
// (with the reference's own nearest_index, so rounding at exact halves agrees), and a run only
// copies. Output rows (the last dimension) read one input row through the column table; an
// output row whose input row is the previous output row's (an upsampled height) is a memcpy of
// that row. Rows are split over the pool in blocks.
#include <algorithm>
#include <cstring>
#include <vector>

#include "optimized/optimized_kernels.h"
#include "reference/resize.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// Below this many output elements a resize runs on the calling thread.
constexpr size_t kParallelElements = size_t{1} << 15;
// Output elements per task when split.
constexpr size_t kTaskElements = size_t{1} << 14;

class NearestResizeFloat final : public ResizeFloat {
 public:
  explicit NearestResizeFloat(const reference::ResizeParams& params) {
    const size_t rank = params.output_shape.size();
    width_ = static_cast<size_t>(params.output_shape[rank - 1]);
    rows_ = 1;
    // Per leading dimension: the output extent and, per output coordinate, the input offset
    // (input index x that dimension's input stride).
    outer_extents_.resize(rank - 1);
    outer_offsets_.resize(rank - 1);
    size_t input_stride = static_cast<size_t>(params.input_shape[rank - 1]);
    for (size_t d = rank - 1; d-- > 0;) {
      const int64_t extent = params.output_shape[d];
      outer_extents_[d] = static_cast<size_t>(extent);
      outer_offsets_[d].resize(static_cast<size_t>(extent));
      for (int64_t i = 0; i < extent; ++i) {
        outer_offsets_[d][static_cast<size_t>(i)] =
            static_cast<size_t>(reference::nearest_index(params, d, i)) * input_stride;
      }
      input_stride *= static_cast<size_t>(params.input_shape[d]);
      rows_ *= static_cast<size_t>(extent);
    }
    columns_.resize(width_);
    identity_columns_ = params.input_shape[rank - 1] == params.output_shape[rank - 1];
    for (size_t j = 0; j < width_; ++j) {
      columns_[j] = static_cast<uint32_t>(
          reference::nearest_index(params, rank - 1, static_cast<int64_t>(j)));
      identity_columns_ = identity_columns_ && columns_[j] == j;
    }
    rows_per_task_ = width_ == 0 ? rows_ : std::max<size_t>(1, kTaskElements / width_);
  }

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "nearest resize"; }

  void run(const float* input, float* output, ThreadPool& pool) const override {
    if (rows_ == 0 || width_ == 0) return;
    const size_t tasks = (rows_ + rows_per_task_ - 1) / rows_per_task_;
    if (rows_ * width_ < kParallelElements || tasks == 1) {
      run_rows(input, output, 0, rows_);
      return;
    }
    pool.parallel_for(tasks, [&](size_t task, size_t) {
      const size_t first = task * rows_per_task_;
      run_rows(input, output, first, std::min(rows_, first + rows_per_task_));
    });
  }

 private:
  // The input offset of output row `row` (its coordinates in the leading dimensions).
  size_t source_offset(size_t row) const {
    size_t offset = 0;
    for (size_t d = outer_extents_.size(); d-- > 0;) {
      offset += outer_offsets_[d][row % outer_extents_[d]];
      row /= outer_extents_[d];
    }
    return offset;
  }

  void run_rows(const float* input, float* output, size_t first_row, size_t end_row) const {
    size_t previous_source = 0;
    for (size_t row = first_row; row < end_row; ++row) {
      const size_t source = source_offset(row);
      float* out = output + row * width_;
      if (row > first_row && source == previous_source) {
        std::memcpy(out, out - width_, width_ * sizeof(float));
      } else if (identity_columns_) {
        std::memcpy(out, input + source, width_ * sizeof(float));
      } else {
        const float* in = input + source;
        const uint32_t* columns = columns_.data();
        for (size_t j = 0; j < width_; ++j) out[j] = in[columns[j]];
      }
      previous_source = source;
    }
  }

  size_t width_ = 0;
  size_t rows_ = 0;
  size_t rows_per_task_ = 1;
  bool identity_columns_ = false;
  std::vector<size_t> outer_extents_;
  std::vector<std::vector<size_t>> outer_offsets_;
  std::vector<uint32_t> columns_;
};

}  // namespace

std::unique_ptr<ResizeFloat> make_resize_nearest(const reference::ResizeParams& params) {
  const size_t rank = params.output_shape.size();
  if (rank == 0 || params.input_shape.size() != rank || params.scales.size() != rank) {
    return nullptr;
  }
  for (size_t d = 0; d < rank; ++d) {
    if (params.input_shape[d] <= 0 || params.output_shape[d] < 0) return nullptr;
  }
  // Column indices are stored as uint32_t.
  if (params.input_shape[rank - 1] > int64_t{0xFFFFFFFF}) return nullptr;
  return std::make_unique<NearestResizeFloat>(params);
}

}  // namespace orknn::kernels::cpu::optimized
