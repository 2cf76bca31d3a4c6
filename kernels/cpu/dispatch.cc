#include "dispatch.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/logging.h"
#include "optimized/dot_product_kernels.h"
#include "optimized/fused_binary_rows.h"
#include "optimized/optimized_kernels.h"
#include "optimized/subsampled_pointwise.h"

#if defined(ORKNN_HAVE_X86_KERNELS)
#include <cpuinfo_x86.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace orknn::kernels::cpu {
namespace {

constexpr int kNoOverride = -1;
std::atomic<int> variant_override{kNoOverride};

bool cpu_has_avx2_fma() {
#if defined(ORKNN_HAVE_X86_KERNELS)
  // cpu_features reports AVX2 only when the OS also saves the YMM registers.
  static const bool supported = [] {
    const cpu_features::X86Features features = cpu_features::GetX86Info().features;
    return features.avx2 && features.fma3;
  }();
  return supported;
#else
  return false;
#endif
}

// The avx512 variant's VPDPBUSD tiles use AVX-512 F, BW (byte masks), VL and VNNI; cpu_features
// reports the AVX-512 features only when the OS also saves the ZMM and mask registers.
bool cpu_has_avx512_vnni() {
#if defined(ORKNN_HAVE_X86_KERNELS)
  static const bool supported = [] {
    const cpu_features::X86Features features = cpu_features::GetX86Info().features;
    return cpu_has_avx2_fma() && features.avx512f && features.avx512bw && features.avx512vl &&
           features.avx512vnni;
  }();
  return supported;
#else
  return false;
#endif
}

// AArch64 Linux: the kernel's HWCAP bits (asm/hwcap.h), so no cpu_features build is needed on
// the target. Bits: HWCAP_ASIMD 1 << 1, HWCAP_ASIMDDP 1 << 20 (sdot/udot); HWCAP2_I8MM 1 << 13.
struct ArmFeatures {
  bool asimd = false;
  bool dotprod = false;
  bool i8mm = false;
};

ArmFeatures arm_features() {
  ArmFeatures features;
#if defined(__aarch64__) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  features.asimd = (hwcap & (1ul << 1)) != 0;
  features.dotprod = (hwcap & (1ul << 20)) != 0;
  features.i8mm = (hwcap2 & (1ul << 13)) != 0;
#endif
  return features;
}

bool cpu_has_neon() {
#if defined(ORKNN_HAVE_ARM_KERNELS)
  static const bool supported = arm_features().asimd;
  return supported;
#else
  return false;
#endif
}

bool cpu_has_dotprod() {
  static const bool supported = cpu_has_neon() && arm_features().dotprod;
  return supported;
}

bool cpu_has_i8mm() {
  static const bool supported = cpu_has_neon() && arm_features().i8mm;
  return supported;
}

KernelVariant from_environment() {
  static const KernelVariant variant = [] {
    const char* text = std::getenv("ORKNN_CPU_KERNELS");
    if (!text || !*text) return best_kernel_variant();
    const std::optional<KernelVariant> requested = parse_kernel_variant(text);
    if (!requested) {
      log_warning("ORKNN_CPU_KERNELS='", text,
                  "' is not a kernel variant (reference, portable, avx2, avx512, neon, "
                  "neon-dotprod, neon-i8mm); using ",
                  kernel_variant_name(best_kernel_variant()));
      return best_kernel_variant();
    }
    if (!kernel_variant_available(*requested)) {
      log_warning("ORKNN_CPU_KERNELS=", text, ": this CPU or build cannot run it; using ",
                  kernel_variant_name(best_kernel_variant()));
      return best_kernel_variant();
    }
    return *requested;
  }();
  return variant;
}

const optimized::MicroKernels& micro_kernels(KernelVariant variant) {
#if defined(ORKNN_HAVE_X86_KERNELS)
  // avx512 is avx2 except for the int8 GEMMs (dot_product_kernels below) and the int8 SiLU
  // epilogue.
  if (variant == KernelVariant::kAvx512) return optimized::avx512_micro_kernels();
  if (variant == KernelVariant::kAvx2) return optimized::avx2_micro_kernels();
#endif
#if defined(ORKNN_HAVE_ARM_KERNELS)
  // The dot-product variants are neon with other int8 convolution tiles.
  if (variant == KernelVariant::kNeon || variant == KernelVariant::kNeonDotprod ||
      variant == KernelVariant::kNeonI8mm) {
    return optimized::neon_micro_kernels();
  }
#endif
  return optimized::portable_micro_kernels();
}

// The int8 GEMM tiles of the dot-product variants; null for the other variants. Their
// convolution, Gemm and MatMul factories return null where they do not apply, and the
// variant's int16-pair GEMM runs then.
const optimized::DotProductKernels* dot_product_kernels(KernelVariant variant) {
#if defined(ORKNN_HAVE_ARM_KERNELS)
  if (variant == KernelVariant::kNeonDotprod) return &optimized::sdot_kernels();
  if (variant == KernelVariant::kNeonI8mm) return &optimized::i8mm_kernels();
#endif
#if defined(ORKNN_HAVE_X86_KERNELS)
  if (variant == KernelVariant::kAvx512) return &optimized::avx512_vnni_kernels();
#endif
  static_cast<void>(variant);
  return nullptr;
}

// The reference kernels behind the prepared-kernel interfaces.

class ReferenceConv2D final : public Conv2DFloat {
 public:
  ReferenceConv2D(const reference::Conv2DShape& shape, const reference::FusedActivation& activation,
                  const float* constant_weights)
      : shape_(shape), activation_(activation), constant_weights_(constant_weights) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool&) const override {
    reference::conv2d(shape_, activation_, input, constant_weights_ ? constant_weights_ : weights,
                      bias, output);
  }

