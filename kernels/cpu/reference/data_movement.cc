#include "reference/data_movement.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace orknn::kernels::reference {
namespace {

using Bytes = const uint8_t*;

int64_t product(const std::vector<int64_t>& dims, size_t first) {
  int64_t result = 1;
  for (size_t i = first; i < dims.size(); ++i) result *= dims[i];
  return result;
}

// Contiguous strides (in elements) of a row-major shape.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  for (size_t k = 0; k < shape.size(); ++k) strides[k] = product(shape, k + 1);
  return strides;
}

// Copies the output sub-tensor of axes [axis, rank) whose first input element is `input`;
// advances `output` past what it wrote.
void strided_copy_axis(size_t element_size, const StridedCopyParams& params, size_t axis,
                       Bytes input, uint8_t*& output) {
  const int64_t count = params.output_shape[axis];
  const ptrdiff_t stride_bytes =
      static_cast<ptrdiff_t>(params.input_strides[axis]) * static_cast<ptrdiff_t>(element_size);
  const bool innermost = axis + 1 == params.output_shape.size();
  for (int64_t o = 0; o < count; ++o) {
    Bytes source = input + o * stride_bytes;
    if (innermost) {
      std::memcpy(output, source, element_size);
      output += element_size;
    } else {
      strided_copy_axis(element_size, params, axis + 1, source, output);
    }
  }
}

// Where output coordinate `o` of one axis reads from, or -1 for the padding constant.
int64_t pad_source_index(int64_t o, int64_t begin, int64_t dim, PadMode mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : dim - 1;
    case PadMode::kReflect:
      // The shape function guarantees one reflection reaches (pad <= dim - 1).
      return i < 0 ? -i : 2 * (dim - 1) - i;
    case PadMode::kWrap:
      // Periodic continuation, any number of periods (numpy's wrap).
      return ((i % dim) + dim) % dim;
  }
  return -1;
}

struct PadWalk {
  size_t element_size;
  const PadParams& params;
  Bytes constant_element;

  void fill_constant(int64_t elements, uint8_t*& output) const {
    for (int64_t e = 0; e < elements; ++e) {
      std::memcpy(output, constant_element, element_size);
      output += element_size;
    }
  }

  // Writes the output sub-tensor of axes [axis, rank) reading the input sub-tensor at `input`.
  void axis(size_t axis_index, Bytes input, uint8_t*& output) const {
    const std::vector<int64_t>& shape = params.input_shape;
    const int64_t dim = shape[axis_index];
    const int64_t begin = params.pads_begin[axis_index];
    const int64_t output_dim = dim + begin + params.pads_end[axis_index];
    const size_t rank = shape.size();
    int64_t output_block = 1;  // output elements below this axis
    for (size_t k = axis_index + 1; k < rank; ++k) {
      output_block *= shape[k] + params.pads_begin[k] + params.pads_end[k];
    }
    const ptrdiff_t input_block_bytes =
        static_cast<ptrdiff_t>(product(shape, axis_index + 1) * static_cast<int64_t>(element_size));
    for (int64_t o = 0; o < output_dim; ++o) {
      const int64_t i = pad_source_index(o, begin, dim, params.mode);
      if (i < 0) {
        fill_constant(output_block, output);
      } else if (axis_index + 1 == rank) {
        std::memcpy(output, input + i * input_block_bytes, element_size);
        output += element_size;
      } else {
        this->axis(axis_index + 1, input + i * input_block_bytes, output);
      }
    }
  }
};

// --- Cast ---------------------------------------------------------------------------------

bool is_float_type(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16;
}

template <typename Value>
Value load(Bytes address) {
  Value value;
  std::memcpy(&value, address, sizeof(value));
  return value;
}

template <typename Value>
void store(Value value, uint8_t* address) {
  std::memcpy(address, &value, sizeof(value));
}

