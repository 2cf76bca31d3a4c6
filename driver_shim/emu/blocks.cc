// What the CNA/CORE/DPU/DPU_RDMA/PPU blocks compute for the programs OpenRKNN emits. The
// arithmetic is chosen to be bit-exact with the CPU int8 rules (docs/quantization.md); where
// that differs from what the hardware is believed to do, docs/npu.md says so.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/reproducible_exp.h"
#include "driver_shim/emu/emulator.h"
#include "driver_shim/npu_registers.h"

namespace orknn::driver_shim::emu {

using namespace npu_reg;

namespace {

uint32_t field(uint32_t value, int high, int low) {
  return (value >> low) & ((high - low == 31) ? 0xffffffffu : ((1u << (high - low + 1)) - 1));
}

// An int8 NC1HWC2 cube in NPU memory: 16 channels per 16-byte atom, one atom per pixel.
struct Cube {
  uint8_t* base = nullptr;
  uint32_t width = 0, height = 0, channels = 0;
  uint32_t surface_stride = 0;  // bytes between channel blocks

  uint64_t span() const {
    const uint64_t blocks = (channels + kChannelBlock - 1) / kChannelBlock;
    return blocks == 0 ? 0 : (blocks - 1) * surface_stride + uint64_t{width} * height * 16;
  }
  int8_t* at(uint32_t c, uint32_t h, uint32_t w) const {
    return reinterpret_cast<int8_t*>(base + (c / kChannelBlock) * uint64_t{surface_stride} +
                                     (uint64_t{h} * width + w) * 16 + c % kChannelBlock);
  }
};

// The float-domain rules of docs/quantization.md: decode is one float multiplication, encode
// one float division, bounded, rounded half to even, saturated.
float decode(int8_t q, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int32_t>(q) - zero_point) * scale;
}
int8_t encode(float real, float scale, int32_t zero_point) {
  const float scaled = real / scale;
  int32_t value;
  if (std::isnan(scaled)) {
    value = zero_point;
  } else {
    const float bounded = scaled < -1e9f ? -1e9f : (scaled > 1e9f ? 1e9f : scaled);
    value = static_cast<int32_t>(std::nearbyint(bounded)) + zero_point;
  }
  return static_cast<int8_t>(std::clamp(value, -128, 127));
}

// The requantization of the integer products (docs/quantization.md 4.3).
int8_t requantize(int64_t accumulator, float multiplier, int32_t zero_point, int32_t low,
                  int32_t high) {
  const double scaled = static_cast<double>(accumulator) * static_cast<double>(multiplier);
  const double bounded = std::min(std::max(scaled, -1e9), 1e9);
  const int64_t value = static_cast<int64_t>(std::nearbyint(bounded)) + zero_point;
  return static_cast<int8_t>(std::min<int64_t>(std::max<int64_t>(value, low), high));
}

// The SiLU epilogue (docs/quantization.md 4.3), in the CPU's float operations and order:
// the accumulator back to real in double rounded to float, the sigmoid's two overflow-free
// forms on e = e^-|r| (the reproducible exp of 4.5, not std::exp), then encode.
int8_t silu_epilogue(int64_t accumulator, float scale, float output_scale, int32_t zero_point) {
  const float real =
      static_cast<float>(static_cast<double>(accumulator) * static_cast<double>(scale));
  const float e = reproducible_exp(-std::fabs(real));
  const float sigmoid = (real >= 0.0f ? 1.0f : e) / (1.0f + e);
  return encode(real * sigmoid, output_scale, zero_point);
}

int32_t as_signed(uint32_t value) {
  return static_cast<int32_t>(value);
}

}  // namespace

