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
#include "reference/window_geometry.h"

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

  // Appends to *rows the rows of one layer (by output tensor name) that add_sample would take
  // for sample `sample_index` from `input`, the values of the layer's input tensor: the same
  // output positions, so rows taken from two models' values pair up one to one (sequential
  // refinement reads the quantized model's rows beside the float model's). False when the
  // layer is unknown or `input` has the wrong size.
  bool append_sample_rows(const std::string& layer_output, int sample_index,
                          const std::vector<float>& input, LayerInputRows* rows) const;

 private:
  struct Layer {
    std::string output;
    std::string input;
    bool convolution = false;
    int64_t batch = 1, channels = 0;  // input (Gemm: rows x channels)
    // Conv's window, in the reference kernels' terms (Gemm: all 1, no padding).
    kernels::reference::Window2D window;
    int64_t columns() const { return channels * window.kernel_height * window.kernel_width; }
    int64_t positions() const { return batch * window.output_height * window.output_width; }
    int64_t input_elements() const {
      return batch * channels * window.input_height * window.input_width;
    }
  };
  void append_row(const Layer& layer, const std::vector<float>& input, int64_t position,
                  LayerInputRows* rows) const;
  void append_rows(const Layer& layer, int sample_index, const std::vector<float>& input,
                   LayerInputRows* rows) const;

  std::vector<Layer> layers_;
  std::map<std::string, LayerInputRows> rows_;
  int64_t max_rows_;
  int samples_;
};

}  // namespace orknn::convert
