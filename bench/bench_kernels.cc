// Kernel micro-benchmark: GFLOPS (float32) and GOPS (int8) of the optimized CPU kernels against
// this machine's peaks, measured when it starts (peak_rate.h: register-only multiply-accumulate
// loops of every instruction set the CPU has; the best float32 and the best int8 rate are the
// "peak" of the tables), and of the reference kernels they replace.
//
//   bench_kernels [--reps N] [--threads 1,2] [--filter TEXT|micro] [--reference] [--variant NAME]
//                 [--peak-fp32 GFLOPS] [--peak-int8 GOPS] [--peaks-only] [--direct-vs-gemm]
//                 [--int8-vs-gemm] [--subsample-vs-default] [--column-tiles-vs-default]
//
// --direct-vs-gemm runs only the float32 convolution layers (x86-64), each as the variant's
// im2col GEMM and as its direct convolution, interleaved on one thread in one process, and
// prints both times and which one the dispatcher picks.
//
// --int8-vs-gemm (formerly --int8-lanes-vs-gemm) runs only the int8 convolution layers that an
// alternative applies to, each as the variant table's im2col GEMM, with output channels in lanes
// (int8_lane_convolution.cc; planes up to 14x14) and as Winograd F(2x2, 3x3)
// (int8_winograd_convolution.cc; 3x3 stride 1), interleaved, per thread count of --threads, and
// prints the times and which one the dispatcher picks.
//
// --subsample-vs-default runs only the 1x1 strided layers, int8 and float32, each as the
// avx2 dispatcher chose before the subsampling wrapper (int8: lanes or pair tiles; float32:
// lanes or the im2col GEMM) and as the in-place pointwise kernel over a subsampled copy
// (subsampled_pointwise.h), interleaved, per thread count of --threads.
//
// --column-tiles-vs-default runs only the float32 1x1 layers whose output plane leaves a last
// panel of one column (7x7: 49 = 3 x 16 + 1), each as the im2col GEMM with the avx2 table and
// with the same table without its column tiles (MicroKernels::float_column_tiles), interleaved,
// per thread count of --threads (wall time).
//
// --filter micro runs the micro-kernel section alone (with a dot-product variant, e.g. avx512,
// also its int8 tile, with A in L1 and streaming from a 144-row block).
//
// --winograd-vs-default runs only the 3x3 stride-1 float32 layers (x86-64), each as what the
// variant chose before the Winograd convolution (lanes, direct or GEMM, by their rules) and as
// Winograd F(2x2, 3x3) and F(4x4, 3x3), interleaved, per thread count of --threads (wall time),
// and prints the times and what the dispatcher picks now.
//
// --winograd-accuracy runs those layers as Winograd F(2x2), F(4x4) and F(6x6) against the
// reference convolution on --reps random inputs and weights each (uniform in [-1, 1], a bias)
// and prints the worst error in units of the tests' tolerance, 1e-5 x max(1, max|expected|).
//
// --peak-fp32 / --peak-int8 replace the measured peaks (per core); --peaks-only prints the
// measured peaks and stops.
//
// Sections: the micro-kernels alone on L1-resident panels; convolution layers of ResNet50 and
// MobileNetV2 (224x224, batch 1) in float32 and int8; Gemm shapes. Every configuration (variant x
// thread count) of one shape runs once per repetition, interleaved, and the table reports the
// median of the repetitions, so the machine's noise (other builds) hits all of them alike.
// Reference timings (--reference) use fewer repetitions: they take up to seconds per layer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#include "core/large_allocation.h"
#include "core/thread_pool.h"
#include "dispatch.h"
#include "optimized/dot_product_kernels.h"
#include "optimized/micro_kernels.h"
#include "optimized/optimized_kernels.h"
#include "optimized/subsampled_pointwise.h"
#include "peak_rate.h"

namespace {

using namespace orknn;
namespace cpu = kernels::cpu;
namespace reference = kernels::reference;
using Clock = std::chrono::steady_clock;

struct Options {
  int reps = 15;
  std::vector<size_t> threads{1, 2};
  std::string filter;
  bool with_reference = false;
  cpu::KernelVariant variant = cpu::best_kernel_variant();
  double peak_fp32 = 0.0;  // GFLOPS per core; 0: measured at start
  double peak_int8 = 0.0;  // GOPS per core; 0: measured at start
  bool winograd_vs_default = false;
  bool winograd_accuracy = false;
  // The int16-pair loop's rate (vpmaddwd + vpaddd), what the int8 micro-kernel runs: its
  // efficiency is read against this, while the tables' int8 peak is the machine's best.
  double peak_int16_pairs = 0.0;
  bool peaks_only = false;
  bool direct_vs_gemm = false;
  bool int8_vs_gemm = false;
  bool subsample_vs_default = false;
  bool column_tiles_vs_default = false;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the calling thread: unlike wall time, it does not count the time other
// processes held the core, so single-thread rates stay meaningful on a busy machine.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Operands live where the runtime keeps its tensors (core/aligned_buffer.cc): from 2 MiB on, on
// transparent huge pages. On 4 KiB pages the float32 1x1 layers of 112x112-160x160 planes ran
// 1.1-1.3x slower (page walks: one page per input channel row), which a model never sees.
template <typename T>
using Tensor = std::vector<T, LargeAllocator<T>>;
using Floats = Tensor<float>;
using Codes = Tensor<int8_t>;

Floats random_floats(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  Floats values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

Codes random_codes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> distribution(-128, 127);
  Codes values(count);
  for (int8_t& value : values) value = static_cast<int8_t>(distribution(generator));
  return values;
}

// Weight codes spread as trained per-channel symmetric int8 weights are: normal with sigma 34,
// clamped to [-127, 127] (ResNet18's converted weights have 6.3% above 64 in magnitude, which
// sigma 34 gives). Uniform codes would make a quarter of the weight pairs need a correction on
// the avx2 VPMADDUBSW tiles, which then decline the layer (dot_product_pair_split.h).
Codes trained_weight_codes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> distribution(0.0f, 34.0f);
  Codes values(count);
  for (int8_t& value : values) {
    value = static_cast<int8_t>(std::clamp(std::lround(distribution(generator)), -127L, 127L));
  }
  return values;
}

// An int8 layer's operands as the layer benchmarks use them: random input codes, trained-like
// weights, a bias of 1000 per output channel, the output, and a requantization with a fused
// Relu (input zero point 3, output zero point -2, multipliers 1e-4).
struct Int8Operands {
  Codes x, w;
  std::vector<int32_t> bias;
  Codes y;
  reference::Int8Requantization q;
};

Int8Operands int8_operands(size_t input_size, size_t weight_size, size_t output_size,
                           int64_t output_channels) {
  Int8Operands operands{random_codes(input_size, 6),
                        trained_weight_codes(weight_size, 7),
                        std::vector<int32_t>(static_cast<size_t>(output_channels), 1000),
                        Codes(output_size),
                        {}};
  reference::Int8Requantization& q = operands.q;
  q.input_zero_point = 3;
  q.weight_zero_points.assign(static_cast<size_t>(output_channels), 0);
  q.multipliers.assign(static_cast<size_t>(output_channels), 1e-4f);
  q.output_zero_point = -2;
  q.output_minimum = -2;  // fused Relu
  return operands;
}

// ---- micro-kernels ------------------------------------------------------------------------

// The variant's int8 dot-product tile (none: null) on L1-resident panels, GOPS by wall and
// thread CPU time; prints one table row.
void bench_dot_product_tile(const Options& options) {
  namespace optimized = cpu::optimized;
  const optimized::DotProductKernels* table = nullptr;
#if defined(__x86_64__)
  if (options.variant == cpu::KernelVariant::kAvx512) table = &optimized::avx512_vnni_kernels();
  // avx2: the VPMADDUBSW tile (pair-limited; not yet used by the avx2 variant's convolutions).
  if (options.variant == cpu::KernelVariant::kAvx2) table = &optimized::avx2_pair_kernels();
#endif
#if defined(__aarch64__)
  if (options.variant == cpu::KernelVariant::kNeonDotprod) table = &optimized::sdot_kernels();
  if (options.variant == cpu::KernelVariant::kNeonI8mm) table = &optimized::i8mm_kernels();
#endif
  if (!table) return;
  // As the convolution driver runs it: one B panel (depth 256, in L1) against the A panels of a
  // 144-row block (36 KB: L2), and against one A panel only (everything in L1).
  const size_t depth = 256, mr = table->rows, nr = table->columns, g = table->group_depth;
  const size_t panels = 144 / mr;
  Codes a(depth * mr * panels), b(depth * nr);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i % 251 - 125);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(i % 241 - 120);
  std::vector<int32_t> c(mr * nr * panels);
  // A pair-limited tile's corrections (Int8PairCorrection) at about 2% of each row's depth
  // groups, spread over the depth, sorted by group as the driver passes them.
  std::vector<optimized::Int8PairCorrection> corrections;
  for (size_t group = 0; group < depth / g; ++group) {
    for (size_t r = 0; r < mr; ++r) {
      if ((group * mr + r) % 50 == 7) {
        corrections.push_back(
            {static_cast<uint32_t>(group), static_cast<uint32_t>(r), {100, 0, 0, -90}});
      }
    }
  }
  // A pair-limited table (avx2's VPMADDUBSW tile) is timed against the int16-pair tile of its
  // base table (what the avx2 variant's int8 GEMMs run), on the same int8 depth, interleaved
  // in each repetition, so the machine's noise hits both alike.
  const optimized::MicroKernels& base = table->base();
  const size_t imr = base.int16_rows, inr = base.int16_columns, pairs = depth / 2;
  std::vector<int16_t> a16(pairs * imr * 2), b16(pairs * inr * 2);
  for (size_t i = 0; i < a16.size(); ++i) a16[i] = static_cast<int16_t>(i % 251 - 125);
  for (size_t i = 0; i < b16.size(); ++i) b16[i] = static_cast<int16_t>(i % 241 - 120);
  std::vector<int32_t> c16(imr * inr);
  const optimized::Int16PairTile int16_tile{imr,        inr, pairs, a16.data(), b16.data(),
                                            c16.data(), inr, true,  nullptr,    nullptr};
  const int calls = 20000;
  // Configurations: A in L1, A from a 144-row block, and for pair-limited tables A in L1 with
  // the corrections, then the int16-pair tile.
  const size_t configurations = table->pair_sums_limited ? 4 : 2;
  std::vector<std::vector<double>> rates(configurations), cpu_rates(configurations);
  for (int rep = 0; rep < options.reps; ++rep) {
    for (size_t k = 0; k < configurations; ++k) {
      const size_t a_panels = k == 1 ? panels : 1;
      const auto start = Clock::now();
      const double cpu_start = thread_cpu_seconds();
      double ops = 2.0 * static_cast<double>(mr * nr * depth) * calls;
      if (k == 3) {
        for (int i = 0; i < calls; ++i) base.int16_pair_tile(int16_tile);
        ops = 2.0 * static_cast<double>(imr * inr * 2 * pairs) * calls;
      } else {
        for (int i = 0; i < calls; ++i) {
          const size_t p = static_cast<size_t>(i) % a_panels;
          optimized::Int8DotTile tile{
              mr, nr,  depth / g, a.data() + p * depth * mr, b.data(), c.data() + p * mr * nr,
              nr, true};
          if (k == 2) {
            tile.corrections = corrections.data();
            tile.correction_count = corrections.size();
          }
          table->tile_activations_in_b(tile);
        }
      }
      rates[k].push_back(ops / seconds_since(start) * 1e-9);
      cpu_rates[k].push_back(ops / (thread_cpu_seconds() - cpu_start) * 1e-9);
    }
  }
  for (size_t k = 0; k < configurations; ++k) {
    char label[160];
    if (k == 3) {
      std::snprintf(label, sizeof(label),
                    "int8 as int16 pairs (pmaddwd) %zux%zu tile, interleaved with the above", imr,
                    inr);
    } else {
      std::snprintf(label, sizeof(label), "int8 %s dot-product %zux%zu tile, A %s", table->name, mr,
                    nr,
                    k == 2   ? "in L1, corrections at 2% of the groups"
                    : k == 0 ? "in L1"
                             : "144 rows (L2)");
    }
    std::printf("| %s | %.1f GOPS | %.0f%% | %.1f GOPS | %.0f%% |\n", label, median(rates[k]),
                100.0 * median(rates[k]) / options.peak_int8, median(cpu_rates[k]),
                100.0 * median(cpu_rates[k]) / options.peak_int8);
  }
}

