// Depthwise convolution drivers (groups == input channels > 1), float32 and int8, two ways: per
// channel a zero-padded copy of the input plane, split into stride column phases, and the
// depthwise_plane micro-kernel over it (micro_kernels.h DepthwisePlane); or 8 channels in the
// vector lanes (DepthwiseLanes, "channels in lanes" below), which most layers take.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
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

// Float depthwise read in place, two ways: stride 1 with output rows as long as the input's on
// flat planes (the table's depthwise_flat), and stride 2 across in rows (depthwise_stride2_rows).
// A task is a run of output channels of about kInPlaceTaskOutputs outputs, so that
// MobileNetV2's 7x7 planes (49 outputs each) do not pay a task's scheduling per plane.
class InPlaceDepthwiseConvolution final : public Conv2DFloat {
 public:
  enum class Form { kFlat, kStride2 };

  // The form the table runs `shape` in, if any.
  //  * Flat: stride 1 and pad_left + pad_right == the kernel's reach - 1, rows no wider than
  //    the table's depthwise_flat_widest; any dilation, kernel size and top and bottom pads,
  //    while the mask table (two bytes per tap per vector of outputs) is at most 256 KB.
  //  * Stride 2: 3x3 at stride 2 across, dilation 1 and pad_left 1, rows at least the table's
  //    depthwise_stride2_narrowest wide; any stride down.
  static std::optional<Form> form(const MicroKernels& kernels, const Conv2DShape& shape) {
    const reference::Window2D& w = shape.window;
    if (kernels.depthwise_flat != nullptr && w.stride_width == 1 && w.stride_height == 1 &&
        w.output_width == w.input_width &&
        static_cast<size_t>(w.output_width) <= kernels.depthwise_flat_widest) {
      const auto vectors = divide_round_up(static_cast<size_t>(w.output_height * w.output_width),
                                           kernels.depthwise_flat_lanes);
      if (vectors * static_cast<size_t>(w.kernel_height * w.kernel_width) * sizeof(uint16_t) <=
          256 * 1024) {
        return Form::kFlat;
      }
    }
    if (kernels.depthwise_stride2_rows != nullptr && w.stride_width == 2 && w.kernel_height == 3 &&
        w.kernel_width == 3 && w.dilation_height == 1 && w.dilation_width == 1 && w.pad_left == 1 &&
        static_cast<size_t>(w.output_width) >= kernels.depthwise_stride2_narrowest) {
      return Form::kStride2;
    }
    return std::nullopt;
  }

