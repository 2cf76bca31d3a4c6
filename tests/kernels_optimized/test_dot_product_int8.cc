// The dot-product int8 GEMMs (neon-dotprod: SDOT, neon-i8mm: SMMLA, avx512: AVX-512 VNNI
// VPDPBUSD) of convolution, Gemm and MatMul against the reference, bit for bit, and the same
// drivers on plain C++ tiles of the packed layouts (signed depth groups of 4 and 8, unsigned
// activations in groups of 4 as VPDPBUSD reads them; every build, so natively also under the
// sanitizers): randomized shapes around their tiles (MR x NR = 8 x 8 and 8 x 32, depth groups of
// 4 and 8, depth chunks of 256, column blocks of 192), every tile edge, non-zero weight and input
// zero points, and the cases they leave to the int16-pair GEMM (per-run weights, an input zero
// point outside int8, weight offsets outside int8), which must still be exact. Under
// qemu-aarch64 the cross tests run it on the `max` CPU model (both ARM instructions) and on
// Cortex-A76 (SDOT only). A variant this CPU lacks (avx512 on Zen 3, the ARM ones on x86) is
// reported as skipped, with the reason, and checked to be refused. Pair-limited tiles (VPMADDUBSW's
// int16 pair sums, and a portable table that saturates its pair sums the same way) run the
// convolutions with pair corrections (dot_product_pair_split.h): every split of a weight pair is
// checked exhaustively, and a tile that drops the corrections fails the extreme-weight problems.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/dot_product_kernels.h"
#include "optimized/dot_product_pair_split.h"
#include "optimized/phase_planes.h"
#include "reference/convolution.h"
#include "reference/gemm.h"

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

namespace optimized = kernels::cpu::optimized;

struct Problem {
  reference::Conv2DShape shape;
  reference::Int8Requantization q;
  std::vector<int8_t> input;
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
};

// A convolution of `channels` -> `output_channels` over `window` (input size, kernel, strides,
// dilations and pads set; the output size is computed here); weights drawn so that w - zw fits
// int8 unless `wide_weight_offsets`.
Problem make_window_problem(Random& random, int64_t channels, int64_t output_channels,
                            const reference::Window2D& window, int64_t groups,
                            int32_t input_zero_point, bool wide_weight_offsets) {
  Problem p;
  reference::Conv2DShape& s = p.shape;
  s.batch = 1;
  s.input_channels = channels;
  s.output_channels = output_channels;
  s.groups = groups;
  reference::Window2D& w = s.window;
  w = window;
  w.output_height = conv_output_size(w.input_height, w.kernel_height, w.stride_height,
                                     w.dilation_height, w.pad_top, w.pad_bottom);
  w.output_width = conv_output_size(w.input_width, w.kernel_width, w.stride_width, w.dilation_width,
                                    w.pad_left, w.pad_right);
  const int64_t height = w.input_height;
  const int64_t width = w.input_width;
  const int64_t depth = channels / groups * w.kernel_height * w.kernel_width;
  p.q.input_zero_point = input_zero_point;
  p.q.output_zero_point = random.integer(-20, 20);
  p.weights.resize(static_cast<size_t>(output_channels * depth));
  for (int64_t m = 0; m < output_channels; ++m) {
    // Zero points of either sign; the weights stay within 127 of them (or go past, to force
    // the int16-pair fallback).
    const int32_t zero_point = m % 3 == 0 ? 0 : random.integer(-40, 40);
    p.q.weight_zero_points.push_back(zero_point);
    const int low = wide_weight_offsets ? -128 : std::max(-128, zero_point - 128);
    const int high = wide_weight_offsets ? 127 : std::min(127, zero_point + 127);
    const std::vector<int8_t> row = random.codes(static_cast<size_t>(depth), low, high);
    std::copy(row.begin(), row.end(), p.weights.begin() + m * depth);
    // Large enough that the outputs spread over the codes, small enough to use every path.
    p.q.multipliers.push_back(1.0f / static_cast<float>(40 * depth + random.integer(0, 99)));
  }
  p.input = random.codes(static_cast<size_t>(channels * height * width));
  p.bias = random.ints(static_cast<size_t>(output_channels), -5000, 5000);
  return p;
}

// A k x k window (stride, pad on every side) on an h x w input.
Problem make_problem(Random& random, int64_t channels, int64_t output_channels, int64_t height,
                     int64_t width, int64_t kernel, int64_t stride, int64_t pad, int64_t groups,
                     int32_t input_zero_point, bool wide_weight_offsets) {
  reference::Window2D w;
  w.input_height = height;
  w.input_width = width;
  w.kernel_height = kernel;
  w.kernel_width = kernel;
  w.stride_height = stride;
  w.stride_width = stride;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = pad;
  return make_window_problem(random, channels, output_channels, w, groups, input_zero_point,
                             wide_weight_offsets);
}

// What runs the dot-product GEMMs: each dispatch variant this CPU has (through the dispatcher,
// which takes the int16 pairs where they do not apply), and in every build the portable tiles
// of both layouts (through the drivers' factories, which return null there).
bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// The algorithm name of `tiles`' GEMMs, "<name> int8 gemm <MR>x<NR>" ("int8 byte-pair gemm" on
// pair-limited tables): a variant's other kernels carry its name too (avx512's int16-pair
// fallback is "avx512 int8 gemm 6x16 im2col").
std::string dot_product_algorithm(const optimized::DotProductKernels& tiles) {
  return std::string(tiles.name) +
         (tiles.pair_sums_limited ? " int8 byte-pair gemm " : " int8 gemm ") +
         std::to_string(tiles.rows) + "x" + std::to_string(tiles.columns);
}

// The dot-product tiles of an available variant (the dispatcher's choice for it).
const optimized::DotProductKernels& variant_tiles(KernelVariant variant) {
#if defined(__aarch64__)
  if (variant == KernelVariant::kNeonI8mm) return optimized::i8mm_kernels();
  return optimized::sdot_kernels();
#elif defined(__x86_64__)
  static_cast<void>(variant);
  return optimized::avx512_vnni_kernels();
#else
  static_cast<void>(variant);
  return optimized::portable_dot_product_kernels(4, false);
#endif
}

struct Engine {
  std::string name;
  KernelVariant variant = KernelVariant::kReference;
  const optimized::DotProductKernels* table = nullptr;  // null: `variant` through the dispatcher
  std::string dot_product_prefix;                       // dot_product_algorithm of its tiles
  // Convolutions on the im2col GEMM even where the table's direct convolution would run.
  bool im2col_only = false;

  // Pair-limited tables run convolutions only: their Gemm and MatMul factories refuse.
  bool refuses_products() const { return table && table->pair_sums_limited; }

  // The GEMM, or where the table has it the direct convolution ("<name> int8 direct ...").
  bool ran_dot_product(const std::string& algorithm) const {
    return starts_with(algorithm, dot_product_prefix) ||
           starts_with(algorithm, dot_product_prefix.substr(0, dot_product_prefix.find(" gemm ")) +
                                      " direct ");
  }

  std::unique_ptr<kernels::cpu::Conv2DInt8> conv(const Problem& p, const int8_t* weights) const {
    if (table && im2col_only) {
      return optimized::make_im2col_dot_product_conv2d_int8(*table, p.shape, p.q, weights);
    }
    if (table) return optimized::make_dot_product_conv2d_int8(*table, p.shape, p.q, weights);
    return kernels::cpu::prepare_conv2d_int8(p.shape, p.q, weights, variant);
  }
  std::unique_ptr<kernels::cpu::GemmInt8> gemm(const reference::GemmParams& params,
                                               const reference::Int8Requantization& q,
                                               const int8_t* b) const {
    if (table) return optimized::make_dot_product_gemm_int8(*table, params, q, b);
    return kernels::cpu::prepare_gemm_int8(params, q, b, variant);
  }
  std::unique_ptr<kernels::cpu::MatMulInt8> matmul(const reference::MatMulParams& params,
                                                   const reference::Int8Requantization& q,
                                                   const int8_t* b) const {
    if (table) return optimized::make_dot_product_matmul_int8(*table, params, q, b);
    return kernels::cpu::prepare_matmul_int8(params, q, b, variant);
  }
};

