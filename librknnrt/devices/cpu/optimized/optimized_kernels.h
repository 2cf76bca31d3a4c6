// CPU kernels of Conv, Gemm and MatMul on the optimized kernels of kernels/cpu/dispatch.h.
//
// The factories in devices/cpu/ops/convolution.cc parse and validate a node (attributes, the
// int8 conditions of docs/quantization.md) and then ask here first:
//
//   if (auto fast = optimized::make_conv2d_kernel(context, shape, activation)) return fast;
//
// Each function returns the kernel of the selected variant (kernels/cpu/dispatch.h), or null
// when the reference variant is selected, so the caller builds its own reference kernel. Constant
// weights (input 1) are packed now; the kernel runs on the thread pool of the calling context
// (ThreadPool::current(), serial without one) and reserves its scratch there when built.
#pragma once

#include <memory>

#include "devices/cpu/cpu_kernel.h"
#include "dispatch.h"
#include "reference/convolution.h"
#include "reference/elementwise.h"
#include "reference/gemm.h"
#include "reference/normalization.h"
#include "reference/pooling.h"
#include "reference/resize.h"

namespace orknn::devices::cpu::optimized {

// Conv (not ConvTranspose): inputs X, W, optional B. With `silu` (a fused SiLU, `activation`
// then none) the kernel applies it itself (dispatch.h prepare_conv2d_silu, applies_fused_silu).
std::unique_ptr<CpuKernel> make_conv2d_kernel(const KernelBuildContext& context,
                                              const kernels::reference::Conv2DShape& shape,
                                              const kernels::reference::FusedActivation& activation,
                                              bool silu = false);
// The same followed by a residual Add (and the activation after it) in the driver
// (kernels/cpu/dispatch.h ResidualAddition; `addition.residual` is ignored): inputs X, W,
// optional B, then the residual. Null where the selected driver does not take one.
std::unique_ptr<CpuKernel> make_conv2d_residual_kernel(
    const KernelBuildContext& context, const kernels::reference::Conv2DShape& shape,
    const kernels::reference::FusedActivation& activation,
    const kernels::cpu::ResidualAddition& addition);
// Float32 ConvTranspose of kernels/cpu/dispatch.h prepare_conv_transpose2d; null for the
// reference variant and non-constant weights.
std::unique_ptr<CpuKernel> make_conv_transpose2d_kernel(
    const KernelBuildContext& context, const kernels::reference::Conv2DShape& shape,
    const kernels::reference::FusedActivation& activation);
std::unique_ptr<CpuKernel> make_conv2d_int8_kernel(
    const KernelBuildContext& context, const kernels::reference::Conv2DShape& shape,
    const kernels::reference::Int8Requantization& requantization);

// Gemm: inputs A, B, optional C.
std::unique_ptr<CpuKernel> make_gemm_kernel(const KernelBuildContext& context,
                                            const kernels::reference::GemmParams& params,
                                            const kernels::reference::FusedActivation& activation);
std::unique_ptr<CpuKernel> make_gemm_int8_kernel(
    const KernelBuildContext& context, const kernels::reference::GemmParams& params,
    const kernels::reference::Int8Requantization& requantization);

// MatMul: inputs A, B.
std::unique_ptr<CpuKernel> make_matmul_kernel(
    const KernelBuildContext& context, const kernels::reference::MatMulParams& params,
    const kernels::reference::FusedActivation& activation);
std::unique_ptr<CpuKernel> make_matmul_int8_kernel(
    const KernelBuildContext& context, const kernels::reference::MatMulParams& params,
    const kernels::reference::Int8Requantization& requantization);

// Add, Sub, Mul, Div on float32 with the broadcasts of kernels/cpu/dispatch.h prepare_binary;
// null otherwise (and for the reference variant).
std::unique_ptr<CpuKernel> make_binary_kernel(const KernelBuildContext& context,
                                              kernels::reference::BinaryOperation operation);

// The same followed by the activation that consumes the result (dispatch.h
// prepare_binary_activation): writes activation(a op b); null also for other activations.
std::unique_ptr<CpuKernel> make_binary_activation_kernel(
    const KernelBuildContext& context, kernels::reference::BinaryOperation operation,
    const kernels::reference::UnaryParams& activation);

// The same on per-tensor int8 operands and output, bit-exact with the float domain; null for
// other tensors, broadcasts and the reference variant. A non-empty `output_table` (256 codes)
// is a following int8 activation applied to every result code (context.outputs[0] is then the
// binary operation's own result, whose quantization the codes are encoded in).
std::unique_ptr<CpuKernel> make_binary_int8_kernel(const KernelBuildContext& context,
                                                   kernels::reference::BinaryOperation operation,
                                                   const std::vector<int8_t>& output_table = {});

// MaxPool (2-D, without Indices) on float32 or on int8 codes (the caller checks that input and
// output share one per-tensor quantization, so the codes' maximum is the float domain's
// result), AveragePool 2-D and GlobalAveragePool on float32; null for the reference variant.
std::unique_ptr<CpuKernel> make_max_pool2d_kernel(const kernels::reference::Pool2DShape& shape);
std::unique_ptr<CpuKernel> make_max_pool2d_int8_kernel(
    const kernels::reference::Pool2DShape& shape);
std::unique_ptr<CpuKernel> make_average_pool2d_kernel(const kernels::reference::Pool2DShape& shape,
                                                      bool count_include_pad);
std::unique_ptr<CpuKernel> make_global_average_pool_kernel(int64_t planes, int64_t plane_size);
// GlobalAveragePool of int8 codes into float averages (kernels/cpu/dispatch.h
// prepare_global_average_pool_int8; `decoded`: 256 floats by code byte); null for the reference
// variant.
std::unique_ptr<CpuKernel> make_global_average_pool_int8_kernel(int64_t planes, int64_t plane_size,
                                                                const float* decoded);

// Float32 activations of kernels/cpu/dispatch.h prepare_unary (Clip bounds from inputs 1 and 2
// when present, read per run); null otherwise.
std::unique_ptr<CpuKernel> make_unary_kernel(const KernelBuildContext& context,
                                             const kernels::reference::UnaryParams& params);

// Float32 Softmax of kernels/cpu/dispatch.h prepare_softmax; null for the reference variant.
std::unique_ptr<CpuKernel> make_softmax_kernel(const kernels::reference::ChannelLayout& layout);

// An int8 activation's 256-entry table (kernels/cpu/dispatch.h prepare_lookup_int8) over `count`
// codes; null for the reference variant and empty tensors.
std::unique_ptr<CpuKernel> make_lookup_int8_kernel(const int8_t* table, int64_t count);

// Nearest-neighbour Resize on float32 (the reference's bits); null for the reference variant.
// Bilinear Resize on float32 (the reference's bits); null for the reference variant.
std::unique_ptr<CpuKernel> make_resize_bilinear_kernel(
    const kernels::reference::ResizeParams& params);
std::unique_ptr<CpuKernel> make_resize_nearest_kernel(
    const kernels::reference::ResizeParams& params);

}  // namespace orknn::devices::cpu::optimized
