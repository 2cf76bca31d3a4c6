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

// A Conv at `first` with its residual Add (and, for a run of 3, the activation after it) as one
// step: the longest of the run the kernels cover, 3 then 2. Returns how many nodes after the
// Conv the step took (0: none, `step` unchanged).
Result<size_t> fuse_residual_convolution(const graph::Graph& graph, size_t first, size_t run,
                                         const std::vector<graph::Shape>& shapes,
                                         CpuExecutable::Step* step) {
  const graph::Node& convolution = graph.nodes[first];
  const graph::Node& add = graph.nodes[first + 1];
  for (size_t length = run; length >= 2; --length) {
    const graph::Node* activation = length == 3 ? &graph.nodes[first + 2] : nullptr;
    auto fused =
        cpu::build_residual_convolution_kernel(graph, convolution, add, activation, shapes);
    if (!fused.ok() && fused.status().code() != StatusCode::kUnimplemented) {
      return fused.status();
    }
    if (!fused.ok()) continue;
    // Inputs X, W, B (-1 when absent), then the Add's other operand.
    const int32_t result = convolution.outputs[0];
    step->inputs = convolution.inputs;
    step->inputs.resize(3, -1);
    step->inputs.push_back(add.inputs[0] == result ? add.inputs[1] : add.inputs[0]);
    step->outputs = graph.nodes[first + length - 1].outputs;
    step->kernel = std::move(fused).value();
    return length - 1;
  }
  return size_t{0};
}

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
    const std::vector<graph::FusionRun> runs = graph::fusion_runs(graph);
    // The Add of a Conv + Add + activation run whose convolution kernel took no residual (a
    // Winograd layer): it still runs with its activation as one step.
    size_t unfused_residual_add = SIZE_MAX;
    for (size_t position = 0; position < node_indices.size(); ++position) {
      const size_t index = node_indices[position];
      const graph::Node& node = graph.nodes[index];
      CpuExecutable::Step step;
      step.node_index = index;
      step.inputs = node.inputs;
      step.outputs = node.outputs;
      // Runs of nodes fused into one kernel (graph/fusion_chains.h, whose rules the memory
      // plan follows): a Conv with its residual Add and the activation after it, or a binary
      // node and its activation. The run is profiled under its first node.
      const graph::FusionRun& run = runs[index];
      const bool run_here = position + run.length <= node_indices.size() && run.length >= 2 &&
                            node_indices[position + run.length - 1] == index + run.length - 1;
      if (run_here && run.kind == graph::FusionRun::Kind::kResidualConvolution) {
        ORKNN_ASSIGN_OR_RETURN(size_t fused,
                               fuse_residual_convolution(graph, index, run.length, shapes, &step));
        position += fused;
        if (fused == 0 && run.length == 3) unfused_residual_add = index + 1;
      }
      const bool binary_activation_here =
          (run_here && run.kind == graph::FusionRun::Kind::kBinaryActivation) ||
          (index == unfused_residual_add && position + 1 < node_indices.size() &&
           node_indices[position + 1] == index + 1);
      if (binary_activation_here) {
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
