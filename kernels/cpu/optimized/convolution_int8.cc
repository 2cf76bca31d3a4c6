// int8 convolution drivers (docs/quantization.md, bit-exact with the reference).
//
// The accumulator is acc = bias[c] + sum (x - zx) * (w - zw[c]). Both offsets fit int16, so the
// GEMM packs x - zx and w - zw[c] as int16 and sums pairs of products exactly with pmaddwd
// semantics; padding packs as 0, which is x == zx. int32 addition is associative and the
// factory's worst-case check keeps every partial sum in range, so any summation order gives the
// reference's accumulator, and the requantization micro-kernel reproduces its double arithmetic.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::Int8Requantization;

int64_t largest_offset(int64_t zero_point) {
  return std::max<int64_t>(127 - zero_point, zero_point + 128);
}

// The requantization micro-kernel, or with a fused SiLU the reference epilogue per element: the
// epilogue's result is defined by std::exp, which has no bit-identical vector form here.
void requantize_row(const MicroKernels& kernels, const Int8Requantization& q, size_t channel,
                    const RequantizeRow& row) {
  if (!q.silu) {
    kernels.requantize_row(row);
    return;
  }
  for (size_t i = 0; i < row.count; ++i) {
    row.output[i] = reference::requantize_channel(q, row.accumulators[i], channel);
  }
}

int64_t largest_weight_offset(const Int8Requantization& q) {
  int64_t largest = 0;
  for (int32_t zero_point : q.weight_zero_points) {
    largest = std::max(largest, largest_offset(zero_point));
  }
  return largest;
}

