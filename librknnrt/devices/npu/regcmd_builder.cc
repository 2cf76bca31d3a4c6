#include "devices/npu/regcmd_builder.h"

#include <algorithm>
#include <cstring>

#include "devices/npu/cbuf_plan.h"

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
  return u32(shape.height * shape.width * kAtomBytes);
}

uint32_t row_bytes(const FeatureShape& shape) {
  return u32(shape.width * kAtomBytes);
}

uint32_t precision_of(const NpuLayer& layer) {
  return layer.float16 ? kPrecisionFloat16 : kPrecisionInt8;
}

// Byte offset of channel `channel` (a multiple of the feature block) and row `row`.
uint32_t cube_offset(const NpuLayer& layer, const FeatureShape& shape, int64_t channel,
                     int64_t row) {
  return u32(channel / channel_block(precision_of(layer))) * surface_stride(shape) +
         u32(row) * row_bytes(shape);
}

// The input rows a slice of pooling output rows reads: from its first window row to the end
// of the input (the PPU counts padding against the whole input height).
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

// DPU precisions and, for float16, the clamp applied last (a fused or stand-alone Relu/Clip).
void emit_dpu_precision(Emitter& emit, const NpuLayer& layer) {
  const uint32_t precision = precision_of(layer);
  emit(kTargetDpu, kDpuDataFormat,
       precision << kDpuOutPrecisionShift | precision << kDpuInPrecisionShift | precision);
  if (!layer.float16) return;
  emit(kTargetDpu, kDpuOutCvtScale, kDpuFp32ToFp16 | 1);
  emit(kTargetDpu, kDpuEwOpValue0, float_as_register(layer.final_low));
  emit(kTargetDpu, kDpuEwOpValue1, float_as_register(layer.final_high));
}