constexpr KernelVariant kDotProductVariants[] = {KernelVariant::kNeonDotprod,
                                                 KernelVariant::kNeonI8mm, KernelVariant::kAvx512};

// The instructions a dot-product variant needs, for the skip messages.
const char* required_instructions(KernelVariant variant) {
  switch (variant) {
    case KernelVariant::kNeonDotprod:
      return "ARMv8.2 dotprod (SDOT)";
    case KernelVariant::kNeonI8mm:
      return "ARMv8.6 i8mm (SMMLA)";
    default:
      return "AVX-512 F/BW/VL/VNNI (VPDPBUSD)";
  }
}

// The portable tables: signed groups of 4 and 8, unsigned activations in groups of 4, with and
// without int16 pair sums.
std::vector<const optimized::DotProductKernels*> portable_tables() {
  return {&optimized::portable_dot_product_kernels(4, false),
          &optimized::portable_dot_product_kernels(8, false),
          &optimized::portable_dot_product_kernels(4, true),
          &optimized::portable_dot_product_kernels(4, true, true)};
}

std::vector<Engine> engines() {
  std::vector<Engine> list;
  for (KernelVariant variant : kDotProductVariants) {
    if (kernels::cpu::kernel_variant_available(variant)) {
      list.push_back({kernels::cpu::kernel_variant_name(variant), variant, nullptr,
                      dot_product_algorithm(variant_tiles(variant))});
    } else {
      // Never a silent pass: say which variant was not tested and why.
      std::printf("SKIPPED %s: this CPU does not report %s (detected: '%s')\n",
                  kernels::cpu::kernel_variant_name(variant), required_instructions(variant),
                  kernels::cpu::detected_cpu_features());
    }
  }
  for (const optimized::DotProductKernels* table : portable_tables()) {
    list.push_back({table->name, KernelVariant::kReference, table, dot_product_algorithm(*table)});
  }
#if defined(__x86_64__)
  // avx2's VPMADDUBSW tiles on every layer (its own table declines layers with many
  // corrections, as these random weights have: test_avx2_pair_dispatch).
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    static const optimized::DotProductKernels every_layer = [] {
      optimized::DotProductKernels table = optimized::avx2_pair_kernels();
      table.largest_correction_share = 1.0;
      return table;
    }();
    list.push_back({"avx2 pairs", KernelVariant::kReference, &every_layer,
                    dot_product_algorithm(every_layer)});
  } else {
    std::printf("SKIPPED avx2 pairs: this CPU does not report AVX2 (detected: '%s')\n",
                kernels::cpu::detected_cpu_features());
  }
#endif
  // The tables with a direct convolution also run their im2col GEMM on every shape.
  std::vector<const optimized::DotProductKernels*> direct_tables = {
      &optimized::portable_dot_product_kernels(4, true)};
#if defined(__x86_64__)
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    direct_tables.push_back(&optimized::avx512_vnni_kernels());
  }
#endif
  for (const optimized::DotProductKernels* table : direct_tables) {
    list.push_back({std::string(table->name) + " im2col", KernelVariant::kReference, table,
                    dot_product_algorithm(*table), true});
  }
  return list;
}

std::vector<int8_t> reference_output(const Problem& p) {
  std::vector<int8_t> expected(
      static_cast<size_t>(p.shape.batch * p.shape.output_channels * p.shape.window.output_height *
                          p.shape.window.output_width));
  reference::conv2d_int8(p.shape, p.q, p.input.data(), p.weights.data(), p.bias.data(),
                         expected.data());
  return expected;
}

// Runs `p` on `engine` with constant weights; returns the algorithm and fails on a mismatch.
std::string check(const Problem& p, const Engine& engine, ThreadPool& pool, const char* what) {
  const std::vector<int8_t> expected = reference_output(p);
  auto kernel = engine.conv(p, p.weights.data());
  if (!kernel) fail_msg("%s: %s refused the convolution", what, engine.name.c_str());
  std::vector<int8_t> output(expected.size(), 0x55);
  kernel->run(p.input.data(), nullptr, p.bias.data(), output.data(), pool);
  const std::string mismatch = compare_exact(output, expected);
  if (!mismatch.empty()) fail_msg("%s (%s): %s", what, kernel->algorithm(), mismatch.c_str());
  return kernel->algorithm();
}

// check(), and that the engine's own GEMM (or direct convolution) ran, not a fallback.
void check_dot_product(const Problem& p, const Engine& engine, ThreadPool& pool, const char* what) {
  const std::string algorithm = check(p, engine, pool, what);
  if (!engine.ran_dot_product(algorithm)) {
    fail_msg("%s: ran '%s', expected the %s GEMM", what, algorithm.c_str(), engine.name.c_str());
  }
}

// Random shapes: depths 1-20 (every remainder of 4 and 8) and around the 256 chunk, 1-19
// output channels (rows 1, MR - 1, MR, MR + 1, ...), 1-17 and 190-200 pixels (column blocks).
void test_random_shapes(void**) {
  Random random(2024);
  ThreadPool pool(3);
  for (const Engine& engine : engines()) {
    for (int trial = 0; trial < 40; ++trial) {
      const bool deep = trial % 5 == 4;
      const int64_t kernel = trial % 3 == 0 ? 3 : 1;
      const int64_t channels = deep ? random.integer(28, 30) * (kernel == 3 ? 1 : 9)
                                    : random.integer(1, kernel == 3 ? 3 : 20);
      const int64_t output_channels = random.integer(1, 19);
      const bool wide = trial % 4 == 1;
      // At least the kernel's height unpadded (an empty output is the reference's business).
      const int64_t height = wide ? (kernel == 3 ? 3 : 1) : random.integer(kernel == 3 ? 3 : 1, 5);
      const int64_t width = wide ? random.integer(190, 200) : random.integer(kernel, 17);
      const int64_t stride = trial % 7 == 3 ? 2 : 1;
      const int64_t pad = kernel == 3 ? trial % 2 : 0;
      const int32_t input_zero_point = random.integer(-128, 127);
      Problem p = make_problem(random, channels, output_channels, height, width, kernel, stride,
                               pad, 1, input_zero_point, false);
      // None, Relu, a clamp or SiLU, by trial.
      set_random_output_stage(random, p.q, static_cast<size_t>(trial));
      char what[160];
      std::snprintf(what, sizeof(what),
                    "trial %d: C %lld M %lld %lldx%lld k %lld s %lld pad %lld zx %d", trial,
                    static_cast<long long>(channels), static_cast<long long>(output_channels),
                    static_cast<long long>(height), static_cast<long long>(width),
                    static_cast<long long>(kernel), static_cast<long long>(stride),
                    static_cast<long long>(pad), input_zero_point);
      check_dot_product(p, engine, pool, what);
    }
  }
}

// Every tile edge: output channels (rows) around multiples of MR = 8, pixels (columns) around
// 16 and multiples of NR = 32 (VPDPBUSD's half-width and masked panels, SDOT's 8), depths
// around the groups of 4 and 8, input zero points over all of int8.
void test_tile_edges(void**) {
  Random random(31);
  ThreadPool pool(2);
  const int64_t row_counts[] = {1, 7, 8, 9, 15, 16, 17, 24, 25};
  const int64_t pixel_counts[] = {1, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65};
  for (const Engine& engine : engines()) {
    for (int64_t rows : row_counts) {
      for (int64_t pixels : pixel_counts) {
        const int64_t channels = random.integer(1, 9);
        const int32_t input_zero_point = random.integer(-128, 127);
        Problem p =
            make_problem(random, channels, rows, 1, pixels, 1, 1, 0, 1, input_zero_point, false);
        set_random_output_stage(random, p.q, static_cast<size_t>(rows + pixels));
        char what[128];
        std::snprintf(what, sizeof(what), "tile edge: M %lld pixels %lld C %lld zx %d",
                      static_cast<long long>(rows), static_cast<long long>(pixels),
                      static_cast<long long>(channels), input_zero_point);
        check_dot_product(p, engine, pool, what);
      }
    }
  }
}

