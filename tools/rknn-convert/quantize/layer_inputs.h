// Gathers, during calibration, the inputs each product layer sees (as im2col rows), which the
// error-compensated weight rounding and the bias correction work from
// (quantize/weight_rounding.h). Only a sample of each layer's output positions is kept: the
// rows cost memory (rows x columns floats) and the solve's time grows with them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quantize/weight_rounding.h"

namespace orknn::convert {

class LayerInputCollector {
 public:
  // Finds the layers it can describe in `float_graph`: 2-D Conv with group 1 and explicit pads,
  // Gemm with transA 0, both with float32 constant weights. `max_rows` bounds the rows kept per
  // layer over all `samples` samples.
  LayerInputCollector(const ir::Graph& float_graph, int64_t max_rows, int samples);

  // The activation tensors the layers read (calibration must observe them).
  std::vector<std::string> input_tensors() const;

  // Takes the rows of sample `sample_index` (0-based; samples must come in order) from the
  // float values of the input tensors; `values_of` returns null for a tensor not observed.
  void add_sample(int sample_index,
                  const std::function<const std::vector<float>*(const std::string&)>& values_of);

  // The rows per layer, by the layer's output tensor name; the collector is empty afterwards.
  std::map<std::string, LayerInputRows> take_rows();

 private:
  struct Layer {
    std::string output;
    std::string input;
    bool convolution = false;
    int64_t batch = 1, channels = 0, height = 0, width = 0;  // input (Gemm: rows x channels)
    int64_t out_height = 1, out_width = 1;
    int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
    int64_t pad_top = 0, pad_left = 0, dilation_h = 1, dilation_w = 1;
    int64_t columns() const { return channels * kernel_h * kernel_w; }
    int64_t positions() const { return batch * out_height * out_width; }
  };
  void append_row(const Layer& layer, const std::vector<float>& input, int64_t position,
                  LayerInputRows* rows) const;

  std::vector<Layer> layers_;
  std::map<std::string, LayerInputRows> rows_;
  int64_t max_rows_;
  int samples_;
};

}  // namespace orknn::convert
