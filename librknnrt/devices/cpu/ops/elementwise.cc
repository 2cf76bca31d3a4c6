// CPU kernels of the elementwise family. Everything runs in the float domain; unary ops also
// have an int8 kernel: a 256-entry table built by pushing every int8 code through the same
// decode -> reference function -> encode path the float domain uses, so it is bit-exact with
// it by construction.
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "devices/cpu/cpu_kernel.h"
#include "devices/cpu/optimized/optimized_kernels.h"
#include "graph/ops/elementwise_attributes.h"
#include "graph/tensor_conversion.h"
#include "reference/elementwise.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using graph::Tensor;

Status require_float(const KernelBuildContext& context, const Tensor* tensor, const char* role,
                     size_t position) {
  if (!tensor || tensor->data_type == DataType::kFloat32) return ok_status();
  return unimplemented(context.node.describe(), ": ", role, " ", position, " ('", tensor->name,
                       "') is ", data_type_name(tensor->data_type),
                       "; only real-valued (float or quantized) tensors are supported");
}

Status require_float_tensors(const KernelBuildContext& context, size_t skip_input = SIZE_MAX) {
  for (size_t i = 0; i < context.inputs.size(); ++i) {
    if (i == skip_input) continue;
    ORKNN_RETURN_IF_ERROR(require_float(context, context.inputs[i], "input", i));
  }
  for (size_t i = 0; i < context.outputs.size(); ++i) {
    ORKNN_RETURN_IF_ERROR(require_float(context, context.outputs[i], "output", i));
  }
  return ok_status();
}

// --- binary ----------------------------------------------------------------------------------

reference::BinaryOperation binary_operation(const std::string& type) {
  if (type == "Add") return reference::BinaryOperation::kAdd;
  if (type == "Sub") return reference::BinaryOperation::kSubtract;
  if (type == "Mul") return reference::BinaryOperation::kMultiply;
  if (type == "Div") return reference::BinaryOperation::kDivide;
  if (type == "Pow") return reference::BinaryOperation::kPower;
  return reference::BinaryOperation::kPRelu;
}

bool is_integer_exponent(const Tensor* tensor) {
  return tensor->data_type == DataType::kInt32 || tensor->data_type == DataType::kInt64;
}

// Pow (opset 12+) accepts an integer exponent; it is converted to float per run (or once, when
// constant) so the reference kernel stays float-only.
void integer_exponent_to_float(DataType type, const void* source, float* destination,
                               int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (type == DataType::kInt64) {
      int64_t value;
      std::memcpy(&value, static_cast<const uint8_t*>(source) + 8 * i, 8);
      destination[i] = static_cast<float>(value);
    } else {
      int32_t value;
      std::memcpy(&value, static_cast<const uint8_t*>(source) + 4 * i, 4);
      destination[i] = static_cast<float>(value);
    }
  }
}

// --- binary on integer tensors ----------------------------------------------------------------

bool is_plain_integer(const Tensor* tensor) {
  if (!tensor || graph::is_real_valued(*tensor)) return false;
  switch (tensor->data_type) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
      return true;
    default:
      return false;
  }
}

// Reads element `index` of an integer or real (float32 view) buffer as double: Pow's exponent.
double exponent_value(DataType type, const void* data, int64_t index) {
  const auto* bytes = static_cast<const uint8_t*>(data) + index * element_size(type);
  switch (type) {
    case DataType::kInt8:
      return static_cast<int8_t>(*bytes);
    case DataType::kUInt8:
      return *bytes;
    case DataType::kInt16: {
      int16_t value;
      std::memcpy(&value, bytes, sizeof(value));
      return value;
    }
    case DataType::kInt32: {
      int32_t value;
      std::memcpy(&value, bytes, sizeof(value));
      return value;
    }
    case DataType::kInt64: {
      int64_t value;
      std::memcpy(&value, bytes, sizeof(value));
      return static_cast<double>(value);
    }
    default: {
      float value;
      std::memcpy(&value, bytes, sizeof(value));
      return value;
    }
  }
}

