// The one dispatch point of the CPU kernels: which implementation ("variant") of the
// convolution and matrix-product kernels runs, chosen once from the CPU's features, and the
// prepared kernels themselves.
//
// Variants:
//   reference  kernels/cpu/reference/, the naive oracle
//   portable   the blocked, packed kernels of kernels/cpu/optimized/ with plain C++ micro-kernels
//              (any CPU; the fallback where no SIMD variant exists)
//   avx2       the same drivers with AVX2/FMA micro-kernels (kernels/cpu/x86/)
//   avx512     avx2, with the int8 convolutions, Gemm and MatMul on AVX-512 VNNI (VPDPBUSD)
//              tiles, and the int8 table lookup on AVX-512 VBMI (vpermi2b) when the CPU has it
//   neon       the same drivers with AArch64 NEON micro-kernels (kernels/cpu/arm/)
//   neon-dotprod  neon, with the int8 convolutions on SDOT (ARMv8.2 dotprod) tiles
//   neon-i8mm     neon, with the int8 convolutions on SMMLA (ARMv8.6 i8mm) tiles
//
// selected_kernel_variant() is, in order: the test override (ScopedKernelVariant), the
// ORKNN_CPU_KERNELS environment variable (reference|portable|avx2|avx512|neon|neon-dotprod|
// neon-i8mm, read once; a variant this CPU cannot run is refused with a warning), the best
// variant the CPU supports.
//
// A prepared kernel is made once per node (rknn_init): it chooses its algorithm from the shape
// (GEMM on packed panels, a 1x1 fast path, depthwise), packs constant weights, and says how much
// per-thread scratch memory it needs. run() computes, splitting the work over the pool's threads;
// it never allocates when the pool's scratch was reserved (reserve_scratch) beforehand.
// Results: float32 kernels match the reference to rounding (the sums run in another order); int8
// kernels are bit-exact with the reference (docs/quantization.md).
//
// A prepared kernel is immutable: several threads may run it at once on different pools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/thread_pool.h"
#include "reference/convolution.h"
#include "reference/elementwise.h"
#include "reference/gemm.h"
#include "reference/normalization.h"
#include "reference/pooling.h"
#include "reference/quantized_add.h"
#include "reference/resize.h"

namespace orknn::kernels::cpu {

enum class KernelVariant {
  kReference,
  kPortable,
  kAvx2,
  kNeon,
  kNeonDotprod,
  kNeonI8mm,
  kAvx512,
};

const char* kernel_variant_name(KernelVariant variant);
std::optional<KernelVariant> parse_kernel_variant(std::string_view name);
// Compiled into this build and supported by this CPU.
bool kernel_variant_available(KernelVariant variant);
// The fastest available variant (computed once from cpu_features).
KernelVariant best_kernel_variant();
// The variant new kernels use (see the top of this file).
KernelVariant selected_kernel_variant();

// The SIMD features the dispatcher detected, space-separated, for logs and tests: on x86-64
// "avx2 fma" and, with all four (and the OS saving the ZMM state), "avx512f avx512bw avx512vl
// avx512vnni" (from cpu_features), on ARM "asimd dotprod i8mm" (from the kernel's HWCAP bits,
// read with getauxval), empty when none.
const char* detected_cpu_features();

// Test hook: forces `variant` for the kernels prepared while it lives (process-wide; nests).
// Forcing a variant that is not available makes selected_kernel_variant() return the best one.
class ScopedKernelVariant {
 public:
  explicit ScopedKernelVariant(KernelVariant variant);
  ~ScopedKernelVariant();
  ScopedKernelVariant(const ScopedKernelVariant&) = delete;
  ScopedKernelVariant& operator=(const ScopedKernelVariant&) = delete;

 private:
  int previous_;
};

// ---- Prepared kernels ----------------------------------------------------------------------

class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  // Scratch bytes run() uses per thread of its pool.
  virtual size_t scratch_bytes() const = 0;
  // Which algorithm and variant, e.g. "avx2 gemm 6x16", "reference" (for tests and logs).
  virtual const char* algorithm() const = 0;
};

