// Depthwise convolution drivers (groups == input channels > 1), float32 and int8: per channel a
// zero-padded copy of the input plane, split into stride column phases, and the depthwise_plane
// micro-kernel over it (micro_kernels.h DepthwisePlane).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "optimized/blocking.h"
#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::FusedActivation;
using reference::Int8Requantization;

int64_t largest_weight_offset(const Int8Requantization& q) {
  int64_t largest = 0;
  for (int32_t zero_point : q.weight_zero_points) {
    largest = std::max(largest, largest_int8_offset(zero_point));
  }
  return largest;
}

// Padded rows [row_begin, row_begin + rows) of `plane` (phase p of the band at padded + p *
// rows * plane.width): each phase row is zeros, the input columns it holds copied in one call
// of copy_columns(source, step, out, count) (out[i] = source[i * step] as float; step = the
// phase count), then zeros. The drivers fill bands whose rows stay in L1 (band_geometry).
template <typename In, typename CopyColumns>
void fill_padded_rows(const PaddedPlane& plane, size_t row_begin, size_t rows, const In* input,
                      size_t input_height, size_t input_width, CopyColumns copy_columns,
                      float* padded) {
  const int64_t phases = static_cast<int64_t>(plane.phases);
  const int64_t width = static_cast<int64_t>(plane.width);
  const int64_t pad_left = static_cast<int64_t>(plane.pad_left);
  for (int64_t phase = 0; phase < phases; ++phase) {
    // Position t of this phase is input column t * phases + phase - pad_left.
    const int64_t first =
        std::min(width, std::max<int64_t>(0, pad_left - phase + phases - 1) / phases);
    const int64_t end = std::min(width, std::max<int64_t>(0, static_cast<int64_t>(input_width) +
                                                                 pad_left - phase + phases - 1) /
                                            phases);
    for (size_t local = 0; local < rows; ++local) {
      const size_t r = row_begin + local;
      float* out = padded + (static_cast<size_t>(phase) * rows + local) * plane.width;
      const size_t input_row = r - plane.pad_top;  // wraps around when r < pad_top
      if (r < plane.pad_top || input_row >= input_height || first >= end) {
        std::fill(out, out + plane.width, 0.0f);
        continue;
      }
      std::fill(out, out + first, 0.0f);
      const In* source = input + input_row * input_width + (first * phases + phase - pad_left);
      copy_columns(source, plane.phases, out + first, static_cast<size_t>(end - first));
      std::fill(out + end, out + plane.width, 0.0f);
    }
  }
}

// Float input columns into a phase row: a plain copy, or a constant-stride gather the compiler
// vectorizes for stride 2.
void copy_float_columns(const float* source, size_t step, float* out, size_t count) {
  if (step == 1) {
    std::copy_n(source, count, out);
  } else if (step == 2) {
    for (size_t i = 0; i < count; ++i) out[i] = source[2 * i];
  } else {
    for (size_t i = 0; i < count; ++i) out[i] = source[i * step];
  }
}

// A channel is done in bands of output rows whose padded input rows stay in L1 (filled, then
// read nine times by a 3x3 kernel): a whole padded plane (58 KB for MobileNetV2's 112x112
// stride-2 layer) went out to L2 and back, and the fill cost twice the arithmetic.
struct BandGeometry {
  size_t rows = 1;         // output rows per band (the last band may have fewer)
  size_t padded_rows = 1;  // padded input rows a full band reads
};
// Padded input rows that `rows` consecutive output rows read.
size_t band_input_rows(const reference::Window2D& w, size_t rows) {
  return (rows - 1) * static_cast<size_t>(w.stride_height) +
         static_cast<size_t>((w.kernel_height - 1) * w.dilation_height) + 1;
}
BandGeometry band_geometry(const reference::Window2D& w, const PaddedPlane& plane) {
  constexpr size_t kBandBytes = 16 * 1024;
  const size_t row_bytes = plane.phases * plane.width * sizeof(float);
  const size_t window_rows = static_cast<size_t>((w.kernel_height - 1) * w.dilation_height + 1);
  const size_t fitting_rows = kBandBytes / row_bytes;
  BandGeometry band;
  band.rows = fitting_rows > window_rows
                  ? (fitting_rows - window_rows) / static_cast<size_t>(w.stride_height) + 1
                  : 1;
  band.rows = std::min(band.rows, static_cast<size_t>(w.output_height));
  band.padded_rows = band_input_rows(w, band.rows);
  return band;
}

