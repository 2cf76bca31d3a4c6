// Optimized Gemm and MatMul (kernels/cpu/dispatch.h) against the reference kernels, and the
// requantization micro-kernels against reference::requantize: float32 within 1e-5 of the output
// scale, int8 bit-exact, for every optimized variant, on 1 and 3 threads, with packed and
// per-run B.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/micro_kernels.h"
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

enum class Addend { kNone, kRow, kMatrix, kColumn, kScalar };

struct GemmCase {
  int64_t m, n, k;
  bool transpose_a = false;
  bool transpose_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  Addend addend = Addend::kNone;
};

const GemmCase kGemmCases[] = {
    {1, 1, 1},
    {1, 1000, 64, false, false, 1.0f, 1.0f, Addend::kRow},
    {1, 17, 300, false, true, 1.0f, 1.0f, Addend::kRow},
    {5, 15, 7},
    {6, 16, 8, true, false},
    {7, 17, 9, true, true, 1.0f, 1.0f, Addend::kRow},
    {13, 31, 256, false, true, 1.0f, 1.0f, Addend::kMatrix},
    {12, 33, 257, false, false, 0.5f, 2.0f, Addend::kRow},
    {37, 101, 513, false, true, 1.0f, 1.0f, Addend::kColumn},
    {3, 8, 5, false, false, -1.5f, 0.25f, Addend::kScalar},
    {150, 20, 11, true, false, 1.0f, 1.0f, Addend::kMatrix},
    {4, 600, 3, false, false, 1.0f, 0.0f, Addend::kRow},
    // The avx512 float tile's edges (12 x 32): whole tiles, one row and column past, a column
    // bias over a partial panel.
    {24, 32, 16},
    {25, 65, 130, false, true, 1.0f, 1.0f, Addend::kColumn},
    {11, 47, 9, true, false, 1.0f, 1.0f, Addend::kRow},
    // The avx512 int8 tile's edges (8 x 32): a last panel of at most 8 columns (one ymm) under
    // whole tiles of rows, and one of 9-16 (one zmm).
    {40, 36, 70, false, true, 1.0f, 1.0f, Addend::kRow},
    {16, 44, 33},
};

reference::GemmParams params_of(const GemmCase& c, size_t* c_size) {
  reference::GemmParams p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.transpose_a = c.transpose_a;
  p.transpose_b = c.transpose_b;
  p.alpha = c.alpha;
  p.beta = c.beta;
  switch (c.addend) {
    case Addend::kNone:
    case Addend::kScalar:
      *c_size = 1;
      break;
    case Addend::kRow:
      p.c_column_stride = 1;
      *c_size = static_cast<size_t>(c.n);
      break;
    case Addend::kColumn:
      p.c_row_stride = 1;
      *c_size = static_cast<size_t>(c.m);
      break;
    case Addend::kMatrix:
      p.c_row_stride = c.n;
      p.c_column_stride = 1;
      *c_size = static_cast<size_t>(c.m * c.n);
      break;
  }
  return p;
}

void test_float_gemm(void**) {
  ThreadPool one(1), three(3);
  size_t index = 0;
  for (const GemmCase& c : kGemmCases) {
    size_t c_size = 0;
    const reference::GemmParams params = params_of(c, &c_size);
    Random random(static_cast<uint32_t>(300 + index));
    const std::vector<float> a = random.floats(static_cast<size_t>(c.m * c.k));
    const std::vector<float> b = random.floats(static_cast<size_t>(c.k * c.n));
    const std::vector<float> addend = random.floats(c_size);
    const float* c_data = c.addend == Addend::kNone ? nullptr : addend.data();
    reference::FusedActivation activation;
    if (index % 3 == 1) activation.kind = reference::FusedActivation::Kind::kRelu;
    if (index % 3 == 2) {
      activation.kind = reference::FusedActivation::Kind::kLeakyRelu;
      activation.alpha = 0.2f;
    }
    std::vector<float> expected(static_cast<size_t>(c.m * c.n));
    reference::gemm(params, activation, a.data(), b.data(), c_data, expected.data());
    for (KernelVariant variant : float_gemm_variants()) {
      for (bool constant : {true, false}) {
        auto kernel =
            kernels::cpu::prepare_gemm(params, activation, constant ? b.data() : nullptr, variant);
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> y(expected.size(), std::numeric_limits<float>::quiet_NaN());
          kernel->run(a.data(), b.data(), c_data, y.data(), *pool);
          const std::string mismatch = compare_floats(y, expected, 1e-5);
          if (!mismatch.empty()) {
            fail_msg("gemm case %zu (%s, %s B, %zu threads): %s", index, kernel->algorithm(),
                     constant ? "packed" : "per-run", pool->thread_count(), mismatch.c_str());
          }
        }
      }
    }
    ++index;
  }
}

