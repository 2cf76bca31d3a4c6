// Conversion between application buffers and the model's graph input/output tensors, shared by
// the copying API (rknn_inputs_set / rknn_outputs_get) and zero-copy bindings (rknn_set_io_mem),
// so both give bit-identical results.
//
// The model side is always the graph tensor's own representation: ONNX (NCHW) order, the model's
// data type and quantization. The application side has a type, a layout (NCHW, NHWC, NC1HWC2 or
// UNDEFINED) and optional row (w_stride) and per-batch height (h_stride) padding.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "graph/graph.h"

namespace orknn::exec {

enum class Layout { kNCHW, kNHWC, kNC1HWC2, kUndefined };
const char* layout_name(Layout layout);

// How the application presents a tensor's buffer.
struct UserTensorFormat {
  DataType type = DataType::kUInt8;
  Layout layout = Layout::kNHWC;
  bool pass_through = false;  // inputs: already in the model's type (no mean/std, no quantization)
  uint32_t w_stride = 0;      // pixels per stored row (NHWC, NC1HWC2); 0 = the width
  uint32_t h_stride = 0;      // rows per stored image (NHWC, NC1HWC2); 0 = the height
  uint32_t c2 = 0;            // channel block of NC1HWC2 (from the platform)
};

// Bytes an application buffer of `format` needs for a tensor of NCHW shape `shape` (any rank;
// strides and NC1HWC2 apply to 4-D shapes only).
uint64_t user_buffer_bytes(const graph::Shape& shape, const UserTensorFormat& format);
// The dims of `shape` (NCHW) as the application sees them in `layout`.
graph::Shape user_dims(const graph::Shape& shape, const UserTensorFormat& format);

// Writes graph input `input` (whose tensor has its current shape in `tensor`) from the
// application buffer `data` of `size` bytes: checks type, layout and size, then applies the
// layout change, mean/std and quantization. `scratch` is float staging of tensor.elements().
Status convert_input(size_t index, const graph::Tensor& tensor, const graph::GraphInput& input,
                     const void* data, uint64_t size, const UserTensorFormat& format,
                     std::vector<float>* scratch, uint8_t* destination);
// Checks that an input of `format` is acceptable for `tensor` without converting anything.
Status check_input_format(size_t index, const graph::Tensor& tensor,
                          const UserTensorFormat& format);

// Output types an application may ask for: the model's type, FLOAT32 (dequantized), and
// FLOAT16 for real-valued tensors.
Status check_output_format(size_t index, const graph::Tensor& tensor,
                           const UserTensorFormat& format);
// Writes graph output `tensor` (current shape) from `source` into `destination` in `format`.
// `scratch` holds the converted values before a layout change.
Status convert_output(size_t index, const graph::Tensor& tensor, const uint8_t* source,
                      const UserTensorFormat& format, std::vector<uint8_t>* scratch,
                      void* destination, uint64_t size);

}  // namespace orknn::exec
