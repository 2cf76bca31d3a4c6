#include "reference/quantized_add.h"

#include <algorithm>
#include <cmath>

#include "reference/broadcast_walk.h"

namespace orknn::kernels::reference {

QuantizedAdd make_quantized_add(float a_scale, int32_t a_zero_point, float b_scale,
                                int32_t b_zero_point, float output_scale, int32_t output_zero_point,
                                bool subtract) {
  QuantizedAdd add;
  add.a_ratio = a_scale / output_scale;
  add.b_ratio = subtract ? -(b_scale / output_scale) : b_scale / output_scale;
  add.a_zero_point = a_zero_point;
  add.b_zero_point = b_zero_point;
  add.output_zero_point = output_zero_point;
  return add;
}

int8_t quantized_add(int8_t a, int8_t b, const QuantizedAdd& add) {
  const float a_part = static_cast<float>(int32_t{a} - add.a_zero_point) * add.a_ratio;
  const float b_part = static_cast<float>(int32_t{b} - add.b_zero_point) * add.b_ratio;
  const float value = a_part + b_part;
  if (std::isnan(value)) return static_cast<int8_t>(std::clamp(add.output_zero_point, -128, 127));
  // Bounded before the integer conversion, which would overflow; anything this large saturates.
  const float bounded = std::min(std::max(value, -1e9f), 1e9f);
  // std::nearbyint rounds half to even in the default floating-point environment.
  const int64_t code = static_cast<int64_t>(std::nearbyint(bounded)) + add.output_zero_point;
  return static_cast<int8_t>(std::min<int64_t>(std::max<int64_t>(code, -128), 127));
}

void quantized_add(const BroadcastParams& params, const int8_t* a, const int8_t* b,
                   const QuantizedAdd& add, int8_t* output) {
  broadcast_walk(params, [&](int64_t a_offset, int64_t b_offset, int64_t output_offset) {
    output[output_offset] = quantized_add(a[a_offset], b[b_offset], add);
  });
}

}  // namespace orknn::kernels::reference