// The int8 SiLU epilogue row (docs/quantization.md 4.3) of every micro-kernel table this CPU
// runs, interleaved per repetition, in ns per output by thread CPU time: rows of 80x80 outputs
// (a YOLOv5s layer's channel at 640x640 input) with accumulators that put the real values in
// [-10, 10], where SiLU bends.
void bench_silu_epilogue(const Options& options) {
  namespace optimized = cpu::optimized;
  std::vector<const optimized::MicroKernels*> tables{&optimized::portable_micro_kernels()};
#if defined(__x86_64__)
  if (cpu::kernel_variant_available(cpu::KernelVariant::kAvx2)) {
    tables.push_back(&optimized::avx2_micro_kernels());
  }
  if (cpu::kernel_variant_available(cpu::KernelVariant::kAvx512)) {
    tables.push_back(&optimized::avx512_micro_kernels());
  }
#endif
#if defined(__aarch64__)
  tables.push_back(&optimized::neon_micro_kernels());
#endif
  const size_t count = 80 * 80;
  std::mt19937 generator(7);
  std::uniform_int_distribution<int32_t> distribution(-41000, 41000);
  std::vector<int32_t> accumulators(count);
  for (int32_t& value : accumulators) value = distribution(generator);
  Codes output(count);
  const optimized::RequantizeSiluRow row{accumulators.data(), count, 2.4e-4f, 0.0187f, -97,
                                         output.data()};
  const int calls = 400;
  std::vector<std::vector<double>> nanoseconds(tables.size());
  for (int rep = 0; rep < options.reps; ++rep) {
    for (size_t t = 0; t < tables.size(); ++t) {
      const double start = thread_cpu_seconds();
      for (int i = 0; i < calls; ++i) tables[t]->requantize_silu_row(row);
      nanoseconds[t].push_back((thread_cpu_seconds() - start) * 1e9 / (double(calls) * count));
    }
  }
  std::printf(
      "## int8 SiLU epilogue row (one thread, %zu outputs, interleaved, thread CPU time)\n\n",
      count);
  std::printf("| table | median ns per output | min-max | / %s |\n|---|---:|---:|---:|\n",
              tables.back()->name);
  const double last = median(nanoseconds.back());
  for (size_t t = 0; t < tables.size(); ++t) {
    const auto [low, high] = std::minmax_element(nanoseconds[t].begin(), nanoseconds[t].end());
    std::printf("| %s | %.3f | %.3f-%.3f | %.2f |\n", tables[t]->name, median(nanoseconds[t]), *low,
                *high, median(nanoseconds[t]) / last);
  }
  std::printf("\n");
}

void bench_micro_kernels(const Options& options) {
  namespace optimized = cpu::optimized;
  const optimized::MicroKernels* table = &optimized::portable_micro_kernels();
#if defined(__x86_64__)
  // avx512's table is avx2's but for the SiLU epilogue (its int8 GEMM tile is timed below).
  if (options.variant == cpu::KernelVariant::kAvx2) table = &optimized::avx2_micro_kernels();
  if (options.variant == cpu::KernelVariant::kAvx512) table = &optimized::avx512_micro_kernels();
#endif
#if defined(__aarch64__)
  // The dot-product variants share neon's table (they differ in the int8 GEMMs only).
  if (options.variant == cpu::KernelVariant::kNeon ||
      options.variant == cpu::KernelVariant::kNeonDotprod ||
      options.variant == cpu::KernelVariant::kNeonI8mm) {
    table = &optimized::neon_micro_kernels();
  }
#endif
  const optimized::MicroKernels& kernels = *table;
  const size_t depth = 256;
  const size_t mr = kernels.float_rows, nr = kernels.float_columns;
  Floats a = random_floats(depth * mr, 1), b = random_floats(depth * nr, 2);
  Floats c(mr * nr);
  optimized::FloatTile tile{mr,       nr, depth, a.data(), b.data(), nr,
                            c.data(), nr, true,  nullptr,  nullptr,  nullptr};
  const size_t imr = kernels.int16_rows, inr = kernels.int16_columns;
  std::vector<int16_t> a16(depth * imr * 2), b16(depth * inr * 2);
  for (size_t i = 0; i < a16.size(); ++i) a16[i] = static_cast<int16_t>(i % 251 - 125);
  for (size_t i = 0; i < b16.size(); ++i) b16[i] = static_cast<int16_t>(i % 241 - 120);
  std::vector<int32_t> c32(imr * inr);
  optimized::Int16PairTile itile{imr,        inr, depth, a16.data(), b16.data(),
                                 c32.data(), inr, true,  nullptr,    nullptr};
  const int calls = 20000;
  std::vector<double> float_rates, int_rates, float_cpu_rates, int_cpu_rates;
  for (int rep = 0; rep < options.reps; ++rep) {
    auto start = Clock::now();
    double cpu_start = thread_cpu_seconds();
    for (int i = 0; i < calls; ++i) kernels.float_tile(tile);
    const double float_ops = 2.0 * mr * nr * depth * calls;
    float_rates.push_back(float_ops / seconds_since(start) * 1e-9);
    float_cpu_rates.push_back(float_ops / (thread_cpu_seconds() - cpu_start) * 1e-9);
    start = Clock::now();
    cpu_start = thread_cpu_seconds();
    for (int i = 0; i < calls; ++i) kernels.int16_pair_tile(itile);
    const double int_ops = 2.0 * imr * inr * 2 * depth * calls;
    int_rates.push_back(int_ops / seconds_since(start) * 1e-9);
    int_cpu_rates.push_back(int_ops / (thread_cpu_seconds() - cpu_start) * 1e-9);
  }
  std::printf("## Micro-kernels (%s, one thread, panels in L1, depth %zu)\n\n", kernels.name,
              depth);
  std::printf(
      "| kernel | median (wall) | of peak | median (thread CPU time) | of peak |\n"
      "|---|---:|---:|---:|---:|\n");
  std::printf("| float32 %zux%zu FMA tile | %.1f GFLOPS | %.0f%% | %.1f GFLOPS | %.0f%% |\n", mr,
              nr, median(float_rates), 100.0 * median(float_rates) / options.peak_fp32,
              median(float_cpu_rates), 100.0 * median(float_cpu_rates) / options.peak_fp32);
  std::printf(
      "| int8 as int16 pairs (pmaddwd) %zux%zu tile | %.1f GOPS | %.0f%% | %.1f GOPS | "
      "%.0f%% |\n",
      imr, inr, median(int_rates), 100.0 * median(int_rates) / options.peak_int8,
      median(int_cpu_rates), 100.0 * median(int_cpu_rates) / options.peak_int8);
  bench_dot_product_tile(options);
  std::printf("\n");
  bench_silu_epilogue(options);
  if (options.peak_int16_pairs > 0.0 && options.peak_int16_pairs < options.peak_int8) {
    std::printf(
        "The int16-pair tile by CPU time is %.0f%% of its own instructions' peak (%.1f GOPS); "
        "the int8 peak above is a faster instruction set this CPU has.\n\n",
        100.0 * median(int_cpu_rates) / options.peak_int16_pairs, options.peak_int16_pairs);
  }
}

// ---- peaks --------------------------------------------------------------------------------

// Measures the peaks, prints them, and fills the options' peaks the command line left at 0.
void measure_and_print_peaks(Options& options) {
  const std::vector<bench::PeakRate> rates = bench::measure_peak_rates();
  double best_float = 0.0, best_integer = 0.0;
  std::printf("## Measured peaks (one thread, register-only loops, best of 5 by CPU time)\n\n");
  std::printf("| instructions | per core | kind |\n|---|---:|---|\n");
  for (const bench::PeakRate& rate : rates) {
    std::printf("| %s | %.1f %s | %s |\n", rate.instructions.c_str(), rate.per_core,
                rate.integer ? "GOPS" : "GFLOPS", rate.integer ? "int8" : "float32");
    double& best = rate.integer ? best_integer : best_float;
    best = std::max(best, rate.per_core);
    if (rate.instructions.find("vpmaddwd") != std::string::npos) {
      options.peak_int16_pairs = rate.per_core;
    }
  }
  // Without a measured loop for this CPU (none written for it), the DESIGN.md 7 figures of
  // the x86 machines they were taken on stand in, and the line below says so.
  const char* float_source = options.peak_fp32 > 0.0 ? "given" : "measured";
  const char* integer_source = options.peak_int8 > 0.0 ? "given" : "measured";
  if (options.peak_fp32 <= 0.0) {
    options.peak_fp32 = best_float > 0.0 ? best_float : 96.0;
    if (best_float <= 0.0) float_source = "assumed, not measured here";
  }
  if (options.peak_int8 <= 0.0) {
    options.peak_int8 = best_integer > 0.0 ? best_integer : 156.0;
    if (best_integer <= 0.0) integer_source = "assumed, not measured here";
  }
  std::printf("\nPeaks used below, per core: float32 %.1f GFLOPS (%s), int8 %.1f GOPS (%s).\n\n",
              options.peak_fp32, float_source, options.peak_int8, integer_source);
}

