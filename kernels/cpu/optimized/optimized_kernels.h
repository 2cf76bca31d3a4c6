// The optimized drivers, written once against a MicroKernels table (micro_kernels.h). Only the
// dispatcher (kernels/cpu/dispatch.cc) calls these; a factory returns null when its algorithm
// does not apply to the shape, and the dispatcher tries the next one.
#pragma once

#include <memory>

#include "dispatch.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

// What a float convolution does to each region of its output once the region is final, while it
// is in cache: nothing (a null row), or the SiLU a node fuses, x * sigmoid(x) through the
// table's unary_row with the Swish code and alpha 1 (silu_epilogue): the bits the SiLU op's own
// kernel (make_unary) gives. A second pass over the whole output reads it back from L3 or
// memory; applied region by region, yolov5s float32 ran 1-3% faster at two threads (session 19:
// the pass took 11 ms of its 123 at one thread, most of it the row's own arithmetic).
struct RegionEpilogue {
  void (*unary_row)(const UnaryRow& row) = nullptr;
  explicit operator bool() const { return unary_row != nullptr; }
  // `rows` rows of `count` floats from `first`, `stride` floats apart, in place.
  void apply(float* first, size_t rows, size_t count, size_t stride) const;
};
RegionEpilogue silu_epilogue(const MicroKernels& kernels);

// groups == input channels > 1 with a whole number of output channels per group.
bool is_depthwise(const reference::Conv2DShape& shape);

// Depthwise convolution (groups == input channels > 1, one input channel per group): per
// channel a zero-padded plane and vector rows.
std::unique_ptr<Conv2DFloat> make_depthwise_conv2d(const MicroKernels& kernels,
                                                   const reference::Conv2DShape& shape,
                                                   const reference::FusedActivation& activation,
                                                   const float* constant_weights);
// Any convolution as GEMM: packed weights x im2col panels packed on the fly (plain panel copies
// for 1x1 stride-1 convolutions).
std::unique_ptr<Conv2DFloat> make_gemm_conv2d(const MicroKernels& kernels,
                                              const reference::Conv2DShape& shape,
                                              const reference::FusedActivation& activation,
                                              const float* constant_weights,
                                              RegionEpilogue epilogue = {});

// ConvTranspose (reference::conv_transpose2d) as a pointwise GEMM of the input with the
// transposed weights and a scatter into the output; null without constant weights.
std::unique_ptr<Conv2DFloat> make_transposed_conv2d(const MicroKernels& kernels,
                                                    const reference::Conv2DShape& shape,
                                                    const reference::FusedActivation& activation,
                                                    const float* constant_weights);
// Whether the direct convolution measured faster than the im2col GEMM for this shape: every
// stride-1 kernel larger than 1x1, strided ones with 32 or more input channels, pointwise ones
// on planes up to 7x7 or where the GEMM would read B in place (direct_convolution.cc).
bool direct_convolution_preferred(const reference::Conv2DShape& shape);
// The same question for the avx2 variant's tile (6 x 16 register blocks), measured on Zen 3:
// stride-1 3x3 layers of up to 128 channels on 28x28 to 80x80 planes, and narrowing deep
// pointwise layers on 80x80 planes (direct_convolution.cc).
bool avx2_direct_convolution_preferred(const reference::Conv2DShape& shape);
// A convolution as an implicit GEMM reading B straight from the input (direct_convolution.cc)
// with `tile` (12 x 32, micro_kernels.h DirectFloatTile); null when it does not apply: per-run
// weights, groups, or an output width other than ceil(input width / stride).
std::unique_ptr<Conv2DFloat> make_direct_conv2d(const char* variant, DirectFloatTileFunction tile,
                                                const reference::Conv2DShape& shape,
                                                const reference::FusedActivation& activation,
                                                const float* constant_weights,
                                                RegionEpilogue epilogue = {});

