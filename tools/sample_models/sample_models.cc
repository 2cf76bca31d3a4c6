#include "sample_models.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "calibration.h"
#include "network.h"
#include "networks.h"

namespace orknn::sample_models {
namespace {

// Mixes a seed with a stream number so that related seeds give unrelated streams.
uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  Random random(seed ^ (stream * 0xd1b54a32d192ed03ull));
  return random.next();
}

Network make_network(SampleNetwork network, const SampleModelOptions& options) {
  switch (network) {
    case SampleNetwork::kMobilenetMini:
      return mobilenet_mini(options.seed, options.fuse_activations);
    case SampleNetwork::kTwoInputs:
      return two_inputs(options.seed);
    case SampleNetwork::kTiny:
      return tiny(options.seed);
  }
  return tiny(options.seed);
}

// Streams of derive_seed: calibration images, and the images make_sample_input gives out.
constexpr uint64_t kCalibrationStream = 0xca1b;
constexpr uint64_t kInputStream = 0x1a9e;

// Calibration images: first the corners of the colour cube (black, the primaries, white, ...)
// with a little noise, which push every channel to its extremes, then synthetic images like
// the ones applications and tests use. A handful of random images alone leaves the tails
// uncovered: an unusually saturated image then overflows the classifier's logit range.
SampleInput make_calibration_input(const std::vector<int64_t>& nhwc_dims, int sample,
                                   uint64_t seed) {
  const int64_t channels = nhwc_dims[3];
  const int corners = 1 << std::min<int64_t>(channels, 3);
  if (sample >= corners) return make_sample_input_for_dims(nhwc_dims, seed);
  SampleInput input;
  input.nhwc_dims = nhwc_dims;
  input.pixels.resize(static_cast<size_t>(nhwc_dims[0] * nhwc_dims[1] * nhwc_dims[2] * channels));
  Random random(seed);
  for (size_t i = 0; i < input.pixels.size(); ++i) {
    const int64_t channel = static_cast<int64_t>(i) % channels;
    const bool bright = (sample >> (channel % 3)) & 1;
    const float noise = random.uniform(0.0f, 24.0f);
    input.pixels[i] = static_cast<uint8_t>(bright ? 255.0f - noise : noise);
  }
  return input;
}

Result<EmitOptions> emit_options(const Network& network, Precision precision,
                                 const SampleModelOptions& options,
                                 ActivationRanges* ranges_storage) {
  EmitOptions emit;
  emit.target_platform = options.target_platform;
  switch (precision) {
    case Precision::kFloat32:
      emit.precision = EmitPrecision::kFloat32;
      return emit;
    case Precision::kFloat16:
      emit.precision = EmitPrecision::kFloat16;
      return emit;
    case Precision::kInt8:
      break;
  }
  // Calibrate: the float32 model with every computed tensor also a graph output.
  std::vector<int> extra_outputs;
  EmitOptions calibration;
  calibration.precision = EmitPrecision::kFloat32;
  calibration.target_platform = options.target_platform;
  calibration.out_extra_outputs = &extra_outputs;
  ORKNN_ASSIGN_OR_RETURN(std::vector<uint8_t> float_model, emit_network(network, calibration));
  std::vector<int> output_tensors = network.outputs;
  output_tensors.insert(output_tensors.end(), extra_outputs.begin(), extra_outputs.end());
  const uint64_t calibration_seed = derive_seed(options.seed, kCalibrationStream);
  const auto make_input = [&](int sample, int input_index) {
    const NetworkTensor& tensor = network.tensors[network.inputs[input_index].tensor];
    const std::vector<int64_t>& s = tensor.shape;
    return make_calibration_input({s[0], s[2], s[3], s[1]}, sample,
                                  derive_seed(calibration_seed, sample * 64 + input_index));
  };
  ORKNN_ASSIGN_OR_RETURN(
      *ranges_storage,
      calibrate_with_c_api(float_model, output_tensors, options.calibration_samples, make_input));
  emit.precision = EmitPrecision::kInt8;
  emit.ranges = ranges_storage;
  return emit;
}

}  // namespace

const char* network_name(SampleNetwork network) {
  switch (network) {
    case SampleNetwork::kMobilenetMini:
      return "mobilenet_mini";
    case SampleNetwork::kTwoInputs:
      return "two_inputs";
    case SampleNetwork::kTiny:
      return "tiny";
  }
  return "unknown";
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return "fp32";
    case Precision::kFloat16:
      return "fp16";
    case Precision::kInt8:
      return "int8";
  }
  return "unknown";
}

std::vector<SampleNetwork> all_networks() {
  return {SampleNetwork::kMobilenetMini, SampleNetwork::kTwoInputs, SampleNetwork::kTiny};
}

std::vector<Precision> all_precisions() {
  return {Precision::kFloat32, Precision::kFloat16, Precision::kInt8};
}

Result<SampleNetwork> parse_network(std::string_view name) {
  for (SampleNetwork network : all_networks()) {
    if (name == network_name(network)) return network;
  }
  return invalid_argument("unknown sample network '", name,
                          "' (known: mobilenet_mini, two_inputs, tiny)");
}