// The depthwise_plane description of one band of output rows over its padded rows.
DepthwisePlane band_description(const reference::Window2D& w, const PaddedPlane& plane,
                                const float* padded, size_t rows) {
  DepthwisePlane description = plane_description(w, plane, padded);
  description.phase_stride = band_input_rows(w, rows) * plane.width;
  description.output_height = rows;
  return description;
}

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
    return plane_.phases * band_.padded_rows * plane_.width * sizeof(float);
  }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool& pool) const override {
    if (!weights_.empty()) weights = weights_.data();
    const reference::Window2D& w = shape_.window;
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t multiplier = static_cast<size_t>(shape_.output_channels) / channels;
    const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
    const size_t output_width = static_cast<size_t>(w.output_width);
    const size_t output_height = static_cast<size_t>(w.output_height);
    const size_t output_plane = output_height * output_width;
    pool.parallel_for(static_cast<size_t>(shape_.batch) * channels, [&](size_t task,
                                                                        size_t thread) {
      auto* padded = reinterpret_cast<float*>(pool.scratch(thread, scratch_bytes()));
      const size_t image = task / channels;
      const size_t channel = task % channels;
      for (size_t first_row = 0; first_row < output_height; first_row += band_.rows) {
        const size_t rows = std::min(band_.rows, output_height - first_row);
        fill_padded_rows(plane_, first_row * static_cast<size_t>(w.stride_height),
                         band_input_rows(w, rows), input + task * input_plane,
                         static_cast<size_t>(w.input_height), static_cast<size_t>(w.input_width),
                         copy_float_columns, padded);
        DepthwisePlane plane = band_description(w, plane_, padded, rows);
        plane.activation = has_activation_ ? &activation_ : nullptr;
        for (size_t m = 0; m < multiplier; ++m) {
          const size_t output_channel = channel * multiplier + m;
          plane.weights = weights + output_channel * taps_;
          plane.bias = bias ? bias[output_channel] : 0.0f;
          plane.output = output +
                         (image * static_cast<size_t>(shape_.output_channels) + output_channel) *
                             output_plane +
                         first_row * output_width;
          kernels_.depthwise_plane(plane);
        }
      }
    });
  }

 private:
  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const PaddedPlane plane_;
  const BandGeometry band_ = band_geometry(shape_.window, plane_);
  const FloatActivation activation_;
  const bool has_activation_;
  size_t taps_ = 0;
  std::vector<float> weights_;
  char algorithm_[64];
};

