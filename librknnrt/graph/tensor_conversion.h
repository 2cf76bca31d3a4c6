// Element conversion between a tensor's stored representation (float32, float16, affine
// quantized int8/uint8/int16, per-tensor or per-channel) and float32. The rounding rule is in
// core/dtype.h; this is the single place that applies it to whole tensors.
#pragma once

#include "graph/graph.h"

namespace orknn::graph {

// True when the tensor's values are real numbers stored in a non-float32 form (float16, or an
// integer type with quantization parameters, such as int8 activations or int32 biases), i.e. when
// it converts to and from float32.
bool is_encoded_real(const Tensor& tensor);
// True for real-valued tensors in any form (float32 included).
bool is_real_valued(const Tensor& tensor);

// Decodes `tensor.elements()` values described by `tensor` (its dtype, quantization and shape)
// from `source` into `destination`. Precondition: is_real_valued(tensor).
void decode_to_float(const Tensor& tensor, const void* source, float* destination);
// Encodes float32 values into the tensor's representation (rounding, saturating).
void encode_from_float(const Tensor& tensor, const float* source, void* destination);

// A float32 view of a tensor: same name and shape, dtype float32, no quantization.
Tensor float_view(const Tensor& tensor);

}  // namespace orknn::graph