// The im2col packed straight from the input along tap pieces (avx512, portable-dot4u) and the
// row gather (the other tables): windows of 1x1 stride 2, 3x3 stride 1 and 2 with pad 1, 7x7
// stride 2 pad 3, 6x6 stride 2 pad 2, 5x5 dilated, 3x1 and 1x3, asymmetric pads, pads wider
// than a tap's reach, and stride 3 (gathered rows on avx512), on output widths around the
// 32-column panels (1, 7, 14-17, 31-33, 56, 65 pixels per row) and the 192-column block, with
// every input zero point sign and 1-3 threads (blocks that start inside an output row).
void test_tap_pieces(void**) {
  Random random(1234);
  struct Window {
    int64_t kernel_height, kernel_width, stride, dilation, pad_top, pad_left, pad_bottom, pad_right;
  };
  const Window windows[] = {
      {1, 1, 2, 1, 0, 0, 0, 0}, {3, 3, 1, 1, 1, 1, 1, 1}, {3, 3, 2, 1, 1, 1, 1, 1},
      {7, 7, 2, 1, 3, 3, 3, 3}, {6, 6, 2, 1, 2, 2, 2, 2}, {5, 5, 1, 2, 4, 4, 4, 4},
      {3, 1, 1, 1, 1, 0, 1, 0}, {1, 3, 2, 1, 0, 1, 0, 1}, {3, 3, 1, 1, 0, 2, 1, 0},
      {3, 3, 2, 1, 4, 4, 0, 3}, {3, 3, 3, 1, 1, 1, 1, 1}, {2, 2, 2, 1, 0, 0, 1, 1}};
  const int64_t widths[] = {1, 7, 14, 15, 16, 17, 31, 32, 33, 56, 65};
  for (const Engine& engine : engines()) {
    for (size_t trial = 0; trial < 3 * std::size(windows); ++trial) {
      const Window& window = windows[trial % std::size(windows)];
      reference::Window2D w;
      w.kernel_height = window.kernel_height;
      w.kernel_width = window.kernel_width;
      w.stride_height = w.stride_width = window.stride;
      w.dilation_height = w.dilation_width = window.dilation;
      w.pad_top = window.pad_top;
      w.pad_left = window.pad_left;
      w.pad_bottom = window.pad_bottom;
      w.pad_right = window.pad_right;
      // An output width from the list (the input as wide as that takes), 1-9 output rows.
      const int64_t output_width = widths[random.integer(0, std::size(widths) - 1)];
      const int64_t reach_width = (w.kernel_width - 1) * w.dilation_width + 1;
      const int64_t reach_height = (w.kernel_height - 1) * w.dilation_height + 1;
      w.input_width = std::max<int64_t>(
          1, (output_width - 1) * w.stride_width + reach_width - w.pad_left - w.pad_right);
      w.input_height = std::max<int64_t>(1, (random.integer(1, 9) - 1) * w.stride_height +
                                                reach_height - w.pad_top - w.pad_bottom);
      // Pair-limited tables pack along tap pieces only from 256 channels on (fewer gather their
      // rows), so every other trial gives them that many.
      const bool many_channels = engine.refuses_products() && trial % 2 == 1;
      const int64_t channels = many_channels ? random.integer(256, 260) : random.integer(1, 12);
      const int64_t output_channels = random.integer(1, 20);
      const int32_t input_zero_point = random.integer(-128, 127);
      const Problem p =
          make_window_problem(random, channels, output_channels, w, 1, input_zero_point, false);
      if (p.shape.window.output_height <= 0 || p.shape.window.output_width <= 0) continue;
      ThreadPool pool(1 + trial % 3);
      char what[192];
      std::snprintf(what, sizeof(what),
                    "taps trial %zu: C %lld M %lld in %lldx%lld out %lldx%lld k %lldx%lld s %lld "
                    "d %lld pads %lld %lld %lld %lld zx %d",
                    trial, static_cast<long long>(channels),
                    static_cast<long long>(output_channels), static_cast<long long>(w.input_height),
                    static_cast<long long>(w.input_width),
                    static_cast<long long>(p.shape.window.output_height),
                    static_cast<long long>(p.shape.window.output_width),
                    static_cast<long long>(w.kernel_height), static_cast<long long>(w.kernel_width),
                    static_cast<long long>(window.stride), static_cast<long long>(window.dilation),
                    static_cast<long long>(w.pad_top), static_cast<long long>(w.pad_left),
                    static_cast<long long>(w.pad_bottom), static_cast<long long>(w.pad_right),
                    input_zero_point);
      check_dot_product(p, engine, pool, what);
    }
  }
}

// The phase planes (phase_planes.h) against their definition: for random stride-2 windows
// (kernels 1-7 per axis, pads 0-4 on each side, odd and even inputs), whole or for a run of
// output rows, every tap of every output pixel reads, at phase_tap_offset + (oy - the first
// output row) x columns + ox, the input pixel it covers or the pad.
void test_phase_planes(void**) {
  Random random(2214);
  for (int trial = 0; trial < 400; ++trial) {
    reference::Window2D w;
    w.kernel_height = random.integer(1, 7);
    w.kernel_width = random.integer(1, 7);
    w.stride_height = w.stride_width = 2;
    w.pad_top = random.integer(0, 4);
    w.pad_left = random.integer(0, 4);
    w.pad_bottom = random.integer(0, 4);
    w.pad_right = random.integer(0, 4);
    w.input_height = random.integer(1, 41);
    w.input_width = random.integer(1, 41);
    w.output_height =
        conv_output_size(w.input_height, w.kernel_height, 2, 1, w.pad_top, w.pad_bottom);
    w.output_width = conv_output_size(w.input_width, w.kernel_width, 2, 1, w.pad_left, w.pad_right);
    if (!optimized::phase_planes_apply(w)) continue;
    const size_t planes = static_cast<size_t>(random.integer(1, 3));
    const std::vector<int8_t> input =
        random.codes(planes * static_cast<size_t>(w.input_height * w.input_width));
    const auto pad = static_cast<int8_t>(random.integer(-128, 127));
    // Every output row, or (as a block of columns takes them) a run of output rows.
    const bool whole = trial % 2 == 0;
    const int64_t first_output_row = whole ? 0 : random.integer(0, w.output_height - 1);
    const int64_t output_rows =
        whole ? w.output_height : random.integer(1, w.output_height - first_output_row);
    const optimized::PhaseLayout layout =
        whole ? optimized::phase_layout(w)
              : optimized::phase_layout(w, first_output_row, output_rows);
    // A guard byte after the planes that the split must not write.
    std::vector<int8_t> phases(planes * layout.channel_bytes() + 1, 0x5a);
    ThreadPool pool(1 + trial % 3);
    if (trial % 4 < 2) {
      optimized::split_phase_planes(w, layout, input.data(), planes, pad, phases.data(), pool);
    } else {
      optimized::split_phase_planes(w, layout, input.data(), planes, pad, phases.data());
    }
    assert_int_equal(phases.back(), 0x5a);
    for (size_t plane = 0; plane < planes; ++plane) {
      const int8_t* source = input.data() + plane * w.input_height * w.input_width;
      const int8_t* channel = phases.data() + plane * layout.channel_bytes();
      for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
        for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
          const size_t offset = optimized::phase_tap_offset(w, layout, ky, kx);
          for (int64_t oy = first_output_row; oy < first_output_row + output_rows; ++oy) {
            for (int64_t ox = 0; ox < w.output_width; ++ox) {
              const int64_t iy = oy * 2 + ky - w.pad_top;
              const int64_t ix = ox * 2 + kx - w.pad_left;
              const bool inside = iy >= 0 && iy < w.input_height && ix >= 0 && ix < w.input_width;
              const int8_t expected = inside ? source[iy * w.input_width + ix] : pad;
              const size_t at =
                  offset + static_cast<size_t>((oy - first_output_row) * w.output_width + ox);
              if (at >= layout.channel_bytes() || channel[at] != expected) {
                fail_msg(
                    "phase planes trial %d: in %lldx%lld k %lldx%lld pads %lld %lld %lld "
                    "%lld, tap (%lld, %lld) output (%lld, %lld): wrong byte",
                    trial, static_cast<long long>(w.input_height),
                    static_cast<long long>(w.input_width), static_cast<long long>(w.kernel_height),
                    static_cast<long long>(w.kernel_width), static_cast<long long>(w.pad_top),
                    static_cast<long long>(w.pad_left), static_cast<long long>(w.pad_bottom),
                    static_cast<long long>(w.pad_right), static_cast<long long>(ky),
                    static_cast<long long>(kx), static_cast<long long>(oy),
                    static_cast<long long>(ox));
              }
            }
          }
        }
      }
    }
  }
}

