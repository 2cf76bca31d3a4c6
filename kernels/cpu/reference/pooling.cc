#include "reference/pooling.h"

#include <array>
#include <limits>

namespace orknn::kernels::reference {
namespace {

// Calls visit(output_index, plane, first_row, first_column) for every output element; the
// window's taps are first + k * dilation.
template <typename Visit>
void for_each_window(const Pool2DShape& s, Visit&& visit) {
  const Window2D& window = s.window;
  int64_t index = 0;
  for (int64_t plane = 0; plane < s.planes; ++plane) {
    for (int64_t oh = 0; oh < window.output_height; ++oh) {
      for (int64_t ow = 0; ow < window.output_width; ++ow) {
        visit(index++, plane, oh * window.stride_height - window.pad_top,
              ow * window.stride_width - window.pad_left);
      }
    }
  }
}

bool inside(int64_t position, int64_t low, int64_t high) {
  return position >= low && position < high;
}

}  // namespace

template <typename Element>
void max_pool2d(const Pool2DShape& s, const Element* input, Element* output, int64_t* indices,
                bool column_major_indices) {
  const Window2D& window = s.window;
  for_each_window(s, [&](int64_t index, int64_t plane, int64_t row0, int64_t column0) {
    const Element* plane_input = input + plane * window.input_height * window.input_width;
    Element best = std::numeric_limits<Element>::lowest();
    int64_t best_row = -1, best_column = -1;
    for (int64_t kh = 0; kh < window.kernel_height; ++kh) {
      const int64_t row = row0 + kh * window.dilation_height;
      if (!inside(row, 0, window.input_height)) continue;
      for (int64_t kw = 0; kw < window.kernel_width; ++kw) {
        const int64_t column = column0 + kw * window.dilation_width;
        if (!inside(column, 0, window.input_width)) continue;
        const Element value = plane_input[row * window.input_width + column];
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
                             : column_major_indices ? best_column * window.input_height + best_row
                                                    : best_row * window.input_width + best_column;
      indices[index] = plane * window.input_height * window.input_width + within;
    }
  });
}

void average_pool2d(const Pool2DShape& s, bool count_include_pad, const float* input,
                    float* output) {
  const Window2D& window = s.window;
  for_each_window(s, [&](int64_t index, int64_t plane, int64_t row0, int64_t column0) {
    const float* plane_input = input + plane * window.input_height * window.input_width;
    float sum = 0.0f;
    int64_t inside_input = 0, inside_padded = 0;
    for (int64_t kh = 0; kh < window.kernel_height; ++kh) {
      const int64_t row = row0 + kh * window.dilation_height;
      const bool row_padded = inside(row, -window.pad_top, window.input_height + window.pad_bottom);
      const bool row_inside = inside(row, 0, window.input_height);
      for (int64_t kw = 0; kw < window.kernel_width; ++kw) {
        const int64_t column = column0 + kw * window.dilation_width;
        if (row_padded && inside(column, -window.pad_left, window.input_width + window.pad_right)) {
          ++inside_padded;
        }
        if (row_inside && inside(column, 0, window.input_width)) {
          sum += plane_input[row * window.input_width + column];
          ++inside_input;
        }
      }
    }
    const int64_t divisor = count_include_pad ? inside_padded : inside_input;
    output[index] = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
  });
}

namespace {

// Advances `index` (per-axis counters below `limits`) in row-major order; false after the last.
bool next_index(std::array<int64_t, kMaxSpatialRank>* index,
                const std::array<int64_t, kMaxSpatialRank>& limits, size_t rank) {
  for (size_t d = rank; d-- > 0;) {
    if (++(*index)[d] < limits[d]) return true;
    (*index)[d] = 0;
  }
  return false;
}

int64_t spatial_size(const WindowND& window) {
  int64_t size = 1;
  for (size_t d = 0; d < window.rank; ++d) size *= window.input[d];
  return size;
}

// Calls visit(output_index, plane, window_origin) for every output element.
template <typename Visit>
void for_each_window_nd(const PoolNDShape& s, Visit&& visit) {
  const WindowND& window = s.window;
  int64_t index = 0;
  for (int64_t plane = 0; plane < s.planes; ++plane) {
    std::array<int64_t, kMaxSpatialRank> position{};
    do {
      std::array<int64_t, kMaxSpatialRank> origin{};
      for (size_t d = 0; d < window.rank; ++d) {
        origin[d] = position[d] * window.stride[d] - window.pad_begin[d];
      }
      visit(index++, plane, origin);
    } while (next_index(&position, window.output, window.rank));
  }
}

// Calls visit(tap_offset or -1 when outside the input, inside_padded_input) for every tap.
template <typename Visit>
void for_each_tap_nd(const WindowND& window, const std::array<int64_t, kMaxSpatialRank>& origin,
                     Visit&& visit) {
  std::array<int64_t, kMaxSpatialRank> tap{};
  do {
    int64_t offset = 0;
    bool in_input = true, in_padded = true;
    for (size_t d = 0; d < window.rank; ++d) {
      const int64_t position = origin[d] + tap[d] * window.dilation[d];
      in_input = in_input && inside(position, 0, window.input[d]);
      in_padded =
          in_padded && inside(position, -window.pad_begin[d], window.input[d] + window.pad_end[d]);
      offset = offset * window.input[d] + position;
    }
    visit(in_input ? offset : -1, in_padded);
  } while (next_index(&tap, window.kernel, window.rank));
}

}  // namespace

template <typename Element>
void max_pool_nd(const PoolNDShape& s, const Element* input, Element* output, int64_t* indices) {
  const int64_t plane_size = spatial_size(s.window);
  for_each_window_nd(
      s, [&](int64_t index, int64_t plane, const std::array<int64_t, kMaxSpatialRank>& origin) {
        const Element* plane_input = input + plane * plane_size;
        Element best = std::numeric_limits<Element>::lowest();
        int64_t best_offset = -1;
        for_each_tap_nd(s.window, origin, [&](int64_t offset, bool) {
          if (offset < 0) return;
          if (best_offset < 0 || plane_input[offset] > best) {
            best = plane_input[offset];
            best_offset = offset;
          }
        });
        output[index] = best;
        if (indices) indices[index] = plane * plane_size + (best_offset < 0 ? 0 : best_offset);
      });
}

void average_pool_nd(const PoolNDShape& s, bool count_include_pad, const float* input,
                     float* output) {
  const int64_t plane_size = spatial_size(s.window);
  for_each_window_nd(
      s, [&](int64_t index, int64_t plane, const std::array<int64_t, kMaxSpatialRank>& origin) {
        const float* plane_input = input + plane * plane_size;
        float sum = 0.0f;
        int64_t inside_input = 0, inside_padded = 0;
        for_each_tap_nd(s.window, origin, [&](int64_t offset, bool in_padded) {
          if (in_padded) ++inside_padded;
          if (offset < 0) return;
          sum += plane_input[offset];
          ++inside_input;
        });
        const int64_t divisor = count_include_pad ? inside_padded : inside_input;
        output[index] = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
      });
}

#define ORKNN_INSTANTIATE_MAX_POOL(Element)                                                        \
  template void max_pool2d<Element>(const Pool2DShape&, const Element*, Element*, int64_t*, bool); \
  template void max_pool_nd<Element>(const PoolNDShape&, const Element*, Element*, int64_t*);
ORKNN_INSTANTIATE_MAX_POOL(float)
ORKNN_INSTANTIATE_MAX_POOL(int8_t)
ORKNN_INSTANTIATE_MAX_POOL(uint8_t)
ORKNN_INSTANTIATE_MAX_POOL(int16_t)
ORKNN_INSTANTIATE_MAX_POOL(int32_t)
ORKNN_INSTANTIATE_MAX_POOL(int64_t)
#undef ORKNN_INSTANTIATE_MAX_POOL

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
