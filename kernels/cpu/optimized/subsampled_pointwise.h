// 1x1 convolutions with a stride and no padding, run as a stride-1 pointwise convolution over a
// subsampled copy of the input. Such a window reads input pixel (oh x sh, ow x sw) only, so
// copying those pixels into a C x OH x OW plane set (C x OH x OW bytes for int8) turns the layer
// into one the in-place pointwise path runs without an im2col gather (docs/cpu-kernels.md,
// "Session 13: 1x1 stride-2 convolutions as a subsample").
#pragma once

#include <cstdint>
#include <memory>

#include "dispatch.h"

namespace orknn::kernels::cpu::optimized {

// A 1x1 window with a stride above 1, no padding, and an output inside the input.
bool subsampled_pointwise_applies(const reference::Conv2DShape& shape);

// Whether the avx2 dispatch takes the wrapper: applies and at least kSubsampledPointwiseChannels
// input channels per group (measured on Zen 3, docs/cpu-kernels.md "Session 13: 1x1 stride-2
// convolutions as a subsample").
constexpr int64_t kSubsampledPointwiseChannels = 256;
bool subsampled_pointwise_preferred(const reference::Conv2DShape& shape);

// The stride-1 pointwise shape over the subsampled input (OH x OW input and output planes).
reference::Conv2DShape subsampled_pointwise_shape(const reference::Conv2DShape& shape);

// Wraps `inner`, a kernel prepared for subsampled_pointwise_shape(shape): each run copies the
// subsampled input into thread 0's scratch after the bytes `inner` uses, then runs `inner` on
// it. Null when the shape does not apply or `inner` is null.
std::unique_ptr<Conv2DInt8> make_subsampled_pointwise_conv2d_int8(
    const reference::Conv2DShape& shape, std::unique_ptr<Conv2DInt8> inner);
std::unique_ptr<Conv2DFloat> make_subsampled_pointwise_conv2d(const reference::Conv2DShape& shape,
                                                              std::unique_ptr<Conv2DFloat> inner);

}  // namespace orknn::kernels::cpu::optimized