// Stride-2 convolutions on the pair-limited tables, which read them on phase planes: random
// kernels (2x1 to 5x5), asymmetric pads up to 3, odd and even inputs of 1-40 pixels a side
// (output rows across the 16-column panels and 192-column blocks), 1-12 or 256-260 channels,
// two images and two groups, input zero points of either sign and 1-3 threads.
void test_phase_plane_convolutions(void**) {
  Random random(2215);
  for (const Engine& engine : engines()) {
    if (!engine.refuses_products()) continue;
    for (int trial = 0; trial < 40; ++trial) {
      reference::Window2D w;
      w.kernel_height = random.integer(1, 5);
      w.kernel_width = random.integer(w.kernel_height == 1 ? 2 : 1, 5);
      w.stride_height = w.stride_width = 2;
      w.pad_top = random.integer(0, 3);
      w.pad_left = random.integer(0, 3);
      w.pad_bottom = random.integer(0, 3);
      w.pad_right = random.integer(0, 3);
      w.input_height = random.integer(std::max<int64_t>(1, w.kernel_height - 3), 40);
      w.input_width = random.integer(std::max<int64_t>(1, w.kernel_width - 3), 40);
      const int64_t groups = trial % 4 == 3 ? 2 : 1;
      const int64_t group_channels =
          trial % 5 == 4 ? random.integer(256, 260) : random.integer(1, 12);
      const int32_t input_zero_point = random.integer(-128, 127);
      Problem p =
          make_window_problem(random, groups * group_channels, groups * random.integer(1, 14), w,
                              groups, input_zero_point, false);
      if (p.shape.window.output_height <= 0 || p.shape.window.output_width <= 0) continue;
      if (trial % 3 == 1) {
        p.shape.batch = 2;
        p.input = random.codes(2 * p.input.size());
      }
      ThreadPool pool(1 + trial % 3);
      char what[160];
      std::snprintf(what, sizeof(what),
                    "phase trial %d: N %lld C %lld g %lld in %lldx%lld k %lldx%lld pads %lld %lld "
                    "%lld %lld zx %d",
                    trial, static_cast<long long>(p.shape.batch),
                    static_cast<long long>(p.shape.input_channels), static_cast<long long>(groups),
                    static_cast<long long>(w.input_height), static_cast<long long>(w.input_width),
                    static_cast<long long>(w.kernel_height), static_cast<long long>(w.kernel_width),
                    static_cast<long long>(w.pad_top), static_cast<long long>(w.pad_left),
                    static_cast<long long>(w.pad_bottom), static_cast<long long>(w.pad_right),
                    input_zero_point);
      check_dot_product(p, engine, pool, what);
    }
  }
}

// Extreme codes: every input at -128 or 127 against weights at the ends of their range, with
// zero points at the int8 limits (|x - zx| = 255), and groups.
void test_extremes_and_groups(void**) {
  Random random(77);
  ThreadPool pool(2);
  for (const Engine& engine : engines()) {
    for (int32_t input_zero_point : {-128, 127}) {
      Problem p = make_problem(random, 12, 9, 6, 7, 3, 1, 1, 3, input_zero_point, false);
      for (int8_t& x : p.input) x = x < 0 ? -128 : 127;
      for (size_t m = 0; m < p.q.weight_zero_points.size(); ++m) p.q.weight_zero_points[m] = 0;
      for (int8_t& w : p.weights) w = w < 0 ? -128 : 127;
      check(p, engine, pool, "extreme codes, groups 3");
    }
  }
}

// The exact accumulator of output channel m at output pixel j: bias + sum (x - zx)(w - zw).
int64_t accumulator(const Problem& p, int64_t m, int64_t j) {
  const reference::Window2D& w = p.shape.window;
  const int64_t channels = p.shape.input_channels;
  const int64_t oy = j / w.output_width;
  const int64_t ox = j % w.output_width;
  int64_t sum = p.bias[static_cast<size_t>(m)];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
      for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
        const int64_t iy = oy * w.stride_height - w.pad_top + ky * w.dilation_height;
        const int64_t ix = ox * w.stride_width - w.pad_left + kx * w.dilation_width;
        if (iy < 0 || iy >= w.input_height || ix < 0 || ix >= w.input_width) continue;
        const int32_t x =
            p.input[static_cast<size_t>((c * w.input_height + iy) * w.input_width + ix)];
        const int32_t weight = p.weights[static_cast<size_t>(
            ((m * channels + c) * w.kernel_height + ky) * w.kernel_width + kx)];
        sum += int64_t{x - p.q.input_zero_point} *
               (weight - p.q.weight_zero_points[static_cast<size_t>(m)]);
      }
    }
  }
  return sum;
}

// The requantization's rounding where it is hardest to get right (the avx512 tiles round in float
// where the accumulators are proven small, Int8TileRequantization::in_float): per output channel
// one pixel's product acc x M is an exact half-integer (M = 2^-8, the bias moved so that acc is an
// odd multiple of 128: ties go to even) or within a float's rounding of one (M = float((k + 0.5) /
// acc): a float product would round onto the tie), with the other pixels around it; 1x1 (the GEMM,
// in place) and 3x3 (the direct convolution) windows over 65 pixels (two full panels and one
// column), 1-3 threads.
void test_requantization_ties(void**) {
  Random random(4242);
  for (const Engine& engine : engines()) {
    for (int64_t kernel : {1, 3}) {
      for (int threads = 1; threads <= 3; ++threads) {
        ThreadPool pool(static_cast<size_t>(threads));
        Problem p = make_problem(random, 11, 19, 5, 13, kernel, 1, kernel / 2, 1,
                                 random.integer(-128, 127), false);
        const int64_t pixels = p.shape.window.output_height * p.shape.window.output_width;
        for (int64_t m = 0; m < p.shape.output_channels; ++m) {
          const int64_t pixel = (m * 7 + threads) % pixels;
          const int32_t k = random.integer(-60, 60);
          const auto channel = static_cast<size_t>(m);
          if (m % 3 == 0) {
            p.bias[channel] += static_cast<int32_t>((2 * k + 1) * 128 - accumulator(p, m, pixel));
            p.q.multipliers[channel] = 1.0f / 256.0f;
          } else {
            int64_t acc = accumulator(p, m, pixel);
            if (acc == 0) p.bias[channel] += 1000, acc = 1000;
            p.q.multipliers[channel] = static_cast<float>((k + 0.5) / static_cast<double>(acc));
          }
        }
        char what[96];
        std::snprintf(what, sizeof(what), "ties: %lldx%lld window, %d threads",
                      static_cast<long long>(kernel), static_cast<long long>(kernel), threads);
        check(p, engine, pool, what);
      }
    }
  }
}