 private:
  const reference::Conv2DShape shape_;
  const reference::FusedActivation activation_;
  const float* constant_weights_;
};

class ReferenceConv2DInt8 final : public Conv2DInt8 {
 public:
  ReferenceConv2DInt8(const reference::Conv2DShape& shape, const reference::Int8Requantization& q,
                      const int8_t* constant_weights)
      : shape_(shape), q_(q), constant_weights_(constant_weights) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const int8_t* input, const int8_t* weights, const int32_t* bias, int8_t* output,
           ThreadPool&) const override {
    reference::conv2d_int8(shape_, q_, input, constant_weights_ ? constant_weights_ : weights, bias,
                           output);
  }

 private:
  const reference::Conv2DShape shape_;
  const reference::Int8Requantization q_;
  const int8_t* constant_weights_;
};

// int8 Add and Sub on the codes (reference/quantized_add.h) with any broadcast, and the
// following activation's table when there is one.
class ReferenceQuantizedAdd final : public BinaryInt8 {
 public:
  ReferenceQuantizedAdd(const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape,
                        const reference::QuantizedAdd& add, const std::vector<int8_t>& table)
      : params_(reference::make_broadcast_params(a_shape, b_shape)), add_(add), table_(table) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const int8_t* a, const int8_t* b, int8_t* output, ThreadPool&) const override {
    reference::quantized_add(params_, a, b, add_, output);
    if (table_.empty()) return;
    int64_t count = 1;
    for (int64_t dimension : params_.output_shape) count *= dimension;
    for (int64_t i = 0; i < count; ++i) output[i] = table_[static_cast<size_t>(output[i] + 128)];
  }

 private:
  const reference::BroadcastParams params_;
  const reference::QuantizedAdd add_;
  const std::vector<int8_t> table_;
};

class ReferenceGemm final : public GemmFloat {
 public:
  ReferenceGemm(const reference::GemmParams& params, const reference::FusedActivation& activation,
                const float* constant_b)
      : params_(params), activation_(activation), constant_b_(constant_b) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const float* a, const float* b, const float* c, float* y, ThreadPool&) const override {
    reference::gemm(params_, activation_, a, constant_b_ ? constant_b_ : b, c, y);
  }

 private:
  const reference::GemmParams params_;
  const reference::FusedActivation activation_;
  const float* constant_b_;
};

class ReferenceGemmInt8 final : public GemmInt8 {
 public:
  ReferenceGemmInt8(const reference::GemmParams& params, const reference::Int8Requantization& q,
                    const int8_t* constant_b)
      : params_(params), q_(q), constant_b_(constant_b) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const int8_t* a, const int8_t* b, const int32_t* c, int8_t* y,
           ThreadPool&) const override {
    reference::gemm_int8(params_, q_, a, constant_b_ ? constant_b_ : b, c, y);
  }

 private:
  const reference::GemmParams params_;
  const reference::Int8Requantization q_;
  const int8_t* constant_b_;
};