  InPlaceDepthwiseConvolution(const MicroKernels& kernels, const Conv2DShape& shape, Form form,
                              const FusedActivation& activation, const float* constant_weights)
      : kernels_(kernels),
        shape_(shape),
        form_(form),
        activation_(to_float_activation(activation)),
        has_activation_(activation.kind != FusedActivation::Kind::kNone) {
    const reference::Window2D& w = shape.window;
    taps_ = static_cast<size_t>(w.kernel_height * w.kernel_width);
    if (constant_weights) {
      weights_.assign(constant_weights,
                      constant_weights + static_cast<size_t>(shape.output_channels) * taps_);
    }
    describe_layer();
    constexpr size_t kInPlaceTaskOutputs = 2048;
    const size_t plane_outputs = static_cast<size_t>(w.output_height * w.output_width);
    channels_per_task_ =
        std::max<size_t>(1, kInPlaceTaskOutputs / std::max<size_t>(1, plane_outputs));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s depthwise %lldx%lld %s", kernels.name,
                  static_cast<long long>(w.kernel_height), static_cast<long long>(w.kernel_width),
                  form == Form::kFlat ? "flat" : "stride 2 rows");
  }

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool& pool) const override {
    if (!weights_.empty()) weights = weights_.data();
    const reference::Window2D& w = shape_.window;
    const size_t output_channels = static_cast<size_t>(shape_.output_channels);
    const size_t input_channels = static_cast<size_t>(shape_.input_channels);
    const size_t multiplier = output_channels / input_channels;
    const size_t input_plane = static_cast<size_t>(w.input_height * w.input_width);
    const size_t output_plane = static_cast<size_t>(w.output_height * w.output_width);
    const size_t runs = divide_round_up(output_channels, channels_per_task_);
    pool.parallel_for(static_cast<size_t>(shape_.batch) * runs, [&](size_t task, size_t) {
      const size_t image = task / runs;
      const size_t first = task % runs * channels_per_task_;
      const size_t end = std::min(output_channels, first + channels_per_task_);
      auto planes = [&](size_t channel, size_t count, const float* channel_input) {
        run_planes(channel_input, count, weights + channel * taps_, bias ? bias + channel : nullptr,
                   output + (image * output_channels + channel) * output_plane);
      };
      if (multiplier == 1) {
        planes(first, end - first, input + (image * input_channels + first) * input_plane);
        return;
      }
      // Output channel c reads input channel c / multiplier: one plane per call.
      for (size_t channel = first; channel < end; ++channel) {
        planes(channel, 1, input + (image * input_channels + channel / multiplier) * input_plane);
      }
    });
  }

 private:
  // The layer's description (built once by describe_layer) with the call's operands, and the
  // pointers into this object (activation, tap masks), which the stored description leaves out
  // so that it holds no pointer to its owner.
  void run_planes(const float* input, size_t channels, const float* weights, const float* bias,
                  float* output) const {
    if (form_ == Form::kFlat) {
      DepthwiseFlatPlanes planes = flat_;
      planes.input = input;
      planes.channels = channels;
      planes.weights = weights;
      planes.bias = bias;
      planes.activation = has_activation_ ? &activation_ : nullptr;
      planes.tap_lanes = tap_lanes_.data();
      planes.output = output;
      kernels_.depthwise_flat(planes);
      return;
    }
    DepthwiseStride2Rows rows = rows_;
    rows.input = input;
    rows.channels = channels;
    rows.weights = weights;
    rows.bias = bias;
    rows.activation = has_activation_ ? &activation_ : nullptr;
    rows.output = output;
    kernels_.depthwise_stride2_rows(rows);
  }

  // The layer's geometry in the form's kernel description, field by field (the structs hold
  // runs of size_t that a positional list could swap); the flat form's tap masks and the range
  // of vectors whose taps are all on input rows.
  void describe_layer() {
    const reference::Window2D& w = shape_.window;
    if (form_ == Form::kStride2) {
      rows_.input_height = static_cast<size_t>(w.input_height);
      rows_.input_width = static_cast<size_t>(w.input_width);
      rows_.stride_height = static_cast<size_t>(w.stride_height);
      rows_.pad_top = static_cast<size_t>(w.pad_top);
      rows_.output_height = static_cast<size_t>(w.output_height);
      rows_.output_width = static_cast<size_t>(w.output_width);
      return;
    }
    flat_.input_height = static_cast<size_t>(w.input_height);
    flat_.width = static_cast<size_t>(w.input_width);
    flat_.kernel_height = static_cast<size_t>(w.kernel_height);
    flat_.kernel_width = static_cast<size_t>(w.kernel_width);
    flat_.dilation_height = static_cast<size_t>(w.dilation_height);
    flat_.dilation_width = static_cast<size_t>(w.dilation_width);
    flat_.pad_top = static_cast<size_t>(w.pad_top);
    flat_.pad_left = static_cast<size_t>(w.pad_left);
    flat_.output_height = static_cast<size_t>(w.output_height);
    const size_t lanes = kernels_.depthwise_flat_lanes;
    tap_lanes_ = tap_lanes(w, lanes);
    // Output p's taps are all on input rows when its row y >= pad_top and y + reach - pad_top
    // < input_height, reach = (kernel_height - 1) x dilation_height: whole vectors of them.
    const auto width = static_cast<size_t>(w.output_width);
    const size_t outputs = static_cast<size_t>(w.output_height) * width;
    const auto reach = static_cast<size_t>((w.kernel_height - 1) * w.dilation_height);
    const size_t below_rows = static_cast<size_t>(w.input_height + w.pad_top);
    const size_t end = std::min(outputs, below_rows > reach ? (below_rows - reach) * width : 0);
    flat_.inner_begin = divide_round_up(static_cast<size_t>(w.pad_top) * width, lanes) * lanes;
    flat_.inner_end = end > flat_.inner_begin
                          ? flat_.inner_begin + (end - flat_.inner_begin) / lanes * lanes
                          : flat_.inner_begin;
  }

  // DepthwiseFlatPlanes::tap_lanes for vectors of `lanes` outputs.
  static std::vector<uint16_t> tap_lanes(const reference::Window2D& w, size_t lanes) {
    const auto width = static_cast<size_t>(w.output_width);
    const size_t outputs = static_cast<size_t>(w.output_height) * width;
    const auto kernel_width = static_cast<size_t>(w.kernel_width);
    const size_t taps = static_cast<size_t>(w.kernel_height) * kernel_width;
    std::vector<uint16_t> table(divide_round_up(outputs, lanes) * taps, 0);
    for (size_t p = 0; p < outputs; ++p) {
      const auto y = static_cast<int64_t>(p / width), x = static_cast<int64_t>(p % width);
      uint16_t* vector = table.data() + p / lanes * taps;
      const auto bit = static_cast<uint16_t>(1u << (p % lanes));
      for (size_t t = 0; t < taps; ++t) {
        const int64_t row =
            y + static_cast<int64_t>(t / kernel_width) * w.dilation_height - w.pad_top;
        const int64_t column =
            x + static_cast<int64_t>(t % kernel_width) * w.dilation_width - w.pad_left;
        if (row >= 0 && row < w.input_height && column >= 0 && column < w.input_width) {
          vector[t] = static_cast<uint16_t>(vector[t] | bit);
        }
      }
    }
    return table;
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Form form_;
  const FloatActivation activation_;
  const bool has_activation_;
  std::vector<uint16_t> tap_lanes_;  // flat only
  DepthwiseFlatPlanes flat_{};       // the layer's part (describe_layer)
  DepthwiseStride2Rows rows_{};
  size_t taps_ = 0;
  size_t channels_per_task_ = 1;
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

// ---- channels in lanes -------------------------------------------------------------------
// A task is one image, one group of kDepthwiseLanes output channels and one band of output
// rows. The band's padded input rows are interleaved into [row][column][lane] (padding is 0,
// which for int8 is x == zx), one depthwise_lanes call computes the band (8-pixel blocks that
// run on across output rows), and the band's outputs go back to channel rows in one pass
// (float: deinterleaved; int8: requantized). Every
// tap is then one full vector load and FMA, whatever the plane's width: the plane-per-channel
// kernel above spends most of its time on partial vectors, zero fills and per-channel set-up
// when planes are 7 to 28 wide (MobileNetV2), and copies every input once more for stride 2.
//
// The padded input rows a band of output rows reads, as the lanes and the dot-product rows
// (below) lay them out: each band's padded rows must fit `band_bytes` at `column_bytes` per
// padded column, and hold at least one output row's window.
struct PaddedBands {
  size_t padded_width = 0;  // columns the outputs read
  size_t copy_first = 0;    // first padded column that holds an input column
  size_t copy_count = 0;    // input columns inside the padded width
  size_t band_rows = 0;     // output rows per band (the last band may have fewer)
  size_t bands = 0;
};

PaddedBands padded_bands(const reference::Window2D& w, size_t column_bytes, size_t band_bytes) {
  PaddedBands g;
  g.padded_width = static_cast<size_t>((w.output_width - 1) * w.stride_width +
                                       (w.kernel_width - 1) * w.dilation_width + 1);
  const size_t pad_left = static_cast<size_t>(w.pad_left);
  g.copy_first = std::min(pad_left, g.padded_width);
  g.copy_count =
      std::min(g.padded_width, pad_left + static_cast<size_t>(w.input_width)) - g.copy_first;
  const size_t window_rows = static_cast<size_t>((w.kernel_height - 1) * w.dilation_height + 1);
  const size_t fitting_rows = band_bytes / (g.padded_width * column_bytes);
  g.band_rows = fitting_rows > window_rows
                    ? (fitting_rows - window_rows) / static_cast<size_t>(w.stride_height) + 1
                    : 1;
  const size_t output_height = static_cast<size_t>(w.output_height);
  g.band_rows = std::min(g.band_rows, output_height);
  g.bands = divide_round_up(output_height, g.band_rows);
  return g;
}

struct LaneGeometry : PaddedBands {
  size_t input_band_floats = 0;
  size_t output_band_floats = 0;
};

LaneGeometry lane_geometry(const reference::Window2D& w) {
  // The padded input band of a task stays within L2 next to the other threads' work; the rows one
  // output row reads (kernel_height x padded width x 8 floats) stay in L1.
  constexpr size_t kBandBytes = 48 * 1024;
  LaneGeometry g;
  static_cast<PaddedBands&>(g) = padded_bands(w, kDepthwiseLanes * sizeof(float), kBandBytes);
  g.input_band_floats = band_input_rows(w, g.band_rows) * g.padded_width * kDepthwiseLanes;
  g.output_band_floats = g.band_rows * static_cast<size_t>(w.output_width) * kDepthwiseLanes;
  return g;
}

// What the two element types share: the task split, the lane weights, the band fill and the
// depthwise_lanes call. Output rows of the group's channels land in `sums`
// ([band row][output column][lane]) for the caller to store.
class LaneDepthwise {
 public:
  LaneDepthwise(const MicroKernels& kernels, const Conv2DShape& shape)
      : kernels_(kernels), shape_(shape), geometry_(lane_geometry(shape.window)) {
    taps_ = static_cast<size_t>(shape.window.kernel_height * shape.window.kernel_width);
    groups_ = divide_round_up(static_cast<size_t>(shape.output_channels), kDepthwiseLanes);
    // Scratch: the input band, the output band, the lane weights and bias, and a row that
    // receives the outputs of lanes past the last channel.
    input_offset_ = 0;
    output_offset_ = align_bytes(geometry_.input_band_floats * sizeof(float));
    weights_offset_ = output_offset_ + align_bytes(geometry_.output_band_floats * sizeof(float));
    discard_offset_ = weights_offset_ + align_bytes((taps_ + 1) * kDepthwiseLanes * sizeof(float));
    scratch_bytes_ = discard_offset_ +
                     align_bytes(geometry_.output_band_floats / kDepthwiseLanes * sizeof(float));
  }

  size_t scratch_bytes() const { return scratch_bytes_; }
  size_t tasks() const { return static_cast<size_t>(shape_.batch) * groups_ * geometry_.bands; }

  // The part of a task the element types share. `Source` is float or int8_t;
  // interleave(InterleaveRows<Source>) is the table's interleave; lane_weight(channel, tap)
  // gives a weight (as float). Returns what the caller needs to store the band.
  struct Band {
    size_t image;
    size_t first_channel;  // of the group
    size_t first_row;      // output row
    size_t rows;
    uint8_t* scratch;
    float* sums;  // [rows][output_width][lanes]
    float* lane_weights;
    void* discard;
  };
  template <typename Source, typename Interleave, typename LaneWeight>
  Band compute_band(size_t task, size_t thread, ThreadPool& pool, const Source* input,
                    Interleave interleave, LaneWeight lane_weight, const float* lane_bias,
                    const FloatActivation* activation) const {
    const reference::Window2D& w = shape_.window;
    Band band{};
    band.scratch = pool.scratch(thread, scratch_bytes_);
    const size_t band_index = task % geometry_.bands;
    const size_t group = task / geometry_.bands % groups_;
    band.image = task / geometry_.bands / groups_;
    band.first_channel = group * kDepthwiseLanes;
    band.first_row = band_index * geometry_.band_rows;
    const size_t output_height = static_cast<size_t>(w.output_height);
    band.rows = std::min(geometry_.band_rows, output_height - band.first_row);
    auto* padded = reinterpret_cast<float*>(band.scratch + input_offset_);
    band.sums = reinterpret_cast<float*>(band.scratch + output_offset_);
    band.lane_weights = reinterpret_cast<float*>(band.scratch + weights_offset_);
    band.discard = band.scratch + discard_offset_;

    // Lane l is output channel first_channel + l, which reads input channel (that) / multiplier;
    // lanes past the last channel repeat its input with zero weights.
    const size_t output_channels = static_cast<size_t>(shape_.output_channels);
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t multiplier = output_channels / channels;
    const size_t input_height = static_cast<size_t>(w.input_height);
    const size_t input_width = static_cast<size_t>(w.input_width);
    const Source* planes[kDepthwiseLanes];
    for (size_t l = 0; l < kDepthwiseLanes; ++l) {
      const size_t channel = std::min(band.first_channel + l, output_channels - 1);
      const bool real = band.first_channel + l < output_channels;
      planes[l] =
          input + (band.image * channels + channel / multiplier) * input_height * input_width;
      for (size_t t = 0; t < taps_; ++t) {
        band.lane_weights[t * kDepthwiseLanes + l] = real ? lane_weight(channel, t) : 0.0f;
      }
    }

    // Padded rows of the band: row r is padded input row first_row * stride + r, input row
    // that - pad_top; the rows inside the input are one run [inside_begin, inside_end).
    const size_t row_floats = geometry_.padded_width * kDepthwiseLanes;
    const size_t padded_rows = band_input_rows(w, band.rows);
    const size_t first_padded = band.first_row * static_cast<size_t>(w.stride_height);
    const size_t pad_top = static_cast<size_t>(w.pad_top);
    const size_t inside_begin = std::min(padded_rows, pad_top - std::min(pad_top, first_padded));
    const size_t below_input = pad_top + input_height;  // first padded row under the input
    const size_t inside_end =
        geometry_.copy_count == 0 || first_padded >= below_input
            ? inside_begin
            : std::max(inside_begin, std::min(padded_rows, below_input - first_padded));
    const size_t copy_end = geometry_.copy_first + geometry_.copy_count;
    for (size_t r = 0; r < padded_rows; ++r) {
      float* out = padded + r * row_floats;
      if (r < inside_begin || r >= inside_end) {
        std::fill(out, out + row_floats, 0.0f);
        continue;
      }
      std::fill(out, out + geometry_.copy_first * kDepthwiseLanes, 0.0f);
      std::fill(out + copy_end * kDepthwiseLanes, out + row_floats, 0.0f);
    }
    if (inside_end > inside_begin) {
      const size_t first_input_row = first_padded + inside_begin - pad_top;
      const size_t first_column = geometry_.copy_first - static_cast<size_t>(w.pad_left);
      const Source* sources[kDepthwiseLanes];
      for (size_t l = 0; l < kDepthwiseLanes; ++l) {
        sources[l] = planes[l] + first_input_row * input_width + first_column;
      }
      InterleaveRows<Source> rows{};
      rows.sources = sources;
      rows.out_row_stride = row_floats;
      rows.out = padded + inside_begin * row_floats + geometry_.copy_first * kDepthwiseLanes;
      if (geometry_.copy_count == input_width) {
        // Whole input rows are contiguous: one run over all of them.
        rows.count = (inside_end - inside_begin) * input_width;
        rows.row_length = input_width;
        interleave(rows);
      } else {
        rows.count = geometry_.copy_count;
        rows.row_length = geometry_.copy_count;
        for (size_t r = inside_begin; r < inside_end; ++r) {
          interleave(rows);
          for (size_t l = 0; l < kDepthwiseLanes; ++l) sources[l] += input_width;
          rows.out += row_floats;
        }
      }
    }

    const size_t output_width = static_cast<size_t>(w.output_width);
    DepthwiseLanes lanes{};
    lanes.input_stride = row_floats;
    lanes.weights = band.lane_weights;
    lanes.bias = lane_bias;
    lanes.kernel_height = static_cast<size_t>(w.kernel_height);
    lanes.kernel_width = static_cast<size_t>(w.kernel_width);
    lanes.stride_height = static_cast<size_t>(w.stride_height);
    lanes.stride_width = static_cast<size_t>(w.stride_width);
    lanes.dilation_height = static_cast<size_t>(w.dilation_height);
    lanes.dilation_width = static_cast<size_t>(w.dilation_width);
    lanes.output_height = band.rows;
    lanes.output_width = output_width;
    lanes.activation = activation;
    lanes.input = padded;
    lanes.output = band.sums;
    kernels_.depthwise_lanes(lanes);
    return band;
  }

  // The output rows of the band's lanes (`discard` for lanes past the last channel).
  template <typename Output>
  void band_outputs(const Band& band, Output* output, Output* rows[kDepthwiseLanes]) const {
    const reference::Window2D& w = shape_.window;
    const size_t output_channels = static_cast<size_t>(shape_.output_channels);
    const size_t output_plane = static_cast<size_t>(w.output_height * w.output_width);
    for (size_t l = 0; l < kDepthwiseLanes; ++l) {
      const size_t channel = band.first_channel + l;
      rows[l] = channel < output_channels
                    ? output + (band.image * output_channels + channel) * output_plane +
                          band.first_row * static_cast<size_t>(w.output_width)
                    : static_cast<Output*>(band.discard);
    }
  }

  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const LaneGeometry geometry_;
  size_t taps_ = 0;
  size_t groups_ = 0;
  size_t input_offset_ = 0;
  size_t output_offset_ = 0;
  size_t weights_offset_ = 0;
  size_t discard_offset_ = 0;
  size_t scratch_bytes_ = 0;
};

class LaneDepthwiseConvolution final : public Conv2DFloat {
 public:
  LaneDepthwiseConvolution(const MicroKernels& kernels, const Conv2DShape& shape,
                           const FusedActivation& activation, const float* constant_weights)
      : lanes_(kernels, shape),
        activation_(to_float_activation(activation)),
        has_activation_(activation.kind != FusedActivation::Kind::kNone) {
    if (constant_weights) {
      weights_.assign(constant_weights,
                      constant_weights + static_cast<size_t>(shape.output_channels) * lanes_.taps_);
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s depthwise %lldx%lld lanes", kernels.name,
                  static_cast<long long>(shape.window.kernel_height),
                  static_cast<long long>(shape.window.kernel_width));
  }

  size_t scratch_bytes() const override {
    return lanes_.scratch_bytes() + align_bytes(kDepthwiseLanes * sizeof(float));
  }
  const char* algorithm() const override { return algorithm_; }

  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool& pool) const override {
    if (!weights_.empty()) weights = weights_.data();
    const size_t taps = lanes_.taps_;
    const size_t output_channels = static_cast<size_t>(lanes_.shape_.output_channels);
    const MicroKernels& kernels = lanes_.kernels_;
    pool.parallel_for(lanes_.tasks(), [&](size_t task, size_t thread) {
      auto* lane_bias =
          reinterpret_cast<float*>(pool.scratch(thread, scratch_bytes()) + lanes_.scratch_bytes());
      const size_t first_channel = task / lanes_.geometry_.bands % lanes_.groups_ * kDepthwiseLanes;
      for (size_t l = 0; l < kDepthwiseLanes; ++l) {
        const size_t channel = first_channel + l;
        lane_bias[l] = bias && channel < output_channels ? bias[channel] : 0.0f;
      }
      auto interleave = [&](const InterleaveRows<float>& rows) {
        kernels.interleave_float_rows(rows);
      };
      auto lane_weight = [&](size_t channel, size_t tap) { return weights[channel * taps + tap]; };
      const LaneDepthwise::Band band =
          lanes_.compute_band(task, thread, pool, input, interleave, lane_weight, lane_bias,
                              has_activation_ ? &activation_ : nullptr);
      float* rows[kDepthwiseLanes];
      lanes_.band_outputs(band, output, rows);
      kernels.deinterleave_float_rows(
          band.sums, band.rows * static_cast<size_t>(lanes_.shape_.window.output_width), rows);
    });
  }

 private:
  const LaneDepthwise lanes_;
  const FloatActivation activation_;
  const bool has_activation_;
  std::vector<float> weights_;
  char algorithm_[64];
};