uint64_t Emulator::execute_convolution(const CoreRegisters& r, bool* dma_error) {
  const bool depthwise = field(r.get(kCnaConvCon1), 3, 0) == 3;
  const uint32_t stride_x = field(r.get(kCnaConvCon3), 2, 0);
  const uint32_t stride_y = field(r.get(kCnaConvCon3), 5, 3);
  const uint32_t dilation_x = field(r.get(kCnaConvCon3), 20, 16);
  const uint32_t dilation_y = field(r.get(kCnaConvCon3), 25, 21);
  Cube input;
  input.width = field(r.get(kCnaDataSize0), 26, 16);
  input.height = field(r.get(kCnaDataSize0), 10, 0);
  input.channels = field(r.get(kCnaDataSize1), 29, 16) + 1;
  input.surface_stride = r.get(kCnaDmaCon2);
  const uint32_t kernel_width = field(r.get(kCnaWeightSize2), 28, 24);
  const uint32_t kernel_height = field(r.get(kCnaWeightSize2), 20, 16);
  const int32_t pad_left = static_cast<int32_t>(field(r.get(kCnaPadCon0), 7, 4));
  const int32_t pad_top = static_cast<int32_t>(field(r.get(kCnaPadCon0), 3, 0));
  const int32_t pad_value = as_signed(r.get(kCnaPadCon1));
  Cube output;
  output.width = field(r.get(kCoreDataoutSize0), 15, 0) + 1;
  output.height = field(r.get(kCoreDataoutSize0), 31, 16) + 1;
  output.channels = field(r.get(kCoreDataoutSize1), 15, 0) + 1;
  output.surface_stride = r.get(kDpuDstSurfStride);
  if (stride_x == 0 || stride_y == 0 || dilation_x == 0 || dilation_y == 0 || kernel_width == 0 ||
      kernel_height == 0 || (depthwise && input.channels < output.channels)) {
    *dma_error = true;  // an inconsistent program; real hardware would hang or corrupt memory
    return 0;
  }
  const uint64_t kernel_area = uint64_t{kernel_width} * kernel_height;
  const uint32_t output_blocks = (output.channels + kWeightBlock - 1) / kWeightBlock;
  const uint32_t input_blocks = (input.channels + kWeightBlock - 1) / kWeightBlock;
  const uint64_t weight_bytes = depthwise ? uint64_t{output_blocks} * kernel_area * kWeightBlock
                                          : uint64_t{output_blocks} * input_blocks * kernel_area *
                                                kWeightBlock * kWeightBlock;
  const bool add_bias = (r.get(kDpuBsCfg) & 1) == 0;
  const bool multiply = (r.get(kDpuBnCfg) & 1) == 0;
  const bool silu = (r.get(kDpuBnCfg) & kDpuBnSiluEpilogue) != 0;
  input.base = translate(r.get(kCnaFeatureDataAddr), input.span());
  output.base = translate(r.get(kDpuDstBaseAddr), output.span());
  const auto* weights =
      reinterpret_cast<const int8_t*>(translate(r.get(kCnaDcompAddr0), weight_bytes));
  const uint8_t* bias_bytes =
      add_bias ? translate(r.get(kRdmaBsBaseAddr), uint64_t{output.channels} * 4) : nullptr;
  const uint8_t* multiplier_bytes =
      multiply ? translate(r.get(kRdmaBnBaseAddr), uint64_t{output.channels} * 4) : nullptr;
  if (!input.base || !output.base || !weights || (add_bias && !bias_bytes) ||
      (multiply && !multiplier_bytes)) {
    *dma_error = true;
    return 0;
  }
  const uint32_t clamp = r.get(kDpuBnReluxCmp);
  const int32_t low = static_cast<int16_t>(clamp & 0xffff);
  const int32_t high = static_cast<int16_t>(clamp >> 16);
  const int32_t output_zero_point = as_signed(r.get(kDpuOutCvtOffset));
  const bool use_lut = (r.get(kDpuLutCfg) & 1) != 0;
  // A fused element-wise Add: the requantized result plus an operand cube shaped like the output.
  const bool add = (r.get(kDpuEwCfg) & 1) == 0;
  Cube operand = output;
  operand.base = add ? translate(r.get(kRdmaEwBaseAddr), output.span()) : nullptr;
  if (add && !operand.base) {
    *dma_error = true;
    return 0;
  }
  const float result_scale = register_as_float(r.get(kDpuBsMulCfg));
  const float operand_scale = register_as_float(r.get(kDpuEwCvtScale));
  const int32_t operand_zero_point = as_signed(r.get(kDpuEwCvtOffset));
  const float sum_scale = register_as_float(r.get(kDpuOutCvtScale));
  const int32_t sum_zero_point = as_signed(r.get(kDpuEwReluxCmp));

  for (uint32_t oc = 0; oc < output.channels; ++oc) {
    int32_t bias = 0;
    float multiplier = 1.0f;
    if (add_bias) std::memcpy(&bias, bias_bytes + 4 * oc, 4);
    if (multiply) std::memcpy(&multiplier, multiplier_bytes + 4 * oc, 4);
    for (uint32_t oh = 0; oh < output.height; ++oh) {
      for (uint32_t ow = 0; ow < output.width; ++ow) {
        int64_t accumulator = bias;
        for (uint32_t ky = 0; ky < kernel_height; ++ky) {
          const int64_t row = int64_t{oh} * stride_y - pad_top + int64_t{ky} * dilation_y;
          const bool row_inside = row >= 0 && row < input.height;
          for (uint32_t kx = 0; kx < kernel_width; ++kx) {
            const int64_t column = int64_t{ow} * stride_x - pad_left + int64_t{kx} * dilation_x;
            const bool inside = row_inside && column >= 0 && column < input.width;
            const uint64_t tap = uint64_t{ky} * kernel_width + kx;
            if (depthwise) {
              const int32_t x =
                  inside ? *input.at(oc, static_cast<uint32_t>(row), static_cast<uint32_t>(column))
                         : pad_value;
              const int8_t w = weights[((oc / kWeightBlock) * kernel_area + tap) * kWeightBlock +
                                       oc % kWeightBlock];
              accumulator += int64_t{x} * w;
              continue;
            }
            const int8_t* weight_row =
                weights +
                ((uint64_t{oc / kWeightBlock} * input_blocks) * kernel_area + tap) * kWeightBlock *
                    kWeightBlock +
                (oc % kWeightBlock) * kWeightBlock;
            // Walk the input pixel's 16-channel atoms and the 32-channel weight blocks in step.
            const uint64_t weight_block_stride = kernel_area * kWeightBlock * kWeightBlock;
            if (!inside) {
              int64_t weight_sum = 0;
              for (uint32_t ic = 0; ic < input.channels; ++ic) {
                weight_sum +=
                    weight_row[(ic / kWeightBlock) * weight_block_stride + ic % kWeightBlock];
              }
              accumulator += int64_t{pad_value} * weight_sum;
              continue;
            }
            const int8_t* pixel =
                input.at(0, static_cast<uint32_t>(row), static_cast<uint32_t>(column));
            for (uint32_t ic = 0; ic < input.channels; ++ic) {
              const int32_t x =
                  pixel[(ic / kChannelBlock) * uint64_t{input.surface_stride} + ic % kChannelBlock];
              const int8_t w =
                  weight_row[(ic / kWeightBlock) * weight_block_stride + ic % kWeightBlock];
              accumulator += int64_t{x} * w;
            }
          }
        }
        int8_t y = silu ? silu_epilogue(accumulator, multiplier, result_scale, output_zero_point)
                        : requantize(accumulator, multiplier, output_zero_point, low, high);
        if (add) {
          const float sum = decode(y, result_scale, output_zero_point) +
                            decode(*operand.at(oc, oh, ow), operand_scale, operand_zero_point);
          y = encode(sum, sum_scale, sum_zero_point);
        }
        if (use_lut) y = r.lut[static_cast<size_t>(y + 128)];
        *output.at(oc, oh, ow) = y;
      }
    }
  }
  const uint64_t macs = uint64_t{output.width} * output.height * output.channels * kernel_area *
                        (depthwise ? 1 : input.channels);
  const uint64_t bytes =
      input.span() + output.span() * (add ? 2 : 1) + weight_bytes + 8ull * output.channels;
  return cycles_for(macs, bytes);
}

