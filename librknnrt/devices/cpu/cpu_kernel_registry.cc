#include "devices/cpu/cpu_kernel_registry.h"

#include "graph/tensor_conversion.h"

namespace orknn::devices::cpu {

using graph::Tensor;

const std::vector<CpuOpDefinition>& all_cpu_ops() {
  static const std::vector<CpuOpDefinition> ops = [] {
    std::vector<CpuOpDefinition> all;
    for (auto family :
         {convolution_cpu_ops, pooling_cpu_ops, elementwise_cpu_ops, normalization_cpu_ops,
          reduction_cpu_ops, data_movement_cpu_ops, resize_cpu_ops}) {
      std::vector<CpuOpDefinition> ops_of_family = family();
      all.insert(all.end(), ops_of_family.begin(), ops_of_family.end());
    }
    return all;
  }();
  return ops;
}

const CpuOpDefinition* find_cpu_op(std::string_view op_type) {
  for (const CpuOpDefinition& op : all_cpu_ops()) {
    if (op_type == op.op_type) return &op;
  }
  return nullptr;
}

namespace {

// The node's tensors with their current shapes; owned here because the build context points
// at them while the kernel is made.
struct NodeTensors {
  std::vector<Tensor> inputs;  // empty name and data for omitted inputs
  std::vector<bool> present;
  std::vector<Tensor> outputs;
};

NodeTensors collect_tensors(const graph::Graph& graph, const graph::Node& node,
                            const std::vector<graph::Shape>& shapes) {
  NodeTensors tensors;
  for (int32_t index : node.inputs) {
    tensors.present.push_back(index >= 0);
    if (index < 0) {
      tensors.inputs.emplace_back();
      continue;
    }
    Tensor tensor = graph.tensor(index);
    tensor.shape = shapes[static_cast<size_t>(index)];
    tensors.inputs.push_back(std::move(tensor));
  }
  for (int32_t index : node.outputs) {
    Tensor tensor = graph.tensor(index);
    tensor.shape = shapes[static_cast<size_t>(index)];
    tensors.outputs.push_back(std::move(tensor));
  }
  return tensors;
}

KernelBuildContext make_context(const graph::Node& node, const NodeTensors& tensors) {
  KernelBuildContext context{node, {}, {}};
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    context.inputs.push_back(tensors.present[i] ? &tensors.inputs[i] : nullptr);
  }
  for (const Tensor& tensor : tensors.outputs) context.outputs.push_back(&tensor);
  return context;
}

// Runs a float32 kernel on tensors stored as float16 or quantized integers: activations are
// decoded into scratch before the run and encoded after it; constants were decoded at build.
class FloatDomainKernel final : public CpuKernel {
 public:
  struct Port {
    Tensor stored;              // the tensor as the graph stores it
    bool converts = false;      // decode/encode needed
    std::vector<float> buffer;  // scratch for activations, decoded data for constants
    bool is_constant = false;
  };

  FloatDomainKernel(std::vector<Port> inputs, std::vector<Port> outputs)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
    input_pointers_.resize(inputs_.size());
    output_pointers_.resize(outputs_.size());
  }

  void set_inner(std::unique_ptr<CpuKernel> inner) { inner_ = std::move(inner); }

  Status run(const void* const* inputs, void* const* outputs) override {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Port& port = inputs_[i];
      if (!port.converts || inputs[i] == nullptr) {
        input_pointers_[i] = inputs[i];
      } else if (port.is_constant) {
        input_pointers_[i] = port.buffer.data();
      } else {
        graph::decode_to_float(port.stored, inputs[i], port.buffer.data());
        input_pointers_[i] = port.buffer.data();
      }
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      output_pointers_[i] = outputs_[i].converts ? outputs_[i].buffer.data() : outputs[i];
    }
    ORKNN_RETURN_IF_ERROR(inner_->run(input_pointers_.data(), output_pointers_.data()));
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (outputs_[i].converts) {
        graph::encode_from_float(outputs_[i].stored, outputs_[i].buffer.data(), outputs[i]);
      }
    }
    return ok_status();
  }

 private:
  std::vector<Port> inputs_;
  std::vector<Port> outputs_;
  std::vector<const void*> input_pointers_;
  std::vector<void*> output_pointers_;
  std::unique_ptr<CpuKernel> inner_;
};