Result<Precision> parse_precision(std::string_view name) {
  for (Precision precision : all_precisions()) {
    if (name == precision_name(precision)) return precision;
  }
  return invalid_argument("unknown precision '", name, "' (known: fp32, fp16, int8)");
}

Result<std::vector<uint8_t>> build_sample_model(SampleNetwork network, Precision precision,
                                                const SampleModelOptions& options) {
  const Network description = make_network(network, options);
  ActivationRanges ranges;
  ORKNN_ASSIGN_OR_RETURN(EmitOptions emit, emit_options(description, precision, options, &ranges));
  return emit_network(description, emit);
}

Status write_sample_model(SampleNetwork network, Precision precision,
                          const SampleModelOptions& options, const std::string& path) {
  const Network description = make_network(network, options);
  ActivationRanges ranges;
  ORKNN_ASSIGN_OR_RETURN(EmitOptions emit, emit_options(description, precision, options, &ranges));
  return emit_network_to_file(description, emit, path);
}

int64_t sample_model_multiply_accumulates(SampleNetwork network) {
  return make_network(network, SampleModelOptions{}).multiply_accumulates();
}

std::vector<std::vector<int64_t>> sample_input_dims(SampleNetwork network) {
  const Network description = make_network(network, SampleModelOptions{});
  std::vector<std::vector<int64_t>> dims;
  for (const NetworkInput& input : description.inputs) {
    const std::vector<int64_t>& s = description.tensors[input.tensor].shape;
    dims.push_back({s[0], s[2], s[3], s[1]});
  }
  return dims;
}

SampleInput make_sample_input_for_dims(const std::vector<int64_t>& nhwc_dims, uint64_t seed) {
  SampleInput input;
  input.nhwc_dims = nhwc_dims;
  const int64_t n = nhwc_dims[0], h = nhwc_dims[1], w = nhwc_dims[2], c = nhwc_dims[3];
  input.pixels.resize(static_cast<size_t>(n * h * w * c));
  Random random(seed);
  for (int64_t b = 0; b < n; ++b) {
    // Per channel: a linear gradient; shared: a few soft blobs that tint every channel.
    struct Blob {
      float x, y, radius2;
      float amplitude[4];
    };
    std::vector<float> base(static_cast<size_t>(c)), gx(static_cast<size_t>(c)),
        gy(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
      base[k] = random.uniform(40.0f, 200.0f);
      gx[k] = random.uniform(-120.0f, 120.0f);
      gy[k] = random.uniform(-120.0f, 120.0f);
    }
    Blob blobs[4];
    for (Blob& blob : blobs) {
      blob.x = random.uniform();
      blob.y = random.uniform();
      const float radius = random.uniform(0.05f, 0.3f);
      blob.radius2 = radius * radius;
      for (float& a : blob.amplitude) a = random.uniform(-160.0f, 160.0f);
    }
    for (int64_t y = 0; y < h; ++y) {
      const float fy = (static_cast<float>(y) + 0.5f) / static_cast<float>(h);
      for (int64_t x = 0; x < w; ++x) {
        const float fx = (static_cast<float>(x) + 0.5f) / static_cast<float>(w);
        for (int64_t k = 0; k < c; ++k) {
          float value = base[k] + gx[k] * (fx - 0.5f) + gy[k] * (fy - 0.5f);
          for (const Blob& blob : blobs) {
            const float d2 = (fx - blob.x) * (fx - blob.x) + (fy - blob.y) * (fy - blob.y);
            value += blob.amplitude[k % 4] / (1.0f + d2 / blob.radius2);
          }
          value += random.uniform(-12.0f, 12.0f);
          const float clamped = std::clamp(value, 0.0f, 255.0f);
          input.pixels[static_cast<size_t>(((b * h + y) * w + x) * c + k)] =
              static_cast<uint8_t>(clamped + 0.5f);
        }
      }
    }
  }
  return input;
}

SampleInput make_sample_input(SampleNetwork network, int input_index, uint64_t seed) {
  const std::vector<std::vector<int64_t>> dims = sample_input_dims(network);
  const size_t index = std::min(static_cast<size_t>(input_index), dims.size() - 1);
  return make_sample_input_for_dims(dims[index],
                                    derive_seed(seed, kInputStream + 64 * input_index));
}

Status write_npy_uint8(const std::string& path, const std::vector<int64_t>& shape,
                       const std::vector<uint8_t>& data) {
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) header += str_cat(i ? ", " : "", shape[i]);
  header += shape.size() == 1 ? ",), }" : "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  const std::string temporary = path + ".tmp";
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(temporary.c_str(), "wb"), std::fclose);
  if (!file) return internal_failure("cannot create ", temporary);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file.get()) == bytes.size() &&
                       std::fwrite(data.data(), 1, data.size(), file.get()) == data.size();
  if (std::fclose(file.release()) != 0 || !written) {
    std::remove(temporary.c_str());
    return internal_failure("cannot write ", temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return internal_failure("cannot rename ", temporary, " to ", path);
  }
  return ok_status();
}

}  // namespace orknn::sample_models
