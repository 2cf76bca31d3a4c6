// The neon table's 3x3 windows at stride 2 across (micro_kernels.h DepthwiseStride2Rows and
// MaxPoolStride2Rows): the float depthwise convolution and max pooling of MobileNet's and
// ResNet's downsampling layers, read in place. Without them the depthwise ran on the portable
// lanes driver and the pooling on the generic three-pass one.
//
// Four outputs x .. x + 3 of a kernel row read columns 2x - 1 .. 2x + 7. Two de-interleaving
// loads give every tap column at once: vld2q_f32 from column 2x - 1 splits the left taps
// (2x - 1, 2x + 1, ...) from the centre ones, and vld2q_f32 from 2x gives the centre and right
// ones. So the vector path takes outputs from x = 1 on, while column 2x + 7 is inside the row;
// the outputs at either end of a row, whose taps leave it, take the same arithmetic on taps
// gathered one by one (padding reads as zero).
//
// Depthwise: each output is depthwise_plane's chain (neon_micro_kernels.cc): the bias, then one
// fused multiply-add per tap in raster order, padded taps included as zeros. Four blocks of four
// outputs run side by side to keep four chains in flight.
//
// Max pooling: each output starts from its first tap inside the input and takes a later one
// only when strictly larger (vcgtq_f32 and a select, not vmaxq_f32, which returns NaN for a
// NaN operand): the reference's rule, NaNs and signed zeros included.
#include <arm_neon.h>

#include <cstddef>
#include <initializer_list>

#include "arm/neon_float_activation.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kLanes = 4;
constexpr size_t kTaps = 9;

// The three input rows of output row y, null for a kernel row in the padding.
struct KernelRows {
  const float* row[3];
};
KernelRows kernel_rows(const float* plane, size_t y, size_t stride_height, size_t pad_top,
                       size_t input_height, size_t width) {
  KernelRows rows{};
  for (size_t i = 0; i < 3; ++i) {
    const size_t padded = y * stride_height + i;
    const bool inside = padded >= pad_top && padded - pad_top < input_height;
    rows.row[i] = inside ? plane + (padded - pad_top) * width : nullptr;
  }
  return rows;
}

// Whether outputs x .. x + 3 all have their taps inside a row of `width` (x >= 1) and the
// second load's eight columns from 2x stay inside it.
bool vector_block(size_t x, size_t width) {
  return x >= 1 && 2 * x + 2 * kLanes <= width;
}

// The left, centre and right taps of outputs x .. x + 3 in one kernel row, from two loads.
struct RowTaps {
  float32x4_t left, centre, right;
};
RowTaps row_taps(const float* row, size_t x) {
  const float32x4x2_t from_centre = vld2q_f32(row + 2 * x);
  return {vld2q_f32(row + 2 * x - 1).val[0], from_centre.val[0], from_centre.val[1]};
}

// Whether padded column 2x + j of output x (input column 2x + j - 1) lies inside a row of
// `width`; if so, `column` is that input column.
bool tap_column(size_t x, size_t j, size_t width, size_t* column) {
  const size_t padded_column = 2 * x + j;
  if (padded_column < 1 || padded_column - 1 >= width) return false;
  *column = padded_column - 1;
  return true;
}

// The same taps read one by one, zero outside the row and for lanes past the output row.
void gather_taps(const KernelRows& rows, size_t x, size_t output_width, size_t width,
                 float32x4_t taps[kTaps]) {
  float values[kTaps][kLanes] = {};
  for (size_t lane = 0; lane < kLanes && x + lane < output_width; ++lane) {
    for (size_t i = 0; i < 3; ++i) {
      if (rows.row[i] == nullptr) continue;
      for (size_t j = 0; j < 3; ++j) {
        size_t column;
        if (tap_column(x + lane, j, width, &column)) values[3 * i + j][lane] = rows.row[i][column];
      }
    }
  }
  for (size_t t = 0; t < kTaps; ++t) taps[t] = vld1q_f32(values[t]);
}

void store_block(float* output, size_t x, size_t output_width, float32x4_t value) {
  if (x + kLanes <= output_width) {
    vst1q_f32(output + x, value);
    return;
  }
  float values[kLanes];
  vst1q_f32(values, value);
  for (size_t lane = 0; x + lane < output_width; ++lane) output[x + lane] = values[lane];
}

float32x4_t finish(float32x4_t sum, const FloatActivation* activation) {
  return activation ? neon_float::activate(*activation, sum) : sum;
}

