#include "devices/cpu/optimized/optimized_kernels.h"

#include "core/thread_pool.h"
#include "dispatch.h"

namespace orknn::devices::cpu::optimized {
namespace {

namespace dispatch = kernels::cpu;
namespace reference = kernels::reference;

template <typename T>
const T* constant_input(const KernelBuildContext& context, size_t position) {
  const graph::Tensor* tensor = context.input(position);
  return tensor && tensor->is_constant() ? reinterpret_cast<const T*>(tensor->constant_data)
                                         : nullptr;
}

template <typename T>
const T* typed(const void* pointer) {
  return static_cast<const T*>(pointer);
}

// Wraps a prepared kernel; `call` maps the node's buffers onto its run().
template <typename Prepared, typename Call>
class PreparedCpuKernel final : public CpuKernel {
 public:
  PreparedCpuKernel(std::unique_ptr<Prepared> prepared, Call call, bool applies_silu)
      : prepared_(std::move(prepared)), call_(std::move(call)), applies_silu_(applies_silu) {
    if (ThreadPool* pool = ThreadPool::current()) pool->reserve_scratch(prepared_->scratch_bytes());
  }
  Status run(const void* const* inputs, void* const* outputs) override {
    call_(*prepared_, inputs, outputs, ThreadPool::current_or_serial());
    return ok_status();
  }
  bool applies_fused_silu() const override { return applies_silu_; }

