// The CPU device's kernel interface: one CpuKernel per node, built once when a plan is made and
// run many times. Building parses attributes, checks dtypes and may pre-pack weights; running
// only computes and never allocates.
//
// Precision handling is shared, not per op (cpu_kernel_registry.cc):
//  * kFloatDomain ops are written for float32 only. For fp16 or int8 tensors the registry wraps
//    the kernel: activations are converted to float32 scratch before the run and back after it,
//    constants once at build time. Tensors of other types (int64 indices, bool) pass unchanged.
//  * kByteMove ops (Reshape, Transpose, Concat, ...) work on elements of any size; they run
//    natively when all data inputs and outputs share the dtype and quantization, and are wrapped
//    like kFloatDomain ops otherwise.
//  * kNative ops (Cast) see the real dtypes always.
//  * An op may offer an integer factory for plain integer data (no quantization) in input 0.
//  * An op may also offer an int8 factory (Conv, Gemm, MatMul): it is tried first when the
//    activations are per-tensor int8; returning kUnimplemented falls back to the float domain.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "reference/elementwise.h"

namespace orknn::devices::cpu {

struct KernelBuildContext {
  const graph::Node& node;
  // nullptr for omitted optional inputs. In the float domain these are float32 views of the
  // graph's tensors; constant inputs carry (possibly converted) constant_data.
  std::vector<const graph::Tensor*> inputs;
  std::vector<const graph::Tensor*> outputs;

  const graph::Tensor* input(size_t position) const {
    return position < inputs.size() ? inputs[position] : nullptr;
  }
  template <typename... Parts>
  Status error(const Parts&... parts) const {
    return invalid_model(node.describe(), ": ", parts...);
  }
};

class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  // inputs[i] is nullptr for omitted optional inputs; buffers hold the shapes and types given
  // at build time. Must not allocate.
  virtual Status run(const void* const* inputs, void* const* outputs) = 0;
  // Whether run() applies the node's fused SiLU itself (ops/convolution.cc with_fused_silu then
  // adds no pass of its own).
  virtual bool applies_fused_silu() const { return false; }
};

using CpuKernelFactory = Result<std::unique_ptr<CpuKernel>> (*)(const KernelBuildContext& context);

enum class DtypeHandling { kFloatDomain, kByteMove, kNative };

struct CpuOpDefinition {
  const char* op_type;
  DtypeHandling dtype_handling;
  CpuKernelFactory make_kernel;       // required
  CpuKernelFactory make_int8_kernel;  // optional
  // Optional: used when input 0 is an integer tensor without quantization (integer Add, Clip,
  // ...), which the float domain cannot decode; without it such nodes are refused.
  CpuKernelFactory make_integer_kernel = nullptr;
};

// Per-family lists, concatenated by cpu_kernel_registry.cc. Each lives in devices/cpu/ops/.
std::vector<CpuOpDefinition> convolution_cpu_ops();
std::vector<CpuOpDefinition> pooling_cpu_ops();
std::vector<CpuOpDefinition> elementwise_cpu_ops();
std::vector<CpuOpDefinition> normalization_cpu_ops();
std::vector<CpuOpDefinition> reduction_cpu_ops();
std::vector<CpuOpDefinition> data_movement_cpu_ops();
std::vector<CpuOpDefinition> resize_cpu_ops();

const CpuOpDefinition* find_cpu_op(std::string_view op_type);

// Add, Sub, Mul or Div and the activation node that alone consumes its result (a residual Add
// and its Relu), as one kernel that reads the binary node's inputs and writes the activation's
// output (ops/elementwise.cc): int8 applies the activation's 256-entry table to each chunk of
// result codes, float32 the activation's row (Relu, Clip, LeakyRelu, HardSwish) to each chunk,
// the same bits as the two kernels. kUnimplemented when the pair is not covered.
Result<std::unique_ptr<CpuKernel>> make_binary_activation_kernel(
    const KernelBuildContext& binary, const KernelBuildContext& activation);

// The parameters of a float32 activation node (Relu, Clip with constant bounds, ...) for a kernel
// that applies it fused; nothing when it is not a float32 unary activation node.
Result<std::optional<kernels::reference::UnaryParams>> fused_float_activation(
    const KernelBuildContext& activation);

// A float32 Conv, the Add that alone reads its result (a residual Add: the other operand has the
// output's shape) and, when `activation` is given, the activation node that alone reads the
// Add's result, as one kernel (ops/convolution.cc): it reads the Conv's inputs X, W, B (null
// when absent) and then the residual, and writes the last node's output; the convolution
// driver adds the residual to each block of output while it is in cache (kernels/cpu/dispatch.h
// ResidualAddition), the same bits as the nodes one by one. kUnimplemented when not covered.
Result<std::unique_ptr<CpuKernel>> make_residual_convolution_kernel(
    const KernelBuildContext& convolution, const KernelBuildContext& add,
    const KernelBuildContext* activation);

// A kernel that runs a function object, usually a lambda capturing the parameters parsed at
// build time; saves a class per simple op.
template <typename Function>
class FunctionKernel final : public CpuKernel {
 public:
  explicit FunctionKernel(Function function) : function_(std::move(function)) {}
  Status run(const void* const* inputs, void* const* outputs) override {
    return function_(inputs, outputs);
  }

 private:
  Function function_;
};
template <typename Function>
std::unique_ptr<CpuKernel> make_function_kernel(Function function) {
  return std::make_unique<FunctionKernel<Function>>(std::move(function));
}

}  // namespace orknn::devices::cpu
