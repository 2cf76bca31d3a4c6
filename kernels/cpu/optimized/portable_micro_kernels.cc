// Plain C++ micro-kernels: the "portable" variant, for CPUs without a SIMD variant and as a
// second implementation that checks the drivers independently of any intrinsics. Written so
// compilers can vectorise the inner loops at the target's baseline ISA.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/reproducible_exp.h"
#include "optimized/binary_operation.h"
#include "optimized/micro_kernels.h"
#include "reference/convolution.h"
#include "reference/elementwise.h"
#include "reference/quantized_add.h"

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kRows = 4;
constexpr size_t kColumns = 8;

void float_tile(const FloatTile& tile) {
  float sums[kRows][kColumns] = {};
  const float* a = tile.a;
  const float* b = tile.b;
  for (size_t k = 0; k < tile.depth; ++k, a += kRows, b += tile.b_stride) {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t j = 0; j < kColumns; ++j) sums[r][j] += a[r] * b[j];
    }
  }
  for (size_t r = 0; r < tile.rows; ++r) {
    float* c = tile.c + r * tile.c_stride;
    for (size_t j = 0; j < tile.columns; ++j) {
      float value;
      if (tile.accumulate) {
        value = c[j] + sums[r][j];
      } else {
        float init = 0.0f;
        if (tile.row_bias) init += tile.row_bias[r];
        if (tile.column_bias) init += tile.column_bias[j];
        value = init + sums[r][j];
      }
      c[j] = tile.activation ? activate_float(*tile.activation, value) : value;
    }
  }
}

void int16_pair_tile(const Int16PairTile& tile) {
  int32_t sums[kRows][kColumns] = {};
  const int16_t* a = tile.a;
  const int16_t* b = tile.b;
  for (size_t p = 0; p < tile.depth_pairs; ++p, a += 2 * kRows, b += 2 * kColumns) {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t j = 0; j < kColumns; ++j) {
        sums[r][j] += int32_t{a[2 * r]} * b[2 * j] + int32_t{a[2 * r + 1]} * b[2 * j + 1];
      }
    }
  }
  for (size_t r = 0; r < tile.rows; ++r) {
    int32_t* c = tile.c + r * tile.c_stride;
    for (size_t j = 0; j < tile.columns; ++j) {
      if (tile.accumulate) {
        c[j] += sums[r][j];
      } else {
        int32_t init = 0;
        if (tile.row_bias) init += tile.row_bias[r];
        if (tile.column_bias) init += tile.column_bias[j];
        c[j] = init + sums[r][j];
      }
    }
  }
}

void pack_int8_pairs(const Int8PairRows& rows) {
  const size_t panels = (rows.columns + kColumns - 1) / kColumns;
  for (size_t panel = 0; panel < panels; ++panel) {
    int16_t* out = rows.out + panel * rows.panel_stride;
    for (size_t j = 0; j < kColumns; ++j) {
      const size_t column = panel * kColumns + j;
      const bool real = column < rows.columns;
      out[2 * j] = real ? static_cast<int16_t>(rows.row0[column] - rows.zero_point) : 0;
      out[2 * j + 1] =
          real && rows.row1 ? static_cast<int16_t>(rows.row1[column] - rows.zero_point) : 0;
    }
  }
}

void requantize_row(const RequantizeRow& row) {
  for (size_t i = 0; i < row.count; ++i) {
    row.output[i] =
        reference::requantize(row.accumulators[i], row.multipliers[row.per_element ? i : 0],
                              row.output_zero_point, row.output_minimum, row.output_maximum);
  }
}

void requantize_silu_row(const RequantizeSiluRow& row) {
  for (size_t i = 0; i < row.count; ++i) {
    row.output[i] = reference::requantize_silu(row.accumulators[i], row.scale, row.output_scale,
                                               row.output_zero_point);
  }
}

void reproducible_exp_row(const float* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = reproducible_exp(in[i]);
}

void widen_int8_row(const WidenInt8Row& row) {
  for (size_t i = 0; i < row.count; ++i) {
    row.out[i] = static_cast<float>(row.in[i * row.in_step] - row.zero_point);
  }
}

