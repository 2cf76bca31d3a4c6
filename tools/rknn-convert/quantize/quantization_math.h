// The quantization parameters rknn-convert chooses, in the forms docs/quantization.md section 1
// prescribes: activations int8 per-tensor asymmetric; weights int8 symmetric (zero point 0) per
// output channel or per tensor; biases int32 with scale input_scale x weight_scale[c] and zero
// point 0. Every float -> integer conversion uses the runtime's rule (core/dtype.h).
#pragma once

#include <vector>

#include "ir/graph.h"
#include "quantize/tensor_statistics.h"

namespace orknn::convert {

// Scale and zero point covering [range.min, range.max] (widened to include 0, so that zero
// padding and ReLU's zero are exact): scale = (max - min) / 255, zero point = -128 - min / scale.
model::Quantization activation_quantization(const TensorRange& range);

// The range an activation quantization represents, [(-128 - zp) * s, (127 - zp) * s].
TensorRange represented_range(const model::Quantization& quantization);

// Symmetric int8 weights: per slice along `axis` (axis >= 0) or per tensor (axis < 0).
struct QuantizedConstant {
  ir::Bytes bytes;
  model::Quantization quantization;
};
QuantizedConstant quantize_weights(const std::vector<float>& values, const ir::Shape& shape,
                                   int axis);

// An int32 bias for `channels` output channels: bias[c] / (input_scale * weight_scale[c]).
// `values` holds one value per channel (already broadcast).
QuantizedConstant quantize_bias(const std::vector<float>& values, float input_scale,
                                const std::vector<float>& weight_scales);

}  // namespace orknn::convert
