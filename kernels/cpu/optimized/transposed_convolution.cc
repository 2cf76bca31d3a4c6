// 2-D ConvTranspose on float32 (reference::conv_transpose2d semantics) as a pointwise GEMM and
// a scatter (col2im): per image, columns[(g, oc, ky, kx)][pixel] = sum over the group's input
// channels of weights[ic][oc][ky][kx] x input[ic][pixel] - a 1x1 convolution on the input with
// the weights transposed once at build, run by the GEMM convolution's packed tiles - then every
// column row is added into the output plane at (ih * stride - pad + ky * dilation, ...), over
// the bias, and the fused activation applied. The reference gathers every output from every
// tap with a bounds test; the sums run in another order here, so results agree within float
// rounding (1e-5 of the products' scale). Output channels are split over the pool.
#include <algorithm>
#include <vector>

#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

class TransposedConvolution final : public Conv2DFloat {
 public:
  TransposedConvolution(const MicroKernels& kernels, const reference::Conv2DShape& shape,
                        const reference::FusedActivation& activation, const float* weights)
      : shape_(shape), activation_(activation) {
    const reference::Window2D& w = shape.window;
    groups_ = static_cast<size_t>(shape.groups);
    input_per_group_ = static_cast<size_t>(shape.input_channels / shape.groups);
    output_per_group_ = static_cast<size_t>(shape.output_channels / shape.groups);
    taps_ = static_cast<size_t>(w.kernel_height * w.kernel_width);
    input_pixels_ = static_cast<size_t>(w.input_height * w.input_width);
    // weights [ic][oc_local][tap] -> rows (g, oc_local, tap) of the group's input channels.
    std::vector<float> rows(groups_ * output_per_group_ * taps_ * input_per_group_);
    for (size_t g = 0; g < groups_; ++g) {
      for (size_t ic = 0; ic < input_per_group_; ++ic) {
        for (size_t oc = 0; oc < output_per_group_; ++oc) {
          for (size_t tap = 0; tap < taps_; ++tap) {
            const size_t row = (g * output_per_group_ + oc) * taps_ + tap;
            rows[row * input_per_group_ + ic] =
                weights[((g * input_per_group_ + ic) * output_per_group_ + oc) * taps_ + tap];
          }
        }
      }
    }
    reference::Conv2DShape pointwise;
    pointwise.batch = 1;
    pointwise.input_channels = shape.input_channels;
    pointwise.output_channels = static_cast<int64_t>(groups_ * output_per_group_ * taps_);
    pointwise.groups = shape.groups;
    pointwise.window.input_height = pointwise.window.output_height = w.input_height;
    pointwise.window.input_width = pointwise.window.output_width = w.input_width;
    columns_gemm_ = make_gemm_conv2d(kernels, pointwise, reference::FusedActivation{}, rows.data());
    columns_.resize(groups_ * output_per_group_ * taps_ * input_pixels_);
  }

  bool ready() const { return columns_gemm_ != nullptr; }
  size_t scratch_bytes() const override { return columns_gemm_->scratch_bytes(); }
  const char* algorithm() const override { return "transposed: pointwise gemm + col2im"; }

  void run(const float* input, const float* /*weights: packed at build*/, const float* bias,
           float* output, ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    const size_t output_plane = static_cast<size_t>(w.output_height * w.output_width);
    const auto channels = static_cast<size_t>(shape_.output_channels);
    for (int64_t n = 0; n < shape_.batch; ++n) {
      columns_gemm_->run(input + static_cast<size_t>(n) * shape_.input_channels * input_pixels_,
                         nullptr, nullptr, columns_.data(), pool);
      float* image = output + static_cast<size_t>(n) * channels * output_plane;
      pool.parallel_for(channels, [&](size_t oc, size_t) {
        scatter_channel(oc, bias ? bias[oc] : 0.0f, image + oc * output_plane);
      });
    }
  }

 private:
  // Output plane `oc` = bias + its taps' column rows placed at their output positions, then the
  // activation.
  void scatter_channel(size_t oc, float bias, float* plane) const {
    const reference::Window2D& w = shape_.window;
    const int64_t output_width = w.output_width;
    std::fill(plane, plane + static_cast<size_t>(w.output_height * output_width), bias);
    const float* rows = columns_.data() + oc * taps_ * input_pixels_;  // (g, oc_local) = oc
    for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
      for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
        const float* row = rows + static_cast<size_t>(ky * w.kernel_width + kx) * input_pixels_;
        // Input columns whose output column lands inside the plane: ow = iw * s - pad + kx * d.
        const int64_t shift = kx * w.dilation_width - w.pad_left;
        const int64_t first = shift >= 0 ? 0 : (-shift + w.stride_width - 1) / w.stride_width;
        const int64_t last_output = output_width - 1 - shift;
        const int64_t end =
            last_output < 0 ? 0 : std::min(w.input_width, last_output / w.stride_width + 1);
        for (int64_t ih = 0; ih < w.input_height; ++ih) {
          const int64_t oh = ih * w.stride_height - w.pad_top + ky * w.dilation_height;
          if (oh < 0 || oh >= w.output_height) continue;
          const float* in = row + ih * w.input_width;
          float* out = plane + oh * output_width + shift;
          for (int64_t iw = first; iw < end; ++iw) out[iw * w.stride_width] += in[iw];
        }
      }
    }
    if (activation_.kind == reference::FusedActivation::Kind::kNone) return;
    const size_t count = static_cast<size_t>(w.output_height * output_width);
    for (size_t i = 0; i < count; ++i) {
      plane[i] = reference::apply_fused_activation(activation_, plane[i]);
    }
  }

  reference::Conv2DShape shape_;
  reference::FusedActivation activation_;
  size_t groups_ = 1;
  size_t input_per_group_ = 1;
  size_t output_per_group_ = 1;
  size_t taps_ = 1;
  size_t input_pixels_ = 1;
  std::unique_ptr<Conv2DFloat> columns_gemm_;
  // The GEMM's output for one image, rewritten by every run (a kernel runs one call at a time).
  mutable std::vector<float> columns_;
};

}  // namespace

std::unique_ptr<Conv2DFloat> make_transposed_conv2d(const MicroKernels& kernels,
                                                    const reference::Conv2DShape& shape,
                                                    const reference::FusedActivation& activation,
                                                    const float* constant_weights) {
  const reference::Window2D& w = shape.window;
  if (!constant_weights || shape.groups <= 0 || shape.input_channels <= 0 ||
      shape.output_channels <= 0 || shape.batch <= 0 || shape.input_channels % shape.groups != 0 ||
      shape.output_channels % shape.groups != 0 || w.input_height <= 0 || w.input_width <= 0 ||
      w.output_height <= 0 || w.output_width <= 0 || w.stride_height <= 0 || w.stride_width <= 0) {
    return nullptr;
  }
  auto kernel =
      std::make_unique<TransposedConvolution>(kernels, shape, activation, constant_weights);
  if (!kernel->ready()) return nullptr;
  return kernel;
}

}  // namespace orknn::kernels::cpu::optimized
