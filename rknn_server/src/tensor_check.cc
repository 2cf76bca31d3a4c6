#include "tensor_check.h"

#include <vector>

namespace orknn::server {

size_t element_bytes(uint32_t dtype) {
  switch (dtype) {
    case RKNN_TENSOR_FLOAT32:
    case RKNN_TENSOR_INT32:
    case RKNN_TENSOR_UINT32:
      return 4;
    case RKNN_TENSOR_FLOAT16:
    case RKNN_TENSOR_INT16:
    case RKNN_TENSOR_UINT16:
    case RKNN_TENSOR_BFLOAT16:
      return 2;
    case RKNN_TENSOR_INT8:
    case RKNN_TENSOR_UINT8:
    case RKNN_TENSOR_BOOL:
      return 1;
    case RKNN_TENSOR_INT64:
      return 8;
    default:
      return 0;
  }
}

std::string dims_text(const uint32_t* dims, size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text.empty() ? "scalar" : text;
}

std::string check_input_tensor(const openrknn::server::v1::Tensor& tensor,
                               const rknn_tensor_attr& attribute, const rknn_tensor_attr& native) {
  const std::string where = "input " + std::to_string(tensor.index()) + ": ";
  const uint32_t dtype = static_cast<uint32_t>(tensor.dtype());
  const size_t item = element_bytes(dtype);
  if (item == 0) {
    return where + "dtype " + std::to_string(dtype) +
           " is not a tensor type the server accepts (FLOAT32..UINT32, INT64, BOOL, BFLOAT16)";
  }
  const uint32_t layout = static_cast<uint32_t>(tensor.layout());
  if (layout >= RKNN_TENSOR_FORMAT_MAX) {
    return where + "layout " + std::to_string(layout) + " is not NCHW, NHWC, NC1HWC2 or UNDEFINED";
  }
  if (tensor.shape_size() > RKNN_MAX_DIMS) {
    return where + "shape has " + std::to_string(tensor.shape_size()) + " dims > " +
           std::to_string(RKNN_MAX_DIMS);
  }
  const std::vector<uint32_t> shape(tensor.shape().begin(), tensor.shape().end());
  uint64_t elements = 1;
  for (uint32_t dim : shape) {
    elements *= dim;
    if (elements > (1ull << 40))
      return where + "shape " + dims_text(shape.data(), shape.size()) + " is too large";
  }
  if (elements * item != tensor.data().size()) {
    return where + "data has " + std::to_string(tensor.data().size()) + " bytes but shape " +
           dims_text(shape.data(), shape.size()) + " of " +
           get_type_string(static_cast<rknn_tensor_type>(dtype)) + " needs " +
           std::to_string(elements * item);
  }
  if (tensor.pass_through()) {
    if (tensor.data().size() != native.size && tensor.data().size() != native.size_with_stride) {
      return where + "pass-through data has " + std::to_string(tensor.data().size()) +
             " bytes; the native tensor (" + dims_text(native.dims, native.n_dims) + " " +
             get_type_string(native.type) + " " + get_format_string(native.fmt) + ") needs " +
             std::to_string(native.size_with_stride ? native.size_with_stride : native.size);
    }
    return std::string();
  }
  if (elements != attribute.n_elems) {
    return where + "shape " + dims_text(shape.data(), shape.size()) + " has " +
           std::to_string(elements) + " elements; the model's input " +
           dims_text(attribute.dims, attribute.n_dims) + " has " +
           std::to_string(attribute.n_elems);
  }
  // Image tensors given in the other 4-D layout must be the same image, dims permuted.
  const bool image_layouts =
      (layout == RKNN_TENSOR_NCHW || layout == RKNN_TENSOR_NHWC) &&
      (attribute.fmt == RKNN_TENSOR_NCHW || attribute.fmt == RKNN_TENSOR_NHWC);
  if (image_layouts && attribute.n_dims == 4) {
    if (shape.size() != 4) {
      return where + "shape " + dims_text(shape.data(), shape.size()) + " is not 4-D like " +
             dims_text(attribute.dims, 4) + " " + get_format_string(attribute.fmt);
    }
    uint32_t expected[4];
    for (int i = 0; i < 4; ++i) expected[i] = attribute.dims[i];
    if (static_cast<uint32_t>(attribute.fmt) != layout) {
      // NCHW <-> NHWC: N, then H, W, C or C, H, W.
      if (layout == RKNN_TENSOR_NHWC) {
        const uint32_t n = attribute.dims[0], c = attribute.dims[1], h = attribute.dims[2],
                       w = attribute.dims[3];
        expected[0] = n, expected[1] = h, expected[2] = w, expected[3] = c;
      } else {
        const uint32_t n = attribute.dims[0], h = attribute.dims[1], w = attribute.dims[2],
                       c = attribute.dims[3];
        expected[0] = n, expected[1] = c, expected[2] = h, expected[3] = w;
      }
    }
    for (int i = 0; i < 4; ++i) {
      if (shape[i] != expected[i]) {
        return where + "shape " + dims_text(shape.data(), 4) + " " +
               get_format_string(static_cast<rknn_tensor_format>(layout)) + " should be " +
               dims_text(expected, 4) + " (the model's input is " + dims_text(attribute.dims, 4) +
               " " + get_format_string(attribute.fmt) + ")";
      }
    }
  }
  return std::string();
}

}  // namespace orknn::server