 private:
  std::unique_ptr<Prepared> prepared_;
  Call call_;
  bool applies_silu_;
};

// Null when `prepared` is.
template <typename Prepared, typename Call>
std::unique_ptr<CpuKernel> wrap(std::unique_ptr<Prepared> prepared, Call call,
                                bool applies_silu = false) {
  if (!prepared) return nullptr;
  return std::make_unique<PreparedCpuKernel<Prepared, Call>>(std::move(prepared), std::move(call),
                                                             applies_silu);
}

bool reference_selected() {
  return dispatch::selected_kernel_variant() == dispatch::KernelVariant::kReference;
}

}  // namespace

std::unique_ptr<CpuKernel> make_conv2d_kernel(const KernelBuildContext& context,
                                              const reference::Conv2DShape& shape,
                                              const reference::FusedActivation& activation,
                                              bool silu) {
  if (reference_selected()) return nullptr;
  const bool has_bias = context.input(2) != nullptr;
  const float* weights = constant_input<float>(context, 1);
  return wrap(
      silu ? dispatch::prepare_conv2d_silu(shape, weights)
           : dispatch::prepare_conv2d(shape, activation, weights),
      [has_bias](const dispatch::Conv2DFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
        kernel.run(typed<float>(inputs[0]), typed<float>(inputs[1]),
                   has_bias ? typed<float>(inputs[2]) : nullptr, static_cast<float*>(outputs[0]),
                   pool);
      },
      silu);
}

std::unique_ptr<CpuKernel> make_conv2d_residual_kernel(const KernelBuildContext& context,
                                                       const reference::Conv2DShape& shape,
                                                       const reference::FusedActivation& activation,
                                                       const dispatch::ResidualAddition& addition) {
  if (reference_selected()) return nullptr;
  auto prepared = dispatch::prepare_conv2d(shape, activation, constant_input<float>(context, 1));
  if (!prepared || !prepared->takes_residual()) return nullptr;
  const bool has_bias = context.input(2) != nullptr;
  return wrap(std::move(prepared),
              [has_bias, addition](const dispatch::Conv2DFloat& kernel, const void* const* inputs,
                                   void* const* outputs, ThreadPool& pool) {
                dispatch::ResidualAddition run_addition = addition;
                run_addition.residual = typed<float>(inputs[3]);
                kernel.run_with_residual(typed<float>(inputs[0]), typed<float>(inputs[1]),
                                         has_bias ? typed<float>(inputs[2]) : nullptr, run_addition,
                                         static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_conv_transpose2d_kernel(
    const KernelBuildContext& context, const reference::Conv2DShape& shape,
    const reference::FusedActivation& activation) {
  if (reference_selected()) return nullptr;
  auto prepared =
      dispatch::prepare_conv_transpose2d(shape, activation, constant_input<float>(context, 1));
  if (!prepared) return nullptr;
  const bool has_bias = context.input(2) != nullptr;
  return wrap(std::move(prepared), [has_bias](const dispatch::Conv2DFloat& kernel,
                                              const void* const* inputs, void* const* outputs,
                                              ThreadPool& pool) {
    kernel.run(typed<float>(inputs[0]), nullptr, has_bias ? typed<float>(inputs[2]) : nullptr,
               static_cast<float*>(outputs[0]), pool);
  });
}

std::unique_ptr<CpuKernel> make_conv2d_int8_kernel(
    const KernelBuildContext& context, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization) {
  if (reference_selected()) return nullptr;
  const bool has_bias = context.input(2) != nullptr;
  return wrap(
      dispatch::prepare_conv2d_int8(shape, requantization, constant_input<int8_t>(context, 1)),
      [has_bias](const dispatch::Conv2DInt8& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
        kernel.run(typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]),
                   has_bias ? typed<int32_t>(inputs[2]) : nullptr, static_cast<int8_t*>(outputs[0]),
                   pool);
      });
}

std::unique_ptr<CpuKernel> make_gemm_kernel(const KernelBuildContext& context,
                                            const reference::GemmParams& params,
                                            const reference::FusedActivation& activation) {
  if (reference_selected()) return nullptr;
  const bool has_c = context.input(2) != nullptr;
  return wrap(dispatch::prepare_gemm(params, activation, constant_input<float>(context, 1)),
              [has_c](const dispatch::GemmFloat& kernel, const void* const* inputs,
                      void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), typed<float>(inputs[1]),
                           has_c ? typed<float>(inputs[2]) : nullptr,
                           static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_gemm_int8_kernel(
    const KernelBuildContext& context, const reference::GemmParams& params,
    const reference::Int8Requantization& requantization) {
  if (reference_selected()) return nullptr;
  const bool has_c = context.input(2) != nullptr;
  return wrap(
      dispatch::prepare_gemm_int8(params, requantization, constant_input<int8_t>(context, 1)),
      [has_c](const dispatch::GemmInt8& kernel, const void* const* inputs, void* const* outputs,
              ThreadPool& pool) {
        kernel.run(typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]),
                   has_c ? typed<int32_t>(inputs[2]) : nullptr, static_cast<int8_t*>(outputs[0]),
                   pool);
      });
}

std::unique_ptr<CpuKernel> make_matmul_kernel(const KernelBuildContext& context,
                                              const reference::MatMulParams& params,
                                              const reference::FusedActivation& activation) {
  if (reference_selected()) return nullptr;
  return wrap(dispatch::prepare_matmul(params, activation, constant_input<float>(context, 1)),
              [](const dispatch::MatMulFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), typed<float>(inputs[1]),
                           static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_matmul_int8_kernel(
    const KernelBuildContext& context, const reference::MatMulParams& params,
    const reference::Int8Requantization& requantization) {
  if (reference_selected()) return nullptr;
  return wrap(
      dispatch::prepare_matmul_int8(params, requantization, constant_input<int8_t>(context, 1)),
      [](const dispatch::MatMulInt8& kernel, const void* const* inputs, void* const* outputs,
         ThreadPool& pool) {
        kernel.run(typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]),
                   static_cast<int8_t*>(outputs[0]), pool);
      });
}

std::unique_ptr<CpuKernel> make_binary_kernel(const KernelBuildContext& context,
                                              kernels::reference::BinaryOperation operation) {
  auto prepared =
      dispatch::prepare_binary(operation, context.input(0)->shape, context.input(1)->shape);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::BinaryFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), typed<float>(inputs[1]),
                           static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_binary_activation_kernel(
    const KernelBuildContext& context, kernels::reference::BinaryOperation operation,
    const kernels::reference::UnaryParams& activation) {
  auto prepared = dispatch::prepare_binary_activation(operation, context.input(0)->shape,
                                                      context.input(1)->shape, activation);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::BinaryFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), typed<float>(inputs[1]),
                           static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_binary_int8_kernel(const KernelBuildContext& context,
                                                   kernels::reference::BinaryOperation operation,
                                                   const std::vector<int8_t>& output_table) {
  auto per_tensor_int8 = [](const graph::Tensor* tensor) {
    return tensor && tensor->data_type == DataType::kInt8 && tensor->quantization.is_quantized() &&
           !tensor->quantization.is_per_channel();
  };
  const graph::Tensor* a = context.input(0);
  const graph::Tensor* b = context.input(1);
  const graph::Tensor* output = context.outputs[0];
  if (!per_tensor_int8(a) || !per_tensor_int8(b) || !per_tensor_int8(output)) return nullptr;
  dispatch::BinaryInt8Quantization quantization;
  quantization.a_scale = a->quantization.scales[0];
  quantization.a_zero_point = a->quantization.zero_points[0];
  quantization.b_scale = b->quantization.scales[0];
  quantization.b_zero_point = b->quantization.zero_points[0];
  quantization.output_scale = output->quantization.scales[0];
  quantization.output_zero_point = output->quantization.zero_points[0];
  quantization.output_table = output_table;
  auto prepared = dispatch::prepare_binary_int8(operation, a->shape, b->shape, quantization);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared), [](const dispatch::BinaryInt8& kernel, const void* const* inputs,
                                      void* const* outputs, ThreadPool& pool) {
    kernel.run(typed<int8_t>(inputs[0]), typed<int8_t>(inputs[1]), static_cast<int8_t*>(outputs[0]),
               pool);
  });
}

std::unique_ptr<CpuKernel> make_max_pool2d_kernel(const kernels::reference::Pool2DShape& shape) {
  auto prepared = dispatch::prepare_max_pool2d(shape);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::Pool2DFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_max_pool2d_int8_kernel(
    const kernels::reference::Pool2DShape& shape) {
  auto prepared = dispatch::prepare_max_pool2d_int8(shape);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared), [](const dispatch::Pool2DInt8& kernel, const void* const* inputs,
                                      void* const* outputs, ThreadPool& pool) {
    kernel.run(typed<int8_t>(inputs[0]), static_cast<int8_t*>(outputs[0]), pool);
  });
}

