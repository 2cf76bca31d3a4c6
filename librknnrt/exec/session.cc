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

bool is_user_real_type(DataType type) {
  return type == DataType::kUInt8 || type == DataType::kInt8 || type == DataType::kFloat16 ||
         type == DataType::kFloat32;
}

// Reads element `index` of a user buffer of `type` as float.
template <typename T>
float read_as_float(const void* data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const uint8_t*>(data) + index * sizeof(T), sizeof(T));
  return static_cast<float>(value);
}

using ElementReader = float (*)(const void*, size_t);

ElementReader reader_for(DataType type) {
  switch (type) {
    case DataType::kUInt8:
      return read_as_float<uint8_t>;
    case DataType::kInt8:
      return read_as_float<int8_t>;
    case DataType::kFloat32:
      return read_as_float<float>;
    case DataType::kFloat16:
      return [](const void* data, size_t index) {
        Float16Bits half;
        std::memcpy(&half, static_cast<const uint8_t*>(data) + index * 2, 2);
        return half_to_float(half);
      };
    default:
      return nullptr;
  }
}

// Copies NHWC elements of any size into NCHW order.
void nhwc_to_nchw(const uint8_t* source, uint8_t* destination, const graph::Shape& nchw,
                  size_t element_bytes) {
  const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          const int64_t from = ((in * h + ih) * w + iw) * c + ic;
          const int64_t to = ((in * c + ic) * h + ih) * w + iw;
          std::memcpy(destination + to * element_bytes, source + from * element_bytes,
                      element_bytes);
        }
}

std::string describe_format(const graph::Shape& dims, DataType type) {
  return str_cat(graph::shape_to_string(dims), " ", data_type_name(type));
}

}  // namespace

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kNCHW:
      return "NCHW";
    case Layout::kNHWC:
      return "NHWC";
    case Layout::kNC1HWC2:
      return "NC1HWC2";
    case Layout::kUndefined:
      return "UNDEFINED";
  }
  return "UNKNOW";
}

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
  const std::vector<graph::Shape> input_shapes = graph::stored_input_shapes(graph);
  if (options.model_info_only) {
    std::vector<graph::Shape> shapes;
    ORKNN_RETURN_IF_ERROR(graph::infer_shapes(graph, input_shapes, &shapes));
    planned_internal_bytes_ = plan_memory(graph, shapes).arena_bytes;
    return ok_status();
  }
  thread_pool_ = std::make_unique<ThreadPool>(ThreadPool::default_thread_count());
  const ThreadPool::Scope pool_scope(thread_pool_.get());  // kernels reserve their scratch
  ORKNN_ASSIGN_OR_RETURN(executor_,
                         Executor::create(graph_, input_shapes, devices::available_devices(),
                                          placement_from_environment({options.prefer_gpu})));
  planned_internal_bytes_ = executor_->internal_bytes();
  for (const graph::GraphInput& input : graph.inputs) {
    input_scratch_.emplace_back(static_cast<size_t>(graph.tensor(input.tensor).elements()));
  }
  input_set_.assign(graph.inputs.size(), false);
  input_microseconds_.assign(graph.inputs.size(), 0);
  output_microseconds_.assign(graph.outputs.size(), 0);
  profiler_.reset(graph.nodes.size());
  return ok_status();
}