class ReferenceMatMul final : public MatMulFloat {
 public:
  ReferenceMatMul(const reference::MatMulParams& params,
                  const reference::FusedActivation& activation, const float* constant_b)
      : params_(params), activation_(activation), constant_b_(constant_b) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const float* a, const float* b, float* y, ThreadPool&) const override {
    reference::matmul(params_, activation_, a, constant_b_ ? constant_b_ : b, y);
  }

 private:
  const reference::MatMulParams params_;
  const reference::FusedActivation activation_;
  const float* constant_b_;
};

class ReferenceMatMulInt8 final : public MatMulInt8 {
 public:
  ReferenceMatMulInt8(const reference::MatMulParams& params, const reference::Int8Requantization& q,
                      const int8_t* constant_b)
      : params_(params), q_(q), constant_b_(constant_b) {}
  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return "reference"; }
  void run(const int8_t* a, const int8_t* b, int8_t* y, ThreadPool&) const override {
    reference::matmul_int8(params_, q_, a, constant_b_ ? constant_b_ : b, y);
  }

 private:
  const reference::MatMulParams params_;
  const reference::Int8Requantization q_;
  const int8_t* constant_b_;
};

// An unavailable variant (forced by a test on the wrong CPU) runs as the best available one.
KernelVariant usable(KernelVariant variant) {
  return kernel_variant_available(variant) ? variant : best_kernel_variant();
}

// Products over an empty depth are the bias alone; the reference handles those.
bool empty_depth(const reference::Conv2DShape& shape) {
  return shape.input_channels / shape.groups * shape.window.kernel_height *
             shape.window.kernel_width ==
         0;
}

}  // namespace

const char* kernel_variant_name(KernelVariant variant) {
  switch (variant) {
    case KernelVariant::kReference:
      return "reference";
    case KernelVariant::kPortable:
      return "portable";
    case KernelVariant::kAvx2:
      return "avx2";
    case KernelVariant::kNeon:
      return "neon";
    case KernelVariant::kNeonDotprod:
      return "neon-dotprod";
    case KernelVariant::kNeonI8mm:
      return "neon-i8mm";
    case KernelVariant::kAvx512:
      return "avx512";
  }
  return "unknown";
}

std::optional<KernelVariant> parse_kernel_variant(std::string_view name) {
  for (KernelVariant variant : {KernelVariant::kReference, KernelVariant::kPortable,
                                KernelVariant::kAvx2, KernelVariant::kAvx512, KernelVariant::kNeon,
                                KernelVariant::kNeonDotprod, KernelVariant::kNeonI8mm}) {
    if (name == kernel_variant_name(variant)) return variant;
  }
  return std::nullopt;
}

bool kernel_variant_available(KernelVariant variant) {
  switch (variant) {
    case KernelVariant::kReference:
    case KernelVariant::kPortable:
      return true;
    case KernelVariant::kAvx2:
      return cpu_has_avx2_fma();
    case KernelVariant::kAvx512:
      return cpu_has_avx512_vnni();
    case KernelVariant::kNeon:
      return cpu_has_neon();
    case KernelVariant::kNeonDotprod:
      return cpu_has_dotprod();
    case KernelVariant::kNeonI8mm:
      return cpu_has_i8mm();
  }
  return false;
}

KernelVariant best_kernel_variant() {
  if (cpu_has_avx512_vnni()) return KernelVariant::kAvx512;
  if (cpu_has_avx2_fma()) return KernelVariant::kAvx2;
  if (cpu_has_i8mm()) return KernelVariant::kNeonI8mm;
  if (cpu_has_dotprod()) return KernelVariant::kNeonDotprod;
  if (cpu_has_neon()) return KernelVariant::kNeon;
  return KernelVariant::kPortable;
}

const char* detected_cpu_features() {
  static const std::string features = [] {
    std::string text;
    auto add = [&text](bool present, const char* name) {
      if (!present) return;
      if (!text.empty()) text += ' ';
      text += name;
    };
#if defined(ORKNN_HAVE_X86_KERNELS)
    add(cpu_has_avx2_fma(), "avx2 fma");
    add(cpu_has_avx512_vnni(), "avx512f avx512bw avx512vl avx512vnni");
#endif
    const ArmFeatures arm = arm_features();
    add(arm.asimd, "asimd");
    add(arm.dotprod, "dotprod");
    add(arm.i8mm, "i8mm");
    return text;
  }();
  return features.c_str();
}

