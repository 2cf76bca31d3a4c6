// AArch64 Advanced SIMD (NEON) micro-kernels: the "neon" variant. NEON is part of every AArch64
// CPU, so this file needs no special flags; it is compiled into aarch64 builds only.
//
// float32 tile: 8 rows x 8 columns = 16 q-register accumulators; per depth step two loads of A
// (8 rows), two of B (8 columns) and 16 lane FMAs. int16-pair tile: the same 8 x 8 shape in
// int32 lanes; vld2q de-interleaves a B step into its even-depth and odd-depth halves and
// vmlal_laneq multiplies each int16 exactly into int32, so the sums are exact (int32 addition
// is associative, see docs/cpu-kernels.md) and bit-exact with the reference.
#include <arm_neon.h>

#include "arm/neon_float_activation.h"
#include "core/reproducible_exp.h"
#include "optimized/binary_operation.h"
#include "optimized/micro_kernels.h"
#include "reference/convolution.h"

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kRows = 8;
constexpr size_t kColumns = 8;

using neon_float::activate;

// Accumulator row r (columns 0-3 and 4-7) += A(r) x B step, A(r) a lane of a 4-row vector.
#define ORKNN_FLOAT_ROW(r, a_vector, lane)                      \
  sums[r][0] = vfmaq_laneq_f32(sums[r][0], b0, a_vector, lane); \
  sums[r][1] = vfmaq_laneq_f32(sums[r][1], b1, a_vector, lane)

// Row r, column j of a tile on the scalar path (a partial panel, and the column tiles below):
// C, or the row's bias plus the column's, plus the sum; then the activation.
float finished_value(const FloatTile& tile, size_t r, size_t j, float sum) {
  float value;
  if (tile.accumulate) {
    value = tile.c[r * tile.c_stride + j] + sum;
  } else {
    const float column_bias = tile.column_bias ? tile.column_bias[j] : 0.0f;
    value = ((tile.row_bias ? tile.row_bias[r] : 0.0f) + column_bias) + sum;
  }
  return tile.activation ? activate_float(*tile.activation, value) : value;
}

