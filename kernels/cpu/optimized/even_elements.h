// target[i] = row[2 i] for i < count: the stride-2 column subsample that the 1x1 strided
// convolutions (subsampled_pointwise.cc) and the stride-2 phase planes (phase_planes.cc) both
// take from their input rows. `available` elements may be read from `row` (at least
// 2 count - 1).
#pragma once

#include <cstddef>
#include <cstdint>

namespace orknn::kernels::cpu::optimized {

void copy_even_elements(const int8_t* row, int8_t* target, size_t count, size_t available);
void copy_even_elements(const float* row, float* target, size_t count, size_t available);

}  // namespace orknn::kernels::cpu::optimized