class GemmConvolutionInt8 final : public Conv2DInt8 {
 public:
  GemmConvolutionInt8(const MicroKernels& kernels, const Conv2DShape& shape,
                      const Int8Requantization& requantization, const int8_t* constant_weights)
      : kernels_(kernels), shape_(shape), q_(requantization), geometry_(im2col_geometry(shape)) {
    mr_ = kernels.int16_rows;
    nr_ = kernels.int16_columns;
    group_rows_ = static_cast<size_t>(shape.output_channels / shape.groups);
    depth_ = static_cast<size_t>(geometry_.depth());
    depth_pairs_ = divide_round_up(depth_, 2);
    columns_ = static_cast<size_t>(geometry_.columns());
    group_weights_size_ = divide_round_up(group_rows_, mr_) * depth_pairs_ * mr_ * 2;
    const size_t pair_block = std::min(kInt16ConvolutionLimits.depth_block, depth_pairs_);
    const size_t column_block =
        std::min(kInt16ConvolutionLimits.column_block, round_up(columns_, nr_));
    const size_t row_block =
        std::min(kInt16ConvolutionLimits.task_rows, round_up(group_rows_, mr_));
    segments_offset_ = align_bytes(pair_block * 2 * column_block * sizeof(int16_t));
    accumulators_offset_ =
        segments_offset_ + align_bytes(max_segments(column_block) * sizeof(Segment));
    rows_offset_ = accumulators_offset_ + align_bytes(row_block * column_block * sizeof(int32_t));
    task_bytes_ = rows_offset_ + align_bytes(2 * column_block);
    const size_t weights_size = static_cast<size_t>(shape.groups) * group_weights_size_;
    if (constant_weights) {
      packed_weights_.resize(weights_size);
      pack_weights(constant_weights, packed_weights_.data());
    } else {
      dynamic_weights_bytes_ = align_bytes(weights_size * sizeof(int16_t));
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 gemm %zux%zu", kernels.name, mr_, nr_);
  }

  size_t scratch_bytes() const override { return task_bytes_ + dynamic_weights_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t* weights, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const int16_t* packed = packed_weights_.data();
    if (packed_weights_.empty()) {
      auto* area = reinterpret_cast<int16_t*>(pool.scratch(0, scratch_bytes()) + task_bytes_);
      pack_weights(weights, area);
      packed = area;
    }
    const size_t images = static_cast<size_t>(shape_.batch);
    const size_t groups = static_cast<size_t>(shape_.groups);
    const OutputBlocks blocks =
        choose_output_blocks(group_rows_, columns_, images * groups, pool.thread_count(), mr_, nr_,
                             kInt16ConvolutionLimits);
    const size_t tasks = images * groups * blocks.row_blocks * blocks.column_blocks;
    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      const size_t column_block = task % blocks.column_blocks;
      task /= blocks.column_blocks;
      const size_t row_block = task % blocks.row_blocks;
      task /= blocks.row_blocks;
      const size_t group = task % groups;
      const size_t image = task / groups;
      run_block(input, packed, bias, output, image, group, row_block * blocks.row_block,
                blocks.row_block, column_block * blocks.column_block, blocks.column_block,
                pool.scratch(thread, task_bytes_));
    });
  }

 private:
  // Weights [M][C/g][kh][kw] -> per group, panels of MR output channels: [panel][pair][MR][2]
  // holding w - zw[c].
  void pack_weights(const int8_t* weights, int16_t* packed) const {
    const size_t groups = static_cast<size_t>(shape_.groups);
    for (size_t group = 0; group < groups; ++group) {
      int16_t* out = packed + group * group_weights_size_;
      for (size_t row0 = 0; row0 < group_rows_; row0 += mr_) {
        for (size_t pair = 0; pair < depth_pairs_; ++pair) {
          for (size_t r = 0; r < mr_; ++r) {
            const size_t row = row0 + r;
            for (size_t half = 0; half < 2; ++half) {
              const size_t k = 2 * pair + half;
              int16_t value = 0;
              if (row < group_rows_ && k < depth_) {
                const size_t channel = group * group_rows_ + row;
                value = static_cast<int16_t>(weights[channel * depth_ + k] -
                                             q_.weight_zero_points[channel]);
              }
              *out++ = value;
            }
          }
        }
      }
    }
  }

  void run_block(const int8_t* input, const int16_t* packed_weights, const int32_t* bias,
                 int8_t* output, size_t image, size_t group, size_t first_row, size_t row_block,
                 size_t first_column, size_t column_block, uint8_t* scratch) const {
    if (first_row >= group_rows_ || first_column >= columns_) return;
    const size_t rows = std::min(row_block, group_rows_ - first_row);
    const size_t columns = std::min(column_block, columns_ - first_column);
    auto* packed_b = reinterpret_cast<int16_t*>(scratch);
    auto* segments = reinterpret_cast<Segment*>(scratch + segments_offset_);
    auto* accumulators = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
    const size_t accumulator_stride = round_up(columns, nr_);
    const size_t segment_count = build_segments(geometry_, first_column, columns, nr_, segments);

    const size_t input_channels = static_cast<size_t>(shape_.input_channels);
    const size_t group_channels = input_channels / static_cast<size_t>(shape_.groups);
    const size_t plane =
        static_cast<size_t>(shape_.window.input_height * shape_.window.input_width);
    const int8_t* group_input = input + (image * input_channels + group * group_channels) * plane;
    const int16_t* group_weights = packed_weights + group * group_weights_size_;
    const size_t first_channel = group * group_rows_;
    const size_t panels = divide_round_up(columns, nr_);

    for (size_t pair_begin = 0; pair_begin < depth_pairs_;
         pair_begin += kInt16ConvolutionLimits.depth_block) {
      const size_t pairs = std::min(kInt16ConvolutionLimits.depth_block, depth_pairs_ - pair_begin);
      pack_im2col_int16_pairs(kernels_, geometry_, group_input, q_.input_zero_point, first_column,
                              pair_begin, pairs, segments, segment_count, columns,
                              reinterpret_cast<int8_t*>(scratch + rows_offset_), packed_b);
      Int16PairTile tile{};
      tile.depth_pairs = pairs;
      tile.c_stride = accumulator_stride;
      tile.accumulate = pair_begin > 0;
      const size_t end_row = first_row + rows;
      for (size_t block_row = first_row; block_row < end_row;
           block_row += kInt16ConvolutionLimits.row_block) {
        const size_t block_end = std::min(end_row, block_row + kInt16ConvolutionLimits.row_block);
        for (size_t panel = 0; panel < panels; ++panel) {
          tile.columns = std::min(nr_, columns - panel * nr_);
          tile.b = packed_b + panel * pairs * nr_ * 2;
          for (size_t row = block_row; row < block_end; row += mr_) {
            tile.rows = std::min(mr_, block_end - row);
            tile.a = group_weights + ((row / mr_) * depth_pairs_ + pair_begin) * mr_ * 2;
            tile.c = accumulators + (row - first_row) * accumulator_stride + panel * nr_;
            tile.row_bias = !tile.accumulate && bias ? bias + first_channel + row : nullptr;
            kernels_.int16_pair_tile(tile);
          }
        }
      }
    }

    for (size_t r = 0; r < rows; ++r) {
      const size_t channel = first_channel + first_row + r;
      RequantizeRow row{};
      row.accumulators = accumulators + r * accumulator_stride;
      row.count = columns;
      row.multipliers = &q_.multipliers[channel];
      row.per_element = false;
      row.output_zero_point = q_.output_zero_point;
      row.output_minimum = q_.output_minimum;
      row.output_maximum = q_.output_maximum;
      row.small_multipliers = small_multipliers_;
      row.output = output +
                   (image * static_cast<size_t>(shape_.output_channels) + channel) * columns_ +
                   first_column;
      requantize_row(kernels_, q_, channel, row);
    }
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization q_;
  const bool small_multipliers_ =
      small_multipliers(q_.multipliers.data(), q_.multipliers.size(), q_.output_zero_point);
  const Im2colGeometry geometry_;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t group_rows_ = 0;
  size_t depth_ = 0;
  size_t depth_pairs_ = 0;
  size_t columns_ = 0;
  size_t group_weights_size_ = 0;
  size_t segments_offset_ = 0;
  size_t accumulators_offset_ = 0;
  size_t rows_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t dynamic_weights_bytes_ = 0;
  std::vector<int16_t> packed_weights_;
  char algorithm_[64];
};