// The output stage of the kDepthwiseLanes lanes from output channel `first_channel` (lanes past
// the last channel repeat it) into `rows`: each lane's bias and multiplier (written to
// lane_bias and lane_multipliers, which it points at), the output's zero point and range, and
// whether every lane's bias is within its channel's float limit (LaneRequantization::in_float),
// `bias_limits` being float_requantization_bias_limit per channel.
LaneRequantization lane_requantization(size_t first_channel, size_t output_channels,
                                       const int32_t* bias, const Int8Requantization& q,
                                       const std::vector<int64_t>& bias_limits, int32_t* lane_bias,
                                       float* lane_multipliers, int8_t* const* rows) {
  LaneRequantization stage{};
  stage.in_float = true;
  for (size_t l = 0; l < kDepthwiseLanes; ++l) {
    const size_t channel = std::min(first_channel + l, output_channels - 1);
    lane_bias[l] = bias ? bias[channel] : 0;
    lane_multipliers[l] = q.multipliers[channel];
    stage.in_float = stage.in_float && std::abs(int64_t{lane_bias[l]}) <= bias_limits[channel];
  }
  stage.bias = lane_bias;
  stage.multipliers = lane_multipliers;
  stage.output_zero_point = q.output_zero_point;
  stage.output_minimum = q.output_minimum;
  stage.output_maximum = q.output_maximum;
  stage.rows = rows;
  return stage;
}

