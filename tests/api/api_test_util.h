// Shared helpers of the C API tests. Include after every standard header (cmocka's fail()
// macro collides with std::basic_ios::fail()).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/api_test_models.h"
#include "rknn_api.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace orknn::api_testing {

// rknn_init from a byte buffer; fails the test unless it returns RKNN_SUCC.
inline rknn_context init_or_fail(std::vector<uint8_t> bytes, uint32_t flags = 0) {
  rknn_context context = 0;
  const int status =
      rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()), flags, nullptr);
  if (status != RKNN_SUCC) fail_msg("rknn_init returned %d", status);
  return context;
}

inline rknn_tensor_attr query_attr(rknn_context context, rknn_query_cmd command, uint32_t index) {
  rknn_tensor_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.index = index;
  const int status = rknn_query(context, command, &attr, sizeof(attr));
  if (status != RKNN_SUCC) fail_msg("rknn_query(%d, index %u) returned %d", command, index, status);
  return attr;
}

inline rknn_input make_input(uint32_t index, void* data, uint32_t size, rknn_tensor_type type,
                             rknn_tensor_format format, uint8_t pass_through = 0) {
  rknn_input input;
  std::memset(&input, 0, sizeof(input));
  input.index = index;
  input.buf = data;
  input.size = size;
  input.type = type;
  input.fmt = format;
  input.pass_through = pass_through;
  return input;
}

// Gets output `index` as float32 through a preallocated buffer.
inline std::vector<float> get_float_output(rknn_context context, uint32_t index, size_t count) {
  std::vector<float> values(count);
  rknn_output output;
  std::memset(&output, 0, sizeof(output));
  output.index = index;
  output.want_float = 1;
  output.is_prealloc = 1;
  output.buf = values.data();
  output.size = static_cast<uint32_t>(count * sizeof(float));
  const int status = rknn_outputs_get(context, 1, &output, nullptr);
  if (status != RKNN_SUCC) fail_msg("rknn_outputs_get returned %d", status);
  return values;
}

inline void expect_near_all(const std::vector<float>& actual, const std::vector<float>& expected,
                            double tolerance) {
  if (actual.size() != expected.size())
    fail_msg("%zu values, expected %zu", actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double error =
        actual[i] > expected[i] ? actual[i] - expected[i] : expected[i] - actual[i];
    if (!(error <= tolerance)) {
      fail_msg("value %zu: %.6f, expected %.6f (tolerance %.4f)", i, actual[i], expected[i],
               tolerance);
    }
  }
}

// Error tolerance of the affine model's outputs per precision.
inline double affine_tolerance(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return 1e-5;
    case Precision::kFloat16:
      return 2e-2;
    case Precision::kInt8:
      return 0.25;  // input step 1/16 x scale 3, plus output step 1/8
  }
  return 0;
}

}  // namespace orknn::api_testing
