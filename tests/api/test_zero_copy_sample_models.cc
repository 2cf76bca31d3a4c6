// The sample networks (tools/sample_models) in float32, float16 and int8 through zero-copy
// bindings: every input form (UINT8/INT8/FLOAT32/FLOAT16, NHWC/NCHW, native pass-through) and
// every output form (float, native type; NCHW, NHWC, NC1HWC2) gives exactly the bytes of the
// copying API.
#include <map>
#include <utility>
#include <vector>

#include "sample_models.h"
// Last: cmocka.
#include "api/zero_copy_check.h"

using namespace orknn::api_testing;
using orknn::sample_models::SampleNetwork;
using SamplePrecision = orknn::sample_models::Precision;

namespace {

const std::vector<uint8_t>& model_bytes(SampleNetwork network, SamplePrecision precision) {
  static std::map<std::pair<int, int>, std::vector<uint8_t>> cache;
  const auto key = std::make_pair(static_cast<int>(network), static_cast<int>(precision));
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  auto bytes = orknn::sample_models::build_sample_model(network, precision);
  if (!bytes.ok()) fail_msg("building a sample model: %s", bytes.status().message().c_str());
  return cache.emplace(key, std::move(bytes).value()).first->second;
}

constexpr InputSpec kInputs[] = {
    {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, false},   {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, false},
    {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, true},    {RKNN_TENSOR_INT8, RKNN_TENSOR_NHWC, false},
    {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC, false}, {RKNN_TENSOR_FLOAT16, RKNN_TENSOR_NHWC, false},
    {RKNN_TENSOR_UINT8, RKNN_TENSOR_NCHW, false},
};
constexpr OutputSpec kOutputs[] = {
    {false, RKNN_TENSOR_NCHW}, {true, RKNN_TENSOR_NCHW}, {true, RKNN_TENSOR_NC1HWC2},
    {false, RKNN_TENSOR_NHWC}, {true, RKNN_TENSOR_NHWC},
};

// Every input form with float outputs, then every output form with the usual UINT8 image; the
// first `input_forms` and `output_forms` of each list. The tiny network takes every form; the
// larger ones (slow under sanitizers) the main ones: mobilenet_mini's output is 2-D, so its
// layouts add nothing.
void check_network(SampleNetwork network, size_t input_forms, size_t output_forms) {
  uint32_t seed = 1000 * static_cast<uint32_t>(network);
  for (SamplePrecision precision : orknn::sample_models::all_precisions()) {
    const std::vector<uint8_t>& model = model_bytes(network, precision);
    for (size_t i = 0; i < input_forms; ++i) {
      expect_zero_copy_matches_general(model, kInputs[i], kOutputs[0], seed++);
    }
    for (size_t o = 1; o < output_forms; ++o) {  // form 0 was run with input form 0 above
      expect_zero_copy_matches_general(model, kInputs[0], kOutputs[o], seed++);
    }
  }
}

constexpr size_t kAllInputs = sizeof(kInputs) / sizeof(kInputs[0]);
constexpr size_t kAllOutputs = sizeof(kOutputs) / sizeof(kOutputs[0]);

void test_tiny(void**) {
  check_network(SampleNetwork::kTiny, kAllInputs, kAllOutputs);
}
void test_two_inputs(void**) {
  check_network(SampleNetwork::kTwoInputs, 3, kAllOutputs);
}
void test_mobilenet_mini(void**) {
  check_network(SampleNetwork::kMobilenetMini, 1, 2);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiny),
      cmocka_unit_test(test_two_inputs),
      cmocka_unit_test(test_mobilenet_mini),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
