// Bilinear Resize on float32 over the last two dimensions (reference::resize_bilinear semantics):
// the taps of every output column and row come from the reference's own linear_tap once, when
// the kernel is built (the reference recomputes both coordinates for every output element). A
// run interpolates each needed input row horizontally once into a scratch row - the two rows an
// output row blends are reused by the next output row when it reads the same input rows, as
// upsampling does - then blends the two rows vertically. The products and sums are the
// reference's, in its order, so x86-64 gives its bits (an AArch64 compiler may contract either
// into fused multiply-adds, differently: within a float rounding there). Output rows are split
// over the pool in blocks of one plane.
#include <algorithm>
#include <vector>

#include "optimized/optimized_kernels.h"
#include "reference/resize.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// Output elements per task (a block of rows within one plane).
constexpr size_t kTaskElements = size_t{1} << 14;

// The horizontal taps of one output column or the vertical taps of one output row.
struct Taps {
  std::vector<uint32_t> low;
  std::vector<uint32_t> high;
  std::vector<float> weight;      // of the high neighbour
  std::vector<float> complement;  // 1 - weight, of the low neighbour, rounded as the reference
};

Taps axis_taps(const reference::ResizeParams& params, size_t dimension) {
  const auto length = static_cast<size_t>(params.output_shape[dimension]);
  Taps taps;
  taps.low.resize(length);
  taps.high.resize(length);
  taps.weight.resize(length);
  taps.complement.resize(length);
  for (size_t i = 0; i < length; ++i) {
    const reference::LinearTap tap =
        reference::linear_tap(params, dimension, static_cast<int64_t>(i));
    taps.low[i] = static_cast<uint32_t>(tap.low);
    taps.high[i] = static_cast<uint32_t>(tap.high);
    taps.weight[i] = tap.weight;
    taps.complement[i] = 1.0f - tap.weight;
  }
  return taps;
}

class BilinearResizeFloat final : public ResizeFloat {
 public:
  explicit BilinearResizeFloat(const reference::ResizeParams& params) {
    const size_t rank = params.input_shape.size();
    input_height_ = static_cast<size_t>(params.input_shape[rank - 2]);
    input_width_ = static_cast<size_t>(params.input_shape[rank - 1]);
    output_height_ = static_cast<size_t>(params.output_shape[rank - 2]);
    output_width_ = static_cast<size_t>(params.output_shape[rank - 1]);
    planes_ = 1;
    for (size_t d = 0; d + 2 < rank; ++d) planes_ *= static_cast<size_t>(params.input_shape[d]);
    columns_ = axis_taps(params, rank - 1);
    rows_ = axis_taps(params, rank - 2);
    rows_per_task_ =
        output_width_ == 0 ? output_height_ : std::max<size_t>(1, kTaskElements / output_width_);
  }

  // Two horizontally interpolated input rows.
  size_t scratch_bytes() const override { return 2 * output_width_ * sizeof(float); }
  const char* algorithm() const override { return "bilinear resize"; }

  void run(const float* input, float* output, ThreadPool& pool) const override {
    if (planes_ == 0 || output_height_ == 0 || output_width_ == 0) return;
    const size_t blocks = (output_height_ + rows_per_task_ - 1) / rows_per_task_;
    pool.parallel_for(planes_ * blocks, [&](size_t task, size_t thread) {
      const size_t plane = task / blocks;
      const size_t first = (task % blocks) * rows_per_task_;
      run_rows(input + plane * input_height_ * input_width_,
               output + plane * output_height_ * output_width_, first,
               std::min(output_height_, first + rows_per_task_),
               reinterpret_cast<float*>(pool.scratch(thread, scratch_bytes())));
    });
  }

 private:
  // out[j] = in[low[j]] x (1 - w[j]) + in[high[j]] x w[j]: one input row, horizontally.
  void interpolate_row(const float* in, float* out) const {
    const uint32_t* low = columns_.low.data();
    const uint32_t* high = columns_.high.data();
    const float* weight = columns_.weight.data();
    const float* complement = columns_.complement.data();
    for (size_t j = 0; j < output_width_; ++j) {
      out[j] = in[low[j]] * complement[j] + in[high[j]] * weight[j];
    }
  }

  void run_rows(const float* input, float* output, size_t first, size_t end, float* scratch) const {
    // Which input row each scratch row holds (none yet).
    float* held[2] = {scratch, scratch + output_width_};
    size_t held_row[2] = {SIZE_MAX, SIZE_MAX};
    auto row_of = [&](size_t input_row, const float* avoid) -> const float* {
      for (size_t k = 0; k < 2; ++k) {
        if (held_row[k] == input_row) return held[k];
      }
      const size_t k = held[0] == avoid ? 1 : 0;  // keep the row the caller still needs
      interpolate_row(input + input_row * input_width_, held[k]);
      held_row[k] = input_row;
      return held[k];
    };
    for (size_t r = first; r < end; ++r) {
      const float* top = row_of(rows_.low[r], nullptr);
      const float* bottom = row_of(rows_.high[r], top);
      const float weight = rows_.weight[r];
      const float complement = rows_.complement[r];
      float* out = output + r * output_width_;
      for (size_t j = 0; j < output_width_; ++j) {
        out[j] = top[j] * complement + bottom[j] * weight;
      }
    }
  }

  size_t input_height_ = 0;
  size_t input_width_ = 0;
  size_t output_height_ = 0;
  size_t output_width_ = 0;
  size_t planes_ = 0;
  size_t rows_per_task_ = 1;
  Taps columns_;
  Taps rows_;
};

}  // namespace

std::unique_ptr<ResizeFloat> make_resize_bilinear(const reference::ResizeParams& params) {
  const size_t rank = params.input_shape.size();
  if (rank < 2 || params.output_shape.size() != rank || params.scales.size() != rank) {
    return nullptr;
  }
  for (size_t d = 0; d < rank; ++d) {
    if (params.input_shape[d] <= 0 || params.output_shape[d] < 0) return nullptr;
    if (d + 2 < rank && params.output_shape[d] != params.input_shape[d]) return nullptr;
  }
  // Tap indices are stored as uint32_t.
  if (params.input_shape[rank - 1] > int64_t{0xFFFFFFFF} ||
      params.input_shape[rank - 2] > int64_t{0xFFFFFFFF}) {
    return nullptr;
  }
  return std::make_unique<BilinearResizeFloat>(params);
}

}  // namespace orknn::kernels::cpu::optimized
