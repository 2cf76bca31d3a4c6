// The float16 half of a product layer's lowering (a Conv, or a Gemm/MatMul as a 1x1
// convolution; npu_lowering.cc checks the window, the feature maps and that the weights are a
// FLOAT16 constant first): weights as half bits in the dense layout, an fp32 bias, the fused
// activation as a float clamp or the SiLU epilogue.
#pragma once

#include "devices/npu/npu_layer.h"
#include "graph/ops/convolution_attributes.h"

namespace orknn::devices::npu {

// `stored` holds the weights' half bits [oc][ic / group][taps].
Status lower_float16_product(const graph::Node& node, const uint8_t* stored,
                             const graph::Tensor* bias,
                             const graph::FusedActivationAttributes& activation, int64_t group,
                             NpuLayer* layer);

// Whether `weights` is a FLOAT16 constant (the NPU multiplies the stored half values; float32
// weights would be rounded first and no longer be what the CPU multiplies).
bool is_float16_constant(const graph::Tensor& weights);

}  // namespace orknn::devices::npu
