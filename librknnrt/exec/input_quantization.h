// The float -> per-tensor int8 encoding of an application's input (graph::encode_from_float's
// codes: value / scale, NaN to the zero point, round half to even, plus the zero point,
// saturated), optionally after the input's normalisation (value - mean) x inverse_std, as
// loops the compiler vectorizes (input_quantization.cc says how).
#pragma once

#include <cstddef>
#include <cstdint>

namespace orknn::exec {

struct InputQuantization {
  float scale = 1.0f;      // positive
  int32_t zero_point = 0;  // within int8
};

// codes[i] = encode(values[i]).
void quantize_input(const float* values, size_t count, const InputQuantization& quantization,
                    int8_t* codes);

// codes[i] = encode((values[i] - mean) x inverse_std), each step rounded as the separate
// normalisation pass rounds it.
void normalize_and_quantize_input(const float* values, size_t count, float mean, float inverse_std,
                                  const InputQuantization& quantization, int8_t* codes);

}  // namespace orknn::exec
