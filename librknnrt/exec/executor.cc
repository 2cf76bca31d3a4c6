#include "exec/executor.h"

#include <cstring>

#include "core/logging.h"
#include "exec/memory_planner.h"
#include "graph/shape_inference.h"

namespace orknn::exec {

Result<std::unique_ptr<Executor>> Executor::create(
    std::shared_ptr<const graph::Graph> graph, const std::vector<graph::Shape>& input_shapes,
    const std::vector<std::shared_ptr<devices::Device>>& devices, const ExecutorOptions& options) {
  std::unique_ptr<Executor> executor(new Executor());
  executor->graph_ = std::move(graph);
  executor->options_ = options;
  ORKNN_RETURN_IF_ERROR(graph::infer_shapes(*executor->graph_, input_shapes, &executor->shapes_));
  ORKNN_RETURN_IF_ERROR(executor->partition(devices, options.placement));
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
  // Concat inputs written in place (memory_planner.h) need the CPU device's plain pointers, and
  // an arena of the planner's own layout: not one the application supplies, whose size was
  // reported (RKNN_QUERY_MEM_SIZE) for the plan without them.
  std::vector<bool> host_nodes;
  if (!options_.internal_memory_outside) {
    host_nodes.resize(graph.nodes.size());
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      host_nodes[i] = std::strcmp(node_targets_[i], "CPU") == 0;
    }
  }
  const MemoryPlan plan = plan_memory(graph, shapes_, host_nodes);
  arena_bytes_ = plan.arena_bytes;
  arena_offsets_ = plan.offsets;
  if (!options_.internal_memory_outside) {
    arena_ = AlignedBuffer(plan.arena_bytes);
    if (arena_.allocation_failed(plan.arena_bytes)) {
      return make_error(StatusCode::kOutOfMemory, "cannot allocate ", plan.arena_bytes,
                        " bytes of internal memory");
    }
    arena_base_ = arena_.data();
  }
  io_buffers_.clear();
  auto add_io_buffer = [&](int32_t index) -> Status {
    const size_t bytes = static_cast<size_t>(graph::element_count(shapes_[index])) *
                         element_size(graph.tensor(index).data_type);
    io_buffers_.emplace_back(bytes);
    if (io_buffers_.back().allocation_failed(bytes)) {
      return make_error(StatusCode::kOutOfMemory, "cannot allocate ", bytes, " bytes for '",
                        graph.tensor(index).name, "'");
    }
    return ok_status();
  };
  for (const graph::GraphInput& input : graph.inputs)
    ORKNN_RETURN_IF_ERROR(add_io_buffer(input.tensor));
  for (int32_t output : graph.outputs) ORKNN_RETURN_IF_ERROR(add_io_buffer(output));
  io_addresses_.clear();
  for (AlignedBuffer& buffer : io_buffers_) io_addresses_.push_back(buffer.data());
  tensor_addresses_.assign(graph.tensors.size(), nullptr);
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    if (graph.tensors[i].is_constant()) {
      tensor_addresses_[i] = const_cast<uint8_t*>(graph.tensors[i].constant_data);
    }
  }
  return rebind();
}

// Recomputes the address of every non-constant tensor and hands the table to the executables.
Status Executor::rebind() {
  const graph::Graph& graph = *graph_;
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    if (graph.tensors[i].is_constant()) continue;
    const bool in_arena = arena_offsets_[i] != MemoryPlan::kNotInArena;
    tensor_addresses_[i] = in_arena && arena_base_ ? arena_base_ + arena_offsets_[i] : nullptr;
  }
  // Graph outputs first, then inputs: a graph output that is also a graph input is read from
  // the input's buffer (run() copies it to the output's). The verifier forbids listing an
  // output twice.
  const size_t input_count = graph.inputs.size();
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    tensor_addresses_[graph.outputs[o]] = io_addresses_[input_count + o];
  }
  for (size_t i = 0; i < input_count; ++i) {
    tensor_addresses_[graph.inputs[i].tensor] = io_addresses_[i];
  }
  for (Segment& segment : segments_) {
    ORKNN_RETURN_IF_ERROR(segment.executable->bind(tensor_addresses_));
  }
  return ok_status();
}