void float_sums_to_accumulators(const float* sums, int32_t bias, int32_t* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<int32_t>(sums[i]) + bias;
}

void depthwise_plane(const DepthwisePlane& plane) {
  for (size_t oh = 0; oh < plane.output_height; ++oh) {
    float* out = plane.output + oh * plane.output_stride;
    for (size_t o = 0; o < plane.output_width; ++o) {
      float sum = plane.bias;
      for (size_t i = 0; i < plane.kernel_height; ++i) {
        const size_t row =
            (oh * plane.stride_height + i * plane.dilation_height) * plane.input_stride + o;
        for (size_t j = 0; j < plane.kernel_width; ++j) {
          const size_t column = j * plane.dilation_width;
          const float* phase = plane.input + (column % plane.stride_width) * plane.phase_stride;
          sum +=
              plane.weights[i * plane.kernel_width + j] * phase[row + column / plane.stride_width];
        }
      }
      out[o] = plane.activation ? activate_float(*plane.activation, sum) : sum;
    }
  }
}

// The step combinations get their own loops so the compiler can vectorize the common ones.
template <int Operation>
void binary_row_of(const BinaryRow& row) {
  const float* a = row.a;
  const float* b = row.b;
  float* out = row.out;
  if (row.a_step == 1 && row.b_step == 1) {
    for (size_t i = 0; i < row.count; ++i) out[i] = apply_binary_operation<Operation>(a[i], b[i]);
  } else if (row.a_step == 1) {
    const float scalar = b[0];
    for (size_t i = 0; i < row.count; ++i) out[i] = apply_binary_operation<Operation>(a[i], scalar);
  } else if (row.b_step == 1) {
    const float scalar = a[0];
    for (size_t i = 0; i < row.count; ++i) out[i] = apply_binary_operation<Operation>(scalar, b[i]);
  } else {
    const float value = apply_binary_operation<Operation>(a[0], b[0]);
    for (size_t i = 0; i < row.count; ++i) out[i] = value;
  }
}

void binary_row(const BinaryRow& row) {
  with_binary_operation(row.operation,
                        [&](auto operation) { binary_row_of<decltype(operation)::value>(row); });
}

}  // namespace

void portable_max_row_float(float* accumulator, const float* row, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
  }
}

void portable_max_row_int8(int8_t* accumulator, const int8_t* row, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    accumulator[i] = row[i] > accumulator[i] ? row[i] : accumulator[i];
  }
}

void portable_add_row_float(float* accumulator, const float* row, size_t count) {
  for (size_t i = 0; i < count; ++i) accumulator[i] += row[i];
}

void portable_unary_row(const UnaryRow& row) {
  static constexpr reference::UnaryOperation kOperations[] = {
      reference::UnaryOperation::kRelu,      reference::UnaryOperation::kClip,
      reference::UnaryOperation::kLeakyRelu, reference::UnaryOperation::kSigmoid,
      reference::UnaryOperation::kHardSwish, reference::UnaryOperation::kSwish,
      reference::UnaryOperation::kTanh};
  reference::UnaryParams params;
  params.operation = kOperations[row.operation];
  params.alpha = row.alpha;
  params.minimum = row.minimum;
  params.maximum = row.maximum;
  reference::unary(params, row.in, row.out, static_cast<int64_t>(row.count));
}

void portable_quantized_binary_row(const QuantizedBinaryRow& row) {
  const QuantizedOperand& a = row.a;
  const QuantizedOperand& b = row.b;
  with_binary_operation(row.operation, [&](auto operation) {
    for (size_t i = 0; i < row.count; ++i) {
      const float value = apply_binary_operation<decltype(operation)::value>(
          dequantize(a.codes[i * a.step], a.scale, a.zero_point),
          dequantize(b.codes[i * b.step], b.scale, b.zero_point));
      const float scaled = value / row.out_scale;
      int32_t code = row.out_zero_point;
      if (!std::isnan(scaled)) {
        const float bounded = scaled < -1e9f ? -1e9f : (scaled > 1e9f ? 1e9f : scaled);
        code = round_half_to_even(bounded) + row.out_zero_point;
      }
      row.out[i] = saturate_int8(code);
    }
  });
}

