// Float precision of a model (build(do_quantization=False)): float16, the vendor's float type,
// or float32 (our addition: the exact model, for checking against ONNX Runtime and for
// computing accuracy references).
#pragma once

#include <functional>

#include "ir/graph.h"

namespace orknn::convert {

// True when `tensor` is real-valued float data the precision passes may convert: float32, not
// quantized, and not an operand the runtime reads as plain numbers (Resize roi/scales, Clip
// bounds), which stays float32 whatever the model's precision.
bool is_convertible_real(const ir::Graph& graph, const ir::Tensor& tensor);

// Converts every convertible real tensor for which `selected` is true to float16 (constant data
// rounded to nearest even).
void convert_to_float16(ir::Graph* graph, const std::function<bool(const ir::Tensor&)>& selected);

}  // namespace orknn::convert