// The avx512 kernels' check of the real sums (Int8TileRequantization::float_bounds and
// requantize_offset_row): where the static bound fails, a row (or 16 sums of it) requantizes in
// float only when every real sum is within the row's limit, min(2^24, 2^21 / |m|). The input is
// hot (x = 127, zx = -128) in four columns of the plane, cold (x = zx) in three others and
// partly hot elsewhere ("the first h channels hot"), so one tile row holds sums on both sides of
// its limit: in both column vectors (hot columns 0-3), or only in the second (hot columns 20-23
// of 32, which a check of the first vector alone lets through). Per output channel:
//  - m = 0.45, every w - zw = -128, a small bias: the cold pixels' sums are the bias (outputs in
//    range, exact only if the float path is), the hot ones below -1.5 x 2^23 / m, where a float
//    product would wrap to the wrong sign;
//  - m = 2^-17, the same weights, the cold pixels' sum 261 x 2^16 + 1 (above 2^24): the
//    reference's product is 130.5 + 2^-17 (131), while the float of that sum is 261 x 2^16, whose
//    product 130.5 rounds half to even to 130, so a check without the 2^24 cap fails; the partly
//    hot pixels' sums are below 2^24;
//  - the usual random weights and multiplier, sums within every bound.
// 1x1 over 880 channels (the GEMM, several depth chunks) and 3x3 over 100 (the direct
// convolution, and the im2col GEMM's engine) on 5x13 and 3x32 / 5x32 planes; 1x1 over 1100 (the
// GEMM) and 3x3 over 128 (channels in lanes: requantize_offset_row) on 7x7; 1-2 threads. With
// every row in float, without the 2^24 cap, or with the second vector unchecked, it fails.
void test_requantization_bounds(void**) {
  Random random(9191);
  struct Layer {
    int64_t kernel, channels, output_channels, height, width;
    int64_t hot, cold;  // the first of four hot columns, of three cold ones
  };
  const Layer layers[] = {{1, 880, 11, 5, 13, 0, 10},  {3, 100, 11, 5, 13, 0, 10},
                          {1, 880, 11, 3, 32, 20, 26}, {3, 100, 11, 5, 32, 20, 26},
                          {1, 1100, 40, 7, 7, 0, 4},   {3, 128, 40, 7, 7, 0, 4}};
  for (const Engine& engine : engines()) {
    for (const Layer& layer : layers) {
      for (int threads = 1; threads <= 2; ++threads) {
        ThreadPool pool(static_cast<size_t>(threads));
        const int64_t channels = layer.channels;
        Problem p = make_problem(random, channels, layer.output_channels, layer.height, layer.width,
                                 layer.kernel, 1, layer.kernel / 2, 1, -128, false);
        p.q.output_zero_point = -100;
        const int64_t plane = layer.height * layer.width;
        for (int64_t position = 0; position < plane; ++position) {
          const int64_t column = position % layer.width;
          const bool hot = column >= layer.hot && column < layer.hot + 4;
          const bool cold = column >= layer.cold && column < layer.cold + 3;
          const int64_t hot_channels = hot ? channels : cold ? 0 : random.integer(1, 40);
          for (int64_t c = 0; c < channels; ++c) {
            p.input[static_cast<size_t>(c * plane + position)] = c < hot_channels ? 127 : -128;
          }
        }
        const int64_t depth = channels * layer.kernel * layer.kernel;
        const int64_t cold_pixel = layer.cold + 1;  // row 0: every tap cold (or padding)
        for (int64_t m = 0; m < p.shape.output_channels; ++m) {
          const auto channel = static_cast<size_t>(m);
          if (m % 3 == 2) continue;
          p.q.weight_zero_points[channel] = 0;
          std::fill_n(p.weights.begin() + m * depth, depth, static_cast<int8_t>(-128));
          if (m % 3 == 0) {
            p.q.multipliers[channel] = 0.45f;
            p.bias[channel] = random.integer(-50, 500);
          } else {
            p.q.multipliers[channel] = 1.0f / 131072.0f;  // 2^-17
            p.bias[channel] = 0;                          // accumulator() counts the bias
            p.bias[channel] = static_cast<int32_t>(261 * 65536 + 1 - accumulator(p, m, cold_pixel));
          }
        }
        char what[128];
        std::snprintf(
            what, sizeof(what),
            "sums across the float bound: %lldx%lld, %lld -> %lld at %lldx%lld, %d threads",
            static_cast<long long>(layer.kernel), static_cast<long long>(layer.kernel),
            static_cast<long long>(channels), static_cast<long long>(layer.output_channels),
            static_cast<long long>(layer.height), static_cast<long long>(layer.width), threads);
        const std::string algorithm = check(p, engine, pool, what);
        if (threads == 1) std::printf("%s: %s\n", what, algorithm.c_str());
      }
    }
  }
}

// What the dot-product GEMM leaves to the int16-pair GEMM: the factories refuse it, and the
// dispatcher's kernel is exact all the same.
void test_fallbacks(void**) {
  Random random(5);
  ThreadPool pool(2);
  for (const Engine& engine : engines()) {
    Problem wide_offsets = make_problem(random, 5, 6, 5, 6, 3, 1, 1, 1, 3, true);
    wide_offsets.q.weight_zero_points[1] = 40;  // and channel 1's first weight -128: -168
    wide_offsets.weights[5 * 3 * 3] = -128;
    Problem outside = make_problem(random, 5, 6, 5, 6, 3, 1, 1, 1, 0, false);
    outside.q.input_zero_point = 200;
    // Per-run weights are not packed for it either.
    const Problem per_run = make_problem(random, 4, 9, 4, 5, 3, 1, 1, 1, -7, false);
    for (const Problem* p :
         std::initializer_list<const Problem*>{&wide_offsets, &outside, &per_run}) {
      const int8_t* constant = p == &per_run ? nullptr : p->weights.data();
      auto kernel = engine.conv(*p, constant);
      if (engine.table) {
        assert_null(kernel.get());
        continue;
      }
      if (engine.ran_dot_product(kernel->algorithm())) {
        fail_msg("ran '%s', expected the int16-pair GEMM", kernel->algorithm());
      }
      std::vector<int8_t> output(reference_output(*p).size(), 0x55);
      kernel->run(p->input.data(), p->weights.data(), p->bias.data(), output.data(), pool);
      const std::string mismatch = compare_exact(output, reference_output(*p));
      if (!mismatch.empty()) {
        fail_msg("fallback (%s): %s", kernel->algorithm(), mismatch.c_str());
      }
    }
  }
}

// Empty outputs (a window larger than the input, M or N of 0) have nothing to block: the
// drivers refuse them rather than divide by zero.
void test_empty_outputs(void**) {
  Random random(11);
  for (const optimized::DotProductKernels* table_pointer : portable_tables()) {
    const optimized::DotProductKernels& table = *table_pointer;
    const Problem p = make_problem(random, 3, 4, 1, 6, 3, 2, 0, 1, 0, false);
    assert_int_equal(p.shape.window.output_height, 0);
    assert_null(
        optimized::make_dot_product_conv2d_int8(table, p.shape, p.q, p.weights.data()).get());
    reference::GemmParams params;
    params.m = 0;
    params.n = 4;
    params.k = 5;
    const reference::Int8Requantization q = p.q;
    const std::vector<int8_t> b(20, 1);
    assert_null(optimized::make_dot_product_gemm_int8(table, params, q, b.data()).get());
  }
}

// The variants exist only where the CPU has the instructions; elsewhere asking for one gives
// the best variant (dispatch.h), never a kernel that would fault.
void test_availability(void**) {
  const std::string features = kernels::cpu::detected_cpu_features();
  assert_int_equal(kernels::cpu::kernel_variant_available(KernelVariant::kNeonDotprod),
                   features.find("dotprod") != std::string::npos);
  assert_int_equal(kernels::cpu::kernel_variant_available(KernelVariant::kNeonI8mm),
                   features.find("i8mm") != std::string::npos);
  assert_int_equal(kernels::cpu::kernel_variant_available(KernelVariant::kAvx512),
                   features.find("avx512vnni") != std::string::npos);
  Random random(9);
  ThreadPool pool(1);
  for (KernelVariant variant : kDotProductVariants) {
    if (kernels::cpu::kernel_variant_available(variant)) continue;
    const std::string name = kernels::cpu::kernel_variant_name(variant);
    const Problem p = make_problem(random, 4, 5, 3, 3, 1, 1, 0, 1, 0, false);
    const std::string algorithm = check(p, Engine{name, variant, nullptr, ""}, pool, name.c_str());
    assert_false(starts_with(algorithm, name));
  }
}

// Quantization of a product with `n` output columns: zero points within reach of the codes
// (B's offsets fit int8 unless `wide`), multipliers that spread the outputs.
reference::Int8Requantization product_quantization(Random& random, int64_t n, int64_t k,
                                                   int32_t input_zero_point) {
  reference::Int8Requantization q;
  q.input_zero_point = input_zero_point;
  q.output_zero_point = random.integer(-20, 20);
  for (int64_t column = 0; column < n; ++column) {
    q.weight_zero_points.push_back(column % 3 == 0 ? 0 : random.integer(-30, 30));
    q.multipliers.push_back(1.0f / static_cast<float>(40 * k + random.integer(0, 99)));
  }
  return q;
}

// B codes whose offsets from their column's zero point fit int8 (column = index % n, or
// index / k % n when transposed).
std::vector<int8_t> product_weights(Random& random, const reference::Int8Requantization& q,
                                    size_t count, int64_t n, int64_t k, bool transposed) {
  std::vector<int8_t> b = random.codes(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t column = transposed ? i / static_cast<size_t>(k) % static_cast<size_t>(n)
                                     : i % static_cast<size_t>(n);
    const int32_t zero_point = q.weight_zero_points[column];
    b[i] = static_cast<int8_t>(std::clamp<int32_t>(b[i], zero_point - 128, zero_point + 127));
  }
  return b;
}

