#include "peak_rate.h"

#include <time.h>

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>

#include "dispatch.h"
#endif

// Each loop below keeps its accumulators in named locals (not an array the compiler might keep
// in memory) and updates them with one multiply-accumulate per chain per iteration: twelve
// chains cover the latency x throughput of two FMA pipes with a latency of up to six cycles.

#define ORKNN_REPEAT8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ORKNN_REPEAT12(X) ORKNN_REPEAT8(X) X(8) X(9) X(10) X(11)

namespace orknn::bench {
namespace {

// Results go here so the loops are not optimized away.
volatile float float_sink;
volatile int32_t integer_sink;

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

#if defined(__x86_64__)

__attribute__((target("avx2,fma"))) double fma_avx2(int64_t iterations) {
  const __m256 scale = _mm256_set1_ps(0.999f), offset = _mm256_set1_ps(0.001f);
#define DECLARE(i) __m256 acc##i = _mm256_set1_ps(0.5f + 0.01f * (i));
  ORKNN_REPEAT12(DECLARE)
#undef DECLARE
  for (int64_t n = 0; n < iterations; ++n) {
#define UPDATE(i) acc##i = _mm256_fmadd_ps(acc##i, scale, offset);
    ORKNN_REPEAT12(UPDATE)
#undef UPDATE
  }
  __m256 sum = _mm256_setzero_ps();
#define ADD(i) sum = _mm256_add_ps(sum, acc##i);
  ORKNN_REPEAT12(ADD)
#undef ADD
  float_sink = _mm256_cvtss_f32(sum);
  return 12.0 * 8 * 2 * static_cast<double>(iterations);
}

__attribute__((target("avx512f"))) double fma_avx512(int64_t iterations) {
  const __m512 scale = _mm512_set1_ps(0.999f), offset = _mm512_set1_ps(0.001f);
#define DECLARE(i) __m512 acc##i = _mm512_set1_ps(0.5f + 0.01f * (i));
  ORKNN_REPEAT12(DECLARE)
#undef DECLARE
  for (int64_t n = 0; n < iterations; ++n) {
#define UPDATE(i) acc##i = _mm512_fmadd_ps(acc##i, scale, offset);
    ORKNN_REPEAT12(UPDATE)
#undef UPDATE
  }
  __m512 sum = _mm512_setzero_ps();
#define ADD(i) sum = _mm512_add_ps(sum, acc##i);
  ORKNN_REPEAT12(ADD)
#undef ADD
  // One lane is enough to keep the loop; GCC 12's reduce intrinsics trip -Wuninitialized.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float_sink = lanes[0];
  return 12.0 * 16 * 2 * static_cast<double>(iterations);
}

// What the int8 kernels run (int8 codes widened to int16 pairs): vpmaddwd then vpaddd into an
// accumulator. Written in assembly: the products do not depend on the accumulators, and in C
// the compiler either computes them once outside the loop or, kept from that, copies and spills
// registers inside it (GCC 12), measuring its register allocation instead of the multipliers.
// Eight chains of (multiply into a temporary, add), temporaries renamed by the CPU.
double int16_pairs_avx2(int64_t iterations) {
  int64_t counter = iterations;
  int32_t lane = 0;
  // clang-format off
#define CLEAR(i) "vpxor %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
#define CHAIN(acc, temp) "vpmaddwd %%ymm15, %%ymm14, %%ymm" #temp "\n\t" \
                         "vpaddd %%ymm" #temp ", %%ymm" #acc ", %%ymm" #acc "\n\t"
  __asm__ volatile(
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpabsw %%ymm14, %%ymm14\n\t"           // x: int16 ones
      "vpaddw %%ymm14, %%ymm14, %%ymm15\n\t"  // y: int16 twos
      CLEAR(0) CLEAR(1) CLEAR(2) CLEAR(3) CLEAR(4) CLEAR(5) CLEAR(6) CLEAR(7)
      "test %[n], %[n]\n\t"
      "jle 2f\n\t"
      "1:\n\t"
      CHAIN(0, 8) CHAIN(1, 9) CHAIN(2, 10) CHAIN(3, 11)
      CHAIN(4, 12) CHAIN(5, 13) CHAIN(6, 8) CHAIN(7, 9)
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "2:\n\t"
      "vpaddd %%ymm1, %%ymm0, %%ymm0\n\t"
      "vmovd %%xmm0, %[lane]\n\t"
      "vzeroupper\n\t"
      : [n] "+r"(counter), [lane] "=r"(lane)
      :
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#undef CHAIN
#undef CLEAR
  // clang-format on
  integer_sink = lane;
  return 8.0 * 16 * 2 * static_cast<double>(iterations);
}

// AVX-512 VNNI: vpdpbusd multiplies 64 unsigned by signed int8 pairs and accumulates them in
// one instruction, the fastest int8 path of the x86 machines that have it.
__attribute__((target("avx512f,avx512vnni"))) double dot_vnni512(int64_t iterations) {
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
#define DECLARE(i) __m512i acc##i = _mm512_set1_epi32(i);
  ORKNN_REPEAT12(DECLARE)
#undef DECLARE
  for (int64_t n = 0; n < iterations; ++n) {
#define UPDATE(i) acc##i = _mm512_dpbusd_epi32(acc##i, a, b);
    ORKNN_REPEAT12(UPDATE)
#undef UPDATE
  }
  __m512i sum = _mm512_setzero_si512();
#define ADD(i) sum = _mm512_add_epi32(sum, acc##i);
  ORKNN_REPEAT12(ADD)
#undef ADD
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, sum);
  integer_sink = lanes[0];
  return 12.0 * 64 * 2 * static_cast<double>(iterations);
}

#endif  // __x86_64__

#if defined(__aarch64__)

double fma_neon(int64_t iterations) {
  const float32x4_t scale = vdupq_n_f32(0.999f), offset = vdupq_n_f32(0.001f);
#define DECLARE(i) float32x4_t acc##i = vdupq_n_f32(0.5f + 0.01f * (i));
  ORKNN_REPEAT12(DECLARE)
#undef DECLARE
  for (int64_t n = 0; n < iterations; ++n) {
#define UPDATE(i) acc##i = vfmaq_f32(offset, acc##i, scale);
    ORKNN_REPEAT12(UPDATE)
#undef UPDATE
  }
  float32x4_t sum = vdupq_n_f32(0.0f);
#define ADD(i) sum = vaddq_f32(sum, acc##i);
  ORKNN_REPEAT12(ADD)
#undef ADD
  float_sink = vaddvq_f32(sum);
  return 12.0 * 4 * 2 * static_cast<double>(iterations);
}

#if defined(__clang__)
#define ORKNN_TARGET_DOTPROD __attribute__((target("dotprod")))
#else
#define ORKNN_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

ORKNN_TARGET_DOTPROD double dot_sdot(int64_t iterations) {
  const int8x16_t a = vdupq_n_s8(3), b = vdupq_n_s8(-2);
#define DECLARE(i) int32x4_t acc##i = vdupq_n_s32(i);
  ORKNN_REPEAT12(DECLARE)
#undef DECLARE
  for (int64_t n = 0; n < iterations; ++n) {
#define UPDATE(i) acc##i = vdotq_s32(acc##i, a, b);
    ORKNN_REPEAT12(UPDATE)
#undef UPDATE
  }
  int32x4_t sum = vdupq_n_s32(0);
#define ADD(i) sum = vaddq_s32(sum, acc##i);
  ORKNN_REPEAT12(ADD)
#undef ADD
  integer_sink = vaddvq_s32(sum);
  return 12.0 * 16 * 2 * static_cast<double>(iterations);
}

#endif  // __aarch64__

// Best rate of a few repetitions by thread CPU time. The loop count is calibrated so one
// repetition takes about 20 ms, long against the clock's resolution and a time slice's edge.
double best_rate(double (*loop)(int64_t)) {
  int64_t iterations = 1 << 14;
  for (;;) {
    const double start = thread_cpu_seconds();
    loop(iterations);
    const double seconds = thread_cpu_seconds() - start;
    if (seconds > 0.005 || iterations > (int64_t{1} << 34)) {
      iterations =
          static_cast<int64_t>(static_cast<double>(iterations) * 0.02 / std::max(seconds, 1e-6)) +
          1;
      break;
    }
    iterations *= 4;
  }
  double best = 0.0;
  for (int repetition = 0; repetition < 5; ++repetition) {
    const double start = thread_cpu_seconds();
    const double operations = loop(iterations);
    const double seconds = thread_cpu_seconds() - start;
    if (seconds > 0.0) best = std::max(best, operations / seconds * 1e-9);
  }
  return best;
}

}  // namespace

std::vector<PeakRate> measure_peak_rates() {
  std::vector<PeakRate> rates;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    rates.push_back({"AVX2 vfmadd231ps ymm", false, best_rate(fma_avx2)});
    rates.push_back(
        {"AVX2 vpmaddwd + vpaddd ymm (int8 as int16 pairs)", true, best_rate(int16_pairs_avx2)});
  }
  if (__builtin_cpu_supports("avx512f")) {
    rates.push_back({"AVX-512 vfmadd231ps zmm", false, best_rate(fma_avx512)});
    if (__builtin_cpu_supports("avx512vnni")) {
      rates.push_back({"AVX-512 VNNI vpdpbusd zmm", true, best_rate(dot_vnni512)});
    }
  }
#endif
#if defined(__aarch64__)
  rates.push_back({"NEON fmla v.4s", false, best_rate(fma_neon)});
  if (kernels::cpu::kernel_variant_available(kernels::cpu::KernelVariant::kNeonDotprod)) {
    rates.push_back({"NEON sdot v.4s", true, best_rate(dot_sdot)});
  }
#endif
  return rates;
}

}  // namespace orknn::bench