std::unique_ptr<CpuKernel> make_average_pool2d_kernel(const kernels::reference::Pool2DShape& shape,
                                                      bool count_include_pad) {
  auto prepared = dispatch::prepare_average_pool2d(shape, count_include_pad);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::Pool2DFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_global_average_pool_kernel(int64_t planes, int64_t plane_size) {
  auto prepared = dispatch::prepare_global_average_pool(planes, plane_size);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::GlobalPoolFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_global_average_pool_int8_kernel(int64_t planes, int64_t plane_size,
                                                                const float* decoded) {
  auto prepared = dispatch::prepare_global_average_pool_int8(planes, plane_size, decoded);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::GlobalPoolInt8& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<int8_t>(inputs[0]), static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_unary_kernel(const KernelBuildContext& context,
                                             const kernels::reference::UnaryParams& params) {
  auto prepared = dispatch::prepare_unary(params, context.input(0)->elements());
  if (!prepared) return nullptr;
  // Clip bounds given as inputs are scalars read per run (they may be non-constant).
  const bool minimum_from_input = context.input(1) != nullptr;
  const bool maximum_from_input = context.input(2) != nullptr;
  return wrap(std::move(prepared), [params, minimum_from_input, maximum_from_input](
                                       const dispatch::UnaryFloat& kernel,
                                       const void* const* inputs, void* const* outputs,
                                       ThreadPool& pool) {
    const float minimum = minimum_from_input ? *typed<float>(inputs[1]) : params.minimum;
    const float maximum = maximum_from_input ? *typed<float>(inputs[2]) : params.maximum;
    kernel.run(typed<float>(inputs[0]), static_cast<float*>(outputs[0]), minimum, maximum, pool);
  });
}

std::unique_ptr<CpuKernel> make_softmax_kernel(const reference::ChannelLayout& layout) {
  auto prepared = dispatch::prepare_softmax(layout);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::SoftmaxFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_lookup_int8_kernel(const int8_t* table, int64_t count) {
  auto prepared = dispatch::prepare_lookup_int8(table, count);
  if (!prepared) return nullptr;
  return wrap(std::move(prepared), [](const dispatch::LookupInt8& kernel, const void* const* inputs,
                                      void* const* outputs, ThreadPool& pool) {
    kernel.run(typed<int8_t>(inputs[0]), static_cast<int8_t*>(outputs[0]), pool);
  });
}

// A float32 Resize on its input and output; null when there is none.
std::unique_ptr<CpuKernel> wrap_resize(std::unique_ptr<dispatch::ResizeFloat> prepared) {
  if (!prepared) return nullptr;
  return wrap(std::move(prepared),
              [](const dispatch::ResizeFloat& kernel, const void* const* inputs,
                 void* const* outputs, ThreadPool& pool) {
                kernel.run(typed<float>(inputs[0]), static_cast<float*>(outputs[0]), pool);
              });
}

std::unique_ptr<CpuKernel> make_resize_bilinear_kernel(const reference::ResizeParams& params) {
  return wrap_resize(dispatch::prepare_resize_bilinear(params));
}

std::unique_ptr<CpuKernel> make_resize_nearest_kernel(const reference::ResizeParams& params) {
  return wrap_resize(dispatch::prepare_resize_nearest(params));
}

}  // namespace orknn::devices::cpu::optimized