void emit_convolution(Emitter& emit, const NpuLayer& layer, const LayerAddresses& addresses,
                      const TaskSlice& slice) {
  const uint32_t precision = precision_of(layer);
  const int64_t channels = slice.end - slice.begin;
  const int64_t input_channels = layer.depthwise ? channels : layer.input.channels;
  const int64_t kernel_block = weight_kernel_block(precision);
  const uint64_t weight_offset = convolution_weight_bytes(layer, slice.begin);
  const ConvInputRows rows = conv_input_rows(layer, slice.row_begin, slice.row_end);
  const int64_t output_rows = slice.row_end - slice.row_begin;
  const uint32_t input_address =
      addresses.input + cube_offset(layer, layer.input, layer.depthwise ? slice.begin : 0, 0) +
      u32(rows.first) * row_bytes(layer.input);
  const uint32_t precisions = precision << kCnaProcPrecisionShift | precision
                                                                        << kCnaInPrecisionShift;
  emit(kTargetCna, kCnaConvCon1, (layer.depthwise ? 3 : 0) | precisions);
  // FEATURE_GRAINS: input rows per CBUF fill; the vendor is reported to use kernel + stride.
  const int64_t grains = std::min<int64_t>(
      (layer.kernel_height - 1) * layer.dilation_height + 1 + layer.stride_height, 1023);
  emit(kTargetCna, kCnaConvCon2, u32(grains << 4));
  emit(kTargetCna, kCnaConvCon3,
       u32(layer.dilation_height << 21 | layer.dilation_width << 16 | layer.stride_height << 3 |
           layer.stride_width));
  emit(kTargetCna, kCnaDataSize0, u32(layer.input.width << 16 | rows.count));
  emit(kTargetCna, kCnaDataSize1,
       u32((input_channels - 1) << 16 | round_up(input_channels, channel_block(precision))));
  emit(kTargetCna, kCnaDataSize2, u32(layer.output.width));
  emit(kTargetCna, kCnaDataSize3, u32(layer.output.width * output_rows));
  emit(kTargetCna, kCnaWeightSize0, u32(convolution_weight_bytes(layer, channels)));
  emit(kTargetCna, kCnaWeightSize1,
       u32(convolution_weight_bytes(layer, channels) /
           uint64_t(layer.depthwise ? 1 : round_up(channels, kernel_block))));
  emit(
      kTargetCna, kCnaWeightSize2,
      u32(layer.kernel_width << 24 | layer.kernel_height << 16 | (layer.depthwise ? 1 : channels)));
  emit(kTargetCna, kCnaCbufCon0,
       u32(slice.weight_banks << 4 | slice.data_banks) |
           (slice.weight_reuse ? kCbufWeightReuse : 0));
  emit(kTargetCna, kCnaCbufCon1, cbuf_data_entries(layer, input_channels));
  // Registers the hardware needs and the emulator ignores (Mesa's values, docs/npu.md 5):
  // the input converter bypassed, bursts of 16, the DMA cube, the DPU write cube and mode.
  emit(kTargetCna, kCnaCvtCon0, 0xb);  // DATA_SIGN | CVT_TYPE | CVT_BYPASS
  emit(kTargetCna, kCnaDmaCon0, 15u << 16 | 15u);
  emit(kTargetCna, kCnaFcDataSize0, u32(layer.input.width << 16 | rows.count));
  emit(kTargetCna, kCnaFcDataSize1, u32(round_up(input_channels, channel_block(precision))));
  emit(kTargetDpu, kDpuSPointer, 0xe);
  emit(kTargetDpuRdma, kRdmaSPointer, 0xe);
  emit(kTargetDpu, kDpuFeatureModeCfg, (layer.depthwise ? 3u << 3 : 0u) | 15u << 5 | 2u << 1);
  const uint32_t size_e = layer.depthwise ? 3 : 1;
  emit(kTargetDpu, kDpuBsOwCfg, size_e << 8 | size_e << 5 | size_e << 2);
  emit(kTargetDpu, kDpuWdmaSize0, u32(channels - 1));
  emit(kTargetDpu, kDpuWdmaSize1, u32((output_rows - 1) << 16 | (layer.output.width - 1)));
  emit(kTargetDpuRdma, kRdmaDataCubeWidth, u32(layer.output.width - 1));
  emit(kTargetDpuRdma, kRdmaDataCubeHeight, u32(output_rows - 1));
  emit(kTargetDpuRdma, kRdmaDataCubeChannel, u32(channels - 1));
  emit(kTargetDpuRdma, kRdmaBrdmaCfg, 1u << 1);
  emit(kTargetDpuRdma, kRdmaWeight, 0x01010101);
  emit(kTargetCna, kCnaPadCon0, u32(layer.pad_left << 4 | rows.pad_top));
  emit(kTargetCna, kCnaFeatureDataAddr, input_address);
  emit(kTargetCna, kCnaDmaCon1, row_bytes(layer.input));
  emit(kTargetCna, kCnaDmaCon2, surface_stride(layer.input));
  emit(kTargetCna, kCnaDcompAddr0, addresses.weights + u32(weight_offset));
  emit(kTargetCna, kCnaPadCon1, static_cast<uint32_t>(layer.input_zero_point));
  emit(kTargetCore, kCoreMiscCfg, (layer.depthwise ? 3 : 1) | precision << kCoreProcPrecisionShift);
  emit(kTargetCore, kCoreDataoutSize0, u32((output_rows - 1) << 16 | (layer.output.width - 1)));
  emit(kTargetCore, kCoreDataoutSize1, u32(channels - 1));
  emit(kTargetCore, kCoreClipTruncate, 0);
  emit(kTargetDpu, kDpuDstBaseAddr,
       addresses.output + cube_offset(layer, layer.output, slice.begin, slice.row_begin));
  emit(kTargetDpu, kDpuDstSurfStride, surface_stride(layer.output));
  emit(kTargetDpu, kDpuDataCubeWidth, u32(layer.output.width - 1));
  emit(kTargetDpu, kDpuDataCubeHeight, u32(output_rows - 1));
  emit(kTargetDpu, kDpuDataCubeChannel, u32(channels - 1));
  emit_dpu_precision(emit, layer);
  emit(kTargetDpu, kDpuBsCfg, 0);                        // add the per-channel bias
  emit(kTargetDpu, kDpuEwCfg, layer.fused_add ? 0 : 1);  // element-wise operand after requant
  emit(kTargetDpuRdma, kRdmaEwBaseAddr,
       layer.fused_add
           ? addresses.operand + cube_offset(layer, layer.output, slice.begin, slice.row_begin)
           : 0);
  emit(kTargetDpuRdma, kRdmaBsBaseAddr, addresses.bias + u32(slice.begin * 4));
  if (layer.float16) {
    // fp32 accumulator plus fp32 bias, no multiplier; the SiLU epilogue or the clamp in float.
    emit(kTargetDpu, kDpuBnCfg, 1 | (layer.silu ? kDpuBnSiluEpilogue : 0));
    emit(kTargetDpu, kDpuBnAluCfg, float_as_register(layer.float_low));
    emit(kTargetDpu, kDpuBnReluxCmp, float_as_register(layer.float_high));
    return;
  }
  // Multiply by the per-channel value; with the SiLU epilogue it is a dequantization scale.
  emit(kTargetDpu, kDpuBnCfg, layer.silu ? kDpuBnSiluEpilogue : 0);
  emit(kTargetDpu, kDpuBnReluxCmp,
       static_cast<uint32_t>(static_cast<uint16_t>(layer.clamp_low)) |
           static_cast<uint32_t>(static_cast<uint16_t>(layer.clamp_high)) << 16);
  emit(kTargetDpu, kDpuOutCvtOffset, static_cast<uint32_t>(layer.output_zero_point));
  emit(kTargetDpu, kDpuBsMulCfg, float_as_register(layer.conv_output_scale));
  emit(kTargetDpu, kDpuEwCvtOffset, static_cast<uint32_t>(layer.operand_zero_point));
  emit(kTargetDpu, kDpuEwCvtScale, float_as_register(layer.operand_scale));
  emit(kTargetDpu, kDpuEwReluxCmp, static_cast<uint32_t>(layer.fused_output_zero_point));
  emit(kTargetDpu, kDpuOutCvtScale, float_as_register(layer.fused_output_scale));
  emit_lut(emit, layer);
  emit(kTargetDpuRdma, kRdmaBnBaseAddr, addresses.multipliers + u32(slice.begin * 4));
}

