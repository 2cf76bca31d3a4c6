// Built with -O3 -fno-trapping-math -ffp-contract=off (exec/CMakeLists.txt). The encoding's
// selects (NaN to the zero point, the clamps) are float comparisons, which GCC keeps as
// branches while it must preserve floating-point exception flags; nothing here reads those
// flags, so without them the loop vectorizes (SSE2's 4 lanes on x86-64, NEON's on AArch64),
// division included: the scalar loop spent about 3 ns per element of a 640x640 RGB input,
// most of it in divss (bench_inputs_set). No contraction, so every product and sum rounds on
// its own, as in the scalar definition.
#include "exec/input_quantization.h"

// On x86-64 the two loops are also compiled for AVX2 (GCC's function multiversioning: the
// dynamic loader picks the clone once, from the CPU): SSE2 has no blend and no 32-bit min/max,
// so its selects cost several instructions each (the SSE2 loop took about 1 ns per element).
// Not under the sanitizers: the clones' resolver runs while the loader relocates the library,
// before a sanitizer's runtime is up (ThreadSanitizer builds crashed at start-up).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define ORKNN_INPUT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ORKNN_INPUT_CLONES
#endif

namespace orknn::exec {
namespace {

// One element: |scaled| is bounded to 1024 first (with |zero_point| <= 128 every value beyond
// saturates either way), inside which adding and subtracting 1.5 x 2^23 rounds half to even
// exactly; a NaN becomes 0 before the conversion (converting it would be undefined).
inline int8_t encode(float value, float scale, int32_t zero_point) {
  constexpr float kShift = 12582912.0f;  // 1.5 x 2^23: the float spacing is 1 around it
  const float scaled = value / scale;
  float bounded = scaled < -1024.0f ? -1024.0f : scaled;
  bounded = bounded > 1024.0f ? 1024.0f : bounded;
  const float rounded = (bounded + kShift) - kShift;
  const float finite = scaled == scaled ? rounded : 0.0f;
  int32_t code = static_cast<int32_t>(finite) + zero_point;
  code = code < -128 ? -128 : code;
  code = code > 127 ? 127 : code;
  return static_cast<int8_t>(code);
}

}  // namespace

ORKNN_INPUT_CLONES void quantize_input(const float* values, size_t count,
                                       const InputQuantization& quantization, int8_t* codes) {
  const float scale = quantization.scale;
  const int32_t zero_point = quantization.zero_point;
  for (size_t i = 0; i < count; ++i) codes[i] = encode(values[i], scale, zero_point);
}

ORKNN_INPUT_CLONES void normalize_and_quantize_input(const float* values, size_t count, float mean,
                                                     float inverse_std,
                                                     const InputQuantization& quantization,
                                                     int8_t* codes) {
  const float scale = quantization.scale;
  const int32_t zero_point = quantization.zero_point;
  for (size_t i = 0; i < count; ++i) {
    codes[i] = encode((values[i] - mean) * inverse_std, scale, zero_point);
  }
}

}  // namespace orknn::exec
