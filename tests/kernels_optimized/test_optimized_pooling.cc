// Optimized pooling (kernels/cpu/dispatch.h prepare_*pool*) against the reference kernels: the
// same bits (max pooling on float32 and int8 codes, and averages, whose sums keep the
// reference's order), for every optimized variant, on 1 and 3 threads, over random windows
// (kernel, stride, dilation, padding, ceil-mode overhang) and widths around the vector sizes.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/pooling.h"

// cmocka comes last (its macros clash with standard headers) and needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using namespace orknn;
using namespace orknn::testing;
namespace reference = kernels::reference;
using kernels::cpu::KernelVariant;

// One axis of a random window: output size from the padded size, optionally in ceil mode
// (the last window may run past the padded end but starts inside input + pad_begin).
struct Axis {
  int64_t input, kernel, stride, dilation, pad_begin, pad_end, output;
};
Axis random_axis(Random& random, int64_t input) {
  Axis axis{input, random.integer(1, 4), random.integer(1, 3), random.integer(1, 2), 0, 0, 0};
  const int64_t span = axis.dilation * (axis.kernel - 1) + 1;
  axis.pad_begin = random.integer(0, static_cast<int32_t>(span - 1));
  axis.pad_end = random.integer(0, static_cast<int32_t>(span - 1));
  const int64_t padded = input + axis.pad_begin + axis.pad_end;
  if (padded < span) axis.pad_end += span - padded;
  const int64_t room = input + axis.pad_begin + axis.pad_end - span;
  axis.output = room / axis.stride + 1;
  if (random.integer(0, 2) == 0 && room % axis.stride != 0 &&
      axis.output * axis.stride < input + axis.pad_begin) {
    ++axis.output;  // ceil mode
  }
  return axis;
}

reference::Pool2DShape random_shape(Random& random, int64_t planes, int64_t height, int64_t width) {
  const Axis rows = random_axis(random, height);
  const Axis columns = random_axis(random, width);
  reference::Pool2DShape shape;
  shape.planes = planes;
  reference::Window2D& w = shape.window;
  w.input_height = height;
  w.input_width = width;
  w.output_height = rows.output;
  w.output_width = columns.output;
  w.kernel_height = rows.kernel;
  w.kernel_width = columns.kernel;
  w.stride_height = rows.stride;
  w.stride_width = columns.stride;
  w.dilation_height = rows.dilation;
  w.dilation_width = columns.dilation;
  w.pad_top = rows.pad_begin;
  w.pad_left = columns.pad_begin;
  w.pad_bottom = rows.pad_end;
  w.pad_right = columns.pad_end;
  return shape;
}

std::string describe(const reference::Pool2DShape& s) {
  const reference::Window2D& w = s.window;
  char text[200];
  std::snprintf(text, sizeof(text),
                "%lldx%lldx%lld -> %lldx%lld, kernel %lldx%lld, stride %lldx%lld, dilation "
                "%lldx%lld, pads %lld,%lld,%lld,%lld",
                static_cast<long long>(s.planes), static_cast<long long>(w.input_height),
                static_cast<long long>(w.input_width), static_cast<long long>(w.output_height),
                static_cast<long long>(w.output_width), static_cast<long long>(w.kernel_height),
                static_cast<long long>(w.kernel_width), static_cast<long long>(w.stride_height),
                static_cast<long long>(w.stride_width), static_cast<long long>(w.dilation_height),
                static_cast<long long>(w.dilation_width), static_cast<long long>(w.pad_top),
                static_cast<long long>(w.pad_left), static_cast<long long>(w.pad_bottom),
                static_cast<long long>(w.pad_right));
  return text;
}

