// A Session is everything one rknn_context owns: the shared graph, its executor, and the state
// of the copying I/O API (converted inputs, timings, the last performance table). It speaks
// only internal types; librknnrt/api/ maps the C structs onto it.
//
// Not thread-safe: the API layer serialises calls on one context.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device_memory.h"
#include "core/thread_pool.h"
#include "exec/executor.h"
#include "exec/io_conversion.h"
#include "exec/platform.h"
#include "exec/profiler.h"
#include "graph/graph.h"

namespace orknn::exec {

// Which form of a tensor's attributes to describe (the rknn_query families).
enum class AttributeView {
  kDefault,     // INPUT_ATTR / OUTPUT_ATTR: what the copying API accepts and returns
  kNative,      // NATIVE_*: the runtime's own layout (NC1HWC2 for 4-D outputs)
  kNativeNhwc,  // NATIVE_NHWC_*
};

struct TensorDescription {
  std::string name;
  std::vector<int64_t> dims;  // in `layout` order
  Layout layout = Layout::kUndefined;
  DataType type = DataType::kFloat32;
  bool quantized = false;
  float scale = 1.0f;
  int32_t zero_point = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
  uint32_t w_stride = 0;
  uint64_t bytes_with_stride = 0;
};

struct SessionOptions {
  bool collect_performance = false;      // time every node of every run
  bool model_info_only = false;          // plan memory but build nothing runnable
  bool internal_memory_outside = false;  // the arena comes from rknn_set_internal_mem
  bool weight_memory_outside = false;    // the weights go to rknn_set_weight_mem memory
  bool skip_input_sync = false;          // RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE
  bool skip_output_sync = false;         // RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE
  bool prefer_gpu = false;               // RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU
};

// Application memory bound to a graph input or output (rknn_set_io_mem).
struct IoBinding {
  std::shared_ptr<const DeviceMemory> memory;  // kept alive while bound
  UserTensorFormat format;
  bool direct = false;  // the kernels use the memory itself: nothing is copied
  bool bound() const { return memory != nullptr; }
};

struct MemoryFigures {
  uint64_t weight_bytes = 0;
  uint64_t internal_bytes = 0;
  uint64_t total_allocated_bytes = 0;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const graph::Graph> graph,
                                                 const SessionOptions& options);
  // A new session on the same graph (weights shared), with its own buffers and state.
  Result<std::unique_ptr<Session>> duplicate() const;

  const graph::Graph& graph() const { return *graph_; }
  const PlatformInfo& platform() const { return *platform_; }
  size_t input_count() const { return graph_->inputs.size(); }
  size_t output_count() const { return graph_->outputs.size(); }
  bool is_dynamic() const { return !graph_->dynamic_shape_sets.empty(); }

  TensorDescription describe_input(size_t index, AttributeView view) const;
  TensorDescription describe_output(size_t index, AttributeView view) const;

  // Converts `data` into the model's input `index` (mean/std, quantization, layout). Checks
  // the type, layout and that `size` covers the tensor.
  Status set_input(size_t index, const void* data, uint64_t size, const UserTensorFormat& format);
  Status run();
  // Bytes get_output writes for output `index`: float32 when want_float, else the model type.
  uint64_t output_size(size_t index, bool want_float) const;
  Status get_output(size_t index, bool want_float, void* destination, uint64_t size);

  // Binds application memory to input or output `index` in `format` (zero-copy API). Checks the
  // type, layout and size; the memory stays alive while bound.
  Status bind_input(size_t index, std::shared_ptr<const DeviceMemory> memory,
                    const UserTensorFormat& format);
  Status bind_output(size_t index, std::shared_ptr<const DeviceMemory> memory,
                     const UserTensorFormat& format);
  // The channel block of NC1HWC2 for elements of `type` on this model's platform.
  uint32_t c2_for(DataType type) const;
  // Application-supplied internal (arena) and weight memory.
  Status set_internal_memory(std::shared_ptr<const DeviceMemory> memory);
  Status set_weight_memory(std::shared_ptr<const DeviceMemory> memory);
  // Dynamic-shape models: selects the shape set whose input shapes (NCHW, graph input order)
  // are `shapes`, re-planning everything; zero-copy bindings must be made again afterwards.
  Status set_input_shapes(const std::vector<graph::Shape>& shapes);
  graph::Shape current_input_shape(size_t index) const {
    return current_shape(graph_->inputs[index].tensor);
  }
  std::shared_ptr<const graph::Graph> shared_graph() const { return graph_; }

  // Checks `mask` (an rknn_core_mask value) against the platform's cores and stores it.
  Status set_core_mask(uint32_t mask);
  uint32_t core_mask() const { return core_mask_; }
  // rknn_set_batch_core_num, checked by the API: a batch's images are split over this many
  // NPU cores (0: not set).
  void set_batch_core_num(int cores);

  std::string performance_report() const;
  int64_t last_run_microseconds() const { return last_run_microseconds_; }
  MemoryFigures memory() const;

 private:
  Session() = default;
  Status prepare(const SessionOptions& options);
  Status require_runnable(const char* what) const;
  graph::Shape current_shape(int32_t tensor) const;
  // The graph tensor of input/output `index` with its current shape (kept per executor, so
  // runs copy no tensor descriptions).
  const graph::Tensor& current_input_tensor(size_t index) const { return current_inputs_[index]; }
  const graph::Tensor& current_output_tensor(size_t index) const { return current_outputs_[index]; }
  Status create_executor(const std::vector<graph::Shape>& input_shapes);
  // True when node times are measured (the flag, or a log level that prints the table).
  bool timing_enabled() const;
  // Zero-copy runs: every tensor bound; inputs converted in, outputs converted out.
  bool zero_copy_active() const;
  Status check_all_bound() const;
  Status consume_bound_inputs();
  Status produce_bound_outputs();

  std::shared_ptr<const graph::Graph> graph_;
  SessionOptions options_;
  const PlatformInfo* platform_ = nullptr;
  // The context's CPU threads (ORKNN_CPU_THREADS), bound to the calling thread while the
  // kernels are built (they reserve scratch in it) and while they run.
  std::unique_ptr<ThreadPool> thread_pool_;
  std::unique_ptr<Executor> executor_;  // null for model_info_only sessions
  size_t planned_internal_bytes_ = 0;   // the largest over all shape sets
  std::shared_ptr<const DeviceMemory> internal_memory_;
  std::shared_ptr<const DeviceMemory> weight_memory_;
  std::vector<graph::Tensor> current_inputs_;
  std::vector<graph::Tensor> current_outputs_;
  std::vector<IoBinding> input_bindings_;
  std::vector<IoBinding> output_bindings_;
  std::vector<uint8_t> output_scratch_;
  std::vector<std::vector<float>> input_scratch_;  // float staging per input
  std::vector<bool> input_set_;
  Profiler profiler_;
  std::vector<int64_t> input_microseconds_;
  std::vector<int64_t> output_microseconds_;
  int64_t last_run_microseconds_ = 0;
  bool has_run_ = false;
  devices::RunOptions run_options() const { return {core_mask_, batch_core_num_}; }
  uint32_t core_mask_ = 0;
  int batch_core_num_ = 0;
};

}  // namespace orknn::exec