template <typename T>
Result<std::unique_ptr<CpuKernel>> make_typed_integer_binary_kernel(
    const KernelBuildContext& context, reference::BinaryOperation operation,
    const reference::BroadcastParams& params) {
  if (operation != reference::BinaryOperation::kPower) {
    return make_function_kernel(
        [operation, params](const void* const* inputs, void* const* outputs) {
          reference::integer_binary(operation, params, static_cast<const T*>(inputs[0]),
                                    static_cast<const T*>(inputs[1]), static_cast<T*>(outputs[0]));
          return ok_status();
        });
  }
  // The exponent may have any integer or real type; it is widened to double (once when
  // constant, per run into a buffer made here otherwise, so running never allocates).
  const Tensor* exponent = context.input(1);
  const DataType exponent_type = exponent->data_type;
  const int64_t count = exponent->elements();
  std::vector<double> exponents(static_cast<size_t>(count));
  const bool constant_exponent = exponent->is_constant();
  if (constant_exponent) {
    for (int64_t i = 0; i < count; ++i) {
      exponents[static_cast<size_t>(i)] = exponent_value(exponent_type, exponent->constant_data, i);
    }
  }
  return make_function_kernel([params, exponent_type, count, constant_exponent, exponents](
                                  const void* const* inputs, void* const* outputs) mutable {
    if (!constant_exponent) {
      for (int64_t i = 0; i < count; ++i) {
        exponents[static_cast<size_t>(i)] = exponent_value(exponent_type, inputs[1], i);
      }
    }
    reference::integer_power(params, static_cast<const T*>(inputs[0]), exponents.data(),
                             static_cast<T*>(outputs[0]));
    return ok_status();
  });
}

// Add, Sub, Mul, Div with operands and result of one integer type; Pow with an integer base and
// result and an exponent of any integer or real type (ONNX Pow's T1/T2).
Result<std::unique_ptr<CpuKernel>> make_integer_binary_kernel(const KernelBuildContext& context) {
  const reference::BinaryOperation operation = binary_operation(context.node.op_type);
  const Tensor* a = context.input(0);
  const Tensor* b = context.input(1);
  const Tensor* output = context.outputs[0];
  if (operation == reference::BinaryOperation::kPRelu) {
    return unimplemented(context.node.describe(), ": PRelu on integer tensors is not supported");
  }
  const bool power = operation == reference::BinaryOperation::kPower;
  const bool b_fits = power ? (is_plain_integer(b) || b->data_type == DataType::kFloat32)
                            : (is_plain_integer(b) && b->data_type == a->data_type);
  if (!is_plain_integer(a) || output->data_type != a->data_type || !b_fits) {
    return unimplemented(context.node.describe(),
                         ": integer arithmetic needs inputs and output of ", "one integer type (",
                         data_type_name(a->data_type), ", ", data_type_name(b->data_type), " -> ",
                         data_type_name(output->data_type), ")",
                         power ? "; Pow's exponent may be any integer or float" : "");
  }
  const reference::BroadcastParams params = reference::make_broadcast_params(a->shape, b->shape);
  switch (a->data_type) {
    case DataType::kInt8:
      return make_typed_integer_binary_kernel<int8_t>(context, operation, params);
    case DataType::kUInt8:
      return make_typed_integer_binary_kernel<uint8_t>(context, operation, params);
    case DataType::kInt16:
      return make_typed_integer_binary_kernel<int16_t>(context, operation, params);
    case DataType::kInt32:
      return make_typed_integer_binary_kernel<int32_t>(context, operation, params);
    default:
      return make_typed_integer_binary_kernel<int64_t>(context, operation, params);
  }
}

Result<std::unique_ptr<CpuKernel>> make_binary_kernel(const KernelBuildContext& context) {
  const reference::BinaryOperation operation = binary_operation(context.node.op_type);
  const Tensor* exponent = context.input(1);
  const bool integer_exponent =
      operation == reference::BinaryOperation::kPower && is_integer_exponent(exponent);
  ORKNN_RETURN_IF_ERROR(require_float_tensors(context, integer_exponent ? 1 : SIZE_MAX));
  reference::BroadcastParams params =
      reference::make_broadcast_params(context.input(0)->shape, context.input(1)->shape);
  if (!integer_exponent) {
    if (auto fast = optimized::make_binary_kernel(context, operation)) return fast;
    return make_function_kernel(
        [operation, params](const void* const* inputs, void* const* outputs) {
          reference::binary(operation, params, static_cast<const float*>(inputs[0]),
                            static_cast<const float*>(inputs[1]), static_cast<float*>(outputs[0]));
          return ok_status();
        });
  }
  const int64_t count = exponent->elements();
  std::vector<float> exponent_values(static_cast<size_t>(count));
  const bool constant_exponent = exponent->is_constant();
  if (constant_exponent) {
    integer_exponent_to_float(exponent->data_type, exponent->constant_data, exponent_values.data(),
                              count);
  }
  return make_function_kernel(
      [operation, params, count, constant_exponent, type = exponent->data_type, exponent_values](
          const void* const* inputs, void* const* outputs) mutable {
        if (!constant_exponent) {
          integer_exponent_to_float(type, inputs[1], exponent_values.data(), count);
        }
        reference::binary(operation, params, static_cast<const float*>(inputs[0]),
                          exponent_values.data(), static_cast<float*>(outputs[0]));
        return ok_status();
      });
}

