#include "devices/npu/regcmd_builder.h"

#include <algorithm>

#include "driver_shim/npu_registers.h"

namespace orknn::devices::npu {

using namespace driver_shim::npu_reg;

namespace {

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
uint32_t u32(int64_t value) {
  return static_cast<uint32_t>(value);
}

class Emitter {
 public:
  void operator()(uint16_t target, uint16_t offset, uint32_t value) {
    words.push_back(command(target, offset, value));
  }
  std::vector<uint64_t> words;
};

uint32_t surface_stride(const FeatureShape& shape) {
  return u32(shape.height * shape.width * 16);
}

uint32_t row_bytes(const FeatureShape& shape) {
  return u32(shape.width * 16);
}

// The input rows a slice of output rows reads through a window: where they start, how many
// the input still has from there, and the top padding left for this slice.
struct RowWindow {
  int64_t input_row = 0, input_rows = 0, pad_top = 0, output_rows = 0;
};
RowWindow row_window(const NpuLayer& layer, const TaskSlice& slice) {
  RowWindow window;
  const int64_t start = slice.row_begin * layer.stride_height - layer.pad_top;
  window.input_row = std::max<int64_t>(start, 0);
  window.pad_top = std::max<int64_t>(-start, 0);
  window.input_rows = layer.input.height - window.input_row;
  window.output_rows = slice.row_end - slice.row_begin;
  return window;
}

void emit_lut(Emitter& emit, const NpuLayer& layer) {
  emit(kTargetDpu, kDpuLutCfg, layer.use_lut ? 1 : 0);
  if (!layer.use_lut) return;
  emit(kTargetDpu, kDpuLutAccessCfg, 0);
  for (int8_t entry : layer.lut) emit(kTargetDpu, kDpuLutAccessData, static_cast<uint8_t>(entry));
}

void emit_convolution(Emitter& emit, const NpuLayer& layer, const LayerAddresses& addresses,
                      const TaskSlice& slice) {
  const int64_t channels = slice.end - slice.begin;
  const int64_t taps = layer.kernel_height * layer.kernel_width;
  const int64_t input_channels = layer.depthwise ? channels : layer.input.channels;
  const int64_t input_blocks = round_up(layer.input.channels, kWeightBlock) / kWeightBlock;
  const uint64_t weight_offset = layer.depthwise
                                     ? uint64_t(slice.begin / kWeightBlock) * taps * kWeightBlock
                                     : uint64_t(slice.begin / kWeightBlock) * input_blocks * taps *
                                           kWeightBlock * kWeightBlock;
  const RowWindow rows = row_window(layer, slice);
  const uint32_t input_address =
      addresses.input + u32(rows.input_row) * row_bytes(layer.input) +
      (layer.depthwise ? u32(slice.begin / kChannelBlock) * surface_stride(layer.input) : 0);
  emit(kTargetCna, kCnaConvCon1, layer.depthwise ? 3 : 0);
  emit(kTargetCna, kCnaConvCon3,
       u32(layer.dilation_height << 21 | layer.dilation_width << 16 | layer.stride_height << 3 |
           layer.stride_width));
  emit(kTargetCna, kCnaDataSize0, u32(layer.input.width << 16 | rows.input_rows));
  emit(kTargetCna, kCnaDataSize1,
       u32((input_channels - 1) << 16 | round_up(input_channels, kChannelBlock)));
  emit(kTargetCna, kCnaDataSize2, u32(layer.output.width));
  emit(kTargetCna, kCnaDataSize3, u32(layer.output.width * rows.output_rows));
  emit(kTargetCna, kCnaWeightSize0,
       u32(taps * round_up(input_channels, kWeightBlock) * round_up(channels, kWeightBlock)));
  emit(kTargetCna, kCnaWeightSize1, u32(taps * round_up(input_channels, kWeightBlock)));
  emit(
      kTargetCna, kCnaWeightSize2,
      u32(layer.kernel_width << 24 | layer.kernel_height << 16 | (layer.depthwise ? 1 : channels)));
  emit(kTargetCna, kCnaPadCon0, u32(layer.pad_left << 4 | rows.pad_top));
  emit(kTargetCna, kCnaFeatureDataAddr, input_address);
  emit(kTargetCna, kCnaDmaCon1, u32(layer.input.width * 16));
  emit(kTargetCna, kCnaDmaCon2, surface_stride(layer.input));
  emit(kTargetCna, kCnaDcompAddr0, addresses.weights + u32(weight_offset));
  emit(kTargetCna, kCnaPadCon1, static_cast<uint32_t>(layer.input_zero_point));
  emit(kTargetCore, kCoreMiscCfg, layer.depthwise ? 3 : 1);
  emit(kTargetCore, kCoreDataoutSize0,
       u32((rows.output_rows - 1) << 16 | (layer.output.width - 1)));
  emit(kTargetCore, kCoreDataoutSize1, u32(channels - 1));
  emit(kTargetCore, kCoreClipTruncate, 0);
  emit(kTargetDpu, kDpuDstBaseAddr,
       addresses.output + u32(slice.begin / kChannelBlock) * surface_stride(layer.output) +
           u32(slice.row_begin) * row_bytes(layer.output));
  emit(kTargetDpu, kDpuDstSurfStride, surface_stride(layer.output));
  emit(kTargetDpu, kDpuDataCubeWidth, u32(layer.output.width - 1));
  emit(kTargetDpu, kDpuDataCubeHeight, u32(rows.output_rows - 1));
  emit(kTargetDpu, kDpuDataCubeChannel, u32(channels - 1));
  emit(kTargetDpu, kDpuBsCfg, 0);  // add the per-channel bias
  // Multiply by the per-channel value; with the SiLU epilogue it is a dequantization scale.
  emit(kTargetDpu, kDpuBnCfg, layer.silu ? kDpuBnSiluEpilogue : 0);
  emit(kTargetDpu, kDpuBnReluxCmp,
       static_cast<uint32_t>(static_cast<uint16_t>(layer.clamp_low)) |
           static_cast<uint32_t>(static_cast<uint16_t>(layer.clamp_high)) << 16);
  emit(kTargetDpu, kDpuEwCfg, layer.fused_add ? 0 : 1);  // element-wise operand after requant
  emit(kTargetDpu, kDpuOutCvtOffset, static_cast<uint32_t>(layer.output_zero_point));
  emit(kTargetDpu, kDpuBsMulCfg, float_as_register(layer.conv_output_scale));
  emit(kTargetDpu, kDpuEwCvtOffset, static_cast<uint32_t>(layer.operand_zero_point));
  emit(kTargetDpu, kDpuEwCvtScale, float_as_register(layer.operand_scale));
  emit(kTargetDpu, kDpuEwReluxCmp, static_cast<uint32_t>(layer.fused_output_zero_point));
  emit(kTargetDpu, kDpuOutCvtScale, float_as_register(layer.fused_output_scale));
  emit(kTargetDpuRdma, kRdmaEwBaseAddr,
       layer.fused_add
           ? addresses.operand + u32(slice.begin / kChannelBlock) * surface_stride(layer.output) +
                 u32(slice.row_begin) * row_bytes(layer.output)
           : 0);
  emit_lut(emit, layer);
  emit(kTargetDpuRdma, kRdmaBsBaseAddr, addresses.bias + u32(slice.begin * 4));
  emit(kTargetDpuRdma, kRdmaBnBaseAddr, addresses.multipliers + u32(slice.begin * 4));
}

void emit_standalone_dpu(Emitter& emit, const NpuLayer& layer, const LayerAddresses& addresses,
                         const TaskSlice& slice) {
  const uint32_t offset = u32(slice.begin / kChannelBlock) * surface_stride(layer.input) +
                          u32(slice.row_begin) * row_bytes(layer.input);
  const bool add = layer.kind == LayerKind::kAdd;
  emit(kTargetDpu, kDpuDataCubeWidth, u32(layer.input.width - 1));
  emit(kTargetDpu, kDpuDataCubeHeight, u32(slice.row_end - slice.row_begin - 1));
  emit(kTargetDpu, kDpuDataCubeChannel, u32(slice.end - slice.begin - 1));
  // A Concat input lands at its channel offset (a whole number of 16-channel blocks).
  const uint32_t placement =
      u32(layer.output_channel_offset / kChannelBlock) * surface_stride(layer.input);
  emit(kTargetDpu, kDpuDstBaseAddr, addresses.output + offset + placement);
  emit(kTargetDpu, kDpuDstSurfStride, surface_stride(layer.input));
  emit(kTargetDpu, kDpuEwCfg, add ? 0 : 1);
  emit(kTargetDpu, kDpuBsAluCfg, static_cast<uint32_t>(layer.input_zero_point));
  emit(kTargetDpu, kDpuBsMulCfg, float_as_register(layer.input_scale));
  emit(kTargetDpu, kDpuEwCvtOffset, static_cast<uint32_t>(layer.operand_zero_point));
  emit(kTargetDpu, kDpuEwCvtScale, float_as_register(layer.operand_scale));
  emit(kTargetDpu, kDpuOutCvtOffset, static_cast<uint32_t>(layer.output_zero_point));
  emit(kTargetDpu, kDpuOutCvtScale, float_as_register(layer.output_scale));
  emit_lut(emit, layer);
  emit(kTargetDpuRdma, kRdmaSrcBaseAddr, addresses.input + offset);
  emit(kTargetDpuRdma, kRdmaEwBaseAddr, add ? addresses.operand + offset : 0);
  emit(kTargetDpuRdma, kRdmaFeatureModeCfg, 0);  // MRDMA reads the main input
}

void emit_pooling(Emitter& emit, const NpuLayer& layer, const LayerAddresses& addresses,
                  const TaskSlice& slice) {
  const uint32_t block = u32(slice.begin / kChannelBlock);
  const RowWindow rows = row_window(layer, slice);
  emit(kTargetPpu, kPpuCubeInWidth, u32(layer.input.width - 1));
  emit(kTargetPpu, kPpuCubeInHeight, u32(rows.input_rows - 1));
  emit(kTargetPpu, kPpuCubeInChannel, u32(slice.end - slice.begin - 1));
  emit(kTargetPpu, kPpuCubeOutWidth, u32(layer.output.width - 1));
  emit(kTargetPpu, kPpuCubeOutHeight, u32(rows.output_rows - 1));
  emit(kTargetPpu, kPpuOperationModeCfg,
       (layer.maximum ? kPoolingMax : kPoolingAverage) | (layer.count_include_pad ? 1u << 8 : 0));
  emit(kTargetPpu, kPpuPoolingKernelCfg,
       u32((layer.stride_height - 1) << 20 | (layer.stride_width - 1) << 16 |
           (layer.kernel_height - 1) << 8 | (layer.kernel_width - 1)));
  emit(kTargetPpu, kPpuPoolingPaddingCfg,
       u32(layer.pad_bottom << 12 | layer.pad_right << 8 | rows.pad_top << 4 | layer.pad_left));
  emit(kTargetPpu, kPpuQuantInScale, float_as_register(layer.input_scale));
  emit(kTargetPpu, kPpuQuantInZero, static_cast<uint32_t>(layer.input_zero_point));
  emit(kTargetPpu, kPpuQuantOutScale, float_as_register(layer.output_scale));
  emit(kTargetPpu, kPpuQuantOutZero, static_cast<uint32_t>(layer.output_zero_point));
  emit(kTargetPpu, kPpuDstBaseAddr,
       addresses.output + block * surface_stride(layer.output) +
           u32(slice.row_begin) * row_bytes(layer.output));
  emit(kTargetPpu, kPpuDstSurfStride, surface_stride(layer.output));
  emit(kTargetPpuRdma, kPpuRdmaSrcBaseAddr,
       addresses.input + block * surface_stride(layer.input) +
           u32(rows.input_row) * row_bytes(layer.input));
  emit(kTargetPpuRdma, kPpuRdmaSrcSurfStride, surface_stride(layer.input));
}

}  // namespace

uint64_t feature_bytes(const FeatureShape& shape) {
  return uint64_t(round_up(shape.channels, kChannelBlock) / kChannelBlock) * shape.height *
         shape.width * 16;
}

int64_t slice_granularity(const NpuLayer& layer) {
  return layer.kind == LayerKind::kConvolution ? kWeightBlock : kChannelBlock;
}

std::vector<int8_t> pack_weights(const NpuLayer& layer) {
  const int64_t taps = layer.kernel_height * layer.kernel_width;
  const int64_t outputs = round_up(layer.output.channels, kWeightBlock);
  if (layer.depthwise) {
    std::vector<int8_t> packed(static_cast<size_t>(outputs * taps), 0);
    for (int64_t c = 0; c < layer.output.channels; ++c) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        packed[static_cast<size_t>(((c / kWeightBlock) * taps + tap) * kWeightBlock +
                                   c % kWeightBlock)] = layer.weights[size_t(c * taps + tap)];
      }
    }
    return packed;
  }
  const int64_t inputs = round_up(layer.input.channels, kWeightBlock);
  const int64_t input_blocks = inputs / kWeightBlock;
  std::vector<int8_t> packed(static_cast<size_t>(outputs * inputs * taps), 0);
  for (int64_t oc = 0; oc < layer.output.channels; ++oc) {
    for (int64_t ic = 0; ic < layer.input.channels; ++ic) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int64_t block = (oc / kWeightBlock) * input_blocks + ic / kWeightBlock;
        packed[static_cast<size_t>(((block * taps + tap) * kWeightBlock + oc % kWeightBlock) *
                                       kWeightBlock +
                                   ic % kWeightBlock)] =
            layer.weights[static_cast<size_t>((oc * layer.input.channels + ic) * taps + tap)];
      }
    }
  }
  return packed;
}