void emit_standalone_dpu(Emitter& emit, const NpuLayer& layer, const LayerAddresses& addresses,
                         const TaskSlice& slice) {
  const uint32_t offset = cube_offset(layer, layer.input, slice.begin, slice.row_begin);
  const bool add = layer.kind == LayerKind::kAdd;
  emit(kTargetDpu, kDpuDataCubeWidth, u32(layer.input.width - 1));
  emit(kTargetDpu, kDpuDataCubeHeight, u32(slice.row_end - slice.row_begin - 1));
  emit(kTargetDpu, kDpuDataCubeChannel, u32(slice.end - slice.begin - 1));
  // A Concat input lands at its channel offset (a whole number of feature blocks).
  const uint32_t placement = cube_offset(layer, layer.input, layer.output_channel_offset, 0);
  emit(kTargetDpu, kDpuDstBaseAddr, addresses.output + offset + placement);
  emit(kTargetDpu, kDpuDstSurfStride, surface_stride(layer.input));
  emit(kTargetDpu, kDpuEwCfg, add ? 0 : 1);
  emit_dpu_precision(emit, layer);
  if (!layer.float16) {
    emit(kTargetDpu, kDpuBsAluCfg, static_cast<uint32_t>(layer.input_zero_point));
    emit(kTargetDpu, kDpuBsMulCfg, float_as_register(layer.input_scale));
    emit(kTargetDpu, kDpuEwCvtOffset, static_cast<uint32_t>(layer.operand_zero_point));
    emit(kTargetDpu, kDpuEwCvtScale, float_as_register(layer.operand_scale));
    emit(kTargetDpu, kDpuOutCvtOffset, static_cast<uint32_t>(layer.output_zero_point));
    emit(kTargetDpu, kDpuOutCvtScale, float_as_register(layer.output_scale));
    emit_lut(emit, layer);
  }
  emit(kTargetDpuRdma, kRdmaSrcBaseAddr, addresses.input + offset);
  emit(kTargetDpuRdma, kRdmaEwBaseAddr, add ? addresses.operand + offset : 0);
  // MRDMA reads the main input (MRDMA_DISABLE = 0); float16 is widened to fp32 on the way in.
  emit(kTargetDpuRdma, kRdmaFeatureModeCfg,
       layer.float16 ? kPrecisionFloat16 << kRdmaInPrecisionShift | kRdmaFp16ToFp32 : 0);
}

