// The CPU device: runs every node with the kernels of devices/cpu/ops (reference kernels for
// now; optimized ones will be chosen behind the same registry).
#include "devices/cpu/cpu_kernel_registry.h"
#include "devices/device.h"
#include "graph/fusion_chains.h"

namespace orknn::devices {
namespace {

class CpuExecutable final : public Executable {
 public:
  struct Step {
    size_t node_index;
    std::unique_ptr<cpu::CpuKernel> kernel;
    std::vector<int32_t> inputs;  // tensor indices (-1 omitted)
    std::vector<int32_t> outputs;
    std::vector<const void*> input_addresses;
    std::vector<void*> output_addresses;
  };

  explicit CpuExecutable(std::vector<Step> steps) : steps_(std::move(steps)) {}

  Status bind(const std::vector<void*>& tensor_addresses) override {
    for (Step& step : steps_) {
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        step.input_addresses[i] = step.inputs[i] < 0 ? nullptr : tensor_addresses[step.inputs[i]];
      }
      for (size_t i = 0; i < step.outputs.size(); ++i) {
        step.output_addresses[i] = tensor_addresses[step.outputs[i]];
      }
    }
    return ok_status();
  }

  Status run(exec::Profiler* profiler) override {
    for (Step& step : steps_) {
      const auto start = exec::Profiler::Clock::now();
      Status status = step.kernel->run(step.input_addresses.data(), step.output_addresses.data());
      if (!status.ok()) return status;
      if (profiler) profiler->record(step.node_index, exec::Profiler::Clock::now() - start);
    }
    return ok_status();
  }

 private:
  std::vector<Step> steps_;
};

class CpuDevice final : public Device {
 public:
  const char* name() const override { return "CPU"; }

  bool supports(const graph::Graph&, const graph::Node& node) const override {
    return cpu::find_cpu_op(node.op_type) != nullptr;
  }

  Result<std::unique_ptr<Executable>> compile(const graph::Graph& graph,
                                              const std::vector<size_t>& node_indices,
                                              const std::vector<graph::Shape>& shapes) override {
    std::vector<CpuExecutable::Step> steps;
    steps.reserve(node_indices.size());
    const std::vector<bool> runs = graph::binary_activation_runs(graph);
    for (size_t position = 0; position < node_indices.size(); ++position) {
      const size_t index = node_indices[position];
      const graph::Node& node = graph.nodes[index];
      CpuExecutable::Step step;
      step.node_index = index;
      step.inputs = node.inputs;
      step.outputs = node.outputs;
      // A binary node and the activation after it that alone reads its result run as one
      // step (graph/fusion_chains.h, whose rule the memory plan follows); the activation's
      // time is then profiled under the binary node.
      if (runs[index] && position + 1 < node_indices.size() &&
          node_indices[position + 1] == index + 1) {
        const graph::Node& activation = graph.nodes[index + 1];
        auto fused = cpu::build_fused_activation_kernel(graph, node, activation, shapes);
        if (!fused.ok() && fused.status().code() != StatusCode::kUnimplemented) {
          return fused.status();
        }
        if (fused.ok()) {
          step.kernel = std::move(fused).value();
          step.outputs = activation.outputs;
          ++position;
        }
      }
      if (!step.kernel) {
        ORKNN_ASSIGN_OR_RETURN(step.kernel, cpu::build_cpu_kernel(graph, node, shapes));
      }
      step.input_addresses.resize(step.inputs.size());
      step.output_addresses.resize(step.outputs.size());
      steps.push_back(std::move(step));
    }
    return std::unique_ptr<Executable>(std::make_unique<CpuExecutable>(std::move(steps)));
  }
};

}  // namespace

std::shared_ptr<Device> make_cpu_device() {
  return std::make_shared<CpuDevice>();
}

}  // namespace orknn::devices