KernelVariant selected_kernel_variant() {
  const int forced = variant_override.load(std::memory_order_relaxed);
  if (forced != kNoOverride) return usable(static_cast<KernelVariant>(forced));
  return from_environment();
}

ScopedKernelVariant::ScopedKernelVariant(KernelVariant variant)
    : previous_(variant_override.exchange(static_cast<int>(variant))) {}
ScopedKernelVariant::~ScopedKernelVariant() {
  variant_override.store(previous_);
}

std::unique_ptr<Conv2DFloat> prepare_conv_transpose2d(const reference::Conv2DShape& shape,
                                                      const reference::FusedActivation& activation,
                                                      const float* constant_weights,
                                                      KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_transposed_conv2d(micro_kernels(variant), shape, activation,
                                           constant_weights);
}

namespace {

// A float convolution whose algorithm has no region epilogue, then the SiLU op's own kernel
// (prepare_unary's Swish with alpha 1) over its whole output.
class Conv2DThenSilu final : public Conv2DFloat {
 public:
  Conv2DThenSilu(std::unique_ptr<Conv2DFloat> inner, std::unique_ptr<UnaryFloat> silu)
      : inner_(std::move(inner)), silu_(std::move(silu)) {
    std::snprintf(algorithm_, sizeof(algorithm_), "%s, then silu", inner_->algorithm());
  }
  size_t scratch_bytes() const override {
    return std::max(inner_->scratch_bytes(), silu_->scratch_bytes());
  }
  const char* algorithm() const override { return algorithm_; }
  void run(const float* input, const float* weights, const float* bias, float* output,
           ThreadPool& pool) const override {
    inner_->run(input, weights, bias, output, pool);
    silu_->run(output, output, 0.0f, 0.0f, pool);
  }

