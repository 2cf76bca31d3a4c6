// The reference kernels' 2-D window (kernels/cpu/reference/window_geometry.h) from the window
// the graph parsers resolved, shared by the convolution and pooling kernel factories.
#pragma once

#include "devices/cpu/cpu_kernel.h"
#include "graph/ops/spatial_window.h"
#include "reference/window_geometry.h"

namespace orknn::devices::cpu {

// For a node whose input 0 is [N, C, spatial...]: 1-D runs as 2-D with a unit height. More
// than two spatial axes are refused as kUnimplemented, naming the `operation` ("convolution").
Result<kernels::reference::Window2D> reference_window_2d(const KernelBuildContext& context,
                                                         const graph::SpatialWindow& window,
                                                         const char* operation);

// The window over all spatial axes of input 0 ([N, C, spatial...]); more than
// kMaxSpatialRank axes are refused as kUnimplemented.
Result<kernels::reference::WindowND> reference_window_nd(const KernelBuildContext& context,
                                                         const graph::SpatialWindow& window,
                                                         const char* operation);

}  // namespace orknn::devices::cpu
