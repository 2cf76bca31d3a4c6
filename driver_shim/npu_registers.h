// The RK3588 NPU register map as far as OpenRKNN uses it, and the 64-bit register-command word.
// Offsets and targets come from the public reverse engineering collected in
// docs/npu.md (Mesa `registers.xml`, rkt_regcmd.c, mtx512/rk3588-npu). Registers marked
// "OpenRKNN" below carry values whose hardware encoding is not public; the emulator defines them
// and docs/npu.md lists each one so it can be checked on a board.
#pragma once

#include <cstdint>
#include <cstring>

namespace orknn::driver_shim::npu_reg {

// ---- command word: target[63:48] | value[47:16] | register offset[15:0] --------------------
enum Target : uint16_t {
  kTargetPc = 0x0101,
  kTargetCna = 0x0201,
  kTargetCore = 0x0801,
  kTargetDpu = 0x1001,
  kTargetDpuRdma = 0x2001,
  kTargetPpu = 0x4001,
  kTargetPpuRdma = 0x8001,
  kTargetBarrier = 0x0041,   // "before op_en, 64'h0041_xxxx_xxxx_xxxx must be set"
  kTargetOpEnable = 0x0081,  // value = block mask (GLOBAL bit layout), register 0x0008
};

constexpr uint64_t command(uint16_t target, uint16_t offset, uint32_t value) {
  return (uint64_t{target} << 48) | (uint64_t{value} << 16) | offset;
}
constexpr uint16_t command_target(uint64_t word) {
  return static_cast<uint16_t>(word >> 48);
}
constexpr uint32_t command_value(uint64_t word) {
  return static_cast<uint32_t>(word >> 16);
}
constexpr uint16_t command_offset(uint64_t word) {
  return static_cast<uint16_t>(word);
}

inline uint32_t float_as_register(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
inline float register_as_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// ---- block enable mask (GLOBAL 0xF008 layout; also rknpu_task.enable_mask) -----------------
enum EnableBit : uint32_t {
  kEnableCna = 1u << 0,
  kEnableCore = 1u << 2,
  kEnableDpu = 1u << 3,
  kEnableDpuRdma = 1u << 4,
  kEnablePpu = 1u << 5,
  kEnablePpuRdma = 1u << 6,
};

// ---- interrupt bits (PC INTERRUPT_*) -------------------------------------------------------
constexpr uint32_t kInterruptDpu0 = 1u << 8;
constexpr uint32_t kInterruptDpu1 = 1u << 9;
constexpr uint32_t kInterruptPpu0 = 1u << 10;
constexpr uint32_t kInterruptPpu1 = 1u << 11;
constexpr uint32_t kInterruptDmaReadError = 1u << 12;
constexpr uint32_t kInterruptDmaWriteError = 1u << 13;
constexpr uint32_t kInterruptClearAll = 0x1ffff;

// ---- PC (0x0000) ----------------------------------------------------------------------------
constexpr uint16_t kPcVersion = 0x0000;
constexpr uint16_t kPcVersionNumber = 0x0004;
constexpr uint16_t kPcOperationEnable = 0x0008;
constexpr uint16_t kPcBaseAddress = 0x0010;      // next task's regcmd address (task tail)
constexpr uint16_t kPcRegisterAmounts = 0x0014;  // next task's fetch amount, 128-bit units - 1
constexpr uint16_t kPcInterruptMask = 0x0020;
constexpr uint16_t kPcInterruptClear = 0x0024;
constexpr uint16_t kPcInterruptStatus = 0x0028;
constexpr uint16_t kPcInterruptRawStatus = 0x002c;
constexpr uint16_t kPcTaskControl = 0x0030;
constexpr uint16_t kPcTaskStatus = 0x003c;
constexpr uint32_t kTailWords = 4;  // RKNPU_PC_DATA_EXTRA_AMOUNT

// ---- CNA (0x1000) ---------------------------------------------------------------------------
constexpr uint16_t kCnaConvCon1 = 0x100c;  // CONV_MODE[3:0]: 0 direct, 3 depthwise
constexpr uint16_t kCnaConvCon3 =
    0x1014;  // ATROUS_Y[25:21] ATROUS_X[20:16] STRIDE_Y[5:3] STRIDE_X[2:0]
constexpr uint16_t kCnaDataSize0 = 0x1020;  // WIDTH[26:16] HEIGHT[10:0]
constexpr uint16_t kCnaDataSize1 = 0x1024;  // CHANNEL_REAL-1[29:16] CHANNEL_ALIGNED[15:0]
constexpr uint16_t kCnaDataSize2 = 0x1028;
constexpr uint16_t kCnaDataSize3 = 0x102c;
constexpr uint16_t kCnaWeightSize0 = 0x1030;
constexpr uint16_t kCnaWeightSize1 = 0x1034;
constexpr uint16_t kCnaWeightSize2 = 0x1038;  // WIDTH[28:24] HEIGHT[20:16] KERNELS[13:0]
constexpr uint16_t kCnaConvCon2 = 0x1010;     // KERNEL_GROUP[23:16] FEATURE_GRAINS[13:4]
constexpr uint16_t kCnaCbufCon0 = 0x1040;     // WEIGHT_REUSE[13] WEIGHT_BANK[7:4] DATA_BANK[3:0]
constexpr uint16_t kCnaCbufCon1 = 0x1044;     // DATA_ENTRIES[13:0]
constexpr uint16_t kCnaCvtCon0 = 0x104c;      // DATA_SIGN[3] CVT_TYPE[1] CVT_BYPASS[0]
constexpr uint16_t kCnaPadCon0 = 0x1068;      // PAD_LEFT[7:4] PAD_TOP[3:0]
constexpr uint16_t kCnaFeatureDataAddr = 0x1070;
constexpr uint16_t kCnaDmaCon0 = 0x1078;      // WEIGHT_BURST_LEN[19:16] DATA_BURST_LEN[3:0]
constexpr uint16_t kCnaDmaCon1 = 0x107c;      // line stride (OpenRKNN: bytes)
constexpr uint16_t kCnaDmaCon2 = 0x1080;      // surface stride (OpenRKNN: bytes)
constexpr uint16_t kCnaFcDataSize0 = 0x1084;  // DMA_WIDTH[29:16] DMA_HEIGHT[10:0]
constexpr uint16_t kCnaFcDataSize1 = 0x1088;  // DMA_CHANNEL[15:0]
constexpr uint16_t kCnaDcompAddr0 = 0x1110;   // weights
constexpr uint16_t kCnaPadCon1 = 0x1184;      // pad value (the input zero point)

// CONV_CON1 / MISC_CFG / DATA_FORMAT precision fields (MTX npu_hw.h: int8 0, float16 2).
constexpr uint32_t kPrecisionInt8 = 0;
constexpr uint32_t kPrecisionFloat16 = 2;
constexpr int kCnaInPrecisionShift = 4;     // CONV_CON1 IN_PRECISION[6:4]
constexpr int kCnaProcPrecisionShift = 7;   // CONV_CON1 PROC_PRECISION[9:7]
constexpr int kCoreProcPrecisionShift = 8;  // MISC_CFG PROC_PRECISION[10:8]
constexpr uint32_t kCbufWeightReuse = 1u << 13;

// The conv buffer of one core (Mesa rkt_ml.h, mtx512 npu_hw.h): 12 banks of 32 KiB, 256 entries
// per bank. Data entries are 64 bytes of one input row (CBUF_CON1 formula); a bank holds 256 of
// them (Mesa's rule, which leaves half of a 32 KiB bank unused if entries were 128 bytes).
// Weights take ceil(bytes / 32 KiB) banks plus one (Mesa rkt_task.c).
constexpr int kCbufBanks = 12;
constexpr uint32_t kCbufBankBytes = 32768;
constexpr uint32_t kCbufEntriesPerBank = 256;
constexpr uint32_t kCbufEntryBytes = 64;

// ---- CORE (0x3000) --------------------------------------------------------------------------
constexpr uint16_t kCoreMiscCfg = 0x3010;       // DW_EN[1] QD_EN[0]
constexpr uint16_t kCoreDataoutSize0 = 0x3014;  // HEIGHT-1[31:16] WIDTH-1[15:0]
constexpr uint16_t kCoreDataoutSize1 = 0x3018;  // CHANNEL-1[15:0]
constexpr uint16_t kCoreClipTruncate = 0x301c;

// ---- DPU (0x4000) ---------------------------------------------------------------------------
constexpr uint16_t kDpuSPointer = 0x4004;        // Mesa writes 0xe in the stream
constexpr uint16_t kDpuFeatureModeCfg = 0x400c;  // BURST_LEN[8:5] CONV_MODE[4:3] OUTPUT_MODE[2:1]
constexpr uint16_t kDpuDataFormat = 0x4010;
constexpr uint16_t kDpuDstBaseAddr = 0x4020;
constexpr uint16_t kDpuDstSurfStride = 0x4024;  // OpenRKNN: bytes
constexpr uint16_t kDpuDataCubeWidth = 0x4030;
constexpr uint16_t kDpuDataCubeHeight = 0x4034;
constexpr uint16_t kDpuDataCubeChannel = 0x403c;
constexpr uint16_t kDpuBsCfg = 0x4040;         // BS_BYPASS[0]: 0 = add the BRDMA bias
constexpr uint16_t kDpuBsAluCfg = 0x4044;      // OpenRKNN standalone mode: main input zero point
constexpr uint16_t kDpuBsMulCfg = 0x4048;      // OpenRKNN standalone mode: main input scale (fp32)
constexpr uint16_t kDpuBsOwCfg = 0x4050;       // SIZE_E_2[10:8] SIZE_E_1[7:5] SIZE_E_0[4:2]
constexpr uint16_t kDpuWdmaSize0 = 0x4058;     // CHANNEL_WDMA[12:0]
constexpr uint16_t kDpuWdmaSize1 = 0x405c;     // HEIGHT_WDMA[28:16] WIDTH_WDMA[12:0]
constexpr uint16_t kDpuBnCfg = 0x4060;         // BN_BYPASS[0]: 0 = multiply by the NRDMA scales
constexpr uint16_t kDpuBnAluCfg = 0x4064;      // OpenRKNN float16: fp32 lower clamp of the conv
constexpr uint16_t kDpuBnReluxCmp = 0x406c;    // OpenRKNN: clamp low[15:0] high[31:16] (int16);
                                               // float16: fp32 upper clamp of the conv
constexpr uint16_t kDpuEwCfg = 0x4070;         // EW_BYPASS[0]: 0 = add the ERDMA operand
constexpr uint16_t kDpuEwCvtOffset = 0x4074;   // OpenRKNN: element-wise operand zero point
constexpr uint16_t kDpuEwCvtScale = 0x4078;    // OpenRKNN: element-wise operand scale (fp32)
constexpr uint16_t kDpuEwReluxCmp = 0x407c;    // OpenRKNN: output zero point after a fused Add
constexpr uint16_t kDpuOutCvtOffset = 0x4080;  // output zero point
constexpr uint16_t kDpuOutCvtScale = 0x4084;   // OpenRKNN standalone mode: output scale (fp32)
constexpr uint16_t kDpuOutCvtShift = 0x4088;
constexpr uint32_t kDpuFp32ToFp16 = 1u << 16;   // OUT_CVT_SCALE FP32TOFP16_EN
constexpr int kDpuOutPrecisionShift = 29;       // DATA_FORMAT OUT_PRECISION[31:29]
constexpr int kDpuInPrecisionShift = 26;        // DATA_FORMAT IN_PRECISION[28:26]
constexpr uint16_t kDpuEwOpValue0 = 0x4090;     // OpenRKNN float16: fp32 lower clamp applied last
constexpr uint16_t kDpuEwOpValue1 = 0x4094;     // OpenRKNN float16: fp32 upper clamp applied last
constexpr uint16_t kDpuLutAccessCfg = 0x4100;   // table write index
constexpr uint16_t kDpuLutAccessData = 0x4104;  // writes one entry, index advances
constexpr uint16_t kDpuLutCfg = 0x4108;         // OpenRKNN: LUT_EN[0], 256-entry int8 table
// OpenRKNN: BN_CFG bit 1 selects the SiLU epilogue of a convolution: the NRDMA value is a
// dequantization scale, SiLU is applied in float and the result quantized with BS_MUL_CFG (fp32
// scale) and OUT_CVT_OFFSET (docs/npu.md section 6).
constexpr uint32_t kDpuBnSiluEpilogue = 1u << 1;

// ---- DPU_RDMA (0x5000) ----------------------------------------------------------------------
constexpr uint16_t kRdmaSPointer = 0x5004;
constexpr uint16_t kRdmaDataCubeWidth = 0x500c;
constexpr uint16_t kRdmaDataCubeHeight = 0x5010;
constexpr uint16_t kRdmaDataCubeChannel = 0x5014;
constexpr uint16_t kRdmaSrcBaseAddr = 0x5018;  // MRDMA: main input of a stand-alone DPU op
constexpr uint16_t kRdmaBsBaseAddr = 0x5020;   // int32 bias per output channel
constexpr uint16_t kRdmaBnBaseAddr =
    0x502c;  // OpenRKNN: fp32 requantization multiplier per channel
constexpr uint16_t kRdmaEwBaseAddr = 0x5038;      // element-wise operand
constexpr uint16_t kRdmaBrdmaCfg = 0x501c;        // BRDMA_DATA_USE[4:1]
constexpr uint16_t kRdmaWeight = 0x5068;          // E/N/B/M arbitration weights
constexpr uint16_t kRdmaFeatureModeCfg = 0x5044;  // IN_PRECISION[17:15] MRDMA_DISABLE[4]
constexpr int kRdmaInPrecisionShift = 15;
constexpr uint32_t kRdmaFp16ToFp32 = 1u << 3;  // MRDMA_FP16TOFP32_EN

// ---- PPU (0x6000) / PPU_RDMA (0x7000) -------------------------------------------------------
constexpr uint16_t kPpuCubeInWidth = 0x600c;
constexpr uint16_t kPpuCubeInHeight = 0x6010;
constexpr uint16_t kPpuCubeInChannel = 0x6014;
constexpr uint16_t kPpuCubeOutWidth = 0x6018;
constexpr uint16_t kPpuCubeOutHeight = 0x601c;
constexpr uint16_t kPpuOperationModeCfg = 0x6024;  // POOLING_METHOD[1:0]; OpenRKNN: COUNT_PAD[8]
constexpr uint16_t kPpuPoolingKernelCfg =
    0x6034;  // STRIDE_H-1[23:20] STRIDE_W-1[19:16] KH-1[11:8] KW-1[3:0]
constexpr uint16_t kPpuPoolingPaddingCfg = 0x6040;  // BOTTOM[14:12] RIGHT[10:8] TOP[6:4] LEFT[2:0]
constexpr uint16_t kPpuQuantInScale = 0x6050;       // OpenRKNN (fp32)
constexpr uint16_t kPpuQuantInZero = 0x6054;        // OpenRKNN
constexpr uint16_t kPpuQuantOutScale = 0x6058;      // OpenRKNN (fp32)
constexpr uint16_t kPpuQuantOutZero = 0x605c;       // OpenRKNN
constexpr uint16_t kPpuDstBaseAddr = 0x6070;
constexpr uint16_t kPpuDstSurfStride = 0x607c;  // OpenRKNN: bytes
constexpr uint16_t kPpuDataFormat = 0x6084;     // PROC_PRECISION[2:0]
constexpr uint16_t kPpuRdmaSrcBaseAddr = 0x701c;
constexpr uint16_t kPpuRdmaSrcSurfStride = 0x7028;  // OpenRKNN: bytes
constexpr uint16_t kPpuRdmaDataFormat = 0x7030;     // IN_PRECISION[1:0]

constexpr uint32_t kPoolingAverage = 0;
constexpr uint32_t kPoolingMax = 1;

// Feature maps are NC1HWC2 with one 16-byte atom per pixel: C2 = 16 int8 or 8 float16 channels.
constexpr int kAtomBytes = 16;
constexpr int kChannelBlock = 16;
// Weights of a direct convolution: [Cout/32][Cin/32][kh][kw][32 oc][32 ic]; depthwise:
// [C/32][kh][kw][32]. Both padded with zeros. float16 (MTX): 16 kernels x 32 channels per
// block, depthwise 16 channels per 32-byte atom.
constexpr int kWeightBlock = 32;
constexpr int kWeightInputBlock = 32;

constexpr uint32_t element_bytes(uint32_t precision) {
  return precision == kPrecisionFloat16 ? 2 : 1;
}
constexpr int channel_block(uint32_t precision) {
  return kAtomBytes / static_cast<int>(element_bytes(precision));
}
constexpr int weight_kernel_block(uint32_t precision) {
  return kWeightBlock / static_cast<int>(element_bytes(precision));
}

}  // namespace orknn::driver_shim::npu_reg
