// CPU kernels of the data-movement family. All but Cast are byte moves (DtypeHandling::kByteMove):
// they run on the stored bytes when every real tensor shares dtype and quantization, and in the
// float domain otherwise, so each factory only needs the element size. Cast sees real dtypes.
#include <cstring>

#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/ops/concat_copies.h"
#include "devices/cpu/ops/strided_copies.h"
#include "graph/ops/data_movement_attributes.h"
#include "graph/tensor_conversion.h"
#include "reference/data_movement.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using graph::Shape;
using graph::Tensor;
using KernelResult = Result<std::unique_ptr<CpuKernel>>;

graph::NodeOperands operands_of(const KernelBuildContext& context) {
  return graph::NodeOperands(context.node, context.inputs);
}

template <typename Function>
KernelResult function_kernel(Function function) {
  return std::unique_ptr<CpuKernel>(make_function_kernel(std::move(function)));
}

// The element size of the data tensors (input 0 and every output, plus `extra_inputs`). They
// share one dtype whenever the kernel runs: the registry brings disagreeing real tensors to
// float32, and the shape function rejects other mixtures; checked again because a byte move of
// mismatched sizes would read or write out of bounds.
Result<size_t> data_element_size(const KernelBuildContext& context,
                                 const std::vector<size_t>& extra_inputs = {}) {
  std::vector<const Tensor*> tensors{context.inputs[0]};
  for (size_t position : extra_inputs) tensors.push_back(context.input(position));
  tensors.insert(tensors.end(), context.outputs.begin(), context.outputs.end());
  const DataType type = tensors[0]->data_type;
  for (const Tensor* tensor : tensors) {
    if (tensor && tensor->data_type != type) {
      return context.error("tensor '", tensor->name, "' is ", data_type_name(tensor->data_type),
                           " but '", tensors[0]->name, "' is ", data_type_name(type),
                           "; a data-movement op needs one element type");
    }
  }
  return element_size(type);
}

Status check_output_shapes(const KernelBuildContext& context, const std::vector<Shape>& shapes) {
  if (context.outputs.size() != shapes.size()) {
    return context.error("has ", context.outputs.size(), " outputs, the op gives ", shapes.size());
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (context.outputs[i]->shape != shapes[i]) {
      return context.error("output ", i, " is ", graph::shape_to_string(context.outputs[i]->shape),
                           " but the op computes ", graph::shape_to_string(shapes[i]));
    }
  }
  return ok_status();
}

int64_t product(const Shape& shape, size_t first, size_t last) {
  int64_t result = 1;
  for (size_t k = first; k < last; ++k) result *= shape[k];
  return result;
}

KernelResult make_concat(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const graph::ConcatAttributes attributes,
                         graph::parse_concat(operands_of(context)));
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, {attributes.output_shape}));
  std::vector<size_t> other_inputs;
  for (size_t i = 1; i < context.inputs.size(); ++i) other_inputs.push_back(i);
  ORKNN_ASSIGN_OR_RETURN(const size_t bytes, data_element_size(context, other_inputs));
  const Shape& shape = attributes.output_shape;
  const size_t axis = static_cast<size_t>(attributes.axis);
  reference::ConcatParams params;
  params.outer = product(shape, 0, axis);
  params.inner = product(shape, axis + 1, shape.size());
  for (const Tensor* input : context.inputs) params.axis_sizes.push_back(input->shape[axis]);
  return function_kernel(
      [copies = ConcatCopies(bytes, params)](const void* const* inputs, void* const* outputs) {
        copies.concat(inputs, outputs[0]);
        return ok_status();
      });
}

KernelResult make_split(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const graph::SplitAttributes attributes,
                         graph::parse_split(operands_of(context), context.outputs.size()));
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, attributes.output_shapes));
  ORKNN_ASSIGN_OR_RETURN(const size_t bytes, data_element_size(context));
  const Shape& shape = context.inputs[0]->shape;
  const size_t axis = static_cast<size_t>(attributes.axis);
  reference::ConcatParams params;
  params.outer = product(shape, 0, axis);
  params.inner = product(shape, axis + 1, shape.size());
  params.axis_sizes = attributes.sizes;
  return function_kernel(
      [copies = ConcatCopies(bytes, params)](const void* const* inputs, void* const* outputs) {
        copies.split(inputs[0], outputs);
        return ok_status();
      });
}

