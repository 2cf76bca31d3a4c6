#include "devices/npu/cbuf_plan.h"

#include <algorithm>

#include "driver_shim/npu_registers.h"

namespace orknn::devices::npu {

using namespace driver_shim::npu_reg;

namespace {

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

uint32_t precision_of(const NpuLayer& layer) {
  return layer.float16 ? kPrecisionFloat16 : kPrecisionInt8;
}

int weight_banks(uint64_t bytes) {
  // Mesa rkt_task.c adds one bank to what the weights fill ("why do we need an extra bank?").
  return static_cast<int>((bytes + kCbufBankBytes - 1) / kCbufBankBytes) + 1;
}

uint64_t data_banks(uint64_t entries_per_row, int64_t rows) {
  return (entries_per_row * uint64_t(rows) + kCbufEntriesPerBank - 1) / kCbufEntriesPerBank;
}

// Input channels one task of `channels` output channels reads.
int64_t channels_read(const NpuLayer& layer, int64_t channels) {
  return layer.depthwise ? channels : layer.input.channels;
}

// The most input rows any single output row reads.
int64_t rows_of_one_output_row(const NpuLayer& layer) {
  int64_t most = 0;
  for (int64_t row = 0; row < layer.output.height; ++row) {
    most = std::max(most, conv_input_rows(layer, row, row + 1).count);
  }
  return most;
}

}  // namespace

ConvInputRows conv_input_rows(const NpuLayer& layer, int64_t row_begin, int64_t row_end) {
  const int64_t extent = (layer.kernel_height - 1) * layer.dilation_height + 1;
  const int64_t start = row_begin * layer.stride_height - layer.pad_top;
  const int64_t stop = (row_end - 1) * layer.stride_height - layer.pad_top + extent;
  ConvInputRows rows;
  rows.first = std::clamp<int64_t>(start, 0, layer.input.height);
  rows.pad_top = std::max<int64_t>(-start, 0);
  rows.count = std::max<int64_t>(std::min(stop, layer.input.height) - rows.first, 0);
  return rows;
}

uint32_t cbuf_data_entries(const NpuLayer& layer, int64_t channels) {
  const uint32_t precision = precision_of(layer);
  const uint64_t row_bytes = uint64_t(layer.input.width) *
                             uint64_t(round_up(channels, channel_block(precision))) *
                             element_bytes(precision);
  return static_cast<uint32_t>((row_bytes + kCbufEntryBytes - 1) / kCbufEntryBytes);
}

uint64_t convolution_weight_bytes(const NpuLayer& layer, int64_t channels) {
  const uint32_t precision = precision_of(layer);
  const uint64_t taps = uint64_t(layer.kernel_height * layer.kernel_width);
  const uint64_t kernels = uint64_t(round_up(channels, weight_kernel_block(precision)));
  const uint64_t inputs =
      layer.depthwise ? 1 : uint64_t(round_up(layer.input.channels, kWeightInputBlock));
  return taps * kernels * inputs * element_bytes(precision);
}

Result<std::vector<TaskSlice>> split_for_cbuf(const NpuLayer& layer, const TaskSlice& whole) {
  const int64_t block = weight_kernel_block(precision_of(layer));
  const int64_t one_row = rows_of_one_output_row(layer);
  auto fits = [&](int64_t channels) {
    const uint64_t entries = cbuf_data_entries(layer, channels_read(layer, channels));
    return weight_banks(convolution_weight_bytes(layer, channels)) + data_banks(entries, one_row) <=
           uint64_t(kCbufBanks);
  };
  // The largest channel group (whole weight blocks) whose weights stay resident beside the
  // rows of one output row.
  int64_t group = whole.end - whole.begin;
  if (!fits(group)) {
    group = (group - 1) / block * block;
    while (group > 0 && !fits(group)) group -= block;
  }
  if (group <= 0) {
    return unimplemented(
        "convolution ", layer.input.channels, "x", layer.input.height, "x", layer.input.width,
        " -> ", layer.output.channels, " kernel ", layer.kernel_height, "x", layer.kernel_width,
        ": one output row of one ", block, "-kernel weight block needs more than the ", kCbufBanks,
        " CBUF banks (", convolution_weight_bytes(layer, block), " weight bytes, ", one_row,
        " input rows of ", cbuf_data_entries(layer, channels_read(layer, block)), " entries)");
  }
  std::vector<TaskSlice> tasks;
  for (int64_t begin = whole.begin; begin < whole.end; begin += group) {
    const int64_t end = std::min(begin + group, whole.end);
    const int weights = weight_banks(convolution_weight_bytes(layer, end - begin));
    const int data = kCbufBanks - weights;
    const uint64_t entries = cbuf_data_entries(layer, channels_read(layer, end - begin));
    const uint64_t capacity = uint64_t(data) * kCbufEntriesPerBank;
    bool first = true;
    for (int64_t row = whole.row_begin; row < whole.row_end;) {
      int64_t stop = row + 1;
      while (stop < whole.row_end &&
             entries * uint64_t(conv_input_rows(layer, row, stop + 1).count) <= capacity) {
        ++stop;
      }
      TaskSlice task{begin, end, row, stop};
      task.data_banks = data;
      task.weight_banks = weights;
      task.weight_reuse = !first;
      tasks.push_back(task);
      first = false;
      row = stop;
    }
  }
  return tasks;
}

}  // namespace orknn::devices::npu