void portable_quantized_add_row(const QuantizedAddRow& row) {
  reference::QuantizedAdd add;
  add.a_ratio = row.a.scale;
  add.b_ratio = row.b.scale;
  add.a_zero_point = row.a.zero_point;
  add.b_zero_point = row.b.zero_point;
  add.output_zero_point = row.out_zero_point;
  for (size_t i = 0; i < row.count; ++i) {
    const int8_t code =
        reference::quantized_add(row.a.codes[i * row.a.step], row.b.codes[i * row.b.step], add);
    row.out[i] = std::min(std::max(code, row.out_minimum), row.out_maximum);
  }
}

void portable_lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = table[in[i] + 128];
}

void portable_depthwise_lanes(const DepthwiseLanes& lanes) {
  constexpr size_t L = kDepthwiseLanes;
  for (size_t r = 0; r < lanes.output_height; ++r) {
    for (size_t o = 0; o < lanes.output_width; ++o) {
      float sums[L];
      for (size_t l = 0; l < L; ++l) sums[l] = lanes.bias[l];
      for (size_t i = 0; i < lanes.kernel_height; ++i) {
        const float* row =
            lanes.input +
            (r * lanes.stride_height + i * lanes.dilation_height) * lanes.input_stride +
            o * lanes.stride_width * L;
        for (size_t j = 0; j < lanes.kernel_width; ++j) {
          const float* in = row + j * lanes.dilation_width * L;
          const float* weights = lanes.weights + (i * lanes.kernel_width + j) * L;
          for (size_t l = 0; l < L; ++l) sums[l] += weights[l] * in[l];
        }
      }
      float* out = lanes.output + (r * lanes.output_width + o) * L;
      for (size_t l = 0; l < L; ++l) {
        out[l] = lanes.activation ? activate_float(*lanes.activation, sums[l]) : sums[l];
      }
    }
  }
}

void portable_interleave_float_rows(const InterleaveRows<float>& rows) {
  for (size_t e = 0; e < rows.count; ++e) {
    float* out = rows.out + e / rows.row_length * rows.out_row_stride +
                 e % rows.row_length * kDepthwiseLanes;
    for (size_t l = 0; l < kDepthwiseLanes; ++l) out[l] = rows.sources[l][e];
  }
}

void portable_interleave_int8_rows(const InterleaveRows<int8_t>& rows) {
  for (size_t e = 0; e < rows.count; ++e) {
    float* out = rows.out + e / rows.row_length * rows.out_row_stride +
                 e % rows.row_length * kDepthwiseLanes;
    for (size_t l = 0; l < kDepthwiseLanes; ++l) {
      out[l] = static_cast<float>(rows.sources[l][e] - rows.zero_point);
    }
  }
}

void portable_deinterleave_float_rows(const float* in, size_t count, float* const* rows) {
  for (size_t c = 0; c < count; ++c) {
    for (size_t l = 0; l < kDepthwiseLanes; ++l) rows[l][c] = in[c * kDepthwiseLanes + l];
  }
}

void portable_requantize_lanes(const RequantizeLanes& lanes) {
  const LaneRequantization& q = lanes.requantization;
  for (size_t c = 0; c < lanes.count; ++c) {
    for (size_t l = 0; l < kDepthwiseLanes; ++l) {
      const int32_t accumulator =
          static_cast<int32_t>(lanes.sums[c * kDepthwiseLanes + l]) + q.bias[l];
      q.rows[l][c] = reference::requantize(accumulator, q.multipliers[l], q.output_zero_point,
                                           q.output_minimum, q.output_maximum);
    }
  }
}