void float_tile(const FloatTile& tile) {
  float32x4_t sums[kRows][2];
  for (size_t r = 0; r < kRows; ++r) sums[r][0] = sums[r][1] = vdupq_n_f32(0.0f);
  const float* a = tile.a;
  const float* b = tile.b;
  for (size_t k = 0; k < tile.depth; ++k, a += kRows, b += tile.b_stride) {
    const float32x4_t a_low = vld1q_f32(a);
    const float32x4_t a_high = vld1q_f32(a + 4);
    const float32x4_t b0 = vld1q_f32(b);
    const float32x4_t b1 = vld1q_f32(b + 4);
    ORKNN_FLOAT_ROW(0, a_low, 0);
    ORKNN_FLOAT_ROW(1, a_low, 1);
    ORKNN_FLOAT_ROW(2, a_low, 2);
    ORKNN_FLOAT_ROW(3, a_low, 3);
    ORKNN_FLOAT_ROW(4, a_high, 0);
    ORKNN_FLOAT_ROW(5, a_high, 1);
    ORKNN_FLOAT_ROW(6, a_high, 2);
    ORKNN_FLOAT_ROW(7, a_high, 3);
  }
  float32x4_t column_init[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  float column_bias[kColumns] = {};
  if (tile.column_bias && !tile.accumulate) {
    for (size_t j = 0; j < tile.columns; ++j) column_bias[j] = tile.column_bias[j];
    column_init[0] = vld1q_f32(column_bias);
    column_init[1] = vld1q_f32(column_bias + 4);
  }
  for (size_t r = 0; r < tile.rows; ++r) {
    float* c = tile.c + r * tile.c_stride;
    float32x4_t values[2];
    if (tile.columns == kColumns) {
      for (size_t h = 0; h < 2; ++h) {
        float32x4_t init = column_init[h];
        if (tile.accumulate) {
          init = vld1q_f32(c + 4 * h);
        } else if (tile.row_bias) {
          init = vaddq_f32(vdupq_n_f32(tile.row_bias[r]), init);
        }
        values[h] = vaddq_f32(init, sums[r][h]);
        if (tile.activation) values[h] = activate(*tile.activation, values[h]);
        vst1q_f32(c + 4 * h, values[h]);
      }
      continue;
    }
    float row_sums[kColumns];
    vst1q_f32(row_sums, sums[r][0]);
    vst1q_f32(row_sums + 4, sums[r][1]);
    for (size_t j = 0; j < tile.columns; ++j) c[j] = finished_value(tile, r, j, row_sums[j]);
  }
}
#undef ORKNN_FLOAT_ROW

// Tiles of one real column (a 7x7 plane's last panel: 49 = 6 x 8 + 1 pixels), which float_tile
// runs as 8 columns: 16 FMAs per depth step for one column. Here a row panel's 8 rows are the
// lanes of two vectors, each step's pair times the column's B value: 2 FMAs per step. Every row's
// sum starts at 0 and takes each step in order by one fused multiply-add of the same two
// operands, and C or the bias is added after, as in float_tile, so the bits are float_tile's.
// A call takes up to four row panels on the same B panel: 8 independent chains, about what the
// FMA latency needs (Cortex-A76: 4 cycles, 2 pipes). A step of A is 8 floats, read whole, so
// nothing past a panel is read. (Written in session 16; tested under qemu, not timed on a board.)
template <size_t kPanels>
void column_panels(const FloatTile* tiles) {
  float32x4_t sums[kPanels][2];
  const float* a[kPanels];
  for (size_t p = 0; p < kPanels; ++p) {
    sums[p][0] = sums[p][1] = vdupq_n_f32(0.0f);
    a[p] = tiles[p].a;
  }
  const float* b = tiles[0].b;
  for (size_t k = 0; k < tiles[0].depth; ++k, b += tiles[0].b_stride) {
    const float column = *b;
    for (size_t p = 0; p < kPanels; ++p) {
      sums[p][0] = vfmaq_n_f32(sums[p][0], vld1q_f32(a[p] + k * kRows), column);
      sums[p][1] = vfmaq_n_f32(sums[p][1], vld1q_f32(a[p] + k * kRows + 4), column);
    }
  }
  for (size_t p = 0; p < kPanels; ++p) {
    float row_sums[kRows];
    vst1q_f32(row_sums, sums[p][0]);
    vst1q_f32(row_sums + 4, sums[p][1]);
    for (size_t r = 0; r < tiles[p].rows; ++r) {
      tiles[p].c[r * tiles[p].c_stride] = finished_value(tiles[p], r, 0, row_sums[r]);
    }
  }
}

void float_column_tiles(const FloatTile* tiles, size_t count) {
  static_assert(kFloatColumnTileGroup == 4, "the cases below take up to four panels");
  switch (count) {
    case 1:
      return column_panels<1>(tiles);
    case 2:
      return column_panels<2>(tiles);
    case 3:
      return column_panels<3>(tiles);
    default:
      return column_panels<4>(tiles);
  }
}

// Row r += its two pair members times the even and odd halves of a B step.
#define ORKNN_PAIR_ROW(r, a_vector, lane)                                                     \
  sums[r][0] = vmlal_laneq_s16(sums[r][0], vget_low_s16(b.val[0]), a_vector, 2 * (lane));     \
  sums[r][0] = vmlal_laneq_s16(sums[r][0], vget_low_s16(b.val[1]), a_vector, 2 * (lane) + 1); \
  sums[r][1] = vmlal_high_laneq_s16(sums[r][1], b.val[0], a_vector, 2 * (lane));              \
  sums[r][1] = vmlal_high_laneq_s16(sums[r][1], b.val[1], a_vector, 2 * (lane) + 1)

void int16_pair_tile(const Int16PairTile& tile) {
  int32x4_t sums[kRows][2];
  for (size_t r = 0; r < kRows; ++r) sums[r][0] = sums[r][1] = vdupq_n_s32(0);
  const int16_t* a = tile.a;
  const int16_t* b_panel = tile.b;
  for (size_t p = 0; p < tile.depth_pairs; ++p, a += 2 * kRows, b_panel += 2 * kColumns) {
    const int16x8_t a_low = vld1q_s16(a);       // rows 0-3, both pair members
    const int16x8_t a_high = vld1q_s16(a + 8);  // rows 4-7
    const int16x8x2_t b = vld2q_s16(b_panel);   // val[0]: even depth, val[1]: odd depth
    ORKNN_PAIR_ROW(0, a_low, 0);
    ORKNN_PAIR_ROW(1, a_low, 1);
    ORKNN_PAIR_ROW(2, a_low, 2);
    ORKNN_PAIR_ROW(3, a_low, 3);
    ORKNN_PAIR_ROW(4, a_high, 0);
    ORKNN_PAIR_ROW(5, a_high, 1);
    ORKNN_PAIR_ROW(6, a_high, 2);
    ORKNN_PAIR_ROW(7, a_high, 3);
  }
  int32_t column_bias[kColumns] = {};
  if (tile.column_bias && !tile.accumulate) {
    for (size_t j = 0; j < tile.columns; ++j) column_bias[j] = tile.column_bias[j];
  }
  for (size_t r = 0; r < tile.rows; ++r) {
    int32_t* c = tile.c + r * tile.c_stride;
    int32_t row_sums[kColumns];
    vst1q_s32(row_sums, sums[r][0]);
    vst1q_s32(row_sums + 4, sums[r][1]);
    if (tile.accumulate) {
      for (size_t j = 0; j < tile.columns; ++j) c[j] += row_sums[j];
    } else {
      const int32_t row_bias = tile.row_bias ? tile.row_bias[r] : 0;
      for (size_t j = 0; j < tile.columns; ++j) c[j] = row_bias + column_bias[j] + row_sums[j];
    }
  }
}
#undef ORKNN_PAIR_ROW

void pack_int8_pairs(const Int8PairRows& rows) {
  const size_t panels = (rows.columns + kColumns - 1) / kColumns;
  const int16x8_t zero_point = vdupq_n_s16(static_cast<int16_t>(rows.zero_point));
  for (size_t panel = 0; panel < panels; ++panel) {
    int16_t* out = rows.out + panel * rows.panel_stride;
    const size_t first = panel * kColumns;
    if (first + kColumns <= rows.columns) {
      int16x8x2_t pair;
      pair.val[0] = vsubq_s16(vmovl_s8(vld1_s8(rows.row0 + first)), zero_point);
      pair.val[1] =
          rows.row1 ? vsubq_s16(vmovl_s8(vld1_s8(rows.row1 + first)), zero_point) : vdupq_n_s16(0);
      vst2q_s16(out, pair);
      continue;
    }
    for (size_t j = 0; j < kColumns; ++j) {
      const size_t column = first + j;
      const bool real = column < rows.columns;
      out[2 * j] = real ? static_cast<int16_t>(rows.row0[column] - rows.zero_point) : 0;
      out[2 * j + 1] =
          real && rows.row1 ? static_cast<int16_t>(rows.row1[column] - rows.zero_point) : 0;
    }
  }
}

// Two accumulators times their multipliers in double, rounded half to even (FRINTN, as
// nearbyint in the default rounding mode).
int32x2_t scale_round(int32x2_t accumulators, float32x2_t multipliers) {
  const float64x2_t product =
      vmulq_f64(vcvtq_f64_s64(vmovl_s32(accumulators)), vcvt_f64_f32(multipliers));
  return vmovn_s64(vcvtq_s64_f64(vrndnq_f64(product)));
}

void requantize_row(const RequantizeRow& row) {
  size_t i = 0;
  if (row.small_multipliers) {
    // |accumulator x multiplier| < 2^30: the +-1e9 bound is moot and the rest is exact in int32.
    const int32_t minimum =
        row.output_minimum <= row.output_maximum ? row.output_minimum : row.output_maximum;
    const int32x4_t zero_point = vdupq_n_s32(row.output_zero_point);
    const int32x4_t low = vdupq_n_s32(minimum);
    const int32x4_t high = vdupq_n_s32(row.output_maximum);
    const float32x4_t uniform = vdupq_n_f32(row.multipliers[0]);
    for (; i + 8 <= row.count; i += 8) {
      int16x4_t halves[2];
      for (size_t h = 0; h < 2; ++h) {
        const int32x4_t accumulators = vld1q_s32(row.accumulators + i + 4 * h);
        const float32x4_t multipliers =
            row.per_element ? vld1q_f32(row.multipliers + i + 4 * h) : uniform;
        int32x4_t rounded =
            vcombine_s32(scale_round(vget_low_s32(accumulators), vget_low_f32(multipliers)),
                         scale_round(vget_high_s32(accumulators), vget_high_f32(multipliers)));
        rounded = vminq_s32(vmaxq_s32(vaddq_s32(rounded, zero_point), low), high);
        halves[h] = vqmovn_s32(rounded);
      }
      vst1_s8(row.output + i, vqmovn_s16(vcombine_s16(halves[0], halves[1])));
    }
  }
  for (; i < row.count; ++i) {
    row.output[i] =
        reference::requantize(row.accumulators[i], row.multipliers[row.per_element ? i : 0],
                              row.output_zero_point, row.output_minimum, row.output_maximum);
  }
}

// Four outputs of a row at a time; the plane's slack (8 floats per phase row) covers the
// vector reads of the last group.
void depthwise_plane(const DepthwisePlane& plane) {
  const size_t taps = plane.kernel_height * plane.kernel_width;
  for (size_t oh = 0; oh < plane.output_height; ++oh) {
    float* out = plane.output + oh * plane.output_stride;
    for (size_t o = 0; o < plane.output_width; o += 4) {
      float32x4_t sum = vdupq_n_f32(plane.bias);
      for (size_t t = 0; t < taps; ++t) {
        const size_t i = t / plane.kernel_width;
        const size_t column = (t % plane.kernel_width) * plane.dilation_width;
        const float* phase = plane.input + (column % plane.stride_width) * plane.phase_stride;
        const size_t row =
            (oh * plane.stride_height + i * plane.dilation_height) * plane.input_stride;
        sum = vfmaq_n_f32(sum, vld1q_f32(phase + row + o + column / plane.stride_width),
                          plane.weights[t]);
      }
      if (plane.activation) sum = activate(*plane.activation, sum);
      if (o + 4 <= plane.output_width) {
        vst1q_f32(out + o, sum);
      } else {
        float values[4];
        vst1q_f32(values, sum);
        for (size_t j = 0; o + j < plane.output_width; ++j) out[o + j] = values[j];
      }
    }
  }
}

template <int Operation>
float32x4_t binary_vector(float32x4_t a, float32x4_t b) {
  if constexpr (Operation == 0) return vaddq_f32(a, b);
  if constexpr (Operation == 1) return vsubq_f32(a, b);
  if constexpr (Operation == 2) return vmulq_f32(a, b);
  return vdivq_f32(a, b);
}

// AArch64 NEON arithmetic is IEEE (vdivq_f32 included), so lanes round as the scalar tail does.
template <int Operation>
void binary_row_of(const BinaryRow& row) {
  const float* a = row.a;
  const float* b = row.b;
  float* out = row.out;
  const size_t a_step = row.a_step;
  const size_t b_step = row.b_step;
  const float32x4_t a_broadcast = vdupq_n_f32(a[0]);
  const float32x4_t b_broadcast = vdupq_n_f32(b[0]);
  size_t i = 0;
  if (a_step == 1 && b_step == 1) {
    for (; i + 4 <= row.count; i += 4) {
      vst1q_f32(out + i, binary_vector<Operation>(vld1q_f32(a + i), vld1q_f32(b + i)));
    }
  } else if (a_step == 1) {
    for (; i + 4 <= row.count; i += 4) {
      vst1q_f32(out + i, binary_vector<Operation>(vld1q_f32(a + i), b_broadcast));
    }
  } else if (b_step == 1) {
    for (; i + 4 <= row.count; i += 4) {
      vst1q_f32(out + i, binary_vector<Operation>(a_broadcast, vld1q_f32(b + i)));
    }
  } else {
    const float32x4_t value = binary_vector<Operation>(a_broadcast, b_broadcast);
    for (; i + 4 <= row.count; i += 4) vst1q_f32(out + i, value);
  }
  for (; i < row.count; ++i)
    out[i] = apply_binary_operation<Operation>(a[i * a_step], b[i * b_step]);
}

void binary_row(const BinaryRow& row) {
  with_binary_operation(row.operation,
                        [&](auto operation) { binary_row_of<decltype(operation)::value>(row); });
}

// Pooling rows; on numbers vmaxq agrees with the scalar tail and the reference's comparison.
void max_row_float(float* accumulator, const float* row, size_t count) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    vst1q_f32(accumulator + i, vmaxq_f32(vld1q_f32(accumulator + i), vld1q_f32(row + i)));
  }
  for (; i < count; ++i) accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
}