// ---- layers -------------------------------------------------------------------------------

struct Layer {
  const char* name;
  int64_t channels, size, output_channels, kernel, stride, groups;
  int64_t pad = -1;  // on every side; -1: kernel / 2
};

// ResNet50 v1.5 (torchvision) and MobileNetV2 layers at 224x224, ResNet18's strided ones, YOLOv5s
// layers at 640x640; `size` is the input side.
const Layer kLayers[] = {
    {"resnet50 conv1 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 1},
    {"resnet50 1x1 64->64 @56", 64, 56, 64, 1, 1, 1},
    {"resnet50 3x3 64->64 @56", 64, 56, 64, 3, 1, 1},
    {"resnet50 1x1 64->256 @56", 64, 56, 256, 1, 1, 1},
    {"resnet50 1x1 256->64 @56", 256, 56, 64, 1, 1, 1},
    {"resnet50 3x3/2 128->128 @56", 128, 56, 128, 3, 2, 1},
    {"resnet50 3x3 128->128 @28", 128, 28, 128, 3, 1, 1},
    {"resnet50 1x1 512->128 @28", 512, 28, 128, 1, 1, 1},
    {"resnet50 1x1/2 256->512 @56", 256, 56, 512, 1, 2, 1},
    {"resnet50 1x1/2 512->1024 @28", 512, 28, 1024, 1, 2, 1},
    {"resnet50 3x3 256->256 @14", 256, 14, 256, 3, 1, 1},
    {"resnet50 1x1 256->1024 @14", 256, 14, 1024, 1, 1, 1},
    {"resnet50 1x1 1024->256 @14", 1024, 14, 256, 1, 1, 1},
    {"resnet50 3x3 512->512 @7", 512, 7, 512, 3, 1, 1},
    {"resnet50 1x1 2048->512 @7", 2048, 7, 512, 1, 1, 1},
    {"resnet50 1x1 512->2048 @7", 512, 7, 2048, 1, 1, 1},
    {"resnet50 1x1/2 1024->2048 @14", 1024, 14, 2048, 1, 2, 1},
    {"resnet50 3x3/2 512->512 @14", 512, 14, 512, 3, 2, 1},
    {"resnet18 3x3/2 64->128 @56", 64, 56, 128, 3, 2, 1},
    {"resnet18 3x3/2 128->256 @28", 128, 28, 256, 3, 2, 1},
    {"resnet18 3x3/2 256->512 @14", 256, 14, 512, 3, 2, 1},
    {"resnet18 1x1/2 256->512 @14", 256, 14, 512, 1, 2, 1, 0},
    {"resnet18 1x1/2 64->128 @56", 64, 56, 128, 1, 2, 1, 0},
    {"resnet18 1x1/2 128->256 @28", 128, 28, 256, 1, 2, 1, 0},
    {"mobilenetv2 3x3/2 3->32 @224", 3, 224, 32, 3, 2, 1},
    {"yolov5s 6x6/2 3->32 @640", 3, 640, 32, 6, 2, 1, 2},
    {"yolov5s 3x3/2 32->64 @320", 32, 320, 64, 3, 2, 1},
    {"yolov5s 3x3 32->32 @160", 32, 160, 32, 3, 1, 1},
    {"yolov5s 3x3/2 64->128 @160", 64, 160, 128, 3, 2, 1},
    {"yolov5s 3x3 64->64 @80", 64, 80, 64, 3, 1, 1},
    {"yolov5s 3x3/2 256->512 @40", 256, 40, 512, 3, 2, 1},
    {"yolov5s 3x3 128->128 @40", 128, 40, 128, 3, 1, 1},
    {"yolov5s 3x3 256->256 @20", 256, 20, 256, 3, 1, 1},
    {"yolov5s 3x3/2 128->256 @80", 128, 80, 256, 3, 2, 1},
    {"yolov5s 1x1 64->64 @160", 64, 160, 64, 1, 1, 1},
    {"yolov5s 1x1 64->32 @160", 64, 160, 32, 1, 1, 1},
    {"yolov5s 1x1 32->64 @160", 32, 160, 64, 1, 1, 1},
    {"yolov5s 1x1 256->64 @80", 256, 80, 64, 1, 1, 1},
    {"yolov5s 1x1 128->64 @80", 128, 80, 64, 1, 1, 1},
    {"yolov5s 1x1 128->128 @80", 128, 80, 128, 1, 1, 1},
    {"yolov5s 1x1 512->512 @20", 512, 20, 512, 1, 1, 1},
    {"yolov5s 1x1 1024->512 @20", 1024, 20, 512, 1, 1, 1},
    {"mobilenetv2 dw3x3 32 @112", 32, 112, 32, 3, 1, 32},
    {"mobilenetv2 1x1 16->96 @112", 16, 112, 96, 1, 1, 1},
    {"mobilenetv2 1x1 32->16 @112", 32, 112, 16, 1, 1, 1},
    {"mobilenetv2 1x1 96->24 @56", 96, 56, 24, 1, 1, 1},
    {"mobilenetv2 dw3x3/2 96 @112", 96, 112, 96, 3, 2, 96},
    {"mobilenetv2 dw3x3 144 @56", 144, 56, 144, 3, 1, 144},
    {"mobilenetv2 1x1 144->24 @56", 144, 56, 24, 1, 1, 1},
    {"mobilenetv2 1x1 24->144 @56", 24, 56, 144, 1, 1, 1},
    {"mobilenetv2 1x1 32->192 @28", 32, 28, 192, 1, 1, 1},
    {"mobilenetv2 dw3x3 576 @14", 576, 14, 576, 3, 1, 576},
    {"mobilenetv2 dw3x3/2 144 @56", 144, 56, 144, 3, 2, 144},
    {"mobilenetv2 dw3x3 192 @28", 192, 28, 192, 3, 1, 192},
    {"mobilenetv2 dw3x3 384 @14", 384, 14, 384, 3, 1, 384},
    {"mobilenetv2 dw3x3/2 576 @14", 576, 14, 576, 3, 2, 576},
    {"mobilenetv2 dw3x3 960 @7", 960, 7, 960, 3, 1, 960},
    {"mobilenetv2 1x1 384->64 @14", 384, 14, 64, 1, 1, 1},
    {"mobilenetv2 1x1 576->96 @14", 576, 14, 96, 1, 1, 1},
    {"mobilenetv2 1x1 960->160 @7", 960, 7, 160, 1, 1, 1},
    {"mobilenetv2 1x1 320->1280 @7", 320, 7, 1280, 1, 1, 1},
    {"mobilenetv2 1x1 160->960 @7", 160, 7, 960, 1, 1, 1},
    {"mobilenetv2 1x1 960->320 @7", 960, 7, 320, 1, 1, 1},
    {"mobilenetv2 1x1 64->384 @14", 64, 14, 384, 1, 1, 1},
    {"mobilenetv2 1x1 384->64 @14", 384, 14, 64, 1, 1, 1},
    {"mobilenetv2 1x1 96->576 @14", 96, 14, 576, 1, 1, 1},
    {"mobilenetv2 1x1 576->96 @14", 576, 14, 96, 1, 1, 1},
};

reference::Conv2DShape shape_of(const Layer& layer) {
  reference::Conv2DShape shape;
  shape.input_channels = layer.channels;
  shape.output_channels = layer.output_channels;
  shape.groups = layer.groups;
  reference::Window2D& w = shape.window;
  w.input_height = w.input_width = layer.size;
  w.kernel_height = w.kernel_width = layer.kernel;
  w.stride_height = w.stride_width = layer.stride;
  const int64_t pad = layer.pad >= 0 ? layer.pad : layer.kernel / 2;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = pad;
  w.output_height = w.output_width = (layer.size + 2 * pad - layer.kernel) / layer.stride + 1;
  return shape;
}

// Element counts of a layer's input, weights and output (batch 1).
struct LayerSizes {
  size_t input, weights, output;
};
LayerSizes sizes_of(const reference::Conv2DShape& shape) {
  const reference::Window2D& w = shape.window;
  return {static_cast<size_t>(shape.input_channels * w.input_height * w.input_width),
          static_cast<size_t>(shape.output_channels * (shape.input_channels / shape.groups) *
                              w.kernel_height * w.kernel_width),
          static_cast<size_t>(shape.output_channels * w.output_height * w.output_width)};
}

double operations(const reference::Conv2DShape& s) {
  return 2.0 * static_cast<double>(s.output_channels) * s.window.output_height *
         s.window.output_width * (s.input_channels / s.groups) * s.window.kernel_height *
         s.window.kernel_width;
}

// One configuration of a benchmark row: a callable that runs the layer once.
struct Config {
  std::string label;
  std::function<void()> run;
  int reps;
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;  // of the calling thread: meaningful for one thread only
};

// The interleaved configuration of one float32 convolution kernel on (x, w, bias, y), labelled
// with its algorithm; its scratch is reserved in `pool` first (reserve_scratch only grows).
Config float_convolution_config(const cpu::Conv2DFloat* kernel, const float* x, const float* w,
                                const float* bias, float* y, ThreadPool& pool, int reps) {
  pool.reserve_scratch(kernel->scratch_bytes());
  return {kernel->algorithm(), [=, &pool] { kernel->run(x, w, bias, y, pool); }, reps, {}, {}};
}

void run_interleaved(std::vector<Config>& configs) {
  for (Config& config : configs) config.run();  // warm-up (page faults, caches)
  int most = 0;
  for (const Config& config : configs) most = std::max(most, config.reps);
  for (int rep = 0; rep < most; ++rep) {
    for (Config& config : configs) {
      if (rep >= config.reps) continue;
      const double cpu_start = thread_cpu_seconds();
      const auto start = Clock::now();
      config.run();
      config.seconds.push_back(seconds_since(start));
      config.cpu_seconds.push_back(thread_cpu_seconds() - cpu_start);
    }
  }
}

// The 3x3 stride-1 layers of kLayers and a few more of resnet18 / yolov5s sizes.
std::vector<Layer> winograd_layers() {
  std::vector<Layer> layers;
  for (const Layer& layer : kLayers) {
    if (layer.kernel == 3 && layer.stride == 1 && layer.groups == 1) layers.push_back(layer);
  }
  layers.push_back({"resnet18 3x3 512->512 @7 (same as resnet50's)", 512, 7, 512, 3, 1, 1});
  layers.push_back({"yolov5s 3x3 64->64 @160 (C3 of 64)", 64, 160, 64, 3, 1, 1});
  layers.push_back({"yolov5s 3x3 128->128 @80 (C3 of 128)", 128, 80, 128, 3, 1, 1});
  layers.push_back({"yolov5s 3x3 512->512 @20", 512, 20, 512, 3, 1, 1});
  return layers;
}

#if defined(__x86_64__)
// What the avx2 or avx512 dispatcher chose for a float convolution before the Winograd
// convolution (kernels/cpu/dispatch.cc prepare_conv2d without it).
std::unique_ptr<cpu::Conv2DFloat> pre_winograd_choice(cpu::KernelVariant variant,
                                                      const reference::Conv2DShape& shape,
                                                      const reference::FusedActivation& activation,
                                                      const float* weights) {
  namespace optimized = cpu::optimized;
  const bool avx512 = variant == cpu::KernelVariant::kAvx512;
  const optimized::MicroKernels& table =
      avx512 ? optimized::avx512_micro_kernels() : optimized::avx2_micro_kernels();
  const char* name = cpu::kernel_variant_name(variant);
  std::unique_ptr<cpu::Conv2DFloat> kernel;
  if (avx512 ? optimized::lane_convolution_preferred(shape)
             : optimized::avx2_lane_convolution_preferred(shape)) {
    kernel = optimized::make_lane_conv2d(
        table, avx512 ? optimized::avx512_lane_float_tile : optimized::avx2_lane_float_tile,
        avx512 ? optimized::avx512_pack_lane_panel : optimized::avx2_pack_lane_panel, shape,
        activation, weights);
  }
  if (!kernel && (avx512 ? optimized::direct_convolution_preferred(shape)
                         : optimized::avx2_direct_convolution_preferred(shape))) {
    kernel = optimized::make_direct_conv2d(
        name, avx512 ? optimized::avx512_direct_float_tile : optimized::avx2_direct_float_tile,
        shape, activation, weights);
  }
  if (!kernel) kernel = optimized::make_gemm_conv2d(table, shape, activation, weights);
  return kernel;
}
#endif

void bench_winograd_against_default(const Options& options) {
#if defined(__x86_64__)
  namespace optimized = cpu::optimized;
  if (options.variant != cpu::KernelVariant::kAvx2 &&
      options.variant != cpu::KernelVariant::kAvx512) {
    std::printf("--winograd-vs-default: avx2 or avx512 only\n");
    return;
  }
  const optimized::MicroKernels& table = options.variant == cpu::KernelVariant::kAvx512
                                             ? optimized::avx512_micro_kernels()
                                             : optimized::avx2_micro_kernels();
  for (size_t threads : options.threads) {
    ThreadPool pool(threads);
    std::printf(
        "## Winograd against the previous choice, float32 (%s, %zu threads, wall time, median "
        "of %d)\n\n| layer | before | us | (min-max) | F(2x2) us | (min-max) | F(2)/before | "
        "F(4x4) us | (min-max) | F(4)/before | dispatcher |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        table.name, threads, options.reps);
    for (const Layer& layer : winograd_layers()) {
      if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
        continue;
      }
      const reference::Conv2DShape shape = shape_of(layer);
      const auto [input_size, weight_size, output_size] = sizes_of(shape);
      Floats x = random_floats(input_size, 3), w = random_floats(weight_size, 4);
      Floats bias = random_floats(static_cast<size_t>(shape.output_channels), 5);
      Floats y(output_size);
      reference::FusedActivation relu;
      relu.kind = reference::FusedActivation::Kind::kRelu;
      std::unique_ptr<cpu::Conv2DFloat> kernels[3] = {
          pre_winograd_choice(options.variant, shape, relu, w.data()),
          optimized::make_winograd_conv2d(table, shape, relu, w.data(), 2,
                                          optimized::avx2_winograd_float_transforms(2)),
          optimized::make_winograd_conv2d(table, shape, relu, w.data(), 4,
                                          optimized::avx2_winograd_float_transforms(4))};
      const std::string chosen =
          cpu::prepare_conv2d(shape, relu, w.data(), options.variant)->algorithm();
      std::vector<Config> configs;
      for (const auto& kernel : kernels) {
        configs.push_back(float_convolution_config(kernel.get(), x.data(), w.data(), bias.data(),
                                                   y.data(), pool, options.reps));
      }
      run_interleaved(configs);
      const double before_us = median(configs[0].seconds) * 1e6;
      std::printf("| %s | %s |", layer.name, kernels[0]->algorithm());
      for (size_t i = 0; i < 3; ++i) {
        const auto [low, high] =
            std::minmax_element(configs[i].seconds.begin(), configs[i].seconds.end());
        const double us = median(configs[i].seconds) * 1e6;
        std::printf(" %.0f | %.0f-%.0f |", us, *low * 1e6, *high * 1e6);
        if (i > 0) std::printf(" %.2f |", us / before_us);
      }
      std::printf(" %s |\n", chosen.c_str());
      std::fflush(stdout);
    }
    std::printf("\n");
  }
#else
  (void)options;
  std::printf("--winograd-vs-default: x86-64 only\n");
#endif
}

// The micro-kernel table of an x86-64 variant (portable for any other).
const cpu::optimized::MicroKernels& x86_micro_kernels(cpu::KernelVariant variant) {
  namespace optimized = cpu::optimized;
  if (variant == cpu::KernelVariant::kAvx512) return optimized::avx512_micro_kernels();
  if (variant == cpu::KernelVariant::kAvx2) return optimized::avx2_micro_kernels();
  return optimized::portable_micro_kernels();
}

void bench_winograd_accuracy(const Options& options) {
  namespace optimized = cpu::optimized;
  const optimized::MicroKernels& table = x86_micro_kernels(options.variant);
  std::printf(
      "## Winograd accuracy (%s): worst |error| / (1e-5 x max(1, max|expected|)) over %d random "
      "cases per layer (reference::conv2d, no activation, with bias; <= 1 passes the tests)\n\n"
      "| layer | F(2x2,3x3) | F(4x4,3x3) | F(6x6,3x3) |\n|---|---:|---:|---:|\n",
      table.name, options.reps);
  ThreadPool pool(1);
  for (const Layer& layer : winograd_layers()) {
    if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
      continue;
    }
    const reference::Conv2DShape shape = shape_of(layer);
    const auto [input_size, weight_size, output_size] = sizes_of(shape);
    double worst[3] = {0.0, 0.0, 0.0};
    for (int rep = 0; rep < options.reps; ++rep) {
      const uint32_t seed = static_cast<uint32_t>(100 + 3 * rep);
      Floats x = random_floats(input_size, seed), w = random_floats(weight_size, seed + 1);
      Floats bias = random_floats(static_cast<size_t>(shape.output_channels), seed + 2);
      Floats expected(output_size), y(output_size);
      const reference::FusedActivation none;
      reference::conv2d(shape, none, x.data(), w.data(), bias.data(), expected.data());
      double scale = 1.0;
      for (float value : expected) scale = std::max(scale, std::fabs(double{value}));
      const size_t tiles[3] = {2, 4, 6};
      for (size_t t = 0; t < 3; ++t) {
        const optimized::WinogradFloatTransforms* transforms = nullptr;
#if defined(__x86_64__)
        if (options.variant == cpu::KernelVariant::kAvx2 ||
            options.variant == cpu::KernelVariant::kAvx512) {
          transforms = optimized::avx2_winograd_float_transforms(tiles[t]);
        }
#endif
        auto kernel =
            optimized::make_winograd_conv2d(table, shape, none, w.data(), tiles[t], transforms);
        pool.reserve_scratch(kernel->scratch_bytes());
        kernel->run(x.data(), w.data(), bias.data(), y.data(), pool);
        for (size_t i = 0; i < output_size; ++i) {
          const double error = std::fabs(double{y[i]} - double{expected[i]}) / (1e-5 * scale);
          worst[t] = std::max(worst[t], error);
        }
      }
    }
    std::printf("| %s | %.3f | %.3f | %.3f |\n", layer.name, worst[0], worst[1], worst[2]);
    std::fflush(stdout);
  }
  std::printf("\n");
}