// Gemm: random M, N, K around the tiles and the depth chunk (the first trials' N at the edges of
// the 32-column VPDPBUSD panels), both transposes, C as one row, a full matrix, a column or
// absent.
void test_gemm(void**) {
  Random random(404);
  ThreadPool pool(3);
  for (const Engine& engine : engines()) {
    const std::string& name = engine.name;
    for (int trial = 0; trial < 24; ++trial) {
      reference::GemmParams params;
      params.m = random.integer(1, trial % 4 == 3 ? 150 : 19);
      const int64_t edge_columns[] = {31, 32, 33, 47, 64, 65};
      params.n = trial < 6 ? edge_columns[trial] : random.integer(1, trial % 5 == 4 ? 200 : 19);
      params.k = trial % 6 == 5 ? random.integer(250, 520) : random.integer(1, 21);
      params.transpose_a = trial % 2 == 1;
      params.transpose_b = trial % 3 == 1;
      const int c_kind = trial % 4;  // 0 none, 1 row, 2 matrix, 3 column
      params.c_row_stride = c_kind == 2 ? params.n : c_kind == 3 ? 1 : 0;
      params.c_column_stride = c_kind == 1 || c_kind == 2 ? 1 : 0;
      const reference::Int8Requantization q =
          product_quantization(random, params.n, params.k, random.integer(-128, 127));
      const std::vector<int8_t> a = random.codes(static_cast<size_t>(params.m * params.k));
      const std::vector<int8_t> b =
          product_weights(random, q, static_cast<size_t>(params.k * params.n), params.n, params.k,
                          params.transpose_b);
      const std::vector<int32_t> c =
          random.ints(static_cast<size_t>(params.m * params.n), -4000, 4000);
      const int32_t* c_data = c_kind == 0 ? nullptr : c.data();
      std::vector<int8_t> expected(static_cast<size_t>(params.m * params.n));
      reference::gemm_int8(params, q, a.data(), b.data(), c_data, expected.data());
      auto kernel = engine.gemm(params, q, b.data());
      if (engine.refuses_products()) {
        assert_null(kernel.get());
        continue;
      }
      if (!kernel) fail_msg("gemm trial %d: %s refused it", trial, name.c_str());
      std::vector<int8_t> output(expected.size(), 0x55);
      kernel->run(a.data(), nullptr, c_data, output.data(), pool);
      const std::string mismatch = compare_exact(output, expected);
      if (!mismatch.empty() || !engine.ran_dot_product(kernel->algorithm())) {
        fail_msg("gemm trial %d: M %lld N %lld K %lld ta %d tb %d C %d (%s): %s", trial,
                 static_cast<long long>(params.m), static_cast<long long>(params.n),
                 static_cast<long long>(params.k), params.transpose_a, params.transpose_b, c_kind,
                 kernel->algorithm(), mismatch.c_str());
      }
    }
  }
}

// Batched MatMul with B broadcast over the batch and per batch, and the fallbacks (B per run, an
// input zero point outside int8), exact all the same.
// Gemm with one row (the classifiers' fully connected layer; optimized/row_vector.h): N at
// the panel edges of every layout (8 and 32 columns), K at the depth groups (4, 8) and around
// the blocked path's 256-deep chunk, a row C or none, the requantization clamped or not, on 1
// and 3 threads; the algorithm says the row path ran.
void test_gemm_one_row(void**) {
  Random random(405);
  ThreadPool one(1), three(3);
  const int64_t columns[] = {1, 7, 8, 9, 31, 32, 33, 65, 100, 1000};
  const int64_t depths[] = {1, 3, 4, 5, 9, 255, 256, 257, 520, 1283};
  for (const Engine& engine : engines()) {
    const std::string& name = engine.name;
    for (int trial = 0; trial < 20; ++trial) {
      reference::GemmParams params;
      params.m = 1;
      params.n = columns[trial % 10];
      params.k = depths[(trial * 7 + trial / 10) % 10];
      params.transpose_b = trial % 3 == 1;
      params.c_column_stride = trial % 2 == 0 ? 1 : 0;  // a row C, or none
      reference::Int8Requantization q =
          product_quantization(random, params.n, params.k, random.integer(-128, 127));
      if (trial % 4 == 1) q.output_minimum = std::max(-128, q.output_zero_point);
      const std::vector<int8_t> a = random.codes(static_cast<size_t>(params.k));
      const std::vector<int8_t> b =
          product_weights(random, q, static_cast<size_t>(params.k * params.n), params.n, params.k,
                          params.transpose_b);
      const std::vector<int32_t> c = random.ints(static_cast<size_t>(params.n), -4000, 4000);
      const int32_t* c_data = params.c_column_stride ? c.data() : nullptr;
      std::vector<int8_t> expected(static_cast<size_t>(params.n));
      reference::gemm_int8(params, q, a.data(), b.data(), c_data, expected.data());
      auto kernel = engine.gemm(params, q, b.data());
      if (engine.refuses_products()) {
        assert_null(kernel.get());
        continue;
      }
      if (!kernel) fail_msg("one-row gemm trial %d: %s refused it", trial, name.c_str());
      for (ThreadPool* pool : {&one, &three}) {
        std::vector<int8_t> output(expected.size(), 0x55);
        kernel->run(a.data(), nullptr, c_data, output.data(), *pool);
        const std::string mismatch = compare_exact(output, expected);
        const std::string algorithm = kernel->algorithm();
        const bool row_path =
            algorithm.size() > 4 && algorithm.substr(algorithm.size() - 4) == " row";
        if (!mismatch.empty() || !engine.ran_dot_product(algorithm) || !row_path) {
          fail_msg("one-row gemm trial %d: N %lld K %lld tb %d C %d, %zu threads (%s): %s", trial,
                   static_cast<long long>(params.n), static_cast<long long>(params.k),
                   params.transpose_b, c_data != nullptr, pool->thread_count(), algorithm.c_str(),
                   mismatch.c_str());
        }
      }
    }
  }
}

void test_matmul(void**) {
  Random random(505);
  ThreadPool pool(2);
  for (const Engine& engine : engines()) {
    const std::string& name = engine.name;
    for (int trial = 0; trial < 8; ++trial) {
      reference::MatMulParams params;
      params.m = random.integer(1, 20);
      params.n = random.integer(1, 20);
      params.k = random.integer(1, 40);
      params.batch_shape = {2, 3};
      params.a_batch_strides = {3, 1};
      params.b_batch_strides = trial % 2 ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{3, 1};
      const size_t b_matrices = trial % 2 ? 1 : 6;
      const bool fallback = trial == 7;
      const reference::Int8Requantization q = product_quantization(
          random, params.n, params.k, fallback ? 150 : random.integer(-128, 127));
      const std::vector<int8_t> a = random.codes(static_cast<size_t>(6 * params.m * params.k));
      const std::vector<int8_t> b =
          product_weights(random, q, b_matrices * static_cast<size_t>(params.k * params.n),
                          params.n, params.k, false);
      std::vector<int8_t> expected(static_cast<size_t>(6 * params.m * params.n));
      reference::matmul_int8(params, q, a.data(), b.data(), expected.data());
      const bool constant = trial != 6;
      auto kernel = engine.matmul(params, q, constant ? b.data() : nullptr);
      if (engine.table && (fallback || !constant || engine.refuses_products())) {
        assert_null(kernel.get());
        continue;
      }
      if (!kernel) fail_msg("matmul trial %d: %s refused it", trial, name.c_str());
      std::vector<int8_t> output(expected.size(), 0x55);
      kernel->run(a.data(), b.data(), output.data(), pool);
      const std::string mismatch = compare_exact(output, expected);
      const bool dot_product = engine.ran_dot_product(kernel->algorithm());
      if (!mismatch.empty() || dot_product == (fallback || !constant)) {
        fail_msg("matmul trial %d: M %lld N %lld K %lld (%s): %s", trial,
                 static_cast<long long>(params.m), static_cast<long long>(params.n),
                 static_cast<long long>(params.k), kernel->algorithm(), mismatch.c_str());
      }
    }
  }
}