// Float source types widen exactly to double.
double load_real(DataType type, Bytes address) {
  if (type == DataType::kFloat16) return half_to_float(load<Float16Bits>(address));
  return load<float>(address);
}

int64_t load_integer(DataType type, Bytes address) {
  switch (type) {
    case DataType::kInt8:
      return load<int8_t>(address);
    case DataType::kUInt8:
      return load<uint8_t>(address);
    case DataType::kInt16:
      return load<int16_t>(address);
    case DataType::kInt32:
      return load<int32_t>(address);
    case DataType::kInt64:
      return load<int64_t>(address);
    case DataType::kBool:
      return load<uint8_t>(address) != 0 ? 1 : 0;
    default:
      return 0;  // float types go through load_real
  }
}

// Truncates toward zero and saturates to [low, high]; NaN becomes 0.
int64_t truncate_saturating(double value, double low, double high) {
  if (std::isnan(value)) return 0;
  if (value <= low) return static_cast<int64_t>(low);
  if (value >= high) return static_cast<int64_t>(high);
  return static_cast<int64_t>(value);
}

void store_from_real(double value, DataType type, uint8_t* address) {
  switch (type) {
    case DataType::kFloat32:
      return store(static_cast<float>(value), address);
    case DataType::kFloat16:
      return store(float_to_half(static_cast<float>(value)), address);
    case DataType::kInt8:
      return store(static_cast<int8_t>(truncate_saturating(value, -128.0, 127.0)), address);
    case DataType::kUInt8:
      return store(static_cast<uint8_t>(truncate_saturating(value, 0.0, 255.0)), address);
    case DataType::kInt16:
      return store(static_cast<int16_t>(truncate_saturating(value, -32768.0, 32767.0)), address);
    case DataType::kInt32:
      return store(static_cast<int32_t>(truncate_saturating(value, -2147483648.0, 2147483647.0)),
                   address);
    case DataType::kInt64: {
      // 2^63 is not representable in int64, so the upper bound is handled before conversion.
      int64_t result;
      if (std::isnan(value)) {
        result = 0;
      } else if (value >= 9223372036854775808.0) {
        result = std::numeric_limits<int64_t>::max();
      } else if (value <= -9223372036854775808.0) {
        result = std::numeric_limits<int64_t>::min();
      } else {
        result = static_cast<int64_t>(value);
      }
      return store(result, address);
    }
    case DataType::kBool:
      return store(static_cast<uint8_t>(value != 0.0 ? 1 : 0), address);
  }
}

// Narrowing keeps the low bits (two's complement wrap-around).
void store_from_integer(int64_t value, DataType type, uint8_t* address) {
  const uint64_t bits = static_cast<uint64_t>(value);
  switch (type) {
    case DataType::kFloat32:
      return store(static_cast<float>(value), address);
    case DataType::kFloat16:
      return store(float_to_half(static_cast<float>(value)), address);
    case DataType::kInt8:
      return store(static_cast<int8_t>(static_cast<uint8_t>(bits)), address);
    case DataType::kUInt8:
      return store(static_cast<uint8_t>(bits), address);
    case DataType::kInt16:
      return store(static_cast<int16_t>(static_cast<uint16_t>(bits)), address);
    case DataType::kInt32:
      return store(static_cast<int32_t>(static_cast<uint32_t>(bits)), address);
    case DataType::kInt64:
      return store(value, address);
    case DataType::kBool:
      return store(static_cast<uint8_t>(value != 0 ? 1 : 0), address);
  }
}

}  // namespace

void concat(size_t element_size, const ConcatParams& params, const void* const* inputs,
            void* output) {
  auto* destination = static_cast<uint8_t*>(output);
  for (int64_t outer = 0; outer < params.outer; ++outer) {
    for (size_t piece = 0; piece < params.axis_sizes.size(); ++piece) {
      const size_t chunk =
          static_cast<size_t>(params.axis_sizes[piece] * params.inner) * element_size;
      if (chunk == 0) continue;  // an empty input may have no buffer at all
      std::memcpy(destination, static_cast<Bytes>(inputs[piece]) + outer * chunk, chunk);
      destination += chunk;
    }
  }
}

