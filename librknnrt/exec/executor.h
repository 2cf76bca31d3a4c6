// A prepared model: nodes assigned to devices and compiled, memory planned and allocated,
// tensor addresses bound. Created by rknn_init (and again when dynamic input shapes change);
// run() then only computes.
//
// Not thread-safe: the API layer serialises calls on one context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "devices/device.h"
#include "exec/placement.h"
#include "exec/profiler.h"
#include "graph/graph.h"

namespace orknn::exec {

struct ExecutorOptions {
  ExecutorOptions() = default;
  explicit ExecutorOptions(const PlacementOptions& placement_options)
      : placement(placement_options) {}

  // The application supplies the arena (rknn_set_internal_mem): none is allocated here.
  bool internal_memory_outside = false;
  // Which devices may take which nodes (the GPU only on request; placement.h).
  PlacementOptions placement;
};

class Executor {
 public:
  // `input_shapes` in graph.inputs order (the stored shapes for static models).
  static Result<std::unique_ptr<Executor>> create(
      std::shared_ptr<const graph::Graph> graph, const std::vector<graph::Shape>& input_shapes,
      const std::vector<std::shared_ptr<devices::Device>>& devices,
      const ExecutorOptions& options = ExecutorOptions());

  const graph::Graph& graph() const { return *graph_; }
  // Current shape of every tensor.
  const std::vector<graph::Shape>& shapes() const { return shapes_; }

  // Graph input and output buffers, in the model's representation (ONNX layout, model dtype):
  // the executor's own, or application memory bound with set_io_address.
  uint8_t* input_data(size_t input) { return io_addresses_[input]; }
  size_t input_bytes(size_t input) const { return io_buffers_[input].size(); }
  uint8_t* output_data(size_t output) { return io_addresses_[graph_->inputs.size() + output]; }
  const uint8_t* output_data(size_t output) const {
    return io_addresses_[graph_->inputs.size() + output];
  }
  size_t output_bytes(size_t output) const {
    return io_buffers_[graph_->inputs.size() + output].size();
  }
  // Makes the kernels read input (slot < input count) or write output (slot - input count)
  // directly at `address`, which holds the tensor in the model's representation; nullptr goes
  // back to the executor's own buffer. This is what makes zero-copy I/O copy nothing.
  Status set_io_address(size_t slot, uint8_t* address);
  // Offers application memory holding I/O `slot` in a device's native layout: true when the one
  // segment that touches the tensor will read or write it there (nothing is converted or
  // copied). A null memory, or false, leaves every segment on its own buffers.
  Result<bool> bind_native_io(size_t slot, const devices::NativeIoMemory& native);
  // Places the arena in application memory of `size` bytes (>= internal_bytes()).
  Status set_internal_memory(uint8_t* base, size_t size);
  // Copies every constant into application memory laid out by plan_weights() and points the
  // kernels at it.
  Status set_weight_memory(uint8_t* base, size_t size);

  // Fails when memory the application must supply has not been bound yet.
  Status check_memory_bound() const;
  Status run(Profiler* profiler);
  // Passes the context's NPU scheduling options (core mask) to every segment.
  void set_run_options(const devices::RunOptions& options);

  size_t internal_bytes() const { return arena_bytes_; }
  size_t io_bytes() const;
  // Name of the device that runs node i ("CPU", ...).
  const char* node_target(size_t node_index) const { return node_targets_[node_index]; }

 private:
  struct Segment {
    std::shared_ptr<devices::Device> device;
    std::vector<size_t> nodes;
    std::unique_ptr<devices::Executable> executable;
  };

  Executor() = default;
  Status partition(const std::vector<std::shared_ptr<devices::Device>>& devices,
                   const PlacementOptions& placement);
  Status allocate_and_bind();
  Status rebind();

  std::shared_ptr<const graph::Graph> graph_;
  ExecutorOptions options_;
  std::vector<graph::Shape> shapes_;
  std::vector<Segment> segments_;
  std::vector<const char*> node_targets_;
  AlignedBuffer arena_;  // empty when the application supplies the arena
  size_t arena_bytes_ = 0;
  uint8_t* arena_base_ = nullptr;
  std::vector<int64_t> arena_offsets_;     // per tensor (MemoryPlan::offsets)
  std::vector<AlignedBuffer> io_buffers_;  // inputs, then outputs
  std::vector<uint8_t*> io_addresses_;     // where each of those lives now
  std::vector<void*> tensor_addresses_;    // what the executables are bound to
};

}  // namespace orknn::exec
