// MaxPool / AveragePool 2-D and GlobalAveragePool on NCHW planes, split over the pool by
// planes. Max pooling uses the window's separability: per output row, the valid input rows of
// its window are first combined element-wise into one row (vectorized over the whole input
// width), then each output takes the max of its valid columns of that row; the result is the
// reference's (a max picks an input value). Averages keep the reference's summation order (see
// AveragePoolFloat), so they too give its exact bits.
#include <algorithm>
#include <cstring>
#include <limits>

#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

// Enough work per plane set to be worth waking the pool for.
constexpr int64_t kParallelElements = 32768;

// The valid taps [first, end) of a window starting at `start` with `kernel` taps `dilation`
// apart over [0, size): taps outside are padding.
struct TapRange {
  int64_t first;
  int64_t end;
};
TapRange valid_taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  int64_t first = 0;
  while (first < kernel && start + first * dilation < 0) ++first;
  int64_t end = kernel;
  while (end > first && start + (end - 1) * dilation >= size) --end;
  return {first, end};
}

// Number of taps inside [low, high) (the padded input, for count_include_pad).
int64_t taps_inside(int64_t start, int64_t kernel, int64_t dilation, int64_t low, int64_t high) {
  int64_t count = 0;
  for (int64_t tap = 0; tap < kernel; ++tap) {
    const int64_t position = start + tap * dilation;
    count += position >= low && position < high ? 1 : 0;
  }
  return count;
}

template <typename Run>
void for_each_plane(const reference::Pool2DShape& shape, ThreadPool& pool, Run&& run_plane) {
  const reference::Window2D& w = shape.window;
  const int64_t work = shape.planes * w.input_height * w.input_width;
  if (work < kParallelElements || shape.planes == 1) {
    for (int64_t plane = 0; plane < shape.planes; ++plane) run_plane(plane, size_t{0});
    return;
  }
  pool.parallel_for(static_cast<size_t>(shape.planes), [&](size_t plane, size_t thread) {
    run_plane(static_cast<int64_t>(plane), thread);
  });
}

template <typename Element>
class OptimizedMaxPool2D final : public PreparedKernel {
 public:
  using RowMax = void (*)(Element*, const Element*, size_t);
  OptimizedMaxPool2D(const MicroKernels& kernels, const reference::Pool2DShape& shape, RowMax max)
      : kernels_(kernels), shape_(shape), max_(max) {}

  size_t scratch_bytes() const override {
    return static_cast<size_t>(shape_.window.input_width) * sizeof(Element);
  }
  const char* algorithm() const override { return kernels_.name; }

  void run(const Element* input, Element* output, ThreadPool& pool) const {
    const reference::Window2D& w = shape_.window;
    const auto width = static_cast<size_t>(w.input_width);
    for_each_plane(shape_, pool, [&](int64_t plane, size_t thread) {
      auto* row = reinterpret_cast<Element*>(pool.scratch(thread, scratch_bytes()));
      const Element* plane_input = input + plane * w.input_height * w.input_width;
      Element* plane_output = output + plane * w.output_height * w.output_width;
      for (int64_t oh = 0; oh < w.output_height; ++oh) {
        const int64_t row0 = oh * w.stride_height - w.pad_top;
        const TapRange rows = valid_taps(row0, w.kernel_height, w.dilation_height, w.input_height);
        Element* out = plane_output + oh * w.output_width;
        if (rows.first >= rows.end) {
          std::fill(out, out + w.output_width, std::numeric_limits<Element>::lowest());
          continue;
        }
        std::memcpy(row, plane_input + (row0 + rows.first * w.dilation_height) * w.input_width,
                    width * sizeof(Element));
        for (int64_t tap = rows.first + 1; tap < rows.end; ++tap) {
          max_(row, plane_input + (row0 + tap * w.dilation_height) * w.input_width, width);
        }
        for (int64_t ow = 0; ow < w.output_width; ++ow) {
          const int64_t column0 = ow * w.stride_width - w.pad_left;
          const TapRange columns =
              valid_taps(column0, w.kernel_width, w.dilation_width, w.input_width);
          Element best = std::numeric_limits<Element>::lowest();
          if (columns.first < columns.end) best = row[column0 + columns.first * w.dilation_width];
          for (int64_t tap = columns.first + 1; tap < columns.end; ++tap) {
            const Element value = row[column0 + tap * w.dilation_width];
            best = value > best ? value : best;
          }
          out[ow] = best;
        }
      }
    });
  }

