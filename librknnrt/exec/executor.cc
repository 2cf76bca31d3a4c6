#include "exec/executor.h"

#include "core/logging.h"
#include "exec/memory_planner.h"
#include "graph/shape_inference.h"

namespace orknn::exec {

Result<std::unique_ptr<Executor>> Executor::create(
    std::shared_ptr<const graph::Graph> graph, const std::vector<graph::Shape>& input_shapes,
    const std::vector<std::shared_ptr<devices::Device>>& devices,
    const PlacementOptions& placement) {
  std::unique_ptr<Executor> executor(new Executor());
  executor->graph_ = std::move(graph);
  ORKNN_RETURN_IF_ERROR(graph::infer_shapes(*executor->graph_, input_shapes, &executor->shapes_));
  ORKNN_RETURN_IF_ERROR(executor->partition(devices, placement));
  ORKNN_RETURN_IF_ERROR(executor->allocate_and_bind());
  return executor;
}

// Places every node (placement.h) and compiles maximal runs of consecutive nodes on the same
// device as one segment.
Status Executor::partition(const std::vector<std::shared_ptr<devices::Device>>& devices,
                           const PlacementOptions& placement) {
  const graph::Graph& graph = *graph_;
  ORKNN_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<devices::Device>> placed,
                         place_nodes(graph, shapes_, devices, placement));
  node_targets_.assign(graph.nodes.size(), "");
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const std::shared_ptr<devices::Device>& chosen = placed[index];
    node_targets_[index] = chosen->name();
    if (segments_.empty() || segments_.back().device != chosen) {
      segments_.push_back(Segment{chosen, {}, nullptr});
    }
    segments_.back().nodes.push_back(index);
  }
  for (Segment& segment : segments_) {
    Result<std::unique_ptr<devices::Executable>> compiled =
        segment.device->compile(graph, segment.nodes, shapes_);
    // A device used on request (the GPU) that cannot prepare its nodes (a driver refusing a
    // kernel, out of device memory) hands them to the last device, which runs every op.
    if (!compiled.ok() && segment.device->on_request_only() && !devices.empty()) {
      log_warning(segment.device->name(), ": cannot prepare ", segment.nodes.size(),
                  " nodes, they run on the ", devices.back()->name(), ": ",
                  compiled.status().message());
      segment.device = devices.back();
      for (size_t index : segment.nodes) node_targets_[index] = segment.device->name();
      compiled = segment.device->compile(graph, segment.nodes, shapes_);
    }
    ORKNN_ASSIGN_OR_RETURN(segment.executable, std::move(compiled));
  }
  return ok_status();
}

Status Executor::allocate_and_bind() {
  const graph::Graph& graph = *graph_;
  const MemoryPlan plan = plan_memory(graph, shapes_);
  arena_ = AlignedBuffer(plan.arena_bytes);
  if (arena_.allocation_failed(plan.arena_bytes)) {
    return make_error(StatusCode::kOutOfMemory, "cannot allocate ", plan.arena_bytes,
                      " bytes of internal memory");
  }
  auto tensor_bytes = [&](int32_t index) {
    return static_cast<size_t>(graph::element_count(shapes_[index])) *
           element_size(graph.tensor(index).data_type);
  };
  std::vector<void*> addresses(graph.tensors.size(), nullptr);
  io_buffers_.clear();
  auto add_io_buffer = [&](int32_t index) -> Status {
    const size_t bytes = tensor_bytes(index);
    io_buffers_.emplace_back(bytes);
    if (io_buffers_.back().allocation_failed(bytes)) {
      return make_error(StatusCode::kOutOfMemory, "cannot allocate ", bytes, " bytes for '",
                        graph.tensor(index).name, "'");
    }
    // A graph output that is also a graph input, or listed twice, shares one buffer.
    if (!addresses[index]) addresses[index] = io_buffers_.back().data();
    return ok_status();
  };
  for (const graph::GraphInput& input : graph.inputs)
    ORKNN_RETURN_IF_ERROR(add_io_buffer(input.tensor));
  for (int32_t output : graph.outputs) ORKNN_RETURN_IF_ERROR(add_io_buffer(output));
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const graph::Tensor& tensor = graph.tensors[i];
    if (tensor.is_constant()) {
      addresses[i] = const_cast<uint8_t*>(tensor.constant_data);
    } else if (plan.offsets[i] != MemoryPlan::kNotInArena) {
      addresses[i] = arena_.data() + plan.offsets[i];
    }
  }
  for (Segment& segment : segments_) ORKNN_RETURN_IF_ERROR(segment.executable->bind(addresses));
  return ok_status();
}

Status Executor::run(Profiler* profiler) {
  if (profiler) profiler->reset(graph_->nodes.size());
  for (Segment& segment : segments_) ORKNN_RETURN_IF_ERROR(segment.executable->run(profiler));
  // A graph output produced directly as a graph input (identity model) has its own buffer.
  const graph::Graph& graph = *graph_;
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      if (graph.inputs[i].tensor == graph.outputs[o]) {
        std::copy(io_buffers_[i].data(), io_buffers_[i].data() + io_buffers_[i].size(),
                  io_buffers_[graph.inputs.size() + o].data());
      }
    }
  }
  return ok_status();
}

size_t Executor::io_bytes() const {
  size_t total = 0;
  for (const AlignedBuffer& buffer : io_buffers_) total += buffer.size();
  return total;
}

}  // namespace orknn::exec