void emit_pooling(Emitter& emit, const NpuLayer& layer, const LayerAddresses& addresses,
                  const TaskSlice& slice) {
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
  emit(kTargetPpu, kPpuDataFormat, precision_of(layer));
  emit(kTargetPpuRdma, kPpuRdmaDataFormat, precision_of(layer));
  if (!layer.float16) {
    emit(kTargetPpu, kPpuQuantInScale, float_as_register(layer.input_scale));
    emit(kTargetPpu, kPpuQuantInZero, static_cast<uint32_t>(layer.input_zero_point));
    emit(kTargetPpu, kPpuQuantOutScale, float_as_register(layer.output_scale));
    emit(kTargetPpu, kPpuQuantOutZero, static_cast<uint32_t>(layer.output_zero_point));
  }
  emit(kTargetPpu, kPpuDstBaseAddr,
       addresses.output + cube_offset(layer, layer.output, slice.begin, slice.row_begin));
  emit(kTargetPpu, kPpuDstSurfStride, surface_stride(layer.output));
  emit(kTargetPpuRdma, kPpuRdmaSrcBaseAddr,
       addresses.input + cube_offset(layer, layer.input, slice.begin, rows.input_row));
  emit(kTargetPpuRdma, kPpuRdmaSrcSurfStride, surface_stride(layer.input));
}

}  // namespace

int64_t feature_channel_block(bool float16) {
  return channel_block(float16 ? kPrecisionFloat16 : kPrecisionInt8);
}

uint64_t feature_bytes(const FeatureShape& shape, bool float16) {
  const int64_t block = feature_channel_block(float16);
  return uint64_t(round_up(shape.channels, block) / block) * shape.height * shape.width *
         kAtomBytes;
}

int64_t slice_granularity(const NpuLayer& layer) {
  return layer.kind == LayerKind::kConvolution ? weight_kernel_block(precision_of(layer))
                                               : feature_channel_block(layer.float16);
}

namespace {

// Writes element `index` of the packed layout from source element `source`.
template <typename Element>
void place(std::vector<uint8_t>& packed, size_t index, const Element& value) {
  std::memcpy(packed.data() + index * sizeof(Element), &value, sizeof(Element));
}

template <typename Element>
std::vector<uint8_t> pack_blocks(const NpuLayer& layer, const std::vector<Element>& weights) {
  const int64_t taps = layer.kernel_height * layer.kernel_width;
  const int64_t kernel_block = weight_kernel_block(precision_of(layer));
  const int64_t outputs = round_up(layer.output.channels, kernel_block);
  if (layer.depthwise) {
    std::vector<uint8_t> packed(static_cast<size_t>(outputs * taps) * sizeof(Element), 0);
    for (int64_t c = 0; c < layer.output.channels; ++c) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        place(packed,
              static_cast<size_t>(((c / kernel_block) * taps + tap) * kernel_block +
                                  c % kernel_block),
              weights[size_t(c * taps + tap)]);
      }
    }
    return packed;
  }
  const int64_t inputs = round_up(layer.input.channels, kWeightInputBlock);
  const int64_t input_blocks = inputs / kWeightInputBlock;
  std::vector<uint8_t> packed(static_cast<size_t>(outputs * inputs * taps) * sizeof(Element), 0);
  for (int64_t oc = 0; oc < layer.output.channels; ++oc) {
    for (int64_t ic = 0; ic < layer.input.channels; ++ic) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int64_t block = (oc / kernel_block) * input_blocks + ic / kWeightInputBlock;
        place(packed,
              static_cast<size_t>(((block * taps + tap) * kernel_block + oc % kernel_block) *
                                      kWeightInputBlock +
                                  ic % kWeightInputBlock),
              weights[static_cast<size_t>((oc * layer.input.channels + ic) * taps + tap)]);
      }
    }
  }
  return packed;
}

}  // namespace

std::vector<uint8_t> pack_weights(const NpuLayer& layer) {
  return layer.float16 ? pack_blocks(layer, layer.half_weights) : pack_blocks(layer, layer.weights);
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
