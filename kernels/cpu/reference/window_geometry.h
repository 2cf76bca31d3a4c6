// The 2-D sliding window that convolution, transposed convolution and pooling share, on NCHW
// tensors (a 1-D operator runs as 2-D with height 1). For convolution and pooling, output
// position o along an axis reads the input positions o * stride - pad_begin + tap * dilation
// (tap < kernel); positions outside the input are padding. The transposed convolution is the
// same relation with input and output exchanged, its pads cropping the full transposed output.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace orknn::kernels::reference {

struct Window2D {
  int64_t input_height = 1;
  int64_t input_width = 1;
  int64_t output_height = 1;
  int64_t output_width = 1;
  int64_t kernel_height = 1;
  int64_t kernel_width = 1;
  int64_t stride_height = 1;
  int64_t stride_width = 1;
  int64_t dilation_height = 1;
  int64_t dilation_width = 1;
  int64_t pad_top = 0;
  int64_t pad_left = 0;
  // The padded input ends here; pooling windows may run past it in ceil mode. Only the average
  // with count_include_pad reads these: elsewhere the output size bounds the windows.
  int64_t pad_bottom = 0;
  int64_t pad_right = 0;
};

// The same window over any number of spatial axes (3-D pooling, volumes): per axis, what
// Window2D holds per height and width. Fixed-size arrays keep the kernels allocation-free.
constexpr size_t kMaxSpatialRank = 6;
struct WindowND {
  size_t rank = 0;
  std::array<int64_t, kMaxSpatialRank> input{};
  std::array<int64_t, kMaxSpatialRank> output{};
  std::array<int64_t, kMaxSpatialRank> kernel{};
  std::array<int64_t, kMaxSpatialRank> stride{};
  std::array<int64_t, kMaxSpatialRank> dilation{};
  std::array<int64_t, kMaxSpatialRank> pad_begin{};
  std::array<int64_t, kMaxSpatialRank> pad_end{};
};

}  // namespace orknn::kernels::reference
