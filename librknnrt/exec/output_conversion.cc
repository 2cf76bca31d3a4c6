// The output half of I/O conversion: a graph output tensor into the application's buffer, in
// the model's type, dequantized to FLOAT32 or as FLOAT16, in NCHW/UNDEFINED, NHWC or NC1HWC2.
// Separate from the input path (input_conversion.cc): outputs need no normalisation, channel
// order or table/vectorized paths, and share only the layout helpers of io_layout.h.
#include "exec/io_conversion.h"

#include <cstring>

#include "exec/io_layout.h"
#include "graph/tensor_conversion.h"

namespace orknn::exec {
namespace {

// Reads element `index` of a buffer of `type` as float.
template <typename T>
float read_as_float(const void* data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const uint8_t*>(data) + index * sizeof(T), sizeof(T));
  return static_cast<float>(value);
}

float read_half_as_float(const void* data, size_t index) {
  Float16Bits half;
  std::memcpy(&half, static_cast<const uint8_t*>(data) + index * 2, 2);
  return half_to_float(half);
}

using ElementReader = float (*)(const void*, size_t);

ElementReader reader_for(DataType type) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kBool:
      return read_as_float<uint8_t>;
    case DataType::kInt8:
      return read_as_float<int8_t>;
    case DataType::kInt16:
      return read_as_float<int16_t>;
    case DataType::kInt32:
      return read_as_float<int32_t>;
    case DataType::kInt64:
      return read_as_float<int64_t>;
    case DataType::kFloat32:
      return read_as_float<float>;
    case DataType::kFloat16:
      return read_half_as_float;
  }
  return read_as_float<uint8_t>;
}

}  // namespace

Status check_output_format(size_t index, const graph::Tensor& tensor,
                           const UserTensorFormat& format) {
  const bool real = graph::is_real_valued(tensor);
  const bool type_ok = format.type == tensor.data_type || format.type == DataType::kFloat32 ||
                       (real && format.type == DataType::kFloat16);
  if (!type_ok) {
    return make_error(StatusCode::kInvalidOutput, "output ", index, " ('", tensor.name,
                      "'): tensor type must be: ", data_type_name(tensor.data_type), ", FP32",
                      real ? " or FP16" : "", ", but is: ", data_type_name(format.type));
  }
  ORKNN_RETURN_IF_ERROR(check_padding(false, index, tensor, format));
  if (tensor.shape.size() != 4 &&
      (format.layout == Layout::kNHWC || format.layout == Layout::kNC1HWC2)) {
    return make_error(StatusCode::kInvalidOutput, "output ", index, " ('", tensor.name,
                      "'): tensor layout must be: UNDEFINED for a ", tensor.shape.size(),
                      "-D tensor, but is: ", layout_name(format.layout));
  }
  return ok_status();
}

Status convert_output(size_t index, const graph::Tensor& tensor, const uint8_t* source,
                      const UserTensorFormat& format, std::vector<uint8_t>* scratch,
                      void* destination, uint64_t size) {
  ORKNN_RETURN_IF_ERROR(check_output_format(index, tensor, format));
  const uint64_t required = user_buffer_bytes(tensor.shape, format);
  if (size < required) {
    return make_error(StatusCode::kInvalidOutput, "output ", index, ": size ", size, " < required ",
                      required, " (", describe_format(user_dims(tensor.shape, format), format.type),
                      ")");
  }
  const size_t elements = static_cast<size_t>(tensor.elements());
  const size_t element_bytes = element_size(format.type);
  const bool relayout_needed = needs_relayout(tensor.shape, format);
  const bool same_type = format.type == tensor.data_type;
  if (same_type && !relayout_needed) {
    if (elements > 0 && source != destination) {
      std::memcpy(destination, source, elements * element_bytes);
    }
    return ok_status();
  }
  // Converted values in NCHW order: straight into the destination when no relayout follows.
  const size_t float_bytes = format.type == DataType::kFloat16 ? elements * sizeof(float) : 0;
  const size_t needed = float_bytes + (relayout_needed ? elements * element_bytes : 0);
  if (scratch->size() < needed) scratch->resize(needed);
  uint8_t* values =
      relayout_needed ? scratch->data() + float_bytes : static_cast<uint8_t*>(destination);
  if (same_type) {
    if (elements > 0) std::memcpy(values, source, elements * element_bytes);
  } else {
    float* floats = format.type == DataType::kFloat32 ? reinterpret_cast<float*>(values)
                                                      : reinterpret_cast<float*>(scratch->data());
    if (tensor.data_type == DataType::kFloat32) {
      std::memcpy(floats, source, elements * sizeof(float));
    } else if (graph::is_real_valued(tensor)) {
      graph::decode_to_float(tensor, source, floats);
    } else {
      // Integer outputs (ArgMax indices, ...) converted value by value.
      const ElementReader read = reader_for(tensor.data_type);
      for (size_t i = 0; i < elements; ++i) floats[i] = read(source, i);
    }
    if (format.type == DataType::kFloat16) {
      for (size_t i = 0; i < elements; ++i) {
        const Float16Bits half = float_to_half(floats[i]);
        std::memcpy(values + i * 2, &half, 2);
      }
    }
  }
  if (relayout_needed) {
    // Padding (NC1HWC2 channel blocks, strides) reads as zero.
    std::memset(destination, 0, required);
    relayout(tensor.shape, format, element_bytes, values, static_cast<uint8_t*>(destination), true);
  }
  return ok_status();
}

}  // namespace orknn::exec