// int8 on the same lanes: the band holds x - zx and the weights w - zw as floats, whose sums are
// exact integers (the factory's bound), and requantize_lanes turns them into codes.
class LaneDepthwiseConvolutionInt8 final : public Conv2DInt8 {
 public:
  LaneDepthwiseConvolutionInt8(const MicroKernels& kernels, const Conv2DShape& shape,
                               const Int8Requantization& requantization,
                               const int8_t* constant_weights)
      : lanes_(kernels, shape), q_(requantization) {
    const size_t output_channels = static_cast<size_t>(shape.output_channels);
    const size_t taps = lanes_.taps_;
    weights_.resize(output_channels * taps);
    // Per channel, the largest |bias| with which its sums requantize in float
    // (LaneRequantization::in_float): the reach is max |x - zx| x sum |w - zw| over the taps.
    bias_limits_.resize(output_channels);
    for (size_t channel = 0; channel < output_channels; ++channel) {
      int64_t magnitudes = 0;
      for (size_t t = 0; t < taps; ++t) {
        const int32_t offset =
            constant_weights[channel * taps + t] - q_.weight_zero_points[channel];
        weights_[channel * taps + t] = static_cast<float>(offset);
        magnitudes += offset < 0 ? -offset : offset;
      }
      bias_limits_[channel] =
          float_requantization_bias_limit(magnitudes, q_.input_zero_point, q_.multipliers[channel]);
    }
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 depthwise %lldx%lld lanes", kernels.name,
                  static_cast<long long>(shape.window.kernel_height),
                  static_cast<long long>(shape.window.kernel_width));
  }

  // After the shared scratch: zero float bias, int32 bias and multipliers of the lanes.
  size_t scratch_bytes() const override { return lanes_.scratch_bytes() + 3 * 64; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const size_t taps = lanes_.taps_;
    const size_t output_channels = static_cast<size_t>(lanes_.shape_.output_channels);
    const MicroKernels& kernels = lanes_.kernels_;
    const int32_t zero_point = q_.input_zero_point;
    pool.parallel_for(lanes_.tasks(), [&](size_t task, size_t thread) {
      uint8_t* extra = pool.scratch(thread, scratch_bytes()) + lanes_.scratch_bytes();
      auto* zero_bias = reinterpret_cast<float*>(extra);
      auto* lane_bias = reinterpret_cast<int32_t*>(extra + 64);
      auto* lane_multipliers = reinterpret_cast<float*>(extra + 128);
      const size_t first_channel = task / lanes_.geometry_.bands % lanes_.groups_ * kDepthwiseLanes;
      for (size_t l = 0; l < kDepthwiseLanes; ++l) zero_bias[l] = 0.0f;
      auto interleave = [&](InterleaveRows<int8_t> rows) {
        rows.zero_point = zero_point;
        kernels.interleave_int8_rows(rows);
      };
      auto lane_weight = [&](size_t channel, size_t tap) { return weights_[channel * taps + tap]; };
      const LaneDepthwise::Band band = lanes_.compute_band(task, thread, pool, input, interleave,
                                                           lane_weight, zero_bias, nullptr);
      int8_t* rows[kDepthwiseLanes];
      lanes_.band_outputs(band, output, rows);
      RequantizeLanes requantize{};
      requantize.sums = band.sums;
      requantize.count = band.rows * static_cast<size_t>(lanes_.shape_.window.output_width);
      requantize.requantization =
          lane_requantization(first_channel, output_channels, bias, q_, bias_limits_, lane_bias,
                              lane_multipliers, rows);
      kernels.requantize_lanes(requantize);
    });
  }

 private:
  const LaneDepthwise lanes_;
  const Int8Requantization q_;
  std::vector<float> weights_;
  std::vector<int64_t> bias_limits_;  // per output channel, float_requantization_bias_limit
  char algorithm_[64];
};

