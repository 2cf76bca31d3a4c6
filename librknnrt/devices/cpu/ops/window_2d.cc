#include "devices/cpu/ops/window_2d.h"

namespace orknn::devices::cpu {

Result<kernels::reference::Window2D> reference_window_2d(const KernelBuildContext& context,
                                                         const graph::SpatialWindow& window,
                                                         const char* operation) {
  const graph::Shape& input = context.input(0)->shape;
  const size_t rank = input.size() - 2;
  if (rank > 2) {
    return unimplemented(context.node.describe(), ": ", rank, "-D ", operation,
                         " is not supported by the CPU kernels (1-D and 2-D are)");
  }
  const size_t last = rank - 1;  // width axis; height is axis 0 when rank == 2
  kernels::reference::Window2D result;
  result.input_width = input.back();
  result.output_width = window.output[last];
  result.kernel_width = window.kernel[last];
  result.stride_width = window.strides[last];
  result.dilation_width = window.dilations[last];
  result.pad_left = window.pads_begin[last];
  result.pad_right = window.pads_end[last];
  if (rank == 2) {
    result.input_height = input[2];
    result.output_height = window.output[0];
    result.kernel_height = window.kernel[0];
    result.stride_height = window.strides[0];
    result.dilation_height = window.dilations[0];
    result.pad_top = window.pads_begin[0];
    result.pad_bottom = window.pads_end[0];
  }
  return result;
}

Result<kernels::reference::WindowND> reference_window_nd(const KernelBuildContext& context,
                                                         const graph::SpatialWindow& window,
                                                         const char* operation) {
  const graph::Shape& input = context.input(0)->shape;
  const size_t rank = input.size() - 2;
  if (rank > kernels::reference::kMaxSpatialRank) {
    return unimplemented(context.node.describe(), ": ", rank, "-D ", operation,
                         " is not supported by the CPU kernels (up to ",
                         kernels::reference::kMaxSpatialRank, "-D is)");
  }
  kernels::reference::WindowND result;
  result.rank = rank;
  for (size_t d = 0; d < rank; ++d) {
    result.input[d] = input[d + 2];
    result.output[d] = window.output[d];
    result.kernel[d] = window.kernel[d];
    result.stride[d] = window.strides[d];
    result.dilation[d] = window.dilations[d];
    result.pad_begin[d] = window.pads_begin[d];
    result.pad_end[d] = window.pads_end[d];
  }
  return result;
}

}  // namespace orknn::devices::cpu