uint64_t Emulator::execute_standalone_dpu(const CoreRegisters& r, bool* dma_error) {
  Cube input;
  input.width = field(r.get(kDpuDataCubeWidth), 12, 0) + 1;
  input.height = field(r.get(kDpuDataCubeHeight), 12, 0) + 1;
  input.channels = field(r.get(kDpuDataCubeChannel), 12, 0) + 1;
  input.surface_stride = r.get(kDpuDstSurfStride);
  Cube operand = input, output = input;
  const bool add = (r.get(kDpuEwCfg) & 1) == 0;
  const bool use_lut = (r.get(kDpuLutCfg) & 1) != 0;
  input.base = translate(r.get(kRdmaSrcBaseAddr), input.span());
  output.base = translate(r.get(kDpuDstBaseAddr), output.span());
  operand.base = add ? translate(r.get(kRdmaEwBaseAddr), operand.span()) : nullptr;
  if (!input.base || !output.base || (add && !operand.base)) {
    *dma_error = true;
    return 0;
  }
  const int32_t input_zero_point = as_signed(r.get(kDpuBsAluCfg));
  const float input_scale = register_as_float(r.get(kDpuBsMulCfg));
  const int32_t operand_zero_point = as_signed(r.get(kDpuEwCvtOffset));
  const float operand_scale = register_as_float(r.get(kDpuEwCvtScale));
  const int32_t output_zero_point = as_signed(r.get(kDpuOutCvtOffset));
  const float output_scale = register_as_float(r.get(kDpuOutCvtScale));
  for (uint32_t c = 0; c < input.channels; ++c) {
    for (uint32_t h = 0; h < input.height; ++h) {
      for (uint32_t w = 0; w < input.width; ++w) {
        int8_t value = *input.at(c, h, w);
        if (add) {
          const float sum = decode(value, input_scale, input_zero_point) +
                            decode(*operand.at(c, h, w), operand_scale, operand_zero_point);
          value = encode(sum, output_scale, output_zero_point);
        }
        if (use_lut) value = r.lut[static_cast<size_t>(value + 128)];
        *output.at(c, h, w) = value;
      }
    }
  }
  const uint64_t bytes = input.span() * (add ? 3 : 2);
  return cycles_for(0, bytes);
}

