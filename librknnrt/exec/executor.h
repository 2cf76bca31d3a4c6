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

class Executor {
 public:
  // `input_shapes` in graph.inputs order (the stored shapes for static models).
  static Result<std::unique_ptr<Executor>> create(
      std::shared_ptr<const graph::Graph> graph, const std::vector<graph::Shape>& input_shapes,
      const std::vector<std::shared_ptr<devices::Device>>& devices,
      const PlacementOptions& placement = {});

  const graph::Graph& graph() const { return *graph_; }
  // Current shape of every tensor.
  const std::vector<graph::Shape>& shapes() const { return shapes_; }

  // Graph input and output buffers, in the model's representation (ONNX layout, model dtype).
  uint8_t* input_data(size_t input) { return io_buffers_[input].data(); }
  size_t input_bytes(size_t input) const { return io_buffers_[input].size(); }
  const uint8_t* output_data(size_t output) const {
    return io_buffers_[graph_->inputs.size() + output].data();
  }
  size_t output_bytes(size_t output) const {
    return io_buffers_[graph_->inputs.size() + output].size();
  }

  Status run(Profiler* profiler);

  size_t internal_bytes() const { return arena_.size(); }
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

  std::shared_ptr<const graph::Graph> graph_;
  std::vector<graph::Shape> shapes_;
  std::vector<Segment> segments_;
  std::vector<const char*> node_targets_;
  AlignedBuffer arena_;
  std::vector<AlignedBuffer> io_buffers_;  // inputs, then outputs
};

}  // namespace orknn::exec
