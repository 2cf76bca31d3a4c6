#include "graph/ops/spatial_window.h"

#include <algorithm>
#include <string>

#include "graph/ops/node_error.h"

namespace orknn::graph {

Status check_spatial_input_rank(const Node& node, const Shape& input) {
  if (input.size() < 3) {
    return node_error(node, "input shape ", shape_to_string(input),
                      " must have rank >= 3 (N, C, spatial...)");
  }
  return ok_status();
}

Result<AutoPad> parse_auto_pad(const Node& node) {
  ORKNN_ASSIGN_OR_RETURN(std::string text, node.string_attribute("auto_pad", "NOTSET"));
  if (text == "NOTSET" || text.empty()) return AutoPad::kNotSet;
  if (text == "SAME_UPPER") return AutoPad::kSameUpper;
  if (text == "SAME_LOWER") return AutoPad::kSameLower;
  if (text == "VALID") return AutoPad::kValid;
  return node_error(node, "auto_pad '", text,
                    "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

Result<std::vector<int64_t>> ints_per_axis(const Node& node, const char* key, size_t count,
                                           int64_t fallback, int64_t minimum) {
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                         node.ints_attribute(key, std::vector<int64_t>(count, fallback)));
  if (values.size() != count) {
    return node_error(node, "'", key, "' has ", values.size(), " values, expected ", count);
  }
  for (size_t i = 0; i < count; ++i) {
    if (values[i] < minimum) {
      return node_error(node, "'", key, "' value ", values[i], " at position ", i, " is below ",
                        minimum);
    }
  }
  return values;
}

Result<std::vector<int64_t>> explicit_pads(const Node& node, size_t rank, AutoPad auto_pad) {
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ints_per_axis(node, "pads", 2 * rank, 0, 0));
  if (auto_pad != AutoPad::kNotSet) {
    for (int64_t pad : pads) {
      if (pad != 0) return node_error(node, "explicit 'pads' cannot be combined with auto_pad");
    }
  }
  return pads;
}

void split_padding(int64_t total, bool extra_at_end, int64_t* out_begin, int64_t* out_end) {
  *out_begin = extra_at_end ? total / 2 : total - total / 2;
  *out_end = total - *out_begin;
}

Result<SpatialWindow> forward_window(const Node& node, const Shape& input_spatial,
                                     const std::vector<int64_t>& kernel, bool ceil_mode) {
  const size_t rank = input_spatial.size();
  SpatialWindow window;
  window.kernel = kernel;
  ORKNN_ASSIGN_OR_RETURN(window.strides, ints_per_axis(node, "strides", rank, 1, 1));
  ORKNN_ASSIGN_OR_RETURN(window.dilations, ints_per_axis(node, "dilations", rank, 1, 1));
  ORKNN_ASSIGN_OR_RETURN(AutoPad auto_pad, parse_auto_pad(node));
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, explicit_pads(node, rank, auto_pad));
  window.pads_begin.resize(rank);
  window.pads_end.resize(rank);
  window.output.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t length = input_spatial[i];
    const int64_t stride = window.strides[i];
    const int64_t extent = window.dilations[i] * (kernel[i] - 1) + 1;
    if (length < 1) return node_error(node, "input spatial dimension ", i, " is ", length);
    int64_t& begin = window.pads_begin[i];
    int64_t& end = window.pads_end[i];
    if (auto_pad == AutoPad::kNotSet) {
      begin = pads[i];
      end = pads[i + rank];
    } else if (auto_pad == AutoPad::kValid) {
      begin = end = 0;
    } else {
      const int64_t same_output = (length + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (same_output - 1) * stride + extent - length);
      split_padding(total, auto_pad == AutoPad::kSameUpper, &begin, &end);
    }
    const int64_t padded = length + begin + end;
    if (padded < extent) {
      return node_error(node, "kernel extent ", extent, " (kernel ", kernel[i], ", dilation ",
                        window.dilations[i], ") is larger than the padded input ", padded,
                        " along spatial axis ", i);
    }
    const int64_t span = padded - extent;
    int64_t output = span / stride + 1;
    if (ceil_mode && span % stride != 0) {
      ++output;
      // A last window that would start in the end padding is dropped (as PyTorch and ONNX).
      if ((output - 1) * stride >= length + begin) --output;
    }
    window.output[i] = output;
  }
  return window;
}

}  // namespace orknn::graph
