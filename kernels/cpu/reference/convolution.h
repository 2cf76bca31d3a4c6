// Reference kernels of the convolution family: 2-D convolution and transposed convolution in
// float32 and int8 (a 1-D operator runs as 2-D with height 1), plus the pieces every int8 kernel
// of the family shares: the fused activation and the requantization rule.
//
// These are the oracle for optimized kernels and for the NPU emulator. The int8 arithmetic is
// specified in docs/quantization.md; any change here must change that document too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reference/window_geometry.h"

namespace orknn::kernels::reference {

// An activation our converter fuses into Conv, ConvTranspose, Gemm and MatMul; applied after
// the bias.
struct FusedActivation {
  enum class Kind { kNone, kRelu, kClip, kLeakyRelu };
  Kind kind = Kind::kNone;
  float minimum = 0.0f;  // kClip
  float maximum = 0.0f;  // kClip
  float alpha = 0.0f;    // kLeakyRelu
};

float apply_fused_activation(const FusedActivation& activation, float value);

// How int32 accumulators become int8 outputs, per output channel c:
//   y = clamp(round_half_to_even(double(acc) * double(multipliers[c])) + output_zero_point,
//             output_minimum, output_maximum)
// where the accumulator is bias[c] + sum((x - input_zero_point) * (w - weight_zero_points[c])).
// The clamp bounds are [-128, 127] narrowed by a fused Relu or Clip.
// With a fused SiLU (`silu`), multipliers[c] is instead the dequantization scale
// D[c] = silu_dequantization_scale(input_scale, weight_scale[c]) and each output is
// requantize_silu(acc, D[c], output_scale, output_zero_point): a SiLU is not a clamp.
// Callers guarantee that the accumulator fits int32 (the kernel factories check a worst-case
// bound and otherwise fall back to the float domain).
struct Int8Requantization {
  int32_t input_zero_point = 0;
  std::vector<int32_t> weight_zero_points;  // one per output channel
  std::vector<float> multipliers;           // one per output channel
  int32_t output_zero_point = 0;
  int32_t output_minimum = -128;
  int32_t output_maximum = 127;
  bool silu = false;
  float output_scale = 1.0f;  // silu only
};

// M = float(alpha * input_scale * weight_scale / output_scale), evaluated in double in exactly
// that order and rounded once to float.
float requantization_multiplier(double input_scale, double weight_scale, double output_scale,
                                double alpha = 1.0);

int8_t requantize(int32_t accumulator, float multiplier, int32_t output_zero_point,
                  int32_t output_minimum, int32_t output_maximum);

// D = float(input_scale * weight_scale), evaluated in double and rounded once to float.
float silu_dequantization_scale(double input_scale, double weight_scale);

// The SiLU epilogue of docs/quantization.md 4.3: real = float(double(acc) * double(scale)), then
// the SiLU op's own float function real * sigmoid(real), then the one quantization rule
// (float division by output_scale, round half to even, saturate).
int8_t requantize_silu(int32_t accumulator, float scale, float output_scale,
                       int32_t output_zero_point);

// requantize or requantize_silu, as `q` says, for output channel `channel`.
int8_t requantize_channel(const Int8Requantization& q, int32_t accumulator, size_t channel);

// A 2-D (transposed) convolution, NCHW.
// Convolution weights are [output_channels][input_channels / groups][kernel_height][kernel_width].
// Transposed convolution weights are [input_channels][output_channels / groups][kh][kw], and
// the window's pads crop the full transposed output (they may exceed it on the high side, as
// with output_padding or output_shape).
struct Conv2DShape {
  int64_t batch = 1;
  int64_t input_channels = 1;
  int64_t output_channels = 1;
  int64_t groups = 1;
  Window2D window;
};

// `bias` may be null (zero). Output [batch][output_channels][output_height][output_width].
void conv2d(const Conv2DShape& shape, const FusedActivation& activation, const float* input,
            const float* weights, const float* bias, float* output);
void conv_transpose2d(const Conv2DShape& shape, const FusedActivation& activation,
                      const float* input, const float* weights, const float* bias, float* output);

// The same over N spatial axes (3-D volumes and up), float32 only. Weights are
// [output_channels][input_channels / groups][kernel...] (transposed: [input_channels]
// [output_channels / groups][kernel...]), spatial axes row-major.
struct ConvNDShape {
  int64_t batch = 1;
  int64_t input_channels = 1;
  int64_t output_channels = 1;
  int64_t groups = 1;
  WindowND window;
};
void conv_nd(const ConvNDShape& shape, const FusedActivation& activation, const float* input,
             const float* weights, const float* bias, float* output);
void conv_transpose_nd(const ConvNDShape& shape, const FusedActivation& activation,
                       const float* input, const float* weights, const float* bias, float* output);

// int8 versions; `bias` is int32 at scale input_scale x weight_scale[c] and may be null.
void conv2d_int8(const Conv2DShape& shape, const Int8Requantization& requantization,
                 const int8_t* input, const int8_t* weights, const int32_t* bias, int8_t* output);
void conv_transpose2d_int8(const Conv2DShape& shape, const Int8Requantization& requantization,
                           const int8_t* input, const int8_t* weights, const int32_t* bias,
                           int8_t* output);

}  // namespace orknn::kernels::reference
