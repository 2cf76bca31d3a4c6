// The GPU device: runs float32/float16 nodes with the OpenCL kernels of kernels/gpu.
//
// Each compiled segment owns one in-order command queue and one OpenCL buffer per tensor it
// touches, allocated at compile time (once per context). Constants are uploaded then too. A run
// writes the segment's inputs from their host addresses, enqueues every node, reads back the
// tensors that leave the segment, and waits once. With a profiler, each node's kernels carry
// events whose device timestamps give the node's GPU time.
#include <cstring>
#include <map>

#include "core/logging.h"
#include "devices/device.h"
#include "devices/gpu/gpu_node_launches.h"
#include "devices/gpu/opencl_device.h"

namespace orknn::devices {
namespace {

using gpu::OpenClDevice;
using kernels::gpu::KernelArgument;
using kernels::gpu::NodeLaunches;

class GpuExecutable final : public Executable {
 public:
  explicit GpuExecutable(std::shared_ptr<OpenClDevice> device) : device_(std::move(device)) {}

  ~GpuExecutable() override {
    const gpu::OpenClLibrary& cl = device_->cl();
    for (Step& step : steps_) {
      for (Command& command : step.commands) {
        if (command.kernel) cl.ReleaseKernel(command.kernel);
      }
    }
    for (auto& entry : tensor_buffers_) cl.ReleaseMemObject(entry.second);
    for (cl_mem buffer : parameter_buffers_) cl.ReleaseMemObject(buffer);
    if (queue_) cl.ReleaseCommandQueue(queue_);
  }

  Status initialize(const graph::Graph& graph, const std::vector<size_t>& node_indices,
                    const std::vector<graph::Shape>& shapes);

  Status bind(const std::vector<void*>& tensor_addresses) override {
    for (Transfer& transfer : uploads_) transfer.host = tensor_addresses[transfer.tensor];
    for (Transfer& transfer : downloads_) transfer.host = tensor_addresses[transfer.tensor];
    return ok_status();
  }

  Status run(exec::Profiler* profiler) override;

 private:
  struct Command {
    cl_kernel kernel = nullptr;  // null: a buffer copy
    cl_uint dimensions = 1;
    size_t global[3] = {1, 1, 1};
    size_t local[3] = {1, 1, 1};
    cl_mem copy_source = nullptr, copy_destination = nullptr;
    size_t copy_bytes = 0;
  };
  struct Step {
    size_t node_index = 0;
    std::vector<Command> commands;
  };
  struct Transfer {
    int32_t tensor = -1;
    cl_mem buffer = nullptr;
    size_t bytes = 0;
    void* host = nullptr;
  };

  Result<cl_mem> create_buffer(size_t bytes, const void* initial_data);
  Status add_step(const graph::Graph& graph, size_t node_index, const NodeLaunches& launches,
                  cl_program program);