// ---- int8 on rows of codes with 4-tap dot products ------------------------------------------
// Where the table has depthwise_dot_rows (avx512 with VBMI). A task is one image, a block of
// input channels (one, unless the planes are small) and one band of output rows: per channel,
// the band's padded input rows are copied as unsigned bytes (code + 128; padding zx + 128,
// which contributes what the offset takes back) into scratch that stays in L1, and
// depthwise_dot_rows computes and requantizes each of the channel's output channels from it
// straight into the output rows. The lanes path instead
// transposes every input into 8-channel float lanes and every sum back (a third of its time):
// here the input is only copied and the arithmetic stays in int32.
struct DotGeometry : PaddedBands {  // one byte per padded column
  size_t band_bytes = 0;  // a full band's padded rows and the 64 bytes the last one over-reads
  size_t rows_per_vector = 1;
  uint8_t gather[64] = {};  // DepthwiseDotRows::gather
  bool fits = false;        // whether one row's outputs reach at most 64 bytes
};

// Which byte of a vector's 64 each output and tap reads (DepthwiseDotRows::gather), with as
// many whole output rows per vector as fit 16 outputs and 64 bytes (MobileNetV2's 7-wide planes:
// two rows per vector instead of one 7-output vector per row). False if even one row's outputs
// reach past 64 bytes.
bool depthwise_dot_gather(const reference::Window2D& w, size_t padded_width, DotGeometry& g) {
  const size_t width = static_cast<size_t>(w.output_width);
  const size_t stride = static_cast<size_t>(w.stride_width);
  const size_t dilation = static_cast<size_t>(w.dilation_width);
  const size_t row_step = static_cast<size_t>(w.stride_height) * padded_width;
  auto reach = [&](size_t rows, size_t columns) {
    return (rows - 1) * row_step + (columns - 1) * stride + 3 * dilation;
  };
  const size_t row_outputs = std::min(width, kDepthwiseDotPixels);
  if (reach(1, row_outputs) >= 64) return false;
  g.rows_per_vector = 1;
  if (width <= kDepthwiseDotPixels / 2) {
    g.rows_per_vector = std::min(kDepthwiseDotPixels / width, static_cast<size_t>(w.output_height));
    while (g.rows_per_vector > 1 && reach(g.rows_per_vector, width) >= 64) --g.rows_per_vector;
  }
  const size_t outputs = g.rows_per_vector > 1 ? g.rows_per_vector * width : kDepthwiseDotPixels;
  for (size_t k = 0; k < kDepthwiseDotPixels; ++k) {
    // Outputs past the vector's read byte 0 (their lanes are not stored).
    const size_t row = g.rows_per_vector > 1 ? k / width : 0;
    const size_t column = g.rows_per_vector > 1 ? k % width : k;
    for (size_t b = 0; b < 4; ++b) {
      g.gather[4 * k + b] =
          k < outputs ? static_cast<uint8_t>(row * row_step + column * stride + b * dilation) : 0;
    }
  }
  return true;
}

DotGeometry dot_geometry(const reference::Window2D& w) {
  constexpr size_t kBandBytes = 16 * 1024;
  DotGeometry g;
  static_cast<PaddedBands&>(g) = padded_bands(w, 1, kBandBytes);
  g.band_bytes = band_input_rows(w, g.band_rows) * g.padded_width + 64;
  g.fits = depthwise_dot_gather(w, g.padded_width, g);
  return g;
}

// Whether the dot-product rows compute this layer exactly: the table has them, a row's outputs
// reach at most 64 bytes per vector, the padding code zx + 128 is a byte, every w - zw is int8,
// and the requantization is the small-multiplier one without SiLU.
bool dot_rows_apply(const MicroKernels& kernels, const Conv2DShape& shape,
                    const Int8Requantization& q, const int8_t* weights) {
  const reference::Window2D& w = shape.window;
  if (!kernels.depthwise_dot_rows || !kernels.flip_sign_rows || q.silu || !dot_geometry(w).fits ||
      q.input_zero_point < -128 || q.input_zero_point > 127 ||
      !small_multipliers(q.multipliers.data(), q.multipliers.size(), q.output_zero_point)) {
    return false;
  }
  const size_t taps = static_cast<size_t>(w.kernel_height * w.kernel_width);
  for (size_t channel = 0; channel < static_cast<size_t>(shape.output_channels); ++channel) {
    for (size_t t = 0; t < taps; ++t) {
      const int32_t offset = weights[channel * taps + t] - q.weight_zero_points[channel];
      if (offset < -128 || offset > 127) return false;
    }
  }
  return true;
}