// Depthwise int8 on the float depthwise rows: x - zx and w - zw are small integers, and while
// taps x max|x - zx| x max|w - zw| < 2^24 every partial sum is an integer that float32
// represents exactly, so the float sum is the exact integer sum. A channel is done in bands of
// output rows whose padded input rows (and sums) stay in L1, each band widened, summed and
// requantized before the next.
class DepthwiseConvolutionInt8 final : public Conv2DInt8 {
 public:
  DepthwiseConvolutionInt8(const MicroKernels& kernels, const Conv2DShape& shape,
                           const Int8Requantization& requantization, const int8_t* constant_weights)
      : kernels_(kernels), shape_(shape), q_(requantization), plane_(padded_plane(shape.window)) {
    const reference::Window2D& w = shape.window;
    taps_ = static_cast<size_t>(w.kernel_height * w.kernel_width);
    const size_t output_channels = static_cast<size_t>(shape.output_channels);
    weights_.resize(output_channels * taps_);
    for (size_t channel = 0; channel < output_channels; ++channel) {
      for (size_t t = 0; t < taps_; ++t) {
        weights_[channel * taps_ + t] = static_cast<float>(constant_weights[channel * taps_ + t] -
                                                           q_.weight_zero_points[channel]);
      }
    }
    band_ = band_geometry(w, plane_);
    const size_t band_outputs = band_.rows * static_cast<size_t>(w.output_width);
    sums_offset_ = align_bytes(plane_.phases * band_.padded_rows * plane_.width * sizeof(float));
    accumulators_offset_ = sums_offset_ + align_bytes(band_outputs * sizeof(float));
    scratch_bytes_ = accumulators_offset_ + align_bytes(band_outputs * sizeof(int32_t));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 depthwise %lldx%lld", kernels.name,
                  static_cast<long long>(w.kernel_height), static_cast<long long>(w.kernel_width));
  }

  size_t scratch_bytes() const override { return scratch_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t multiplier = static_cast<size_t>(shape_.output_channels) / channels;
    const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
    const size_t output_width = static_cast<size_t>(w.output_width);
    const size_t output_height = static_cast<size_t>(w.output_height);
    const size_t output_plane = output_height * output_width;
    pool.parallel_for(
        static_cast<size_t>(shape_.batch) * channels, [&](size_t task, size_t thread) {
          uint8_t* scratch = pool.scratch(thread, scratch_bytes_);
          auto* padded = reinterpret_cast<float*>(scratch);
          auto* sums = reinterpret_cast<float*>(scratch + sums_offset_);
          auto* accumulators = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
          const size_t image = task / channels;
          const size_t channel = task % channels;
          const int32_t zero_point = q_.input_zero_point;
          auto widen = [&](const int8_t* source, size_t step, float* out, size_t count) {
            kernels_.widen_int8_row({source, step, zero_point, out, count});
          };
          for (size_t first_row = 0; first_row < output_height; first_row += band_.rows) {
            const size_t rows = std::min(band_.rows, output_height - first_row);
            fill_padded_rows(plane_, first_row * static_cast<size_t>(w.stride_height),
                             band_input_rows(w, rows), input + task * input_plane,
                             static_cast<size_t>(w.input_height),
                             static_cast<size_t>(w.input_width), widen, padded);
            DepthwisePlane plane = band_description(w, plane_, padded, rows);
            plane.output = sums;
            const size_t outputs = rows * output_width;
            for (size_t m = 0; m < multiplier; ++m) {
              const size_t output_channel = channel * multiplier + m;
              plane.weights = weights_.data() + output_channel * taps_;
              kernels_.depthwise_plane(plane);
              kernels_.float_sums_to_accumulators(sums, bias ? bias[output_channel] : 0,
                                                  accumulators, outputs);
              int8_t* const output_row =
                  output +
                  (image * static_cast<size_t>(shape_.output_channels) + output_channel) *
                      output_plane +
                  first_row * output_width;
              requantize_int8_row(kernels_, q_, output_channel,
                                  requantize_row_of(q_, output_channel, false, small_multipliers_,
                                                    accumulators, outputs, output_row));
            }
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
  BandGeometry band_;
  size_t sums_offset_ = 0;
  size_t accumulators_offset_ = 0;
  size_t scratch_bytes_ = 0;
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

std::unique_ptr<Conv2DInt8> make_depthwise_conv2d_int8(const MicroKernels& kernels,
                                                       const Conv2DShape& shape,
                                                       const Int8Requantization& requantization,
                                                       const int8_t* constant_weights) {
  if (!is_depthwise(shape) || !constant_weights) return nullptr;
  const int64_t taps = shape.window.kernel_height * shape.window.kernel_width;
  const int64_t bound = taps * largest_int8_offset(requantization.input_zero_point) *
                        largest_weight_offset(requantization);
  if (bound >= (int64_t{1} << 24)) return nullptr;
  return std::make_unique<DepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                    constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
