// Sample networks with seeded random weights, written in our open .rknn format through
// model::ModelBuilder. They feed the samples (rknn_api_demo, rknn_benchmark), the tests of the
// C API and the benchmarks, so that every part can run without a converter or a vendor model.
//
//   mobilenet_mini  MobileNetV2-shaped classifier: 1x3x224x224 RGB image (applications feed
//                   uint8 NHWC; mean 127.5, std 127.5), 1000-class softmax.
//   two_inputs      like the vendor's multiple_input_demo: 1x1x128x128 and 1x3x128x128 images,
//                   each convolved to 8 channels, then added.
//   tiny            one node of each common op on a 1x3x32x32 image, for quick tests.
//
// Each comes in float32, float16 (every real-valued tensor and constant stored as float16) and
// int8 (w8a8: activations int8 per tensor, asymmetric; Conv/Gemm weights int8 per output channel,
// symmetric; biases int32 with scale input_scale x weight_scale[c] and zero point 0; other
// real-valued constants int8 per tensor, symmetric, power-of-two scale). int8 activation ranges
// come from a calibration that runs the float32 model, with every intermediate tensor made a
// graph output, through the public C API (librknnrt) on seeded synthetic images; outputs of
// Softmax and Sigmoid use the fixed [0, 1) parameters (scale 1/256, zero point -128), and
// pooling, reshaping and transposing ops keep their input's parameters.
//
// Deterministic: the same network, precision and options give the same float32 and float16
// bytes everywhere; int8 files also depend on the runtime's float32 results during calibration,
// so they are identical for one build on one machine (another kernel variant may move a range
// by an ulp). The functions keep no state and may be called from several threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace orknn::sample_models {

enum class SampleNetwork { kMobilenetMini, kTwoInputs, kTiny };
enum class Precision { kFloat32, kFloat16, kInt8 };

struct SampleModelOptions {
  std::string target_platform = "rk3588";
  uint64_t seed = 1;  // weights; the calibration inputs are derived from it too
  // Calibration images: the first ones are the corners of the colour cube (black, red, ...,
  // white), the rest synthetic images like make_sample_input's.
  int calibration_samples = 12;
  // Activations (Relu6 after Conv) as attributes of the Conv node, the way our converter emits
  // them, instead of separate Clip nodes (ONNX style, the default).
  bool fuse_activations = false;
};

// "mobilenet_mini", "two_inputs", "tiny" and "fp32", "fp16", "int8".
const char* network_name(SampleNetwork network);
const char* precision_name(Precision precision);
Result<SampleNetwork> parse_network(std::string_view name);
Result<Precision> parse_precision(std::string_view name);
std::vector<SampleNetwork> all_networks();
std::vector<Precision> all_precisions();

// The serialized .rknn file.
Result<std::vector<uint8_t>> build_sample_model(SampleNetwork network, Precision precision,
                                                const SampleModelOptions& options = {});
// Builds and writes the model with ModelBuilder::write_file (atomic: temporary file + rename).
Status write_sample_model(SampleNetwork network, Precision precision,
                          const SampleModelOptions& options, const std::string& path);

// An application-side input of a sample model: what a camera app would pass to rknn_inputs_set.
struct SampleInput {
  std::vector<int64_t> nhwc_dims;  // [N, H, W, C]
  std::vector<uint8_t> pixels;     // uint8 NHWC, nhwc_dims' product bytes
};
// Shapes of the network's inputs, as NHWC dims, in input order.
std::vector<std::vector<int64_t>> sample_input_dims(SampleNetwork network);
// A deterministic synthetic image for input `input_index`: smooth colour gradients and blobs plus
// a little noise, different for every seed.
SampleInput make_sample_input(SampleNetwork network, int input_index, uint64_t seed);
// The same kind of image for any NHWC dims.
SampleInput make_sample_input_for_dims(const std::vector<int64_t>& nhwc_dims, uint64_t seed);

// Multiply-accumulates of the network's Conv and Gemm nodes (its size, whatever the precision).
int64_t sample_model_multiply_accumulates(SampleNetwork network);

// Writes a uint8 array as a NumPy .npy file (format 1.0, C order).
Status write_npy_uint8(const std::string& path, const std::vector<int64_t>& shape,
                       const std::vector<uint8_t>& data);

}  // namespace orknn::sample_models