KernelResult strided_copy_kernel(size_t bytes, const reference::StridedCopyParams& layout) {
  return function_kernel(
      [copies = StridedCopies(bytes, layout)](const void* const* inputs, void* const* outputs) {
        copies.copy(inputs[0], outputs[0]);
        return ok_status();
      });
}

KernelResult make_slice(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const graph::SliceAttributes attributes,
                         graph::parse_slice(operands_of(context)));
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, {attributes.output_shape}));
  ORKNN_ASSIGN_OR_RETURN(const size_t bytes, data_element_size(context));
  reference::SliceParams params{context.inputs[0]->shape, attributes.starts, attributes.steps,
                                attributes.output_shape};
  return strided_copy_kernel(bytes, reference::slice_layout(params));
}

KernelResult make_transpose(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const graph::TransposeAttributes attributes,
                         graph::parse_transpose(operands_of(context)));
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, {attributes.output_shape}));
  ORKNN_ASSIGN_OR_RETURN(const size_t bytes, data_element_size(context));
  return strided_copy_kernel(
      bytes, reference::transpose_layout(context.inputs[0]->shape, attributes.perm));
}

// Reshape, Flatten, Squeeze and Unsqueeze copy the bytes unchanged. The executor may later
// alias their output to the input instead of running them; copy_bytes tolerates that.
template <Result<Shape> (*output_shape)(const graph::NodeOperands&)>
KernelResult make_reshaped_copy(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const Shape shape, output_shape(operands_of(context)));
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, {shape}));
  ORKNN_ASSIGN_OR_RETURN(const size_t bytes, data_element_size(context));
  const size_t total = static_cast<size_t>(graph::element_count(shape)) * bytes;
  return function_kernel([total](const void* const* inputs, void* const* outputs) {
    reference::copy_bytes(total, inputs[0], outputs[0]);
    return ok_status();
  });
}

reference::PadMode reference_mode(graph::PadMode mode) {
  switch (mode) {
    case graph::PadMode::kConstant:
      return reference::PadMode::kConstant;
    case graph::PadMode::kEdge:
      return reference::PadMode::kEdge;
    case graph::PadMode::kReflect:
      return reference::PadMode::kReflect;
    case graph::PadMode::kWrap:
      return reference::PadMode::kWrap;
  }
  return reference::PadMode::kConstant;
}

// One element holding the real number `value` in the representation of `data` (quantized:
// round and saturate with its zero point; integer: truncate; float16: round).
Result<std::vector<uint8_t>> encode_scalar(const KernelBuildContext& context, const Tensor& data,
                                           float value) {
  std::vector<uint8_t> element(element_size(data.data_type));
  if (graph::is_encoded_real(data) && data.data_type != DataType::kFloat16) {
    if (data.quantization.is_per_channel()) {
      return context.error("constant padding of per-channel quantized tensor '", data.name,
                           "' is not supported");
    }
    Tensor scalar = data;
    scalar.shape = {1};
    graph::encode_from_float(scalar, &value, element.data());
  } else {
    reference::cast(DataType::kFloat32, &value, data.data_type, element.data(), 1);
  }
  return element;
}

KernelResult make_pad(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const graph::PadAttributes attributes,
                         graph::parse_pad(operands_of(context)));
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, {attributes.output_shape}));
  const bool value_from_input = attributes.value_source == graph::PadValueSource::kInput;
  ORKNN_ASSIGN_OR_RETURN(const size_t bytes,
                         data_element_size(context, value_from_input ? std::vector<size_t>{2}
                                                                     : std::vector<size_t>{}));
  const Tensor& data = *context.inputs[0];
  const reference::PadParams params{data.shape, attributes.begin, attributes.end,
                                    reference_mode(attributes.mode)};
  // The padding element in the data's own representation: a constant operand's bytes are
  // copied now (they are already encoded like the data, or were decoded to float32 along with
  // it); a runtime operand is read at each run; otherwise the real value is encoded here.
  std::vector<uint8_t> constant_element(bytes, 0);
  bool read_value_at_run = false;
  if (value_from_input) {
    const Tensor& value = *context.inputs[2];
    if (value.is_constant()) {
      std::memcpy(constant_element.data(), value.constant_data, bytes);
    } else {
      read_value_at_run = true;
    }
  } else if (attributes.mode == graph::PadMode::kConstant) {
    ORKNN_ASSIGN_OR_RETURN(constant_element,
                           encode_scalar(context, data, attributes.attribute_value));
  }
  return function_kernel([bytes, params, constant_element, read_value_at_run](
                             const void* const* inputs, void* const* outputs) {
    const void* value = read_value_at_run ? inputs[2] : constant_element.data();
    reference::pad(bytes, params, inputs[0], value, outputs[0]);
    return ok_status();
  });
}