 private:
  std::unique_ptr<Conv2DFloat> inner_;
  std::unique_ptr<UnaryFloat> silu_;
  char algorithm_[96];
};

// `kernel`, followed by a SiLU pass over its output when `epilogue` asks for one (the variant's
// SiLU kernel, whose row the epilogue is).
std::unique_ptr<Conv2DFloat> then_epilogue(std::unique_ptr<Conv2DFloat> kernel,
                                           const reference::Conv2DShape& shape,
                                           optimized::RegionEpilogue epilogue,
                                           KernelVariant variant) {
  if (!epilogue || !kernel) return kernel;
  reference::UnaryParams silu;
  silu.operation = reference::UnaryOperation::kSwish;
  silu.alpha = 1.0f;
  const int64_t count =
      shape.batch * shape.output_channels * shape.window.output_height * shape.window.output_width;
  auto pass = optimized::make_unary(micro_kernels(variant), silu, count);
  if (!pass) return kernel;  // an empty output
  return std::make_unique<Conv2DThenSilu>(std::move(kernel), std::move(pass));
}

// prepare_conv2d's choice; the direct, Winograd and GEMM convolutions apply `epilogue` to each
// output region as they finish it, the others are followed by a pass.
std::unique_ptr<Conv2DFloat> choose_conv2d(const reference::Conv2DShape& shape,
                                           const reference::FusedActivation& activation,
                                           const float* constant_weights, KernelVariant variant,
                                           optimized::RegionEpilogue epilogue) {
  if (variant == KernelVariant::kReference || empty_depth(shape)) {
    return then_epilogue(std::make_unique<ReferenceConv2D>(shape, activation, constant_weights),
                         shape, epilogue, variant);
  }
  const optimized::MicroKernels& kernels = micro_kernels(variant);
  if (auto kernel =
          optimized::make_depthwise_conv2d(kernels, shape, activation, constant_weights)) {
    return then_epilogue(std::move(kernel), shape, epilogue, variant);
  }
  // As for int8 (prepare_conv2d_int8), measured on avx2 only, but not where the lanes take the
  // strided layer: they read its pixels in place already, and over the copy they measured
  // 0.96-1.14x their time (1x1/2 1024 -> 2048 from 14x14), where the im2col GEMM's layers gained
  // (0.85-0.99x).
  if (variant == KernelVariant::kAvx2 && optimized::subsampled_pointwise_preferred(shape) &&
      !optimized::avx2_lane_convolution_preferred(shape)) {
    if (auto kernel = optimized::make_subsampled_pointwise_conv2d(
            shape, prepare_conv2d(optimized::subsampled_pointwise_shape(shape), activation,
                                  constant_weights, variant))) {
      return then_epilogue(std::move(kernel), shape, epilogue, variant);
    }
  }
#if defined(ORKNN_HAVE_X86_KERNELS)
  // Both x86 variants take the Winograd convolution for the 3x3 stride-1 layers its rule
  // admits, ahead of their lanes and direct tiles: on avx2 (Zen 3, session 11) it ran those
  // layers in 0.42-0.87x their time. On avx512 (session 17, Sapphire Rapids class) F(4x4) ran
  // 0.50-0.75x the direct tiles' time at one thread in bench_kernels --winograd-vs-default
  // (yolov5s's 32->32 @160 1.00x), but avx512 keeps its lanes for the F(2x2) layers (7x7
  // outputs): their transformed weights (16 MB for 512->512) come from memory in a model, where
  // the layer ran 1.04x the lanes' time, against 0.79-0.96x in the benchmark's warm caches.
  // Nor does it take F(4x4) below 64 input channels: yolov5s's 32->32 @160, even with the direct
  // tiles in the benchmark, ran 0.85x (one thread) and 0.89x (two) of its Winograd time on the
  // direct tiles in the model (session 18: its 3 MB input and the transformed tiles come from
  // memory there).
  const bool winograd_variant =
      variant == KernelVariant::kAvx2 ||
      (variant == KernelVariant::kAvx512 && optimized::winograd_output_tile(shape) == 4 &&
       shape.input_channels >= 64);
  if (winograd_variant && optimized::winograd_convolution_preferred(shape)) {
    const size_t tile = optimized::winograd_output_tile(shape);
    if (auto kernel = optimized::make_winograd_conv2d(
            kernels, shape, activation, constant_weights, tile,
            optimized::avx2_winograd_float_transforms(tile), epilogue)) {
      return kernel;
    }
  }
  if (variant == KernelVariant::kAvx512 && optimized::lane_convolution_preferred(shape)) {
    if (auto kernel = optimized::make_lane_conv2d(kernels, optimized::avx512_lane_float_tile,
                                                  optimized::avx512_pack_lane_panel, shape,
                                                  activation, constant_weights)) {
      return then_epilogue(std::move(kernel), shape, epilogue, variant);
    }
  }
  if (variant == KernelVariant::kAvx512 && optimized::direct_convolution_preferred(shape)) {
    if (auto kernel =
            optimized::make_direct_conv2d(kernels.name, optimized::avx512_direct_float_tile, shape,
                                          activation, constant_weights, epilogue)) {
      return kernel;
    }
  }
  if (variant == KernelVariant::kAvx2 && optimized::avx2_lane_convolution_preferred(shape)) {
    if (auto kernel = optimized::make_lane_conv2d(kernels, optimized::avx2_lane_float_tile,
                                                  optimized::avx2_pack_lane_panel, shape,
                                                  activation, constant_weights)) {
      return then_epilogue(std::move(kernel), shape, epilogue, variant);
    }
  }
  if (variant == KernelVariant::kAvx2 && optimized::avx2_direct_convolution_preferred(shape)) {
    if (auto kernel =
            optimized::make_direct_conv2d(kernels.name, optimized::avx2_direct_float_tile, shape,
                                          activation, constant_weights, epilogue)) {
      return kernel;
    }
  }
#endif
  return optimized::make_gemm_conv2d(kernels, shape, activation, constant_weights, epilogue);
}

}  // namespace

std::unique_ptr<Conv2DFloat> prepare_conv2d(const reference::Conv2DShape& shape,
                                            const reference::FusedActivation& activation,
                                            const float* constant_weights, KernelVariant variant) {
  return choose_conv2d(shape, activation, constant_weights, usable(variant), {});
}

std::unique_ptr<Conv2DFloat> prepare_conv2d_silu(const reference::Conv2DShape& shape,
                                                 const float* constant_weights,
                                                 KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return choose_conv2d(shape, reference::FusedActivation{}, constant_weights, variant,
                       optimized::silu_epilogue(micro_kernels(variant)));
}

