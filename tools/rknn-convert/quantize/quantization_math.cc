#include "quantize/quantization_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace orknn::convert {

model::Quantization activation_quantization(const TensorRange& range) {
  const double low = std::min<double>(range.min, 0.0);
  const double high = std::max<double>(range.max, 0.0);
  model::Quantization quantization;
  // A tensor that is always zero: any scale represents it; 1 keeps requantization benign.
  float scale = high > low ? static_cast<float>((high - low) / 255.0) : 1.0f;
  if (!(scale > 0.0f) || !std::isfinite(scale)) scale = 1.0f;
  const double zero_point = std::nearbyint(-128.0 - low / static_cast<double>(scale));
  quantization.scales = {scale};
  quantization.zero_points = {static_cast<int32_t>(std::min(127.0, std::max(-128.0, zero_point)))};
  quantization.axis = 0;
  return quantization;
}

TensorRange represented_range(const model::Quantization& quantization) {
  const float scale = quantization.scales.at(0);
  const int32_t zero_point = quantization.zero_points.at(0);
  return {static_cast<float>(-128 - zero_point) * scale,
          static_cast<float>(127 - zero_point) * scale};
}

QuantizedConstant quantize_weights(const std::vector<float>& values, const ir::Shape& shape,
                                   int axis) {
  QuantizedConstant result;
  size_t channels = 1;
  size_t inner = values.size();
  if (axis >= 0) {
    channels = static_cast<size_t>(shape[static_cast<size_t>(axis)]);
    inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d)
      inner *= static_cast<size_t>(shape[d]);
  }
  std::vector<float> largest(channels, 0.0f);
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t channel = axis >= 0 ? (i / inner) % channels : 0;
    if (std::isfinite(values[i]))
      largest[channel] = std::max(largest[channel], std::fabs(values[i]));
  }
  result.quantization.axis = axis >= 0 ? axis : 0;
  for (size_t c = 0; c < channels; ++c) {
    // An all-zero channel: any scale works; 1 keeps its bias scale (input scale x 1) sane.
    const float scale = largest[c] > 0.0f ? largest[c] / 127.0f : 1.0f;
    result.quantization.scales.push_back(scale > 0.0f && std::isfinite(scale) ? scale : 1.0f);
    result.quantization.zero_points.push_back(0);
  }
  result.bytes.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t channel = axis >= 0 ? (i / inner) % channels : 0;
    result.bytes[i] =
        static_cast<uint8_t>(quantize_int8(values[i], result.quantization.scales[channel], 0));
  }
  return result;
}

QuantizedConstant quantize_bias(const std::vector<float>& values, float input_scale,
                                const std::vector<float>& weight_scales) {
  QuantizedConstant result;
  const size_t channels = values.size();
  result.bytes.resize(channels * 4);
  result.quantization.axis = 0;
  for (size_t c = 0; c < channels; ++c) {
    const float weight_scale = weight_scales.size() == 1 ? weight_scales[0] : weight_scales[c];
    // The float32 product the runtime checks against (docs/quantization.md 4.1).
    const float scale = input_scale * weight_scale;
    double code = std::nearbyint(static_cast<double>(values[c]) / static_cast<double>(scale));
    if (!std::isfinite(code)) code = 0;
    code = std::min(2147483647.0, std::max(-2147483648.0, code));
    const int32_t value = static_cast<int32_t>(code);
    std::memcpy(result.bytes.data() + 4 * c, &value, 4);
    result.quantization.scales.push_back(scale);
    result.quantization.zero_points.push_back(0);
  }
  return result;
}

}  // namespace orknn::convert
