// What the two int32 requantization paths of the avx2 table share (avx2_requantization.cc's
// requantize_row with RequantizeRow::small_multipliers, and avx2_lane_requantization.cc's
// requantize_lanes): the zero point and the clamp as int32 lanes, held in registers. A type
// only (no functions), so the rule of avx2_micro_kernels.h holds.
#pragma once

#include <immintrin.h>

namespace orknn::kernels::cpu::optimized::avx2 {

struct SmallRequantizeConstants {
  __m256i zero_point;
  __m256i minimum;
  __m256i maximum;
};

}  // namespace orknn::kernels::cpu::optimized::avx2