Result<std::unique_ptr<Session>> Session::duplicate() const {
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<Session> copy, create(graph_, options_));
  copy->core_mask_ = core_mask_;
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
    const int64_t c2 = element_bytes == 1   ? platform_->c2_int8
                       : element_bytes == 2 ? platform_->c2_float16
                                            : 4;
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
  const graph::GraphInput& input = graph_->inputs[index];
  graph::Tensor tensor = graph_->tensor(input.tensor);
  tensor.shape = current_shape(input.tensor);
  const graph::Shape& shape = tensor.shape;
  const bool four_d = shape.size() == 4;
  const uint64_t elements = static_cast<uint64_t>(tensor.elements());
  const TensorDescription description = describe_input(index, AttributeView::kDefault);
  uint8_t* destination = executor_->input_data(index);

  if (format.pass_through || !graph::is_real_valued(tensor)) {
    // The buffer is already in the model's type; only the layout may differ.
    const DataType required_type = tensor.data_type;
    if (!format.pass_through && format.type != required_type) {
      return make_error(StatusCode::kInvalidInput, "input ", index, " ('", tensor.name,
                        "'): invalid dtype ", data_type_name(format.type), ", request dtype ",
                        data_type_name(required_type));
    }
    const uint64_t required = elements * element_size(required_type);
    if (size < required) {
      return make_error(StatusCode::kInvalidInput, "input ", index, ": size ", size, " < required ",
                        required, " (", describe_format(description.dims, required_type), ")");
    }
    const bool from_nhwc = four_d && (format.pass_through ? description.layout == Layout::kNHWC
                                                          : format.layout == Layout::kNHWC);
    if (from_nhwc) {
      nhwc_to_nchw(static_cast<const uint8_t*>(data), destination, shape,
                   element_size(required_type));
    } else {
      if (required > 0) std::memcpy(destination, data, required);
    }
    input_set_[index] = true;
    input_microseconds_[index] = microseconds_since(start);
    return ok_status();
  }

  if (!is_user_real_type(format.type)) {
    return make_error(StatusCode::kInvalidInput, "input ", index, " ('", tensor.name,
                      "'): invalid dtype ", data_type_name(format.type),
                      ", request dtype UINT8, INT8, FP16 or FP32");
  }
  const uint64_t required = elements * element_size(format.type);
  if (size < required) {
    const graph::Shape user_dims = four_d && format.layout == Layout::kNHWC
                                       ? graph::Shape{shape[0], shape[2], shape[3], shape[1]}
                                       : shape;
    return make_error(StatusCode::kInvalidInput, "input ", index, ": size ", size, " < required ",
                      required, " (", describe_format(user_dims, format.type), ")");
  }

  // Gather into NCHW float, normalise, then encode into the model's representation.
  const ElementReader read = reader_for(format.type);
  std::vector<float>& scratch = input_scratch_[index];
  const int64_t batch = shape.empty() ? 1 : shape[0];
  const int64_t channels = shape.size() >= 2 ? shape[1] : 1;
  // A tensor with a zero dimension has nothing to convert (and would divide by zero below).
  const int64_t planes = batch * channels;
  const int64_t spatial =
      planes == 0 ? 0 : (shape.size() >= 2 ? static_cast<int64_t>(elements) / planes : 1);
  const bool from_nhwc = four_d && format.layout == Layout::kNHWC;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t source_channel = input.reverse_channels ? channels - 1 - c : c;
      const float mean = input.mean.empty() ? 0.0f : input.mean[c];
      const float inverse_std = input.std.empty() ? 1.0f : 1.0f / input.std[c];
      float* out = scratch.data() + (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t from = from_nhwc ? (n * spatial + s) * channels + source_channel
                                       : (n * channels + source_channel) * spatial + s;
        out[s] = (read(data, static_cast<size_t>(from)) - mean) * inverse_std;
      }
    }
  }
  graph::encode_from_float(tensor, scratch.data(), destination);
  input_set_[index] = true;
  input_microseconds_[index] = microseconds_since(start);
  return ok_status();
}

Status Session::run() {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_run"));
  const bool print_table = log_level() >= static_cast<int>(LogLevel::kVerbose);
  const bool profile = options_.collect_performance || print_table;
  const auto start = Clock::now();
  const ThreadPool::Scope pool_scope(thread_pool_.get());
  ORKNN_RETURN_IF_ERROR(executor_->run(profile ? &profiler_ : nullptr));
  last_run_microseconds_ = microseconds_since(start);
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
  const uint64_t required = output_size(index, want_float);
  if (size < required) {
    return make_error(StatusCode::kInvalidOutput, "output ", index, ": size ", size, " < required ",
                      required);
  }
  graph::Tensor tensor = graph_->tensor(graph_->outputs[index]);
  tensor.shape = current_shape(graph_->outputs[index]);
  const uint8_t* source = executor_->output_data(index);
  if (!want_float || tensor.data_type == DataType::kFloat32) {
    const uint64_t bytes = output_size(index, false);
    if (bytes > 0) std::memcpy(destination, source, bytes);
  } else if (graph::is_real_valued(tensor)) {
    graph::decode_to_float(tensor, source, static_cast<float*>(destination));
  } else {
    // Integer outputs (ArgMax indices, ...) converted value by value.
    float* out = static_cast<float*>(destination);
    const size_t count = static_cast<size_t>(tensor.elements());
    for (size_t i = 0; i < count; ++i) {
      switch (tensor.data_type) {
        case DataType::kInt64:
          out[i] = read_as_float<int64_t>(source, i);
          break;
        case DataType::kInt32:
          out[i] = read_as_float<int32_t>(source, i);
          break;
        case DataType::kInt16:
          out[i] = read_as_float<int16_t>(source, i);
          break;
        case DataType::kInt8:
          out[i] = read_as_float<int8_t>(source, i);
          break;
        default:
          out[i] = read_as_float<uint8_t>(source, i);
          break;
      }
    }
  }
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
  return ok_status();
}

std::string Session::performance_report() const {
  if (!executor_) return std::string();
  PerfReportInput input;
  input.graph = graph_.get();
  input.shapes = &executor_->shapes();
  for (size_t i = 0; i < graph_->nodes.size(); ++i) {
    input.node_targets.push_back(executor_->node_target(i));
  }
  const bool timed =
      options_.collect_performance || log_level() >= static_cast<int>(LogLevel::kVerbose);
  if (timed) input.node_microseconds = profiler_.node_microseconds();
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

MemoryFigures Session::memory() const {
  MemoryFigures figures;
  figures.weight_bytes = graph_->weight_bytes();
  figures.internal_bytes = planned_internal_bytes_;
  figures.total_allocated_bytes = figures.weight_bytes + figures.internal_bytes;
  if (executor_) figures.total_allocated_bytes += executor_->io_bytes();
  return figures;
}

}  // namespace orknn::exec
