// The layout half of I/O conversion, shared by the input and output paths: the application
// buffer's size and dims (user_buffer_bytes, user_dims, layout_name of io_conversion.h), the
// bound on its strides and the element copy between its layout and NCHW (io_layout.h). Separate
// from input_conversion.cc and output_conversion.cc so neither path owns what both use.
#include "exec/io_layout.h"

#include <cstring>

namespace orknn::exec {
namespace {

// NHWC (with its row and image padding) <-> NCHW, element by element in the element's own
// type: a loop per pixel row instead of a memcpy call and a layout switch per element (yolov5s's
// 640x640x3 input took 4 ms that way, as long as several of its convolutions).
template <size_t kBytes>
void relayout_nhwc(const UserBufferGeometry& g, const uint8_t* from, uint8_t* to, bool to_user) {
  // Fixed-size copies compile to plain moves, whatever the buffers' alignment.
  constexpr auto k = static_cast<int64_t>(kBytes);
  const int64_t plane = g.height * g.width;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t h = 0; h < g.height; ++h) {
      const int64_t user_row = ((n * g.stored_height + h) * g.stored_width) * g.channels;
      const int64_t nchw_row = n * g.channels * plane + h * g.width;
      for (int64_t c = 0; c < g.channels; ++c) {
        const int64_t user = user_row + c;  // element (w, c) at user + w x channels
        const int64_t nchw = nchw_row + c * plane;
        if (to_user) {
          for (int64_t w = 0; w < g.width; ++w) {
            std::memcpy(to + (user + w * g.channels) * k, from + (nchw + w) * k, kBytes);
          }
        } else {
          for (int64_t w = 0; w < g.width; ++w) {
            std::memcpy(to + (nchw + w) * k, from + (user + w * g.channels) * k, kBytes);
          }
        }
      }
    }
  }
}

}  // namespace

void relayout(const graph::Shape& shape, const UserTensorFormat& format, size_t element_bytes,
              const uint8_t* source, uint8_t* destination, bool to_user) {
  const UserBufferGeometry geometry(shape, format);
  if (geometry.layout == Layout::kNHWC) {
    switch (element_bytes) {
      case 1:
        return relayout_nhwc<1>(geometry, source, destination, to_user);
      case 2:
        return relayout_nhwc<2>(geometry, source, destination, to_user);
      case 4:
        return relayout_nhwc<4>(geometry, source, destination, to_user);
      case 8:
        return relayout_nhwc<8>(geometry, source, destination, to_user);
      default:
        break;
    }
  }
  int64_t linear = 0;
  for (int64_t n = 0; n < geometry.batch; ++n)
    for (int64_t c = 0; c < geometry.channels; ++c)
      for (int64_t h = 0; h < geometry.height; ++h)
        for (int64_t w = 0; w < geometry.width; ++w, ++linear) {
          const int64_t user = geometry.offset(n, c, h, w);
          if (to_user) {
            std::memcpy(destination + user * element_bytes, source + linear * element_bytes,
                        element_bytes);
          } else {
            std::memcpy(destination + linear * element_bytes, source + user * element_bytes,
                        element_bytes);
          }
        }
}

std::string describe_format(const graph::Shape& dims, DataType type) {
  return str_cat(graph::shape_to_string(dims), " ", data_type_name(type));
}

// Strides come straight from the application's attr: bound them before any size is computed
// from them, so no product can overflow.
Status check_padding(bool is_input, size_t index, const graph::Tensor& tensor,
                     const UserTensorFormat& format) {
  constexpr uint64_t kLargestStride = 1u << 24;
  constexpr uint64_t kLargestBuffer = uint64_t{1} << 40;
  const StatusCode code = is_input ? StatusCode::kInvalidInput : StatusCode::kInvalidOutput;
  const char* kind = is_input ? "input " : "output ";
  if (format.w_stride > kLargestStride || format.h_stride > kLargestStride) {
    return make_error(code, kind, index, " ('", tensor.name, "'): w_stride ", format.w_stride,
                      " / h_stride ", format.h_stride, " exceed the largest supported stride ",
                      kLargestStride);
  }
  if (tensor.shape.size() != 4) return ok_status();
  const UserBufferGeometry geometry(tensor.shape, format);
  uint64_t bytes = element_size(format.type);
  for (int64_t factor :
       {geometry.batch, geometry.c1 * geometry.c2, geometry.stored_height, geometry.stored_width}) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(factor), &bytes) ||
        bytes > kLargestBuffer) {
      return make_error(code, kind, index, " ('", tensor.name, "'): the strides give a buffer ",
                        "larger than ", kLargestBuffer, " bytes");
    }
  }
  return ok_status();
}

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

uint64_t user_buffer_bytes(const graph::Shape& shape, const UserTensorFormat& format) {
  const uint64_t element_bytes = element_size(format.type);
  if (shape.size() != 4) return static_cast<uint64_t>(graph::element_count(shape)) * element_bytes;
  return static_cast<uint64_t>(UserBufferGeometry(shape, format).stored_elements()) * element_bytes;
}

graph::Shape user_dims(const graph::Shape& shape, const UserTensorFormat& format) {
  if (shape.size() != 4) return shape;
  if (format.layout == Layout::kNHWC) return {shape[0], shape[2], shape[3], shape[1]};
  if (format.layout == Layout::kNC1HWC2) {
    const UserBufferGeometry geometry(shape, format);
    return {shape[0], geometry.c1, shape[2], shape[3], geometry.c2};
  }
  return shape;
}

}  // namespace orknn::exec
