// The sample networks (tools/sample_models) in float32, float16 and int8, run through the public
// C API: attributes and output shapes are what the network code declares, and the float16 and
// int8 variants agree with float32 on images like the ones the int8 models were calibrated on.
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "rknn_api.h"
#include "sample_models.h"

// cmocka last: its fail() macro breaks standard headers that declare basic_ios::fail().
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using orknn::sample_models::Precision;
using orknn::sample_models::SampleInput;
using orknn::sample_models::SampleModelOptions;
using orknn::sample_models::SampleNetwork;

// Seeds of the test images; the calibration uses a separate stream of the model seed.
constexpr uint64_t kImageSeeds[] = {101, 202, 303};

// Models are built once per process (the int8 ones need a calibration run each).
const std::vector<uint8_t>& model_bytes(SampleNetwork network, Precision precision,
                                        bool fuse_activations = false) {
  static std::map<std::tuple<int, int, bool>, std::vector<uint8_t>> cache;
  const auto key =
      std::make_tuple(static_cast<int>(network), static_cast<int>(precision), fuse_activations);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  SampleModelOptions options;
  options.fuse_activations = fuse_activations;
  orknn::Result<std::vector<uint8_t>> bytes =
      orknn::sample_models::build_sample_model(network, precision, options);
  if (!bytes.ok()) {
    fail_msg("building %s %s: %s", orknn::sample_models::network_name(network),
             orknn::sample_models::precision_name(precision), bytes.status().message().c_str());
  }
  return cache.emplace(key, std::move(bytes).value()).first->second;
}

struct Attributes {
  std::vector<rknn_tensor_attr> inputs, outputs;
  std::string custom_string;
};

// One context over a model in memory.
class Context {
 public:
  explicit Context(const std::vector<uint8_t>& model) {
    const int ret = rknn_init(&ctx_, const_cast<uint8_t*>(model.data()),
                              static_cast<uint32_t>(model.size()), 0, nullptr);
    if (ret != RKNN_SUCC) fail_msg("rknn_init returned %d", ret);
  }
  ~Context() { rknn_destroy(ctx_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Attributes attributes() const {
    Attributes attributes;
    rknn_input_output_num io_num{};
    assert_int_equal(rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num)), RKNN_SUCC);
    for (uint32_t i = 0; i < io_num.n_input; ++i) {
      rknn_tensor_attr attr{};
      attr.index = i;
      assert_int_equal(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
      attributes.inputs.push_back(attr);
    }
    for (uint32_t i = 0; i < io_num.n_output; ++i) {
      rknn_tensor_attr attr{};
      attr.index = i;
      assert_int_equal(rknn_query(ctx_, RKNN_QUERY_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
      attributes.outputs.push_back(attr);
    }
    rknn_custom_string custom{};
    assert_int_equal(rknn_query(ctx_, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof(custom)),
                     RKNN_SUCC);
    attributes.custom_string = custom.string;
    return attributes;
  }

  // uint8 NHWC images in, float32 outputs (want_float) out.
  std::vector<std::vector<float>> run(const std::vector<SampleInput>& images) {
    std::vector<rknn_input> inputs(images.size());
    for (size_t i = 0; i < images.size(); ++i) {
      inputs[i] = rknn_input{};
      inputs[i].index = static_cast<uint32_t>(i);
      inputs[i].buf = const_cast<uint8_t*>(images[i].pixels.data());
      inputs[i].size = static_cast<uint32_t>(images[i].pixels.size());
      inputs[i].type = RKNN_TENSOR_UINT8;
      inputs[i].fmt = RKNN_TENSOR_NHWC;
    }
    assert_int_equal(rknn_inputs_set(ctx_, static_cast<uint32_t>(inputs.size()), inputs.data()),
                     RKNN_SUCC);
    assert_int_equal(rknn_run(ctx_, nullptr), RKNN_SUCC);
    rknn_input_output_num io_num{};
    assert_int_equal(rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num)), RKNN_SUCC);
    std::vector<rknn_output> outputs(io_num.n_output);
    for (uint32_t i = 0; i < io_num.n_output; ++i) {
      outputs[i] = rknn_output{};
      outputs[i].index = i;
      outputs[i].want_float = 1;
    }
    assert_int_equal(rknn_outputs_get(ctx_, io_num.n_output, outputs.data(), nullptr), RKNN_SUCC);
    std::vector<std::vector<float>> values;
    for (const rknn_output& output : outputs) {
      const float* data = static_cast<const float*>(output.buf);
      values.emplace_back(data, data + output.size / sizeof(float));
    }
    assert_int_equal(rknn_outputs_release(ctx_, io_num.n_output, outputs.data()), RKNN_SUCC);
    return values;
  }

 private:
  rknn_context ctx_ = 0;
};

std::vector<SampleInput> images_for(SampleNetwork network, uint64_t seed) {
  std::vector<SampleInput> images;
  const size_t count = orknn::sample_models::sample_input_dims(network).size();
  for (size_t i = 0; i < count; ++i) {
    images.push_back(orknn::sample_models::make_sample_input(network, static_cast<int>(i), seed));
  }
  return images;
}

std::vector<uint32_t> dims_of(const rknn_tensor_attr& attr) {
  return std::vector<uint32_t>(attr.dims, attr.dims + attr.n_dims);
}

void expect_dims(const rknn_tensor_attr& attr, std::vector<uint32_t> expected,
                 rknn_tensor_format format) {
  if (dims_of(attr) != expected || attr.fmt != format) {
    std::string got, want;
    for (uint32_t d : dims_of(attr)) got += std::to_string(d) + " ";
    for (uint32_t d : expected) want += std::to_string(d) + " ";
    fail_msg("%s: dims [%s] fmt %s, expected [%s] fmt %s", attr.name, got.c_str(),
             get_format_string(attr.fmt), want.c_str(), get_format_string(format));
  }
  uint32_t elements = 1;
  for (uint32_t d : expected) elements *= d;
  assert_int_equal(attr.n_elems, elements);
}

rknn_tensor_type type_of(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return RKNN_TENSOR_FLOAT32;
    case Precision::kFloat16:
      return RKNN_TENSOR_FLOAT16;
    case Precision::kInt8:
      return RKNN_TENSOR_INT8;
  }
  return RKNN_TENSOR_TYPE_MAX;
}

