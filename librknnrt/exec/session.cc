#include "exec/session.h"

#include <chrono>
#include <cstring>

#include "core/logging.h"
#include "exec/memory_planner.h"
#include "exec/perf_report.h"
#include "graph/shape_inference.h"
#include "graph/tensor_conversion.h"

namespace orknn::exec {
namespace {

using Clock = std::chrono::steady_clock;

int64_t microseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

}  // namespace

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const graph::Graph> graph,
                                                 const SessionOptions& options) {
  std::unique_ptr<Session> session(new Session());
  session->graph_ = std::move(graph);
  session->options_ = options;
  ORKNN_RETURN_IF_ERROR(session->prepare(options));
  return session;
}

Status Session::prepare(const SessionOptions& options) {
  const graph::Graph& graph = *graph_;
  platform_ = graph.metadata.target_platform.empty()
                  ? &default_platform()
                  : find_platform(graph.metadata.target_platform);
  if (!platform_) {
    return invalid_model("unknown target platform '", graph.metadata.target_platform,
                         "' (known: ", known_platform_names(), ")");
  }
  // Internal memory is reported (and must be supplied) for the largest shape set.
  std::vector<std::vector<graph::Shape>> shape_sets = graph.dynamic_shape_sets;
  if (shape_sets.empty()) shape_sets.push_back(graph::stored_input_shapes(graph));
  for (const std::vector<graph::Shape>& input_shapes : shape_sets) {
    std::vector<graph::Shape> shapes;
    ORKNN_RETURN_IF_ERROR(graph::infer_shapes(graph, input_shapes, &shapes));
    planned_internal_bytes_ =
        std::max(planned_internal_bytes_, plan_memory(graph, shapes).arena_bytes);
  }
  if (options.model_info_only) return ok_status();
  thread_pool_ = std::make_unique<ThreadPool>(ThreadPool::default_thread_count());
  ORKNN_RETURN_IF_ERROR(create_executor(graph::stored_input_shapes(graph)));
  for (const graph::GraphInput& input : graph.inputs) {
    input_scratch_.emplace_back(static_cast<size_t>(graph.tensor(input.tensor).elements()));
  }
  input_set_.assign(graph.inputs.size(), false);
  input_microseconds_.assign(graph.inputs.size(), 0);
  output_microseconds_.assign(graph.outputs.size(), 0);
  profiler_.reset(graph.nodes.size());
  return ok_status();
}

Status Session::create_executor(const std::vector<graph::Shape>& input_shapes) {
  const ThreadPool::Scope pool_scope(thread_pool_.get());  // kernels reserve their scratch
  ExecutorOptions executor_options;
  executor_options.internal_memory_outside = options_.internal_memory_outside;
  executor_options.placement = placement_from_environment({options_.prefer_gpu});
  executor_.reset();
  ORKNN_ASSIGN_OR_RETURN(
      executor_,
      Executor::create(graph_, input_shapes, devices::available_devices(), executor_options));
  executor_->set_run_options(run_options());  // a new executor (new shapes) keeps them
  if (internal_memory_) {
    ORKNN_RETURN_IF_ERROR(
        executor_->set_internal_memory(internal_memory_->data(), internal_memory_->size()));
  }
  if (weight_memory_) {
    ORKNN_RETURN_IF_ERROR(
        executor_->set_weight_memory(weight_memory_->data(), weight_memory_->size()));
  }
  input_bindings_.assign(graph_->inputs.size(), IoBinding());
  output_bindings_.assign(graph_->outputs.size(), IoBinding());
  current_inputs_.clear();
  for (const graph::GraphInput& input : graph_->inputs) {
    current_inputs_.push_back(graph_->tensor(input.tensor));
    current_inputs_.back().shape = current_shape(input.tensor);
  }
  current_outputs_.clear();
  for (int32_t output : graph_->outputs) {
    current_outputs_.push_back(graph_->tensor(output));
    current_outputs_.back().shape = current_shape(output);
  }
  return ok_status();
}

Result<std::unique_ptr<Session>> Session::duplicate() const {
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<Session> copy, create(graph_, options_));
  copy->core_mask_ = core_mask_;
  copy->batch_core_num_ = batch_core_num_;
  if (copy->executor_) copy->executor_->set_run_options(copy->run_options());
  return copy;
}

Status Session::require_runnable(const char* what) const {
  if (executor_) return ok_status();
  return invalid_argument(what, " is not available: the context was created with ",
                          "RKNN_FLAG_COLLECT_MODEL_INFO_ONLY");
}

