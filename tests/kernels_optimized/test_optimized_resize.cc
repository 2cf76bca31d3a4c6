// Optimized nearest-neighbour and bilinear Resize (kernels/cpu/dispatch.h
// prepare_resize_nearest, prepare_resize_bilinear) against reference::resize_nearest and
// reference::resize_bilinear: the same bits for every coordinate transform and rounding mode
// (bilinear: within a float rounding on AArch64, where the compiler may fuse the reference's
// multiply-adds differently), over random ranks, up- and down-sampling by integer and
// fractional scales, on 1 and 3 threads; malformed parameters are refused.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "reference/resize.h"

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

std::string describe(const reference::ResizeParams& p) {
  std::string text = "[";
  for (size_t d = 0; d < p.input_shape.size(); ++d) {
    text += std::to_string(p.input_shape[d]) + "->" + std::to_string(p.output_shape[d]) +
            " (scale " + std::to_string(p.scales[d]) + ")" +
            (d + 1 < p.input_shape.size() ? ", " : "]");
  }
  return text + " transform " + std::to_string(static_cast<int>(p.transform)) + " rounding " +
         std::to_string(static_cast<int>(p.rounding));
}

// A random resize: each dimension keeps its size, or is scaled by 2, 3, 0.5, or a random
// fractional scale (given as a scale, the output size its floor, as ONNX computes it).
reference::ResizeParams random_resize(Random& random, size_t rank) {
  reference::ResizeParams p;
  const float scales[] = {1.0f, 2.0f, 3.0f, 0.5f, 0.0f};
  for (size_t d = 0; d < rank; ++d) {
    const int64_t input = random.integer(1, d + 1 == rank ? 40 : 9);
    float scale = scales[random.integer(0, 4)];
    if (scale == 0.0f) scale = random.real(0.3f, 2.7f);
    const int64_t output = std::max<int64_t>(1, static_cast<int64_t>(input * scale));
    p.input_shape.push_back(input);
    p.output_shape.push_back(output);
    p.scales.push_back(scale);
  }
  const reference::CoordinateTransform transforms[] = {
      reference::CoordinateTransform::kHalfPixel, reference::CoordinateTransform::kPytorchHalfPixel,
      reference::CoordinateTransform::kAlignCorners, reference::CoordinateTransform::kAsymmetric};
  const reference::NearestRounding roundings[] = {
      reference::NearestRounding::kRoundPreferFloor, reference::NearestRounding::kRoundPreferCeil,
      reference::NearestRounding::kFloor, reference::NearestRounding::kCeil};
  p.transform = transforms[random.integer(0, 3)];
  p.rounding = roundings[random.integer(0, 3)];
  return p;
}

enum class Mode { kNearest, kBilinear };

#if defined(__aarch64__)
constexpr double kBilinearTolerance = 1e-6;
#else
constexpr double kBilinearTolerance = 0.0;
#endif

void check_matches_reference(const reference::ResizeParams& params, Random& random,
                             Mode mode = Mode::kNearest) {
  ThreadPool one(1), three(3);
  const std::vector<float> input = random.floats(shape_elements(params.input_shape));
  std::vector<float> expected(shape_elements(params.output_shape));
  const bool bilinear = mode == Mode::kBilinear;
  if (bilinear) {
    reference::resize_bilinear(params, input.data(), expected.data());
  } else {
    reference::resize_nearest(params, input.data(), expected.data());
  }
  for (KernelVariant variant : optimized_variants()) {
    auto kernel = bilinear ? kernels::cpu::prepare_resize_bilinear(params, variant)
                           : kernels::cpu::prepare_resize_nearest(params, variant);
    assert_non_null(kernel.get());
    for (ThreadPool* pool : {&one, &three}) {
      std::vector<float> output(expected.size(), std::numeric_limits<float>::quiet_NaN());
      kernel->run(input.data(), output.data(), *pool);
      const std::string mismatch =
          compare_floats(output, expected, bilinear ? kBilinearTolerance : 0.0);
      if (!mismatch.empty()) {
        fail_msg("resize %s, %s, %zu threads: %s", describe(params).c_str(), kernel->algorithm(),
                 pool->thread_count(), mismatch.c_str());
      }
    }
  }
}