void split(size_t element_size, const ConcatParams& params, const void* input,
           void* const* outputs) {
  Bytes source = static_cast<Bytes>(input);
  for (int64_t outer = 0; outer < params.outer; ++outer) {
    for (size_t piece = 0; piece < params.axis_sizes.size(); ++piece) {
      const size_t chunk =
          static_cast<size_t>(params.axis_sizes[piece] * params.inner) * element_size;
      if (chunk == 0) continue;  // an empty output may have no buffer at all
      std::memcpy(static_cast<uint8_t*>(outputs[piece]) + outer * chunk, source, chunk);
      source += chunk;
    }
  }
}

void strided_copy(size_t element_size, const StridedCopyParams& params, const void* input,
                  void* output) {
  if (product(params.output_shape, 0) == 0) return;  // nothing to read or write
  Bytes first = static_cast<Bytes>(input) +
                static_cast<ptrdiff_t>(params.input_offset) * static_cast<ptrdiff_t>(element_size);
  auto* destination = static_cast<uint8_t*>(output);
  if (params.output_shape.empty()) {  // a scalar
    std::memcpy(destination, first, element_size);
    return;
  }
  strided_copy_axis(element_size, params, 0, first, destination);
}

StridedCopyParams slice_layout(const SliceParams& params) {
  const std::vector<int64_t> strides = contiguous_strides(params.input_shape);
  StridedCopyParams layout;
  layout.output_shape = params.output_shape;
  layout.input_strides.resize(strides.size());
  for (size_t k = 0; k < strides.size(); ++k) {
    layout.input_strides[k] = params.steps[k] * strides[k];
    // An empty axis reads nothing; its start may legitimately equal the dim.
    if (params.output_shape[k] > 0) layout.input_offset += params.starts[k] * strides[k];
  }
  return layout;
}

StridedCopyParams transpose_layout(const std::vector<int64_t>& input_shape,
                                   const std::vector<int64_t>& perm) {
  const std::vector<int64_t> strides = contiguous_strides(input_shape);
  StridedCopyParams layout;
  for (int64_t axis : perm) {
    layout.output_shape.push_back(input_shape[static_cast<size_t>(axis)]);
    layout.input_strides.push_back(strides[static_cast<size_t>(axis)]);
  }
  return layout;
}

void pad(size_t element_size, const PadParams& params, const void* input,
         const void* constant_element, void* output) {
  int64_t output_elements = 1;
  for (size_t k = 0; k < params.input_shape.size(); ++k) {
    output_elements *= params.input_shape[k] + params.pads_begin[k] + params.pads_end[k];
  }
  if (output_elements == 0) return;
  auto* destination = static_cast<uint8_t*>(output);
  if (params.input_shape.empty()) {  // a scalar has nothing to pad
    std::memcpy(destination, input, element_size);
    return;
  }
  const PadWalk walk{element_size, params, static_cast<Bytes>(constant_element)};
  walk.axis(0, static_cast<Bytes>(input), destination);
}

void copy_bytes(size_t bytes, const void* input, void* output) {
  if (bytes != 0 && input != output) std::memcpy(output, input, bytes);
}

void cast(DataType source_type, const void* source, DataType destination_type, void* destination,
          int64_t count) {
  const size_t source_size = element_size(source_type);
  const size_t destination_size = element_size(destination_type);
  Bytes from = static_cast<Bytes>(source);
  auto* to = static_cast<uint8_t*>(destination);
  for (int64_t i = 0; i < count; ++i) {
    if (is_float_type(source_type)) {
      store_from_real(load_real(source_type, from), destination_type, to);
    } else {
      store_from_integer(load_integer(source_type, from), destination_type, to);
    }
    from += source_size;
    to += destination_size;
  }
}

}  // namespace orknn::kernels::reference