// Every weight pair (w0, w1) in [-128, 127]^2: pair_may_saturate says whether some unsigned
// inputs take u0 w0 + u1 w1 out of int16 (the extremes are at u = 0 or 255), and the split
// leaves A a pair that cannot, plus a correction whose pair has one zero weight, which sum to
// the original pair; pairs that cannot saturate are left alone, with no correction.
void test_pair_split(void**) {
  size_t corrected = 0;
  for (int32_t w0 = -128; w0 <= 127; ++w0) {
    for (int32_t w1 = -128; w1 <= 127; ++w1) {
      int32_t lowest = 0, highest = 0;
      for (int32_t u0 : {0, 255}) {
        for (int32_t u1 : {0, 255}) {
          lowest = std::min(lowest, u0 * w0 + u1 * w1);
          highest = std::max(highest, u0 * w0 + u1 * w1);
        }
      }
      const bool saturates = lowest < -32768 || highest > 32767;
      assert_int_equal(optimized::pair_may_saturate(w0, w1), saturates);
      // The pair in either half of a group, the other half a safe pair.
      for (size_t half : {0u, 2u}) {
        int8_t group[4] = {5, -7, 5, -7};
        group[half] = static_cast<int8_t>(w0);
        group[half + 1] = static_cast<int8_t>(w1);
        std::vector<optimized::Int8PairCorrection> corrections;
        const bool split = optimized::split_pair_limited_group(group, 17, 3, corrections);
        assert_int_equal(split, saturates);
        assert_int_equal(corrections.size(), saturates ? 1 : 0);
        int32_t correction[4] = {0, 0, 0, 0};
        if (saturates) {
          ++corrected;
          assert_int_equal(corrections[0].group, 17);
          assert_int_equal(corrections[0].row, 3);
          for (size_t d = 0; d < 4; ++d) correction[d] = corrections[0].weights[d];
          assert_true(correction[half] == 0 || correction[half + 1] == 0);
        }
        assert_int_equal(group[half] + correction[half], w0);
        assert_int_equal(group[half + 1] + correction[half + 1], w1);
        assert_false(optimized::pair_may_saturate(group[half], group[half + 1]));
        assert_int_equal(group[2 - half], 5);
        assert_int_equal(group[3 - half], -7);
        assert_int_equal(correction[2 - half] | correction[3 - half], 0);
      }
    }
  }
  // Same sign and |w0| + |w1| > 128, twice over.
  // Positive: a + b >= 129 with a, b in [1, 127]; negative: in [1, 128].
  assert_int_equal(corrected, 2 * (126 * 127 / 2 + 128 * 129 / 2));
}

// The pair-limited portable table with its tile dropping every correction: the sums saturate.
void tile_without_corrections(const optimized::Int8DotTile& tile) {
  optimized::Int8DotTile stripped = tile;
  stripped.correction_count = 0;
  optimized::portable_dot_product_kernels(4, true, true).tile_activations_in_b(stripped);
}
void requantized_tile_without_corrections(const optimized::Int8DotTile& tile,
                                          const optimized::Int8TileRequantization& requantization) {
  optimized::Int8DotTile stripped = tile;
  stripped.correction_count = 0;
  optimized::portable_dot_product_kernels(4, true, true)
      .tile_requantized_activations_in_b(stripped, requantization);
}

// Weights where most pairs need a correction (codes of one sign, large), inputs at the
// extremes, depths past one 256-deep chunk (corrections in later chunks), rows past one panel:
// exact on every pair-limited engine, and wrong when the tile drops the corrections (so the
// problems do reach them).
void test_pair_corrections(void**) {
  Random random(606);
  ThreadPool pool(2);
  std::vector<Engine> limited;
  for (const Engine& engine : engines()) {
    if (engine.refuses_products()) limited.push_back(engine);
  }
  assert_false(limited.empty());
  optimized::DotProductKernels broken = optimized::portable_dot_product_kernels(4, true, true);
  broken.tile_activations_in_b = tile_without_corrections;
  broken.tile_requantized_activations_in_b = requantized_tile_without_corrections;
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t kernel = trial % 2 == 0 ? 1 : 3;
    const int64_t channels = trial < 2 ? 7 : random.integer(60, 140);
    Problem p = make_problem(random, channels, random.integer(9, 20), 5, random.integer(6, 11),
                             kernel, 1, kernel / 2, 1, trial % 3 == 0 ? -128 : 127, false);
    const bool positive = trial % 2 == 0;
    for (size_t m = 0; m < p.q.weight_zero_points.size(); ++m) p.q.weight_zero_points[m] = 0;
    for (int8_t& w : p.weights) {
      w = static_cast<int8_t>(positive ? random.integer(65, 127) : random.integer(-128, -65));
    }
    for (int8_t& x : p.input) x = random.integer(0, 3) == 0 ? -128 : 127;
    // Outputs spread over about +-60 around each channel's mean sum, none clamped, so a dropped
    // correction (a pair sum short by up to 32640) shows in the codes.
    const int64_t pixels = p.shape.window.output_height * p.shape.window.output_width;
    for (int64_t m = 0; m < p.shape.output_channels; ++m) {
      p.bias[static_cast<size_t>(m)] = 0;
      int64_t lowest = INT64_MAX, highest = INT64_MIN;
      for (int64_t j = 0; j < pixels; ++j) {
        lowest = std::min(lowest, accumulator(p, m, j));
        highest = std::max(highest, accumulator(p, m, j));
      }
      p.bias[static_cast<size_t>(m)] = static_cast<int32_t>(-(lowest + highest) / 2);
      p.q.multipliers[static_cast<size_t>(m)] =
          120.0f / static_cast<float>(std::max<int64_t>(highest - lowest, 240));
    }
    p.q.output_zero_point = 0;
    char what[96];
    std::snprintf(what, sizeof(what), "large %s weights, C %lld, %lldx%lld kernel",
                  positive ? "positive" : "negative", static_cast<long long>(channels),
                  static_cast<long long>(kernel), static_cast<long long>(kernel));
    for (const Engine& engine : limited) check(p, engine, pool, what);
    auto wrong =
        optimized::make_im2col_dot_product_conv2d_int8(broken, p.shape, p.q, p.weights.data());
    assert_non_null(wrong.get());
    std::vector<int8_t> output(reference_output(p).size(), 0x55);
    wrong->run(p.input.data(), nullptr, p.bias.data(), output.data(), pool);
    if (compare_exact(output, reference_output(p)).empty()) {
      fail_msg("%s: exact without the corrections, so they were not tested", what);
    }
  }
}

// Pair-limited tables cut the depth into chunks of about 256 as equal as the groups allow
// (dot_product_convolution.cc, chunk_groups): depths around the points where the chunk count
// and size change (95, 96 and 97 groups: one chunk of 95, then two of 48 and 49; 160, 161 and
// 250 groups), 1x1 and 3x3 windows, with uniform random weights (corrections in about a quarter
// of the pairs, indexed per chunk), accumulating over chunks and requantizing in the last.
void test_pair_depth_chunks(void**) {
  Random random(909);
  ThreadPool pool(2);
  const int64_t depth_groups[] = {95, 96, 97, 160, 161, 250};
  for (const Engine& engine : engines()) {
    if (!engine.refuses_products()) continue;
    for (size_t trial = 0; trial < 2 * std::size(depth_groups); ++trial) {
      const int64_t groups = depth_groups[trial % std::size(depth_groups)];
      const int64_t kernel = trial < std::size(depth_groups) ? 1 : 3;
      // 3x3: the channels whose 9 taps come nearest the groups' depth (not always a multiple of
      // 4, so the last group has padding).
      const int64_t channels = kernel == 1 ? 4 * groups : (4 * groups + 4) / 9;
      const int64_t stride = trial % 3 == 2 ? 2 : 1;
      Problem p = make_problem(random, channels, random.integer(5, 14), 5, random.integer(5, 21),
                               kernel, stride, kernel / 2, 1, random.integer(-128, 127), false);
      // Every other layer with SiLU.
      set_random_output_stage(random, p.q, trial % 2 ? 3 : 0);
      char what[96];
      std::snprintf(what, sizeof(what), "depth chunks: C %lld, %lldx%lld kernel, stride %lld",
                    static_cast<long long>(channels), static_cast<long long>(kernel),
                    static_cast<long long>(kernel), static_cast<long long>(stride));
      check(p, engine, pool, what);
    }
  }
}