// `reference` and `variant` run interleaved, options.reps times each: their median thread CPU
// times in seconds (one thread).
std::pair<double, double> reference_and_variant_seconds(const Options& options,
                                                        std::function<void()> reference,
                                                        std::function<void()> variant) {
  std::vector<Config> configs;
  configs.push_back({"reference", std::move(reference), options.reps, {}, {}});
  configs.push_back({"variant", std::move(variant), options.reps, {}, {}});
  run_interleaved(configs);
  return {median(configs[0].cpu_seconds), median(configs[1].cpu_seconds)};
}

// The markdown table of the one-thread benchmarks that time a kernel against its reference
// (softmax, bilinear resize, ConvTranspose): the heading before the first row, so a benchmark
// the filter leaves out prints nothing, and a blank line after the last.
class SpeedupTable {
 public:
  // `unit_per_second` is 1e6 for "us", 1e3 for "ms".
  SpeedupTable(const char* title, const char* first_column, const char* unit,
               double unit_per_second, const Options& options)
      : title_(title),
        first_column_(first_column),
        unit_(unit),
        unit_per_second_(unit_per_second),
        variant_(cpu::kernel_variant_name(options.variant)) {}
  ~SpeedupTable() {
    if (printed_) std::printf("\n");
  }
  SpeedupTable(const SpeedupTable&) = delete;
  SpeedupTable& operator=(const SpeedupTable&) = delete;

  void row(const char* name, double reference_seconds, double variant_seconds) {
    if (!printed_) {
      std::printf(
          "## %s, one thread (%s per run, thread CPU time, interleaved)\n\n| %s | reference | "
          "%s | speed-up |\n|---|---:|---:|---:|\n",
          title_, unit_, first_column_, variant_);
      printed_ = true;
    }
    std::printf("| %s | %.2f | %.3f | %.1fx |\n", name, reference_seconds * unit_per_second_,
                variant_seconds * unit_per_second_, reference_seconds / variant_seconds);
  }