// A residual Add fused into a float32 convolution, with the activation after it (a ResNet
// block's relu(conv(x) + shortcut)): output = after(conv(x) + residual), `residual` having the
// output's shape. The driver applies it to each block of output it finishes, while the block
// is in cache, where the two nodes apart wrote the convolution's result to memory and read it
// back. The same bits as run() followed by prepare_binary_activation's kernel (prepare_binary's
// without `after`), operands in the graph's order.
struct ResidualAddition {
  const float* residual = nullptr;
  bool residual_first = false;  // Add(residual, conv) rather than Add(conv, residual)
  bool has_after = false;
  reference::UnaryParams after{};
};
// Whether a fused residual Add can end with `after`: the activations prepare_binary_activation
// takes (Relu, Clip, LeakyRelu, HardSwish).
bool residual_activation_supported(const reference::UnaryParams& after);

// 2-D convolution (reference::conv2d semantics). When `constant_weights` is non-null the weights
// are packed now and run() ignores its `weights` argument.
class Conv2DFloat : public PreparedKernel {
 public:
  virtual void run(const float* input, const float* weights, const float* bias, float* output,
                   ThreadPool& pool) const = 0;
  // Drivers that fuse a residual Add (ResidualAddition) say so and override run_with_residual;
  // it is not called on the others.
  virtual bool takes_residual() const { return false; }
  virtual void run_with_residual(const float* /*input*/, const float* /*weights*/,
                                 const float* /*bias*/, const ResidualAddition& /*addition*/,
                                 float* /*output*/, ThreadPool& /*pool*/) const {}
};
std::unique_ptr<Conv2DFloat> prepare_conv2d(const reference::Conv2DShape& shape,
                                            const reference::FusedActivation& activation,
                                            const float* constant_weights,
                                            KernelVariant variant = selected_kernel_variant());
// A float convolution followed by SiLU, x * sigmoid(x), with the bits prepare_conv2d's output
// gets from prepare_unary's Swish with alpha 1. The direct, Winograd and GEMM convolutions apply
// it to each region of the output as they finish it, while it is in cache; the other algorithms
// are followed by a pass over the output. Null for the reference variant.
std::unique_ptr<Conv2DFloat> prepare_conv2d_silu(const reference::Conv2DShape& shape,
                                                 const float* constant_weights,
                                                 KernelVariant variant = selected_kernel_variant());

// 2-D ConvTranspose (reference::conv_transpose2d semantics): a pointwise GEMM and a scatter,
// within float rounding of the reference. Null for the reference variant, non-constant weights
// and malformed shapes.
std::unique_ptr<Conv2DFloat> prepare_conv_transpose2d(
    const reference::Conv2DShape& shape, const reference::FusedActivation& activation,
    const float* constant_weights, KernelVariant variant = selected_kernel_variant());

// int8 2-D convolution (reference::conv2d_int8 semantics, bit-exact).
class Conv2DInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* input, const int8_t* weights, const int32_t* bias, int8_t* output,
                   ThreadPool& pool) const = 0;
};
std::unique_ptr<Conv2DInt8> prepare_conv2d_int8(const reference::Conv2DShape& shape,
                                                const reference::Int8Requantization& requantization,
                                                const int8_t* constant_weights,
                                                KernelVariant variant = selected_kernel_variant());

// ONNX Gemm (reference::gemm semantics). `constant_b` as for the convolution weights.
class GemmFloat : public PreparedKernel {
 public:
  virtual void run(const float* a, const float* b, const float* c, float* y,
                   ThreadPool& pool) const = 0;
};
std::unique_ptr<GemmFloat> prepare_gemm(const reference::GemmParams& params,
                                        const reference::FusedActivation& activation,
                                        const float* constant_b,
                                        KernelVariant variant = selected_kernel_variant());

class GemmInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* a, const int8_t* b, const int32_t* c, int8_t* y,
                   ThreadPool& pool) const = 0;
};
std::unique_ptr<GemmInt8> prepare_gemm_int8(const reference::GemmParams& params,
                                            const reference::Int8Requantization& requantization,
                                            const int8_t* constant_b,
                                            KernelVariant variant = selected_kernel_variant());

// Batched MatMul (reference::matmul semantics).
class MatMulFloat : public PreparedKernel {
 public:
  virtual void run(const float* a, const float* b, float* y, ThreadPool& pool) const = 0;
};
std::unique_ptr<MatMulFloat> prepare_matmul(const reference::MatMulParams& params,
                                            const reference::FusedActivation& activation,
                                            const float* constant_b,
                                            KernelVariant variant = selected_kernel_variant());

class MatMulInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* a, const int8_t* b, int8_t* y, ThreadPool& pool) const = 0;
};
std::unique_ptr<MatMulInt8> prepare_matmul_int8(const reference::MatMulParams& params,
                                                const reference::Int8Requantization& requantization,
                                                const int8_t* constant_b,
                                                KernelVariant variant = selected_kernel_variant());

// Add, Sub, Mul, Div on float32 (reference::binary semantics, the same bits: one IEEE operation
// per element) for the broadcasts models use: equal shapes, a scalar, or an operand whose
// non-1 dimensions are one contiguous run of the output's (per-channel [1,C,1,1] on NCHW, a
// trailing [C] row). Null for other operations and broadcasts, and for the reference variant:
// the caller keeps the reference kernel then.
class BinaryFloat : public PreparedKernel {
 public:
  virtual void run(const float* a, const float* b, float* output, ThreadPool& pool) const = 0;
};
std::unique_ptr<BinaryFloat> prepare_binary(reference::BinaryOperation operation,
                                            const std::vector<int64_t>& a_shape,
                                            const std::vector<int64_t>& b_shape,
                                            KernelVariant variant = selected_kernel_variant());
// The same followed by the activation that consumes its output (a residual Add and its Relu):
// output = activation(a op b), each chunk activated while it is in cache, the same bits as the
// two kernels one after the other. Activations whose unary_row gives the reference's bits:
// Relu, Clip (params' bounds), LeakyRelu, HardSwish; null for others, as above.
std::unique_ptr<BinaryFloat> prepare_binary_activation(
    reference::BinaryOperation operation, const std::vector<int64_t>& a_shape,
    const std::vector<int64_t>& b_shape, const reference::UnaryParams& activation,
    KernelVariant variant = selected_kernel_variant());

// The same on per-tensor int8 tensors. Add and Sub compute on the codes
// (reference/quantized_add.h, quantized_add_of below) and are never null: the reference
// variant and broadcasts the optimized rows do not cover run the reference kernel. Mul and Div
// are bit-exact with the CPU device's float domain: decode both operands
// (float(code - zero_point) x scale), the float operation, encode the result
// (graph/tensor_conversion.cc); null as above.
struct BinaryInt8Quantization {
  float a_scale = 1.0f;
  int32_t a_zero_point = 0;
  float b_scale = 1.0f;
  int32_t b_zero_point = 0;
  float output_scale = 1.0f;
  int32_t output_zero_point = 0;
  // A following int8 activation as a 256-entry table (output code of every code, -128 first),
  // applied to each chunk of results while it is in cache; empty: none.
  std::vector<int8_t> output_table;
};
// Add's or Sub's ratios and zero points (reference::make_quantized_add).
inline reference::QuantizedAdd quantized_add_of(reference::BinaryOperation operation,
                                                const BinaryInt8Quantization& q) {
  return reference::make_quantized_add(q.a_scale, q.a_zero_point, q.b_scale, q.b_zero_point,
                                       q.output_scale, q.output_zero_point,
                                       operation == reference::BinaryOperation::kSubtract);
}
class BinaryInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* a, const int8_t* b, int8_t* output, ThreadPool& pool) const = 0;
};
std::unique_ptr<BinaryInt8> prepare_binary_int8(reference::BinaryOperation operation,
                                                const std::vector<int64_t>& a_shape,
                                                const std::vector<int64_t>& b_shape,
                                                const BinaryInt8Quantization& quantization,
                                                KernelVariant variant = selected_kernel_variant());

