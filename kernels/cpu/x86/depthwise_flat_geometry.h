// What the flat depthwise kernels (avx2_depthwise_flat.cc, avx512_depthwise_flat.cc) share:
// the byte offsets of a DepthwiseFlatPlanes' taps. Scalar code; `static` so that each file,
// compiled with its own instruction set, keeps its own copy (x86/avx2_micro_kernels.h's rule).
#pragma once

#include <cstddef>

#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized::flat_depthwise {

struct FlatGeometry {
  size_t outputs;      // of a plane
  size_t input_plane;  // floats
  size_t taps;
  ptrdiff_t first_row;    // bytes from an output to its tap (0, 0)
  ptrdiff_t row_step;     // bytes from tap (i, j) to (i + 1, j)
  ptrdiff_t column_step;  // bytes from tap (i, j) to (i, j + 1)
};

[[maybe_unused]] static FlatGeometry flat_geometry(const DepthwiseFlatPlanes& planes) {
  FlatGeometry g;
  const size_t width = planes.width;
  g.outputs = planes.output_height * width;
  g.input_plane = planes.input_height * width;
  g.taps = planes.kernel_height * planes.kernel_width;
  const auto bytes = static_cast<ptrdiff_t>(sizeof(float));
  g.first_row =
      -(static_cast<ptrdiff_t>(planes.pad_top * width) + static_cast<ptrdiff_t>(planes.pad_left)) *
      bytes;
  g.row_step = static_cast<ptrdiff_t>(planes.dilation_height * width) * bytes;
  g.column_step = static_cast<ptrdiff_t>(planes.dilation_width) * bytes;
  return g;
}

}  // namespace orknn::kernels::cpu::optimized::flat_depthwise
