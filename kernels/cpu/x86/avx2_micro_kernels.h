// The micro-kernels of the avx2 table (avx2_micro_kernels.cc collects them), one file per job.
// Internal to the x86 files: the drivers reach them only through the table
// (optimized/micro_kernels.h, the shared interface).
//
// Rule for every file compiled with AVX2 (ORKNN_AVX2_SOURCES in kernels/cpu/CMakeLists.txt:
// -mavx2 -mfma -ffp-contract=off): no standard-library templates or inline functions
// (std::min, std::vector, std::memcpy, ...). An inline function instantiated there gets AVX
// encodings, and the linker may keep that copy for the whole program, which would then fault
// on CPUs without AVX. Only intrinsics, plain loops, functions in an anonymous namespace (or
// `static`) and the out-of-line functions declared here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized::avx2 {

// Float tile: 6 rows x 16 columns = 12 ymm accumulators, 2 for B, 1 broadcast of A.
constexpr size_t kFloatRows = 6;
constexpr size_t kFloatColumns = 16;
// int16-pair tile: the same shape in int32 lanes.
constexpr size_t kIntRows = 6;
constexpr size_t kIntColumns = 16;

// avx2_gemm_tiles.cc
void float_tile(const FloatTile& tile);
void float_column_tiles(const FloatTile* tiles, size_t count);
void int16_pair_tile(const Int16PairTile& tile);
void pack_int8_pairs(const Int8PairRows& rows);

// avx2_requantization.cc
void requantize_row(const RequantizeRow& row);

// avx2_depthwise_plane.cc
void depthwise_plane(const DepthwisePlane& plane);

// avx2_depthwise_flat.cc (8 outputs per vector)
void depthwise_flat(const DepthwiseFlatPlanes& planes);
constexpr size_t kDepthwiseFlatLanes = 8;
// Rows of 28 and more run as fast or faster on depthwise_plane, whose loads need no masks
// (bench_kernels, MobileNetV2's layers: 7 and 14 wide 1.4-1.6x faster flat, 28 and 56 even,
// 112 0.75x).
constexpr size_t kDepthwiseFlatWidest = 27;

// avx2_depthwise_stride2.cc (8 outputs per vector)
void depthwise_stride2_rows(const DepthwiseStride2Rows& rows);
// Narrower output rows run faster with channels in lanes (bench_kernels, MobileNetV2's 3x3/2
// layers: 56 and 28 wide 1.6x and 1.2x faster in rows, 7 wide 0.85x).
constexpr size_t kDepthwiseStride2Narrowest = 16;

// avx2_elementwise_rows.cc
void binary_row(const BinaryRow& row);
void quantized_binary_row(const QuantizedBinaryRow& row);
void quantized_add_row(const QuantizedAddRow& row);
void lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count);
void max_row_float(float* accumulator, const float* row, size_t count);
void max_row_int8(int8_t* accumulator, const int8_t* row, size_t count);
void add_row_float(float* accumulator, const float* row, size_t count);
void unary_row(const UnaryRow& row);

// avx2_silu_epilogue.cc
void reproducible_exp_row(const float* in, float* out, size_t count);
void requantize_silu_row(const RequantizeSiluRow& row);
void requantize_silu_offset_row(const RequantizeSiluRow& row, int32_t offset);

// avx2_depthwise_rows.cc
void widen_int8_row(const WidenInt8Row& row);
void float_sums_to_accumulators(const float* sums, int32_t bias, int32_t* out, size_t count);
void depthwise_lanes(const DepthwiseLanes& lanes);

// avx2_lane_interleave.cc
void interleave_float_rows(const InterleaveRows<float>& rows);
void interleave_int8_rows(const InterleaveRows<int8_t>& rows);
void deinterleave_float_rows(const float* in, size_t count, float* const* rows);

// avx2_lane_requantization.cc
void requantize_lanes(const RequantizeLanes& lanes);

}  // namespace orknn::kernels::cpu::optimized::avx2