// 2-D pooling on NCHW planes (reference::max_pool2d without indices, reference::average_pool2d)
// and GlobalAveragePool. Max pooling gives the reference's values exactly (float32 and int8
// codes); averages too (each sum runs in the reference's order). Null for the reference
// variant.
class Pool2DFloat : public PreparedKernel {
 public:
  virtual void run(const float* input, float* output, ThreadPool& pool) const = 0;
};
class Pool2DInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* input, int8_t* output, ThreadPool& pool) const = 0;
};
class GlobalPoolFloat : public PreparedKernel {
 public:
  virtual void run(const float* input, float* output, ThreadPool& pool) const = 0;
};
// GlobalAveragePool of per-tensor int8 codes, into each plane's float average: the codes decoded
// through `decoded` (256 floats, indexed by the code's byte: the float domain's decode table),
// summed in the reference's order and divided as the float kernel does, so the averages are the
// float domain's bit for bit (the caller encodes them), without decoding the tensor first.
class GlobalPoolInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* input, float* output, ThreadPool& pool) const = 0;
};
std::unique_ptr<Pool2DFloat> prepare_max_pool2d(const reference::Pool2DShape& shape,
                                                KernelVariant variant = selected_kernel_variant());
std::unique_ptr<Pool2DInt8> prepare_max_pool2d_int8(
    const reference::Pool2DShape& shape, KernelVariant variant = selected_kernel_variant());
std::unique_ptr<Pool2DFloat> prepare_average_pool2d(
    const reference::Pool2DShape& shape, bool count_include_pad,
    KernelVariant variant = selected_kernel_variant());
std::unique_ptr<GlobalPoolFloat> prepare_global_average_pool(
    int64_t planes, int64_t plane_size, KernelVariant variant = selected_kernel_variant());
std::unique_ptr<GlobalPoolInt8> prepare_global_average_pool_int8(
    int64_t planes, int64_t plane_size, const float* decoded,
    KernelVariant variant = selected_kernel_variant());

// Float32 Relu, Clip, LeakyRelu, HardSwish (the reference's bits) and Sigmoid, Swish/SiLU, Tanh
// (a vectorized exp in the SIMD variants: within 1e-6 relative, or 1e-6 absolute below 1e-30),
// over `count` elements; Clip's bounds are given per run. Null for other operations, empty
// tensors and the reference variant.
class UnaryFloat : public PreparedKernel {
 public:
  virtual void run(const float* input, float* output, float minimum, float maximum,
                   ThreadPool& pool) const = 0;
};
std::unique_ptr<UnaryFloat> prepare_unary(const reference::UnaryParams& params, int64_t count,
                                          KernelVariant variant = selected_kernel_variant());

// Softmax over [outer, channels, inner] (reference::softmax): the micro-kernels' vectorized exp
// and sums in double, within 1e-6 relative of the reference's double computation for
// differences from the maximum below 16 (docs/cpu-kernels.md). Rows or column blocks are split
// over the pool. Null for empty layouts and the reference variant.
class SoftmaxFloat : public PreparedKernel {
 public:
  virtual void run(const float* input, float* output, ThreadPool& pool) const = 0;
};
std::unique_ptr<SoftmaxFloat> prepare_softmax(const reference::ChannelLayout& layout,
                                              KernelVariant variant = selected_kernel_variant());

// An int8 activation applied as a 256-entry table (output code of each input code, -128 first):
// output[i] = table[input[i] + 128] over `count` codes, split over the pool's threads for large
// tensors; input and output may be the same buffer. Null for the reference variant and
// count <= 0.
class LookupInt8 : public PreparedKernel {
 public:
  virtual void run(const int8_t* input, int8_t* output, ThreadPool& pool) const = 0;
};
std::unique_ptr<LookupInt8> prepare_lookup_int8(const int8_t* table, int64_t count,
                                                KernelVariant variant = selected_kernel_variant());

// Nearest-neighbour Resize on float32 (reference::resize_nearest, the same bits: it only
// copies), any rank. Null for the reference variant and malformed parameters.
class ResizeFloat : public PreparedKernel {
 public:
  virtual void run(const float* input, float* output, ThreadPool& pool) const = 0;
};
// Bilinear Resize on float32 over the last two dimensions (reference::resize_bilinear, the same
// bits on x86-64: the same taps and the same products and sums in the same order). Null for the
// reference variant and malformed parameters.
std::unique_ptr<ResizeFloat> prepare_resize_bilinear(
    const reference::ResizeParams& params, KernelVariant variant = selected_kernel_variant());
std::unique_ptr<ResizeFloat> prepare_resize_nearest(
    const reference::ResizeParams& params, KernelVariant variant = selected_kernel_variant());

}  // namespace orknn::kernels::cpu