reference::Int8Requantization gemm_requantization(Random& random, int64_t n, int64_t k) {
  reference::Int8Requantization q;
  q.input_zero_point = random.integer(-30, 30);
  for (int64_t column = 0; column < n; ++column) {
    q.weight_zero_points.push_back(column % 5 == 4 ? random.integer(-2, 2) : 0);
    const double spread = std::sqrt(static_cast<double>(k)) * 74.0 * 74.0;
    q.multipliers.push_back(static_cast<float>(random.real(20.0f, 90.0f) / spread));
  }
  q.output_zero_point = random.integer(-5, 5);
  return q;
}

void test_int8_gemm(void**) {
  ThreadPool one(1), three(3);
  size_t index = 0;
  for (const GemmCase& c : kGemmCases) {
    size_t c_size = 0;
    reference::GemmParams params = params_of(c, &c_size);
    params.alpha = params.beta = 1.0f;  // folded into the multipliers for int8
    Random random(static_cast<uint32_t>(400 + index));
    const std::vector<int8_t> a = random.codes(static_cast<size_t>(c.m * c.k));
    const std::vector<int8_t> b = random.codes(static_cast<size_t>(c.k * c.n));
    const std::vector<int32_t> addend = random.ints(c_size, -30000, 30000);
    const int32_t* c_data = c.addend == Addend::kNone ? nullptr : addend.data();
    reference::Int8Requantization q = gemm_requantization(random, c.n, c.k);
    if (index % 2) q.output_minimum = std::max(-128, q.output_zero_point);
    std::vector<int8_t> expected(static_cast<size_t>(c.m * c.n));
    reference::gemm_int8(params, q, a.data(), b.data(), c_data, expected.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      for (bool constant : {true, false}) {
        auto kernel =
            kernels::cpu::prepare_gemm_int8(params, q, constant ? b.data() : nullptr, variant);
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<int8_t> y(expected.size(), 0x55);
          kernel->run(a.data(), b.data(), c_data, y.data(), *pool);
          const std::string mismatch = compare_exact(y, expected);
          if (!mismatch.empty()) {
            fail_msg("int8 gemm case %zu (%s, %s B, %zu threads): %s", index, kernel->algorithm(),
                     constant ? "packed" : "per-run", pool->thread_count(), mismatch.c_str());
          }
        }
      }
    }
    ++index;
  }
}

// The x86 float tiles load C (or the bias) into their accumulators and add every depth step to
// it, so their sums do not depend on how the depth is chunked; the portable and NEON tiles sum
// each chunk from zero and then add it to C.
bool tiles_start_from_c(KernelVariant variant) {
  return variant == KernelVariant::kAvx2 || variant == KernelVariant::kAvx512;
}

