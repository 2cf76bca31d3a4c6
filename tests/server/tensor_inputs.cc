#include "tensor_inputs.h"

#include <cmath>
#include <cstring>

namespace orknn::server_testing {

std::string InputVariant::name() const {
  if (pass_through) return "native pass-through";
  return std::string(get_type_string(dtype)) + " " + get_format_string(layout);
}

std::vector<InputVariant> input_variants() {
  std::vector<InputVariant> variants;
  for (rknn_tensor_type dtype :
       {RKNN_TENSOR_UINT8, RKNN_TENSOR_INT8, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_FLOAT16}) {
    for (rknn_tensor_format layout : {RKNN_TENSOR_NHWC, RKNN_TENSOR_NCHW}) {
      variants.push_back({dtype, layout, false});
    }
  }
  variants.push_back({RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, true});
  return variants;
}

uint16_t float_to_half(float value) {
  // Round to nearest even; enough for the finite values the tests use.
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent <= 0) return static_cast<uint16_t>(sign);  // tiny values flush to zero
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(half);
}

namespace {

size_t item_bytes(rknn_tensor_type dtype) {
  switch (dtype) {
    case RKNN_TENSOR_FLOAT32:
    case RKNN_TENSOR_INT32:
    case RKNN_TENSOR_UINT32:
      return 4;
    case RKNN_TENSOR_FLOAT16:
    case RKNN_TENSOR_INT16:
    case RKNN_TENSOR_UINT16:
      return 2;
    case RKNN_TENSOR_INT64:
      return 8;
    default:
      return 1;
  }
}

void append_value(std::string& out, rknn_tensor_type dtype, uint8_t pixel) {
  switch (dtype) {
    case RKNN_TENSOR_FLOAT32: {
      const float value = pixel;
      out.append(reinterpret_cast<const char*>(&value), 4);
      break;
    }
    case RKNN_TENSOR_FLOAT16: {
      const uint16_t value = float_to_half(pixel);
      out.append(reinterpret_cast<const char*>(&value), 2);
      break;
    }
    case RKNN_TENSOR_INT8:
      out.push_back(static_cast<char>(static_cast<int>(pixel) - 128));
      break;
    default:
      out.push_back(static_cast<char>(pixel));
      break;
  }
}

uint8_t pixel_at(uint32_t n, uint32_t h, uint32_t w, uint32_t c, uint32_t seed) {
  return static_cast<uint8_t>((n * 131 + h * 7 + w * 3 + c * 61 + seed * 17 + (h * w) % 13) & 0xFF);
}

}  // namespace

openrknn::server::v1::Tensor make_input_tensor(const rknn_tensor_attr& attribute,
                                               const rknn_tensor_attr& native,
                                               const InputVariant& variant, uint32_t seed) {
  openrknn::server::v1::Tensor tensor;
  tensor.set_index(attribute.index);
  if (variant.pass_through) {
    tensor.set_pass_through(true);
    tensor.set_dtype(static_cast<openrknn::server::v1::DataType>(native.type));
    tensor.set_layout(static_cast<openrknn::server::v1::Layout>(native.fmt));
    uint64_t elements = 1;
    for (uint32_t i = 0; i < native.n_dims; ++i) {
      tensor.add_shape(native.dims[i]);
      elements *= native.dims[i];
    }
    std::string data(elements * item_bytes(native.type), '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 29 + seed) & 0x7F);
    tensor.set_data(data);
    return tensor;
  }
  tensor.set_dtype(static_cast<openrknn::server::v1::DataType>(variant.dtype));
  const bool image = attribute.n_dims == 4 &&
                     (attribute.fmt == RKNN_TENSOR_NHWC || attribute.fmt == RKNN_TENSOR_NCHW);
  std::string data;
  if (!image) {
    tensor.set_layout(static_cast<openrknn::server::v1::Layout>(attribute.fmt));
    for (uint32_t i = 0; i < attribute.n_dims; ++i) tensor.add_shape(attribute.dims[i]);
    for (uint32_t i = 0; i < attribute.n_elems; ++i) {
      append_value(data, variant.dtype, pixel_at(0, i / 64, i % 64, 0, seed));
    }
    tensor.set_data(data);
    return tensor;
  }
  uint32_t n, c, h, w;
  if (attribute.fmt == RKNN_TENSOR_NHWC) {
    n = attribute.dims[0], h = attribute.dims[1], w = attribute.dims[2], c = attribute.dims[3];
  } else {
    n = attribute.dims[0], c = attribute.dims[1], h = attribute.dims[2], w = attribute.dims[3];
  }
  tensor.set_layout(static_cast<openrknn::server::v1::Layout>(variant.layout));
  if (variant.layout == RKNN_TENSOR_NHWC) {
    for (uint32_t d : {n, h, w, c}) tensor.add_shape(d);
    for (uint32_t in = 0; in < n; ++in)
      for (uint32_t ih = 0; ih < h; ++ih)
        for (uint32_t iw = 0; iw < w; ++iw)
          for (uint32_t ic = 0; ic < c; ++ic)
            append_value(data, variant.dtype, pixel_at(in, ih, iw, ic, seed));
  } else {
    for (uint32_t d : {n, c, h, w}) tensor.add_shape(d);
    for (uint32_t in = 0; in < n; ++in)
      for (uint32_t ic = 0; ic < c; ++ic)
        for (uint32_t ih = 0; ih < h; ++ih)
          for (uint32_t iw = 0; iw < w; ++iw)
            append_value(data, variant.dtype, pixel_at(in, ih, iw, ic, seed));
  }
  tensor.set_data(data);
  return tensor;
}

rknn_input to_rknn_input(const openrknn::server::v1::Tensor& tensor) {
  rknn_input input{};
  input.index = tensor.index();
  input.buf = const_cast<char*>(tensor.data().data());
  input.size = static_cast<uint32_t>(tensor.data().size());
  input.pass_through = tensor.pass_through() ? 1 : 0;
  input.type = static_cast<rknn_tensor_type>(tensor.dtype());
  input.fmt = static_cast<rknn_tensor_format>(tensor.layout());
  return input;
}

}  // namespace orknn::server_testing