std::unique_ptr<Conv2DInt8> prepare_conv2d_int8(const reference::Conv2DShape& shape,
                                                const reference::Int8Requantization& requantization,
                                                const int8_t* constant_weights,
                                                KernelVariant variant) {
  variant = usable(variant);
  if (variant != KernelVariant::kReference && !empty_depth(shape)) {
    const optimized::MicroKernels& kernels = micro_kernels(variant);
    if (auto kernel = optimized::make_depthwise_conv2d_int8(kernels, shape, requantization,
                                                            constant_weights)) {
      return kernel;
    }
    // 1x1 strided layers as the in-place pointwise kernel over a subsampled copy: measured on
    // the avx2 pair tiles only (docs/cpu-kernels.md, "Session 13: 1x1 stride-2 convolutions
    // as a subsample").
    if (variant == KernelVariant::kAvx2 && optimized::subsampled_pointwise_preferred(shape)) {
      if (auto kernel = optimized::make_subsampled_pointwise_conv2d_int8(
              shape, prepare_conv2d_int8(optimized::subsampled_pointwise_shape(shape),
                                         requantization, constant_weights, variant))) {
        return kernel;
      }
    }
    if (const optimized::DotProductKernels* dot = dot_product_kernels(variant)) {
      if (auto kernel = optimized::make_dot_product_conv2d_int8(*dot, shape, requantization,
                                                                constant_weights)) {
        return kernel;
      }
    }
    if (variant == KernelVariant::kAvx2 && optimized::int8_winograd_preferred(shape)) {
      if (auto kernel = optimized::make_int8_winograd_conv2d(kernels, shape, requantization,
                                                             constant_weights)) {
        return kernel;
      }
    }
    if (variant == KernelVariant::kAvx2 && optimized::int8_lane_convolution_preferred(shape)) {
      if (auto kernel =
              optimized::make_int8_lane_conv2d(kernels, shape, requantization, constant_weights)) {
        return kernel;
      }
    }
#if defined(ORKNN_HAVE_X86_KERNELS)
    // The other avx2 convolutions on VPMADDUBSW tiles, their weight pairs split so that the
    // saturating pair sums are exact (dot_product_pair_split.h).
    if (variant == KernelVariant::kAvx2 && optimized::pair_convolution_preferred(shape)) {
      if (auto kernel = optimized::make_dot_product_conv2d_int8(
              optimized::avx2_pair_kernels(), shape, requantization, constant_weights)) {
        return kernel;
      }
    }
#endif
    if (auto kernel =
            optimized::make_gemm_conv2d_int8(kernels, shape, requantization, constant_weights)) {
      return kernel;
    }
  }
  return std::make_unique<ReferenceConv2DInt8>(shape, requantization, constant_weights);
}

std::unique_ptr<GemmFloat> prepare_gemm(const reference::GemmParams& params,
                                        const reference::FusedActivation& activation,
                                        const float* constant_b, KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference || params.k == 0) {
    return std::make_unique<ReferenceGemm>(params, activation, constant_b);
  }
  return optimized::make_gemm(micro_kernels(variant), params, activation, constant_b);
}

std::unique_ptr<GemmInt8> prepare_gemm_int8(const reference::GemmParams& params,
                                            const reference::Int8Requantization& requantization,
                                            const int8_t* constant_b, KernelVariant variant) {
  variant = usable(variant);
  if (variant != KernelVariant::kReference && params.k > 0) {
    if (const optimized::DotProductKernels* dot = dot_product_kernels(variant)) {
      if (auto kernel =
              optimized::make_dot_product_gemm_int8(*dot, params, requantization, constant_b)) {
        return kernel;
      }
    }
    if (auto kernel =
            optimized::make_gemm_int8(micro_kernels(variant), params, requantization, constant_b)) {
      return kernel;
    }
  }
  return std::make_unique<ReferenceGemmInt8>(params, requantization, constant_b);
}

std::unique_ptr<MatMulFloat> prepare_matmul(const reference::MatMulParams& params,
                                            const reference::FusedActivation& activation,
                                            const float* constant_b, KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference || params.k == 0) {
    return std::make_unique<ReferenceMatMul>(params, activation, constant_b);
  }
  return optimized::make_matmul(micro_kernels(variant), params, activation, constant_b);
}

std::unique_ptr<MatMulInt8> prepare_matmul_int8(const reference::MatMulParams& params,
                                                const reference::Int8Requantization& requantization,
                                                const int8_t* constant_b, KernelVariant variant) {
  variant = usable(variant);
  if (variant != KernelVariant::kReference && params.k > 0) {
    if (const optimized::DotProductKernels* dot = dot_product_kernels(variant)) {
      if (auto kernel =
              optimized::make_dot_product_matmul_int8(*dot, params, requantization, constant_b)) {
        return kernel;
      }
    }
    if (auto kernel = optimized::make_matmul_int8(micro_kernels(variant), params, requantization,
                                                  constant_b)) {
      return kernel;
    }
  }
  return std::make_unique<ReferenceMatMulInt8>(params, requantization, constant_b);
}