// Gemm with one row (the classifiers' fully connected layer: optimized/row_vector.h): N around
// the panels of every tile (8, 16, 32 columns), K around the blocked path's 256-deep chunk, a row
// C (fused), none, or a scalar C with alpha (the separate epilogue), with and without an
// activation, on 1 and 3 threads. The constant-B kernel takes the row path; the per-run-B one
// the blocked path, whose float32 results it must equal bit for bit where the depth is one chunk
// or the tiles start from C (the same additions in the same order).
void test_one_row_gemm(void**) {
  ThreadPool one(1), three(3);
  Random random(600);
  const int64_t columns[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 100, 1000};
  const int64_t depths[] = {1, 2, 3, 8, 17, 255, 256, 257, 300, 512, 513, 1280};
  for (int trial = 0; trial < 28; ++trial) {
    GemmCase c{1, columns[trial % 14], depths[(trial * 5 + trial / 14) % 12]};
    c.transpose_b = trial % 3 == 1;
    c.transpose_a = trial % 5 == 2;
    c.addend = trial % 4 == 3 ? Addend::kScalar : trial % 2 == 0 ? Addend::kRow : Addend::kNone;
    if (c.addend == Addend::kScalar) c.alpha = 0.75f;
    size_t c_size = 0;
    const reference::GemmParams params = params_of(c, &c_size);
    const std::vector<float> a = random.floats(static_cast<size_t>(c.k));
    const std::vector<float> b = random.floats(static_cast<size_t>(c.k * c.n));
    const std::vector<float> addend = random.floats(c_size);
    const float* c_data = c.addend == Addend::kNone ? nullptr : addend.data();
    reference::FusedActivation activation;
    if (trial % 3 == 0) activation.kind = reference::FusedActivation::Kind::kRelu;
    std::vector<float> expected(static_cast<size_t>(c.n));
    reference::gemm(params, activation, a.data(), b.data(), c_data, expected.data());
    for (KernelVariant variant : float_gemm_variants()) {
      auto row = kernels::cpu::prepare_gemm(params, activation, b.data(), variant);
      auto blocked = kernels::cpu::prepare_gemm(params, activation, nullptr, variant);
      const std::string algorithm = row->algorithm();
      if (algorithm.find(" row") == std::string::npos) {
        fail_msg("one-row gemm trial %d: %s is not the row path", trial, algorithm.c_str());
      }
      std::vector<float> blocked_y(expected.size());
      blocked->run(a.data(), b.data(), c_data, blocked_y.data(), one);
      for (ThreadPool* pool : {&one, &three}) {
        std::vector<float> y(expected.size(), std::numeric_limits<float>::quiet_NaN());
        row->run(a.data(), b.data(), c_data, y.data(), *pool);
        std::string mismatch = compare_floats(y, expected, 1e-5);
        if (mismatch.empty() && (c.k <= 256 || tiles_start_from_c(variant)) &&
            std::memcmp(y.data(), blocked_y.data(), y.size() * sizeof(float)) != 0) {
          mismatch = "not the blocked path's bits";
        }
        if (!mismatch.empty()) {
          fail_msg("one-row gemm trial %d: N %lld K %lld (%s, %zu threads): %s", trial,
                   static_cast<long long>(c.n), static_cast<long long>(c.k), algorithm.c_str(),
                   pool->thread_count(), mismatch.c_str());
        }
      }
    }
    // int8 on every int8 driver (int16 pairs, and the dot products where the CPU has them).
    reference::GemmParams params8 = params;
    params8.alpha = params8.beta = 1.0f;
    const std::vector<int8_t> a8 = random.codes(static_cast<size_t>(c.k));
    const std::vector<int8_t> b8 = random.codes(static_cast<size_t>(c.k * c.n));
    const std::vector<int32_t> addend8 = random.ints(c_size, -30000, 30000);
    const int32_t* c8 = c.addend == Addend::kNone ? nullptr : addend8.data();
    reference::Int8Requantization q = gemm_requantization(random, c.n, c.k);
    if (trial % 2) q.output_minimum = std::max(-128, q.output_zero_point);
    std::vector<int8_t> expected8(static_cast<size_t>(c.n));
    reference::gemm_int8(params8, q, a8.data(), b8.data(), c8, expected8.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      auto kernel = kernels::cpu::prepare_gemm_int8(params8, q, b8.data(), variant);
      for (ThreadPool* pool : {&one, &three}) {
        std::vector<int8_t> y(expected8.size(), 0x55);
        kernel->run(a8.data(), b8.data(), c8, y.data(), *pool);
        const std::string mismatch = compare_exact(y, expected8);
        if (!mismatch.empty()) {
          fail_msg("one-row int8 gemm trial %d: N %lld K %lld (%s, %zu threads): %s", trial,
                   static_cast<long long>(c.n), static_cast<long long>(c.k), kernel->algorithm(),
                   pool->thread_count(), mismatch.c_str());
        }
      }
    }
  }
}

struct MatMulCase {
  int64_t m, n, k;
  std::vector<int64_t> batch_shape;
  std::vector<int64_t> a_batch;  // A's batch dimensions (1 = broadcast), same rank
  std::vector<int64_t> b_batch;
};

reference::MatMulParams matmul_params(const MatMulCase& c, size_t* a_matrices, size_t* b_matrices) {
  reference::MatMulParams p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.batch_shape = c.batch_shape;
  p.a_batch_strides.assign(c.batch_shape.size(), 0);
  p.b_batch_strides.assign(c.batch_shape.size(), 0);
  int64_t a_stride = 1, b_stride = 1;
  for (size_t d = c.batch_shape.size(); d-- > 0;) {
    if (c.a_batch[d] != 1) p.a_batch_strides[d] = a_stride;
    if (c.b_batch[d] != 1) p.b_batch_strides[d] = b_stride;
    a_stride *= c.a_batch[d];
    b_stride *= c.b_batch[d];
  }
  *a_matrices = static_cast<size_t>(a_stride);
  *b_matrices = static_cast<size_t>(b_stride);
  return p;
}

