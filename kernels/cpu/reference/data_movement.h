// Reference kernels of the data-movement family (Concat, Split, Slice, Transpose, Pad, the
// reshape-like copies and Cast).
//
// Everything except Cast is generic over the element: functions take `element_size` in bytes
// and move whole elements, so the same code serves float32, float16, int8 (quantized or not),
// int64 indices and booleans. Shapes and parameters are validated by the op's shape function
// before any of these run; the kernels trust them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace orknn::kernels::reference {

// Concat and Split see a tensor as [outer, axis, inner]; the pieces differ only in `axis`.
struct ConcatParams {
  int64_t outer = 1;                // product of the dims before the axis
  int64_t inner = 1;                // product of the dims after the axis
  std::vector<int64_t> axis_sizes;  // one per piece (Concat inputs, Split outputs)
};
void concat(size_t element_size, const ConcatParams& params, const void* const* inputs,
            void* output);
void split(size_t element_size, const ConcatParams& params, const void* input,
           void* const* outputs);

// A gather in which the output element at multi-index (o_0, ..., o_r-1) is the input element at
// input_offset + sum_k o_k * input_strides[k] (counted in elements; strides may be negative).
// Slice and Transpose are both expressed this way.
struct StridedCopyParams {
  std::vector<int64_t> output_shape;
  std::vector<int64_t> input_strides;
  int64_t input_offset = 0;
};
void strided_copy(size_t element_size, const StridedCopyParams& params, const void* input,
                  void* output);

// One entry per input axis: starts are already normalized and clamped, steps are non-zero.
struct SliceParams {
  std::vector<int64_t> input_shape;
  std::vector<int64_t> starts;
  std::vector<int64_t> steps;
  std::vector<int64_t> output_shape;
};
StridedCopyParams slice_layout(const SliceParams& params);

// Output axis k is input axis perm[k].
StridedCopyParams transpose_layout(const std::vector<int64_t>& input_shape,
                                   const std::vector<int64_t>& perm);

enum class PadMode { kConstant, kEdge, kReflect, kWrap };

// Output dim k is input_shape[k] + pads_begin[k] + pads_end[k]; negative pads crop. Output
// element o along axis k reads input coordinate o - pads_begin[k]; outside [0, dim) that
// coordinate is replaced by the constant (kConstant), clamped (kEdge), mirrored without
// repeating the edge (kReflect, requires the reach to stay within one reflection) or taken
// modulo dim (kWrap, any reach).
struct PadParams {
  std::vector<int64_t> input_shape;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  PadMode mode = PadMode::kConstant;
};
// `constant_element` points at one element's bytes (unused unless mode is kConstant).
void pad(size_t element_size, const PadParams& params, const void* input,
         const void* constant_element, void* output);

// Reshape, Flatten, Squeeze and Unsqueeze keep the element order, so the reference copies.
// Copying onto itself is allowed (an executor may alias such outputs to their inputs).
void copy_bytes(size_t bytes, const void* input, void* output);

// Converts `count` elements between plain (non-quantized) types. Rules:
//  * float -> integer truncates toward zero and saturates to the target range (ONNX leaves
//    out-of-range values undefined; saturation is our choice); NaN becomes 0;
//  * integer -> narrower integer wraps around (keeps the low bits), as numpy and ONNX Runtime do;
//  * anything -> bool is `value != 0` (NaN is true); bool -> anything is 0 or 1;
//  * -> float16 rounds to nearest even, overflowing to infinity.
void cast(DataType source_type, const void* source, DataType destination_type, void* destination,
          int64_t count);

}  // namespace orknn::kernels::reference