class DotDepthwiseConvolutionInt8 final : public Conv2DInt8 {
 public:
  DotDepthwiseConvolutionInt8(const MicroKernels& kernels, const Conv2DShape& shape,
                              const Int8Requantization& requantization,
                              const int8_t* constant_weights)
      : kernels_(kernels),
        shape_(shape),
        q_(requantization),
        geometry_(dot_geometry(shape.window)) {
    const reference::Window2D& w = shape.window;
    const size_t kernel_height = static_cast<size_t>(w.kernel_height);
    const size_t kernel_width = static_cast<size_t>(w.kernel_width);
    tap_groups_ = divide_round_up(kernel_width, 4);
    channel_weights_ = kernel_height * tap_groups_ * 4;
    const size_t output_channels = static_cast<size_t>(shape.output_channels);
    weights_.assign(output_channels * channel_weights_, 0);
    corrections_.resize(output_channels);
    // The padding code and every input enter the sums as code + 128: -(zx + 128) x sum(w - zw)
    // per channel takes the zero point back out.
    const int64_t shifted_zero_point = int64_t{q_.input_zero_point} + 128;
    for (size_t channel = 0; channel < output_channels; ++channel) {
      int64_t weight_sum = 0;
      for (size_t i = 0; i < kernel_height; ++i) {
        for (size_t j = 0; j < kernel_width; ++j) {
          const int32_t weight =
              constant_weights[(channel * kernel_height + i) * kernel_width + j] -
              q_.weight_zero_points[channel];
          weights_[channel * channel_weights_ + i * tap_groups_ * 4 + j] =
              static_cast<int8_t>(weight);
          weight_sum += weight;
        }
      }
      corrections_[channel] = static_cast<uint32_t>(-shifted_zero_point * weight_sum);
    }
    // Small planes share a task between channels (one claim and one padding fill for several):
    // about 2048 outputs per task.
    channels_per_task_ =
        std::max<size_t>(1, std::min(static_cast<size_t>(shape.input_channels),
                                     2048 / static_cast<size_t>(w.output_height * w.output_width)));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 depthwise %lldx%lld dot rows",
                  kernels.name, static_cast<long long>(w.kernel_height),
                  static_cast<long long>(w.kernel_width));
  }

  size_t scratch_bytes() const override { return geometry_.band_bytes; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t output_channels = static_cast<size_t>(shape_.output_channels);
    const size_t multiplier = output_channels / channels;
    const size_t input_height = static_cast<size_t>(w.input_height);
    const size_t input_width = static_cast<size_t>(w.input_width);
    const size_t output_height = static_cast<size_t>(w.output_height);
    const size_t output_width = static_cast<size_t>(w.output_width);
    const size_t pad_top = static_cast<size_t>(w.pad_top);
    const size_t width = geometry_.padded_width;
    const uint8_t padding = static_cast<uint8_t>(q_.input_zero_point + 128);
    const size_t channel_blocks = divide_round_up(channels, channels_per_task_);
    const size_t tasks = static_cast<size_t>(shape_.batch) * channel_blocks * geometry_.bands;

    // What every call shares; a task sets the band, channel and output.
    DepthwiseDotRows shared{};
    shared.input_stride = width;
    shared.gather = geometry_.gather;
    shared.rows_per_vector = geometry_.rows_per_vector;
    shared.kernel_height = static_cast<size_t>(w.kernel_height);
    shared.tap_groups = tap_groups_;
    shared.stride_height = static_cast<size_t>(w.stride_height);
    shared.stride_width = static_cast<size_t>(w.stride_width);
    shared.dilation_height = static_cast<size_t>(w.dilation_height);
    shared.dilation_width = static_cast<size_t>(w.dilation_width);
    shared.output_width = output_width;
    shared.output_zero_point = q_.output_zero_point;
    shared.output_minimum = q_.output_minimum;
    shared.output_maximum = q_.output_maximum;
    shared.output_stride = output_width;

    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      uint8_t* padded = pool.scratch(thread, geometry_.band_bytes);
      const size_t first_row = task % geometry_.bands * geometry_.band_rows;
      const size_t first_channel = task / geometry_.bands % channel_blocks * channels_per_task_;
      const size_t image = task / geometry_.bands / channel_blocks;
      const size_t rows = std::min(geometry_.band_rows, output_height - first_row);
      const size_t padded_rows = band_input_rows(w, rows);
      const size_t first_padded = first_row * static_cast<size_t>(w.stride_height);
      // Padded rows [inside_begin, inside_end) hold input rows; every other byte of the band
      // (and the 64 bytes the last row over-reads) is the padding code for every channel.
      const size_t inside_begin = std::min(padded_rows, pad_top - std::min(pad_top, first_padded));
      const size_t below_input = pad_top + input_height;
      const size_t inside_end =
          geometry_.copy_count == 0 || first_padded >= below_input
              ? inside_begin
              : std::max(inside_begin, std::min(padded_rows, below_input - first_padded));
      std::fill(padded, padded + padded_rows * width + 64, padding);

      DepthwiseDotRows dot = shared;
      dot.input = padded;
      dot.output_height = rows;
      const size_t last_channel = std::min(channels, first_channel + channels_per_task_);
      for (size_t channel = first_channel; channel < last_channel; ++channel) {
        const int8_t* source = input + (image * channels + channel) * input_height * input_width +
                               (first_padded + inside_begin - pad_top) * input_width +
                               (geometry_.copy_first - static_cast<size_t>(w.pad_left));
        kernels_.flip_sign_rows({source, input_width, inside_end - inside_begin,
                                 geometry_.copy_count,
                                 padded + inside_begin * width + geometry_.copy_first, width});
        for (size_t m = 0; m < multiplier; ++m) {
          const size_t output_channel = channel * multiplier + m;
          dot.weights = weights_.data() + output_channel * channel_weights_;
          // Wrapping int32 sums, as the kernel's: the true accumulator fits int32.
          dot.offset = static_cast<int32_t>(corrections_[output_channel] +
                                            static_cast<uint32_t>(bias ? bias[output_channel] : 0));
          dot.multiplier = q_.multipliers[output_channel];
          dot.output =
              output + ((image * output_channels + output_channel) * output_height + first_row) *
                           output_width;
          kernels_.depthwise_dot_rows(dot);
        }
      }
    });
  }

 private:
  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization q_;
  const DotGeometry geometry_;
  size_t tap_groups_ = 0;
  size_t channels_per_task_ = 1;
  size_t channel_weights_ = 0;         // bytes of one output channel's packed weights
  std::vector<int8_t> weights_;        // [channel][kernel row][tap group][4]: w - zw
  std::vector<uint32_t> corrections_;  // -(zx + 128) x sum(w - zw), per channel, modulo 2^32
  char algorithm_[64];
};

// ---- int8 on int16 tap pairs in lanes -------------------------------------------------------
// Where the table has depthwise_pairs (avx2). The lanes' task split (an image, a group of 8
// output channels, a band of output rows), but the band holds x - zx as int16 "slots" of two
// columns (micro_kernels.h InterleavePairs): one vpmaddwd per two taps of a kernel row, int32
// sums that are exact whatever the kernel size (no float bound), and the requantization on the
// sums in registers. Rows above or below the input are zero slots.
struct PairGeometry {
  size_t slot_step = 1;      // 2: stride 2 (any even stride), dilation 1
  size_t pixel_step = 1;     // slots from one output to the next
  size_t pair_step = 1;      // slots from one tap pair to the next
  size_t pairs = 1;          // ceil(kernel_width / 2)
  size_t slots = 0;          // slots the outputs read
  size_t row_slots = 0;      // max(slots, 8): the room of a band row
  size_t staging_width = 0;  // bytes of a staging row of codes (padded columns from 0)
  size_t copy_first = 0;     // first staging column that holds an input column
  size_t copy_count = 0;     // input columns inside the staging row
  size_t band_rows = 0;      // output rows per band (the last band may have fewer)
  size_t bands = 0;
};

PairGeometry pair_geometry(const reference::Window2D& w) {
  PairGeometry g;
  const size_t stride = static_cast<size_t>(w.stride_width);
  const size_t dilation = static_cast<size_t>(w.dilation_width);
  g.slot_step = dilation == 1 && stride % 2 == 0 ? 2 : 1;
  g.pixel_step = stride / g.slot_step;
  g.pair_step = 2 * dilation / g.slot_step;
  g.pairs = divide_round_up(static_cast<size_t>(w.kernel_width), 2);
  g.slots =
      (static_cast<size_t>(w.output_width) - 1) * g.pixel_step + (g.pairs - 1) * g.pair_step + 1;
  g.row_slots = std::max<size_t>(g.slots, 8);
  // interleave_pairs reads columns below slot_step x row_slots + dilation + 16.
  g.staging_width = align_bytes(g.slot_step * g.row_slots + dilation + 16);
  const size_t pad_left = static_cast<size_t>(w.pad_left);
  g.copy_first = std::min(pad_left, g.staging_width);
  g.copy_count =
      std::min(g.staging_width, pad_left + static_cast<size_t>(w.input_width)) - g.copy_first;
  // A band's slot rows within 96 KB (in L2; 16, 24 and 48 KB measured slower on MobileNetV2's
  // stride-2 layers: more tasks, each filling its staging and padding).
  constexpr size_t kBandBytes = 96 * 1024;
  const size_t row_bytes = g.row_slots * 16 * sizeof(int16_t);
  const size_t window_rows = static_cast<size_t>((w.kernel_height - 1) * w.dilation_height + 1);
  const size_t fitting_rows = kBandBytes / row_bytes;
  g.band_rows = fitting_rows > window_rows
                    ? (fitting_rows - window_rows) / static_cast<size_t>(w.stride_height) + 1
                    : 1;
  const size_t output_height = static_cast<size_t>(w.output_height);
  g.band_rows = std::min(g.band_rows, output_height);
  g.bands = divide_round_up(output_height, g.band_rows);
  return g;
}

