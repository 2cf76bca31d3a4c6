// Everything a conversion can be told, named after the vendor toolkit's parameters
// (config / load_onnx / build / export_rknn) so that a toolkit script translates key by key.
// Filled from a YAML/JSON config file and the command line (options/option_parsing.h); the
// command line wins. docs/rknn-convert.md is the user-facing reference.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace orknn::convert {

enum class QuantizedAlgorithm { kNormal, kKlDivergence, kMmse };
enum class QuantizedMethod { kChannel, kLayer };
enum class FloatType { kFloat16, kFloat32 };
// How int8 weights are rounded (quantize/weight_rounding.h).
enum class WeightRounding { kNearest, kErrorCompensated };

const char* algorithm_name(QuantizedAlgorithm algorithm);
const char* method_name(QuantizedMethod method);
const char* float_type_name(FloatType type);
const char* weight_rounding_name(WeightRounding rounding);

struct ConvertOptions {
  // load_onnx
  std::string model_path;
  std::vector<std::string> inputs;                    // empty: the model's own inputs
  std::vector<std::vector<int64_t>> input_size_list;  // one shape per input (in `inputs` order)
  std::vector<std::string> outputs;                   // empty: the model's own outputs

  // config
  std::vector<std::vector<float>> mean_values;  // one list per input, one value per channel
  std::vector<std::vector<float>> std_values;
  std::vector<bool> quant_img_rgb2bgr;  // per input (one value applies to all)
  std::string target_platform;          // lower case; empty: any
  std::string custom_string;
  std::string quantized_dtype = "w8a8";
  QuantizedAlgorithm quantized_algorithm = QuantizedAlgorithm::kNormal;
  QuantizedMethod quantized_method = QuantizedMethod::kChannel;
  FloatType float_dtype = FloatType::kFloat16;
  int optimization_level = 3;
  std::map<std::string, std::string> op_target;  // output tensor name -> cpu/npu/gpu/auto
  // [set][input] -> shape; empty for static models.
  std::vector<std::vector<std::vector<int64_t>>> dynamic_input;

  // build
  bool do_quantization = true;
  std::string dataset_path;
  int rknn_batch_size = 0;  // 0: unchanged

  // export_rknn
  std::string output_path;

  // Our additions.
  std::string quantization_config_path;  // hybrid quantization: per-tensor overrides (YAML)
  int calibration_threads = 0;           // 0: one per core
  // int8 weights: rounding that cancels errors in the layer's output over the calibration
  // inputs, and biases corrected for the mean error that remains (quantize/weight_rounding.h).
  WeightRounding weight_rounding = WeightRounding::kErrorCompensated;
  bool bias_correction = true;
  int64_t weight_rounding_rows = 4096;
  // Both of the above done layer by layer on the quantized model's own inputs instead of the
  // float model's (quantize/sequential_refinement.h). Off by default: it did not raise the
  // YOLO models' cosine (docs/rknn-convert.md).
  bool sequential_calibration = false;
  // Automatic hybrid quantization: this many int8 layers, those accuracy analysis finds losing
  // the most (analysis/layer_sensitivity.h), are kept in float16. 0: none (pure w8a8).
  int auto_hybrid_layers = 0;       // calibration input rows kept per layer for both
  bool quiet = false;               // no progress bar, no summary
  bool verify_with_runtime = true;  // load the written model in the runtime as a last check
  std::string config_directory;     // relative paths in a config file resolve here

  // accuracy-analysis
  std::vector<std::string> analysis_inputs;  // one file per model input
  std::string analysis_output_directory = "snapshot";
};

}  // namespace orknn::convert
