// Internal to exec/: how an application buffer of a UserTensorFormat is laid out (where each
// element sits, how large the buffer is, how its strides are bounded) and the element-by-element
// copy between that layout and the graph tensor's NCHW order. Both the input path
// (input_conversion.cc) and the output path (output_conversion.cc) need these, so they live here
// once; the public API stays in io_conversion.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "exec/io_conversion.h"
#include "graph/graph.h"

namespace orknn::exec {

// Where logical element (n, c, h, w) of a 4-D NCHW tensor sits, in elements, inside an
// application buffer of some layout with optional padding.
struct UserBufferGeometry {
  int64_t batch, channels, height, width;
  int64_t stored_height, stored_width;  // with h_stride / w_stride
  int64_t c2 = 1, c1 = 1;
  Layout layout;

  UserBufferGeometry(const graph::Shape& shape, const UserTensorFormat& format)
      : batch(shape[0]),
        channels(shape[1]),
        height(shape[2]),
        width(shape[3]),
        stored_height(format.h_stride > height ? format.h_stride : height),
        stored_width(format.w_stride > width ? format.w_stride : width),
        layout(format.layout) {
    if (layout == Layout::kNC1HWC2) {
      c2 = format.c2 > 0 ? format.c2 : 1;
      c1 = (channels + c2 - 1) / c2;
    }
    // Padding applies to the layouts whose rows are pixels.
    if (layout != Layout::kNHWC && layout != Layout::kNC1HWC2) {
      stored_height = height;
      stored_width = width;
    }
  }

  int64_t offset(int64_t n, int64_t c, int64_t h, int64_t w) const {
    switch (layout) {
      case Layout::kNHWC:
        return ((n * stored_height + h) * stored_width + w) * channels + c;
      case Layout::kNC1HWC2:
        return (((n * c1 + c / c2) * stored_height + h) * stored_width + w) * c2 + c % c2;
      default:
        return ((n * channels + c) * height + h) * width + w;
    }
  }

  int64_t stored_elements() const {
    switch (layout) {
      case Layout::kNHWC:
        return batch * stored_height * stored_width * channels;
      case Layout::kNC1HWC2:
        return batch * c1 * stored_height * stored_width * c2;
      default:
        return batch * channels * height * width;
    }
  }
};

// A 4-D tensor in a layout other than its own order needs element-by-element placement.
inline bool needs_relayout(const graph::Shape& shape, const UserTensorFormat& format) {
  if (shape.size() != 4) return false;
  if (format.layout == Layout::kNHWC || format.layout == Layout::kNC1HWC2) return true;
  return false;
}

// Copies whole elements between NCHW order (`nchw`) and the application's layout (`user`):
// `to_user` picks the direction (outputs true, pass-through inputs false).
void relayout(const graph::Shape& shape, const UserTensorFormat& format, size_t element_bytes,
              const uint8_t* source, uint8_t* destination, bool to_user);

// "1x2x2x3 UINT8": the dims and type an application buffer must have, for size errors.
std::string describe_format(const graph::Shape& dims, DataType type);

// Refuses an application's w_stride / h_stride (or the buffer they give) too large to size
// safely; `is_input` picks the error code and wording.
Status check_padding(bool is_input, size_t index, const graph::Tensor& tensor,
                     const UserTensorFormat& format);

}  // namespace orknn::exec
