// Splits a convolution into tasks that fit the conv buffer (CBUF) of one core: 12 banks shared
// between input rows and weights (docs/npu.md section 5). Weights that do not fit beside the
// rows of one output row are split along output channels; input rows that do not fit the data
// banks are split along the output height, each task reading the rows its windows overlap.
#pragma once

#include <vector>

#include "core/status.h"
#include "devices/npu/regcmd_builder.h"

namespace orknn::devices::npu {

// The input rows output rows [row_begin, row_end) of a convolution read: the first one, how
// many (clamped to the input, so rows beyond it are the real bottom padding), and the top
// padding left before the first one (non-zero only at the real top border).
struct ConvInputRows {
  int64_t first = 0, count = 0, pad_top = 0;
};
ConvInputRows conv_input_rows(const NpuLayer& layer, int64_t row_begin, int64_t row_end);

// CBUF_CON1 DATA_ENTRIES: 64-byte entries one input row of `channels` channels takes.
uint32_t cbuf_data_entries(const NpuLayer& layer, int64_t channels);
// Packed weight bytes of `channels` output channels (one task's DCOMP read).
uint64_t convolution_weight_bytes(const NpuLayer& layer, int64_t channels);

// The tasks of one convolution slice (a core's share), each with its CBUF configuration, in
// the order they run; follow-on tasks of one channel group set WEIGHT_REUSE. kUnimplemented
// when even one output row of the smallest channel group cannot fit.
Result<std::vector<TaskSlice>> split_for_cbuf(const NpuLayer& layer, const TaskSlice& whole);

}  // namespace orknn::devices::npu
