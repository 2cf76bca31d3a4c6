#include "kernels/convolution_formulas.h"

#include <algorithm>

namespace orknn::testing {

using graph::Shape;

std::vector<double> direct_conv(const Geometry& g, const std::vector<double>& x,
                                const std::vector<double>& w, const std::vector<double>& bias) {
  const int64_t ph = g.h + g.pad_top + g.pad_bottom, pw = g.w + g.pad_left + g.pad_right;
  std::vector<double> padded(static_cast<size_t>(g.n * g.c * ph * pw), 0.0);
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t y = 0; y < g.h; ++y)
      for (int64_t xx = 0; xx < g.w; ++xx)
        padded[(p * ph + y + g.pad_top) * pw + xx + g.pad_left] = x[(p * g.h + y) * g.w + xx];
  const int64_t oh = g.conv_out_h(), ow = g.conv_out_w();
  const int64_t cpg = g.c / g.group, mpg = g.m / g.group;
  std::vector<double> out;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = bias.empty() ? 0.0 : bias[m];
          for (int64_t cg = 0; cg < cpg; ++cg) {
            const int64_t c = (m / mpg) * cpg + cg;
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx)
                sum += padded[((n * g.c + c) * ph + oy * g.stride_h + ky * g.dilation_h) * pw +
                              ox * g.stride_w + kx * g.dilation_w] *
                       w[((m * cpg + cg) * g.kh + ky) * g.kw + kx];
          }
          out.push_back(sum);
        }
  return out;
}

std::vector<double> scatter_conv_transpose(const Geometry& g, int64_t oh, int64_t ow,
                                           const std::vector<double>& x,
                                           const std::vector<double>& w,
                                           const std::vector<double>& bias) {
  const int64_t cpg = g.c / g.group, mpg = g.m / g.group;
  std::vector<double> out(static_cast<size_t>(g.n * g.m * oh * ow), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t iy = 0; iy < g.h; ++iy)
        for (int64_t ix = 0; ix < g.w; ++ix)
          for (int64_t mg = 0; mg < mpg; ++mg)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t oy = iy * g.stride_h + ky * g.dilation_h - g.pad_top;
                const int64_t ox = ix * g.stride_w + kx * g.dilation_w - g.pad_left;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const int64_t m = (c / cpg) * mpg + mg;
                out[((n * g.m + m) * oh + oy) * ow + ox] +=
                    x[((n * g.c + c) * g.h + iy) * g.w + ix] *
                    w[((c * mpg + mg) * g.kh + ky) * g.kw + kx];
              }
  if (!bias.empty()) {
    for (size_t i = 0; i < out.size(); ++i) out[i] += bias[(i / (oh * ow)) % g.m];
  }
  return out;
}

std::vector<double> direct_matmul(const Shape& a_shape, const std::vector<float>& a,
                                  const Shape& b_shape, const std::vector<float>& b,
                                  Shape* out_shape) {
  Shape as = a_shape, bs = b_shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const size_t rank = std::max(as.size(), bs.size());
  while (as.size() < rank) as.insert(as.begin(), 1);
  while (bs.size() < rank) bs.insert(bs.begin(), 1);
  Shape batch;
  for (size_t d = 0; d + 2 < rank; ++d) batch.push_back(std::max(as[d], bs[d]));
  std::vector<double> y;
  for (int64_t index = 0; index < graph::element_count(batch); ++index) {
    int64_t rest = index, a_offset = 0, b_offset = 0, a_stride = 1, b_stride = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t coordinate = rest % batch[d];
      rest /= batch[d];
      a_offset += (as[d] == 1 ? 0 : coordinate) * a_stride;
      b_offset += (bs[d] == 1 ? 0 : coordinate) * b_stride;
      a_stride *= as[d];
      b_stride *= bs[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(a[(a_offset * m + i) * k + p]) * b[(b_offset * k + p) * n + j];
        y.push_back(sum);
      }
  }
  *out_shape = batch;
  if (a_shape.size() > 1) out_shape->push_back(m);
  if (b_shape.size() > 1) out_shape->push_back(n);
  return y;
}

Attributes window_attributes(const Geometry& g, bool one_d) {
  if (one_d) {
    return {{"strides", attr_ints({g.stride_w})},
            {"dilations", attr_ints({g.dilation_w})},
            {"pads", attr_ints({g.pad_left, g.pad_right})},
            {"group", attr_int(g.group)}};
  }
  return {{"strides", attr_ints({g.stride_h, g.stride_w})},
          {"dilations", attr_ints({g.dilation_h, g.dilation_w})},
          {"pads", attr_ints({g.pad_top, g.pad_left, g.pad_bottom, g.pad_right})},
          {"group", attr_int(g.group)}};
}

}  // namespace orknn::testing
