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

namespace orknn {
class DeviceMemory;
}
namespace orknn::driver_shim {
class Npu;
}

namespace orknn::devices {

// How the context asks its NPU work to be scheduled (rknn_set_core_mask,
// rknn_set_batch_core_num). Devices without cores ignore it.
struct RunOptions {
  uint32_t core_mask = 0;  // rknn_core_mask value: 0 auto, 1, 2, 4, 3, 7, 0xffff all
  int batch_core_num = 0;
};

// Application memory holding a graph input or output in NC1HWC2 with `c2`-element channel
// blocks of `type`, without row or image padding (rknn_set_io_mem with a native attr).
struct NativeIoMemory {
  const DeviceMemory* memory = nullptr;  // null: no such memory
  DataType type = DataType::kInt8;
  uint32_t c2 = 0;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // tensor_addresses[i] is where tensor i lives (constants: their data). Called before the
  // first run and whenever an address changes.
  virtual Status bind(const std::vector<void*>& tensor_addresses) = 0;
  // Runs the segment. When profiler is non-null, records the time of each node (by its index
  // in the graph). Must not allocate.
  virtual Status run(exec::Profiler* profiler) = 0;
  virtual void set_run_options(const RunOptions&) {}
  // Asks the executable to read (graph input) or write (graph output) `tensor` directly in
  // `native.memory` from now on, skipping its own buffer and layout conversion. False when it
  // cannot (not its layout, memory its device cannot address); the caller then converts as
  // usual. A null `native.memory` goes back to the executable's own buffer. The memory stays
  // alive while bound (the Session holds it).
  virtual Result<bool> bind_native(int32_t tensor, const NativeIoMemory& native) {
    (void)tensor, (void)native;
    return false;
  }
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* name() const = 0;  // "CPU", "GPU", "NPU": the Target column of the table
  // A device the partitioner uses only when a context asks for it (the GPU: the
  // RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU flag, a node's op_target, ORKNN_GPU).
  virtual bool on_request_only() const { return false; }
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
// The NPU device on a driver_shim backend, and the one the environment selects
// (ORKNN_NPU_BACKEND, else detection); nullptr when there is no NPU.
std::shared_ptr<Device> make_npu_device(std::shared_ptr<driver_shim::Npu> npu);
std::shared_ptr<Device> make_default_npu_device();
// The OpenCL device (devices/gpu/). It looks for OpenCL when first asked and supports nothing
// on a machine without a usable OpenCL device; gpu_unavailable_reason() then says why (empty
// when there is a device; calling it looks for OpenCL).
std::shared_ptr<Device> make_gpu_device();
std::string gpu_unavailable_reason();
// Supports nothing; a template for new devices and a test of the partitioner.
std::shared_ptr<Device> make_null_device();

}  // namespace orknn::devices