// Whether the convolution with output channels in lanes measured faster than the direct
// convolution and the GEMM for this shape: small output planes with many output channels
// (lane_convolution.cc).
bool lane_convolution_preferred(const reference::Conv2DShape& shape);
// The same for the avx2 variant's tile (x86/avx2_lane_tiles.cc), measured against the avx2
// GEMM and direct convolution.
bool avx2_lane_convolution_preferred(const reference::Conv2DShape& shape);
// A convolution with output channels in lanes (lane_convolution.cc) with `tile` (32 channels x
// 14 pixels, micro_kernels.h LaneFloatTile) and `pack` (its panels), with `kernels`' name and
// rows (those of a fused residual Add); null when it does not apply:
// per-run weights, groups, negative padding.
std::unique_ptr<Conv2DFloat> make_lane_conv2d(const MicroKernels& kernels,
                                              LaneFloatTileFunction tile,
                                              LanePanelPackingFunction pack,
                                              const reference::Conv2DShape& shape,
                                              const reference::FusedActivation& activation,
                                              const float* constant_weights);

// Whether a convolution is one Winograd F(m x m, 3x3) computes (winograd_convolution.cc): a
// 3x3 kernel at stride 1, dilation 1, one group, non-negative padding and the output the padded
// input gives.
bool winograd_convolution_applies(const reference::Conv2DShape& shape);
// Whether the Winograd convolution measured faster than what the avx2 variant chose before it
// (lanes, direct or GEMM) for this shape, on Zen 3 (winograd_convolution.cc).
bool winograd_convolution_preferred(const reference::Conv2DShape& shape);
// The output tile (m) the avx2 variant uses for this shape.
size_t winograd_output_tile(const reference::Conv2DShape& shape);
// A float convolution as Winograd F(output_tile x output_tile, 3x3), output_tile 2, 4 or 6, on
// the table's float GEMM tile with `transforms` for that tile size (winograd_transforms.h; null:
// plain C++); null when it does not apply (winograd_convolution_applies, per-run weights) or for
// another output tile. F(6x6) is not accurate enough for the tests' 1e-5 and not dispatched.
struct WinogradFloatTransforms;
std::unique_ptr<Conv2DFloat> make_winograd_conv2d(
    const MicroKernels& kernels, const reference::Conv2DShape& shape,
    const reference::FusedActivation& activation, const float* constant_weights, size_t output_tile,
    const WinogradFloatTransforms* transforms = nullptr, RegionEpilogue epilogue = {});
// x86-64 only: the F(2x2, 3x3) and F(4x4, 3x3) transforms on AVX2
// (x86/avx2_winograd_float_transforms.cc); null for other tile sizes. Only for CPUs that run AVX2
// and FMA.
const WinogradFloatTransforms* avx2_winograd_float_transforms(size_t output_tile);

// int8 depthwise, computed exactly in float (every partial sum is an integer below 2^24); null
// when the kernel is too large for that.
std::unique_ptr<Conv2DInt8> make_depthwise_conv2d_int8(
    const MicroKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);
// The int16 tap-pair form of the int8 depthwise (the table's depthwise_pairs) whatever the
// stride, which make_depthwise_conv2d_int8 takes only where it measured faster; null when the
// table has none or the layer is not one it computes exactly. For tests.
std::unique_ptr<Conv2DInt8> make_pair_depthwise_conv2d_int8(
    const MicroKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);
// int8 convolution as GEMM on int16 pairs (x - zx, w - zw); null when an offset does not fit
// int16.
std::unique_ptr<Conv2DInt8> make_gemm_conv2d_int8(
    const MicroKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);

// Whether the int8 convolution with output channels in lanes measured faster than the im2col
// GEMM on the avx2 table for this shape: small output planes (int8_lane_convolution.cc).
bool int8_lane_convolution_preferred(const reference::Conv2DShape& shape);
// int8 convolution with output channels in lanes (int8_lane_convolution.cc): the table's
// int16-pair tile with pixels as A's rows and weight panels as B; null when it does not apply:
// per-run weights, groups, negative padding, an offset that does not fit int16.
std::unique_ptr<Conv2DInt8> make_int8_lane_conv2d(
    const MicroKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);

