// The zero-copy side of a Session: application memory bound to inputs and outputs, internal and
// weight memory supplied by the application, and switching dynamic input shapes.
#include <cstring>

#include "exec/memory_planner.h"
#include "exec/session.h"
#include "graph/tensor_conversion.h"

namespace orknn::exec {
namespace {

bool is_aligned(const void* address) {
  return reinterpret_cast<uintptr_t>(address) % kTensorAlignment == 0;
}

bool is_relayout(const graph::Shape& shape, Layout layout) {
  return shape.size() == 4 && (layout == Layout::kNHWC || layout == Layout::kNC1HWC2);
}

bool has_padding(const graph::Shape& shape, const UserTensorFormat& format) {
  if (shape.size() != 4) return false;
  return (format.w_stride != 0 && format.w_stride != shape[3]) ||
         (format.h_stride != 0 && format.h_stride != shape[2]);
}

// Memory a device may read or write in place: NC1HWC2 in the model's type, unpadded (the
// device decides whether that is its layout and whether it can address the memory).
devices::NativeIoMemory native_io(const graph::Tensor& tensor, const UserTensorFormat& format,
                                  const DeviceMemory& memory, bool as_stored) {
  const bool candidate = as_stored && format.layout == Layout::kNC1HWC2 &&
                         tensor.shape.size() == 4 && format.type == tensor.data_type &&
                         !has_padding(tensor.shape, format);
  if (!candidate) return {};
  return devices::NativeIoMemory{&memory, format.type, format.c2};
}

std::string shape_list(const graph::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// The memory must hold the tensor in `format`, padding included (size_with_stride).
Status check_memory_size(bool is_input, const graph::Tensor& tensor, const UserTensorFormat& format,
                         const DeviceMemory& memory) {
  const uint64_t required = user_buffer_bytes(tensor.shape, format);
  if (memory.size() >= required) return ok_status();
  return make_error(is_input ? StatusCode::kInvalidInput : StatusCode::kInvalidOutput,
                    "rknn_set_io_mem, ", is_input ? "input(" : "output(", tensor.name,
                    ") memory size must be: ", required, ", but is: ", memory.size(), " (",
                    graph::shape_to_string(user_dims(tensor.shape, format)), " ",
                    data_type_name(format.type), " ", layout_name(format.layout), ")");
}

}  // namespace

bool Session::zero_copy_active() const {
  for (const IoBinding& binding : input_bindings_)
    if (binding.bound()) return true;
  for (const IoBinding& binding : output_bindings_)
    if (binding.bound()) return true;
  return false;
}

Status Session::check_all_bound() const {
  for (size_t i = 0; i < input_bindings_.size(); ++i) {
    if (!input_bindings_[i].bound()) {
      return make_error(StatusCode::kInvalidInput, "rknn_run, input(",
                        graph_->tensor(graph_->inputs[i].tensor).name,
                        ") tensor not attached to memory! (bind every input and output with "
                        "rknn_set_io_mem)");
    }
  }
  for (size_t o = 0; o < output_bindings_.size(); ++o) {
    if (!output_bindings_[o].bound()) {
      return make_error(StatusCode::kInvalidOutput, "rknn_run, output(",
                        graph_->tensor(graph_->outputs[o]).name,
                        ") tensor not attached to memory! (bind every input and output with "
                        "rknn_set_io_mem)");
    }
  }
  return ok_status();
}

Status Session::consume_bound_inputs() {
  const auto start = std::chrono::steady_clock::now();
  const ThreadPool::Scope pool_scope(thread_pool_.get());  // conversions run on the pool
  for (size_t i = 0; i < input_bindings_.size(); ++i) {
    const IoBinding& binding = input_bindings_[i];
    if (!options_.skip_input_sync) {
      ORKNN_RETURN_IF_ERROR(
          binding.memory->sync(SyncDirection::kToDevice, 0, binding.memory->size()));
    }
    if (binding.direct) continue;
    ORKNN_RETURN_IF_ERROR(convert_input(
        i, current_input_tensor(i), graph_->inputs[i], binding.memory->data(),
        binding.memory->size(), binding.format, &input_scratch_[i], executor_->input_data(i)));
    input_microseconds_[i] = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
  }
  return ok_status();
}

Status Session::produce_bound_outputs() {
  for (size_t o = 0; o < output_bindings_.size(); ++o) {
    const IoBinding& binding = output_bindings_[o];
    if (!binding.direct) {
      ORKNN_RETURN_IF_ERROR(convert_output(o, current_output_tensor(o), executor_->output_data(o),
                                           binding.format, &output_scratch_, binding.memory->data(),
                                           binding.memory->size()));
    }
    if (!options_.skip_output_sync) {
      ORKNN_RETURN_IF_ERROR(
          binding.memory->sync(SyncDirection::kFromDevice, 0, binding.memory->size()));
    }
  }
  return ok_status();
}

// One memory range backs one tensor of a context: two tensors sharing bytes would overwrite
// each other (and a direct output would feed a later input mid-run).
static Status check_not_bound_elsewhere(const std::vector<IoBinding>& inputs,
                                        const std::vector<IoBinding>& outputs, bool is_input,
                                        size_t index, const DeviceMemory& memory,
                                        const graph::Graph& graph) {
  const uint8_t* begin = memory.data();
  const uint8_t* end = begin + memory.size();
  auto check = [&](const std::vector<IoBinding>& bindings, bool inputs_side) -> Status {
    for (size_t i = 0; i < bindings.size(); ++i) {
      if (!bindings[i].bound() || (inputs_side == is_input && i == index)) continue;
      const uint8_t* other_begin = bindings[i].memory->data();
      const uint8_t* other_end = other_begin + bindings[i].memory->size();
      if (begin < other_end && other_begin < end) {
        const std::string& name = inputs_side ? graph.tensor(graph.inputs[i].tensor).name
                                              : graph.tensor(graph.outputs[i]).name;
        return invalid_argument("the memory is already bound to ",
                                inputs_side ? "input " : "output ", i, " ('", name,
                                "') of this context; one memory range can back ",
                                "only one tensor (unbind it by binding other memory first)");
      }
    }
    return ok_status();
  };
  ORKNN_RETURN_IF_ERROR(check(inputs, true));
  return check(outputs, false);
}

Status Session::bind_input(size_t index, std::shared_ptr<const DeviceMemory> memory,
                           const UserTensorFormat& requested) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_set_io_mem"));
  const graph::Tensor& tensor = current_input_tensor(index);
  UserTensorFormat format = requested;
  format.c2 = c2_for(format.type);
  ORKNN_RETURN_IF_ERROR(check_input_format(index, tensor, format));
  ORKNN_RETURN_IF_ERROR(check_memory_size(true, tensor, format, *memory));
  ORKNN_RETURN_IF_ERROR(
      check_not_bound_elsewhere(input_bindings_, output_bindings_, true, index, *memory, *graph_));
  IoBinding binding;
  binding.format = format;
  binding.direct = (format.pass_through || !graph::is_real_valued(tensor)) &&
                   format.type == tensor.data_type && !is_relayout(tensor.shape, format.layout) &&
                   !has_padding(tensor.shape, format) && is_aligned(memory->data());
  ORKNN_RETURN_IF_ERROR(
      executor_->set_io_address(index, binding.direct ? memory->data() : nullptr));
  const bool as_stored = format.pass_through || !graph::is_real_valued(tensor);
  ORKNN_ASSIGN_OR_RETURN(
      bool native, executor_->bind_native_io(index, native_io(tensor, format, *memory, as_stored)));
  binding.direct |= native;
  binding.memory = std::move(memory);
  input_bindings_[index] = std::move(binding);
  return ok_status();
}

Status Session::bind_output(size_t index, std::shared_ptr<const DeviceMemory> memory,
                            const UserTensorFormat& requested) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_set_io_mem"));
  const graph::Tensor& tensor = current_output_tensor(index);
  UserTensorFormat format = requested;
  format.pass_through = false;
  format.c2 = c2_for(format.type);
  ORKNN_RETURN_IF_ERROR(check_output_format(index, tensor, format));
  ORKNN_RETURN_IF_ERROR(check_memory_size(false, tensor, format, *memory));
  ORKNN_RETURN_IF_ERROR(
      check_not_bound_elsewhere(input_bindings_, output_bindings_, false, index, *memory, *graph_));
  bool output_is_graph_input = false;
  for (const graph::GraphInput& input : graph_->inputs) {
    output_is_graph_input |= input.tensor == graph_->outputs[index];
  }
  IoBinding binding;
  binding.format = format;
  binding.direct = format.type == tensor.data_type && !is_relayout(tensor.shape, format.layout) &&
                   !has_padding(tensor.shape, format) && is_aligned(memory->data()) &&
                   !output_is_graph_input;
  const size_t slot = graph_->inputs.size() + index;
  ORKNN_RETURN_IF_ERROR(executor_->set_io_address(slot, binding.direct ? memory->data() : nullptr));
  ORKNN_ASSIGN_OR_RETURN(bool native,
                         executor_->bind_native_io(slot, native_io(tensor, format, *memory, true)));
  binding.direct |= native;
  binding.memory = std::move(memory);
  output_bindings_[index] = std::move(binding);
  return ok_status();
}

