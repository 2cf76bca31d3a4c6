// What the CNA/CORE/DPU/DPU_RDMA/PPU blocks compute for the programs OpenRKNN emits. The
// arithmetic is chosen to be bit-exact with the CPU int8 rules (docs/quantization.md); where
// that differs from what the hardware is believed to do, docs/npu.md says so.
#include <algorithm>
#include <cmath>
#include <limits>

#include "driver_shim/emu/block_support.h"
#include "driver_shim/emu/emulator.h"
#include "driver_shim/npu_registers.h"
#include "reference/convolution.h"
#include "reference/quantized_add.h"

namespace orknn::driver_shim::emu {

using namespace npu_reg;

namespace {

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

}  // namespace

uint64_t Emulator::execute_convolution(CoreRegisters& r, bool* dma_error) {
  ConvGeometry g = read_conv_geometry(r, kPrecisionInt8);
  if (!g.consistent) {
    *dma_error = true;  // an inconsistent program; real hardware would hang or corrupt memory
    return 0;
  }
  const bool depthwise = g.depthwise;
  const uint32_t stride_x = g.stride_x, stride_y = g.stride_y;
  const uint32_t dilation_x = g.dilation_x, dilation_y = g.dilation_y;
  const uint32_t kernel_width = g.kernel_width, kernel_height = g.kernel_height;
  const int32_t pad_left = g.pad_left, pad_top = g.pad_top;
  const int32_t pad_value = as_signed(r.get(kCnaPadCon1));
  Cube& input = g.input;
  Cube& output = g.output;
  const uint64_t kernel_area = uint64_t{kernel_width} * kernel_height;
  const uint32_t input_blocks = (input.channels + kWeightBlock - 1) / kWeightBlock;
  const uint64_t weight_bytes = g.weight_bytes;
  if (!check_cbuf(r, input.width, input.height, input.channels, kPrecisionInt8, weight_bytes)) {
    *dma_error = true;
    return 0;
  }
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
  // The CPU's int8 Add on the codes (docs/quantization.md 4.6); its sum is commutative, so the
  // convolution's result may have been either operand of the graph's Add.
  const kernels::reference::QuantizedAdd sum = kernels::reference::make_quantized_add(
      result_scale, output_zero_point, operand_scale, operand_zero_point, sum_scale, sum_zero_point,
      /*subtract=*/false);

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
        // The SiLU epilogue is the CPU reference's own function (docs/quantization.md 4.3), so
        // the two stay bit-exact whatever exp it uses; the lowering bounds acc to int32.
        int8_t y =
            silu ? kernels::reference::requantize_silu(static_cast<int32_t>(accumulator),
                                                       multiplier, result_scale, output_zero_point)
                 : requantize(accumulator, multiplier, output_zero_point, low, high);
        if (add) y = kernels::reference::quantized_add(y, *operand.at(oc, oh, ow), sum);
        if (use_lut) y = r.lut[static_cast<size_t>(y + 128)];
        *output.at(oc, oh, ow) = y;
      }
    }
  }
  const uint64_t macs = uint64_t{output.width} * output.height * output.channels * kernel_area *
                        (depthwise ? 1 : input.channels);
  const uint64_t bytes = input.bytes() + output.bytes() * (add ? 2 : 1) +
                         loaded_weight_bytes(r, weight_bytes) + 8ull * output.channels;
  return cycles_for(macs, bytes);
}

bool Emulator::map_standalone_cubes(const CoreRegisters& r, uint32_t element_bytes, Cube* input,
                                    Cube* operand, Cube* output, bool* add) {
  input->width = field(r.get(kDpuDataCubeWidth), 12, 0) + 1;
  input->height = field(r.get(kDpuDataCubeHeight), 12, 0) + 1;
  input->channels = field(r.get(kDpuDataCubeChannel), 12, 0) + 1;
  input->surface_stride = r.get(kDpuDstSurfStride);
  input->element_bytes = element_bytes;
  *operand = *output = *input;
  *add = (r.get(kDpuEwCfg) & 1) == 0;
  input->base = translate(r.get(kRdmaSrcBaseAddr), input->span());
  output->base = translate(r.get(kDpuDstBaseAddr), output->span());
  operand->base = *add ? translate(r.get(kRdmaEwBaseAddr), operand->span()) : nullptr;
  return input->base && output->base && (!*add || operand->base);
}

uint64_t Emulator::execute_standalone_dpu(const CoreRegisters& r, bool* dma_error) {
  Cube input, operand, output;
  bool add = false;
  if (!map_standalone_cubes(r, 1, &input, &operand, &output, &add)) {
    *dma_error = true;
    return 0;
  }
  const bool use_lut = (r.get(kDpuLutCfg) & 1) != 0;
  const int32_t input_zero_point = as_signed(r.get(kDpuBsAluCfg));
  const float input_scale = register_as_float(r.get(kDpuBsMulCfg));
  const int32_t operand_zero_point = as_signed(r.get(kDpuEwCvtOffset));
  const float operand_scale = register_as_float(r.get(kDpuEwCvtScale));
  const int32_t output_zero_point = as_signed(r.get(kDpuOutCvtOffset));
  const float output_scale = register_as_float(r.get(kDpuOutCvtScale));
  const kernels::reference::QuantizedAdd sum = kernels::reference::make_quantized_add(
      input_scale, input_zero_point, operand_scale, operand_zero_point, output_scale,
      output_zero_point, /*subtract=*/false);
  for (uint32_t c = 0; c < input.channels; ++c) {
    for (uint32_t h = 0; h < input.height; ++h) {
      for (uint32_t w = 0; w < input.width; ++w) {
        int8_t value = *input.at(c, h, w);
        if (add) value = kernels::reference::quantized_add(value, *operand.at(c, h, w), sum);
        if (use_lut) value = r.lut[static_cast<size_t>(value + 128)];
        *output.at(c, h, w) = value;
      }
    }
  }
  const uint64_t bytes = input.bytes() * (add ? 3 : 2);
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
  const PoolingWindow window = read_pooling_window(r);
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
  for (uint32_t c = 0; c < input.channels; ++c) {
    for (uint32_t oh = 0; oh < output.height; ++oh) {
      for (uint32_t ow = 0; ow < output.width; ++ow) {
        const float result = pool_window(window, input, oh, ow, [&](uint32_t row, uint32_t column) {
          return decode(*input.at(c, row, column), input_scale, input_zero_point);
        });
        *output.at(c, oh, ow) = encode(result, output_scale, output_zero_point);
      }
    }
  }
  const uint64_t bytes = input.bytes() + output.bytes();
  return cycles_for(0, bytes);
}

}  // namespace orknn::driver_shim::emu