void max_row_int8(int8_t* accumulator, const int8_t* row, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    vst1q_s8(accumulator + i, vmaxq_s8(vld1q_s8(accumulator + i), vld1q_s8(row + i)));
  }
  for (; i < count; ++i) accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
}

void add_row_float(float* accumulator, const float* row, size_t count) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    vst1q_f32(accumulator + i, vaddq_f32(vld1q_f32(accumulator + i), vld1q_f32(row + i)));
  }
  for (; i < count; ++i) accumulator[i] += row[i];
}

// exp(x) for four lanes, the AVX2 file's method: x = n ln2 + r (ln2 in two parts), e^r by the
// degree-6 Cephes expf polynomial, 2^n through the exponent bits; x clamped so 2^n is normal.
float32x4_t exp_lanes(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.3365f)), vdupq_n_f32(88.3762f));
  const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
  r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), vmulq_f32(p, r), r);
  const int32x4_t exponent = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(exponent));
}

float32x4_t select_if_less(float32x4_t x, float32x4_t bound, float32x4_t replacement) {
  return vbslq_f32(vcltq_f32(x, bound), replacement, x);
}

// The reference's two sigmoid forms with e = e^-|x| (see the AVX2 file).
float32x4_t sigmoid_lanes(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t e = exp_lanes(vnegq_f32(vabsq_f32(x)));
  const float32x4_t numerator = vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), e, one);
  return vdivq_f32(numerator, vaddq_f32(one, e));
}