// Every input and output carries the precision's type (int8: quantized, affine).
void expect_precision(const Attributes& attributes, Precision precision) {
  for (const auto* list : {&attributes.inputs, &attributes.outputs}) {
    for (const rknn_tensor_attr& attr : *list) {
      if (attr.type != type_of(precision)) {
        fail_msg("%s: type %s, expected %s", attr.name, get_type_string(attr.type),
                 get_type_string(type_of(precision)));
      }
      const bool quantized = precision == Precision::kInt8;
      assert_int_equal(attr.qnt_type,
                       quantized ? RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC : RKNN_TENSOR_QNT_NONE);
      if (quantized) {
        assert_true(attr.scale > 0.0f);
        assert_true(attr.zp >= -128 && attr.zp <= 127);
      }
    }
  }
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? dot / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return largest;
}

double max_abs(const std::vector<float>& a) {
  double largest = 0;
  for (float v : a) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  return largest;
}

size_t argmax(const std::vector<float>& values) {
  return static_cast<size_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

// The largest probability minus the second largest.
double top1_margin(const std::vector<float>& values) {
  std::vector<float> sorted = values;
  std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
  return static_cast<double>(sorted[0]) - sorted[1];
}

void expect_softmax(const std::vector<float>& probabilities) {
  double sum = 0;
  for (float p : probabilities) {
    assert_true(p >= 0.0f && p <= 1.0f);
    sum += p;
  }
  if (std::fabs(sum - 1.0) > 1e-4) fail_msg("softmax sums to %f", sum);
}

// Limits for one output of a network when comparing a precision with float32.
struct Agreement {
  double fp16_max_abs_relative = 0;  // max |fp16 - fp32| / max |fp32|
  double int8_min_cosine = 0;
  bool same_top1 = false;  // softmax outputs: valid probabilities, and the top-1 class matches
};

// Runs all three precisions on the test images and checks `limits[i]` for output i.
void expect_precisions_agree(SampleNetwork network, const std::vector<Agreement>& limits) {
  Context fp32(model_bytes(network, Precision::kFloat32));
  Context fp16(model_bytes(network, Precision::kFloat16));
  Context int8(model_bytes(network, Precision::kInt8));
  for (uint64_t seed : kImageSeeds) {
    const std::vector<SampleInput> images = images_for(network, seed);
    const std::vector<std::vector<float>> reference = fp32.run(images);
    const std::vector<std::vector<float>> half = fp16.run(images);
    const std::vector<std::vector<float>> quantized = int8.run(images);
    assert_int_equal(reference.size(), limits.size());
    for (size_t i = 0; i < limits.size(); ++i) {
      assert_int_equal(half[i].size(), reference[i].size());
      assert_int_equal(quantized[i].size(), reference[i].size());
      const double fp16_error = max_abs_difference(half[i], reference[i]) / max_abs(reference[i]);
      const double int8_cosine = cosine(quantized[i], reference[i]);
      std::printf("%s seed %llu output %zu: fp16 max relative error %.2e, int8 cosine %.5f",
                  orknn::sample_models::network_name(network),
                  static_cast<unsigned long long>(seed), i, fp16_error, int8_cosine);
      if (limits[i].same_top1) {
        std::printf(", top-1 %zu/%zu/%zu (fp32 margin %.3f)", argmax(reference[i]), argmax(half[i]),
                    argmax(quantized[i]), top1_margin(reference[i]));
      }
      std::printf("\n");
      if (fp16_error > limits[i].fp16_max_abs_relative) {
        fail_msg("fp16 error %.3e above %.3e", fp16_error, limits[i].fp16_max_abs_relative);
      }
      if (int8_cosine < limits[i].int8_min_cosine) {
        fail_msg("int8 cosine %.5f below %.5f", int8_cosine, limits[i].int8_min_cosine);
      }
      if (limits[i].same_top1) {
        expect_softmax(reference[i]);
        assert_int_equal(argmax(half[i]), argmax(reference[i]));
        assert_int_equal(argmax(quantized[i]), argmax(reference[i]));
      }
    }
  }
}

// ---- Attributes and shapes -------------------------------------------------------------------

void test_mobilenet_mini_attributes(void** state) {
  for (Precision precision : orknn::sample_models::all_precisions()) {
    Context context(model_bytes(SampleNetwork::kMobilenetMini, precision));
    const Attributes attributes = context.attributes();
    assert_int_equal(attributes.inputs.size(), 1);
    assert_int_equal(attributes.outputs.size(), 1);
    expect_dims(attributes.inputs[0], {1, 224, 224, 3}, RKNN_TENSOR_NHWC);
    expect_dims(attributes.outputs[0], {1, 1000}, RKNN_TENSOR_UNDEFINED);
    expect_precision(attributes, precision);
    assert_string_equal(attributes.custom_string.c_str(), "model=mobilenet_mini;classes=1000");
    if (precision == Precision::kInt8) {
      // Pixels 0..255 normalised with mean 127.5, std 127.5 cover [-1, 1].
      assert_true(std::fabs(attributes.inputs[0].scale - 2.0f / 255.0f) < 1e-6f);
      assert_int_equal(attributes.inputs[0].zp, 0);
      // A softmax output is >= 0: zero is the lowest code.
      assert_int_equal(attributes.outputs[0].zp, -128);
    }
  }
}

void test_two_inputs_attributes(void** state) {
  for (Precision precision : orknn::sample_models::all_precisions()) {
    Context context(model_bytes(SampleNetwork::kTwoInputs, precision));
    const Attributes attributes = context.attributes();
    assert_int_equal(attributes.inputs.size(), 2);
    assert_int_equal(attributes.outputs.size(), 1);
    expect_dims(attributes.inputs[0], {1, 128, 128, 1}, RKNN_TENSOR_NHWC);
    expect_dims(attributes.inputs[1], {1, 128, 128, 3}, RKNN_TENSOR_NHWC);
    expect_dims(attributes.outputs[0], {1, 8, 128, 128}, RKNN_TENSOR_NCHW);
    expect_precision(attributes, precision);
  }
}

void test_tiny_attributes(void** state) {
  for (Precision precision : orknn::sample_models::all_precisions()) {
    Context context(model_bytes(SampleNetwork::kTiny, precision));
    const Attributes attributes = context.attributes();
    assert_int_equal(attributes.inputs.size(), 1);
    assert_int_equal(attributes.outputs.size(), 2);
    expect_dims(attributes.inputs[0], {1, 32, 32, 3}, RKNN_TENSOR_NHWC);
    expect_dims(attributes.outputs[0], {1, 10}, RKNN_TENSOR_UNDEFINED);
    expect_dims(attributes.outputs[1], {1, 16, 8, 8}, RKNN_TENSOR_NCHW);
    expect_precision(attributes, precision);
  }
}

// The declared input shapes match what the library says to feed.
void test_sample_input_dims(void** state) {
  using Dims = std::vector<std::vector<int64_t>>;
  assert_true(orknn::sample_models::sample_input_dims(SampleNetwork::kMobilenetMini) ==
              Dims({{1, 224, 224, 3}}));
  assert_true(orknn::sample_models::sample_input_dims(SampleNetwork::kTwoInputs) ==
              Dims({{1, 128, 128, 1}, {1, 128, 128, 3}}));
  assert_true(orknn::sample_models::sample_input_dims(SampleNetwork::kTiny) ==
              Dims({{1, 32, 32, 3}}));
  const SampleInput a = orknn::sample_models::make_sample_input(SampleNetwork::kTiny, 0, 7);
  const SampleInput b = orknn::sample_models::make_sample_input(SampleNetwork::kTiny, 0, 7);
  const SampleInput c = orknn::sample_models::make_sample_input(SampleNetwork::kTiny, 0, 8);
  assert_int_equal(a.pixels.size(), 32 * 32 * 3);
  assert_true(a.pixels == b.pixels);
  assert_false(a.pixels == c.pixels);
}

// Around 30-80 MFLOPs (2 x multiply-accumulates), so the reference kernels stay quick.
void test_mobilenet_mini_size(void** state) {
  const int64_t macs =
      orknn::sample_models::sample_model_multiply_accumulates(SampleNetwork::kMobilenetMini);
  std::printf("mobilenet_mini: %.1f M multiply-accumulates\n", macs / 1e6);
  assert_true(macs >= 15000000 && macs <= 40000000);
}

// ---- Numbers ---------------------------------------------------------------------------------

void test_mobilenet_mini_precisions_agree(void** state) {
  expect_precisions_agree(SampleNetwork::kMobilenetMini, {{1e-2, 0.99, true}});
}

void test_two_inputs_precisions_agree(void** state) {
  expect_precisions_agree(SampleNetwork::kTwoInputs, {{1e-2, 0.99, false}});
}

void test_tiny_precisions_agree(void** state) {
  expect_precisions_agree(SampleNetwork::kTiny, {{1e-2, 0.99, true}, {1e-2, 0.99, false}});
}

// Relu6 fused into Conv (as our converter emits it) computes the same as separate Clip nodes.
void test_fused_activations_match_clip_nodes(void** state) {
  Context separate(model_bytes(SampleNetwork::kMobilenetMini, Precision::kFloat32, false));
  Context fused(model_bytes(SampleNetwork::kMobilenetMini, Precision::kFloat32, true));
  Context fused_int8(model_bytes(SampleNetwork::kMobilenetMini, Precision::kInt8, true));
  const std::vector<SampleInput> images = images_for(SampleNetwork::kMobilenetMini, 404);
  const std::vector<float> reference = separate.run(images)[0];
  assert_true(max_abs_difference(fused.run(images)[0], reference) < 1e-6);
  const std::vector<float> quantized = fused_int8.run(images)[0];
  std::printf("fused int8: cosine %.5f, top-1 %zu/%zu\n", cosine(quantized, reference),
              argmax(quantized), argmax(reference));
  assert_true(cosine(quantized, reference) >= 0.99);
  assert_int_equal(argmax(quantized), argmax(reference));
}

// ---- Files and determinism -------------------------------------------------------------------

void test_models_are_deterministic(void** state) {
  for (Precision precision : orknn::sample_models::all_precisions()) {
    orknn::Result<std::vector<uint8_t>> again =
        orknn::sample_models::build_sample_model(SampleNetwork::kTiny, precision);
    assert_true(again.ok());
    assert_true(again.value() == model_bytes(SampleNetwork::kTiny, precision));
  }
  SampleModelOptions other_seed;
  other_seed.seed = 2;
  orknn::Result<std::vector<uint8_t>> different = orknn::sample_models::build_sample_model(
      SampleNetwork::kTiny, Precision::kFloat32, other_seed);
  assert_true(different.ok());
  assert_false(different.value() == model_bytes(SampleNetwork::kTiny, Precision::kFloat32));
}

std::string temporary_directory() {
  char pattern[] = "/tmp/orknn_sample_models_XXXXXX";
  const char* directory = mkdtemp(pattern);
  if (!directory) fail_msg("mkdtemp failed");
  return directory;
}

void test_write_file_and_npy(void** state) {
  const std::string directory = temporary_directory();
  const std::string model_path = directory + "/tiny.rknn";
  SampleModelOptions options;
  options.target_platform = "rk3576";
  assert_true(orknn::sample_models::write_sample_model(SampleNetwork::kTiny, Precision::kInt8,
                                                       options, model_path)
                  .ok());
  rknn_context ctx = 0;
  assert_int_equal(rknn_init(&ctx, const_cast<char*>(model_path.c_str()), 0, 0, nullptr),
                   RKNN_SUCC);
  rknn_input_output_num io_num{};
  assert_int_equal(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num)), RKNN_SUCC);
  assert_int_equal(io_num.n_output, 2);
  // rk3576 has two NPU cores: core 2 does not exist there.
  assert_int_equal(rknn_set_core_mask(ctx, RKNN_NPU_CORE_2), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_destroy(ctx), RKNN_SUCC);

  const std::string npy_path = directory + "/input.npy";
  const SampleInput image = orknn::sample_models::make_sample_input(SampleNetwork::kTiny, 0, 1);
  assert_true(orknn::sample_models::write_npy_uint8(npy_path, image.nhwc_dims, image.pixels).ok());
  FILE* file = std::fopen(npy_path.c_str(), "rb");
  assert_non_null(file);
  std::vector<uint8_t> bytes(4096);
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), file));
  std::fclose(file);
  assert_true(bytes.size() > 10 && std::memcmp(bytes.data(), "\x93NUMPY\x01\x00", 8) == 0);
  const size_t header_length = bytes[8] | (bytes[9] << 8);
  assert_int_equal((10 + header_length) % 64, 0);
  const std::string header(bytes.begin() + 10, bytes.begin() + 10 + header_length);
  assert_true(header.find("'descr': '|u1'") != std::string::npos);
  assert_true(header.find("'shape': (1, 32, 32, 3)") != std::string::npos);
  assert_int_equal(bytes.size() - 10 - header_length, image.pixels.size());
  assert_true(
      std::equal(image.pixels.begin(), image.pixels.end(), bytes.begin() + 10 + header_length));

  std::remove(npy_path.c_str());
  std::remove(model_path.c_str());
  rmdir(directory.c_str());
}

