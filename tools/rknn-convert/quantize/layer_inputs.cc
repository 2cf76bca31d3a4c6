#include "quantize/layer_inputs.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace orknn::convert {
namespace {

bool has_float32_constant(const ir::Graph& graph, const ir::Node& node, size_t position) {
  return node.has_input(position) && graph.tensor(node.inputs[position]).is_constant() &&
         graph.tensor(node.inputs[position]).type == DataType::kFloat32;
}

}  // namespace

LayerInputCollector::LayerInputCollector(const ir::Graph& float_graph, int64_t max_rows,
                                         int samples)
    : max_rows_(std::max<int64_t>(1, max_rows)), samples_(std::max(1, samples)) {
  for (const ir::Node& node : float_graph.nodes) {
    if (!node.domain.empty() || node.outputs.empty() || !node.has_input(0) ||
        !has_float32_constant(float_graph, node, 1)) {
      continue;
    }
    const ir::Tensor& input = float_graph.tensor(node.inputs[0]);
    const ir::Tensor& weights = float_graph.tensor(node.inputs[1]);
    const ir::Tensor& output = float_graph.tensor(node.outputs[0]);
    if (input.is_constant() || input.type != DataType::kFloat32) continue;
    Layer layer;
    layer.output = node.outputs[0];
    layer.input = node.inputs[0];
    if (node.op_type == "Conv") {
      const std::string auto_pad = ir::string_attribute(node, "auto_pad", "NOTSET");
      if (input.shape.size() != 4 || weights.shape.size() != 4 || output.shape.size() != 4 ||
          ir::int_attribute(node, "group", 1) != 1 ||
          (auto_pad != "NOTSET" && auto_pad != "VALID")) {
        continue;
      }
      const std::vector<int64_t> pads = ir::ints_attribute(node, "pads", {0, 0, 0, 0});
      const std::vector<int64_t> strides = ir::ints_attribute(node, "strides", {1, 1});
      const std::vector<int64_t> dilations = ir::ints_attribute(node, "dilations", {1, 1});
      if (pads.size() != 4 || strides.size() != 2 || dilations.size() != 2) continue;
      layer.convolution = true;
      layer.batch = input.shape[0];
      layer.channels = input.shape[1];
      kernels::reference::Window2D& window = layer.window;
      window.input_height = input.shape[2];
      window.input_width = input.shape[3];
      window.output_height = output.shape[2];
      window.output_width = output.shape[3];
      window.kernel_height = weights.shape[2];
      window.kernel_width = weights.shape[3];
      window.stride_height = strides[0];
      window.stride_width = strides[1];
      window.dilation_height = dilations[0];
      window.dilation_width = dilations[1];
      if (auto_pad == "NOTSET") {
        window.pad_top = pads[0];
        window.pad_left = pads[1];
      }
      if (weights.shape[1] != layer.channels) continue;
    } else if (node.op_type == "Gemm") {
      if (input.shape.size() != 2 || ir::int_attribute(node, "transA", 0) != 0) continue;
      layer.batch = input.shape[0];
      layer.channels = input.shape[1];
    } else {
      continue;
    }
    if (layer.columns() <= 0 || layer.positions() <= 0) continue;
    layers_.push_back(layer);
    rows_[layer.output].columns = layer.columns();
  }
}

std::vector<std::string> LayerInputCollector::input_tensors() const {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Layer& layer : layers_) {
    if (seen.insert(layer.input).second) names.push_back(layer.input);
  }
  return names;
}

void LayerInputCollector::append_row(const Layer& layer, const std::vector<float>& input,
                                     int64_t position, LayerInputRows* rows) const {
  std::vector<float>& out = rows->values;
  if (!layer.convolution) {
    const float* row = input.data() + position * layer.channels;
    out.insert(out.end(), row, row + layer.channels);
    return;
  }
  const kernels::reference::Window2D& window = layer.window;
  const int64_t per_image = window.output_height * window.output_width;
  const int64_t image = position / per_image;
  const int64_t oy = (position % per_image) / window.output_width;
  const int64_t ox = position % window.output_width;
  const int64_t plane_size = window.input_height * window.input_width;
  const float* base = input.data() + image * layer.channels * plane_size;
  for (int64_t c = 0; c < layer.channels; ++c) {
    const float* plane = base + c * plane_size;
    for (int64_t ky = 0; ky < window.kernel_height; ++ky) {
      const int64_t y = oy * window.stride_height - window.pad_top + ky * window.dilation_height;
      for (int64_t kx = 0; kx < window.kernel_width; ++kx) {
        const int64_t x = ox * window.stride_width - window.pad_left + kx * window.dilation_width;
        const bool inside = y >= 0 && y < window.input_height && x >= 0 && x < window.input_width;
        out.push_back(inside ? plane[y * window.input_width + x] : 0.0f);  // padding is zero
      }
    }
  }
}

void LayerInputCollector::append_rows(const Layer& layer, int sample_index,
                                      const std::vector<float>& input, LayerInputRows* rows) const {
  const int64_t per_sample = (max_rows_ + samples_ - 1) / samples_;
  const int64_t positions = layer.positions();
  if (positions <= per_sample) {
    for (int64_t p = 0; p < positions; ++p) append_row(layer, input, p, rows);
    return;
  }
  // Evenly spaced positions, shifted from sample to sample (golden-ratio offsets) so the
  // samples together cover the image rather than the same pixels each time.
  const double stride = static_cast<double>(positions) / static_cast<double>(per_sample);
  const double offset = std::fmod(0.6180339887 * (sample_index + 1), 1.0);
  for (int64_t i = 0; i < per_sample; ++i) {
    const int64_t p = std::min(positions - 1, static_cast<int64_t>((i + offset) * stride));
    append_row(layer, input, p, rows);
  }
}

void LayerInputCollector::add_sample(
    int sample_index,
    const std::function<const std::vector<float>*(const std::string&)>& values_of) {
  for (const Layer& layer : layers_) {
    const std::vector<float>* input = values_of(layer.input);
    if (!input || static_cast<int64_t>(input->size()) != layer.input_elements()) continue;
    append_rows(layer, sample_index, *input, &rows_[layer.output]);
  }
}

bool LayerInputCollector::append_sample_rows(const std::string& layer_output, int sample_index,
                                             const std::vector<float>& input,
                                             LayerInputRows* rows) const {
  for (const Layer& layer : layers_) {
    if (layer.output != layer_output) continue;
    if (static_cast<int64_t>(input.size()) != layer.input_elements()) return false;
    if (rows->columns == 0) rows->columns = layer.columns();
    if (rows->columns != layer.columns()) return false;
    append_rows(layer, sample_index, input, rows);
    return true;
  }
  return false;
}

std::map<std::string, LayerInputRows> LayerInputCollector::take_rows() {
  std::map<std::string, LayerInputRows> rows = std::move(rows_);
  rows_.clear();
  return rows;
}

}  // namespace orknn::convert