// tanh |x| = (1 - e) / (1 + e), e = e^-2|x|, for |x| >= 0.4; the odd series to x^9 below.
float32x4_t tanh_lanes(float32x4_t x) {
  const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
  const float32x4_t absolute = vabsq_f32(x);
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t e = exp_lanes(vmulq_f32(absolute, vdupq_n_f32(-2.0f)));
  const float32x4_t large = vdivq_f32(vsubq_f32(one, e), vaddq_f32(one, e));
  const float32x4_t square = vmulq_f32(absolute, absolute);
  float32x4_t series = vdupq_n_f32(62.0f / 2835.0f);
  series = vfmaq_f32(vdupq_n_f32(-17.0f / 315.0f), series, square);
  series = vfmaq_f32(vdupq_n_f32(2.0f / 15.0f), series, square);
  series = vfmaq_f32(vdupq_n_f32(-1.0f / 3.0f), series, square);
  const float32x4_t small = vfmaq_f32(absolute, vmulq_f32(series, square), absolute);
  const float32x4_t magnitude = vbslq_f32(vcltq_f32(absolute, vdupq_n_f32(0.4f)), small, large);
  return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(magnitude), sign));
}

// Relu, Clip, LeakyRelu, HardSwish: the reference's comparisons and roundings (as built for
// AArch64).
float32x4_t unary_lanes(const UnaryRow& row, float32x4_t x) {
  const float32x4_t zero = vdupq_n_f32(0.0f);
  switch (row.operation) {
    case 0:
      return select_if_less(x, zero, zero);
    case 1: {
      const float32x4_t minimum = vdupq_n_f32(row.minimum);
      const float32x4_t maximum = vdupq_n_f32(row.maximum);
      const float32x4_t low = select_if_less(x, minimum, minimum);
      return vbslq_f32(vcgtq_f32(low, maximum), maximum, low);
    }
    case 2:
      return select_if_less(x, zero, vmulq_f32(vdupq_n_f32(row.alpha), x));
    case 3:
      return sigmoid_lanes(x);
    case 4: {
      const float32x4_t one = vdupq_n_f32(1.0f);
      // One fused x / 6 + 1/2: compilers contract the reference's `x * (1.0f / 6.0f) + 0.5f`
      // on AArch64 (GCC's default -ffp-contract=fast, clang's =on), so its gate rounds once.
      float32x4_t gate = vfmaq_f32(vdupq_n_f32(0.5f), x, vdupq_n_f32(1.0f / 6.0f));
      gate = select_if_less(gate, zero, zero);
      gate = vbslq_f32(vcgtq_f32(gate, one), one, gate);
      return vmulq_f32(x, gate);
    }
    case 5:
      return vmulq_f32(x, sigmoid_lanes(vmulq_f32(vdupq_n_f32(row.alpha), x)));
    default:
      return tanh_lanes(x);
  }
}

