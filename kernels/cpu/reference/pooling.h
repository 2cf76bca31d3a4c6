// Reference kernels of the pooling family on float32 NCHW tensors: windowed max and average
// pooling in 2-D (a 1-D operator runs as 2-D with height 1) and over any number of spatial axes
// (3-D and up), and global pooling over any number of spatial dimensions.
#pragma once

#include <cstdint>

#include "reference/window_geometry.h"

namespace orknn::kernels::reference {

// Batch and channels are folded into `planes`: every plane is pooled independently.
struct Pool2DShape {
  int64_t planes = 1;
  Window2D window;
};

// Maximum over the window taps inside the input (padding never wins). A window with no tap
// inside the input yields the lowest finite value. `indices` may be null; otherwise it receives
// the flat input index of each maximum (first one on ties): plane * H * W + h * W + w, or
// plane * H * W + w * H + h when `column_major_indices` (ONNX storage_order 1).
// Element is float, or an integer type (int8, uint8, int16, int32, int64) for plain integer
// data, whose maximum needs no conversion.
template <typename Element>
void max_pool2d(const Pool2DShape& shape, const Element* input, Element* output, int64_t* indices,
                bool column_major_indices);

// Sum over the window taps inside the input, divided by the number of those taps, or with
// `count_include_pad` by the number of taps inside the padded input. An empty divisor yields 0.
void average_pool2d(const Pool2DShape& shape, bool count_include_pad, const float* input,
                    float* output);

// The same two over N spatial axes; max pooling indices are row-major over the spatial axes
// (plane * spatial size + flat spatial index).
struct PoolNDShape {
  int64_t planes = 1;
  WindowND window;
};
template <typename Element>
void max_pool_nd(const PoolNDShape& shape, const Element* input, Element* output, int64_t* indices);
void average_pool_nd(const PoolNDShape& shape, bool count_include_pad, const float* input,
                     float* output);

// One value per plane of `plane_size` elements.
void global_average_pool(int64_t planes, int64_t plane_size, const float* input, float* output);
void global_max_pool(int64_t planes, int64_t plane_size, const float* input, float* output);

}  // namespace orknn::kernels::reference