// Whether the tap pairs compute this layer exactly: the table has them, the zero point code pads
// (an int8 code), every x - zx and w - zw fits int16 (they are within 255), the sums of products
// fit int32, and the requantization is the small-multiplier one without SiLU.
bool pairs_apply(const MicroKernels& kernels, const Conv2DShape& shape,
                 const Int8Requantization& q) {
  const reference::Window2D& w = shape.window;
  if (!kernels.depthwise_pairs || !kernels.interleave_pairs || q.silu ||
      q.input_zero_point < -128 || q.input_zero_point > 127 ||
      !small_multipliers(q.multipliers.data(), q.multipliers.size(), q.output_zero_point)) {
    return false;
  }
  for (int32_t zero_point : q.weight_zero_points) {
    if (zero_point < -128 || zero_point > 127) return false;
  }
  const int64_t taps = w.kernel_height * w.kernel_width;
  return taps * largest_int8_offset(q.input_zero_point) * largest_weight_offset(q) <
         (int64_t{1} << 31);
}

// count bytes from `from` to `to` in 16- and 8-byte pieces, the last ending at the run's end
// (overlapping the one before): a staging row is a few dozen bytes, where a memmove call per
// lane and row cost more than the copy.
inline void copy_short_run(const int8_t* from, size_t count, int8_t* to) {
  if (count >= 16) {
    for (size_t i = 0; i + 16 < count; i += 16) std::memcpy(to + i, from + i, 16);
    std::memcpy(to + count - 16, from + count - 16, 16);
  } else if (count >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + count - 8, from + count - 8, 8);
  } else {
    for (size_t i = 0; i < count; ++i) to[i] = from[i];
  }
}

class PairDepthwiseConvolutionInt8 final : public Conv2DInt8 {
 public:
  PairDepthwiseConvolutionInt8(const MicroKernels& kernels, const Conv2DShape& shape,
                               const Int8Requantization& requantization,
                               const int8_t* constant_weights)
      : kernels_(kernels),
        shape_(shape),
        q_(requantization),
        geometry_(pair_geometry(shape.window)) {
    const reference::Window2D& w = shape.window;
    const size_t kernel_height = static_cast<size_t>(w.kernel_height);
    const size_t kernel_width = static_cast<size_t>(w.kernel_width);
    const size_t taps = kernel_height * kernel_width;
    const size_t output_channels = static_cast<size_t>(shape.output_channels);
    groups_ = divide_round_up(output_channels, kDepthwiseLanes);
    group_weights_ = kernel_height * geometry_.pairs * 16;
    weights_.assign(groups_ * group_weights_, 0);
    bias_limits_.resize(output_channels);
    for (size_t channel = 0; channel < output_channels; ++channel) {
      const size_t group = channel / kDepthwiseLanes;
      const size_t lane = channel % kDepthwiseLanes;
      int64_t magnitudes = 0;
      for (size_t i = 0; i < kernel_height; ++i) {
        for (size_t j = 0; j < kernel_width; ++j) {
          const int32_t offset = constant_weights[channel * taps + i * kernel_width + j] -
                                 q_.weight_zero_points[channel];
          weights_[group * group_weights_ + ((i * geometry_.pairs + j / 2) * 8 + lane) * 2 +
                   j % 2] = static_cast<int16_t>(offset);
          magnitudes += offset < 0 ? -offset : offset;
        }
      }
      bias_limits_[channel] =
          float_requantization_bias_limit(magnitudes, q_.input_zero_point, q_.multipliers[channel]);
    }
    const size_t band_padded_rows = band_input_rows(w, geometry_.band_rows);
    const size_t row_elements = geometry_.row_slots * 16;
    staging_offset_ = align_bytes(band_padded_rows * row_elements * sizeof(int16_t));
    discard_offset_ = staging_offset_ + align_bytes(kDepthwiseLanes * geometry_.staging_width);
    scratch_bytes_ =
        discard_offset_ + align_bytes(geometry_.band_rows * static_cast<size_t>(w.output_width));
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 depthwise %lldx%lld pairs", kernels.name,
                  static_cast<long long>(w.kernel_height), static_cast<long long>(w.kernel_width));
  }

  size_t scratch_bytes() const override { return scratch_bytes_; }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const reference::Window2D& w = shape_.window;
    const PairGeometry& g = geometry_;
    const size_t channels = static_cast<size_t>(shape_.input_channels);
    const size_t output_channels = static_cast<size_t>(shape_.output_channels);
    const size_t multiplier = output_channels / channels;
    const size_t input_height = static_cast<size_t>(w.input_height);
    const size_t input_width = static_cast<size_t>(w.input_width);
    const size_t output_height = static_cast<size_t>(w.output_height);
    const size_t output_width = static_cast<size_t>(w.output_width);
    const size_t output_plane = output_height * output_width;
    const size_t pad_top = static_cast<size_t>(w.pad_top);
    const size_t pad_left = static_cast<size_t>(w.pad_left);
    const size_t row_elements = g.row_slots * 16;
    const int8_t padding = static_cast<int8_t>(q_.input_zero_point);
    const size_t tasks = static_cast<size_t>(shape_.batch) * groups_ * g.bands;

    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      uint8_t* scratch = pool.scratch(thread, scratch_bytes_);
      auto* band = reinterpret_cast<int16_t*>(scratch);
      auto* discard = reinterpret_cast<int8_t*>(scratch + discard_offset_);
      const size_t band_index = task % g.bands;
      const size_t group = task / g.bands % groups_;
      const size_t image = task / g.bands / groups_;
      const size_t first_channel = group * kDepthwiseLanes;
      const size_t first_row = band_index * g.band_rows;
      const size_t rows = std::min(g.band_rows, output_height - first_row);

      // Lane l is output channel first_channel + l (lanes past the last repeat its input with
      // zero weights), reading input channel (that) / multiplier.
      int32_t lane_bias[kDepthwiseLanes];
      float lane_multipliers[kDepthwiseLanes];
      const int8_t* planes[kDepthwiseLanes];
      int8_t* outputs[kDepthwiseLanes];
      for (size_t l = 0; l < kDepthwiseLanes; ++l) {
        const size_t channel = std::min(first_channel + l, output_channels - 1);
        planes[l] = input + (image * channels + channel / multiplier) * input_height * input_width;
        outputs[l] = first_channel + l < output_channels
                         ? output + (image * output_channels + channel) * output_plane +
                               first_row * output_width
                         : discard;
      }

      // Padded rows of the band: row r is padded input row first_row * stride + r; the rows
      // inside the input are one run [inside_begin, inside_end), the others zero slots.
      const size_t padded_rows = band_input_rows(w, rows);
      const size_t first_padded = first_row * static_cast<size_t>(w.stride_height);
      const size_t inside_begin = std::min(padded_rows, pad_top - std::min(pad_top, first_padded));
      const size_t below_input = pad_top + input_height;  // first padded row under the input
      const size_t inside_end =
          first_padded >= below_input
              ? inside_begin
              : std::max(inside_begin, std::min(padded_rows, below_input - first_padded));
      std::fill(band, band + inside_begin * row_elements, int16_t{0});
      std::fill(band + inside_end * row_elements, band + padded_rows * row_elements, int16_t{0});
      if (inside_end > inside_begin) {
        // Each lane's input row goes first into a staging row of codes padded with the zero
        // point code (in L1), which interleave_pairs then reads without edge cases: reading
        // the input rows in place, with shuffles into place and blends of the zero point at the
        // row edges, measured as fast on 112-wide rows and slower on narrower ones.
        int8_t* const staging = reinterpret_cast<int8_t*>(scratch + staging_offset_);
        const int8_t* sources[kDepthwiseLanes];
        for (size_t l = 0; l < kDepthwiseLanes; ++l) {
          int8_t* row = staging + l * g.staging_width;
          sources[l] = row;
          std::fill(row, row + g.copy_first, padding);
          std::fill(row + g.copy_first + g.copy_count, row + g.staging_width, padding);
        }
        InterleavePairs interleave{};
        interleave.sources = sources;
        interleave.source_stride = 0;
        interleave.rows = 1;
        interleave.slots = g.slots;
        interleave.slot_step = g.slot_step;
        interleave.dilation_width = static_cast<size_t>(w.dilation_width);
        interleave.zero_point = q_.input_zero_point;
        interleave.out_row_stride = row_elements;
        for (size_t r = inside_begin; r < inside_end; ++r) {
          const size_t input_row = first_padded + r - pad_top;
          for (size_t l = 0; l < kDepthwiseLanes; ++l) {
            copy_short_run(planes[l] + input_row * input_width + (g.copy_first - pad_left),
                           g.copy_count, staging + l * g.staging_width + g.copy_first);
          }
          interleave.out = band + r * row_elements;
          kernels_.interleave_pairs(interleave);
        }
      }

      DepthwisePairs pairs{};
      pairs.input = band;
      pairs.input_stride = row_elements;
      pairs.weights = weights_.data() + group * group_weights_;
      pairs.kernel_height = static_cast<size_t>(w.kernel_height);
      pairs.pairs = g.pairs;
      pairs.stride_height = static_cast<size_t>(w.stride_height);
      pairs.dilation_height = static_cast<size_t>(w.dilation_height);
      pairs.pixel_step = g.pixel_step;
      pairs.pair_step = g.pair_step;
      pairs.output_height = rows;
      pairs.output_width = output_width;
      pairs.requantization =
          lane_requantization(first_channel, output_channels, bias, q_, bias_limits_, lane_bias,
                              lane_multipliers, outputs);
      kernels_.depthwise_pairs(pairs);
    });
  }

 private:
  const MicroKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization q_;
  const PairGeometry geometry_;
  size_t groups_ = 0;
  size_t group_weights_ = 0;          // int16 weights of a group: [kernel row][pair][8][2]
  std::vector<int16_t> weights_;      // per group, w - zw (0 for a pair's missing tap)
  std::vector<int64_t> bias_limits_;  // per output channel, float_requantization_bias_limit
  size_t staging_offset_ = 0;
  size_t discard_offset_ = 0;
  size_t scratch_bytes_ = 0;
  char algorithm_[64];
};

