// The float16 half of a Conv's lowering (npu_lowering.cc checks the window and the feature
// maps first): weights as half bits in the dense layout, an fp32 bias, the fused activation as
// a float clamp or the SiLU epilogue.
#pragma once

#include "devices/npu/npu_layer.h"
#include "graph/ops/convolution_attributes.h"

namespace orknn::devices::npu {

Status lower_float16_convolution(const graph::Node& node, const graph::Tensor& weights,
                                 const graph::Tensor* bias, const graph::ConvAttributes& attributes,
                                 NpuLayer* layer);

}  // namespace orknn::devices::npu
