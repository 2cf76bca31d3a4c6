// Emits the register commands of one task of a layer (npu_registers.h) and assembles tasks
// into PC-chained, 64-byte aligned lists, one per core.
#pragma once

#include <cstdint>
#include <vector>

#include "devices/npu/npu_layer.h"

namespace orknn::devices::npu {

// NPU addresses a task reads and writes.
struct LayerAddresses {
  uint32_t input = 0;
  uint32_t operand = 0;  // kAdd
  uint32_t output = 0;
  uint32_t weights = 0;      // kConvolution: packed weights
  uint32_t bias = 0;         // kConvolution: int32 folded bias per channel
  uint32_t multipliers = 0;  // kConvolution: fp32 multiplier per channel
};

// The part of a layer's output one task computes: channels [begin, end) and rows
// [row_begin, row_end). Convolution channel slices start at a multiple of the weight block
// (32 int8, 16 float16 kernels), others at a multiple of the feature block (16 int8, 8
// float16 channels); rows split anywhere. A convolution task also carries its CBUF split
// (cbuf_plan.h): banks for input rows and for weights, and whether the weights the previous
// task on the core loaded are still resident.
struct TaskSlice {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t row_begin = 0;
  int64_t row_end = 0;
  int data_banks = 0;
  int weight_banks = 0;
  bool weight_reuse = false;
};

// Bytes of one image of an NC1HWC2 feature map (16-byte atoms: 16 int8 or 8 float16 channels).
uint64_t feature_bytes(const FeatureShape& shape, bool float16);
// Channels per 16-byte atom.
int64_t feature_channel_block(bool float16);
// Packs weights into the blocked layout the CNA reads: int8 bytes, or float16 half bits.
std::vector<uint8_t> pack_weights(const NpuLayer& layer);
// Channel granularity of a layer's slices.
int64_t slice_granularity(const NpuLayer& layer);

// Register commands of one task, without the PC tail; *enable_mask receives the blocks it starts.
std::vector<uint64_t> task_commands(const NpuLayer& layer, const LayerAddresses& addresses,
                                    const TaskSlice& slice, uint32_t* enable_mask);

// Lays tasks out one after another from `base_address`, each padded to 64 bytes, and writes each
// tail so the PC walks from one to the next. Returns the words; `out_offsets` receives each
// task's word offset and `out_counts` its command count including the tail.
std::vector<uint64_t> chain_tasks(const std::vector<std::vector<uint64_t>>& tasks,
                                  const std::vector<uint32_t>& enable_masks, uint32_t base_address,
                                  std::vector<size_t>* out_offsets,
                                  std::vector<uint32_t>* out_counts);

}  // namespace orknn::devices::npu
