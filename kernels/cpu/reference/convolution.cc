#include "reference/convolution.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

#include "core/reproducible_exp.h"

namespace orknn::kernels::reference {

float apply_fused_activation(const FusedActivation& activation, float value) {
  switch (activation.kind) {
    case FusedActivation::Kind::kNone:
      return value;
    case FusedActivation::Kind::kRelu:
      return value < 0.0f ? 0.0f : value;
    case FusedActivation::Kind::kClip:
      return std::min(std::max(value, activation.minimum), activation.maximum);
    case FusedActivation::Kind::kLeakyRelu:
      return value < 0.0f ? value * activation.alpha : value;
  }
  return value;
}

float requantization_multiplier(double input_scale, double weight_scale, double output_scale,
                                double alpha) {
  return static_cast<float>(alpha * input_scale * weight_scale / output_scale);
}

int8_t requantize(int32_t accumulator, float multiplier, int32_t output_zero_point,
                  int32_t output_minimum, int32_t output_maximum) {
  const double scaled = static_cast<double>(accumulator) * static_cast<double>(multiplier);
  // Bound before the integer conversion so huge multipliers cannot overflow it; anything this
  // large saturates anyway.
  const double bounded = std::min(std::max(scaled, -1e9), 1e9);
  // std::nearbyint rounds half to even in the default floating-point environment.
  const int64_t value = static_cast<int64_t>(std::nearbyint(bounded)) + output_zero_point;
  return static_cast<int8_t>(
      std::min<int64_t>(std::max<int64_t>(value, output_minimum), output_maximum));
}

float silu_dequantization_scale(double input_scale, double weight_scale) {
  return static_cast<float>(input_scale * weight_scale);
}

int8_t requantize_silu(int32_t accumulator, float scale, float output_scale,
                       int32_t output_zero_point) {
  const float real =
      static_cast<float>(static_cast<double>(accumulator) * static_cast<double>(scale));
  // The sigmoid's two overflow-free forms, 1 / (1 + e^-r) for r >= 0 and e^r / (1 + e^r) below,
  // share e = e^-|r|; the exp is the reproducible one so every device gives these bits.
  const float e = reproducible_exp(-std::fabs(real));
  const float sigmoid = (real >= 0.0f ? 1.0f : e) / (1.0f + e);
  const float activated = real * sigmoid;
  // docs/quantization.md section 2: one float division, bounded, rounded half to even.
  const float scaled = activated / output_scale;
  if (std::isnan(scaled)) return static_cast<int8_t>(std::clamp(output_zero_point, -128, 127));
  const float bounded = std::min(std::max(scaled, -1e6f), 1e6f);
  const int64_t value = static_cast<int64_t>(std::nearbyint(bounded)) + output_zero_point;
  return static_cast<int8_t>(std::min<int64_t>(std::max<int64_t>(value, -128), 127));
}

int8_t requantize_channel(const Int8Requantization& q, int32_t accumulator, size_t channel) {
  if (q.silu) {
    return requantize_silu(accumulator, q.multipliers[channel], q.output_scale,
                           q.output_zero_point);
  }
  return requantize(accumulator, q.multipliers[channel], q.output_zero_point, q.output_minimum,
                    q.output_maximum);
}

namespace {

// Calls visit(output_index, n, oc, oh, ow) for every output element in memory order.
template <typename Visit>
void for_each_output(const Conv2DShape& s, Visit&& visit) {
  const Window2D& window = s.window;
  int64_t index = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oc = 0; oc < s.output_channels; ++oc) {
      for (int64_t oh = 0; oh < window.output_height; ++oh) {
        for (int64_t ow = 0; ow < window.output_width; ++ow) visit(index++, n, oc, oh, ow);
      }
    }
  }
}