uint64_t Emulator::execute_pooling(const CoreRegisters& r, bool* dma_error) {
  Cube input, output;
  input.width = field(r.get(kPpuCubeInWidth), 12, 0) + 1;
  input.height = field(r.get(kPpuCubeInHeight), 12, 0) + 1;
  input.channels = field(r.get(kPpuCubeInChannel), 12, 0) + 1;
  input.surface_stride = r.get(kPpuRdmaSrcSurfStride);
  output.width = field(r.get(kPpuCubeOutWidth), 12, 0) + 1;
  output.height = field(r.get(kPpuCubeOutHeight), 12, 0) + 1;
  output.channels = input.channels;
  output.surface_stride = r.get(kPpuDstSurfStride);
  const uint32_t mode = r.get(kPpuOperationModeCfg);
  const bool maximum = field(mode, 1, 0) == kPoolingMax;
  const bool count_include_pad = (mode >> 8) & 1;
  const uint32_t kernel_cfg = r.get(kPpuPoolingKernelCfg);
  const int64_t kernel_width = field(kernel_cfg, 3, 0) + 1;
  const int64_t kernel_height = field(kernel_cfg, 11, 8) + 1;
  const int64_t stride_width = field(kernel_cfg, 19, 16) + 1;
  const int64_t stride_height = field(kernel_cfg, 23, 20) + 1;
  const uint32_t padding = r.get(kPpuPoolingPaddingCfg);
  const int64_t pad_left = field(padding, 2, 0), pad_top = field(padding, 6, 4);
  const int64_t pad_right = field(padding, 10, 8), pad_bottom = field(padding, 14, 12);
  input.base = translate(r.get(kPpuRdmaSrcBaseAddr), input.span());
  output.base = translate(r.get(kPpuDstBaseAddr), output.span());
  if (!input.base || !output.base) {
    *dma_error = true;
    return 0;
  }
  const float input_scale = register_as_float(r.get(kPpuQuantInScale));
  const int32_t input_zero_point = as_signed(r.get(kPpuQuantInZero));
  const float output_scale = register_as_float(r.get(kPpuQuantOutScale));
  const int32_t output_zero_point = as_signed(r.get(kPpuQuantOutZero));
  auto inside = [](int64_t position, int64_t low, int64_t high) {
    return position >= low && position < high;
  };
  const int64_t height = input.height, width = input.width;
  for (uint32_t c = 0; c < input.channels; ++c) {
    for (uint32_t oh = 0; oh < output.height; ++oh) {
      for (uint32_t ow = 0; ow < output.width; ++ow) {
        const int64_t row0 = oh * stride_height - pad_top;
        const int64_t column0 = ow * stride_width - pad_left;
        float result;
        if (maximum) {
          float best = std::numeric_limits<float>::lowest();
          bool found = false;
          for (int64_t kh = 0; kh < kernel_height; ++kh) {
            const int64_t row = row0 + kh;
            if (!inside(row, 0, height)) continue;
            for (int64_t kw = 0; kw < kernel_width; ++kw) {
              const int64_t column = column0 + kw;
              if (!inside(column, 0, width)) continue;
              const float value =
                  decode(*input.at(c, static_cast<uint32_t>(row), static_cast<uint32_t>(column)),
                         input_scale, input_zero_point);
              if (!found || value > best) best = value;
              found = true;
            }
          }
          result = best;
        } else {
          float sum = 0.0f;
          int64_t inside_input = 0, inside_padded = 0;
          for (int64_t kh = 0; kh < kernel_height; ++kh) {
            const int64_t row = row0 + kh;
            const bool row_padded = inside(row, -pad_top, height + pad_bottom);
            const bool row_inside = inside(row, 0, height);
            for (int64_t kw = 0; kw < kernel_width; ++kw) {
              const int64_t column = column0 + kw;
              if (row_padded && inside(column, -pad_left, width + pad_right)) ++inside_padded;
              if (row_inside && inside(column, 0, width)) {
                sum +=
                    decode(*input.at(c, static_cast<uint32_t>(row), static_cast<uint32_t>(column)),
                           input_scale, input_zero_point);
                ++inside_input;
              }
            }
          }
          const int64_t divisor = count_include_pad ? inside_padded : inside_input;
          result = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
        }
        *output.at(c, oh, ow) = encode(result, output_scale, output_zero_point);
      }
    }
  }
  const uint64_t bytes = input.span() + output.span();
  return cycles_for(0, bytes);
}

}  // namespace orknn::driver_shim::emu