// Where the tap pairs measured faster than the float lanes on avx2 (docs/cpu-kernels.md
// "Session 12"): strides 1 and 2 without dilation, on input rows at least 28 wide for 3x3
// kernels (0.71-0.93x of the lanes' time on MobileNetV2's 28- to 112-wide layers; its 14-wide
// stride-1 ones at parity, the 14-wide stride-2 and 7-wide ones 1.2-1.5x) and at least 14 wide
// for 5x5 (0.70-0.94x). Stride 3 measured slower (1.25x; three slots per output).
bool prefer_pairs(const Conv2DShape& shape) {
  const reference::Window2D& w = shape.window;
  return (w.stride_width == 1 || w.stride_width == 2) && w.dilation_width == 1 &&
         w.input_width >= (w.kernel_width >= 5 ? 14 : 28);
}

// Channels in lanes, except float32 stride-1 planes at least 48 outputs wide: there the
// plane kernel's vectors along a row are full and it reads rows in place of interleaving them
// (MobileNetV2's 32 @112 layer: 0.20-0.21 ms on planes, 0.29-0.31 in lanes; every narrower or
// strided layer, and every int8 one, runs faster in lanes: docs/cpu-kernels.md).
bool prefer_lanes(const Conv2DShape& shape, bool is_float) {
  const reference::Window2D& w = shape.window;
  return !(is_float && w.stride_width == 1 && w.output_width >= 48);
}

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
  if (const auto form = InPlaceDepthwiseConvolution::form(kernels, shape)) {
    return std::make_unique<InPlaceDepthwiseConvolution>(kernels, shape, *form, activation,
                                                         constant_weights);
  }
  if (prefer_lanes(shape, true)) {
    return std::make_unique<LaneDepthwiseConvolution>(kernels, shape, activation, constant_weights);
  }
  return std::make_unique<DepthwiseConvolution>(kernels, shape, activation, constant_weights);
}

std::unique_ptr<Conv2DInt8> make_pair_depthwise_conv2d_int8(
    const MicroKernels& kernels, const Conv2DShape& shape, const Int8Requantization& requantization,
    const int8_t* constant_weights) {
  if (!is_depthwise(shape) || !constant_weights || !pairs_apply(kernels, shape, requantization)) {
    return nullptr;
  }
  return std::make_unique<PairDepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                        constant_weights);
}

std::unique_ptr<Conv2DInt8> make_depthwise_conv2d_int8(const MicroKernels& kernels,
                                                       const Conv2DShape& shape,
                                                       const Int8Requantization& requantization,
                                                       const int8_t* constant_weights) {
  if (!is_depthwise(shape) || !constant_weights) return nullptr;
  // Exact in wrapping int32 whatever the kernel size, so before the float paths' bound.
  if (dot_rows_apply(kernels, shape, requantization, constant_weights)) {
    return std::make_unique<DotDepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                         constant_weights);
  }
  if (pairs_apply(kernels, shape, requantization) && prefer_pairs(shape)) {
    return std::make_unique<PairDepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                          constant_weights);
  }
  const int64_t taps = shape.window.kernel_height * shape.window.kernel_width;
  const int64_t bound = taps * largest_int8_offset(requantization.input_zero_point) *
                        largest_weight_offset(requantization);
  if (bound >= (int64_t{1} << 24)) return nullptr;
  // requantize_lanes has only the small-multiplier path and no SiLU epilogue.
  if (prefer_lanes(shape, false) && !requantization.silu &&
      small_multipliers(requantization.multipliers.data(), requantization.multipliers.size(),
                        requantization.output_zero_point)) {
    return std::make_unique<LaneDepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                          constant_weights);
  }
  return std::make_unique<DepthwiseConvolutionInt8>(kernels, shape, requantization,
                                                    constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
