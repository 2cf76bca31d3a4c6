// Independent float formulations of the convolution family, written for the tests and never
// derived from the kernels under test: convolution on an explicitly padded input, transposed
// convolution as a scatter, and numpy matmul by broadcast index arithmetic. Shared by the
// float32 tests (test_convolution_ops.cc) and the bit-exact int8 tests, which feed them
// zero-point offsets instead of real values (test_convolution_int8_ops.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "common/op_test_harness.h"

namespace orknn::testing {

// 2-D geometry; 1-D cases use h = kh = 1.
struct Geometry {
  int64_t n = 1, c = 1, h = 1, w = 1, m = 1, kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t group = 1;
  int64_t out_pad_h = 0, out_pad_w = 0;  // ConvTranspose output_padding

  int64_t conv_out_h() const {
    return (h + pad_top + pad_bottom - dilation_h * (kh - 1) - 1) / stride_h + 1;
  }
  int64_t conv_out_w() const {
    return (w + pad_left + pad_right - dilation_w * (kw - 1) - 1) / stride_w + 1;
  }
  int64_t transpose_out_h() const {
    return stride_h * (h - 1) + out_pad_h + dilation_h * (kh - 1) + 1 - pad_top - pad_bottom;
  }
  int64_t transpose_out_w() const {
    return stride_w * (w - 1) + out_pad_w + dilation_w * (kw - 1) + 1 - pad_left - pad_right;
  }
};

// Convolution on an explicitly zero-padded copy of the input: no bounds checks in the sum.
std::vector<double> direct_conv(const Geometry& g, const std::vector<double>& x,
                                const std::vector<double>& w, const std::vector<double>& bias);

// Transposed convolution as a scatter of every input element through every kernel tap.
std::vector<double> scatter_conv_transpose(const Geometry& g, int64_t oh, int64_t ow,
                                           const std::vector<double>& x,
                                           const std::vector<double>& w,
                                           const std::vector<double>& bias);

// numpy matmul by explicit broadcast index arithmetic.
std::vector<double> direct_matmul(const graph::Shape& a_shape, const std::vector<float>& a,
                                  const graph::Shape& b_shape, const std::vector<float>& b,
                                  graph::Shape* out_shape);

// strides, dilations, pads and group of `g` as Conv / ConvTranspose attributes (1-D: width only).
Attributes window_attributes(const Geometry& g, bool one_d);

}  // namespace orknn::testing