// Depthwise int8 on the float depthwise rows: x - zx and w - zw are small integers, and while
// taps x max|x - zx| x max|w - zw| < 2^24 every partial sum is an integer that float32
// represents exactly, so the float sum is the exact integer sum.
class DepthwiseConvolutionInt8 final : public Conv2DInt8 {
 public:
  DepthwiseConvolutionInt8(const MicroKernels& kernels, const Conv2DShape& shape,
                           const Int8Requantization& requantization, const int8_t* constant_weights)
      : kernels_(kernels), shape_(shape), q_(requantization), plane_(padded_plane(shape.window)) {
    taps_ = static_cast<size_t>(shape.window.kernel_height * shape.window.kernel_width);
    const size_t output_channels = static_cast<size_t>(shape.output_channels);
    weights_.resize(output_channels * taps_);
    for (size_t channel = 0; channel < output_channels; ++channel) {
      for (size_t t = 0; t < taps_; ++t) {
        weights_[channel * taps_ + t] = static_cast<float>(constant_weights[channel * taps_ + t] -
                                                           q_.weight_zero_points[channel]);
      }
    }
    const size_t outputs =
        static_cast<size_t>(shape.window.output_height * shape.window.output_width);
    sums_offset_ = align_bytes(plane_.size() * sizeof(float));
    accumulators_offset_ = sums_offset_ + align_bytes(outputs * sizeof(float));
    line_offset_ = accumulators_offset_ + align_bytes(outputs * sizeof(int32_t));
    scratch_bytes_ = line_offset_ + line_size(plane_) * sizeof(float);
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 depthwise %lldx%lld", kernels.name,
                  static_cast<long long>(shape.window.kernel_height),
                  static_cast<long long>(shape.window.kernel_width));
  }

  size_t scratch_bytes() const override { return scratch_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t multiplier = static_cast<size_t>(shape_.output_channels) / channels;
    const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
    const size_t output_plane = static_cast<size_t>(w.output_height * w.output_width);
    const int32_t input_zero_point = q_.input_zero_point;
    pool.parallel_for(static_cast<size_t>(shape_.batch) * channels, [&](size_t task,
                                                                        size_t thread) {
      uint8_t* scratch = pool.scratch(thread, scratch_bytes_);
      auto* padded = reinterpret_cast<float*>(scratch);
      auto* sums = reinterpret_cast<float*>(scratch + sums_offset_);
      auto* accumulators = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
      fill_padded_plane(
          plane_, input + task * input_plane, static_cast<size_t>(w.input_height),
          static_cast<size_t>(w.input_width),
          [input_zero_point](int8_t value) { return static_cast<float>(value - input_zero_point); },
          reinterpret_cast<float*>(scratch + line_offset_), padded);
      const size_t image = task / channels;
      const size_t channel = task % channels;
      DepthwisePlane plane = plane_description(w, plane_, padded);
      plane.output = sums;
      for (size_t m = 0; m < multiplier; ++m) {
        const size_t output_channel = channel * multiplier + m;
        plane.weights = weights_.data() + output_channel * taps_;
        kernels_.depthwise_plane(plane);
        const int32_t channel_bias = bias ? bias[output_channel] : 0;
        for (size_t i = 0; i < output_plane; ++i) {
          accumulators[i] = static_cast<int32_t>(sums[i]) + channel_bias;
        }
        RequantizeRow requantize{};
        requantize.accumulators = accumulators;
        requantize.count = output_plane;
        requantize.multipliers = &q_.multipliers[output_channel];
        requantize.output_zero_point = q_.output_zero_point;
        requantize.output_minimum = q_.output_minimum;
        requantize.output_maximum = q_.output_maximum;
        requantize.small_multipliers = small_multipliers_;
        requantize.output =
            output +
            (image * static_cast<size_t>(shape_.output_channels) + output_channel) * output_plane;
        requantize_row(kernels_, q_, output_channel, requantize);
      }
    });
  }

 private:
  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization q_;
  const bool small_multipliers_ =
      small_multipliers(q_.multipliers.data(), q_.multipliers.size(), q_.output_zero_point);
  const PaddedPlane plane_;
  size_t taps_ = 0;
  std::vector<float> weights_;
  size_t sums_offset_ = 0;
  size_t accumulators_offset_ = 0;
  size_t line_offset_ = 0;
  size_t scratch_bytes_ = 0;
  char algorithm_[64];
};