// Add, Sub, Mul, Div on per-tensor int8 tensors in one pass. Add and Sub compute on the codes
// (kernels/cpu/reference/quantized_add.h; every variant, the reference one included); Mul and
// Div decode, operate and encode per element, bit-exact with the float domain the registry
// falls back to when this is unimplemented (other tensors or broadcasts, the reference variant).
Result<std::unique_ptr<CpuKernel>> make_binary_int8_kernel(const KernelBuildContext& context) {
  if (auto fast =
          optimized::make_binary_int8_kernel(context, binary_operation(context.node.op_type))) {
    return fast;
  }
  return unimplemented(context.node.describe(), ": no fused int8 kernel; float domain");
}

// The 256 output codes of an int8 unary node, one per input code (-128 first).
using CodeTable = std::array<int8_t, 256>;

// --- unary -----------------------------------------------------------------------------------

struct UnaryType {
  const char* op_type;
  reference::UnaryOperation operation;
};
constexpr UnaryType kUnaryTypes[] = {
    {"Relu", reference::UnaryOperation::kRelu},
    {"Clip", reference::UnaryOperation::kClip},
    {"LeakyRelu", reference::UnaryOperation::kLeakyRelu},
    {"Sigmoid", reference::UnaryOperation::kSigmoid},
    {"HardSigmoid", reference::UnaryOperation::kHardSigmoid},
    {"HardSwish", reference::UnaryOperation::kHardSwish},
    {"Swish", reference::UnaryOperation::kSwish},
    {"SiLU", reference::UnaryOperation::kSwish},
    {"Tanh", reference::UnaryOperation::kTanh},
    {"Exp", reference::UnaryOperation::kExp},
    {"Sqrt", reference::UnaryOperation::kSqrt},
    {"Neg", reference::UnaryOperation::kNeg},
    {"Abs", reference::UnaryOperation::kAbs},
    {"Reciprocal", reference::UnaryOperation::kReciprocal},
};

// Parameters from the attributes; Clip bounds given as inputs are filled in by the caller.
Result<reference::UnaryParams> unary_params(const graph::Node& node) {
  reference::UnaryParams params;
  for (const UnaryType& type : kUnaryTypes) {
    if (node.op_type == type.op_type) params.operation = type.operation;
  }
  ORKNN_ASSIGN_OR_RETURN(graph::UnaryAttributes attributes, graph::parse_unary_attributes(node));
  params.alpha = attributes.alpha;
  params.beta = attributes.beta;
  if (params.operation == reference::UnaryOperation::kClip) {
    ORKNN_ASSIGN_OR_RETURN(graph::ClipAttributes clip, graph::parse_clip_attributes(node));
    params.minimum = clip.minimum;
    params.maximum = clip.maximum;
  }
  return params;
}

Result<std::unique_ptr<CpuKernel>> make_unary_kernel(const KernelBuildContext& context) {
  ORKNN_RETURN_IF_ERROR(require_float_tensors(context));
  ORKNN_ASSIGN_OR_RETURN(reference::UnaryParams params, unary_params(context.node));
  if (auto fast = optimized::make_unary_kernel(context, params)) return fast;
  const int64_t count = context.input(0)->elements();
  // Clip bounds given as inputs are read per run: they are scalars and may be non-constant.
  const bool minimum_from_input = context.input(1) != nullptr;
  const bool maximum_from_input = context.input(2) != nullptr;
  return make_function_kernel([params, count, minimum_from_input, maximum_from_input](
                                  const void* const* inputs, void* const* outputs) mutable {
    if (minimum_from_input) params.minimum = *static_cast<const float*>(inputs[1]);
    if (maximum_from_input) params.maximum = *static_cast<const float*>(inputs[2]);
    reference::unary(params, static_cast<const float*>(inputs[0]), static_cast<float*>(outputs[0]),
                     count);
    return ok_status();
  });
}