 private:
  const MicroKernels& kernels_;
  reference::Pool2DShape shape_;
  RowMax max_;
};

class MaxPoolFloat final : public Pool2DFloat {
 public:
  MaxPoolFloat(const MicroKernels& kernels, const reference::Pool2DShape& shape)
      : pool_(kernels, shape, kernels.max_row_float) {}
  size_t scratch_bytes() const override { return pool_.scratch_bytes(); }
  const char* algorithm() const override { return pool_.algorithm(); }
  void run(const float* input, float* output, ThreadPool& pool) const override {
    pool_.run(input, output, pool);
  }

 private:
  OptimizedMaxPool2D<float> pool_;
};

class MaxPoolInt8 final : public Pool2DInt8 {
 public:
  MaxPoolInt8(const MicroKernels& kernels, const reference::Pool2DShape& shape)
      : pool_(kernels, shape, kernels.max_row_int8) {}
  size_t scratch_bytes() const override { return pool_.scratch_bytes(); }
  const char* algorithm() const override { return pool_.algorithm(); }
  void run(const int8_t* input, int8_t* output, ThreadPool& pool) const override {
    pool_.run(input, output, pool);
  }

 private:
  OptimizedMaxPool2D<int8_t> pool_;
};

// Every output sums its valid taps in the reference's order (kernel rows, then columns), so
// the average has the reference's bits: an int8 AveragePool run in the float domain must encode
// exactly the reference's values. With stride 1 the outputs whose taps are all inside the input
// are independent lanes: each tap adds one contiguous input run to a run of outputs.
class AveragePoolFloat final : public Pool2DFloat {
 public:
  AveragePoolFloat(const MicroKernels& kernels, const reference::Pool2DShape& shape,
                   bool count_include_pad)
      : kernels_(kernels), shape_(shape), count_include_pad_(count_include_pad) {
    const reference::Window2D& w = shape_.window;
    interior_begin_ = w.output_width;
    interior_end_ = w.output_width;
    if (w.stride_width != 1) return;
    // ow - pad_left >= 0 and ow - pad_left + (kernel_width - 1) x dilation < input_width.
    const int64_t begin = std::min(w.pad_left, w.output_width);
    const int64_t end =
        std::clamp<int64_t>(w.input_width + w.pad_left - (w.kernel_width - 1) * w.dilation_width,
                            begin, w.output_width);
    interior_begin_ = begin;
    interior_end_ = end;
  }

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const float* input, float* output, ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    for_each_plane(shape_, pool, [&](int64_t plane, size_t) {
      const float* plane_input = input + plane * w.input_height * w.input_width;
      float* plane_output = output + plane * w.output_height * w.output_width;
      for (int64_t oh = 0; oh < w.output_height; ++oh) {
        const int64_t row0 = oh * w.stride_height - w.pad_top;
        const TapRange rows = valid_taps(row0, w.kernel_height, w.dilation_height, w.input_height);
        const int64_t padded_rows = taps_inside(row0, w.kernel_height, w.dilation_height,
                                                -w.pad_top, w.input_height + w.pad_bottom);
        float* out = plane_output + oh * w.output_width;
        // Interior outputs: sums first (in out), divided below with the edge outputs.
        std::fill(out + interior_begin_, out + interior_end_, 0.0f);
        for (int64_t tap_row = rows.first; tap_row < rows.end; ++tap_row) {
          const float* in = plane_input + (row0 + tap_row * w.dilation_height) * w.input_width;
          for (int64_t tap = 0; tap < w.kernel_width; ++tap) {
            kernels_.add_row_float(out + interior_begin_,
                                   in + interior_begin_ - w.pad_left + tap * w.dilation_width,
                                   static_cast<size_t>(interior_end_ - interior_begin_));
          }
        }
        for (int64_t ow = 0; ow < w.output_width; ++ow) {
          const int64_t column0 = ow * w.stride_width - w.pad_left;
          const TapRange columns =
              valid_taps(column0, w.kernel_width, w.dilation_width, w.input_width);
          float sum = 0.0f;
          if (ow >= interior_begin_ && ow < interior_end_) {
            sum = out[ow];
          } else {
            for (int64_t tap_row = rows.first; tap_row < rows.end; ++tap_row) {
              const float* in = plane_input + (row0 + tap_row * w.dilation_height) * w.input_width;
              for (int64_t tap = columns.first; tap < columns.end; ++tap) {
                sum += in[column0 + tap * w.dilation_width];
              }
            }
          }
          const int64_t divisor =
              count_include_pad_
                  ? padded_rows * taps_inside(column0, w.kernel_width, w.dilation_width,
                                              -w.pad_left, w.input_width + w.pad_right)
                  : std::max<int64_t>(rows.end - rows.first, 0) *
                        std::max<int64_t>(columns.end - columns.first, 0);
          out[ow] = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
        }
      }
    });
  }

 private:
  const MicroKernels& kernels_;
  reference::Pool2DShape shape_;
  bool count_include_pad_;
  int64_t interior_begin_ = 0;
  int64_t interior_end_ = 0;
};