std::vector<uint64_t> task_commands(const NpuLayer& layer, const LayerAddresses& addresses,
                                    const TaskSlice& slice, uint32_t* enable_mask) {
  Emitter emit;
  switch (layer.kind) {
    case LayerKind::kConvolution:
      emit_convolution(emit, layer, addresses, slice);
      *enable_mask = kEnableCna | kEnableCore | kEnableDpu | kEnableDpuRdma;
      break;
    case LayerKind::kAdd:
    case LayerKind::kLookupTable:
      emit_standalone_dpu(emit, layer, addresses, slice);
      *enable_mask = kEnableDpu | kEnableDpuRdma;
      break;
    case LayerKind::kPooling:
      emit_pooling(emit, layer, addresses, slice);
      *enable_mask = kEnablePpu | kEnablePpuRdma;
      break;
  }
  return std::move(emit.words);
}

std::vector<uint64_t> chain_tasks(const std::vector<std::vector<uint64_t>>& tasks,
                                  const std::vector<uint32_t>& enable_masks, uint32_t base_address,
                                  std::vector<size_t>* out_offsets,
                                  std::vector<uint32_t>* out_counts) {
  constexpr size_t kAlignWords = 8;  // 64 bytes
  std::vector<size_t> offsets;
  std::vector<uint32_t> counts;
  size_t position = 0;
  for (const auto& task : tasks) {
    offsets.push_back(position);
    counts.push_back(static_cast<uint32_t>(task.size() + kTailWords));
    position += (task.size() + kTailWords + kAlignWords - 1) / kAlignWords * kAlignWords;
  }
  std::vector<uint64_t> words(position, 0);
  for (size_t t = 0; t < tasks.size(); ++t) {
    std::copy(tasks[t].begin(), tasks[t].end(), words.begin() + long(offsets[t]));
    uint64_t* tail = &words[offsets[t] + tasks[t].size()];
    if (t + 1 < tasks.size()) {
      tail[0] = command(kTargetPc, kPcBaseAddress, base_address + u32(offsets[t + 1] * 8));
      tail[1] = command(kTargetPc, kPcRegisterAmounts, (counts[t + 1] + 1) / 2 - 1);
    }  // else: all-zero NOP words end the chain
    tail[2] = command(kTargetBarrier, 0, 0);
    tail[3] = command(kTargetOpEnable, kPcOperationEnable, enable_masks[t]);
  }
  if (out_offsets) *out_offsets = std::move(offsets);
  if (out_counts) *out_counts = std::move(counts);
  return words;
}

}  // namespace orknn::devices::npu