// x - zx and w - zw must fit int16 without reaching -32768 (pmaddwd's one overflowing pair).
bool offsets_fit_int16(const Int8Requantization& q) {
  constexpr int64_t kLimit = 32767;
  if (largest_offset(q.input_zero_point) > kLimit) return false;
  return largest_weight_offset(q) <= kLimit;
}

}  // namespace

std::unique_ptr<Conv2DInt8> make_depthwise_conv2d_int8(const MicroKernels& kernels,
                                                       const Conv2DShape& shape,
                                                       const Int8Requantization& requantization,
                                                       const int8_t* constant_weights) {
  if (!is_depthwise(shape) || !constant_weights) return nullptr;
  const int64_t taps = shape.window.kernel_height * shape.window.kernel_width;
  const int64_t bound = taps * largest_offset(requantization.input_zero_point) *
                        largest_weight_offset(requantization);
  if (bound >= (int64_t{1} << 24)) return nullptr;
  return std::make_unique<DepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                    constant_weights);
}

std::unique_ptr<Conv2DInt8> make_gemm_conv2d_int8(const MicroKernels& kernels,
                                                  const Conv2DShape& shape,
                                                  const Int8Requantization& requantization,
                                                  const int8_t* constant_weights) {
  if (!offsets_fit_int16(requantization)) return nullptr;
  return std::make_unique<GemmConvolutionInt8>(kernels, shape, requantization, constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
