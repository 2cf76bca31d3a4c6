// The fused float activation on four lanes, shared by the NEON micro-kernels: the leaky slope,
// then the clamp to [minimum, maximum], each lane as activate_float (micro_kernels.h) computes
// it on numbers.
#pragma once

#include <arm_neon.h>

#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized::neon_float {

inline float32x4_t activate(const FloatActivation& activation, float32x4_t value) {
  if (activation.leaky) {
    const uint32x4_t negative = vcltq_f32(value, vdupq_n_f32(0.0f));
    value = vbslq_f32(negative, vmulq_n_f32(value, activation.leaky_alpha), value);
  }
  value = vmaxq_f32(value, vdupq_n_f32(activation.minimum));
  return vminq_f32(value, vdupq_n_f32(activation.maximum));
}

}  // namespace orknn::kernels::cpu::optimized::neon_float
