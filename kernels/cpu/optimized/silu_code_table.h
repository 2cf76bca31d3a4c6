// The int8 SiLU epilogue (docs/quantization.md 4.3) as a table. A layer's code is a function of
// real = float(double(acc) x D[c]) alone (reference::quantize_silu: the output scale and zero
// point are the layer's), and it changes at a few hundred reals only: where real x sigmoid(real)
// / output_scale crosses a half-integer. The table lists those reals, found and proven at build
// (silu_code_table.cc), in buckets of equal width that hold at most one each, so a row looks each
// code up with one bucket index, one compare and two loads instead of an exp and two divisions.
// Where the computed code jitters around a boundary (a few floats wide), the bucket marks those
// floats and their codes are computed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "optimized/micro_kernels.h"
#include "reference/convolution.h"

namespace orknn::kernels::cpu::optimized {

class SiluCodeTable {
 public:
  // The table of (output_scale, output_zero_point), or nothing where the proof does not go
  // through (a half-integer within rounding of SiLU's minimum, so that the computed codes
  // jitter; more than kMaximumBuckets buckets; scales or zero points outside the ranges the
  // argument covers): the caller then computes the SiLU.
  static std::optional<SiluCodeTable> build(float output_scale, int32_t output_zero_point);

  // Moving keeps the vectors' storage, so a moved table's view stays valid; copies would not.
  SiluCodeTable(SiluCodeTable&&) = default;
  SiluCodeTable& operator=(SiluCodeTable&&) = default;
  SiluCodeTable(const SiluCodeTable&) = delete;
  SiluCodeTable& operator=(const SiluCodeTable&) = delete;

  // The view the micro-kernel rows read, valid while this table lives.
  const SiluCodes& codes() const { return codes_; }
  size_t buckets() const { return threshold_keys_.size(); }

  static constexpr size_t kMaximumBuckets = 8192;

 private:
  SiluCodeTable() = default;

  std::vector<int32_t> threshold_keys_;
  std::vector<uint32_t> code_words_;
  SiluCodes codes_{};
};

// The table of a convolution's SiLU epilogue when `kernels`' SiLU row reads one (and the proof
// goes through), else nothing.
std::optional<SiluCodeTable> silu_code_table_for(const MicroKernels& kernels,
                                                 const reference::Int8Requantization& q);
// The codes of an optional table, or null.
inline const SiluCodes* codes_of(const std::optional<SiluCodeTable>& table) {
  return table ? &table->codes() : nullptr;
}

// The code of `real` from the table, with the operations the vector rows use (the portable form
// tests compare them with).
int8_t lookup_silu_code(const SiluCodes& codes, float real);

}  // namespace orknn::kernels::cpu::optimized
