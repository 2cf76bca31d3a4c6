// MaxPool / AveragePool 2-D and GlobalAveragePool on NCHW planes, split over the pool by
// planes. Max pooling uses the window's separability: per output row, the valid input rows of
// its window are first combined element-wise into one row (vectorized over the whole input
// width), then each output takes the max of its valid columns of that row; the result is the
// reference's (a max picks an input value). Averages keep the reference's summation order (see
// AveragePoolFloat), so they too give its exact bits.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

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

// Max pooling of one plane in bands of output rows, in two passes that both run on the
// micro-kernels' element-wise max rows:
//  * rows: each output row of the band becomes the max of its valid input rows (a whole input
//    row per tap). With stride 1 the output rows whose taps are all inside the input read
//    consecutive input rows, so a run of them is one long row per tap (a 20-wide plane is not
//    cut into 20-element calls).
//  * columns: the outputs whose taps are all inside the row ("interior") are, per tap, a
//    contiguous run of the combined row (stride 1) or of one of its column phases (stride s:
//    phase p holds columns p, p + s, ...). When an input row is exactly stride x output_width
//    wide ("same" padding: YOLOv5s's 5x5 stride 1, ResNet's 3x3 stride 2) the band's interior
//    runs are one long run per tap across its rows; what that computes at the row edges is
//    overwritten by the edge outputs, which take their valid taps one by one.
// Every output is the first of its valid taps replaced only by a strictly larger value, in
// tap order, as before; the per-output tap walk of the column pass (its window bounds found
// per output) took 1.3 ms of resnet18 int8's 64x112x112 MaxPool.
template <typename Element>
class OptimizedMaxPool2D final {
 public:
  using RowMax = void (*)(Element*, const Element*, size_t);
  OptimizedMaxPool2D(const MicroKernels& kernels, const reference::Pool2DShape& shape, RowMax max)
      : kernels_(kernels), shape_(shape), max_(max) {
    const reference::Window2D& w = shape_.window;
    for (int64_t oh = 0; oh < w.output_height; ++oh) {
      row_taps_.push_back(valid_taps(oh * w.stride_height - w.pad_top, w.kernel_height,
                                     w.dilation_height, w.input_height));
    }
    column_taps_.reserve(static_cast<size_t>(w.output_width));
    for (int64_t ow = 0; ow < w.output_width; ++ow) {
      column_taps_.push_back(valid_taps(ow * w.stride_width - w.pad_left, w.kernel_width,
                                        w.dilation_width, w.input_width));
    }
    // The interior outputs are one range: a window slides right by the stride per output.
    interior_begin_ = w.output_width;
    interior_end_ = w.output_width;
    for (int64_t ow = 0; ow < w.output_width; ++ow) {
      if (column_taps_[static_cast<size_t>(ow)].first != 0 ||
          column_taps_[static_cast<size_t>(ow)].end != w.kernel_width) {
        continue;
      }
      if (interior_begin_ == w.output_width) interior_begin_ = ow;
      interior_end_ = ow + 1;
    }
    const int64_t rows_per_band = std::max<int64_t>(1, kBandElements / w.input_width);
    band_rows_ = std::min<int64_t>(rows_per_band, std::max<int64_t>(w.output_height, 1));
    // Output row r's interior starts where input row r's would: one run over the whole band.
    flat_columns_ = w.input_width == w.stride_width * w.output_width;
  }

  size_t scratch_bytes() const {
    const reference::Window2D& w = shape_.window;
    // The band's combined rows, then their column phases (padded by a stride).
    const int64_t phases = w.stride_width > 1 ? band_rows_ * w.input_width + w.stride_width : 0;
    return static_cast<size_t>(band_rows_ * w.input_width + phases) * sizeof(Element);
  }
  const char* algorithm() const { return kernels_.name; }

