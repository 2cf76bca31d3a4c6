// Helpers the emulated blocks share: register fields and feature cubes in NPU memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "driver_shim/npu_registers.h"

namespace orknn::driver_shim::emu {

inline uint32_t field(uint32_t value, int high, int low) {
  return (value >> low) & ((high - low == 31) ? 0xffffffffu : ((1u << (high - low + 1)) - 1));
}

inline int32_t as_signed(uint32_t value) {
  return static_cast<int32_t>(value);
}

// An NC1HWC2 cube in NPU memory: one 16-byte atom per pixel holding 16 int8 or 8 float16
// channels, `surface_stride` bytes between channel blocks.
struct Cube {
  uint8_t* base = nullptr;
  uint32_t width = 0, height = 0, channels = 0;
  uint32_t surface_stride = 0;
  uint32_t element_bytes = 1;

  uint32_t block() const { return npu_reg::kAtomBytes / element_bytes; }
  uint64_t span() const {
    const uint64_t blocks = (channels + block() - 1) / block();
    return blocks == 0 ? 0 : (blocks - 1) * surface_stride + uint64_t{width} * height * 16;
  }
  // Bytes the cube holds (what a DMA moves), as opposed to the address range it spans.
  uint64_t bytes() const {
    return uint64_t{(channels + block() - 1) / block()} * width * height * 16;
  }
  uint8_t* address(uint32_t c, uint32_t h, uint32_t w) const {
    return base + (c / block()) * uint64_t{surface_stride} + (uint64_t{h} * width + w) * 16 +
           (c % block()) * element_bytes;
  }
  int8_t* at(uint32_t c, uint32_t h, uint32_t w) const {
    return reinterpret_cast<int8_t*>(address(c, h, w));
  }
};

// Weight bytes a convolution task moves from memory: none when WEIGHT_REUSE finds them
// resident in the conv buffer (the timing model's only CBUF effect besides re-read rows).
template <typename Registers>
uint64_t loaded_weight_bytes(const Registers& r, uint64_t weight_bytes) {
  return (r.get(npu_reg::kCnaCbufCon0) & npu_reg::kCbufWeightReuse) ? 0 : weight_bytes;
}

// What a convolution task's CNA/CORE/DPU registers say about its shape (both precisions).
struct ConvGeometry {
  bool depthwise = false;
  uint32_t stride_x = 0, stride_y = 0, dilation_x = 0, dilation_y = 0;
  uint32_t kernel_width = 0, kernel_height = 0;
  int32_t pad_left = 0, pad_top = 0;
  Cube input, output;
  uint64_t weight_bytes = 0;  // the packed weights of the task's output channels
  bool consistent = false;    // fields a program could leave zero or contradictory are not
};

template <typename Registers>
ConvGeometry read_conv_geometry(const Registers& r, uint32_t precision) {
  using namespace npu_reg;
  ConvGeometry g;
  g.depthwise = field(r.get(kCnaConvCon1), 3, 0) == 3;
  g.stride_x = field(r.get(kCnaConvCon3), 2, 0);
  g.stride_y = field(r.get(kCnaConvCon3), 5, 3);
  g.dilation_x = field(r.get(kCnaConvCon3), 20, 16);
  g.dilation_y = field(r.get(kCnaConvCon3), 25, 21);
  g.input.width = field(r.get(kCnaDataSize0), 26, 16);
  g.input.height = field(r.get(kCnaDataSize0), 10, 0);
  g.input.channels = field(r.get(kCnaDataSize1), 29, 16) + 1;
  g.input.surface_stride = r.get(kCnaDmaCon2);
  g.input.element_bytes = element_bytes(precision);
  g.kernel_width = field(r.get(kCnaWeightSize2), 28, 24);
  g.kernel_height = field(r.get(kCnaWeightSize2), 20, 16);
  g.pad_left = static_cast<int32_t>(field(r.get(kCnaPadCon0), 7, 4));
  g.pad_top = static_cast<int32_t>(field(r.get(kCnaPadCon0), 3, 0));
  g.output.width = field(r.get(kCoreDataoutSize0), 15, 0) + 1;
  g.output.height = field(r.get(kCoreDataoutSize0), 31, 16) + 1;
  g.output.channels = field(r.get(kCoreDataoutSize1), 15, 0) + 1;
  g.output.surface_stride = r.get(kDpuDstSurfStride);
  g.output.element_bytes = element_bytes(precision);
  const uint64_t area = uint64_t{g.kernel_width} * g.kernel_height;
  const uint64_t kernel_block = uint64_t(weight_kernel_block(precision));
  const uint64_t kernels = (g.output.channels + kernel_block - 1) / kernel_block * kernel_block;
  const uint64_t inputs = g.depthwise ? 1
                                      : (g.input.channels + kWeightInputBlock - 1) /
                                            kWeightInputBlock * kWeightInputBlock;
  g.weight_bytes = area * kernels * inputs * element_bytes(precision);
  g.consistent = g.stride_x != 0 && g.stride_y != 0 && g.dilation_x != 0 && g.dilation_y != 0 &&
                 g.kernel_width != 0 && g.kernel_height != 0 &&
                 !(g.depthwise && g.input.channels < g.output.channels);
  return g;
}

// A pooling task's window (PPU POOLING_KERNEL_CFG / POOLING_PADDING_CFG / OPERATION_MODE_CFG).
struct PoolingWindow {
  bool maximum = false, count_include_pad = false;
  int64_t kernel_width = 1, kernel_height = 1, stride_width = 1, stride_height = 1;
  int64_t pad_left = 0, pad_top = 0, pad_right = 0, pad_bottom = 0;
};

template <typename Registers>
PoolingWindow read_pooling_window(const Registers& r) {
  using namespace npu_reg;
  PoolingWindow window;
  const uint32_t mode = r.get(kPpuOperationModeCfg);
  window.maximum = field(mode, 1, 0) == kPoolingMax;
  window.count_include_pad = (mode >> 8) & 1;
  const uint32_t kernel = r.get(kPpuPoolingKernelCfg);
  window.kernel_width = field(kernel, 3, 0) + 1;
  window.kernel_height = field(kernel, 11, 8) + 1;
  window.stride_width = field(kernel, 19, 16) + 1;
  window.stride_height = field(kernel, 23, 20) + 1;
  const uint32_t padding = r.get(kPpuPoolingPaddingCfg);
  window.pad_left = field(padding, 2, 0);
  window.pad_top = field(padding, 6, 4);
  window.pad_right = field(padding, 10, 8);
  window.pad_bottom = field(padding, 14, 12);
  return window;
}

// One pooled value over the window of output (oh, ow), in the CPU reference's order (rows,
// then columns; max of the values inside, or their float sum over the count the mode asks for).
// `load(row, column)` gives the decoded input value.
template <typename Load>
float pool_window(const PoolingWindow& p, const Cube& input, uint32_t oh, uint32_t ow,
                  const Load& load) {
  auto inside = [](int64_t position, int64_t low, int64_t high) {
    return position >= low && position < high;
  };
  const int64_t height = input.height, width = input.width;
  const int64_t row0 = oh * p.stride_height - p.pad_top;
  const int64_t column0 = ow * p.stride_width - p.pad_left;
  if (p.maximum) {
    float best = std::numeric_limits<float>::lowest();
    bool found = false;
    for (int64_t row = row0; row < row0 + p.kernel_height; ++row) {
      if (!inside(row, 0, height)) continue;
      for (int64_t column = column0; column < column0 + p.kernel_width; ++column) {
        if (!inside(column, 0, width)) continue;
        const float value = load(static_cast<uint32_t>(row), static_cast<uint32_t>(column));
        if (!found || value > best) best = value;
        found = true;
      }
    }
    return best;
  }
  float sum = 0.0f;
  int64_t inside_input = 0, inside_padded = 0;
  for (int64_t row = row0; row < row0 + p.kernel_height; ++row) {
    const bool row_padded = inside(row, -p.pad_top, height + p.pad_bottom);
    const bool row_inside = inside(row, 0, height);
    for (int64_t column = column0; column < column0 + p.kernel_width; ++column) {
      if (row_padded && inside(column, -p.pad_left, width + p.pad_right)) ++inside_padded;
      if (row_inside && inside(column, 0, width)) {
        sum += load(static_cast<uint32_t>(row), static_cast<uint32_t>(column));
        ++inside_input;
      }
    }
  }
  const int64_t divisor = p.count_include_pad ? inside_padded : inside_input;
  return divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
}

}  // namespace orknn::driver_shim::emu