Status Session::set_internal_memory(std::shared_ptr<const DeviceMemory> memory) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_set_internal_mem"));
  if (!options_.internal_memory_outside) {
    return invalid_argument(
        "You must set RKNN_FLAG_MEM_ALLOC_OUTSIDE (or RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE) on "
        "rknn_init() if you want to call rknn_set_internal_mem!");
  }
  if (memory->size() < planned_internal_bytes_) {
    return invalid_argument("internal memory size ", memory->size(), " < required ",
                            planned_internal_bytes_, " (RKNN_QUERY_MEM_SIZE total_internal_size)");
  }
  ORKNN_RETURN_IF_ERROR(executor_->set_internal_memory(memory->data(), memory->size()));
  internal_memory_ = std::move(memory);
  return ok_status();
}

Status Session::set_weight_memory(std::shared_ptr<const DeviceMemory> memory) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_set_weight_mem"));
  if (!options_.weight_memory_outside) {
    return invalid_argument(
        "You must set RKNN_FLAG_MEM_ALLOC_OUTSIDE on rknn_init() if you want to call "
        "rknn_set_weight_mem!");
  }
  ORKNN_RETURN_IF_ERROR(executor_->set_weight_memory(memory->data(), memory->size()));
  weight_memory_ = std::move(memory);
  return ok_status();
}