  void run(const Element* input, Element* output, ThreadPool& pool) const {
    const reference::Window2D& w = shape_.window;
    for_each_plane(shape_, pool, [&](int64_t plane, size_t thread) {
      auto* combined = reinterpret_cast<Element*>(pool.scratch(thread, scratch_bytes()));
      Element* phases = combined + band_rows_ * w.input_width;
      const Element* plane_input = input + plane * w.input_height * w.input_width;
      Element* plane_output = output + plane * w.output_height * w.output_width;
      for (int64_t band = 0; band < w.output_height; band += band_rows_) {
        const int64_t rows = std::min(band_rows_, w.output_height - band);
        combine_rows(plane_input, band, rows, combined);
        pool_columns(combined, rows, phases, plane_output + band * w.output_width);
      }
    });
  }

 private:
  // Enough combined rows per band to make long runs, few enough to stay in L1.
  static constexpr int64_t kBandElements = 8192;

  bool full_rows(int64_t oh) const {
    const TapRange& taps = row_taps_[static_cast<size_t>(oh)];
    return taps.first == 0 && taps.end == shape_.window.kernel_height;
  }

  // combined[r] = the max of output row (band + r)'s valid input rows, r < rows.
  void combine_rows(const Element* plane_input, int64_t band, int64_t rows,
                    Element* combined) const {
    const reference::Window2D& w = shape_.window;
    const auto width = static_cast<size_t>(w.input_width);
    for (int64_t r = 0; r < rows;) {
      const int64_t oh = band + r;
      const TapRange& taps = row_taps_[static_cast<size_t>(oh)];
      Element* target = combined + r * w.input_width;
      if (taps.first >= taps.end) {
        std::fill(target, target + width, std::numeric_limits<Element>::lowest());
        ++r;
        continue;
      }
      // With stride 1, consecutive full output rows read consecutive input rows.
      int64_t run = 1;
      if (w.stride_height == 1 && full_rows(oh)) {
        while (r + run < rows && full_rows(oh + run)) ++run;
      }
      const size_t count = static_cast<size_t>(run) * width;
      const int64_t row0 = oh * w.stride_height - w.pad_top;
      std::memcpy(target, plane_input + (row0 + taps.first * w.dilation_height) * w.input_width,
                  count * sizeof(Element));
      for (int64_t tap = taps.first + 1; tap < taps.end; ++tap) {
        max_(target, plane_input + (row0 + tap * w.dilation_height) * w.input_width, count);
      }
      r += run;
    }
  }

  // out (rows x output_width) from the combined rows (rows x input_width).
  void pool_columns(const Element* combined, int64_t rows, Element* phases, Element* out) const {
    const reference::Window2D& w = shape_.window;
    const int64_t interior = interior_end_ - interior_begin_;
    if (interior > 0 && flat_columns_) {
      // Output i (flat over the band) reads combined[i x stride - pad_left + tap x dilation].
      pool_interior(combined, rows * w.input_width, phases,
                    static_cast<size_t>((rows - 1) * w.output_width + interior),
                    out + interior_begin_);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const Element* row = combined + r * w.input_width;
      Element* out_row = out + r * w.output_width;
      if (interior > 0 && !flat_columns_) {
        pool_interior(row, w.input_width, phases, static_cast<size_t>(interior),
                      out_row + interior_begin_);
      }
      for (int64_t ow = 0; ow < w.output_width; ++ow) {
        if (ow == interior_begin_ && interior > 0) ow = interior_end_;
        if (ow >= w.output_width) break;
        out_row[ow] = pool_edge(row, ow);
      }
    }
  }

  // out[j] = the max over taps of source[(interior_begin + j) x stride - pad_left + tap x
  // dilation], j < count, a contiguous run per tap (of a column phase when strided).
  void pool_interior(const Element* source, int64_t length, Element* phases, size_t count,
                     Element* out) const {
    const reference::Window2D& w = shape_.window;
    const int64_t stride = w.stride_width;
    const int64_t phase_length = (length + stride - 1) / stride;
    if (stride == 2) {
      split_two_phases(source, length, phases, phases + phase_length);
    } else if (stride > 2) {
      for (int64_t phase = 0; phase < stride; ++phase) {
        Element* target = phases + phase * phase_length;
        for (int64_t j = 0; phase + j * stride < length; ++j)
          target[j] = source[phase + j * stride];
      }
    }
    for (int64_t tap = 0; tap < w.kernel_width; ++tap) {
      // Column of this tap for the first interior output; never negative there.
      const int64_t column = interior_begin_ * stride - w.pad_left + tap * w.dilation_width;
      const Element* run = stride > 1 ? phases + (column % stride) * phase_length + column / stride
                                      : source + column;
      if (tap == 0) {
        std::memcpy(out, run, count * sizeof(Element));
      } else {
        max_(out, run, count);
      }
    }
  }