// Cast between plain types with the reference; quantized integer tensors are decoded to or
// encoded from float32 scratch around it, so Cast of an int8 activation to FLOAT gives reals.
class CastKernel final : public CpuKernel {
 public:
  CastKernel(const Tensor& input, const Tensor& output)
      : input_(input), output_(output), count_(input.elements()) {
    decode_input_ = graph::is_encoded_real(input) && input.data_type != DataType::kFloat16;
    encode_output_ = graph::is_encoded_real(output) && output.data_type != DataType::kFloat16;
    if (decode_input_) decoded_.resize(static_cast<size_t>(count_));
    if (encode_output_) to_encode_.resize(static_cast<size_t>(count_));
  }

  Status run(const void* const* inputs, void* const* outputs) override {
    const void* source = inputs[0];
    if (decode_input_) {
      graph::decode_to_float(input_, inputs[0], decoded_.data());
      source = decoded_.data();
    }
    void* destination = encode_output_ ? static_cast<void*>(to_encode_.data()) : outputs[0];
    reference::cast(decode_input_ ? DataType::kFloat32 : input_.data_type, source,
                    encode_output_ ? DataType::kFloat32 : output_.data_type, destination, count_);
    if (encode_output_) graph::encode_from_float(output_, to_encode_.data(), outputs[0]);
    return ok_status();
  }

 private:
  Tensor input_;
  Tensor output_;
  int64_t count_;
  bool decode_input_ = false;
  bool encode_output_ = false;
  std::vector<float> decoded_;
  std::vector<float> to_encode_;
};

KernelResult make_cast(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const DataType target, graph::parse_cast_target(operands_of(context)));
  const Tensor& input = *context.inputs[0];
  const Tensor& output = *context.outputs[0];
  ORKNN_RETURN_IF_ERROR(check_output_shapes(context, {input.shape}));
  // The output buffer's real type is what the model stores. It may differ from `to` when a
  // converter changed the model's precision (FLOAT stored as FLOAT16 or quantized int8) or
  // narrowed integers (INT64 stored as INT32); any other mismatch would change the meaning.
  const bool output_quantized =
      graph::is_encoded_real(output) && output.data_type != DataType::kFloat16;
  const bool target_real = target == DataType::kFloat32 || target == DataType::kFloat16;
  const bool stored_as_target = output.data_type == target && !output_quantized;
  const bool real_as_real = target_real && graph::is_real_valued(output);
  const bool integer_as_integer = !target_real && !graph::is_real_valued(output);
  if (!stored_as_target && !real_as_real && !integer_as_integer) {
    return context.error("output '", output.name, "' is stored as ",
                         data_type_name(output.data_type), output_quantized ? " (quantized)" : "",
                         ", which cannot hold the result of a Cast to ", data_type_name(target));
  }
  return std::unique_ptr<CpuKernel>(std::make_unique<CastKernel>(input, output));
}

}  // namespace

std::vector<CpuOpDefinition> data_movement_cpu_ops() {
  return {
      {"Concat", DtypeHandling::kByteMove, make_concat, nullptr},
      {"Split", DtypeHandling::kByteMove, make_split, nullptr},
      {"Slice", DtypeHandling::kByteMove, make_slice, nullptr},
      {"Reshape", DtypeHandling::kByteMove, make_reshaped_copy<graph::reshape_output_shape>,
       nullptr},
      {"Flatten", DtypeHandling::kByteMove, make_reshaped_copy<graph::flatten_output_shape>,
       nullptr},
      {"Transpose", DtypeHandling::kByteMove, make_transpose, nullptr},
      {"Squeeze", DtypeHandling::kByteMove, make_reshaped_copy<graph::squeeze_output_shape>,
       nullptr},
      {"Unsqueeze", DtypeHandling::kByteMove, make_reshaped_copy<graph::unsqueeze_output_shape>,
       nullptr},
      {"Pad", DtypeHandling::kByteMove, make_pad, nullptr},
      {"Cast", DtypeHandling::kNative, make_cast, nullptr},
  };
}

}  // namespace orknn::devices::cpu