Status Session::set_input_shapes(const std::vector<graph::Shape>& shapes) {
  ORKNN_RETURN_IF_ERROR(require_runnable("rknn_set_input_shapes"));
  const auto& sets = graph_->dynamic_shape_sets;
  if (sets.empty()) {
    return invalid_argument("rknn_set_input_shapes: the model has static input shapes (convert ",
                            "it with dynamic_input to change them)");
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    bool supported = false;
    for (const std::vector<graph::Shape>& set : sets) supported |= set[i] == shapes[i];
    if (supported) continue;
    const TensorDescription description = describe_input(i, AttributeView::kDefault);
    std::string message =
        str_cat("rknn_set_input_shapes error, input name = ", description.name, " shape ",
                shape_list(shapes[i]), " (NCHW) is not supported; supported input shapes are:");
    const bool nhwc = description.layout == Layout::kNHWC;
    for (const std::vector<graph::Shape>& set : sets) {
      const graph::Shape& shape = set[i];
      const graph::Shape shown =
          nhwc && shape.size() == 4 ? graph::Shape{shape[0], shape[2], shape[3], shape[1]} : shape;
      message +=
          str_cat(" shape = ", shape_list(shown), ", layout = ",
                  layout_name(shape.size() == 4 ? description.layout : Layout::kUndefined), ";");
    }
    return make_error(StatusCode::kInvalidInput, message);
  }
  bool found = false;
  for (const std::vector<graph::Shape>& set : sets) found |= set == shapes;
  if (!found) {
    return make_error(StatusCode::kInvalidInput,
                      "rknn_set_input_shapes: each input's shape is supported, but not this "
                      "combination: shapes must come from the same dynamic_input set");
  }
  bool unchanged = true;
  for (size_t i = 0; i < shapes.size(); ++i) {
    unchanged &= current_shape(graph_->inputs[i].tensor) == shapes[i];
  }
  if (unchanged) return ok_status();
  ORKNN_RETURN_IF_ERROR(create_executor(shapes));
  input_set_.assign(graph_->inputs.size(), false);
  return ok_status();
}

}  // namespace orknn::exec