  // Even and odd columns; a constant stride the compiler vectorizes.
  static void split_two_phases(const Element* __restrict source, int64_t length,
                               Element* __restrict even, Element* __restrict odd) {
    const int64_t pairs = length / 2;
    for (int64_t j = 0; j < pairs; ++j) {
      even[j] = source[2 * j];
      odd[j] = source[2 * j + 1];
    }
    if (length % 2 != 0) even[pairs] = source[length - 1];
  }

  Element pool_edge(const Element* row, int64_t ow) const {
    const reference::Window2D& w = shape_.window;
    const TapRange& taps = column_taps_[static_cast<size_t>(ow)];
    const int64_t column0 = ow * w.stride_width - w.pad_left;
    if (taps.first >= taps.end) return std::numeric_limits<Element>::lowest();
    Element best = row[column0 + taps.first * w.dilation_width];
    for (int64_t tap = taps.first + 1; tap < taps.end; ++tap) {
      const Element value = row[column0 + tap * w.dilation_width];
      best = value > best ? value : best;
    }
    return best;
  }

  const MicroKernels& kernels_;
  reference::Pool2DShape shape_;
  RowMax max_;
  std::vector<TapRange> row_taps_;
  std::vector<TapRange> column_taps_;
  int64_t interior_begin_ = 0;
  int64_t interior_end_ = 0;
  int64_t band_rows_ = 1;
  bool flat_columns_ = false;
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

// 3x3 float max pooling at stride 2 across, dilation 1, pad_left 1 (ResNet's stem pooling) on
// the table's max_pool_stride2_rows, in one pass read in place. A task is a run of planes of
// about kTaskOutputs outputs.
class MaxPoolStride2Float final : public Pool2DFloat {
 public:
  static bool applies(const MicroKernels& kernels, const reference::Pool2DShape& shape) {
    const reference::Window2D& w = shape.window;
    if (kernels.max_pool_stride2_rows == nullptr || w.kernel_height != 3 || w.kernel_width != 3 ||
        w.stride_width != 2 || w.dilation_height != 1 || w.dilation_width != 1 || w.pad_left != 1) {
      return false;
    }
    // Every output has a tap inside the input (the kernel's promise).
    for (int64_t oh = 0; oh < w.output_height; ++oh) {
      const TapRange taps = valid_taps(oh * w.stride_height - w.pad_top, 3, 1, w.input_height);
      if (taps.first >= taps.end) return false;
    }
    const TapRange last = valid_taps((w.output_width - 1) * 2 - 1, 3, 1, w.input_width);
    return last.first < last.end;
  }

  MaxPoolStride2Float(const MicroKernels& kernels, const reference::Pool2DShape& shape)
      : kernels_(kernels), shape_(shape) {
    const reference::Window2D& w = shape.window;
    constexpr int64_t kTaskOutputs = 4096;
    planes_per_task_ =
        std::max<int64_t>(1, kTaskOutputs / std::max<int64_t>(1, w.output_height * w.output_width));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s 3x3 stride 2 rows", kernels.name);
  }
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, float* output, ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    const int64_t runs = (shape_.planes + planes_per_task_ - 1) / planes_per_task_;
    pool.parallel_for(static_cast<size_t>(runs), [&](size_t run, size_t) {
      const int64_t first = static_cast<int64_t>(run) * planes_per_task_;
      MaxPoolStride2Rows rows{};
      rows.input = input + first * w.input_height * w.input_width;
      rows.input_height = static_cast<size_t>(w.input_height);
      rows.input_width = static_cast<size_t>(w.input_width);
      rows.planes = static_cast<size_t>(std::min(planes_per_task_, shape_.planes - first));
      rows.stride_height = static_cast<size_t>(w.stride_height);
      rows.pad_top = static_cast<size_t>(w.pad_top);
      rows.output_height = static_cast<size_t>(w.output_height);
      rows.output_width = static_cast<size_t>(w.output_width);
      rows.output = output + first * w.output_height * w.output_width;
      kernels_.max_pool_stride2_rows(rows);
    });
  }