 private:
  const char* title_;
  const char* first_column_;
  const char* unit_;
  double unit_per_second_;
  const char* variant_;
  bool printed_ = false;
};

struct Pools {
  std::vector<std::unique_ptr<ThreadPool>> pools;
};

void bench_convolutions(const Options& options, bool int8) {
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (size_t threads : options.threads) pools.push_back(std::make_unique<ThreadPool>(threads));
  ThreadPool serial(1);
  const double peak = int8 ? options.peak_int8 : options.peak_fp32;
  const char* unit = int8 ? "GOPS" : "GFLOPS";
  // The int8 kernels run vpmaddwd: when the machine has a faster int8 instruction set (VNNI),
  // the share of vpmaddwd's own peak is printed too, the figure the kernels can reach as written.
  // (Not for avx512, whose int8 GEMMs run vpdpbusd: the int8 peak is their own.)
  const bool own_peak_column = int8 && options.variant != cpu::KernelVariant::kAvx512 &&
                               options.peak_int16_pairs > 0.0 &&
                               options.peak_int16_pairs < options.peak_int8;
  std::printf("## Convolution layers, %s (%s)\n\n", int8 ? "int8" : "float32",
              cpu::kernel_variant_name(options.variant));
  std::printf("| layer | algorithm | MOP |%s", options.with_reference ? " reference 1t |" : "");
  for (size_t threads : options.threads)
    std::printf(" %zut %s | %zut of peak |", threads, unit, threads);
  std::printf(" 1t %s by CPU time | of peak |%s ms (%zut) |\n|---|---|---:|", unit,
              own_peak_column ? " of vpmaddwd peak |" : "", options.threads.back());
  if (options.with_reference) std::printf("---:|");
  for (size_t i = 0; i < options.threads.size(); ++i) std::printf("---:|---:|");
  std::printf("---:|---:|%s---:|\n", own_peak_column ? "---:|" : "");

  for (const Layer& layer : kLayers) {
    if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
      continue;
    }
    const reference::Conv2DShape shape = shape_of(layer);
    const auto [input_size, weight_size, output_size] = sizes_of(shape);
    const double ops = operations(shape);
    std::vector<Config> configs;
    std::string algorithm;
    // Operands live as long as the configs below.
    Floats x = random_floats(input_size, 3), w = random_floats(weight_size, 4);
    Floats bias = random_floats(static_cast<size_t>(shape.output_channels), 5);
    Floats y(output_size);
    Int8Operands operands8 =
        int8_operands(input_size, weight_size, output_size, shape.output_channels);
    Codes &x8 = operands8.x, &w8 = operands8.w, &y8 = operands8.y;
    std::vector<int32_t>& bias32 = operands8.bias;
    const reference::Int8Requantization& q = operands8.q;
    reference::FusedActivation relu;
    relu.kind = reference::FusedActivation::Kind::kRelu;

    std::vector<std::shared_ptr<cpu::PreparedKernel>> keep;
    auto add = [&](cpu::KernelVariant variant, ThreadPool& pool, int reps) {
      std::string label = std::string(cpu::kernel_variant_name(variant)) + " " +
                          std::to_string(pool.thread_count()) + "t";
      if (int8) {
        std::shared_ptr<cpu::Conv2DInt8> kernel =
            cpu::prepare_conv2d_int8(shape, q, w8.data(), variant);
        pool.reserve_scratch(kernel->scratch_bytes());
        if (variant != cpu::KernelVariant::kReference) algorithm = kernel->algorithm();
        keep.push_back(kernel);
        configs.push_back({label,
                           [&, kernel, pool_pointer = &pool] {
                             kernel->run(x8.data(), w8.data(), bias32.data(), y8.data(),
                                         *pool_pointer);
                           },
                           reps,
                           {},
                           {}});
      } else {
        std::shared_ptr<cpu::Conv2DFloat> kernel =
            cpu::prepare_conv2d(shape, relu, w.data(), variant);
        pool.reserve_scratch(kernel->scratch_bytes());
        if (variant != cpu::KernelVariant::kReference) algorithm = kernel->algorithm();
        keep.push_back(kernel);
        configs.push_back({label,
                           [&, kernel, pool_pointer = &pool] {
                             kernel->run(x.data(), w.data(), bias.data(), y.data(), *pool_pointer);
                           },
                           reps,
                           {},
                           {}});
      }
    };
    if (options.with_reference) {
      add(cpu::KernelVariant::kReference, serial, std::max(1, std::min(3, options.reps)));
    }
    for (auto& pool : pools) add(options.variant, *pool, options.reps);
    run_interleaved(configs);

    std::printf("| %s | %s | %.0f |", layer.name, algorithm.c_str(), ops * 1e-6);
    size_t index = 0;
    if (options.with_reference) {
      std::printf(" %.2f |", ops / median(configs[index++].seconds) * 1e-9);
    }
    double last_ms = 0.0;
    double cpu_rate = 0.0;
    for (size_t threads : options.threads) {
      const double seconds = median(configs[index].seconds);
      const double rate = ops / seconds * 1e-9;
      if (threads == 1) cpu_rate = ops / median(configs[index].cpu_seconds) * 1e-9;
      ++index;
      std::printf(" %.1f | %.0f%% |", rate, 100.0 * rate / (peak * static_cast<double>(threads)));
      last_ms = seconds * 1e3;
    }
    std::printf(" %.1f | %.0f%% |", cpu_rate, 100.0 * cpu_rate / peak);
    if (own_peak_column) std::printf(" %.0f%% |", 100.0 * cpu_rate / options.peak_int16_pairs);
    std::printf(" %.3f |\n", last_ms);
    std::fflush(stdout);
  }
  std::printf("\n");
}

// The float32 layers as the variant's im2col GEMM, as its direct convolution and as its
// convolution with output channels in lanes (x86-64: avx2 or avx512 tiles), interleaved on one
// thread: median thread CPU time of options.reps runs each, their range, and the dispatcher's
// choice. Layers the direct convolution does not accept (depthwise) are left out.
void bench_direct_against_gemm(const Options& options) {
#if defined(__x86_64__)
  namespace optimized = cpu::optimized;
  const optimized::MicroKernels* table = nullptr;
  optimized::DirectFloatTileFunction tile = nullptr;
  optimized::LaneFloatTileFunction lane_tile = nullptr;
  optimized::LanePanelPackingFunction lane_pack = nullptr;
  if (options.variant == cpu::KernelVariant::kAvx2) {
    table = &optimized::avx2_micro_kernels();
    tile = optimized::avx2_direct_float_tile;
    lane_tile = optimized::avx2_lane_float_tile;
    lane_pack = optimized::avx2_pack_lane_panel;
  }
  if (options.variant == cpu::KernelVariant::kAvx512) {
    table = &optimized::avx512_micro_kernels();
    tile = optimized::avx512_direct_float_tile;
    lane_tile = optimized::avx512_lane_float_tile;
    lane_pack = optimized::avx512_pack_lane_panel;
  }
  if (!table) {
    std::printf("--direct-vs-gemm: variant %s has no direct tile\n",
                cpu::kernel_variant_name(options.variant));
    return;
  }
  ThreadPool serial(1);
  std::printf(
      "## Direct against im2col GEMM, float32 (%s, 1 thread, thread CPU time, median of %d)\n\n"
      "| layer | GEMM us | (min-max) | direct us | (min-max) | direct/GEMM | lanes us | (min-max) "
      "| lanes/GEMM | dispatcher |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
      cpu::kernel_variant_name(options.variant), options.reps);
  for (const Layer& layer : kLayers) {
    if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
      continue;
    }
    const reference::Conv2DShape shape = shape_of(layer);
    const auto [input_size, weight_size, output_size] = sizes_of(shape);
    Floats x = random_floats(input_size, 3), w = random_floats(weight_size, 4);
    Floats bias = random_floats(static_cast<size_t>(shape.output_channels), 5);
    Floats y(output_size);
    reference::FusedActivation relu;
    relu.kind = reference::FusedActivation::Kind::kRelu;
    std::unique_ptr<cpu::Conv2DFloat> direct = optimized::make_direct_conv2d(
        cpu::kernel_variant_name(options.variant), tile, shape, relu, w.data());
    if (!direct) continue;
    std::unique_ptr<cpu::Conv2DFloat> gemm =
        optimized::make_gemm_conv2d(*table, shape, relu, w.data());
    std::unique_ptr<cpu::Conv2DFloat> lanes =
        optimized::make_lane_conv2d(*table, lane_tile, lane_pack, shape, relu, w.data());
    const std::string chosen =
        cpu::prepare_conv2d(shape, relu, w.data(), options.variant)->algorithm();
    serial.reserve_scratch(std::max({direct->scratch_bytes(), gemm->scratch_bytes(),
                                     lanes ? lanes->scratch_bytes() : size_t{0}}));
    std::vector<Config> configs;
    configs.push_back({"gemm",
                       [&] { gemm->run(x.data(), w.data(), bias.data(), y.data(), serial); },
                       options.reps,
                       {},
                       {}});
    configs.push_back({"direct",
                       [&] { direct->run(x.data(), w.data(), bias.data(), y.data(), serial); },
                       options.reps,
                       {},
                       {}});
    if (lanes) {
      configs.push_back({"lanes",
                         [&] { lanes->run(x.data(), w.data(), bias.data(), y.data(), serial); },
                         options.reps,
                         {},
                         {}});
    }
    run_interleaved(configs);
    const auto [gemm_low, gemm_high] =
        std::minmax_element(configs[0].cpu_seconds.begin(), configs[0].cpu_seconds.end());
    const auto [direct_low, direct_high] =
        std::minmax_element(configs[1].cpu_seconds.begin(), configs[1].cpu_seconds.end());
    const double gemm_us = median(configs[0].cpu_seconds) * 1e6;
    const double direct_us = median(configs[1].cpu_seconds) * 1e6;
    std::printf("| %s | %.0f | %.0f-%.0f | %.0f | %.0f-%.0f | %.2f |", layer.name, gemm_us,
                *gemm_low * 1e6, *gemm_high * 1e6, direct_us, *direct_low * 1e6, *direct_high * 1e6,
                direct_us / gemm_us);
    if (lanes) {
      const auto [lanes_low, lanes_high] =
          std::minmax_element(configs[2].cpu_seconds.begin(), configs[2].cpu_seconds.end());
      const double lanes_us = median(configs[2].cpu_seconds) * 1e6;
      std::printf(" %.0f | %.0f-%.0f | %.2f |", lanes_us, *lanes_low * 1e6, *lanes_high * 1e6,
                  lanes_us / gemm_us);
    } else {
      std::printf(" - | - | - |");
    }
    std::printf(" %s |\n", chosen.c_str());
    std::fflush(stdout);
  }
  std::printf("\n");