const MatMulCase kMatMulCases[] = {
    {1, 1, 1, {}, {}, {}},
    {17, 23, 29, {}, {}, {}},
    {7, 16, 300, {3}, {3}, {1}},         // shared B (a Linear layer over a batch)
    {5, 9, 6, {2, 3}, {2, 3}, {2, 3}},   // every product its own B
    {4, 18, 5, {2, 3}, {1, 3}, {2, 1}},  // broadcast on both sides
    {1, 33, 257, {3}, {3}, {1}},         // one row per product, shared B (the row path)
    {1, 65, 9, {2}, {2}, {2}},           // one row per product, each its own B
};

void test_matmul(void**) {
  ThreadPool one(1), three(3);
  size_t index = 0;
  for (const MatMulCase& c : kMatMulCases) {
    size_t a_matrices = 0, b_matrices = 0;
    const reference::MatMulParams params = matmul_params(c, &a_matrices, &b_matrices);
    size_t products = 1;
    for (int64_t d : c.batch_shape) products *= static_cast<size_t>(d);
    Random random(static_cast<uint32_t>(500 + index));
    const std::vector<float> a = random.floats(a_matrices * static_cast<size_t>(c.m * c.k));
    const std::vector<float> b = random.floats(b_matrices * static_cast<size_t>(c.k * c.n));
    const std::vector<int8_t> a8 = random.codes(a.size());
    const std::vector<int8_t> b8 = random.codes(b.size());
    reference::FusedActivation activation;
    activation.kind = index % 2 ? reference::FusedActivation::Kind::kClip
                                : reference::FusedActivation::Kind::kNone;
    activation.minimum = -0.3f;
    activation.maximum = 0.4f;
    const reference::Int8Requantization q = gemm_requantization(random, c.n, c.k);
    const size_t output_size = products * static_cast<size_t>(c.m * c.n);
    std::vector<float> expected(output_size);
    reference::matmul(params, activation, a.data(), b.data(), expected.data());
    std::vector<int8_t> expected8(output_size);
    reference::matmul_int8(params, q, a8.data(), b8.data(), expected8.data());
    for (KernelVariant variant : int8_gemm_variants()) {
      for (bool constant : {true, false}) {
        auto kernel = kernels::cpu::prepare_matmul(params, activation,
                                                   constant ? b.data() : nullptr, variant);
        auto kernel8 =
            kernels::cpu::prepare_matmul_int8(params, q, constant ? b8.data() : nullptr, variant);
        for (ThreadPool* pool : {&one, &three}) {
          std::vector<float> y(output_size, std::numeric_limits<float>::quiet_NaN());
          kernel->run(a.data(), b.data(), y.data(), *pool);
          std::string mismatch = compare_floats(y, expected, 1e-5);
          if (!mismatch.empty()) {
            fail_msg("matmul case %zu (%s, %s B, %zu threads): %s", index, kernel->algorithm(),
                     constant ? "packed" : "per-run", pool->thread_count(), mismatch.c_str());
          }
          std::vector<int8_t> y8(output_size, 0x55);
          kernel8->run(a8.data(), b8.data(), y8.data(), *pool);
          mismatch = compare_exact(y8, expected8);
          if (!mismatch.empty()) {
            fail_msg("int8 matmul case %zu (%s, %s B, %zu threads): %s", index,
                     kernel8->algorithm(), constant ? "packed" : "per-run", pool->thread_count(),
                     mismatch.c_str());
          }
        }
      }
    }
    ++index;
  }
}