void test_names(void** state) {
  for (SampleNetwork network : orknn::sample_models::all_networks()) {
    orknn::Result<SampleNetwork> parsed =
        orknn::sample_models::parse_network(orknn::sample_models::network_name(network));
    assert_true(parsed.ok() && parsed.value() == network);
  }
  for (Precision precision : orknn::sample_models::all_precisions()) {
    orknn::Result<Precision> parsed =
        orknn::sample_models::parse_precision(orknn::sample_models::precision_name(precision));
    assert_true(parsed.ok() && parsed.value() == precision);
  }
  orknn::Result<SampleNetwork> bad = orknn::sample_models::parse_network("resnet");
  assert_false(bad.ok());
  assert_non_null(std::strstr(bad.status().message().c_str(), "mobilenet_mini"));
  assert_false(orknn::sample_models::parse_precision("int4").ok());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_sample_input_dims),
      cmocka_unit_test(test_mobilenet_mini_size),
      cmocka_unit_test(test_mobilenet_mini_attributes),
      cmocka_unit_test(test_two_inputs_attributes),
      cmocka_unit_test(test_tiny_attributes),
      cmocka_unit_test(test_mobilenet_mini_precisions_agree),
      cmocka_unit_test(test_two_inputs_precisions_agree),
      cmocka_unit_test(test_tiny_precisions_agree),
      cmocka_unit_test(test_fused_activations_match_clip_nodes),
      cmocka_unit_test(test_models_are_deterministic),
      cmocka_unit_test(test_write_file_and_npy),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