// Each plane's sum runs in the reference's order (the same bits, see AveragePoolFloat); the
// planes are split over the pool.
class GlobalAveragePoolFloat final : public GlobalPoolFloat {
 public:
  GlobalAveragePoolFloat(const MicroKernels& kernels, int64_t planes, int64_t plane_size)
      : kernels_(kernels), planes_(planes), plane_size_(plane_size) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const float* input, float* output, ThreadPool& pool) const override {
    auto run_plane = [&](size_t plane, size_t) {
      const float* values = input + static_cast<int64_t>(plane) * plane_size_;
      float sum = 0.0f;
      for (int64_t i = 0; i < plane_size_; ++i) sum += values[i];
      output[plane] = sum / static_cast<float>(plane_size_);
    };
    if (planes_ * plane_size_ < kParallelElements || planes_ == 1) {
      for (int64_t plane = 0; plane < planes_; ++plane) run_plane(static_cast<size_t>(plane), 0);
      return;
    }
    pool.parallel_for(static_cast<size_t>(planes_), run_plane);
  }

 private:
  const MicroKernels& kernels_;
  int64_t planes_;
  int64_t plane_size_;
};

}  // namespace

std::unique_ptr<Pool2DFloat> make_max_pool2d(const MicroKernels& kernels,
                                             const reference::Pool2DShape& shape) {
  return std::make_unique<MaxPoolFloat>(kernels, shape);
}

std::unique_ptr<Pool2DInt8> make_max_pool2d_int8(const MicroKernels& kernels,
                                                 const reference::Pool2DShape& shape) {
  return std::make_unique<MaxPoolInt8>(kernels, shape);
}

std::unique_ptr<Pool2DFloat> make_average_pool2d(const MicroKernels& kernels,
                                                 const reference::Pool2DShape& shape,
                                                 bool count_include_pad) {
  return std::make_unique<AveragePoolFloat>(kernels, shape, count_include_pad);
}

std::unique_ptr<GlobalPoolFloat> make_global_average_pool(const MicroKernels& kernels,
                                                          int64_t planes, int64_t plane_size) {
  if (plane_size <= 0) return nullptr;
  return std::make_unique<GlobalAveragePoolFloat>(kernels, planes, plane_size);
}

}  // namespace orknn::kernels::cpu::optimized
