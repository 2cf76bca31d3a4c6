// Reference kernels of the pooling family on float32 NCHW tensors: windowed max and average
// pooling in 2-D (a 1-D operator runs as 2-D with height 1) and global pooling over any number
// of spatial dimensions.
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
// inside the input yields the lowest finite float. `indices` may be null; otherwise it receives
// the flat input index of each maximum (first one on ties): plane * H * W + h * W + w, or
// plane * H * W + w * H + h when `column_major_indices` (ONNX storage_order 1).
void max_pool2d(const Pool2DShape& shape, const float* input, float* output, int64_t* indices,
                bool column_major_indices);

// Sum over the window taps inside the input, divided by the number of those taps, or with
// `count_include_pad` by the number of taps inside the padded input. An empty divisor yields 0.
void average_pool2d(const Pool2DShape& shape, bool count_include_pad, const float* input,
                    float* output);

// One value per plane of `plane_size` elements.
void global_average_pool(int64_t planes, int64_t plane_size, const float* input, float* output);
void global_max_pool(int64_t planes, int64_t plane_size, const float* input, float* output);

}  // namespace orknn::kernels::reference