// `Blocks` vector blocks of four outputs from x on, one chain each, interleaved kernel row by
// kernel row (nine taps of four blocks would not fit the 32 registers).
template <size_t Blocks>
void depthwise_vector_blocks(const KernelRows& rows, size_t x, const float* weights, float bias,
                             const FloatActivation* activation, float* output) {
  float32x4_t sums[Blocks];
  for (size_t b = 0; b < Blocks; ++b) sums[b] = vdupq_n_f32(bias);
  for (size_t i = 0; i < 3; ++i) {
    const float* w = weights + 3 * i;
    for (size_t b = 0; b < Blocks; ++b) {
      const float32x4_t zero = vdupq_n_f32(0.0f);
      const RowTaps taps =
          rows.row[i] ? row_taps(rows.row[i], x + b * kLanes) : RowTaps{zero, zero, zero};
      sums[b] = vfmaq_n_f32(sums[b], taps.left, w[0]);
      sums[b] = vfmaq_n_f32(sums[b], taps.centre, w[1]);
      sums[b] = vfmaq_n_f32(sums[b], taps.right, w[2]);
    }
  }
  for (size_t b = 0; b < Blocks; ++b) {
    vst1q_f32(output + x + b * kLanes, finish(sums[b], activation));
  }
}

// The block of outputs x .. x + 3 (those below output_width) on gathered taps.
void depthwise_gathered_block(const KernelRows& rows, size_t x, size_t output_width, size_t width,
                              const float* weights, float bias, const FloatActivation* activation,
                              float* output) {
  float32x4_t taps[kTaps];
  gather_taps(rows, x, output_width, width, taps);
  float32x4_t sum = vdupq_n_f32(bias);
  for (size_t t = 0; t < kTaps; ++t) sum = vfmaq_n_f32(sum, taps[t], weights[t]);
  store_block(output, x, output_width, finish(sum, activation));
}

// Output x of a row by the reference's rule, for the outputs the vector path leaves out.
float max_of_window(const KernelRows& rows, size_t x, size_t width) {
  bool found = false;
  float best = 0.0f;
  for (size_t i = 0; i < 3; ++i) {
    if (rows.row[i] == nullptr) continue;
    for (size_t j = 0; j < 3; ++j) {
      size_t column;
      if (!tap_column(x, j, width, &column)) continue;
      const float tap = rows.row[i][column];
      if (!found || tap > best) best = tap;
      found = true;
    }
  }
  return best;  // the driver only asks for outputs with a tap inside
}

}  // namespace

void neon_depthwise_stride2_rows(const DepthwiseStride2Rows& rows) {
  const size_t width = rows.input_width;
  const size_t output_width = rows.output_width;
  for (size_t c = 0; c < rows.channels; ++c) {
    const float* weights = rows.weights + c * kTaps;
    const float bias = rows.bias ? rows.bias[c] : 0.0f;
    const float* plane = rows.input + c * rows.input_height * width;
    float* output = rows.output + c * rows.output_height * output_width;
    for (size_t y = 0; y < rows.output_height; ++y, output += output_width) {
      const KernelRows kernel =
          kernel_rows(plane, y, rows.stride_height, rows.pad_top, rows.input_height, width);
      // Output 0's left tap is padding: it goes with the gathered ones.
      depthwise_gathered_block(kernel, 0, 1, width, weights, bias, rows.activation, output);
      size_t x = 1;
      for (; x + 4 * kLanes <= output_width && vector_block(x + 3 * kLanes, width);
           x += 4 * kLanes) {
        depthwise_vector_blocks<4>(kernel, x, weights, bias, rows.activation, output);
      }
      for (; x + kLanes <= output_width && vector_block(x, width); x += kLanes) {
        depthwise_vector_blocks<1>(kernel, x, weights, bias, rows.activation, output);
      }
      for (; x < output_width; x += kLanes) {
        depthwise_gathered_block(kernel, x, output_width, width, weights, bias, rows.activation,
                                 output);
      }
    }
  }
}

void neon_max_pool_stride2_rows(const MaxPoolStride2Rows& rows) {
  const size_t width = rows.input_width;
  const size_t output_width = rows.output_width;
  for (size_t p = 0; p < rows.planes; ++p) {
    const float* plane = rows.input + p * rows.input_height * width;
    float* output = rows.output + p * rows.output_height * output_width;
    for (size_t y = 0; y < rows.output_height; ++y, output += output_width) {
      const KernelRows kernel =
          kernel_rows(plane, y, rows.stride_height, rows.pad_top, rows.input_height, width);
      output[0] = max_of_window(kernel, 0, width);
      size_t x = 1;
      for (; x + kLanes <= output_width && vector_block(x, width); x += kLanes) {
        bool found = false;
        float32x4_t best = vdupq_n_f32(0.0f);
        for (size_t i = 0; i < 3; ++i) {
          if (kernel.row[i] == nullptr) continue;
          const RowTaps row = row_taps(kernel.row[i], x);
          for (const float32x4_t tap : {row.left, row.centre, row.right}) {
            best = found ? vbslq_f32(vcgtq_f32(tap, best), tap, best) : tap;
            found = true;
          }
        }
        vst1q_f32(output + x, best);
      }
      for (; x < output_width; ++x) output[x] = max_of_window(kernel, x, width);
    }
  }
}

}  // namespace orknn::kernels::cpu::optimized