void test_random_resizes_match_reference(void** /*state*/) {
  Random random(17);
  for (size_t rank = 1; rank <= 4; ++rank) {
    for (int repeat = 0; repeat < 40; ++repeat) {
      check_matches_reference(random_resize(random, rank), random);
    }
  }
}

// Bilinear over the last two dimensions (ranks 2-4, the leading dimensions keep their sizes),
// wide rows too, so tasks split planes into row blocks.
void test_random_bilinear_resizes_match_reference(void** /*state*/) {
  Random random(19);
  for (size_t rank = 2; rank <= 4; ++rank) {
    for (int repeat = 0; repeat < 40; ++repeat) {
      reference::ResizeParams p = random_resize(random, rank);
      for (size_t d = 0; d + 2 < rank; ++d) {
        p.output_shape[d] = p.input_shape[d];
        p.scales[d] = 1.0f;
      }
      check_matches_reference(p, random, Mode::kBilinear);
    }
  }
  reference::ResizeParams p;
  p.input_shape = {2, 3, 37, 300};
  p.output_shape = {2, 3, 74, 600};
  p.scales = {1.0f, 1.0f, 2.0f, 2.0f};
  p.transform = reference::CoordinateTransform::kHalfPixel;
  check_matches_reference(p, random, Mode::kBilinear);
  // Leading dimensions that change size are left to the reference.
  p.output_shape[1] = 6;
  assert_null(kernels::cpu::prepare_resize_bilinear(p, KernelVariant::kPortable).get());
  assert_null(kernels::cpu::prepare_resize_bilinear({}, KernelVariant::kPortable).get());
}

// yolov5s's upsampling (2x nearest, asymmetric, floor) on enough planes to be split over threads.
void test_yolo_upsample_matches_reference(void** /*state*/) {
  Random random(18);
  reference::ResizeParams p;
  p.input_shape = {1, 32, 20, 20};
  p.output_shape = {1, 32, 40, 40};
  p.scales = {1.0f, 1.0f, 2.0f, 2.0f};
  p.transform = reference::CoordinateTransform::kAsymmetric;
  p.rounding = reference::NearestRounding::kFloor;
  check_matches_reference(p, random);
  // Identity columns (copied rows), downsampled rows.
  p.output_shape = {1, 32, 9, 20};
  p.scales = {1.0f, 1.0f, 0.45f, 1.0f};
  check_matches_reference(p, random);
}

void test_malformed_parameters_are_refused(void** /*state*/) {
  reference::ResizeParams p;
  // Rank 0, mismatched ranks, an empty input dimension: null, never a crash.
  assert_null(kernels::cpu::prepare_resize_nearest(p, KernelVariant::kPortable).get());
  p.input_shape = {2, 3};
  p.output_shape = {4};
  p.scales = {2.0f};
  assert_null(kernels::cpu::prepare_resize_nearest(p, KernelVariant::kPortable).get());
  p.input_shape = {0};
  assert_null(kernels::cpu::prepare_resize_nearest(p, KernelVariant::kPortable).get());
  // An empty output runs and writes nothing.
  p.input_shape = {3};
  p.output_shape = {0};
  p.scales = {0.1f};
  auto kernel = kernels::cpu::prepare_resize_nearest(p, KernelVariant::kPortable);
  assert_non_null(kernel.get());
  ThreadPool pool(2);
  const float input[3] = {1.0f, 2.0f, 3.0f};
  kernel->run(input, nullptr, pool);
  // The reference variant leaves resizing to the reference kernel.
  p.output_shape = {6};
  p.scales = {2.0f};
  assert_null(kernels::cpu::prepare_resize_nearest(p, KernelVariant::kReference).get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_resizes_match_reference),
      cmocka_unit_test(test_random_bilinear_resizes_match_reference),
      cmocka_unit_test(test_yolo_upsample_matches_reference),
      cmocka_unit_test(test_malformed_parameters_are_refused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