// Every requantization micro-kernel equals reference::requantize, including exact ties
// (round half to even), the +-1e9 bound, the zero point and the clamp, for row lengths around
// the 8-wide vectors.
void test_requantize_row(void**) {
  namespace optimized = kernels::cpu::optimized;
  const std::vector<const optimized::MicroKernels*> tables = optimized_micro_kernels();
  Random random(9);
  const float multipliers_for_ties[] = {0.5f, 0.25f, 0.125f, 1.5f, 3e-3f, 1e-7f, 2e4f, 1.0f};
  for (const optimized::MicroKernels* table : tables) {
    for (size_t count : {1u, 7u, 8u, 9u, 16u, 37u}) {
      for (int trial = 0; trial < 40; ++trial) {
        std::vector<int32_t> accumulators = random.ints(count, -3000000, 3000000);
        if (trial % 4 == 0) {
          for (int32_t& value : accumulators) value = random.integer(-9, 9);  // ties at 0.5
        }
        if (trial % 4 == 1) accumulators[0] = std::numeric_limits<int32_t>::min();
        if (trial % 4 == 2) accumulators[count - 1] = std::numeric_limits<int32_t>::max();
        std::vector<float> multipliers(count);
        // Odd trials use only multipliers <= 0.49, where the kernels may take their int32 path.
        const float small_ones[] = {0.25f, 0.125f, 3e-3f, 1e-7f, 0.49f, 0.0625f, 0.375f, 1e-4f};
        for (float& m : multipliers) {
          m = trial % 2 ? small_ones[random.integer(0, 7)]
                        : multipliers_for_ties[random.integer(0, 7)];
        }
        const bool per_element = trial % 4 < 2;
        const int32_t zero_point = random.integer(-128, 127);
        int32_t low = -128, high = 127;
        if (trial % 5 == 3) low = std::max(-128, zero_point);
        if (trial % 5 == 4) {
          low = random.integer(-128, 127);
          high = random.integer(-128, 127);  // may be below low: the reference yields high
        }
        std::vector<int8_t> expected(count), output(count, 0x55);
        for (size_t i = 0; i < count; ++i) {
          expected[i] = reference::requantize(accumulators[i], multipliers[per_element ? i : 0],
                                              zero_point, low, high);
        }
        optimized::RequantizeRow row{
            accumulators.data(),
            count,
            multipliers.data(),
            per_element,
            zero_point,
            low,
            high,
            output.data(),
            optimized::small_multipliers(multipliers.data(), per_element ? count : 1, zero_point),
            false};
        if (trial % 2 == 1) assert_true(row.small_multipliers);
        table->requantize_row(row);
        const std::string mismatch = compare_exact(output, expected);
        if (!mismatch.empty()) {
          fail_msg("%s requantize, %zu values, trial %d: %s", table->name, count, trial,
                   mismatch.c_str());
        }
      }
    }
  }
}

// RequantizeRow::in_float: rows whose accumulators are within 2^24 and whose products with the
// row's multiplier are within 2^21 (the caller's promise) give reference::requantize's bytes,
// ties included, at the bounds, and for lengths around the 16-output steps; so do the same rows
// without the promise (the avx2 row then checks their real sums and takes the float path).
void test_requantize_row_in_float(void**) {
  namespace optimized = kernels::cpu::optimized;
  Random random(19);
  const float multipliers[] = {0.5f, 0.25f, 0.125f, 1.0f, 3e-3f, 0.0078125f, 0.37f, 1e-7f};
  constexpr int64_t kLargestAccumulator = int64_t{1} << 24;
  constexpr double kLargestProduct = 2097152.0;  // 2^21
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    for (size_t count : {1u, 15u, 16u, 17u, 31u, 32u, 48u, 61u}) {
      for (int trial = 0; trial < 48; ++trial) {
        const float m = multipliers[trial % 8];
        const int64_t bound = std::min<int64_t>(
            kLargestAccumulator, static_cast<int64_t>(std::floor(kLargestProduct / m)));
        std::vector<int32_t> accumulators(count);
        for (int32_t& value : accumulators) {
          value = trial % 3 == 0
                      ? random.integer(-40, 40)  // ties at multiples of 0.5
                      : random.integer(static_cast<int32_t>(-bound), static_cast<int32_t>(bound));
        }
        if (trial % 6 == 1) accumulators[0] = static_cast<int32_t>(bound);
        if (trial % 6 == 2) accumulators[count - 1] = static_cast<int32_t>(-bound);
        const int32_t zero_point = random.integer(-128, 127);
        int32_t low = -128, high = 127;
        if (trial % 5 == 3) low = std::max(-128, zero_point);
        if (trial % 5 == 4) {
          low = random.integer(-128, 127);
          high = random.integer(-128, 127);  // may be below low: the reference yields high
        }
        std::vector<int8_t> expected(count), output(count, 0x55);
        for (size_t i = 0; i < count; ++i) {
          expected[i] = reference::requantize(accumulators[i], m, zero_point, low, high);
        }
        // Promised by the caller, and not: then a kernel may check the real sums itself (avx2
        // does, for rows of 16 or more) and must give the same bytes.
        for (bool promised : {true, false}) {
          std::fill(output.begin(), output.end(), int8_t{0x55});
          optimized::RequantizeRow row{accumulators.data(),
                                       count,
                                       &m,
                                       false,
                                       zero_point,
                                       low,
                                       high,
                                       output.data(),
                                       optimized::small_multipliers(&m, 1, zero_point),
                                       promised};
          table->requantize_row(row);
          const std::string mismatch = compare_exact(output, expected);
          if (!mismatch.empty()) {
            fail_msg("%s in-float requantize (promised %d), %zu values, trial %d: %s", table->name,
                     promised, count, trial, mismatch.c_str());
          }
        }
      }
    }
  }
}

