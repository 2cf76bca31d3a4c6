#include "reference/pooling.h"

#include <limits>

namespace orknn::kernels::reference {
namespace {

// Calls visit(output_index, plane, first_row, first_column) for every output element; the
// window's taps are first + k * dilation.
template <typename Visit>
void for_each_window(const Pool2DShape& s, Visit&& visit) {
  int64_t index = 0;
  for (int64_t plane = 0; plane < s.planes; ++plane) {
    for (int64_t oh = 0; oh < s.output_height; ++oh) {
      for (int64_t ow = 0; ow < s.output_width; ++ow) {
        visit(index++, plane, oh * s.stride_height - s.pad_top, ow * s.stride_width - s.pad_left);
      }
    }
  }
}

bool inside(int64_t position, int64_t low, int64_t high) {
  return position >= low && position < high;
}

}  // namespace

void max_pool2d(const Pool2DShape& s, const float* input, float* output, int64_t* indices,
                bool column_major_indices) {
  for_each_window(s, [&](int64_t index, int64_t plane, int64_t row0, int64_t column0) {
    const float* plane_input = input + plane * s.input_height * s.input_width;
    float best = std::numeric_limits<float>::lowest();
    int64_t best_row = -1, best_column = -1;
    for (int64_t kh = 0; kh < s.kernel_height; ++kh) {
      const int64_t row = row0 + kh * s.dilation_height;
      if (!inside(row, 0, s.input_height)) continue;
      for (int64_t kw = 0; kw < s.kernel_width; ++kw) {
        const int64_t column = column0 + kw * s.dilation_width;
        if (!inside(column, 0, s.input_width)) continue;
        const float value = plane_input[row * s.input_width + column];
        if (best_row < 0 || value > best) {
          best = value;
          best_row = row;
          best_column = column;
        }
      }
    }
    output[index] = best;
    if (indices) {
      const int64_t within = best_row < 0           ? 0
                             : column_major_indices ? best_column * s.input_height + best_row
                                                    : best_row * s.input_width + best_column;
      indices[index] = plane * s.input_height * s.input_width + within;
    }
  });
}

void average_pool2d(const Pool2DShape& s, bool count_include_pad, const float* input,
                    float* output) {
  for_each_window(s, [&](int64_t index, int64_t plane, int64_t row0, int64_t column0) {
    const float* plane_input = input + plane * s.input_height * s.input_width;
    float sum = 0.0f;
    int64_t inside_input = 0, inside_padded = 0;
    for (int64_t kh = 0; kh < s.kernel_height; ++kh) {
      const int64_t row = row0 + kh * s.dilation_height;
      const bool row_padded = inside(row, -s.pad_top, s.input_height + s.pad_bottom);
      const bool row_inside = inside(row, 0, s.input_height);
      for (int64_t kw = 0; kw < s.kernel_width; ++kw) {
        const int64_t column = column0 + kw * s.dilation_width;
        if (row_padded && inside(column, -s.pad_left, s.input_width + s.pad_right)) {
          ++inside_padded;
        }
        if (row_inside && inside(column, 0, s.input_width)) {
          sum += plane_input[row * s.input_width + column];
          ++inside_input;
        }
      }
    }
    const int64_t divisor = count_include_pad ? inside_padded : inside_input;
    output[index] = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
  });
}

void global_average_pool(int64_t planes, int64_t plane_size, const float* input, float* output) {
  for (int64_t plane = 0; plane < planes; ++plane) {
    float sum = 0.0f;
    for (int64_t i = 0; i < plane_size; ++i) sum += input[plane * plane_size + i];
    output[plane] = sum / static_cast<float>(plane_size);
  }
}

void global_max_pool(int64_t planes, int64_t plane_size, const float* input, float* output) {
  for (int64_t plane = 0; plane < planes; ++plane) {
    float best = input[plane * plane_size];
    for (int64_t i = 1; i < plane_size; ++i) {
      const float value = input[plane * plane_size + i];
      if (value > best) best = value;
    }
    output[plane] = best;
  }
}

}  // namespace orknn::kernels::reference
