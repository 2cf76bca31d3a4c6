// exec::convert_input's float -> per-tensor int8 encoding against graph::encode_from_float, the
// encoding it replaces for that case: the same code for NaN, infinities, huge and tiny values,
// exact halves of the scale (ties to even), both signs, every zero point's edge, from NCHW and
// from padded NHWC buffers. And byte images (uint8, int8) into int8 and float32 models, which
// large images convert through per-channel tables: every element against the normalisation
// (value - mean) x (1 / std) and graph's encoding, small images (the general path) and large
// ones, NCHW and padded NHWC, 3 and 5 channels, channels reversed or not.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
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

// The model's NCHW tensor from a byte image: element (c, h, w) normalised with channel c's
// mean and std from source channel c (or C - 1 - c reversed), then encoded as graph does.
template <typename Byte>
std::vector<uint8_t> expected_from_bytes(const graph::Tensor& tensor,
                                         const graph::GraphInput& input,
                                         const std::vector<Byte>& nchw_bytes) {
  const int64_t channels = tensor.shape[1];
  const int64_t spatial = tensor.shape[2] * tensor.shape[3];
  std::vector<float> values(nchw_bytes.size());
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t source = input.reverse_channels ? channels - 1 - c : c;
    for (int64_t s = 0; s < spatial; ++s) {
      const float value = static_cast<float>(nchw_bytes[static_cast<size_t>(source * spatial + s)]);
      values[static_cast<size_t>(c * spatial + s)] =
          (value - input.mean[static_cast<size_t>(c)]) * (1.0f / input.std[static_cast<size_t>(c)]);
    }
  }
  const size_t element_bytes = tensor.data_type == DataType::kFloat32 ? 4 : 1;
  std::vector<uint8_t> expected(values.size() * element_bytes);
  graph::encode_from_float(tensor, values.data(), expected.data());
  return expected;
}

template <typename Byte>
void check_byte_image(DataType source_type, DataType model_type, int64_t channels, int64_t height,
                      int64_t width, bool reverse) {
  graph::Tensor tensor;
  tensor.name = "x";
  tensor.data_type = model_type;
  if (model_type == DataType::kInt8) tensor.quantization = {{0.0183f}, {-3}, 0};
  tensor.shape = {1, channels, height, width};
  graph::GraphInput input;
  input.tensor = 0;
  input.reverse_channels = reverse;
  for (int64_t c = 0; c < channels; ++c) {
    input.mean.push_back(static_cast<float>(c) * 17.5f - 20.0f);
    input.std.push_back(0.75f + static_cast<float>(c) * 0.9f);
  }
  const auto elements = static_cast<size_t>(channels * height * width);
  std::vector<Byte> nchw(elements);
  uint32_t state = 77;
  const int64_t spatial = height * width;
  for (size_t e = 0; e < elements; ++e) {
    state = state * 1664525u + 1013904223u;
    if constexpr (std::is_same_v<Byte, float>) {
      // Values whose normalised code lands within a few ulps of a half (k + 0.5, where
      // rounding in another order would give the neighbouring code), pixel-like values, and
      // now and then a NaN or an infinity. Source channel sc is normalised as model channel c.
      const auto sc = static_cast<int64_t>(e) / spatial;
      const size_t c = static_cast<size_t>(reverse ? channels - 1 - sc : sc);
      const uint32_t kind = (state >> 4) % 97;
      const float half = (static_cast<float>(static_cast<int32_t>(state >> 24) - 128) + 0.5f) *
                             0.0183f * input.std[c] +
                         input.mean[c];
      float value = kind == 0   ? std::numeric_limits<float>::quiet_NaN()
                    : kind == 1 ? -std::numeric_limits<float>::infinity()
                    : kind < 40 ? static_cast<float>(state >> 8) / 65536.0f - 10.0f
                                : half;
      for (uint32_t step = 0; kind >= 40 && step < ((state >> 11) & 3); ++step) {
        value = std::nextafter(value, (state & 1) ? 1e9f : -1e9f);
      }
      nchw[e] = value;
    } else {
      nchw[e] = static_cast<Byte>(state >> 24);
    }
  }
  const std::vector<uint8_t> expected = expected_from_bytes(tensor, input, nchw);
  std::vector<float> scratch;
  std::vector<uint8_t> out(expected.size(), 0xAB);

  exec::UserTensorFormat format;
  format.type = source_type;
  format.layout = exec::Layout::kNCHW;
  assert_true(exec::convert_input(0, tensor, input, nchw.data(), nchw.size() * sizeof(Byte), format,
                                  &scratch, out.data())
                  .ok());
  assert_memory_equal(out.data(), expected.data(), out.size());

  // The same image as padded NHWC rows (the padding holds junk the conversion must skip).
  format.layout = exec::Layout::kNHWC;
  format.w_stride = static_cast<uint32_t>(width + 5);
  std::vector<Byte> nhwc(static_cast<size_t>(height * format.w_stride * channels), Byte{99});
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t h = 0; h < height; ++h)
      for (int64_t w = 0; w < width; ++w)
        nhwc[static_cast<size_t>((h * format.w_stride + w) * channels + c)] =
            nchw[static_cast<size_t>((c * height + h) * width + w)];
  std::fill(out.begin(), out.end(), 0xAB);
  assert_true(exec::convert_input(0, tensor, input, nhwc.data(), nhwc.size() * sizeof(Byte), format,
                                  &scratch, out.data())
                  .ok());
  assert_memory_equal(out.data(), expected.data(), out.size());
}

// Float images take the same checks (NaN and infinities included): the fused per-plane pass
// for NCHW into int8, the pixel-order gather for NHWC.
void test_images_match_normalised_encoding(void**) {
  for (DataType model_type : {DataType::kInt8, DataType::kFloat32}) {
    for (int64_t channels : {3, 5}) {
      for (bool reverse : {false, true}) {
        // 4 x 7: the general path; 6 x 211 (1266 pixels): the tables.
        for (int64_t width : {7, 211}) {
          const int64_t height = width == 7 ? 4 : 6;
          check_byte_image<uint8_t>(DataType::kUInt8, model_type, channels, height, width, reverse);
          check_byte_image<int8_t>(DataType::kInt8, model_type, channels, height, width, reverse);
          check_byte_image<float>(DataType::kFloat32, model_type, channels, height, width, reverse);
        }
      }
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_encoding_matches_graph),
      cmocka_unit_test(test_images_match_normalised_encoding),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
