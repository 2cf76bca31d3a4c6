// The int8 table lookup (an int8 activation as a 256-entry table): every micro-kernel table's
// lookup_int8_row, and the AVX-512 VBMI row itself where the CPU has VBMI, bit for bit against
// the plain table[code + 128] on random tables, every code, lengths 0..300 (vector tails),
// unaligned pointers and in place, with guard bytes around the output; then the prepared kernel
// (dispatch.h prepare_lookup_int8) on 1 and 3 threads over a tensor of several chunks.
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dispatch.h"
#include "kernels_optimized/optimized_test_support.h"
#include "optimized/micro_kernels.h"

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
namespace optimized = kernels::cpu::optimized;
using kernels::cpu::KernelVariant;

constexpr int8_t kGuard = 0x5A;
constexpr size_t kGuardBytes = 64;

std::vector<int8_t> random_codes(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> code(-128, 127);
  std::vector<int8_t> codes(count);
  for (int8_t& value : codes) value = static_cast<int8_t>(code(generator));
  return codes;
}

// Codes -128..127 in order, then random ones: every byte value within the first 256.
std::vector<int8_t> all_codes_then_random(size_t count, uint32_t seed) {
  std::vector<int8_t> codes = random_codes(count, seed);
  for (size_t i = 0; i < count && i < 256; ++i) codes[i] = static_cast<int8_t>(int(i) - 128);
  return codes;
}

std::vector<int8_t> expected_lookup(const std::vector<int8_t>& table, const int8_t* in,
                                    size_t count) {
  std::vector<int8_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = table[static_cast<size_t>(in[i] + 128)];
  return out;
}

struct NamedRow {
  std::string name;
  optimized::LookupInt8Row row;
};

std::vector<NamedRow> rows_to_check() {
  std::vector<NamedRow> rows;
  for (const optimized::MicroKernels* table : optimized_micro_kernels()) {
    rows.push_back({table->name, table->lookup_int8_row});
  }
#if defined(__x86_64__)
  if (optimized::cpu_has_avx512_vbmi()) {
    rows.push_back({"avx512vbmi (direct)", optimized::avx512_vbmi_lookup_int8_row});
  } else {
    std::printf("[  SKIPPED ] avx512vbmi lookup row: this CPU lacks AVX-512 VBMI\n");
  }
#endif
  for (const NamedRow& row : rows) std::printf("checking lookup row: %s\n", row.name.c_str());
  return rows;
}

// One row at `count` codes read from in_offset and written to out_offset bytes into their
// buffers (or in place); fails naming the case and the first mismatch.
void check_row(const NamedRow& row, const std::vector<int8_t>& table, size_t count,
               size_t in_offset, size_t out_offset, bool in_place, uint32_t seed) {
  const std::vector<int8_t> codes = all_codes_then_random(count, seed);
  std::vector<int8_t> input(in_offset + count + kGuardBytes, kGuard);
  std::copy(codes.begin(), codes.end(), input.begin() + static_cast<ptrdiff_t>(in_offset));
  std::vector<int8_t> output(kGuardBytes + out_offset + count + kGuardBytes, kGuard);
  int8_t* out = output.data() + kGuardBytes + out_offset;
  const int8_t* in = input.data() + in_offset;
  if (in_place) {
    std::copy(codes.begin(), codes.end(), out);
    in = out;
  }
  row.row(table.data(), in, out, count);
  const std::vector<int8_t> expected = expected_lookup(table, codes.data(), count);
  for (size_t i = 0; i < count; ++i) {
    if (out[i] != expected[i]) {
      std::printf("%s: count %zu, offsets %zu/%zu%s: out[%zu] = %d for code %d, expected %d\n",
                  row.name.c_str(), count, in_offset, out_offset, in_place ? " (in place)" : "", i,
                  out[i], codes[i], expected[i]);
      fail();
    }
  }
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (output[i] != kGuard || out[count + i] != kGuard) {
      std::printf("%s: count %zu: wrote outside the output\n", row.name.c_str(), count);
      fail();
    }
  }
}

void test_rows_match_the_table(void** /*state*/) {
  const std::vector<NamedRow> rows = rows_to_check();
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::vector<int8_t> table = random_codes(256, 100 + seed);
    for (const NamedRow& row : rows) {
      for (size_t count = 0; count <= 300; ++count) {
        check_row(row, table, count, 0, 0, false, seed * 1000 + static_cast<uint32_t>(count));
      }
      for (size_t count : {1, 63, 64, 65, 127, 128, 200, 256, 300}) {
        for (size_t in_offset = 1; in_offset < 4; ++in_offset) {
          check_row(row, table, count, in_offset, 3 - in_offset + 1, false, seed);
        }
        check_row(row, table, count, 0, 1, true, seed);
      }
    }
  }
}

// A table where the entry is the input code itself, and one with each entry's code bits
// flipped: a lookup mixing up halves or quarters of the table shows immediately.
void test_rows_on_structured_tables(void** /*state*/) {
  std::vector<int8_t> identity(256);
  std::vector<int8_t> flipped(256);
  for (int i = 0; i < 256; ++i) {
    identity[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
    flipped[static_cast<size_t>(i)] = static_cast<int8_t>(~(i - 128));
  }
  for (const NamedRow& row : rows_to_check()) {
    check_row(row, identity, 256, 0, 0, false, 7);
    check_row(row, flipped, 299, 1, 2, false, 8);
  }
}

void test_prepared_lookup_matches_the_table(void** /*state*/) {
  const std::vector<int8_t> table = random_codes(256, 42);
  // Several 64 KiB chunks and a tail.
  const size_t count = 3 * 64 * 1024 + 77;
  const std::vector<int8_t> codes = all_codes_then_random(count, 43);
  const std::vector<int8_t> expected = expected_lookup(table, codes.data(), count);
  std::vector<KernelVariant> variants = optimized_variants();
  if (kernels::cpu::kernel_variant_available(KernelVariant::kAvx512)) {
    variants.push_back(KernelVariant::kAvx512);
  }
  for (size_t threads : {1, 3}) {
    ThreadPool pool(threads);
    for (KernelVariant variant : variants) {
      auto kernel =
          kernels::cpu::prepare_lookup_int8(table.data(), static_cast<int64_t>(count), variant);
      assert_non_null(kernel.get());
      std::vector<int8_t> output(count, kGuard);
      kernel->run(codes.data(), output.data(), pool);
      if (output != expected) {
        std::printf("%s on %zu threads differs from the table\n",
                    kernels::cpu::kernel_variant_name(variant), threads);
        fail();
      }
      std::vector<int8_t> in_place = codes;
      kernel->run(in_place.data(), in_place.data(), pool);
      assert_true(in_place == expected);
    }
  }
}

void test_reference_and_empty_get_no_kernel(void** /*state*/) {
  const std::vector<int8_t> table = random_codes(256, 5);
  assert_null(
      kernels::cpu::prepare_lookup_int8(table.data(), 100, KernelVariant::kReference).get());
  assert_null(kernels::cpu::prepare_lookup_int8(table.data(), 0, KernelVariant::kPortable).get());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_match_the_table),
      cmocka_unit_test(test_rows_on_structured_tables),
      cmocka_unit_test(test_prepared_lookup_matches_the_table),
      cmocka_unit_test(test_reference_and_empty_get_no_kernel),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