#else
  (void)options;
  std::printf("--direct-vs-gemm: x86-64 only\n");
#endif
}

// The int8 layers as the variant's im2col GEMM and as the alternatives that apply to them: output
// channels in lanes (the same int16-pair tile with pixels and channels swapped,
// int8_lane_convolution.cc), Winograd F(2x2, 3x3) (int8_winograd_convolution.cc) and, on avx2,
// the VPMADDUBSW tiles with pair corrections (avx2_pair_kernels, every layer whatever its
// share of corrections), interleaved on each thread count: median wall time of options.reps
// runs each, and the dispatcher's choice.
void bench_int8_against_gemm(const Options& options) {
  namespace optimized = cpu::optimized;
  const optimized::MicroKernels& table = x86_micro_kernels(options.variant);
  for (size_t threads : options.threads) {
    ThreadPool pool(threads);
    std::printf(
        "## int8 alternatives against im2col GEMM (%s, %zu threads, wall time, median of %d)\n\n"
        "| layer | GEMM us | (min) | lanes us | (min) | lanes/GEMM | winograd us | (min) | "
        "winograd/GEMM | pairs us | (min) | pairs/GEMM | pairs before us | (min) | "
        "/GEMM | dispatcher |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        table.name, threads, options.reps);
    for (const Layer& layer : kLayers) {
      if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
        continue;
      }
      const reference::Conv2DShape shape = shape_of(layer);
      const auto [input_size, weight_size, output_size] = sizes_of(shape);
      Int8Operands operands =
          int8_operands(input_size, weight_size, output_size, shape.output_channels);
      Codes &x = operands.x, &w = operands.w, &y = operands.y;
      std::vector<int32_t>& bias = operands.bias;
      const reference::Int8Requantization& q = operands.q;
      std::unique_ptr<cpu::Conv2DInt8> alternatives[] = {
          optimized::make_int8_lane_conv2d(table, shape, q, w.data()),
          optimized::make_int8_winograd_conv2d(table, shape, q, w.data()), nullptr, nullptr};
      if (options.variant == cpu::KernelVariant::kAvx2 && shape.groups == 1) {
        // The kernel keeps a reference to its table.
        static const optimized::DotProductKernels every_layer = [] {
          optimized::DotProductKernels pairs = optimized::avx2_pair_kernels();
          pairs.largest_correction_share = 1.0;
          return pairs;
        }();
        static const optimized::DotProductKernels every_layer_before = [] {
          optimized::DotProductKernels pairs = optimized::avx2_pair_kernels_before_small_planes();
          pairs.largest_correction_share = 1.0;
          return pairs;
        }();
        alternatives[2] =
            optimized::make_im2col_dot_product_conv2d_int8(every_layer, shape, q, w.data());
        // The pair tiles as they were before the small-plane changes (no column tile, 256-deep
        // chunks), on the planes those changed: 7x7 and 14x14 outputs.
        if (static_cast<size_t>(shape.window.output_height * shape.window.output_width) <=
            optimized::kSmallPlanePixels) {
          alternatives[3] = optimized::make_im2col_dot_product_conv2d_int8(every_layer_before,
                                                                           shape, q, w.data());
        }
      }
      // The lanes apply to almost any layer: list them only on small planes, where they may win.
      if (shape.window.output_height * shape.window.output_width > 14 * 14) alternatives[0].reset();
      if (!alternatives[0] && !alternatives[1] && !alternatives[2]) continue;
      std::unique_ptr<cpu::Conv2DInt8> gemm =
          optimized::make_gemm_conv2d_int8(table, shape, q, w.data());
      const std::string chosen =
          cpu::prepare_conv2d_int8(shape, q, w.data(), options.variant)->algorithm();
      size_t scratch = gemm->scratch_bytes();
      std::vector<Config> configs;
      configs.push_back({"gemm",
                         [&] { gemm->run(x.data(), w.data(), bias.data(), y.data(), pool); },
                         options.reps,
                         {},
                         {}});
      for (const auto& alternative : alternatives) {
        if (!alternative) continue;
        scratch = std::max(scratch, alternative->scratch_bytes());
        cpu::Conv2DInt8* kernel = alternative.get();
        configs.push_back(
            {kernel->algorithm(),
             [&, kernel] { kernel->run(x.data(), w.data(), bias.data(), y.data(), pool); },
             options.reps,
             {},
             {}});
      }
      pool.reserve_scratch(scratch);
      run_interleaved(configs);
      const double gemm_us = median(configs[0].seconds) * 1e6;
      std::printf("| %s | %.0f | %.0f |", layer.name, gemm_us,
                  *std::min_element(configs[0].seconds.begin(), configs[0].seconds.end()) * 1e6);
      size_t next = 1;
      for (const auto& alternative : alternatives) {
        if (!alternative) {
          std::printf(" - | - | - |");
          continue;
        }
        const Config& config = configs[next++];
        const double us = median(config.seconds) * 1e6;
        std::printf(" %.0f | %.0f | %.2f |", us,
                    *std::min_element(config.seconds.begin(), config.seconds.end()) * 1e6,
                    us / gemm_us);
      }
      std::printf(" %s |\n", chosen.c_str());
      std::fflush(stdout);
    }
    std::printf("\n");
  }
}

// The int8 kernel the dispatcher took for a 1x1 strided layer before the subsampling wrapper.
std::unique_ptr<cpu::Conv2DInt8> int8_before_subsample(const cpu::optimized::MicroKernels& table,
                                                       const reference::Conv2DShape& shape,
                                                       const reference::Int8Requantization& q,
                                                       const int8_t* w) {
  namespace optimized = cpu::optimized;
  if (optimized::int8_lane_convolution_preferred(shape)) {
    if (auto kernel = optimized::make_int8_lane_conv2d(table, shape, q, w)) return kernel;
  }
  if (optimized::pair_convolution_preferred(shape)) {
    if (auto kernel =
            optimized::make_dot_product_conv2d_int8(optimized::avx2_pair_kernels(), shape, q, w)) {
      return kernel;
    }
  }
  return optimized::make_gemm_conv2d_int8(table, shape, q, w);
}

// The float32 kernel the avx2 dispatcher took for a 1x1 strided layer before the wrapper.
std::unique_ptr<cpu::Conv2DFloat> float_before_subsample(const cpu::optimized::MicroKernels& table,
                                                         const reference::Conv2DShape& shape,
                                                         const reference::FusedActivation& act,
                                                         const float* w) {
  namespace optimized = cpu::optimized;
  if (optimized::avx2_lane_convolution_preferred(shape)) {
    if (auto kernel = optimized::make_lane_conv2d(table, optimized::avx2_lane_float_tile,
                                                  optimized::avx2_pack_lane_panel, shape, act, w)) {
      return kernel;
    }
  }
  if (optimized::avx2_direct_convolution_preferred(shape)) {
    if (auto kernel = optimized::make_direct_conv2d(table.name, optimized::avx2_direct_float_tile,
                                                    shape, act, w)) {
      return kernel;
    }
  }
  return optimized::make_gemm_conv2d(table, shape, act, w);
}

// --column-tiles-vs-default (see the top of the file).
void bench_column_tiles_against_default(const Options& options) {
#if defined(__x86_64__)
  namespace optimized = cpu::optimized;
  if (options.variant != cpu::KernelVariant::kAvx2) {
    std::printf("--column-tiles-vs-default: avx2 only\n");
    return;
  }
  const optimized::MicroKernels& table = x86_micro_kernels(options.variant);
  optimized::MicroKernels without = table;
  without.float_column_tiles = nullptr;
  for (size_t threads : options.threads) {
    ThreadPool pool(threads);
    std::printf(
        "## float32 1x1 layers with a one-column last panel: without / with the column tiles "
        "(%s, %zu threads, wall time, median of %d)\n\n"
        "| layer | without us | (min) | with us | (min) | with/without |\n"
        "|---|---:|---:|---:|---:|---:|\n",
        table.name, threads, options.reps);
    for (const Layer& layer : kLayers) {
      if (layer.kernel != 1 || layer.stride != 1 || layer.groups != 1) continue;
      if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
        continue;
      }
      const reference::Conv2DShape shape = shape_of(layer);
      const auto [input_size, weight_size, output_size] = sizes_of(shape);
      if ((output_size / static_cast<size_t>(shape.output_channels)) % table.float_columns != 1) {
        continue;
      }
      Floats x = random_floats(input_size, 8), w = random_floats(weight_size, 9);
      Floats bias(static_cast<size_t>(shape.output_channels), 0.5f), y(output_size);
      reference::FusedActivation relu;
      relu.kind = reference::FusedActivation::Kind::kRelu;
      std::unique_ptr<cpu::Conv2DFloat> kernels[] = {
          optimized::make_gemm_conv2d(without, shape, relu, w.data()),
          optimized::make_gemm_conv2d(table, shape, relu, w.data())};
      std::vector<Config> configs;
      for (const auto& kernel : kernels) {
        configs.push_back(float_convolution_config(kernel.get(), x.data(), w.data(), bias.data(),
                                                   y.data(), pool, options.reps));
      }
      run_interleaved(configs);
      const double without_us = median(configs[0].seconds) * 1e6;
      const double with_us = median(configs[1].seconds) * 1e6;
      std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.2f |\n", layer.name, without_us,
                  *std::min_element(configs[0].seconds.begin(), configs[0].seconds.end()) * 1e6,
                  with_us,
                  *std::min_element(configs[1].seconds.begin(), configs[1].seconds.end()) * 1e6,
                  with_us / without_us);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
#else
  (void)options;
  std::printf("--column-tiles-vs-default: x86-64 only\n");
#endif
}

