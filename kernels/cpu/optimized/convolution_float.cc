// float32 convolution drivers: GEMM on packed panels (any convolution) and depthwise planes.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;

// Output = W x im2col(input) per image and group: A is the group's weights (rows = output
// channels, packed at build), B the im2col panels packed per task and depth chunk, C the output
// rows (pixels contiguous), bias and activation fused into the tiles.
class GemmConvolution final : public Conv2DFloat {
 public:
  GemmConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                  const FusedActivation& activation, const float* constant_weights)
      : kernels_(kernels),
        shape_(shape),
        geometry_(im2col_geometry(shape)),
        activation_(to_float_activation(activation)),
        has_activation_(activation.kind != FusedActivation::Kind::kNone) {
    mr_ = kernels.float_rows;
    nr_ = kernels.float_columns;
    group_rows_ = static_cast<size_t>(shape.output_channels / shape.groups);
    depth_ = static_cast<size_t>(geometry_.depth());
    columns_ = static_cast<size_t>(geometry_.columns());
    group_weights_size_ = divide_round_up(group_rows_, mr_) * depth_ * mr_;
    const size_t depth_block = std::min(kFloatConvolutionLimits.depth_block, depth_);
    const size_t column_block =
        std::min(kFloatConvolutionLimits.column_block, round_up(columns_, nr_));
    segments_offset_ = align_bytes(depth_block * column_block * sizeof(float));
    task_bytes_ = segments_offset_ + align_bytes(max_segments(column_block) * sizeof(Segment));
    const size_t weights_size = static_cast<size_t>(shape.groups) * group_weights_size_;
    if (constant_weights) {
      packed_weights_.resize(weights_size);
      pack_weights(constant_weights, packed_weights_.data());
    } else {
      dynamic_weights_bytes_ = align_bytes(weights_size * sizeof(float));
    }
    // A pointwise convolution's B is the input itself (one row of pixels per channel). With few
    // output channels packing it costs more than it saves, so full panels are read in place
    // (only a partial last panel is packed); with many, each packed panel is reused often
    // enough that aligned, contiguous loads win.
    const bool pointwise = geometry_.input_height == 1 && geometry_.output_height == 1 &&
                           geometry_.kernel_width == 1 && geometry_.stride_width == 1 &&
                           geometry_.pad_left == 0 &&
                           geometry_.output_width == geometry_.input_width;
    in_place_b_ = pointwise && group_rows_ <= 96;
    std::snprintf(algorithm_, sizeof(algorithm_), "%s gemm %zux%zu%s", kernels.name, mr_, nr_,
                  in_place_b_ ? " pointwise in place"
                  : pointwise ? " pointwise"
                              : " im2col");
  }

  size_t scratch_bytes() const override { return task_bytes_ + dynamic_weights_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool& pool) const override {
    const float* packed = packed_weights_.data();
    if (packed_weights_.empty()) {
      // Weights computed by the graph: packed into thread 0's scratch, after its task area.
      auto* area = reinterpret_cast<float*>(pool.scratch(0, scratch_bytes()) + task_bytes_);
      pack_weights(weights, area);
      packed = area;
    }
    const size_t images = static_cast<size_t>(shape_.batch);
    const size_t groups = static_cast<size_t>(shape_.groups);
    const OutputBlocks blocks =
        choose_output_blocks(group_rows_, columns_, images * groups, pool.thread_count(), mr_, nr_,
                             kFloatConvolutionLimits);
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
  // Weights [M][C/g][kh][kw] -> per group, panels of MR output channels: [panel][depth][MR].
  void pack_weights(const float* weights, float* packed) const {
    const size_t groups = static_cast<size_t>(shape_.groups);
    for (size_t group = 0; group < groups; ++group) {
      float* out = packed + group * group_weights_size_;
      for (size_t row0 = 0; row0 < group_rows_; row0 += mr_) {
        for (size_t k = 0; k < depth_; ++k) {
          for (size_t r = 0; r < mr_; ++r) {
            const size_t row = row0 + r;
            *out++ = row < group_rows_ ? weights[(group * group_rows_ + row) * depth_ + k] : 0.0f;
          }
        }
      }
    }
  }

  void run_block(const float* input, const float* packed_weights, const float* bias, float* output,
                 size_t image, size_t group, size_t first_row, size_t row_block,
                 size_t first_column, size_t column_block, uint8_t* scratch) const {
    if (first_row >= group_rows_ || first_column >= columns_) return;
    const size_t rows = std::min(row_block, group_rows_ - first_row);
    const size_t columns = std::min(column_block, columns_ - first_column);
    auto* packed_b = reinterpret_cast<float*>(scratch);
    auto* segments = reinterpret_cast<Segment*>(scratch + segments_offset_);
    const size_t segment_count = build_segments(geometry_, first_column, columns, nr_, segments);

    const size_t input_channels = static_cast<size_t>(shape_.input_channels);
    const size_t group_channels = input_channels / static_cast<size_t>(shape_.groups);
    const size_t plane =
        static_cast<size_t>(shape_.window.input_height * shape_.window.input_width);
    const float* group_input = input + (image * input_channels + group * group_channels) * plane;
    float* group_output =
        output +
        (image * static_cast<size_t>(shape_.output_channels) + group * group_rows_) * columns_;
    const float* group_weights = packed_weights + group * group_weights_size_;
    const float* group_bias = bias ? bias + group * group_rows_ : nullptr;
    const size_t panels = divide_round_up(columns, nr_);

    for (size_t depth_begin = 0; depth_begin < depth_;
         depth_begin += kFloatConvolutionLimits.depth_block) {
      const size_t depth = std::min(kFloatConvolutionLimits.depth_block, depth_ - depth_begin);
      const size_t full_panels = in_place_b_ ? columns / nr_ : 0;
      if (!in_place_b_) {
        pack_im2col_float(geometry_, group_input, depth_begin, depth, segments, segment_count,
                          columns, nr_, packed_b);
      } else if (full_panels < panels) {
        // The partial last panel, packed (reading it in place would run past the input).
        const size_t tail = columns - full_panels * nr_;
        const float* source =
            group_input + depth_begin * columns_ + first_column + full_panels * nr_;
        for (size_t kk = 0; kk < depth; ++kk) {
          float* out = packed_b + kk * nr_;
          for (size_t j = 0; j < nr_; ++j) out[j] = j < tail ? source[kk * columns_ + j] : 0.0f;
        }
      }
      const bool last = depth_begin + depth == depth_;
      FloatTile tile{};
      tile.depth = depth;
      tile.c_stride = columns_;
      tile.accumulate = depth_begin > 0;
      tile.activation = last && has_activation_ ? &activation_ : nullptr;
      const size_t end_row = first_row + rows;
      for (size_t block_row = first_row; block_row < end_row;
           block_row += kFloatConvolutionLimits.row_block) {
        const size_t block_end = std::min(end_row, block_row + kFloatConvolutionLimits.row_block);
        for (size_t panel = 0; panel < panels; ++panel) {
          tile.columns = std::min(nr_, columns - panel * nr_);
          if (panel < full_panels) {
            tile.b = group_input + depth_begin * columns_ + first_column + panel * nr_;
            tile.b_stride = columns_;
          } else {
            tile.b = packed_b + (in_place_b_ ? 0 : panel * depth * nr_);
            tile.b_stride = nr_;
          }
          for (size_t row = block_row; row < block_end; row += mr_) {
            tile.rows = std::min(mr_, block_end - row);
            tile.a = group_weights + (row / mr_) * depth_ * mr_ + depth_begin * mr_;
            tile.c = group_output + row * columns_ + first_column + panel * nr_;
            tile.row_bias = !tile.accumulate && group_bias ? group_bias + row : nullptr;
            kernels_.float_tile(tile);
          }
        }
      }
    }
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Im2colGeometry geometry_;
  const FloatActivation activation_;
  const bool has_activation_;
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t group_rows_ = 0;
  size_t depth_ = 0;
  size_t columns_ = 0;
  size_t group_weights_size_ = 0;
  bool in_place_b_ = false;
  size_t segments_offset_ = 0;
  size_t task_bytes_ = 0;
  size_t dynamic_weights_bytes_ = 0;
  std::vector<float> packed_weights_;
  char algorithm_[64];
};

// Depthwise: one task per (image, input channel), computing its `multiplier` output channels
// from one zero-padded copy of the channel.
class DepthwiseConvolution final : public Conv2DFloat {
 public:
  DepthwiseConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                       const FusedActivation& activation, const float* constant_weights)
      : kernels_(kernels),
        shape_(shape),
        plane_(padded_plane(shape.window)),
        activation_(to_float_activation(activation)),
        has_activation_(activation.kind != FusedActivation::Kind::kNone) {
    taps_ = static_cast<size_t>(shape.window.kernel_height * shape.window.kernel_width);
    if (constant_weights) {
      weights_.assign(constant_weights,
                      constant_weights + static_cast<size_t>(shape.output_channels) * taps_);
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s depthwise %lldx%lld", kernels.name,
                  static_cast<long long>(shape.window.kernel_height),
                  static_cast<long long>(shape.window.kernel_width));
  }

  size_t scratch_bytes() const override {
    return align_bytes(plane_.size() * sizeof(float)) + line_size(plane_) * sizeof(float);
  }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool& pool) const override {
    if (!weights_.empty()) weights = weights_.data();
    const reference::Window2D& w = shape_.window;
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t multiplier = static_cast<size_t>(shape_.output_channels) / channels;
    const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
    const size_t output_plane = static_cast<size_t>(w.output_height * w.output_width);
    pool.parallel_for(static_cast<size_t>(shape_.batch) * channels, [&](size_t task,
                                                                        size_t thread) {
      uint8_t* scratch = pool.scratch(thread, scratch_bytes());
      auto* padded = reinterpret_cast<float*>(scratch);
      auto* line = reinterpret_cast<float*>(scratch + align_bytes(plane_.size() * sizeof(float)));
      fill_padded_plane(
          plane_, input + task * input_plane, static_cast<size_t>(w.input_height),
          static_cast<size_t>(w.input_width), [](float value) { return value; }, line, padded);
      const size_t image = task / channels;
      const size_t channel = task % channels;
      DepthwisePlane plane = plane_description(w, plane_, padded);
      plane.activation = has_activation_ ? &activation_ : nullptr;
      for (size_t m = 0; m < multiplier; ++m) {
        const size_t output_channel = channel * multiplier + m;
        plane.weights = weights + output_channel * taps_;
        plane.bias = bias ? bias[output_channel] : 0.0f;
        plane.output =
            output +
            (image * static_cast<size_t>(shape_.output_channels) + output_channel) * output_plane;
        kernels_.depthwise_plane(plane);
      }
    });
  }

 private:
  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const PaddedPlane plane_;
  const FloatActivation activation_;
  const bool has_activation_;
  size_t taps_ = 0;
  std::vector<float> weights_;
  char algorithm_[64];
};

}  // namespace

bool is_depthwise(const Conv2DShape& shape) {
  return shape.groups > 1 && shape.groups == shape.input_channels &&
         shape.output_channels % shape.groups == 0;
}

std::unique_ptr<Conv2DFloat> make_depthwise_conv2d(const MicroKernels& kernels,
                                                   const Conv2DShape& shape,
                                                   const FusedActivation& activation,
                                                   const float* constant_weights) {
  if (!is_depthwise(shape)) return nullptr;
  return std::make_unique<DepthwiseConvolution>(kernels, shape, activation, constant_weights);
}

std::unique_ptr<Conv2DFloat> make_gemm_conv2d(const MicroKernels& kernels, const Conv2DShape& shape,
                                              const FusedActivation& activation,
                                              const float* constant_weights) {
  return std::make_unique<GemmConvolution>(kernels, shape, activation, constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