graph::Shape Session::current_shape(int32_t tensor) const {
  return executor_ ? executor_->shapes()[tensor] : graph_->tensor(tensor).shape;
}

uint32_t Session::c2_for(DataType type) const {
  // 4 for 4-byte elements, which only this runtime offers natively.
  switch (element_size(type)) {
    case 1:
      return static_cast<uint32_t>(platform_->c2_int8);
    case 2:
      return static_cast<uint32_t>(platform_->c2_float16);
    default:
      return 4;
  }
}

TensorDescription Session::describe_input(size_t index, AttributeView view) const {
  const graph::GraphInput& input = graph_->inputs[index];
  const graph::Tensor& tensor = graph_->tensor(input.tensor);
  const graph::Shape shape = current_shape(input.tensor);
  TensorDescription description;
  description.name = tensor.name;
  description.type = tensor.data_type;
  description.quantized = tensor.quantization.is_quantized();
  if (description.quantized) {
    description.scale = tensor.quantization.scales[0];
    description.zero_point = tensor.quantization.zero_points[0];
  }
  description.elements = static_cast<uint64_t>(graph::element_count(shape));
  description.bytes = description.elements * element_size(tensor.data_type);
  description.bytes_with_stride = description.bytes;
  if (shape.size() == 4 && (input.nhwc_layout || view == AttributeView::kNativeNhwc)) {
    description.layout = Layout::kNHWC;
    description.dims = {shape[0], shape[2], shape[3], shape[1]};
    description.w_stride = static_cast<uint32_t>(shape[3]);
  } else {
    description.layout = shape.size() == 4 ? Layout::kNCHW : Layout::kUndefined;
    description.dims = shape;
    if (shape.size() == 4) description.w_stride = static_cast<uint32_t>(shape[3]);
  }
  return description;
}

TensorDescription Session::describe_output(size_t index, AttributeView view) const {
  const int32_t tensor_index = graph_->outputs[index];
  const graph::Tensor& tensor = graph_->tensor(tensor_index);
  const graph::Shape shape = current_shape(tensor_index);
  TensorDescription description;
  description.name = tensor.name;
  description.type = tensor.data_type;
  description.quantized = tensor.quantization.is_quantized();
  if (description.quantized) {
    description.scale = tensor.quantization.scales[0];
    description.zero_point = tensor.quantization.zero_points[0];
  }
  description.elements = static_cast<uint64_t>(graph::element_count(shape));
  const uint64_t element_bytes = element_size(tensor.data_type);
  description.bytes = description.elements * element_bytes;
  description.bytes_with_stride = description.bytes;
  description.dims = shape;
  description.layout = shape.size() == 4 ? Layout::kNCHW : Layout::kUndefined;
  if (shape.size() != 4) return description;
  if (view == AttributeView::kNativeNhwc) {
    description.layout = Layout::kNHWC;
    description.dims = {shape[0], shape[2], shape[3], shape[1]};
    description.w_stride = static_cast<uint32_t>(shape[3]);
  } else if (view == AttributeView::kNative) {
    // NC1HWC2: channels in blocks of C2 (per platform and element size; 4 for float32,
    // which only our runtime has), the last block padded.
    const int64_t c2 = c2_for(tensor.data_type);
    const int64_t c1 = (shape[1] + c2 - 1) / c2;
    description.layout = Layout::kNC1HWC2;
    description.dims = {shape[0], c1, shape[2], shape[3], c2};
    description.w_stride = static_cast<uint32_t>(shape[3]);
    description.bytes_with_stride =
        static_cast<uint64_t>(shape[0] * c1 * shape[2] * shape[3] * c2) * element_bytes;
  }
  return description;
}

Status Session::set_input(size_t index, const void* data, uint64_t size,
                          const UserTensorFormat& format) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_inputs_set"));
  const auto start = Clock::now();
  const graph::Tensor& tensor = current_input_tensor(index);
  UserTensorFormat effective = format;
  if (format.pass_through) {
    // rknn_input has no usable type and layout with pass_through: the model's own are meant.
    effective.type = tensor.data_type;
    effective.layout = describe_input(index, AttributeView::kNative).layout;
  }
  effective.c2 = c2_for(effective.type);
  const ThreadPool::Scope pool_scope(thread_pool_.get());  // the conversion runs on the pool
  ORKNN_RETURN_IF_ERROR(convert_input(index, tensor, graph_->inputs[index], data, size, effective,
                                      &input_scratch_[index], executor_->input_data(index)));
  input_set_[index] = true;
  input_microseconds_[index] = microseconds_since(start);
  return ok_status();
}