 private:
  const MicroKernels& kernels_;
  const reference::Pool2DShape shape_;
  int64_t planes_per_task_ = 1;
  char algorithm_[48];
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

// Each plane's sum runs in the reference's order (the same bits, see AveragePoolFloat), so a
// plane is one chain of dependent additions: 49 of them (a 7x7 plane) wait about 200 cycles.
// Eight planes are summed side by side, eight independent chains, which the core overlaps
// (mobilenet_v2's 1280 planes of 49: see docs/cpu-kernels.md, session 7). Tasks of 64 planes
// are split over the pool. `Values` gives the float value of an input element: the element
// itself (float32), or an int8 code's decoded value looked up in its table (session 8: the
// float domain decoded the whole tensor on one thread first, then summed the same values).
template <typename Interface, typename Element, typename Values>
class GlobalAveragePool final : public Interface {
 public:
  GlobalAveragePool(const MicroKernels& kernels, int64_t planes, int64_t plane_size, Values values)
      : kernels_(kernels), planes_(planes), plane_size_(plane_size), values_(values) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const Element* input, float* output, ThreadPool& pool) const override {
    const int64_t tasks = (planes_ + kPlanesPerTask - 1) / kPlanesPerTask;
    auto run_task = [&](size_t task, size_t) {
      const int64_t first = static_cast<int64_t>(task) * kPlanesPerTask;
      const int64_t end = std::min(planes_, first + kPlanesPerTask);
      int64_t plane = first;
      for (; plane + kChains <= end; plane += kChains) sum_planes<kChains>(input, output, plane);
      for (; plane < end; ++plane) sum_planes<1>(input, output, plane);
    };
    if (planes_ * plane_size_ < kParallelElements || tasks == 1) {
      for (int64_t task = 0; task < tasks; ++task) run_task(static_cast<size_t>(task), 0);
      return;
    }
    pool.parallel_for(static_cast<size_t>(tasks), run_task);
  }

 private:
  static constexpr int64_t kChains = 8;
  static constexpr int64_t kPlanesPerTask = 64;

  // Planes [first, first + kCount), each summed in order.
  template <int64_t kCount>
  void sum_planes(const Element* input, float* output, int64_t first) const {
    const Element* elements = input + first * plane_size_;
    float sums[kCount] = {};
    for (int64_t i = 0; i < plane_size_; ++i) {
      for (int64_t k = 0; k < kCount; ++k) sums[k] += values_(elements[k * plane_size_ + i]);
    }
    for (int64_t k = 0; k < kCount; ++k)
      output[first + k] = sums[k] / static_cast<float>(plane_size_);
  }

  const MicroKernels& kernels_;
  int64_t planes_;
  int64_t plane_size_;
  Values values_;
};

struct FloatValues {
  float operator()(float value) const { return value; }
};

// An int8 code's decoded value, from a copy of the table (no pointer into the caller's data).
struct DecodedCodes {
  float table[256];
  float operator()(int8_t code) const { return table[static_cast<uint8_t>(code)]; }
};

}  // namespace

std::unique_ptr<Pool2DFloat> make_max_pool2d(const MicroKernels& kernels,
                                             const reference::Pool2DShape& shape) {
  if (MaxPoolStride2Float::applies(kernels, shape)) {
    return std::make_unique<MaxPoolStride2Float>(kernels, shape);
  }
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
  return std::make_unique<GlobalAveragePool<GlobalPoolFloat, float, FloatValues>>(
      kernels, planes, plane_size, FloatValues{});
}

std::unique_ptr<GlobalPoolInt8> make_global_average_pool_int8(const MicroKernels& kernels,
                                                              int64_t planes, int64_t plane_size,
                                                              const float* decoded) {
  if (plane_size <= 0) return nullptr;
  DecodedCodes codes;
  std::copy(decoded, decoded + 256, codes.table);
  return std::make_unique<GlobalAveragePool<GlobalPoolInt8, int8_t, DecodedCodes>>(
      kernels, planes, plane_size, codes);
}

}  // namespace orknn::kernels::cpu::optimized
