// Element types, IEEE half-precision conversion and the affine quantization rule.
//
// The rounding rule for every float -> integer conversion in the runtime is round-half-to-even
// (the default IEEE mode, as in ONNX QuantizeLinear), then saturation to the type's range. It is
// written down in docs/quantization.md; every device must reproduce it bit-exactly.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace orknn {

// Internal element type. Numbering is ours; librknnrt/api/ maps it to rknn_tensor_type.
enum class DataType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kUInt8 = 3,
  kInt16 = 4,
  kInt32 = 5,
  kInt64 = 6,
  kBool = 7,
};
constexpr int kDataTypeCount = 8;

constexpr size_t element_size(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kFloat16:
      return 2;
    case DataType::kInt8:
      return 1;
    case DataType::kUInt8:
      return 1;
    case DataType::kInt16:
      return 2;
    case DataType::kInt32:
      return 4;
    case DataType::kInt64:
      return 8;
    case DataType::kBool:
      return 1;
  }
  return 0;
}

const char* data_type_name(DataType type);  // "FP32", "FP16", "INT8", ... as the vendor prints
bool is_valid_data_type(int value);

// --- IEEE 754 binary16 ---------------------------------------------------------------------

using Float16Bits = uint16_t;

inline uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
inline float float_from_bits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Round-to-nearest-even conversion; overflow goes to infinity, NaN stays NaN.
inline Float16Bits float_to_half(float value) {
  const uint32_t bits = float_bits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {  // inf or NaN
    return static_cast<Float16Bits>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
  }
  if (magnitude >= 0x477ff000u) return static_cast<Float16Bits>(sign | 0x7c00u);  // rounds to inf
  if (magnitude < 0x38800000u) {
    // Subnormal or zero in half precision: scale by 2^24 and round in float arithmetic,
    // which performs round-to-nearest-even for us.
    const float scaled = float_from_bits(magnitude) * 16777216.0f;
    return static_cast<Float16Bits>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  const uint32_t rounding = 0xfffu + ((magnitude >> 13) & 1u);
  return static_cast<Float16Bits>(sign | ((magnitude - 0x38000000u + rounding) >> 13));
}

inline float half_to_float(Float16Bits half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: exact in float.
    const float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return float_from_bits(float_bits(value) | sign);
  }
  if (exponent == 31) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));
  return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// --- Affine quantization: real = (q - zero_point) * scale ------------------------------------

// nearbyint in the default rounding mode, for |value| < 2^31. Where nearbyint is no single
// instruction (x86-64 before SSE4.1: a libm call per element, the cost of every int8 encode) it
// is written with two additions: for |value| < 2^23, value + 2^23 (with value's sign) lies where
// the float spacing is 1, so the addition rounds to an integer, half to even, and subtracting
// 2^23 again is exact; from 2^23 up every float is an integer already.
inline int32_t round_half_to_even(float value) {
#if defined(__x86_64__) && !defined(__SSE4_1__)
  constexpr float kTwo23 = 8388608.0f;
  if (!(std::fabs(value) < kTwo23)) return static_cast<int32_t>(value);
  const float shift = std::copysign(kTwo23, value);
  // Without -ffast-math the compiler keeps both IEEE additions.
  return static_cast<int32_t>((value + shift) - shift);
#else
  return static_cast<int32_t>(std::nearbyint(value));
#endif
}

inline int8_t saturate_int8(int32_t value) {
  return static_cast<int8_t>(value < -128 ? -128 : (value > 127 ? 127 : value));
}
inline uint8_t saturate_uint8(int32_t value) {
  return static_cast<uint8_t>(value < 0 ? 0 : (value > 255 ? 255 : value));
}

inline int8_t quantize_int8(float real, float scale, int32_t zero_point) {
  const float scaled = real / scale;
  // Clamp before the integer conversion so that huge values and infinities saturate safely.
  const float clamped = scaled < -1e6f ? -1e6f : (scaled > 1e6f ? 1e6f : scaled);
  if (std::isnan(clamped)) return saturate_int8(zero_point);
  return saturate_int8(round_half_to_even(clamped) + zero_point);
}
inline float dequantize(int32_t quantized, float scale, int32_t zero_point) {
  return static_cast<float>(quantized - zero_point) * scale;
}

}  // namespace orknn
