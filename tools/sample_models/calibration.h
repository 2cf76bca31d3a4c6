// Activation ranges for int8 quantization, measured by running a float32 model through the
// public C API (rknn_api.h), exactly as an application would.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "network.h"
#include "sample_models.h"

namespace orknn::sample_models {

// `model` is a float32 model whose graph outputs are, in order, the tensors `output_tensors`
// (indices into the network). For each of `samples` runs, `make_input(sample, input_index)`
// gives the uint8 NHWC pixels of every input. Returns the minimum and maximum seen for each
// output tensor over all runs.
Result<ActivationRanges> calibrate_with_c_api(
    const std::vector<uint8_t>& model, const std::vector<int>& output_tensors, int samples,
    const std::function<SampleInput(int sample, int input_index)>& make_input);

}  // namespace orknn::sample_models