// The tail runs on a copy padded to four lanes, so every element takes the same path.
void unary_row(const UnaryRow& row) {
  size_t i = 0;
  for (; i + 4 <= row.count; i += 4)
    vst1q_f32(row.out + i, unary_lanes(row, vld1q_f32(row.in + i)));
  const size_t rest = row.count - i;
  if (rest == 0) return;
  float in[4] = {};
  float out[4];
  for (size_t j = 0; j < rest; ++j) in[j] = row.in[i + j];
  vst1q_f32(out, unary_lanes(row, vld1q_f32(in)));
  for (size_t j = 0; j < rest; ++j) row.out[i + j] = out[j];
}

// Eight codes of an int8 operand decoded to float in two quads, or its broadcast first value.
void decode_codes(const QuantizedOperand& operand, size_t index, float32x4_t broadcast,
                  float32x4_t* out_low, float32x4_t* out_high) {
  if (operand.step == 0) {
    *out_low = broadcast;
    *out_high = broadcast;
    return;
  }
  const int16x8_t wide = vmovl_s8(vld1_s8(operand.codes + index));
  const int32x4_t zero_point = vdupq_n_s32(operand.zero_point);
  const float32x4_t scale = vdupq_n_f32(operand.scale);
  *out_low = vmulq_f32(vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_low_s16(wide)), zero_point)), scale);
  *out_high =
      vmulq_f32(vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_high_s16(wide)), zero_point)), scale);
}

// graph/tensor_conversion.cc's encoding of four results: FCVTNS rounds half to even, as
// nearbyint in the default mode; a NaN takes the zero point.
int32x4_t encode_quad(float32x4_t value, float scale, int32_t zero_point) {
  const float32x4_t scaled = vdivq_f32(value, vdupq_n_f32(scale));
  const float32x4_t bounded = vminq_f32(vmaxq_f32(scaled, vdupq_n_f32(-1e9f)), vdupq_n_f32(1e9f));
  const int32x4_t zero = vdupq_n_s32(zero_point);
  const int32x4_t code = vaddq_s32(vcvtnq_s32_f32(bounded), zero);
  return vbslq_s32(vceqq_f32(scaled, scaled), code, zero);
}

template <int Operation>
void quantized_binary_block(const QuantizedBinaryRow& row, size_t index, float32x4_t a_broadcast,
                            float32x4_t b_broadcast, int8_t* out) {
  float32x4_t a_low, a_high, b_low, b_high;
  decode_codes(row.a, index, a_broadcast, &a_low, &a_high);
  decode_codes(row.b, index, b_broadcast, &b_low, &b_high);
  const int32x4_t low =
      encode_quad(binary_vector<Operation>(a_low, b_low), row.out_scale, row.out_zero_point);
  const int32x4_t high =
      encode_quad(binary_vector<Operation>(a_high, b_high), row.out_scale, row.out_zero_point);
  vst1_s8(out, vqmovn_s16(vcombine_s16(vqmovn_s32(low), vqmovn_s32(high))));
}

float decode_one(const QuantizedOperand& operand) {
  return static_cast<float>(static_cast<int32_t>(operand.codes[0]) - operand.zero_point) *
         operand.scale;
}

// A row of int8 operands (QuantizedBinaryRow, QuantizedAddRow) in blocks of eight:
// block(row, index, out) writes out[0..8) from the operands at `index`. The last count % 8
// elements run through the same block on copies padded to eight.
template <typename Row, typename Block>
void in_blocks_of_eight(const Row& row, Block&& block) {
  // rest computed as a remainder so the compiler sees it is below 8 (the copies below).
  const size_t rest = row.count % 8;
  const size_t i = row.count - rest;
  for (size_t index = 0; index < i; index += 8) block(row, index, row.out + index);
  if (rest == 0) return;
  int8_t a_codes[8] = {};
  int8_t b_codes[8] = {};
  int8_t out[8];
  for (size_t j = 0; j < rest; ++j) {
    a_codes[j] = row.a.codes[(i + j) * row.a.step];
    b_codes[j] = row.b.codes[(i + j) * row.b.step];
  }
  Row tail = row;
  tail.a.codes = a_codes;
  tail.b.codes = b_codes;
  block(tail, 0, out);
  for (size_t j = 0; j < rest; ++j) row.out[i + j] = out[j];
}

template <int Operation>
void quantized_binary_row_of(const QuantizedBinaryRow& row) {
  const float32x4_t a_broadcast = vdupq_n_f32(decode_one(row.a));
  const float32x4_t b_broadcast = vdupq_n_f32(decode_one(row.b));
  in_blocks_of_eight(row, [&](const QuantizedBinaryRow& part, size_t index, int8_t* out) {
    quantized_binary_block<Operation>(part, index, a_broadcast, b_broadcast, out);
  });
}

void quantized_binary_row(const QuantizedBinaryRow& row) {
  with_binary_operation(row.operation, [&](auto operation) {
    quantized_binary_row_of<decltype(operation)::value>(row);
  });
}