std::unique_ptr<BinaryFloat> prepare_binary(reference::BinaryOperation operation,
                                            const std::vector<int64_t>& a_shape,
                                            const std::vector<int64_t>& b_shape,
                                            KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_binary(micro_kernels(variant), operation, a_shape, b_shape);
}

bool residual_activation_supported(const reference::UnaryParams& after) {
  return optimized::row_activation_of(after).has_value();
}

std::unique_ptr<BinaryFloat> prepare_binary_activation(reference::BinaryOperation operation,
                                                       const std::vector<int64_t>& a_shape,
                                                       const std::vector<int64_t>& b_shape,
                                                       const reference::UnaryParams& activation,
                                                       KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_binary_activation(micro_kernels(variant), operation, a_shape, b_shape,
                                           activation);
}

std::unique_ptr<BinaryInt8> prepare_binary_int8(reference::BinaryOperation operation,
                                                const std::vector<int64_t>& a_shape,
                                                const std::vector<int64_t>& b_shape,
                                                const BinaryInt8Quantization& quantization,
                                                KernelVariant variant) {
  variant = usable(variant);
  if (variant != KernelVariant::kReference) {
    if (auto kernel = optimized::make_binary_int8(micro_kernels(variant), operation, a_shape,
                                                  b_shape, quantization)) {
      return kernel;
    }
  }
  if (operation != reference::BinaryOperation::kAdd &&
      operation != reference::BinaryOperation::kSubtract) {
    return nullptr;  // Mul and Div: the float domain
  }
  return std::make_unique<ReferenceQuantizedAdd>(
      a_shape, b_shape, quantized_add_of(operation, quantization), quantization.output_table);
}

std::unique_ptr<Pool2DFloat> prepare_max_pool2d(const reference::Pool2DShape& shape,
                                                KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_max_pool2d(micro_kernels(variant), shape);
}

std::unique_ptr<Pool2DInt8> prepare_max_pool2d_int8(const reference::Pool2DShape& shape,
                                                    KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_max_pool2d_int8(micro_kernels(variant), shape);
}

std::unique_ptr<Pool2DFloat> prepare_average_pool2d(const reference::Pool2DShape& shape,
                                                    bool count_include_pad, KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_average_pool2d(micro_kernels(variant), shape, count_include_pad);
}

std::unique_ptr<GlobalPoolFloat> prepare_global_average_pool(int64_t planes, int64_t plane_size,
                                                             KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_global_average_pool(micro_kernels(variant), planes, plane_size);
}

std::unique_ptr<GlobalPoolInt8> prepare_global_average_pool_int8(int64_t planes, int64_t plane_size,
                                                                 const float* decoded,
                                                                 KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_global_average_pool_int8(micro_kernels(variant), planes, plane_size,
                                                  decoded);
}

std::unique_ptr<UnaryFloat> prepare_unary(const reference::UnaryParams& params, int64_t count,
                                          KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_unary(micro_kernels(variant), params, count);
}

std::unique_ptr<SoftmaxFloat> prepare_softmax(const reference::ChannelLayout& layout,
                                              KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_softmax(micro_kernels(variant), layout);
}

std::unique_ptr<LookupInt8> prepare_lookup_int8(const int8_t* table, int64_t count,
                                                KernelVariant variant) {
  variant = usable(variant);
  if (variant == KernelVariant::kReference) return nullptr;
  return optimized::make_lookup_int8(micro_kernels(variant), table, count);
}

std::unique_ptr<ResizeFloat> prepare_resize_bilinear(const reference::ResizeParams& params,
                                                     KernelVariant variant) {
  // Plain C++ loops, the same for every optimized variant (the compiler vectorizes the blend).
  if (usable(variant) == KernelVariant::kReference) return nullptr;
  return optimized::make_resize_bilinear(params);
}

std::unique_ptr<ResizeFloat> prepare_resize_nearest(const reference::ResizeParams& params,
                                                    KernelVariant variant) {
  // Plain copies: no micro-kernel, the same code for every optimized variant.
  if (usable(variant) == KernelVariant::kReference) return nullptr;
  return optimized::make_resize_nearest(params);
}

}  // namespace orknn::kernels::cpu
