#include "graph/tensor_conversion.h"

#include <cstring>
#include <limits>

namespace orknn::graph {
namespace {

// Number of elements that share one scale for per-channel quantization along `axis`.
int64_t inner_size_after(const Shape& shape, int32_t axis) {
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  return inner;
}

template <typename Integer, typename Function>
void for_each_quantized(const Tensor& tensor, Function&& function) {
  const Quantization& q = tensor.quantization;
  const int64_t count = tensor.elements();
  if (!q.is_per_channel()) {
    for (int64_t i = 0; i < count; ++i) function(i, q.scales[0], q.zero_points[0]);
    return;
  }
  const int64_t inner = inner_size_after(tensor.shape, q.axis);
  const int64_t channels = static_cast<int64_t>(q.scales.size());
  for (int64_t i = 0; i < count; ++i) {
    const size_t channel = static_cast<size_t>((i / inner) % channels);
    function(i, q.scales[channel], q.zero_points[channel]);
  }
}

template <typename Integer>
void dequantize_all(const Tensor& tensor, const Integer* source, float* destination) {
  if constexpr (sizeof(Integer) == 1) {
    // A per-tensor byte has 256 values: decode each once, then look every element up (the
    // generic loop's per-element scale choice cost about 0.8 ns per element, a tenth of an
    // int8 MobileNetV2's GlobalAveragePool).
    if (!tensor.quantization.is_per_channel()) {
      float table[256];
      for (int code = 0; code < 256; ++code) {
        const auto value = static_cast<Integer>(code);
        table[static_cast<uint8_t>(value)] =
            dequantize(value, tensor.quantization.scales[0], tensor.quantization.zero_points[0]);
      }
      const int64_t count = tensor.elements();
      for (int64_t i = 0; i < count; ++i) destination[i] = table[static_cast<uint8_t>(source[i])];
      return;
    }
  }
  for_each_quantized<Integer>(tensor, [&](int64_t i, float scale, int32_t zero_point) {
    destination[i] = dequantize(source[i], scale, zero_point);
  });
}

template <typename Integer>
void quantize_all(const Tensor& tensor, const float* source, Integer* destination) {
  constexpr int32_t low = std::numeric_limits<Integer>::min();
  constexpr int32_t high = std::numeric_limits<Integer>::max();
  for_each_quantized<Integer>(tensor, [&](int64_t i, float scale, int32_t zero_point) {
    const float scaled = source[i] / scale;
    int32_t value;
    if (std::isnan(scaled)) {
      value = zero_point;
    } else {
      // Clamp in float first so the integer conversion cannot overflow.
      const float bounded = scaled < -1e9f ? -1e9f : (scaled > 1e9f ? 1e9f : scaled);
      value = round_half_to_even(bounded) + zero_point;
    }
    destination[i] = static_cast<Integer>(value < low ? low : (value > high ? high : value));
  });
}

}  // namespace

bool is_encoded_real(const Tensor& tensor) {
  if (tensor.data_type == DataType::kFloat16) return true;
  return tensor.quantization.is_quantized() &&
         (tensor.data_type == DataType::kInt8 || tensor.data_type == DataType::kUInt8 ||
          tensor.data_type == DataType::kInt16 || tensor.data_type == DataType::kInt32);
}

bool is_real_valued(const Tensor& tensor) {
  return tensor.data_type == DataType::kFloat32 || is_encoded_real(tensor);
}

void decode_to_float(const Tensor& tensor, const void* source, float* destination) {
  const int64_t count = tensor.elements();
  if (count == 0) return;  // buffers of empty tensors may be null
  switch (tensor.data_type) {
    case DataType::kFloat32:
      std::memcpy(destination, source, static_cast<size_t>(count) * sizeof(float));
      return;
    case DataType::kFloat16: {
      const auto* halves = static_cast<const Float16Bits*>(source);
      for (int64_t i = 0; i < count; ++i) destination[i] = half_to_float(halves[i]);
      return;
    }
    case DataType::kInt8:
      return dequantize_all(tensor, static_cast<const int8_t*>(source), destination);
    case DataType::kUInt8:
      return dequantize_all(tensor, static_cast<const uint8_t*>(source), destination);
    case DataType::kInt16:
      return dequantize_all(tensor, static_cast<const int16_t*>(source), destination);
    case DataType::kInt32:
      return dequantize_all(tensor, static_cast<const int32_t*>(source), destination);
    default:
      return;  // precondition violated; callers check is_real_valued
  }
}

void encode_from_float(const Tensor& tensor, const float* source, void* destination) {
  const int64_t count = tensor.elements();
  if (count == 0) return;  // buffers of empty tensors may be null
  switch (tensor.data_type) {
    case DataType::kFloat32:
      std::memcpy(destination, source, static_cast<size_t>(count) * sizeof(float));
      return;
    case DataType::kFloat16: {
      auto* halves = static_cast<Float16Bits*>(destination);
      for (int64_t i = 0; i < count; ++i) halves[i] = float_to_half(source[i]);
      return;
    }
    case DataType::kInt8:
      return quantize_all(tensor, source, static_cast<int8_t*>(destination));
    case DataType::kUInt8:
      return quantize_all(tensor, source, static_cast<uint8_t*>(destination));
    case DataType::kInt16:
      return quantize_all(tensor, source, static_cast<int16_t*>(destination));
    case DataType::kInt32:
      return quantize_all(tensor, source, static_cast<int32_t*>(destination));
    default:
      return;
  }
}

Tensor float_view(const Tensor& tensor) {
  Tensor view;
  view.name = tensor.name;
  view.shape = tensor.shape;
  view.data_type = DataType::kFloat32;
  return view;
}

}  // namespace orknn::graph