// int8 Add/Sub on the codes (micro_kernels.h QuantizedAddRow), eight outputs per block: two
// products and a sum, each rounded (this file is compiled without FMA contraction), FCVTNS
// rounds half to even; the row's precondition keeps every result inside int32 without a clamp.
int32x4_t quantized_add_quad(int16x4_t a_codes, int16x4_t b_codes, const QuantizedAddRow& row) {
  const float32x4_t a_offsets =
      vcvtq_f32_s32(vsubq_s32(vmovl_s16(a_codes), vdupq_n_s32(row.a.zero_point)));
  const float32x4_t b_offsets =
      vcvtq_f32_s32(vsubq_s32(vmovl_s16(b_codes), vdupq_n_s32(row.b.zero_point)));
  const float32x4_t sums = vaddq_f32(vmulq_f32(a_offsets, vdupq_n_f32(row.a.scale)),
                                     vmulq_f32(b_offsets, vdupq_n_f32(row.b.scale)));
  return vaddq_s32(vcvtnq_s32_f32(sums), vdupq_n_s32(row.out_zero_point));
}

// Eight codes of an operand widened, or its first code repeated.
int16x8_t operand_codes8(const QuantizedOperand& operand, size_t index) {
  return operand.step == 0 ? vdupq_n_s16(operand.codes[0])
                           : vmovl_s8(vld1_s8(operand.codes + index));
}

void quantized_add_block(const QuantizedAddRow& row, size_t index, int8_t* out) {
  const int16x8_t a = operand_codes8(row.a, index);
  const int16x8_t b = operand_codes8(row.b, index);
  const int32x4_t low = quantized_add_quad(vget_low_s16(a), vget_low_s16(b), row);
  const int32x4_t high = quantized_add_quad(vget_high_s16(a), vget_high_s16(b), row);
  const int8x8_t codes = vqmovn_s16(vcombine_s16(vqmovn_s32(low), vqmovn_s32(high)));
  vst1_s8(out, vmin_s8(vmax_s8(codes, vdup_n_s8(row.out_minimum)), vdup_n_s8(row.out_maximum)));
}

void quantized_add_row(const QuantizedAddRow& row) {
  in_blocks_of_eight(row, quantized_add_block);
}

// ---- the reproducible exp and the int8 SiLU epilogue ----------------------------------------

// orknn::reproducible_exp (core/reproducible_exp.cc) on four lanes, operation for operation in
// its order, each one IEEE float operation (this file is built without contraction, and uses
// no FMA intrinsic here), so the bits are the scalar function's. NaN lanes take x + x at the
// end, as the scalar code does (FMAX/FMIN propagate them, and FCVTZS makes 0 of them).
float32x4_t pow2_lanes(int32x4_t k) {
  return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23));
}

// The exp's middle steps on x (clamped or known in range): n = round(x log2 e) and the
// polynomial y ~ e^(x - n ln 2), both in the scalar order; e^x is y x 2^n.
float32x4_t reduced_exp_lanes(float32x4_t x, float32x4_t* n_out) {
  namespace c = reproducible_exp_constants;
  float32x4_t n = vmulq_f32(x, vdupq_n_f32(c::kLog2E));
  n = vaddq_f32(n, vdupq_n_f32(c::kRoundingShift));
  n = vsubq_f32(n, vdupq_n_f32(c::kRoundingShift));
  float32x4_t r = vsubq_f32(x, vmulq_f32(n, vdupq_n_f32(c::kLn2High)));
  r = vsubq_f32(r, vmulq_f32(n, vdupq_n_f32(c::kLn2Low)));
  float32x4_t p = vdupq_n_f32(c::kPolynomial5);
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(c::kPolynomial4));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(c::kPolynomial3));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(c::kPolynomial2));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(c::kPolynomial1));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(c::kPolynomial0));
  float32x4_t y = vmulq_f32(p, vmulq_f32(r, r));
  y = vaddq_f32(y, r);
  *n_out = n;
  return vaddq_f32(y, vdupq_n_f32(1.0f));
}

float32x4_t reproducible_exp_lanes(float32x4_t input) {
  namespace c = reproducible_exp_constants;
  const uint32x4_t is_number = vceqq_f32(input, input);
  float32x4_t x = vmaxq_f32(input, vdupq_n_f32(c::kLowest));
  x = vminq_f32(x, vdupq_n_f32(c::kHighest));
  float32x4_t n;
  float32x4_t y = reduced_exp_lanes(x, &n);
  const int32x4_t k = vcvtq_s32_f32(n);  // n is an integer already
  const int32x4_t first = vshrq_n_s32(k, 1);
  y = vmulq_f32(y, pow2_lanes(first));
  y = vmulq_f32(y, pow2_lanes(vsubq_s32(k, first)));
  return vbslq_f32(is_number, y, vaddq_f32(input, input));
}

void reproducible_exp_row(const float* in, float* out, size_t count) {
  const size_t rest = count % 4;
  const size_t whole = count - rest;
  for (size_t i = 0; i < whole; i += 4)
    vst1q_f32(out + i, reproducible_exp_lanes(vld1q_f32(in + i)));
  if (rest == 0) return;
  float staging[4] = {};
  for (size_t j = 0; j < rest; ++j) staging[j] = in[whole + j];
  vst1q_f32(staging, reproducible_exp_lanes(vld1q_f32(staging)));
  for (size_t j = 0; j < rest; ++j) out[whole + j] = staging[j];
}

