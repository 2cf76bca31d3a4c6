// The device interface. A device decides which nodes it can run and compiles a segment (a run
// of consecutive nodes assigned to it) into an Executable. Executables get the address of every
// tensor once (bind) and then run many times; binding again is how applications swap buffers.
//
// The list of devices that exist is in device_list.cc, in priority order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/profiler.h"
#include "graph/graph.h"

namespace orknn::devices {

class Executable {
 public:
  virtual ~Executable() = default;
  // tensor_addresses[i] is where tensor i lives (constants: their data). Called before the
  // first run and whenever an address changes.
  virtual Status bind(const std::vector<void*>& tensor_addresses) = 0;
  // Runs the segment. When profiler is non-null, records the time of each node (by its index
  // in the graph). Must not allocate.
  virtual Status run(exec::Profiler* profiler) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* name() const = 0;  // "CPU", "GPU", "NPU": the Target column of the table
  virtual bool supports(const graph::Graph& graph, const graph::Node& node) const = 0;
  // `node_indices` are ascending indices into graph.nodes; `shapes` are current tensor shapes.
  virtual Result<std::unique_ptr<Executable>> compile(const graph::Graph& graph,
                                                      const std::vector<size_t>& node_indices,
                                                      const std::vector<graph::Shape>& shapes) = 0;
};

// Devices available in this process, highest priority first. The CPU device is always last
// and supports every op the runtime knows.
std::vector<std::shared_ptr<Device>> available_devices();

std::shared_ptr<Device> make_cpu_device();
// Supports nothing; a template for new devices and a test of the partitioner.
std::shared_ptr<Device> make_null_device();

}  // namespace orknn::devices
