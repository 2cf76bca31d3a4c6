// The avx2 variant's micro-kernel table (AVX2 + FMA, x86-64): the dispatcher picks it only after
// cpu_features reported both. The kernels live in one file per job (declared in
// x86/avx2_micro_kernels.h, whose rule on inline functions every AVX2 file follows); the
// Winograd transforms and the int16 tap-pair depthwise rows carry their instruction set as
// function target attributes (declared in optimized/micro_kernels.h).
#include "x86/avx2_micro_kernels.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

const MicroKernels& avx2_micro_kernels() {
  static const MicroKernels kernels{"avx2",
                                    avx2::kFloatRows,
                                    avx2::kFloatColumns,
                                    avx2::float_tile,
                                    avx2::kIntRows,
                                    avx2::kIntColumns,
                                    avx2::int16_pair_tile,
                                    avx2::pack_int8_pairs,
                                    avx2::requantize_row,
                                    avx2::depthwise_plane,
                                    avx2::binary_row,
                                    avx2::quantized_binary_row,
                                    avx2::quantized_add_row,
                                    avx2::max_row_float,
                                    avx2::max_row_int8,
                                    avx2::add_row_float,
                                    avx2::unary_row,
                                    avx2::requantize_silu_row,
                                    avx2::reproducible_exp_row,
                                    avx2::widen_int8_row,
                                    avx2::float_sums_to_accumulators,
                                    avx2::lookup_int8_row,
                                    avx2::depthwise_lanes,
                                    avx2::interleave_float_rows,
                                    avx2::interleave_int8_rows,
                                    avx2::deinterleave_float_rows,
                                    avx2::requantize_lanes,
                                    nullptr,
                                    nullptr,
                                    avx2::requantize_silu_offset_row,
                                    avx2_winograd_input_run,
                                    avx2_winograd_output_run,
                                    avx2_interleave_pairs,
                                    avx2_depthwise_pairs,
                                    avx2::float_column_tiles,
                                    avx2::depthwise_flat,
                                    avx2::kDepthwiseFlatLanes,
                                    avx2::kDepthwiseFlatWidest,
                                    avx2::depthwise_stride2_rows,
                                    avx2::kDepthwiseStride2Narrowest};
  return kernels;
}

}  // namespace orknn::kernels::cpu::optimized