// reproducible_exp for arguments known to lie in [-87, 0] (the finite SiLU rows below): the
// scalar steps without the clamps and the NaN test, and 2^n in one multiplication. n =
// round(x log2 e) is then at least -126, so 2^n is a normal float and y x 2^n rounds once, as
// the scalar code's (y x 2^floor(n/2)) x 2^(n - floor(n/2)) does (its first product is exact).
float32x4_t bounded_exp_lanes(float32x4_t x) {
  float32x4_t n;
  const float32x4_t y = reduced_exp_lanes(x, &n);
  return vmulq_f32(y, pow2_lanes(vcvtq_s32_f32(n)));
}

// real = float(double(acc) x double(D)) on four lanes (FCVTN rounds to nearest even).
float32x4_t silu_reals_in_double(int32x4_t accumulators, float64x2_t scale) {
  const float32x2_t low =
      vcvt_f32_f64(vmulq_f64(vcvtq_f64_s64(vmovl_s32(vget_low_s32(accumulators))), scale));
  const float32x2_t high =
      vcvt_f32_f64(vmulq_f64(vcvtq_f64_s64(vmovl_s32(vget_high_s32(accumulators))), scale));
  return vcombine_f32(low, high);
}

// Four outputs of reference::requantize_silu from their reals: the sigmoid on e = e^-|real|,
// real x sigmoid, then the one quantization rule (FCVTNS rounds half to even); the zero point
// is clamped to +-2^21 by the caller, which cannot change a saturated result.
//
// kFinite: a row of silu_row_is_finite (micro_kernels.h, which says why this form gives the
// same codes): no NaN tests, and reals below -87 raised to -87 for bounded_exp_lanes.
template <bool kFinite>
int32x4_t requantize_silu4(float32x4_t real, float32x4_t output_scale, int32x4_t zero_point) {
  float32x4_t e;
  if constexpr (kFinite) {
    real = vmaxq_f32(real, vdupq_n_f32(-87.0f));
    e = bounded_exp_lanes(vmaxq_f32(vnegq_f32(vabsq_f32(real)), vdupq_n_f32(-87.0f)));
  } else {
    e = reproducible_exp_lanes(vnegq_f32(vabsq_f32(real)));
  }
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t numerator = vbslq_f32(vcltq_f32(real, vdupq_n_f32(0.0f)), e, one);
  const float32x4_t activated = vmulq_f32(real, vdivq_f32(numerator, vaddq_f32(one, e)));
  const float32x4_t scaled = vdivq_f32(activated, output_scale);
  const float32x4_t bounded = vminq_f32(vmaxq_f32(scaled, vdupq_n_f32(-1e6f)), vdupq_n_f32(1e6f));
  const int32x4_t code = vaddq_s32(vcvtnq_s32_f32(bounded), zero_point);
  if constexpr (kFinite) return code;
  return vbslq_s32(vceqq_f32(scaled, scaled), code, zero_point);
}

template <bool kFinite>
void requantize_silu_rows(const RequantizeSiluRow& row) {
  constexpr int32_t kZeroPointBound = 1 << 21;
  int32_t clamped = row.output_zero_point;
  clamped = clamped < -kZeroPointBound ? -kZeroPointBound : clamped;
  clamped = clamped > kZeroPointBound ? kZeroPointBound : clamped;
  const float64x2_t scale = vdupq_n_f64(static_cast<double>(row.scale));
  const float32x4_t float_scale = vdupq_n_f32(row.scale);
  const float32x4_t output_scale = vdupq_n_f32(row.output_scale);
  const int32x4_t zero_point = vdupq_n_s32(clamped);
  const int32x4_t edge = vdupq_n_s32(1 << 24);
  const uint32x4_t span = vdupq_n_u32(1u << 25);
  const size_t rest = row.count % 8;
  const size_t whole = row.count - rest;
  int32_t staging[8] = {};
  int8_t output[8];
  for (size_t i = 0; i <= whole; i += 8) {
    const bool tail = i == whole;
    if (tail && rest == 0) break;
    const int32_t* accumulators = row.accumulators + i;
    if (tail) {
      for (size_t j = 0; j < rest; ++j) staging[j] = row.accumulators[i + j];
      accumulators = staging;
    }
    const int32x4_t first = vld1q_s32(accumulators);
    const int32x4_t second = vld1q_s32(accumulators + 4);
    // With every |acc| <= 2^24, acc and D are exact floats and their double product is exact
    // (24 + 24 bits), so rounding it to float is the one rounding of a float multiplication.
    const uint32x4_t outside =
        vorrq_u32(vcgtq_u32(vreinterpretq_u32_s32(vaddq_s32(first, edge)), span),
                  vcgtq_u32(vreinterpretq_u32_s32(vaddq_s32(second, edge)), span));
    float32x4_t low_reals, high_reals;
    if (vmaxvq_u32(outside) == 0) {
      low_reals = vmulq_f32(vcvtq_f32_s32(first), float_scale);
      high_reals = vmulq_f32(vcvtq_f32_s32(second), float_scale);
    } else {
      low_reals = silu_reals_in_double(first, scale);
      high_reals = silu_reals_in_double(second, scale);
    }
    const int32x4_t low = requantize_silu4<kFinite>(low_reals, output_scale, zero_point);
    const int32x4_t high = requantize_silu4<kFinite>(high_reals, output_scale, zero_point);
    int8_t* out = tail ? output : row.output + i;
    vst1_s8(out, vqmovn_s16(vcombine_s16(vqmovn_s32(low), vqmovn_s32(high))));
    if (tail) {
      for (size_t j = 0; j < rest; ++j) row.output[i + j] = output[j];
    }
  }
}