std::vector<reference::Pool2DShape> pool_shapes() {
  Random random(31);
  std::vector<reference::Pool2DShape> shapes;
  for (int64_t width : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 61}) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      shapes.push_back(random_shape(random, random.integer(1, 5), random.integer(1, 12), width));
    }
  }
  // resnet's stem max pool (3x3, stride 2, pad 1) on enough planes to be split over threads.
  reference::Pool2DShape stem;
  stem.planes = 8;
  stem.window = {112, 112, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1};
  shapes.push_back(stem);
  // Output rows past the padded input (ceil mode) and a top pad as large as the kernel allows.
  reference::Pool2DShape padded;
  padded.planes = 2;
  padded.window = {1, 3, 3, 3, 3, 1, 1, 1, 1, 1, 2, 0, 0, 0};
  shapes.push_back(padded);
  // Stride-1 "same" windows, whose interior outputs run across the rows of a band: YOLOv5s's
  // SPPF (5x5 on 20x20), dilated, several bands (250 columns) and a band of one row (wider
  // than a band); strided rows through the column phases, also dilated and in one-row bands.
  const int64_t windows[][14] = {
      {20, 20, 20, 20, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
      {9, 33, 9, 33, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
      {70, 250, 70, 250, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {5, 9000, 5, 9000, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {23, 47, 11, 15, 3, 5, 2, 3, 1, 2, 1, 3, 1, 3},
      {7, 9001, 3, 4500, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
  };
  for (const auto& window : windows) {
    reference::Pool2DShape same;
    same.planes = 3;
    same.window = {window[0], window[1], window[2], window[3],  window[4],  window[5],  window[6],
                   window[7], window[8], window[9], window[10], window[11], window[12], window[13]};
    shapes.push_back(same);
  }
  return shapes;
}

size_t input_count(const reference::Pool2DShape& s) {
  return static_cast<size_t>(s.planes * s.window.input_height * s.window.input_width);
}
size_t output_count(const reference::Pool2DShape& s) {
  return static_cast<size_t>(s.planes * s.window.output_height * s.window.output_width);
}

void test_max_pool_matches_reference(void** /*state*/) {
  Random random(5);
  ThreadPool one(1), three(3);
  for (const reference::Pool2DShape& shape : pool_shapes()) {
    const std::vector<float> input = random.floats(input_count(shape));
    const std::vector<int8_t> codes = random.codes(input_count(shape));
    std::vector<float> expected(output_count(shape));
    std::vector<int8_t> expected_codes(output_count(shape));
    reference::max_pool2d(shape, input.data(), expected.data(), nullptr, false);
    reference::max_pool2d(shape, codes.data(), expected_codes.data(), nullptr, false);
    for (KernelVariant variant : optimized_variants()) {
      auto kernel = kernels::cpu::prepare_max_pool2d(shape, variant);
      auto kernel8 = kernels::cpu::prepare_max_pool2d_int8(shape, variant);
      assert_non_null(kernel.get());
      assert_non_null(kernel8.get());
      for (ThreadPool* pool : {&one, &three}) {
        std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
        std::vector<int8_t> output_codes(expected.size(), 0);
        kernel->run(input.data(), output.data(), *pool);
        kernel8->run(codes.data(), output_codes.data(), *pool);
        const std::string mismatch = compare_floats(output, expected, 0.0);
        const std::string mismatch8 = compare_exact(output_codes, expected_codes);
        if (!mismatch.empty() || !mismatch8.empty()) {
          fail_msg("max pool %s, %s, %zu threads: float32 %s; int8 %s", describe(shape).c_str(),
                   kernel->algorithm(), pool->thread_count(), mismatch.c_str(), mismatch8.c_str());
        }
      }
    }
  }
}

// 3x3 float max pooling at stride 2 across with pad_left 1 (ResNet's stem pooling), which the
// avx512 table runs in rows read in place: widths around its 16-output blocks (odd and even),
// right pads 0-2, top and bottom pads 0-2, strides 1-3 down. The inputs are negative (a padded
// tap taken as 0 would show) and infinities, and every output must have the reference's bits.
// For the rows, NaNs and zeros of both signs too: the first tap inside the input, replaced only
// by a strictly larger one, in raster order (so a NaN first tap stays, a later NaN is skipped,
// and of -0 and +0 the first stays). The generic driver's rows-before-columns order differs
// there (docs/cpu-kernels.md, "Max pooling is separable").
void test_max_pool_stride2_rows(void** /*state*/) {
  Random random(8);
  ThreadPool one(1), three(3);
  size_t cases = 0;
  for (int64_t width : {1, 2, 3, 15, 16, 17, 31, 32, 33, 34, 63, 64, 65, 112}) {
    for (int64_t pad_right : {0, 1, 2}) {
      const int64_t output_width = (width + 1 + pad_right - 3) / 2 + 1;
      // Every output needs a tap inside the row; (ceil-mode windows past it are not ONNX's).
      if (width + 1 + pad_right < 3 || 2 * (output_width - 1) - 1 >= width) continue;
      const int64_t geometry[][4] = {{7, 2, 1, 1}, {8, 1, 0, 0}, {9, 3, 2, 2}, {6, 1, 1, 0}};
      for (const auto& g : geometry) {
        reference::Pool2DShape shape;
        shape.planes = 1 + (width % 3) * 5;
        const int64_t height = g[0], stride = g[1], pad_top = g[2], pad_bottom = g[3];
        const int64_t output_height = (height + pad_top + pad_bottom - 3) / stride + 1;
        shape.window = {height,  width, output_height, output_width, 3, 3, stride, 2, 1, 1,
                        pad_top, 1,     pad_bottom,    pad_right};
        // Negative values and infinities for every variant; NaNs and zeros of both signs for
        // the rows only (see above).
        std::vector<float> plain = random.floats(input_count(shape));
        std::vector<float> special(plain.size());
        for (size_t i = 0; i < plain.size(); ++i) {
          plain[i] = -1.0f - std::fabs(plain[i]);
          if (i % 17 == 8) plain[i] = -std::numeric_limits<float>::infinity();
          special[i] = plain[i];
          if (i % 7 == 3) special[i] = std::numeric_limits<float>::quiet_NaN();
          if (i % 11 == 5) special[i] = -0.0f;
          if (i % 13 == 6) special[i] = 0.0f;
        }
        for (KernelVariant variant : optimized_variants()) {
          auto kernel = kernels::cpu::prepare_max_pool2d(shape, variant);
          const bool rows = std::string(kernel->algorithm()).find("rows") != std::string::npos;
          if (variant == KernelVariant::kAvx512) assert_true(rows);
          const std::vector<float>& input = rows ? special : plain;
          std::vector<float> expected(output_count(shape));
          reference::max_pool2d(shape, input.data(), expected.data(), nullptr, false);
          for (ThreadPool* pool : {&one, &three}) {
            std::vector<float> output(expected.size(), 12345.0f);
            kernel->run(input.data(), output.data(), *pool);
            for (size_t i = 0; i < output.size(); ++i) {
              if (std::memcmp(&output[i], &expected[i], sizeof(float)) != 0) {
                fail_msg("max pool %s, %s, %zu threads: element %zu is %g, expected %g",
                         describe(shape).c_str(), kernel->algorithm(), pool->thread_count(), i,
                         double{output[i]}, double{expected[i]});
              }
            }
          }
        }
        ++cases;
      }
    }
  }
  std::printf("3x3 stride-2 max pooling: %zu shapes\n", cases);
}

void test_average_pool_matches_reference(void** /*state*/) {
  Random random(6);
  ThreadPool one(1), three(3);
  for (const reference::Pool2DShape& shape : pool_shapes()) {
    const std::vector<float> input = random.floats(input_count(shape));
    for (bool count_include_pad : {false, true}) {
      std::vector<float> expected(output_count(shape));
      reference::average_pool2d(shape, count_include_pad, input.data(), expected.data());
      for (KernelVariant variant : optimized_variants()) {
        auto kernel = kernels::cpu::prepare_average_pool2d(shape, count_include_pad, variant);
        assert_non_null(kernel.get());
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
          kernel->run(input.data(), output.data(), *pool);
          const std::string mismatch = compare_floats(output, expected, 0.0);
          if (!mismatch.empty()) {
            fail_msg("average pool %s (count_include_pad %d), %s, %zu threads: %s",
                     describe(shape).c_str(), count_include_pad ? 1 : 0, kernel->algorithm(),
                     pool->thread_count(), mismatch.c_str());
          }
        }
      }
    }
  }
}

void test_global_average_pool_matches_reference(void** /*state*/) {
  Random random(7);
  ThreadPool one(1), three(3);
  for (int64_t plane_size : {1, 7, 8, 9, 15, 16, 17, 49, 1031}) {
    for (int64_t planes : {1, 3, 13, 64, 130}) {
      const std::vector<float> input = random.floats(static_cast<size_t>(planes * plane_size));
      std::vector<float> expected(static_cast<size_t>(planes));
      reference::global_average_pool(planes, plane_size, input.data(), expected.data());
      for (KernelVariant variant : optimized_variants()) {
        auto kernel = kernels::cpu::prepare_global_average_pool(planes, plane_size, variant);
        assert_non_null(kernel.get());
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
          kernel->run(input.data(), output.data(), *pool);
          const std::string mismatch = compare_floats(output, expected, 0.0);
          if (!mismatch.empty()) {
            fail_msg("global average pool %lld planes of %lld, %s, %zu threads: %s",
                     static_cast<long long>(planes), static_cast<long long>(plane_size),
                     kernel->algorithm(), pool->thread_count(), mismatch.c_str());
          }
        }
      }
    }
  }
  // The reference variant and empty planes are left to the reference kernels.
  assert_null(kernels::cpu::prepare_global_average_pool(4, 0, KernelVariant::kPortable).get());
  assert_null(kernels::cpu::prepare_max_pool2d(pool_shapes()[0], KernelVariant::kReference).get());
}

// int8 codes through a decode table: the averages of the decoded values, bit for bit (the
// float domain decodes every code with that table, then runs the float kernel).
void test_global_average_pool_int8_matches_reference(void** /*state*/) {
  Random random(8);
  ThreadPool one(1), three(3);
  // A decode table like a quantized tensor's: scale * (code - zero point), rounded to float.
  float decoded[256];
  for (int byte = 0; byte < 256; ++byte) {
    decoded[byte] = 0.0371f * static_cast<float>(static_cast<int8_t>(byte) + 17);
  }
  for (int64_t plane_size : {1, 7, 8, 9, 49, 1031}) {
    for (int64_t planes : {1, 3, 13, 64, 130, 2048}) {
      const std::vector<int8_t> codes = random.codes(static_cast<size_t>(planes * plane_size));
      std::vector<float> values(codes.size());
      for (size_t i = 0; i < codes.size(); ++i) values[i] = decoded[static_cast<uint8_t>(codes[i])];
      std::vector<float> expected(static_cast<size_t>(planes));
      reference::global_average_pool(planes, plane_size, values.data(), expected.data());
      for (KernelVariant variant : optimized_variants()) {
        auto kernel =
            kernels::cpu::prepare_global_average_pool_int8(planes, plane_size, decoded, variant);
        assert_non_null(kernel.get());
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
          kernel->run(codes.data(), output.data(), *pool);
          const std::string mismatch = compare_floats(output, expected, 0.0);
          if (!mismatch.empty()) {
            fail_msg("int8 global average pool %lld planes of %lld, %s, %zu threads: %s",
                     static_cast<long long>(planes), static_cast<long long>(plane_size),
                     kernel->algorithm(), pool->thread_count(), mismatch.c_str());
          }
        }
      }
    }
  }
  assert_null(
      kernels::cpu::prepare_global_average_pool_int8(4, 0, decoded, KernelVariant::kPortable)
          .get());
  assert_null(
      kernels::cpu::prepare_global_average_pool_int8(4, 9, decoded, KernelVariant::kReference)
          .get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_max_pool_matches_reference),
      cmocka_unit_test(test_max_pool_stride2_rows),
      cmocka_unit_test(test_average_pool_matches_reference),
      cmocka_unit_test(test_global_average_pool_matches_reference),
      cmocka_unit_test(test_global_average_pool_int8_matches_reference),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