// Calls visit(input_index, weight_index) for every product that contributes to convolution
// output (n, oc, oh, ow); taps that fall into the padding are skipped (they read zero).
template <typename Visit>
void for_each_conv_tap(const Conv2DShape& s, int64_t n, int64_t oc, int64_t oh, int64_t ow,
                       Visit&& visit) {
  const Window2D& window = s.window;
  const int64_t in_per_group = s.input_channels / s.groups;
  const int64_t out_per_group = s.output_channels / s.groups;
  const int64_t group = oc / out_per_group;
  for (int64_t local = 0; local < in_per_group; ++local) {
    const int64_t ic = group * in_per_group + local;
    for (int64_t kh = 0; kh < window.kernel_height; ++kh) {
      const int64_t ih = oh * window.stride_height - window.pad_top + kh * window.dilation_height;
      if (ih < 0 || ih >= window.input_height) continue;
      for (int64_t kw = 0; kw < window.kernel_width; ++kw) {
        const int64_t iw = ow * window.stride_width - window.pad_left + kw * window.dilation_width;
        if (iw < 0 || iw >= window.input_width) continue;
        visit(((n * s.input_channels + ic) * window.input_height + ih) * window.input_width + iw,
              ((oc * in_per_group + local) * window.kernel_height + kh) * window.kernel_width + kw);
      }
    }
  }
}

// The transposed convolution as a gather: output position o receives input position i through
// kernel tap k when o + pad = i * stride + k * dilation.
template <typename Visit>
void for_each_transpose_tap(const Conv2DShape& s, int64_t n, int64_t oc, int64_t oh, int64_t ow,
                            Visit&& visit) {
  const Window2D& window = s.window;
  const int64_t in_per_group = s.input_channels / s.groups;
  const int64_t out_per_group = s.output_channels / s.groups;
  const int64_t group = oc / out_per_group;
  const int64_t local_oc = oc % out_per_group;
  for (int64_t local = 0; local < in_per_group; ++local) {
    const int64_t ic = group * in_per_group + local;
    for (int64_t kh = 0; kh < window.kernel_height; ++kh) {
      const int64_t row = oh + window.pad_top - kh * window.dilation_height;
      if (row < 0 || row % window.stride_height != 0) continue;
      const int64_t ih = row / window.stride_height;
      if (ih >= window.input_height) continue;
      for (int64_t kw = 0; kw < window.kernel_width; ++kw) {
        const int64_t column = ow + window.pad_left - kw * window.dilation_width;
        if (column < 0 || column % window.stride_width != 0) continue;
        const int64_t iw = column / window.stride_width;
        if (iw >= window.input_width) continue;
        visit(((n * s.input_channels + ic) * window.input_height + ih) * window.input_width + iw,
              ((ic * out_per_group + local_oc) * window.kernel_height + kh) * window.kernel_width +
                  kw);
      }
    }
  }
}

template <bool kTranspose>
void convolve_float(const Conv2DShape& s, const FusedActivation& activation, const float* input,
                    const float* weights, const float* bias, float* output) {
  for_each_output(s, [&](int64_t index, int64_t n, int64_t oc, int64_t oh, int64_t ow) {
    float sum = 0.0f;
    auto accumulate = [&](int64_t i, int64_t w) { sum += input[i] * weights[w]; };
    if constexpr (kTranspose) {
      for_each_transpose_tap(s, n, oc, oh, ow, accumulate);
    } else {
      for_each_conv_tap(s, n, oc, oh, ow, accumulate);
    }
    if (bias) sum += bias[oc];
    output[index] = apply_fused_activation(activation, sum);
  });
}

template <bool kTranspose>
void convolve_int8(const Conv2DShape& s, const Int8Requantization& q, const int8_t* input,
                   const int8_t* weights, const int32_t* bias, int8_t* output) {
  for_each_output(s, [&](int64_t index, int64_t n, int64_t oc, int64_t oh, int64_t ow) {
    const int32_t weight_zero_point = q.weight_zero_points[static_cast<size_t>(oc)];
    int32_t accumulator = bias ? bias[oc] : 0;
    auto accumulate = [&](int64_t i, int64_t w) {
      accumulator += (input[i] - q.input_zero_point) * (weights[w] - weight_zero_point);
    };
    if constexpr (kTranspose) {
      for_each_transpose_tap(s, n, oc, oh, ow, accumulate);
    } else {
      for_each_conv_tap(s, n, oc, oh, ow, accumulate);
    }
    output[index] = requantize_channel(q, accumulator, static_cast<size_t>(oc));
  });
}

}  // namespace

void conv2d(const Conv2DShape& shape, const FusedActivation& activation, const float* input,
            const float* weights, const float* bias, float* output) {
  convolve_float<false>(shape, activation, input, weights, bias, output);
}

void conv_transpose2d(const Conv2DShape& shape, const FusedActivation& activation,
                      const float* input, const float* weights, const float* bias, float* output) {
  convolve_float<true>(shape, activation, input, weights, bias, output);
}