void bench_subsample_against_default(const Options& options) {
  namespace optimized = cpu::optimized;
  if (options.variant != cpu::KernelVariant::kAvx2) {  // "before" is the avx2 dispatch's
    std::printf("--subsample-vs-default: avx2 only\n");
    return;
  }
  const optimized::MicroKernels& table = x86_micro_kernels(options.variant);
  for (size_t threads : options.threads) {
    ThreadPool pool(threads);
    std::printf(
        "## 1x1 strided layers: before / subsampled (%s, %zu threads, wall time, median of %d)\n\n"
        "| layer | type | before us | (min) | subsampled us | (min) | subsampled/before | "
        "before | dispatcher |\n|---|---|---:|---:|---:|---:|---:|---|---|\n",
        table.name, threads, options.reps);
    for (const Layer& layer : kLayers) {
      if (layer.kernel != 1 || layer.stride == 1) continue;
      if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
        continue;
      }
      const reference::Conv2DShape shape = shape_of(layer);
      if (!optimized::subsampled_pointwise_applies(shape)) continue;
      const reference::Conv2DShape inner = optimized::subsampled_pointwise_shape(shape);
      const auto [input_size, weight_size, output_size] = sizes_of(shape);
      Int8Operands operands =
          int8_operands(input_size, weight_size, output_size, shape.output_channels);
      Codes &x = operands.x, &w = operands.w, &y = operands.y;
      std::vector<int32_t>& bias = operands.bias;
      const reference::Int8Requantization& q = operands.q;
      Floats xf = random_floats(input_size, 8), wf = random_floats(weight_size, 9);
      Floats bf(static_cast<size_t>(shape.output_channels), 0.5f), yf(output_size);
      reference::FusedActivation relu;
      relu.kind = reference::FusedActivation::Kind::kRelu;
      std::unique_ptr<cpu::Conv2DInt8> int8_kernels[] = {
          int8_before_subsample(table, shape, q, w.data()),
          optimized::make_subsampled_pointwise_conv2d_int8(
              shape, cpu::prepare_conv2d_int8(inner, q, w.data(), options.variant))};
      std::unique_ptr<cpu::Conv2DFloat> float_kernels[] = {
          float_before_subsample(table, shape, relu, wf.data()),
          optimized::make_subsampled_pointwise_conv2d(
              shape, cpu::prepare_conv2d(inner, relu, wf.data(), options.variant))};
      const std::string int8_chosen =
          cpu::prepare_conv2d_int8(shape, q, w.data(), options.variant)->algorithm();
      size_t scratch = 0;
      std::vector<Config> configs;
      for (const auto& kernel : int8_kernels) {
        scratch = std::max(scratch, kernel->scratch_bytes());
        cpu::Conv2DInt8* k = kernel.get();
        configs.push_back({k->algorithm(),
                           [&, k] { k->run(x.data(), w.data(), bias.data(), y.data(), pool); },
                           options.reps,
                           {},
                           {}});
      }
      for (const auto& kernel : float_kernels) {
        configs.push_back(float_convolution_config(kernel.get(), xf.data(), wf.data(), bf.data(),
                                                   yf.data(), pool, options.reps));
      }
      pool.reserve_scratch(scratch);
      run_interleaved(configs);
      auto row = [&](const char* type, const Config& before, const Config& after,
                     const std::string& chosen) {
        const double before_us = median(before.seconds) * 1e6;
        const double after_us = median(after.seconds) * 1e6;
        std::printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.2f | %s | %s |\n", layer.name, type,
                    before_us,
                    *std::min_element(before.seconds.begin(), before.seconds.end()) * 1e6, after_us,
                    *std::min_element(after.seconds.begin(), after.seconds.end()) * 1e6,
                    after_us / before_us, before.label.c_str(), chosen.c_str());
      };
      row("int8", configs[0], configs[1], int8_chosen);
      row("f32", configs[2], configs[3],
          cpu::prepare_conv2d(shape, relu, wf.data(), options.variant)->algorithm());
      std::fflush(stdout);
    }
    std::printf("\n");
  }
}

void bench_gemms(const Options& options) {
  struct GemmShape {
    const char* name;
    int64_t m, n, k;
    bool transpose_b;
  };
  const GemmShape shapes[] = {
      {"resnet50 fc 1x2048 x 2048x1000 (transB)", 1, 1000, 2048, true},
      {"square 256", 256, 256, 256, false},
      {"square 512", 512, 512, 512, false},
      {"tall 3136x64 x 64x256", 3136, 256, 64, false},
  };
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (size_t threads : options.threads) pools.push_back(std::make_unique<ThreadPool>(threads));
  std::printf("## Gemm, float32 (%s), constant B\n\n| shape |",
              cpu::kernel_variant_name(options.variant));
  for (size_t threads : options.threads)
    std::printf(" %zut GFLOPS | %zut of peak |", threads, threads);
  std::printf("\n|---|");
  for (size_t i = 0; i < options.threads.size(); ++i) std::printf("---:|---:|");
  std::printf("\n");
  for (const GemmShape& s : shapes) {
    if (!options.filter.empty() && std::strstr(s.name, options.filter.c_str()) == nullptr) continue;
    reference::GemmParams params;
    params.m = s.m;
    params.n = s.n;
    params.k = s.k;
    params.transpose_b = s.transpose_b;
    params.c_column_stride = 1;
    Floats a = random_floats(static_cast<size_t>(s.m * s.k), 1);
    Floats b = random_floats(static_cast<size_t>(s.k * s.n), 2);
    Floats c = random_floats(static_cast<size_t>(s.n), 3);
    Floats y(static_cast<size_t>(s.m * s.n));
    std::shared_ptr<cpu::GemmFloat> kernel =
        cpu::prepare_gemm(params, reference::FusedActivation{}, b.data(), options.variant);
    std::vector<Config> configs;
    for (auto& pool : pools) {
      pool->reserve_scratch(kernel->scratch_bytes());
      ThreadPool* pool_pointer = pool.get();
      configs.push_back({"",
                         [&, pool_pointer] {
                           kernel->run(a.data(), b.data(), c.data(), y.data(), *pool_pointer);
                         },
                         options.reps,
                         {},
                         {}});
    }
    run_interleaved(configs);
    const double ops = 2.0 * s.m * s.n * s.k;
    std::printf("| %s |", s.name);
    for (size_t i = 0; i < options.threads.size(); ++i) {
      const double rate = ops / median(configs[i].seconds) * 1e-9;
      std::printf(" %.1f | %.0f%% |", rate,
                  100.0 * rate / (options.peak_fp32 * static_cast<double>(options.threads[i])));
    }
    std::printf("\n");
  }
  std::printf("\n");
}

// The float activations a Conv's fused SiLU (YOLOv5s) or a Sigmoid runs as a pass over its
// output: one thread, 64K elements (in L2: the arithmetic, not memory), nanoseconds per element.
void bench_activations(const Options& options) {
  struct ActivationRow {
    const char* name;
    reference::UnaryOperation operation;
  };
  const ActivationRow rows[] = {{"activation silu 64K", reference::UnaryOperation::kSwish},
                                {"activation sigmoid 64K", reference::UnaryOperation::kSigmoid}};
  constexpr int64_t kCount = 64 * 1024;
  ThreadPool serial(1);
  std::printf(
      "## Activations, float32 (%s), one thread\n\n| op | ns/element (wall) | ns/element "
      "(thread CPU time) |\n|---|---:|---:|\n",
      cpu::kernel_variant_name(options.variant));
  Floats x = random_floats(static_cast<size_t>(kCount), 8);
  Floats y(x.size());
  for (const ActivationRow& row : rows) {
    if (!options.filter.empty() && std::strstr(row.name, options.filter.c_str()) == nullptr) {
      continue;
    }
    reference::UnaryParams params;
    params.operation = row.operation;
    params.alpha = 1.0f;
    std::shared_ptr<cpu::UnaryFloat> kernel = cpu::prepare_unary(params, kCount, options.variant);
    if (!kernel) continue;
    std::vector<Config> configs;
    configs.push_back(
        {"", [&] { kernel->run(x.data(), y.data(), 0.0f, 0.0f, serial); }, options.reps, {}, {}});
    run_interleaved(configs);
    std::printf("| %s | %.3f | %.3f |\n", row.name, median(configs[0].seconds) * 1e9 / kCount,
                median(configs[0].cpu_seconds) * 1e9 / kCount);
  }
  std::printf("\n");
}

// An int8 activation (the Relu after resnet's residual Adds) as its 256-entry table: the
// variant's lookup_int8_row against the portable scalar byte loop, interleaved, one thread,
// 256K codes (in L2), nanoseconds per byte by thread CPU time.
void bench_lookup_int8(const Options& options) {
  const char* name = "lookup int8 256K";
  if (!options.filter.empty() && std::strstr(name, options.filter.c_str()) == nullptr) return;
  constexpr int64_t kCount = 256 * 1024;
  ThreadPool serial(1);
  Codes table(256);
  for (int i = 0; i < 256; ++i)
    table[static_cast<size_t>(i)] = static_cast<int8_t>(i < 128 ? 0 : i - 128);
  Codes x(static_cast<size_t>(kCount));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 2654435761u) >> 24);
  Codes y(x.size());
  std::shared_ptr<cpu::LookupInt8> scalar =
      cpu::prepare_lookup_int8(table.data(), kCount, cpu::KernelVariant::kPortable);
  std::shared_ptr<cpu::LookupInt8> variant =
      cpu::prepare_lookup_int8(table.data(), kCount, options.variant);
  if (!scalar || !variant) return;
  std::vector<Config> configs;
  configs.push_back(
      {"portable", [&] { scalar->run(x.data(), y.data(), serial); }, options.reps, {}, {}});
  configs.push_back({cpu::kernel_variant_name(options.variant),
                     [&] { variant->run(x.data(), y.data(), serial); },
                     options.reps,
                     {},
                     {}});
  run_interleaved(configs);
  const double scalar_ns = median(configs[0].cpu_seconds) * 1e9 / kCount;
  const double variant_ns = median(configs[1].cpu_seconds) * 1e9 / kCount;
  std::printf(
      "## int8 table lookup, one thread (ns/byte, thread CPU time, interleaved)\n\n| op | "
      "portable | %s | ratio |\n|---|---:|---:|---:|\n| %s | %.4f | %.4f | %.1fx |\n\n",
      cpu::kernel_variant_name(options.variant), name, scalar_ns, variant_ns,
      scalar_ns / variant_ns);
}

