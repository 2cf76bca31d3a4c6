// exec::convert_input's float -> per-tensor int8 encoding against graph::encode_from_float, the
// encoding it replaces for that case: the same code for NaN, infinities, huge and tiny values,
// exact halves of the scale (ties to even), both signs, every zero point's edge, from NCHW and
// from padded NHWC buffers.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "exec/io_conversion.h"
#include "graph/tensor_conversion.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;

std::vector<float> special_values(float scale) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               1e30f,
                               -1e30f,
                               1e-30f,
                               std::numeric_limits<float>::denorm_min(),
                               3e9f,
                               -3e9f};
  for (int k = -300; k <= 300; ++k) {
    values.push_back((static_cast<float>(k) + 0.5f) * scale);  // ties
    values.push_back(static_cast<float>(k) * scale);
    values.push_back(std::nextafter((static_cast<float>(k) + 0.5f) * scale, 1e9f));
    values.push_back(std::nextafter((static_cast<float>(k) + 0.5f) * scale, -1e9f));
  }
  uint32_t state = 5;
  while (values.size() % 12 != 0 || values.size() < 4096) {
    state = state * 1664525u + 1013904223u;
    values.push_back((static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 600.0f * scale);
  }
  return values;
}

void test_int8_encoding_matches_graph(void**) {
  for (float scale : {1.0f, 0.5f, 0.0183f, 3.7f, 1e-3f}) {
    for (int32_t zero_point : {-128, -1, 0, 5, 127}) {
      const std::vector<float> values = special_values(scale);
      graph::Tensor tensor;
      tensor.name = "x";
      tensor.data_type = DataType::kInt8;
      tensor.quantization = {{scale}, {zero_point}, 0};
      tensor.shape = {1, 3, 2, static_cast<int64_t>(values.size() / 6)};
      std::vector<int8_t> expected(values.size());
      graph::encode_from_float(tensor, values.data(), expected.data());
      graph::GraphInput input;
      input.tensor = 0;
      // NCHW float input.
      exec::UserTensorFormat format;
      format.type = DataType::kFloat32;
      format.layout = exec::Layout::kNCHW;
      std::vector<float> scratch;
      std::vector<int8_t> codes(values.size(), 0);
      assert_true(exec::convert_input(0, tensor, input, values.data(), values.size() * 4, format,
                                      &scratch, reinterpret_cast<uint8_t*>(codes.data()))
                      .ok());
      assert_memory_equal(codes.data(), expected.data(), codes.size());
      // The same values from an NHWC buffer with padded rows.
      format.layout = exec::Layout::kNHWC;
      format.w_stride = static_cast<uint32_t>(tensor.shape[3] + 3);
      const int64_t width = tensor.shape[3];
      std::vector<float> nhwc(static_cast<size_t>(2 * format.w_stride * 3), -7.0f);
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t w = 0; w < width; ++w)
            nhwc[static_cast<size_t>((h * format.w_stride + w) * 3 + c)] =
                values[static_cast<size_t>((c * 2 + h) * width + w)];
      std::fill(codes.begin(), codes.end(), 0);
      assert_true(exec::convert_input(0, tensor, input, nhwc.data(), nhwc.size() * 4, format,
                                      &scratch, reinterpret_cast<uint8_t*>(codes.data()))
                      .ok());
      assert_memory_equal(codes.data(), expected.data(), codes.size());
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_encoding_matches_graph),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