Result<std::unique_ptr<CpuKernel>> build_float_domain(const CpuOpDefinition& op,
                                                      const graph::Node& node,
                                                      const NodeTensors& tensors) {
  // Float-domain kernels read their data operand (input 0) as float32 after decoding; an
  // integer tensor without quantization (plain UINT8 or INT32 arithmetic) has no real values
  // to decode, and reading it as float would run past its buffer.
  if (!tensors.inputs.empty() && tensors.present[0] && !graph::is_real_valued(tensors.inputs[0])) {
    return unimplemented(node.describe(), ": input '", tensors.inputs[0].name, "' is ",
                         data_type_name(tensors.inputs[0].data_type),
                         " without quantization; this op computes on real values only");
  }
  bool any_conversion = false;
  for (const Tensor& tensor : tensors.inputs) any_conversion |= graph::is_encoded_real(tensor);
  for (const Tensor& tensor : tensors.outputs) any_conversion |= graph::is_encoded_real(tensor);
  if (!any_conversion) return op.make_kernel(make_context(node, tensors));

  auto make_port = [](const Tensor& tensor) {
    FloatDomainKernel::Port port;
    port.stored = tensor;
    port.converts = graph::is_encoded_real(tensor);
    port.is_constant = tensor.is_constant();
    if (port.converts) port.buffer.resize(static_cast<size_t>(tensor.elements()));
    if (port.converts && port.is_constant) {
      graph::decode_to_float(tensor, tensor.constant_data, port.buffer.data());
    }
    return port;
  };
  std::vector<FloatDomainKernel::Port> input_ports;
  std::vector<FloatDomainKernel::Port> output_ports;
  NodeTensors views = tensors;
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    input_ports.push_back(make_port(tensors.inputs[i]));
    if (!input_ports.back().converts) continue;
    views.inputs[i] = graph::float_view(tensors.inputs[i]);
    if (input_ports.back().is_constant) {
      views.inputs[i].constant = true;
      views.inputs[i].constant_data =
          reinterpret_cast<const uint8_t*>(input_ports.back().buffer.data());
      views.inputs[i].constant_size = input_ports.back().buffer.size() * sizeof(float);
    }
  }
  for (size_t i = 0; i < tensors.outputs.size(); ++i) {
    output_ports.push_back(make_port(tensors.outputs[i]));
    if (output_ports.back().converts) views.outputs[i] = graph::float_view(tensors.outputs[i]);
  }
  // The ports own the decoded constants that `views` points at; they move into the kernel
  // below without reallocating (moving a vector keeps its buffer).
  auto kernel =
      std::make_unique<FloatDomainKernel>(std::move(input_ports), std::move(output_ports));
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<CpuKernel> inner,
                         op.make_kernel(make_context(node, views)));
  kernel->set_inner(std::move(inner));
  return std::unique_ptr<CpuKernel>(std::move(kernel));
}

// All real-valued tensors share one dtype and one per-tensor quantization.
bool real_tensors_agree(const NodeTensors& tensors) {
  const Tensor* first = nullptr;
  auto agrees = [&](const Tensor& tensor) {
    if (!graph::is_real_valued(tensor)) return true;
    // Per-channel scales are tied to an axis that Transpose, Reshape or Slice may move, so
    // such tensors always take the float domain.
    if (tensor.quantization.is_per_channel()) return false;
    if (!first) {
      first = &tensor;
      return true;
    }
    return tensor.data_type == first->data_type && tensor.quantization == first->quantization;
  };
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    if (tensors.present[i] && !agrees(tensors.inputs[i])) return false;
  }
  for (const Tensor& tensor : tensors.outputs) {
    if (!agrees(tensor)) return false;
  }
  return true;
}

// Activations (non-constant real tensors) are all per-tensor int8.
bool activations_are_int8(const NodeTensors& tensors) {
  auto is_int8 = [](const Tensor& tensor) {
    return tensor.data_type == DataType::kInt8 && tensor.quantization.is_quantized() &&
           !tensor.quantization.is_per_channel();
  };
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    const Tensor& tensor = tensors.inputs[i];
    if (tensors.present[i] && !tensor.is_constant() && !is_int8(tensor)) return false;
  }
  for (const Tensor& tensor : tensors.outputs) {
    if (!is_int8(tensor)) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<CpuKernel>> build_fused_activation_kernel(
    const graph::Graph& graph, const graph::Node& node, const graph::Node& activation,
    const std::vector<graph::Shape>& shapes) {
  const NodeTensors tensors = collect_tensors(graph, node, shapes);
  const NodeTensors activation_tensors = collect_tensors(graph, activation, shapes);
  return make_binary_activation_kernel(make_context(node, tensors),
                                       make_context(activation, activation_tensors));
}

Result<std::unique_ptr<CpuKernel>> build_residual_convolution_kernel(
    const graph::Graph& graph, const graph::Node& convolution, const graph::Node& add,
    const graph::Node* activation, const std::vector<graph::Shape>& shapes) {
  const NodeTensors convolution_tensors = collect_tensors(graph, convolution, shapes);
  const NodeTensors add_tensors = collect_tensors(graph, add, shapes);
  if (!activation) {
    return make_residual_convolution_kernel(make_context(convolution, convolution_tensors),
                                            make_context(add, add_tensors), nullptr);
  }
  const NodeTensors activation_tensors = collect_tensors(graph, *activation, shapes);
  const KernelBuildContext activation_context = make_context(*activation, activation_tensors);
  return make_residual_convolution_kernel(make_context(convolution, convolution_tensors),
                                          make_context(add, add_tensors), &activation_context);
}

Result<std::unique_ptr<CpuKernel>> build_cpu_kernel(const graph::Graph& graph,
                                                    const graph::Node& node,
                                                    const std::vector<graph::Shape>& shapes) {
  const CpuOpDefinition* op = find_cpu_op(node.op_type);
  if (!op) return unimplemented(node.describe(), ": no CPU kernel for op type ", node.op_type);
  const NodeTensors tensors = collect_tensors(graph, node, shapes);

  if (op->make_int8_kernel && activations_are_int8(tensors)) {
    auto kernel = op->make_int8_kernel(make_context(node, tensors));
    if (kernel.ok() || kernel.status().code() != StatusCode::kUnimplemented) return kernel;
  }
  if (op->make_integer_kernel && !tensors.inputs.empty() && tensors.present[0] &&
      !graph::is_real_valued(tensors.inputs[0])) {
    return op->make_integer_kernel(make_context(node, tensors));
  }
  switch (op->dtype_handling) {
    case DtypeHandling::kNative:
      return op->make_kernel(make_context(node, tensors));
    case DtypeHandling::kByteMove:
      if (real_tensors_agree(tensors)) return op->make_kernel(make_context(node, tensors));
      return build_float_domain(*op, node, tensors);
    case DtypeHandling::kFloatDomain:
      return build_float_domain(*op, node, tensors);
  }
  return internal_failure("unreachable dtype handling");
}

}  // namespace orknn::devices::cpu