Status Session::run() {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_run"));
  const bool print_table = log_level() >= static_cast<int>(LogLevel::kVerbose);
  const bool profile = timing_enabled();
  const bool zero_copy = zero_copy_active();
  if (zero_copy) {
    ORKNN_RETURN_IF_ERROR(check_all_bound());
    ORKNN_RETURN_IF_ERROR(consume_bound_inputs());
  }
  const auto start = Clock::now();
  {
    const ThreadPool::Scope pool_scope(thread_pool_.get());
    ORKNN_RETURN_IF_ERROR(executor_->run(profile ? &profiler_ : nullptr));
  }
  last_run_microseconds_ = microseconds_since(start);
  if (zero_copy) ORKNN_RETURN_IF_ERROR(produce_bound_outputs());
  has_run_ = true;
  if (print_table) log_line(LogLevel::kVerbose, "\n" + performance_report());
  return ok_status();
}

uint64_t Session::output_size(size_t index, bool want_float) const {
  const int32_t tensor = graph_->outputs[index];
  const uint64_t elements = static_cast<uint64_t>(graph::element_count(current_shape(tensor)));
  return elements * (want_float ? sizeof(float) : element_size(graph_->tensor(tensor).data_type));
}

Status Session::get_output(size_t index, bool want_float, void* destination, uint64_t size) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_outputs_get"));
  const auto start = Clock::now();
  const graph::Tensor& tensor = current_output_tensor(index);
  UserTensorFormat format;
  format.type = want_float ? DataType::kFloat32 : tensor.data_type;
  format.layout = Layout::kNCHW;
  ORKNN_RETURN_IF_ERROR(convert_output(index, tensor, executor_->output_data(index), format,
                                       &output_scratch_, destination, size));
  output_microseconds_[index] = microseconds_since(start);
  return ok_status();
}

Status Session::set_core_mask(uint32_t mask) {
  static constexpr uint32_t kAuto = 0, kAll = 0xffff;
  const int cores = platform_->npu_cores;
  if (cores <= 1) {
    return invalid_argument("rknn_set_core_mask is not supported on ", platform_->name,
                            " (one NPU core)");
  }
  const bool valid = mask == kAuto || mask == kAll || mask == 1 || mask == 2 || mask == 3 ||
                     (cores >= 3 && (mask == 4 || mask == 7));
  if (!valid) {
    return invalid_argument("core mask ", mask, " is not valid on ", platform_->name,
                            cores >= 3 ? " (valid: 0 auto, 1, 2, 4, 3 (0_1), 7 (0_1_2), 0xffff all)"
                                       : " (valid: 0 auto, 1, 2, 3 (0_1), 0xffff all)");
  }
  core_mask_ = mask;
  if (executor_) executor_->set_run_options(run_options());
  return ok_status();
}

void Session::set_batch_core_num(int cores) {
  batch_core_num_ = cores;
  if (executor_) executor_->set_run_options(run_options());
}

std::string Session::performance_report() const {
  if (!executor_) return std::string();
  PerfReportInput input;
  input.graph = graph_.get();
  input.shapes = &executor_->shapes();
  for (size_t i = 0; i < graph_->nodes.size(); ++i) {
    input.node_targets.push_back(executor_->node_target(i));
  }
  const bool timed = timing_enabled();
  if (timed) input.node_microseconds = profiler_.node_microseconds();
  if (timed) input.npu_timings = profiler_.npu_timings();
  input.input_microseconds = input_microseconds_;
  input.output_microseconds = output_microseconds_;
  std::string report = format_perf_report(input);
  if (!timed) {
    report =
        "Per-layer times are measured only when the context is created with "
        "RKNN_FLAG_COLLECT_PERF_MASK; they show as 0.\n" +
        report;
  } else if (!has_run_) {
    report = "No run yet: call rknn_run first.\n" + report;
  }
  return report;
}

bool Session::timing_enabled() const {
  return options_.collect_performance || log_level() >= static_cast<int>(LogLevel::kVerbose);
}

MemoryFigures Session::memory() const {
  MemoryFigures figures;
  figures.weight_bytes = plan_weights(*graph_).total_bytes;
  figures.internal_bytes = planned_internal_bytes_;
  // What this context holds itself: memory the application supplies is not counted.
  if (!options_.weight_memory_outside) figures.total_allocated_bytes += figures.weight_bytes;
  if (executor_) {
    if (!options_.internal_memory_outside) {
      figures.total_allocated_bytes += executor_->internal_bytes();
    }
    figures.total_allocated_bytes += executor_->io_bytes();
  } else {
    figures.total_allocated_bytes += figures.internal_bytes;
  }
  return figures;
}

}  // namespace orknn::exec