  std::shared_ptr<OpenClDevice> device_;
  cl_command_queue queue_ = nullptr;
  std::map<int32_t, cl_mem> tensor_buffers_;
  std::map<int32_t, size_t> tensor_bytes_;
  std::vector<cl_mem> parameter_buffers_;
  std::vector<Step> steps_;
  std::vector<Transfer> uploads_, downloads_;
  std::vector<cl_event> events_;  // per command, reused by every profiled run
};

Result<cl_mem> GpuExecutable::create_buffer(size_t bytes, const void* initial_data) {
  cl_int error = CL_SUCCESS;
  // OpenCL rejects empty buffers; an empty tensor's buffer is never read or written.
  const size_t size = bytes == 0 ? 16 : bytes;
  cl_mem buffer = device_->cl().CreateBuffer(
      device_->context(),
      CL_MEM_READ_WRITE | (initial_data && bytes > 0 ? CL_MEM_COPY_HOST_PTR : 0), size,
      bytes > 0 ? const_cast<void*>(initial_data) : nullptr, &error);
  if (error != CL_SUCCESS) {
    return make_error(StatusCode::kOutOfMemory, "GPU: cannot allocate a buffer of ", size,
                      " bytes: ", gpu::opencl_error_name(error));
  }
  return buffer;
}

Status GpuExecutable::add_step(const graph::Graph& graph, size_t node_index,
                               const NodeLaunches& launches, cl_program program) {
  const gpu::OpenClLibrary& cl = device_->cl();
  const graph::Node& node = graph.nodes[node_index];
  std::vector<cl_mem> parameters;
  for (const std::vector<uint8_t>& bytes : launches.parameter_buffers) {
    ORKNN_ASSIGN_OR_RETURN(cl_mem buffer, create_buffer(bytes.size(), bytes.data()));
    parameter_buffers_.push_back(buffer);
    parameters.push_back(buffer);
  }
  Step step;
  step.node_index = node_index;
  for (const kernels::gpu::Command& description : launches.commands) {
    Command command;
    if (description.is_copy) {
      command.copy_source = tensor_buffers_.at(description.copy_source);
      command.copy_destination = tensor_buffers_.at(description.copy_destination);
      command.copy_bytes = tensor_bytes_.at(description.copy_destination);
      step.commands.push_back(command);
      continue;
    }
    const kernels::gpu::KernelLaunch& launch = description.launch;
    cl_int error = CL_SUCCESS;
    command.kernel = cl.CreateKernel(program, launch.kernel_name.c_str(), &error);
    if (error != CL_SUCCESS) {
      return internal_failure(node.describe(), ": GPU kernel '", launch.kernel_name,
                              "' missing from the program: ", gpu::opencl_error_name(error));
    }
    step.commands.push_back(command);  // owns the kernel from here on
    for (size_t position = 0; position < launch.arguments.size() && error == CL_SUCCESS;
         ++position) {
      const KernelArgument& argument = launch.arguments[position];
      const cl_uint index = static_cast<cl_uint>(position);
      switch (argument.kind) {
        case KernelArgument::Kind::kTensor:
          error = cl.SetKernelArg(command.kernel, index, sizeof(cl_mem),
                                  &tensor_buffers_.at(argument.index));
          break;
        case KernelArgument::Kind::kParameterBuffer:
          error = cl.SetKernelArg(command.kernel, index, sizeof(cl_mem),
                                  &parameters[static_cast<size_t>(argument.index)]);
          break;
        case KernelArgument::Kind::kInt:
          error = cl.SetKernelArg(command.kernel, index, sizeof(cl_int), &argument.int_value);
          break;
        case KernelArgument::Kind::kFloat:
          error = cl.SetKernelArg(command.kernel, index, sizeof(cl_float), &argument.float_value);
          break;
      }
    }
    if (error != CL_SUCCESS) {
      return internal_failure(node.describe(), ": GPU kernel '", launch.kernel_name,
                              "' arguments refused: ", gpu::opencl_error_name(error));
    }
    Command& stored = step.commands.back();
    stored.dimensions = launch.dimensions;
    for (int d = 0; d < 3; ++d) stored.global[d] = launch.global[d];
    // Every kernel bounds-checks its first axis, so it may be rounded up to whole groups.
    const size_t width = device_->work_group_width();
    stored.local[0] = width;
    stored.global[0] = (launch.global[0] + width - 1) / width * width;
  }
  steps_.push_back(std::move(step));
  return ok_status();
}

Status GpuExecutable::initialize(const graph::Graph& graph, const std::vector<size_t>& node_indices,
                                 const std::vector<graph::Shape>& shapes) {
  const gpu::OpenClLibrary& cl = device_->cl();
  cl_int error = CL_SUCCESS;
  queue_ = cl.CreateCommandQueue(device_->context(), device_->device(), CL_QUEUE_PROFILING_ENABLE,
                                 &error);
  if (error != CL_SUCCESS) {
    queue_ = nullptr;
    return make_error(StatusCode::kDeviceUnavailable,
                      "GPU: cannot create a command queue: ", gpu::opencl_error_name(error));
  }
  std::vector<bool> in_segment(graph.nodes.size(), false);
  for (size_t index : node_indices) in_segment[index] = true;
  std::vector<bool> produced_here(graph.tensors.size(), false);
  auto tensor_bytes = [&](int32_t index) {
    return static_cast<size_t>(graph::element_count(shapes[static_cast<size_t>(index)])) *
           element_size(graph.tensor(index).data_type);
  };
  // Buffers: one per tensor the segment reads or writes; constants filled now, other inputs
  // produced outside the segment uploaded by every run.
  auto ensure_buffer = [&](int32_t index, bool is_output) -> Status {
    if (tensor_buffers_.count(index)) return ok_status();
    const graph::Tensor& tensor = graph.tensor(index);
    const size_t bytes = tensor_bytes(index);
    ORKNN_ASSIGN_OR_RETURN(
        cl_mem buffer, create_buffer(bytes, tensor.is_constant() ? tensor.constant_data : nullptr));
    tensor_buffers_[index] = buffer;
    tensor_bytes_[index] = bytes;
    if (!is_output && !tensor.is_constant() && bytes > 0)
      uploads_.push_back({index, buffer, bytes, nullptr});
    return ok_status();
  };
  std::vector<NodeLaunches> descriptions;
  for (size_t index : node_indices) {
    const graph::Node& node = graph.nodes[index];
    ORKNN_ASSIGN_OR_RETURN(NodeLaunches launches, gpu::describe_node(graph, node, &shapes));
    for (int32_t input : launches.device_inputs) {
      if (!produced_here[static_cast<size_t>(input)]) {
        ORKNN_RETURN_IF_ERROR(ensure_buffer(input, false));
      }
    }
    for (int32_t output : node.outputs) {
      ORKNN_RETURN_IF_ERROR(ensure_buffer(output, true));
      produced_here[static_cast<size_t>(output)] = true;
    }
    descriptions.push_back(std::move(launches));
  }
  // Tensors leaving the segment: graph outputs and inputs of nodes elsewhere.
  std::vector<bool> leaves(graph.tensors.size(), false);
  for (int32_t output : graph.outputs) leaves[static_cast<size_t>(output)] = true;
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    if (in_segment[index]) continue;
    for (int32_t input : graph.nodes[index].inputs) {
      if (input >= 0) leaves[static_cast<size_t>(input)] = true;
    }
  }
  for (const auto& entry : tensor_buffers_) {
    const size_t tensor = static_cast<size_t>(entry.first);
    if (produced_here[tensor] && leaves[tensor] && tensor_bytes_[entry.first] > 0) {
      downloads_.push_back({entry.first, entry.second, tensor_bytes_[entry.first], nullptr});
    }
  }
  cl_program programs[2] = {nullptr, nullptr};
  for (size_t i = 0; i < node_indices.size(); ++i) {
    const bool half =
        graph.tensor(graph.nodes[node_indices[i]].outputs[0]).data_type == DataType::kFloat16;
    cl_program& program = programs[half ? 1 : 0];
    if (!program) {
      ORKNN_ASSIGN_OR_RETURN(program, device_->program(half));
    }
    ORKNN_RETURN_IF_ERROR(add_step(graph, node_indices[i], descriptions[i], program));
  }
  size_t command_count = 0;
  for (const Step& step : steps_) command_count += step.commands.size();
  events_.assign(command_count, nullptr);
  return ok_status();
}

Status GpuExecutable::run(exec::Profiler* profiler) {
  const gpu::OpenClLibrary& cl = device_->cl();
  cl_int error = CL_SUCCESS;
  for (const Transfer& upload : uploads_) {
    error = cl.EnqueueWriteBuffer(queue_, upload.buffer, CL_FALSE, 0, upload.bytes, upload.host, 0,
                                  nullptr, nullptr);
    if (error != CL_SUCCESS) break;
  }
  size_t event_index = 0;
  for (Step& step : steps_) {
    for (Command& command : step.commands) {
      cl_event* event = profiler ? &events_[event_index] : nullptr;
      ++event_index;
      if (error != CL_SUCCESS) break;
      if (!command.kernel) {
        if (command.copy_bytes == 0) continue;
        error = cl.EnqueueCopyBuffer(queue_, command.copy_source, command.copy_destination, 0, 0,
                                     command.copy_bytes, 0, nullptr, event);
      } else if (command.global[0] * command.global[1] * command.global[2] > 0) {
        error = cl.EnqueueNDRangeKernel(queue_, command.kernel, command.dimensions, nullptr,
                                        command.global, command.local, 0, nullptr, event);
      }
    }
  }
  for (const Transfer& download : downloads_) {
    if (error != CL_SUCCESS) break;
    error = cl.EnqueueReadBuffer(queue_, download.buffer, CL_FALSE, 0, download.bytes,
                                 download.host, 0, nullptr, nullptr);
  }
  // Wait even after a failed enqueue: host memory named by queued transfers must stay valid.
  const cl_int finished = cl.Finish(queue_);
  if (error == CL_SUCCESS) error = finished;
  if (profiler) {
    event_index = 0;
    for (Step& step : steps_) {
      cl_ulong first_start = 0, last_end = 0;
      for (size_t c = 0; c < step.commands.size(); ++c, ++event_index) {
        cl_event& event = events_[event_index];
        if (!event) continue;
        cl_ulong start = 0, end = 0;
        cl.GetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
        cl.GetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
        if (first_start == 0 || start < first_start) first_start = start;
        if (end > last_end) last_end = end;
        cl.ReleaseEvent(event);
        event = nullptr;
      }
      if (last_end > first_start) {
        profiler->record(step.node_index, std::chrono::nanoseconds(last_end - first_start));
      }
    }
  }
  if (error != CL_SUCCESS) {
    return make_error(StatusCode::kFailed, "GPU: run failed: ", gpu::opencl_error_name(error));
  }
  return ok_status();
}

// Cheap to create: OpenCL is looked for on the first question a context asks the GPU, so
// contexts that never ask for it never load the OpenCL implementation.
class GpuDevice final : public Device {
 public:
  const char* name() const override { return "GPU"; }
  bool on_request_only() const override { return true; }

  bool supports(const graph::Graph& graph, const graph::Node& node) const override {
    if (!OpenClDevice::shared().ok()) return false;
    Result<NodeLaunches> described = gpu::describe_node(graph, node, nullptr);
    if (!described.ok()) log_debug("GPU: ", described.status().message());
    return described.ok();
  }

  Result<std::unique_ptr<Executable>> compile(const graph::Graph& graph,
                                              const std::vector<size_t>& node_indices,
                                              const std::vector<graph::Shape>& shapes) override {
    ORKNN_ASSIGN_OR_RETURN(std::shared_ptr<OpenClDevice> device, OpenClDevice::shared());
    auto executable = std::make_unique<GpuExecutable>(std::move(device));
    ORKNN_RETURN_IF_ERROR(executable->initialize(graph, node_indices, shapes));
    return std::unique_ptr<Executable>(std::move(executable));
  }
};

}  // namespace

std::shared_ptr<Device> make_gpu_device() {
  return std::make_shared<GpuDevice>();
}

std::string gpu_unavailable_reason() {
  Result<std::shared_ptr<OpenClDevice>> device = gpu::OpenClDevice::shared();
  return device.ok() ? std::string() : device.status().message();
}

}  // namespace orknn::devices