// Clip on a plain integer tensor; bounds (inputs of the same type, opset 11+) are read per run
// when given, else the type's limits. The float attributes of opset 6 Clip apply to float only.
template <typename T>
Result<std::unique_ptr<CpuKernel>> make_typed_integer_clip_kernel(
    const KernelBuildContext& context) {
  const int64_t count = context.input(0)->elements();
  const bool minimum_given = context.input(1) != nullptr;
  const bool maximum_given = context.input(2) != nullptr;
  return make_function_kernel(
      [count, minimum_given, maximum_given](const void* const* inputs, void* const* outputs) {
        T minimum = std::numeric_limits<T>::lowest();
        T maximum = std::numeric_limits<T>::max();
        if (minimum_given) std::memcpy(&minimum, inputs[1], sizeof(T));
        if (maximum_given) std::memcpy(&maximum, inputs[2], sizeof(T));
        reference::integer_clip(static_cast<const T*>(inputs[0]), minimum, maximum,
                                static_cast<T*>(outputs[0]), count);
        return ok_status();
      });
}

Result<std::unique_ptr<CpuKernel>> make_integer_clip_kernel(const KernelBuildContext& context) {
  const Tensor* input = context.input(0);
  const DataType type = input->data_type;
  for (size_t position = 1; position < 3; ++position) {
    const Tensor* bound = context.input(position);
    if (bound && (bound->data_type != type || bound->elements() != 1)) {
      return context.error("bound ", position, " ('", bound->name, "') must be a ",
                           data_type_name(type), " scalar like the input");
    }
  }
  if (context.node.has_attribute("min") || context.node.has_attribute("max")) {
    return unimplemented(context.node.describe(),
                         ": attribute bounds (opset 6 Clip) apply to float input only");
  }
  if (!is_plain_integer(input) || context.outputs[0]->data_type != type) {
    return unimplemented(context.node.describe(), ": Clip on ", data_type_name(type),
                         " is not supported");
  }
  switch (type) {
    case DataType::kInt8:
      return make_typed_integer_clip_kernel<int8_t>(context);
    case DataType::kUInt8:
      return make_typed_integer_clip_kernel<uint8_t>(context);
    case DataType::kInt16:
      return make_typed_integer_clip_kernel<int16_t>(context);
    case DataType::kInt32:
      return make_typed_integer_clip_kernel<int32_t>(context);
    default:
      return make_typed_integer_clip_kernel<int64_t>(context);
  }
}

bool is_per_tensor_int8(const Tensor* tensor) {
  return tensor && tensor->data_type == DataType::kInt8 && tensor->quantization.is_quantized() &&
         !tensor->quantization.is_per_channel();
}

// The value of a constant scalar Clip bound in any real-valued representation.
Result<float> constant_bound(const KernelBuildContext& context, size_t position) {
  const Tensor* tensor = context.input(position);
  if (!tensor->is_constant() || !graph::is_real_valued(*tensor)) {
    return unimplemented(context.node.describe(), ": int8 table needs constant real bounds");
  }
  Tensor scalar = *tensor;
  scalar.shape = {1};
  float value = 0.0f;
  graph::decode_to_float(scalar, tensor->constant_data, &value);
  return value;
}

// The output code of every input code of an int8 unary node (-128 first), by the float
// domain's own decode -> reference function -> encode, so bit-exact with it by construction.
Result<CodeTable> unary_int8_table(const KernelBuildContext& context) {
  const Tensor* input = context.input(0);
  const Tensor* output = context.outputs[0];
  if (!is_per_tensor_int8(input) || !is_per_tensor_int8(output)) {
    return unimplemented(context.node.describe(), ": int8 table needs per-tensor int8 tensors");
  }
  ORKNN_ASSIGN_OR_RETURN(reference::UnaryParams params, unary_params(context.node));
  if (context.input(1)) {
    ORKNN_ASSIGN_OR_RETURN(params.minimum, constant_bound(context, 1));
  }
  if (context.input(2)) {
    ORKNN_ASSIGN_OR_RETURN(params.maximum, constant_bound(context, 2));
  }

  std::array<int8_t, 256> codes;
  for (int i = 0; i < 256; ++i) codes[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  Tensor table_input = *input;
  table_input.shape = {256};
  table_input.constant_data = nullptr;
  Tensor table_output = *output;
  table_output.shape = {256};
  table_output.constant_data = nullptr;
  std::array<float, 256> real_inputs;
  std::array<float, 256> real_outputs;
  graph::decode_to_float(table_input, codes.data(), real_inputs.data());
  reference::unary(params, real_inputs.data(), real_outputs.data(), 256);
  std::array<int8_t, 256> table;
  graph::encode_from_float(table_output, real_outputs.data(), table.data());
  return table;
}

Result<std::unique_ptr<CpuKernel>> make_unary_int8_kernel(const KernelBuildContext& context) {
  ORKNN_ASSIGN_OR_RETURN(const CodeTable table, unary_int8_table(context));
  const int64_t count = context.input(0)->elements();
  // The optimized variants' table lookup (AVX-512 VBMI where the CPU has it), split over the
  // pool; the byte loop below for the reference variant and empty tensors.
  if (auto kernel = optimized::make_lookup_int8_kernel(table.data(), count)) return kernel;
  return make_function_kernel([table, count](const void* const* inputs, void* const* outputs) {
    const auto* source = static_cast<const int8_t*>(inputs[0]);
    auto* destination = static_cast<int8_t*>(outputs[0]);
    for (int64_t i = 0; i < count; ++i) destination[i] = table[source[i] + 128];
    return ok_status();
  });
}

bool is_float32(const Tensor* tensor) {
  return tensor && tensor->data_type == DataType::kFloat32;
}

}  // namespace