// requantize_lanes (the int8 depthwise's sums in 8 lanes, exact integers as floats) equals
// reference::requantize of int32(sum) + bias per lane, with and without `in_float` (whose
// promise the sums keep: within 2^24 and 2^21 / m with the bias), ties and clamps included.
void test_requantize_lanes(void**) {
  namespace optimized = kernels::cpu::optimized;
  Random random(23);
  const float small_ones[] = {0.25f, 0.125f, 3e-3f, 1e-7f, 0.49f, 0.0625f, 0.375f, 1e-4f};
  constexpr double kLargestAccumulator = 16777216.0;  // 2^24
  constexpr double kLargestProduct = 2097152.0;       // 2^21
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    for (size_t count : {1u, 7u, 8u, 9u, 16u, 37u}) {
      for (int trial = 0; trial < 40; ++trial) {
        float multipliers[8];
        int32_t bias[8];
        int32_t bounds[8];
        for (size_t l = 0; l < 8; ++l) {
          multipliers[l] = small_ones[random.integer(0, 7)];
          bounds[l] = static_cast<int32_t>(
              std::min(kLargestAccumulator, std::floor(kLargestProduct / multipliers[l])));
          bias[l] = trial % 3 == 0 ? random.integer(-3, 3)
                                   : random.integer(-bounds[l] / 2, bounds[l] / 2);
        }
        std::vector<float> sums(count * 8);
        for (size_t c = 0; c < count; ++c) {
          for (size_t l = 0; l < 8; ++l) {
            const int32_t half = bounds[l] / 2;
            sums[c * 8 + l] = static_cast<float>(trial % 3 == 0 ? random.integer(-40, 40)
                                                                : random.integer(-half, half));
          }
        }
        const int32_t zero_point = random.integer(-128, 127);
        int32_t low = -128, high = 127;
        if (trial % 5 == 3) low = std::max(-128, zero_point);
        if (trial % 5 == 4) {
          low = random.integer(-128, 127);
          high = random.integer(-128, 127);
        }
        std::vector<int8_t> output(count * 8, 0x55);
        int8_t* rows[8];
        for (size_t l = 0; l < 8; ++l) rows[l] = output.data() + l * count;
        optimized::RequantizeLanes lanes{};
        lanes.sums = sums.data();
        lanes.count = count;
        lanes.requantization.bias = bias;
        lanes.requantization.multipliers = multipliers;
        lanes.requantization.output_zero_point = zero_point;
        lanes.requantization.output_minimum = low;
        lanes.requantization.output_maximum = high;
        lanes.requantization.rows = rows;
        lanes.requantization.in_float = trial % 2 == 0;
        table->requantize_lanes(lanes);
        for (size_t l = 0; l < 8; ++l) {
          for (size_t c = 0; c < count; ++c) {
            const int8_t expected =
                reference::requantize(static_cast<int32_t>(sums[c * 8 + l]) + bias[l],
                                      multipliers[l], zero_point, low, high);
            if (rows[l][c] != expected) {
              fail_msg(
                  "%s requantize_lanes%s, %zu pixels, trial %d: lane %zu pixel %zu: %d, "
                  "expected %d",
                  table->name, lanes.requantization.in_float ? " in float" : "", count, trial, l, c,
                  rows[l][c], expected);
            }
          }
        }
      }
    }
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_gemm),       cmocka_unit_test(test_int8_gemm),
      cmocka_unit_test(test_one_row_gemm),     cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_requantize_row),   cmocka_unit_test(test_requantize_row_in_float),
      cmocka_unit_test(test_requantize_lanes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