void requantize_silu_row(const RequantizeSiluRow& row) {
  if (silu_row_is_finite(row)) {
    requantize_silu_rows<true>(row);
  } else {
    requantize_silu_rows<false>(row);
  }
}

// ---- int8 depthwise: widening the input, narrowing the sums ----------------------------------

// Eight int8 values widened to float offsets from the zero point.
void store_widened(int8x8_t values, int32x4_t zero_point, float* out) {
  const int16x8_t wide = vmovl_s8(values);
  vst1q_f32(out, vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_low_s16(wide)), zero_point)));
  vst1q_f32(out + 4, vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_high_s16(wide)), zero_point)));
}

void widen_int8_row(const WidenInt8Row& row) {
  const int32x4_t zero_point = vdupq_n_s32(row.zero_point);
  size_t i = 0;
  if (row.in_step == 1) {
    for (; i + 8 <= row.count; i += 8) store_widened(vld1_s8(row.in + i), zero_point, row.out + i);
  } else if (row.in_step == 2) {
    // vld2 reads sixteen bytes, the last in[2i + 15]: inside the row while i + 9 <= count.
    for (; i + 9 <= row.count; i += 8) {
      store_widened(vld2_s8(row.in + 2 * i).val[0], zero_point, row.out + i);
    }
  }
  for (; i < row.count; ++i) {
    row.out[i] = static_cast<float>(row.in[i * row.in_step] - row.zero_point);
  }
}

void float_sums_to_accumulators(const float* sums, int32_t bias, int32_t* out, size_t count) {
  const int32x4_t broadcast_bias = vdupq_n_s32(bias);
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    vst1q_s32(out + i, vaddq_s32(vcvtq_s32_f32(vld1q_f32(sums + i)), broadcast_bias));
  }
  for (; i < count; ++i) out[i] = static_cast<int32_t>(sums[i]) + bias;
}

// The 256-entry table as four 64-byte quarters, one TBL over four registers each: TBL gives 0
// for an index past its 64 bytes and TBX keeps what is there, so looking the code up in every
// quarter at the index minus the quarter's start (the subtraction wraps the earlier codes past
// 64 too) leaves exactly its own quarter's entry. 16 codes per four lookups and three
// subtractions, where the scalar loop takes a load per code.
void lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count) {
  const uint8x16x4_t quarter0 = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(table));
  const uint8x16x4_t quarter1 = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(table) + 64);
  const uint8x16x4_t quarter2 = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(table) + 128);
  const uint8x16x4_t quarter3 = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(table) + 192);
  const uint8x16_t sixty_four = vdupq_n_u8(64);
  const uint8x16_t sign = vdupq_n_u8(0x80);
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    // code + 128 as a byte: the table index.
    uint8x16_t index = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(in + i)), sign);
    uint8x16_t value = vqtbl4q_u8(quarter0, index);
    index = vsubq_u8(index, sixty_four);
    value = vqtbx4q_u8(value, quarter1, index);
    index = vsubq_u8(index, sixty_four);
    value = vqtbx4q_u8(value, quarter2, index);
    index = vsubq_u8(index, sixty_four);
    value = vqtbx4q_u8(value, quarter3, index);
    vst1q_s8(out + i, vreinterpretq_s8_u8(value));
  }
  portable_lookup_int8_row(table, in + i, out + i, count - i);
}

}  // namespace

const MicroKernels& neon_micro_kernels() {
  static const MicroKernels kernels = [] {
    MicroKernels table{"neon",
                       kRows,
                       kColumns,
                       float_tile,
                       kRows,
                       kColumns,
                       int16_pair_tile,
                       pack_int8_pairs,
                       requantize_row,
                       depthwise_plane,
                       binary_row,
                       quantized_binary_row,
                       quantized_add_row,
                       max_row_float,
                       max_row_int8,
                       add_row_float,
                       unary_row,
                       requantize_silu_row,
                       reproducible_exp_row,
                       widen_int8_row,
                       float_sums_to_accumulators,
                       lookup_int8_row,
                       portable_depthwise_lanes,
                       portable_interleave_float_rows,
                       portable_interleave_int8_rows,
                       portable_deinterleave_float_rows,
                       portable_requantize_lanes,
                       nullptr,
                       nullptr};
    // The optional entries after these take their defaults (null) but those set by name.
    table.float_column_tiles = float_column_tiles;
    table.depthwise_stride2_rows = neon_depthwise_stride2_rows;
    // Below two vectors of outputs a row is mostly edge outputs, which the stride-2 kernel
    // gathers one tap at a time; those rows stay with the lanes driver (four channels a
    // vector). Chosen by that count, not timed: there is no board here.
    table.depthwise_stride2_narrowest = 8;
    table.max_pool_stride2_rows = neon_max_pool_stride2_rows;
    return table;
  }();
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