Result<std::unique_ptr<CpuKernel>> make_binary_activation_kernel(
    const KernelBuildContext& binary, const KernelBuildContext& activation) {
  const std::string& type = binary.node.op_type;
  const bool fusable_binary = type == "Add" || type == "Sub" || type == "Mul" || type == "Div";
  bool unary = false;
  for (const UnaryType& unary_type : kUnaryTypes)
    unary |= activation.node.op_type == unary_type.op_type;
  if (!fusable_binary || !unary || binary.inputs.size() != 2 || binary.outputs.size() != 1 ||
      activation.outputs.size() != 1) {
    return unimplemented(binary.node.describe(), ": not fused with ", activation.node.describe());
  }
  const reference::BinaryOperation operation = binary_operation(type);
  const Tensor* a = binary.input(0);
  const Tensor* b = binary.input(1);
  const Tensor* result = binary.outputs[0];
  if (is_per_tensor_int8(a) && is_per_tensor_int8(b) && is_per_tensor_int8(result) &&
      is_per_tensor_int8(activation.outputs[0])) {
    // Every int8 activation is a table of the result's codes (as its own kernel would apply).
    ORKNN_ASSIGN_OR_RETURN(const CodeTable table, unary_int8_table(activation));
    if (auto fast = optimized::make_binary_int8_kernel(
            binary, operation, std::vector<int8_t>(table.begin(), table.end()))) {
      return fast;
    }
  } else if (is_float32(a) && is_float32(b) && is_float32(result)) {
    ORKNN_ASSIGN_OR_RETURN(const std::optional<reference::UnaryParams> params,
                           fused_float_activation(activation));
    if (params) {
      if (auto fast = optimized::make_binary_activation_kernel(binary, operation, *params)) {
        return fast;
      }
    }
  }
  return unimplemented(binary.node.describe(), ": not fused with ", activation.node.describe());
}

Result<std::optional<reference::UnaryParams>> fused_float_activation(
    const KernelBuildContext& activation) {
  bool unary = false;
  for (const UnaryType& unary_type : kUnaryTypes)
    unary |= activation.node.op_type == unary_type.op_type;
  if (!unary || activation.outputs.size() != 1 || !is_float32(activation.input(0)) ||
      !is_float32(activation.outputs[0])) {
    return std::optional<reference::UnaryParams>();
  }
  ORKNN_ASSIGN_OR_RETURN(reference::UnaryParams params, unary_params(activation.node));
  // Clip bounds given as inputs must be constants to be fixed now.
  for (size_t position = 1; position < 3; ++position) {
    const Tensor* bound = activation.input(position);
    if (!bound) continue;
    if (!bound->is_constant() || !is_float32(bound)) return std::optional<reference::UnaryParams>();
    float& value = position == 1 ? params.minimum : params.maximum;
    std::memcpy(&value, bound->constant_data, sizeof(float));
  }
  return std::optional<reference::UnaryParams>(params);
}

std::vector<CpuOpDefinition> elementwise_cpu_ops() {
  std::vector<CpuOpDefinition> ops;
  for (const char* type : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) {
    const bool fused_int8 = std::string(type) != "Pow" && std::string(type) != "PRelu";
    ops.push_back({type, DtypeHandling::kFloatDomain, make_binary_kernel,
                   fused_int8 ? make_binary_int8_kernel : nullptr, make_integer_binary_kernel});
  }
  for (const UnaryType& type : kUnaryTypes) {
    ops.push_back(
        {type.op_type, DtypeHandling::kFloatDomain, make_unary_kernel, make_unary_int8_kernel,
         type.operation == reference::UnaryOperation::kClip ? make_integer_clip_kernel : nullptr});
  }
  return ops;
}

}  // namespace orknn::devices::cpu