Status Executor::set_io_address(size_t slot, uint8_t* address) {
  if (slot >= io_buffers_.size()) {
    return invalid_argument("I/O slot ", slot, " >= ", io_buffers_.size());
  }
  io_addresses_[slot] = address ? address : io_buffers_[slot].data();
  return rebind();
}

Result<bool> Executor::bind_native_io(size_t slot, const devices::NativeIoMemory& native) {
  if (slot >= io_buffers_.size()) {
    return invalid_argument("I/O slot ", slot, " >= ", io_buffers_.size());
  }
  const graph::Graph& graph = *graph_;
  const size_t input_count = graph.inputs.size();
  const int32_t tensor =
      slot < input_count ? graph.inputs[slot].tensor : graph.outputs[slot - input_count];
  // Only a tensor that exactly one segment touches can live in one device's layout.
  std::vector<Segment*> touching;
  for (Segment& segment : segments_) {
    bool touches = false;
    for (size_t node : segment.nodes) {
      for (int32_t input : graph.nodes[node].inputs) touches |= input == tensor;
      for (int32_t output : graph.nodes[node].outputs) touches |= output == tensor;
    }
    if (touches) touching.push_back(&segment);
  }
  for (Segment* segment : touching) {
    ORKNN_RETURN_IF_ERROR(segment->executable->bind_native(tensor, {}).status());
  }
  // A graph output that is also a graph input is copied between its two buffers by run().
  bool is_input = false, is_output = false;
  for (const graph::GraphInput& input : graph.inputs) is_input |= input.tensor == tensor;
  for (int32_t output : graph.outputs) is_output |= output == tensor;
  if (!native.memory || touching.size() != 1 || (is_input && is_output)) return false;
  return touching.front()->executable->bind_native(tensor, native);
}

Status Executor::set_internal_memory(uint8_t* base, size_t size) {
  if (size < arena_bytes_) {
    return invalid_argument("internal memory size ", size, " < required ", arena_bytes_,
                            " (RKNN_QUERY_MEM_SIZE total_internal_size)");
  }
  arena_ = AlignedBuffer();
  arena_base_ = base;
  return rebind();
}

Status Executor::set_weight_memory(uint8_t* base, size_t size) {
  const graph::Graph& graph = *graph_;
  const WeightLayout layout = plan_weights(graph);
  if (size < layout.total_bytes) {
    return invalid_argument("weight memory size ", size, " < required ", layout.total_bytes,
                            " (RKNN_QUERY_MEM_SIZE total_weight_size)");
  }
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const graph::Tensor& tensor = graph.tensors[i];
    if (layout.offsets[i] == WeightLayout::kNotAWeight) continue;
    uint8_t* destination = base + layout.offsets[i];
    // Weights already in place (a second context sharing this memory) are not rewritten.
    if (tensor.constant_size > 0 && destination != tensor.constant_data) {
      std::memcpy(destination, tensor.constant_data, tensor.constant_size);
    }
    tensor_addresses_[i] = destination;
  }
  return rebind();
}

Status Executor::check_memory_bound() const {
  if (arena_bytes_ > 0 && !arena_base_) {
    return invalid_argument("the internal memory is not set: call rknn_set_internal_mem before ",
                            "rknn_run (the context was created with RKNN_FLAG_MEM_ALLOC_OUTSIDE ",
                            "or RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE)");
  }
  return ok_status();
}

Status Executor::run(Profiler* profiler) {
  ORKNN_RETURN_IF_ERROR(check_memory_bound());
  if (profiler) profiler->reset(graph_->nodes.size());
  for (Segment& segment : segments_) ORKNN_RETURN_IF_ERROR(segment.executable->run(profiler));
  // A graph output produced directly as a graph input (identity model) has its own buffer.
  const graph::Graph& graph = *graph_;
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      if (graph.inputs[i].tensor == graph.outputs[o]) {
        if (io_buffers_[i].size() > 0) {
          std::memmove(io_addresses_[graph.inputs.size() + o], io_addresses_[i],
                       io_buffers_[i].size());
        }
      }
    }
  }
  return ok_status();
}

void Executor::set_run_options(const devices::RunOptions& options) {
  for (Segment& segment : segments_) segment.executable->set_run_options(options);
}

size_t Executor::io_bytes() const {
  size_t total = 0;
  for (const AlignedBuffer& buffer : io_buffers_) total += buffer.size();
  return total;
}

}  // namespace orknn::exec