// The int8 Add row (resnet50's residual Adds: 5.5M codes per inference), one thread, 64K codes
// (in L2): the portable scalar row against the variant's, interleaved, nanoseconds per output by
// thread CPU time.
void bench_binary_int8(const Options& options) {
  const char* name = "add int8 64K";
  if (!options.filter.empty() && std::strstr(name, options.filter.c_str()) == nullptr) return;
  constexpr int64_t kCount = 64 * 1024;
  Codes a(static_cast<size_t>(kCount)), b(a.size()), out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<int8_t>((i * 2654435761u) >> 24);
    b[i] = static_cast<int8_t>((i * 40503u + 17) >> 8);
  }
  const cpu::BinaryInt8Quantization quantization{0.0421f, -3, 0.0377f, 5, 0.0613f, -7, {}};
  ThreadPool serial(1);
  std::shared_ptr<cpu::BinaryInt8> scalar =
      cpu::prepare_binary_int8(reference::BinaryOperation::kAdd, {kCount}, {kCount}, quantization,
                               cpu::KernelVariant::kPortable);
  std::shared_ptr<cpu::BinaryInt8> variant = cpu::prepare_binary_int8(
      reference::BinaryOperation::kAdd, {kCount}, {kCount}, quantization, options.variant);
  if (!scalar || !variant) return;
  std::vector<Config> configs;
  configs.push_back({"portable",
                     [&] { scalar->run(a.data(), b.data(), out.data(), serial); },
                     options.reps,
                     {},
                     {}});
  configs.push_back({cpu::kernel_variant_name(options.variant),
                     [&] { variant->run(a.data(), b.data(), out.data(), serial); },
                     options.reps,
                     {},
                     {}});
  run_interleaved(configs);
  std::printf(
      "## int8 Add, one thread (ns/output, thread CPU time, interleaved)\n\n| op | portable | %s "
      "|\n|---|---:|---:|\n| %s | %.4f | %.4f |\n\n",
      cpu::kernel_variant_name(options.variant), name,
      median(configs[0].cpu_seconds) * 1e9 / kCount, median(configs[1].cpu_seconds) * 1e9 / kCount);
}

// Softmax (kernels/cpu/dispatch.h prepare_softmax) against reference::softmax, one thread,
// interleaved, microseconds per run by thread CPU time: a classifier's 1000 classes (a
// contiguous row), a detector's 80 classes over 8400 anchors and a segmenter's 21 classes over
// 128x128 pixels (channels strided by the plane).
void bench_softmax(const Options& options) {
  struct SoftmaxShape {
    const char* name;
    reference::ChannelLayout layout;
  };
  const SoftmaxShape shapes[] = {{"softmax 1x1000 (classes)", {1, 1000, 1}},
                                 {"softmax 80x8400 (anchors, strided)", {1, 80, 8400}},
                                 {"softmax 21x128x128 (pixels, strided)", {1, 21, 128 * 128}}};
  ThreadPool serial(1);
  SpeedupTable table("Softmax, float32", "shape", "us", 1e6, options);
  for (const SoftmaxShape& shape : shapes) {
    if (!options.filter.empty() && std::strstr(shape.name, options.filter.c_str()) == nullptr) {
      continue;
    }
    std::shared_ptr<cpu::SoftmaxFloat> kernel = cpu::prepare_softmax(shape.layout, options.variant);
    if (!kernel) continue;
    const size_t count =
        static_cast<size_t>(shape.layout.outer * shape.layout.channels * shape.layout.inner);
    Floats x = random_floats(count, 9);
    for (float& value : x) value *= 8.0f;
    Floats y(count);
    const auto [reference_seconds, variant_seconds] = reference_and_variant_seconds(
        options, [&] { reference::softmax(shape.layout, x.data(), y.data()); },
        [&] { kernel->run(x.data(), y.data(), serial); });
    table.row(shape.name, reference_seconds, variant_seconds);
  }
}

// Bilinear Resize (kernels/cpu/dispatch.h prepare_resize_bilinear) against
// reference::resize_bilinear, one thread, interleaved, microseconds per run by thread CPU time: a
// segmentation head's 2x upsampling (64 planes of 80x80 to 160x160, half_pixel).
void bench_resize_bilinear(const Options& options) {
  const char* name = "resize bilinear 64x80x80 -> 160x160";
  if (!options.filter.empty() && std::strstr(name, options.filter.c_str()) == nullptr) return;
  reference::ResizeParams params;
  params.input_shape = {1, 64, 80, 80};
  params.output_shape = {1, 64, 160, 160};
  params.scales = {1.0f, 1.0f, 2.0f, 2.0f};
  params.transform = reference::CoordinateTransform::kHalfPixel;
  std::shared_ptr<cpu::ResizeFloat> kernel = cpu::prepare_resize_bilinear(params, options.variant);
  if (!kernel) return;
  ThreadPool serial(1);
  Floats x = random_floats(64 * 80 * 80, 10);
  Floats y(64 * 160 * 160);
  const auto [reference_seconds, variant_seconds] = reference_and_variant_seconds(
      options, [&] { reference::resize_bilinear(params, x.data(), y.data()); },
      [&] { kernel->run(x.data(), y.data(), serial); });
  SpeedupTable("Bilinear Resize, float32", "shape", "us", 1e6, options)
      .row(name, reference_seconds, variant_seconds);
}

// ConvTranspose (kernels/cpu/dispatch.h prepare_conv_transpose2d) against
// reference::conv_transpose2d, one thread, interleaved, milliseconds per run by thread CPU
// time: a segmentation head's upsampling (YOLOv8-seg's proto: 64 -> 64 channels, 2x2 kernel,
// stride 2, 80x80 -> 160x160) and a 4x4 stride-2 pad-1 deconvolution (32 -> 16, 40x40).
void bench_conv_transpose(const Options& options) {
  struct Layer {
    const char* name;
    int64_t input_channels, output_channels, size, kernel, pad;
  };
  const Layer layers[] = {{"conv transpose 2x2/2 64->64 @80", 64, 64, 80, 2, 0},
                          {"conv transpose 4x4/2 pad 1 32->16 @40", 32, 16, 40, 4, 1}};
  ThreadPool serial(1);
  SpeedupTable table("ConvTranspose, float32", "layer", "ms", 1e3, options);
  for (const Layer& layer : layers) {
    if (!options.filter.empty() && std::strstr(layer.name, options.filter.c_str()) == nullptr) {
      continue;
    }
    reference::Conv2DShape shape;
    shape.input_channels = layer.input_channels;
    shape.output_channels = layer.output_channels;
    reference::Window2D& w = shape.window;
    w.input_height = w.input_width = layer.size;
    w.kernel_height = w.kernel_width = layer.kernel;
    w.stride_height = w.stride_width = 2;
    w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = layer.pad;
    w.output_height = w.output_width = (layer.size - 1) * 2 - 2 * layer.pad + layer.kernel;
    Floats x = random_floats(size_t(layer.input_channels * layer.size * layer.size), 11);
    Floats weights = random_floats(
        size_t(layer.input_channels * layer.output_channels * layer.kernel * layer.kernel), 12);
    Floats bias = random_floats(size_t(layer.output_channels), 13);
    Floats y(size_t(layer.output_channels * w.output_height * w.output_width));
    std::shared_ptr<cpu::Conv2DFloat> kernel =
        cpu::prepare_conv_transpose2d(shape, {}, weights.data(), options.variant);
    if (!kernel) continue;
    const auto [reference_seconds, variant_seconds] = reference_and_variant_seconds(
        options,
        [&] {
          reference::conv_transpose2d(shape, {}, x.data(), weights.data(), bias.data(), y.data());
        },
        [&] { kernel->run(x.data(), nullptr, bias.data(), y.data(), serial); });
    table.row(layer.name, reference_seconds, variant_seconds);
  }
}

std::vector<size_t> parse_list(const char* text) {
  std::vector<size_t> values;
  for (const char* p = text; *p;) {
    values.push_back(std::strtoul(p, nullptr, 10));
    const char* comma = std::strchr(p, ',');
    if (!comma) break;
    p = comma + 1;
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--reps") {
      options.reps = std::max(1, std::atoi(value()));
    } else if (arg == "--threads") {
      options.threads = parse_list(value());
    } else if (arg == "--filter") {
      options.filter = value();
    } else if (arg == "--reference") {
      options.with_reference = true;
    } else if (arg == "--variant") {
      const auto variant = cpu::parse_kernel_variant(value());
      if (!variant || !cpu::kernel_variant_available(*variant)) {
        std::fprintf(stderr, "unknown or unavailable variant\n");
        return 2;
      }
      options.variant = *variant;
    } else if (arg == "--peak-fp32") {
      options.peak_fp32 = std::atof(value());
    } else if (arg == "--peak-int8") {
      options.peak_int8 = std::atof(value());
    } else if (arg == "--peaks-only") {
      options.peaks_only = true;
    } else if (arg == "--winograd-vs-default") {
      options.winograd_vs_default = true;
    } else if (arg == "--winograd-accuracy") {
      options.winograd_accuracy = true;
    } else if (arg == "--direct-vs-gemm") {
      options.direct_vs_gemm = true;
    } else if (arg == "--int8-vs-gemm" || arg == "--int8-lanes-vs-gemm") {
      options.int8_vs_gemm = true;
    } else if (arg == "--subsample-vs-default") {
      options.subsample_vs_default = true;
    } else if (arg == "--column-tiles-vs-default") {
      options.column_tiles_vs_default = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--reps N] [--threads 1,2] [--filter TEXT] [--reference] "
                   "[--variant NAME] [--peak-fp32 GFLOPS] [--peak-int8 GOPS] [--peaks-only] "
                   "[--direct-vs-gemm] [--int8-vs-gemm] [--subsample-vs-default] "
                   "[--column-tiles-vs-default]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("# OpenRKNN kernel benchmark: variant %s, medians of %d interleaved repetitions\n\n",
              cpu::kernel_variant_name(options.variant), options.reps);
  if (options.winograd_vs_default) {
    bench_winograd_against_default(options);
    return 0;
  }
  if (options.winograd_accuracy) {
    bench_winograd_accuracy(options);
    return 0;
  }
  if (options.direct_vs_gemm) {  // times only: no peaks needed
    bench_direct_against_gemm(options);
    return 0;
  }
  if (options.int8_vs_gemm) {
    bench_int8_against_gemm(options);
    return 0;
  }
  if (options.subsample_vs_default) {
    bench_subsample_against_default(options);
    return 0;
  }
  if (options.column_tiles_vs_default) {
    bench_column_tiles_against_default(options);
    return 0;
  }
  measure_and_print_peaks(options);
  if (options.peaks_only) return 0;
  if (options.filter.empty() || options.filter == "micro") bench_micro_kernels(options);
  bench_convolutions(options, false);
  bench_convolutions(options, true);
  bench_gemms(options);
  bench_activations(options);
  bench_lookup_int8(options);
  bench_binary_int8(options);
  bench_softmax(options);
  bench_resize_bilinear(options);
  bench_conv_transpose(options);
  return 0;
}