// Whether the int8 Winograd convolution measured faster than what the avx2 table runs otherwise
// for this shape (int8_winograd_convolution.cc).
bool int8_winograd_preferred(const reference::Conv2DShape& shape);
// int8 3x3 stride-1 convolution as Winograd F(2x2, 3x3) on the table's int16-pair tile, bit-exact
// with the reference (int8_winograd_convolution.cc); null when it does not apply: per-run
// weights, another window (winograd_convolution_applies), or weights whose sums could leave the
// int32 range its exactness argument needs.
std::unique_ptr<Conv2DInt8> make_int8_winograd_conv2d(
    const MicroKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);

std::unique_ptr<GemmFloat> make_gemm(const MicroKernels& kernels,
                                     const reference::GemmParams& params,
                                     const reference::FusedActivation& activation,
                                     const float* constant_b);
std::unique_ptr<GemmInt8> make_gemm_int8(const MicroKernels& kernels,
                                         const reference::GemmParams& params,
                                         const reference::Int8Requantization& requantization,
                                         const int8_t* constant_b);
std::unique_ptr<MatMulFloat> make_matmul(const MicroKernels& kernels,
                                         const reference::MatMulParams& params,
                                         const reference::FusedActivation& activation,
                                         const float* constant_b);
std::unique_ptr<MatMulInt8> make_matmul_int8(const MicroKernels& kernels,
                                             const reference::MatMulParams& params,
                                             const reference::Int8Requantization& requantization,
                                             const int8_t* constant_b);

// Null when the broadcast is not one elementwise_binary.cc handles (see dispatch.h).
std::unique_ptr<BinaryFloat> make_binary(const MicroKernels& kernels,
                                         reference::BinaryOperation operation,
                                         const std::vector<int64_t>& a_shape,
                                         const std::vector<int64_t>& b_shape);

// Null also for an activation unary_row does not give bit-exactly (see dispatch.h).
std::unique_ptr<BinaryFloat> make_binary_activation(const MicroKernels& kernels,
                                                    reference::BinaryOperation operation,
                                                    const std::vector<int64_t>& a_shape,
                                                    const std::vector<int64_t>& b_shape,
                                                    const reference::UnaryParams& activation);

std::unique_ptr<BinaryInt8> make_binary_int8(const MicroKernels& kernels,
                                             reference::BinaryOperation operation,
                                             const std::vector<int64_t>& a_shape,
                                             const std::vector<int64_t>& b_shape,
                                             const BinaryInt8Quantization& quantization);

std::unique_ptr<Pool2DFloat> make_max_pool2d(const MicroKernels& kernels,
                                             const reference::Pool2DShape& shape);
std::unique_ptr<Pool2DInt8> make_max_pool2d_int8(const MicroKernels& kernels,
                                                 const reference::Pool2DShape& shape);
std::unique_ptr<Pool2DFloat> make_average_pool2d(const MicroKernels& kernels,
                                                 const reference::Pool2DShape& shape,
                                                 bool count_include_pad);
// Null for empty planes.
std::unique_ptr<GlobalPoolFloat> make_global_average_pool(const MicroKernels& kernels,
                                                          int64_t planes, int64_t plane_size);
std::unique_ptr<GlobalPoolInt8> make_global_average_pool_int8(const MicroKernels& kernels,
                                                              int64_t planes, int64_t plane_size,
                                                              const float* decoded);

// Null for operations unary_row does not cover and for empty tensors.
std::unique_ptr<UnaryFloat> make_unary(const MicroKernels& kernels,
                                       const reference::UnaryParams& params, int64_t count);

// Null for empty layouts.
std::unique_ptr<SoftmaxFloat> make_softmax(const MicroKernels& kernels,
                                           const reference::ChannelLayout& layout);

// Null for empty tensors. Copies the 256-entry table.
std::unique_ptr<LookupInt8> make_lookup_int8(const MicroKernels& kernels, const int8_t* table,
                                             int64_t count);

// Null when the parameters are malformed (rank, shapes).
std::unique_ptr<ResizeFloat> make_resize_nearest(const reference::ResizeParams& params);
// Null when the parameters are malformed or the leading dimensions change size.
std::unique_ptr<ResizeFloat> make_resize_bilinear(const reference::ResizeParams& params);

}  // namespace orknn::kernels::cpu::optimized
