// The sliding windows of Conv, ConvTranspose and the pooling ops: the attributes they share
// (auto_pad, strides, dilations, pads) and the forward window arithmetic of Conv and pooling.
// Every function checks the node and fails with an invalid-model Status naming it.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace orknn::graph {

// Fails unless `input` is [N, C, spatial...].
Status check_spatial_input_rank(const Node& node, const Shape& input);

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
Result<AutoPad> parse_auto_pad(const Node& node);

// An ints attribute with `count` values, each >= minimum; `fallback` fills an absent one.
Result<std::vector<int64_t>> ints_per_axis(const Node& node, const char* key, size_t count,
                                           int64_t fallback, int64_t minimum);

// Explicit pads [begin..., end...]; with auto_pad other than NOTSET they must be absent or 0.
Result<std::vector<int64_t>> explicit_pads(const Node& node, size_t rank, AutoPad auto_pad);

// Splits `total` padding: SAME_UPPER puts the odd element at the end, SAME_LOWER at the start.
void split_padding(int64_t total, bool extra_at_end, int64_t* out_begin, int64_t* out_end);

// One sliding window per spatial axis with the padding resolved (auto_pad applied) and the
// output length computed.
struct SpatialWindow {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  std::vector<int64_t> output;
};

// The forward window of Conv and the pooling ops: reads auto_pad, strides, dilations and pads
// for `kernel` sliding over `input_spatial`. `ceil_mode` rounds the output length up (pooling),
// dropping a last window that would start in the end padding.
Result<SpatialWindow> forward_window(const Node& node, const Shape& input_spatial,
                                     const std::vector<int64_t>& kernel, bool ceil_mode);

}  // namespace orknn::graph