// SiLU layers on every table (the pair tiles finish them from their stored int32 sums): the
// finite form; the general one (a channel's D above 2^64 puts the whole layer on it); sums
// beyond 2^24 (every input and weight at the extreme, so the double product); 1-13 output
// channels and 1-40 pixels (partial tiles), one and two depth chunks, one and three threads;
// bit-exact against the reference.
void test_silu_layers(void**) {
  Random random(4242);
  ThreadPool one(1), three(3);
  for (const Engine& engine : engines()) {
    for (int trial = 0; trial < 24; ++trial) {
      // Every fourth layer deep over 15 x 15 pixels (more than the small planes' 196): two
      // depth chunks, the second accumulating on the first's sums.
      const bool deep = trial % 4 == 3;
      const int64_t channels = deep ? 600 : random.integer(4, 70);
      const int64_t rows = random.integer(1, 13);
      const int64_t height = deep ? 15 : 1;
      const int64_t pixels = deep ? 15 : random.integer(1, 40);
      Problem p = make_problem(random, channels, rows, height, pixels, 1, 1, 0, 1,
                               random.integer(-128, 127), false);
      set_random_output_stage(random, p.q, 3);
      const int form = trial % 3;
      if (form == 1) p.q.multipliers[static_cast<size_t>(rows - 1)] = 3e19f;  // above 2^64
      if (form == 2) {
        // |acc| up to 255 x 127 x depth: far beyond 2^24 at the larger depths.
        p.q.input_zero_point = -128;
        std::fill(p.input.begin(), p.input.end(), int8_t{127});
        for (size_t k = 0; k < static_cast<size_t>(channels); ++k) p.weights[k] = 127;
        for (float& scale : p.q.multipliers) scale = 2e-7f;
        p.q.weight_zero_points[0] = 0;
      }
      char what[128];
      std::snprintf(what, sizeof(what), "SiLU layer: form %d C %lld M %lld pixels %lld", form,
                    static_cast<long long>(channels), static_cast<long long>(rows),
                    static_cast<long long>(pixels));
      check(p, engine, trial % 2 ? one : three, what);
    }
  }
}

// The avx2 column tile (avx2_dot_product_tiles.cc): a last panel of one pixel (7x7 planes: 49 =
// 3 x 16 + 1, and 1x1, 1x17, 3x11 planes) summed with A's rows in the lanes, four depth groups
// per step: depths of every remainder of the four-group step (1-3 groups read under a mask),
// one and two depth chunks (accumulating in c), 1-13 output channels (partial A panels), with
// uniform weights (corrections in about a quarter of the pairs), requantized in the tile and,
// with one large multiplier, through stored sums; bit-exact against the reference, and so is
// the table before the small-plane changes (avx2_pair_kernels_before_small_planes).
void test_column_tiles(void**) {
#if defined(__x86_64__)
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    std::printf("SKIPPED avx2 column tiles: no AVX2 (detected: '%s')\n",
                kernels::cpu::detected_cpu_features());
    return;
  }
  Random random(1313);
  ThreadPool pool(2);
  static const optimized::DotProductKernels every_layer = [] {
    optimized::DotProductKernels table = optimized::avx2_pair_kernels();
    table.largest_correction_share = 1.0;
    return table;
  }();
  static const optimized::DotProductKernels before_small_planes = [] {
    optimized::DotProductKernels table = optimized::avx2_pair_kernels_before_small_planes();
    table.largest_correction_share = 1.0;
    return table;
  }();
  const Engine columns{"avx2 pairs", KernelVariant::kReference, &every_layer,
                       dot_product_algorithm(every_layer)};
  const int64_t planes[][2] = {{7, 7}, {1, 1}, {1, 17}, {3, 11}};
  // Input channels: depth groups 1-7 (every remainder of 4), 97-99 groups (one chunk on these
  // small planes, two on the table before) and 512 and 625 groups (two chunks of 1024 and
  // about 1250 deep: the column tile accumulating in c).
  const int64_t channel_counts[] = {1, 5, 9, 13, 16, 21, 28, 389, 393, 397, 2048, 2500};
  int trial = 0;
  for (const auto& plane : planes) {
    for (int64_t channels : channel_counts) {
      for (bool stored : {false, true}) {
        Problem p = make_problem(random, channels, random.integer(1, 13), plane[0], plane[1], 1, 1,
                                 0, 1, random.integer(-128, 127), false);
        if (stored) p.q.multipliers[0] = 0.75f;  // not small: the int32 sums are stored
        char what[128];
        std::snprintf(what, sizeof(what), "column tile %d: C %lld M %lld %lldx%lld%s", trial++,
                      static_cast<long long>(channels),
                      static_cast<long long>(p.shape.output_channels),
                      static_cast<long long>(plane[0]), static_cast<long long>(plane[1]),
                      stored ? " stored sums" : "");
        check(p, columns, pool, what);
        auto wide = optimized::make_im2col_dot_product_conv2d_int8(before_small_planes, p.shape,
                                                                   p.q, p.weights.data());
        assert_non_null(wide.get());
        std::vector<int8_t> output(reference_output(p).size(), 0x55);
        wide->run(p.input.data(), nullptr, p.bias.data(), output.data(), pool);
        const std::string mismatch = compare_exact(output, reference_output(p));
        if (!mismatch.empty()) fail_msg("%s, table before: %s", what, mismatch.c_str());
      }
    }
  }
#endif
}

// The avx2 variant's choice: pointwise layers on the VPMADDUBSW tiles when few weight blocks
// need a correction (weights of trained layers, mostly small), the int16-pair GEMM or the lanes
// when many do (uniform random codes: about a quarter of the pairs) and for other windows.
void test_avx2_pair_dispatch(void**) {
  if (!kernels::cpu::kernel_variant_available(KernelVariant::kAvx2)) {
    std::printf("SKIPPED avx2 pair dispatch: no AVX2 (detected: '%s')\n",
                kernels::cpu::detected_cpu_features());
    return;
  }
  Random random(707);
  ThreadPool pool(2);
  const Engine avx2{"avx2", KernelVariant::kAvx2, nullptr, ""};
  for (int64_t size : {7, 9}) {
    for (bool small_weights : {true, false}) {
      Problem p = make_problem(random, 40, 24, size, size, 1, 1, 0, 1, 5, false);
      if (small_weights) {
        // Mostly small offsets with a few large ones: few pairs need a correction.
        for (size_t i = 0; i < p.weights.size(); ++i) {
          const int32_t zero_point = p.q.weight_zero_points[i / 40];
          const int32_t offset =
              random.integer(0, 49) == 0 ? random.integer(-127, 127) : random.integer(-30, 30);
          p.weights[i] = static_cast<int8_t>(std::clamp(zero_point + offset, -128, 127));
        }
      }
      const std::string algorithm = check(p, avx2, pool, "avx2 dispatch");
      const bool pairs = starts_with(algorithm, "avx2 int8 byte-pair gemm");
      if (pairs != small_weights) {
        fail_msg("%lldx%lld, %s weights: ran '%s'", static_cast<long long>(size),
                 static_cast<long long>(size), small_weights ? "small" : "uniform",
                 algorithm.c_str());
      }
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_shapes),
      cmocka_unit_test(test_tile_edges),
      cmocka_unit_test(test_tap_pieces),
      cmocka_unit_test(test_phase_planes),
      cmocka_unit_test(test_phase_plane_convolutions),
      cmocka_unit_test(test_extremes_and_groups),
      cmocka_unit_test(test_fallbacks),
      cmocka_unit_test(test_empty_outputs),
      cmocka_unit_test(test_gemm),
      cmocka_unit_test(test_gemm_one_row),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_availability),
      cmocka_unit_test(test_requantization_ties),
      cmocka_unit_test(test_requantization_bounds),
      cmocka_unit_test(test_pair_split),
      cmocka_unit_test(test_pair_corrections),
      cmocka_unit_test(test_pair_depth_chunks),
      cmocka_unit_test(test_avx2_pair_dispatch),
      cmocka_unit_test(test_column_tiles),
      cmocka_unit_test(test_silu_layers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