void portable_winograd_input_run(const WinogradInputRun& run) {
  const size_t row_step = 2 * run.row_length;
  const int16_t* even[4];
  const int16_t* odd[4];
  for (size_t r = 0; r < 4; ++r) {
    even[r] = run.rows + r * row_step;
    odd[r] = even[r] + run.row_length;
  }
  // Into a local block first: it cannot alias the rows, so the compiler vectorizes the loop.
  constexpr size_t kLanes = 32;
  alignas(64) int16_t block[16][kLanes];
  for (size_t first = 0; first < run.count; first += kLanes) {
    const size_t count = std::min(kLanes, run.count - first);
    for (size_t lane = 0; lane < count; ++lane) {
      const size_t n = first + lane;
      int16_t d[4][4];
      for (size_t r = 0; r < 4; ++r) {
        d[r][0] = even[r][n];
        d[r][1] = odd[r][n];
        d[r][2] = even[r][n + 2];
        d[r][3] = odd[r][n + 2];
      }
      int16_t columns[4][4];  // B^T d: down each column
      for (size_t c = 0; c < 4; ++c) {
        columns[0][c] = static_cast<int16_t>(d[0][c] - d[2][c]);
        columns[1][c] = static_cast<int16_t>(d[1][c] + d[2][c]);
        columns[2][c] = static_cast<int16_t>(d[2][c] - d[1][c]);
        columns[3][c] = static_cast<int16_t>(d[1][c] - d[3][c]);
      }
      for (size_t i = 0; i < 4; ++i) {  // then along each row: (B^T d) B
        const int16_t* v = columns[i];
        block[i * 4 + 0][lane] = static_cast<int16_t>(v[0] - v[2]);
        block[i * 4 + 1][lane] = static_cast<int16_t>(v[1] + v[2]);
        block[i * 4 + 2][lane] = static_cast<int16_t>(v[2] - v[1]);
        block[i * 4 + 3][lane] = static_cast<int16_t>(v[1] - v[3]);
      }
    }
    for (size_t position = 0; position < 16; ++position) {
      std::memcpy(run.out + position * run.position_step + first, block[position],
                  count * sizeof(int16_t));
    }
  }
}

void portable_winograd_output_run(const WinogradOutputRun& run) {
  uint32_t largest = *run.largest;
  for (size_t t = 0; t < run.count; ++t) {
    uint32_t value[16];
    for (size_t position = 0; position < 16; ++position) {
      value[position] = static_cast<uint32_t>(run.m[position * run.position_step + t]);
    }
    uint32_t rows[2][4];  // A^T M
    for (size_t j = 0; j < 4; ++j) {
      rows[0][j] = value[j] + value[4 + j] + value[8 + j];
      rows[1][j] = value[4 + j] - value[8 + j] - value[12 + j];
    }
    for (size_t i = 0; i < 2; ++i) {  // (A^T M) A, divided by 4 (exact), plus the bias
      const auto left = static_cast<int32_t>(rows[i][0] + rows[i][1] + rows[i][2]);
      const auto right = static_cast<int32_t>(rows[i][1] - rows[i][2] - rows[i][3]);
      int32_t* out = i == 0 ? run.top : run.bottom;
      out[2 * t] = left / 4 + run.bias;
      out[2 * t + 1] = right / 4 + run.bias;
      for (size_t c = 0; c < 2; ++c) {
        const auto value = static_cast<uint32_t>(out[2 * t + c]);
        const uint32_t magnitude = out[2 * t + c] < 0 ? 0u - value : value;
        largest = std::max(largest, magnitude);
      }
    }
  }
  *run.largest = largest;
}

const MicroKernels& portable_micro_kernels() {
  static const MicroKernels kernels{"portable",
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
                                    portable_quantized_binary_row,
                                    portable_quantized_add_row,
                                    portable_max_row_float,
                                    portable_max_row_int8,
                                    portable_add_row_float,
                                    portable_unary_row,
                                    requantize_silu_row,
                                    reproducible_exp_row,
                                    widen_int8_row,
                                    float_sums_to_accumulators,
                                    portable_lookup_int8_row,
                                    portable_depthwise_lanes,
                                    portable_interleave_float_rows,
                                    portable_interleave_int8_rows,
                                    portable_deinterleave_float_rows,
                                    portable_requantize_lanes,
                                    nullptr,
                                    nullptr};
  return kernels;
}

bool silu_row_is_finite(const RequantizeSiluRow& row) {
  const float largest_scale = 18446744073709551616.0f;  // 2^64
  return row.scale >= -largest_scale && row.scale <= largest_scale &&
         row.output_scale >= 0x1p-60f && row.output_scale <= 0x1p60f;
}

}  // namespace orknn::kernels::cpu::optimized
