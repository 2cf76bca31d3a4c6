#include "calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rknn_api.h"

namespace orknn::sample_models {
namespace {

// Destroys the context on every path out of the calibration.
class ContextGuard {
 public:
  ~ContextGuard() {
    if (context) rknn_destroy(context);
  }
  rknn_context context = 0;
};

template <typename... Parts>
Status api_failure(const char* call, int code, const Parts&... parts) {
  return internal_failure("calibration: ", call, " returned ", code, parts...,
                          " (see the E RKNN log line above for the reason)");
}

}  // namespace

Result<ActivationRanges> calibrate_with_c_api(
    const std::vector<uint8_t>& model, const std::vector<int>& output_tensors, int samples,
    const std::function<SampleInput(int sample, int input_index)>& make_input) {
  if (samples < 1) return invalid_argument("calibration needs at least 1 sample, got ", samples);
  ContextGuard guard;
  int ret = rknn_init(&guard.context, const_cast<uint8_t*>(model.data()),
                      static_cast<uint32_t>(model.size()), 0, nullptr);
  if (ret != RKNN_SUCC) {
    guard.context = 0;
    return api_failure("rknn_init", ret);
  }
  rknn_input_output_num io_num{};
  ret = rknn_query(guard.context, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
  if (ret != RKNN_SUCC) return api_failure("rknn_query(IN_OUT_NUM)", ret);
  if (io_num.n_output != output_tensors.size()) {
    return internal_failure("calibration: the model has ", io_num.n_output, " outputs, expected ",
                            output_tensors.size());
  }

  ActivationRanges ranges;
  for (int tensor : output_tensors) {
    ranges[tensor] = {std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()};
  }
  std::vector<rknn_output> outputs(io_num.n_output);
  for (int sample = 0; sample < samples; ++sample) {
    std::vector<SampleInput> pixels;
    std::vector<rknn_input> inputs(io_num.n_input);
    for (uint32_t i = 0; i < io_num.n_input; ++i) {
      pixels.push_back(make_input(sample, static_cast<int>(i)));
      rknn_input& input = inputs[i];
      input = rknn_input{};
      input.index = i;
      input.buf = pixels.back().pixels.data();
      input.size = static_cast<uint32_t>(pixels.back().pixels.size());
      input.pass_through = 0;
      input.type = RKNN_TENSOR_UINT8;
      input.fmt = RKNN_TENSOR_NHWC;
    }
    ret = rknn_inputs_set(guard.context, io_num.n_input, inputs.data());
    if (ret != RKNN_SUCC) return api_failure("rknn_inputs_set", ret);
    ret = rknn_run(guard.context, nullptr);
    if (ret != RKNN_SUCC) return api_failure("rknn_run", ret);
    for (uint32_t i = 0; i < io_num.n_output; ++i) {
      outputs[i] = rknn_output{};
      outputs[i].index = i;
      outputs[i].want_float = 1;
    }
    ret = rknn_outputs_get(guard.context, io_num.n_output, outputs.data(), nullptr);
    if (ret != RKNN_SUCC) return api_failure("rknn_outputs_get", ret);
    Status status;
    for (uint32_t i = 0; i < io_num.n_output && status.ok(); ++i) {
      ActivationRange& range = ranges[output_tensors[i]];
      const float* values = static_cast<const float*>(outputs[i].buf);
      const size_t count = outputs[i].size / sizeof(float);
      for (size_t k = 0; k < count; ++k) {
        if (!std::isfinite(values[k])) {
          status = internal_failure("calibration: output ", i, " element ", k, " is ", values[k]);
          break;
        }
        range.minimum = std::min(range.minimum, values[k]);
        range.maximum = std::max(range.maximum, values[k]);
      }
    }
    rknn_outputs_release(guard.context, io_num.n_output, outputs.data());
    ORKNN_RETURN_IF_ERROR(status);
  }
  return ranges;
}

}  // namespace orknn::sample_models
