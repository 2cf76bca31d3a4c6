// What the blocks compute for float16 programs (docs/npu.md section 6): half inputs and weights,
// products formed exactly in fp32 and accumulated in fp32 in a fixed order (bias, then kernel
// rows, columns, input channels ascending), the epilogue in fp32, one rounding to float16 at
// the output (round to nearest even). Each output element depends only on its own operands,
// so any split over cores or CBUF tasks gives the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "driver_shim/emu/block_support.h"
#include "driver_shim/emu/emulator.h"

namespace orknn::driver_shim::emu {

using namespace npu_reg;

namespace {

float load_half(const uint8_t* address) {
  Float16Bits half;
  std::memcpy(&half, address, 2);
  return half_to_float(half);
}

void store_half(uint8_t* address, float value) {
  const Float16Bits half = float_to_half(value);
  std::memcpy(address, &half, 2);
}

// NaN passes through, as the CPU's min/max clamps let it.
float clamp(float value, float low, float high) {
  return value < low ? low : (value > high ? high : value);
}

// x * sigmoid(x) with the CPU's two overflow-free sigmoid forms.
float silu(float value) {
  if (value >= 0.0f) return value * (1.0f / (1.0f + std::exp(-value)));
  const float e = std::exp(value);
  return value * (e / (1.0f + e));
}

}  // namespace

uint64_t Emulator::execute_convolution_float16(CoreRegisters& r, bool* dma_error) {
  ConvGeometry g = read_conv_geometry(r, kPrecisionFloat16);
  if (!g.consistent) {
    *dma_error = true;
    return 0;
  }
  Cube& input = g.input;
  Cube& output = g.output;
  if (!check_cbuf(r, input.width, input.height, input.channels, kPrecisionFloat16,
                  g.weight_bytes)) {
    *dma_error = true;
    return 0;
  }
  const bool add_bias = (r.get(kDpuBsCfg) & 1) == 0;
  const bool apply_silu = (r.get(kDpuBnCfg) & kDpuBnSiluEpilogue) != 0;
  const bool add = (r.get(kDpuEwCfg) & 1) == 0;
  input.base = translate(r.get(kCnaFeatureDataAddr), input.span());
  output.base = translate(r.get(kDpuDstBaseAddr), output.span());
  const uint8_t* packed = translate(r.get(kCnaDcompAddr0), g.weight_bytes);
  const uint8_t* bias_bytes =
      add_bias ? translate(r.get(kRdmaBsBaseAddr), uint64_t{output.channels} * 4) : nullptr;
  Cube operand = output;
  operand.base = add ? translate(r.get(kRdmaEwBaseAddr), output.span()) : nullptr;
  if (!input.base || !output.base || !packed || (add_bias && !bias_bytes) ||
      (add && !operand.base)) {
    *dma_error = true;
    return 0;
  }
  const float low = register_as_float(r.get(kDpuBnAluCfg));
  const float high = register_as_float(r.get(kDpuBnReluxCmp));
  const float final_low = register_as_float(r.get(kDpuEwOpValue0));
  const float final_high = register_as_float(r.get(kDpuEwOpValue1));
  std::vector<float> weights(g.weight_bytes / 2);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = load_half(packed + 2 * i);
  // The input as fp32, channels innermost ([h][w][c]), read once: the same values the CNA
  // widens, in an order the channel loop walks contiguously.
  std::vector<float> pixels(uint64_t{input.height} * input.width * input.channels);
  for (uint32_t h = 0; h < input.height; ++h) {
    for (uint32_t w = 0; w < input.width; ++w) {
      float* pixel = pixels.data() + (uint64_t{h} * input.width + w) * input.channels;
      for (uint32_t c = 0; c < input.channels; ++c) pixel[c] = load_half(input.address(c, h, w));
    }
  }

  const uint64_t area = uint64_t{g.kernel_width} * g.kernel_height;
  const uint64_t kernel_block = uint64_t(weight_kernel_block(kPrecisionFloat16));
  const uint64_t input_blocks = (input.channels + kWeightInputBlock - 1) / kWeightInputBlock;
  const uint64_t weight_block_stride = area * kernel_block * kWeightInputBlock;
  for (uint32_t oc = 0; oc < output.channels; ++oc) {
    float bias = 0.0f;
    if (add_bias) std::memcpy(&bias, bias_bytes + 4 * oc, 4);
    for (uint32_t oh = 0; oh < output.height; ++oh) {
      for (uint32_t ow = 0; ow < output.width; ++ow) {
        float accumulator = bias;
        for (uint32_t ky = 0; ky < g.kernel_height; ++ky) {
          const int64_t row = int64_t{oh} * g.stride_y - g.pad_top + int64_t{ky} * g.dilation_y;
          if (row < 0 || row >= input.height) continue;  // padding contributes 0
          for (uint32_t kx = 0; kx < g.kernel_width; ++kx) {
            const int64_t column =
                int64_t{ow} * g.stride_x - g.pad_left + int64_t{kx} * g.dilation_x;
            if (column < 0 || column >= input.width) continue;
            const uint64_t tap = uint64_t{ky} * g.kernel_width + kx;
            const float* pixel =
                pixels.data() + (uint64_t(row) * input.width + uint64_t(column)) * input.channels;
            if (g.depthwise) {
              accumulator +=
                  pixel[oc] *
                  weights[((oc / kernel_block) * area + tap) * kernel_block + oc % kernel_block];
              continue;
            }
            const float* weight_row =
                weights.data() + (oc / kernel_block) * input_blocks * weight_block_stride +
                tap * kernel_block * kWeightInputBlock + (oc % kernel_block) * kWeightInputBlock;
            // The product of two halves is exact in fp32; only the sum rounds, channel by
            // channel in ascending order.
            for (uint32_t first = 0; first < input.channels; first += kWeightInputBlock) {
              const float* block_weights =
                  weight_row + (first / kWeightInputBlock) * weight_block_stride;
              const uint32_t count = std::min<uint32_t>(kWeightInputBlock, input.channels - first);
              for (uint32_t i = 0; i < count; ++i)
                accumulator += pixel[first + i] * block_weights[i];
            }
          }
        }
        float result = apply_silu ? silu(accumulator) : accumulator;
        result = clamp(result, low, high);
        if (add) {
          // The convolution's own float16 result plus the operand, as two separate ops would.
          result = half_to_float(float_to_half(result)) + load_half(operand.address(oc, oh, ow));
        }
        store_half(output.address(oc, oh, ow), clamp(result, final_low, final_high));
      }
    }
  }
  const uint64_t macs = uint64_t{output.width} * output.height * output.channels * area *
                        (g.depthwise ? 1 : input.channels);
  const uint64_t bytes = input.bytes() + output.bytes() * (add ? 2 : 1) +
                         loaded_weight_bytes(r, g.weight_bytes) + 4ull * output.channels;
  return cycles_for(macs, bytes, true);
}

uint64_t Emulator::execute_standalone_dpu_float16(const CoreRegisters& r, bool* dma_error) {
  Cube input, operand, output;
  bool add = false;
  if (!map_standalone_cubes(r, 2, &input, &operand, &output, &add)) {
    *dma_error = true;
    return 0;
  }
  const float final_low = register_as_float(r.get(kDpuEwOpValue0));
  const float final_high = register_as_float(r.get(kDpuEwOpValue1));
  for (uint32_t c = 0; c < input.channels; ++c) {
    for (uint32_t h = 0; h < input.height; ++h) {
      for (uint32_t w = 0; w < input.width; ++w) {
        float value = load_half(input.address(c, h, w));
        if (add) value += load_half(operand.address(c, h, w));
        store_half(output.address(c, h, w), clamp(value, final_low, final_high));
      }
    }
  }
  return cycles_for(0, input.bytes() * (add ? 3 : 2), true);
}

uint64_t Emulator::execute_pooling_float16(const CoreRegisters& r, bool* dma_error) {
  Cube input, output;
  input.width = field(r.get(kPpuCubeInWidth), 12, 0) + 1;
  input.height = field(r.get(kPpuCubeInHeight), 12, 0) + 1;
  input.channels = field(r.get(kPpuCubeInChannel), 12, 0) + 1;
  input.surface_stride = r.get(kPpuRdmaSrcSurfStride);
  input.element_bytes = 2;
  output.width = field(r.get(kPpuCubeOutWidth), 12, 0) + 1;
  output.height = field(r.get(kPpuCubeOutHeight), 12, 0) + 1;
  output.channels = input.channels;
  output.surface_stride = r.get(kPpuDstSurfStride);
  output.element_bytes = 2;
  const PoolingWindow window = read_pooling_window(r);
  input.base = translate(r.get(kPpuRdmaSrcBaseAddr), input.span());
  output.base = translate(r.get(kPpuDstBaseAddr), output.span());
  if (!input.base || !output.base) {
    *dma_error = true;
    return 0;
  }
  for (uint32_t c = 0; c < input.channels; ++c) {
    for (uint32_t oh = 0; oh < output.height; ++oh) {
      for (uint32_t ow = 0; ow < output.width; ++ow) {
        const float result = pool_window(window, input, oh, ow, [&](uint32_t row, uint32_t column) {
          return load_half(input.address(c, row, column));
        });
        store_half(output.address(c, oh, ow), result);
      }
    }
  }
  return cycles_for(0, input.bytes() + output.bytes(), true);
}

}  // namespace orknn::driver_shim::emu