void conv2d_int8(const Conv2DShape& shape, const Int8Requantization& requantization,
                 const int8_t* input, const int8_t* weights, const int32_t* bias, int8_t* output) {
  convolve_int8<false>(shape, requantization, input, weights, bias, output);
}

void conv_transpose2d_int8(const Conv2DShape& shape, const Int8Requantization& requantization,
                           const int8_t* input, const int8_t* weights, const int32_t* bias,
                           int8_t* output) {
  convolve_int8<true>(shape, requantization, input, weights, bias, output);
}

// --- N spatial axes -------------------------------------------------------------------------

namespace {

// Advances the per-axis counter `index` below `limits` in row-major order; false after the last.
bool next_position(std::array<int64_t, kMaxSpatialRank>* index,
                   const std::array<int64_t, kMaxSpatialRank>& limits, size_t rank) {
  for (size_t d = rank; d-- > 0;) {
    if (++(*index)[d] < limits[d]) return true;
    (*index)[d] = 0;
  }
  return false;
}

int64_t volume(const std::array<int64_t, kMaxSpatialRank>& extent, size_t rank) {
  int64_t size = 1;
  for (size_t d = 0; d < rank; ++d) size *= extent[d];
  return size;
}

// Output (n, oc, position) of a convolution, or of a transposed one read as a gather: input
// position i meets output position o through tap k when o = i * stride - pad + k * dilation.
template <bool kTranspose>
float convolve_nd_at(const ConvNDShape& s, const float* input, const float* weights, int64_t n,
                     int64_t oc, const std::array<int64_t, kMaxSpatialRank>& position) {
  const WindowND& window = s.window;
  const size_t rank = window.rank;
  const int64_t in_per_group = s.input_channels / s.groups;
  const int64_t out_per_group = s.output_channels / s.groups;
  const int64_t group = oc / out_per_group;
  const int64_t input_volume = volume(window.input, rank);
  const int64_t kernel_volume = volume(window.kernel, rank);
  float sum = 0.0f;
  for (int64_t local = 0; local < in_per_group; ++local) {
    const int64_t ic = group * in_per_group + local;
    const float* channel = input + (n * s.input_channels + ic) * input_volume;
    const float* kernel = weights + (kTranspose ? ic * out_per_group + oc % out_per_group
                                                : oc * in_per_group + local) *
                                        kernel_volume;
    std::array<int64_t, kMaxSpatialRank> tap{};
    int64_t tap_index = 0;
    do {
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < rank && inside; ++d) {
        int64_t at;
        if constexpr (kTranspose) {
          const int64_t stretched = position[d] + window.pad_begin[d] - tap[d] * window.dilation[d];
          inside = stretched >= 0 && stretched % window.stride[d] == 0;
          at = stretched / window.stride[d];
        } else {
          at = position[d] * window.stride[d] - window.pad_begin[d] + tap[d] * window.dilation[d];
          inside = at >= 0;
        }
        inside = inside && at < window.input[d];
        offset = offset * window.input[d] + at;
      }
      if (inside) sum += channel[offset] * kernel[tap_index];
      ++tap_index;
    } while (next_position(&tap, window.kernel, rank));
  }
  return sum;
}

template <bool kTranspose>
void convolve_nd(const ConvNDShape& s, const FusedActivation& activation, const float* input,
                 const float* weights, const float* bias, float* output) {
  int64_t index = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oc = 0; oc < s.output_channels; ++oc) {
      std::array<int64_t, kMaxSpatialRank> position{};
      do {
        float sum = convolve_nd_at<kTranspose>(s, input, weights, n, oc, position);
        if (bias) sum += bias[oc];
        output[index++] = apply_fused_activation(activation, sum);
      } while (next_position(&position, s.window.output, s.window.rank));
    }
  }
}

}  // namespace

void conv_nd(const ConvNDShape& shape, const FusedActivation& activation, const float* input,
             const float* weights, const float* bias, float* output) {
  convolve_nd<false>(shape, activation, input, weights, bias, output);
}

void conv_transpose_nd(const ConvNDShape& shape, const FusedActivation& activation,
                       const float* input, const float* weights, const float* bias, float* output) {
  convolve_nd<true>(shape, activation, input, weights, bias, output);
}

}  // namespace orknn::kernels::reference
