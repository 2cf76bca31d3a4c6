// The avx512 tiles' walk over a PrefetchRange (micro_kernels.h): one line into L2 per call (per
// depth step) while the range lasts. The functions are `static` for the reason
// avx512_float_helpers.h gives; they need no instruction set beyond the baseline's.
#pragma once

#include <immintrin.h>

#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

struct PrefetchCursor {
  const char* next;
  const char* end;
};

[[maybe_unused]] static PrefetchCursor prefetch_cursor(const PrefetchRange& range) {
  const char* start = static_cast<const char*>(range.start);
  return PrefetchCursor{start, start + range.bytes};
}

[[maybe_unused]] static void prefetch_line(PrefetchCursor& cursor) {
  if (cursor.next < cursor.end) {
    _mm_prefetch(cursor.next, _MM_HINT_T1);
    cursor.next += 64;
  }
}

}  // namespace orknn::kernels::cpu::optimized
