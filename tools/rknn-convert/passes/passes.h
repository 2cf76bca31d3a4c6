// The graph passes of the converter, in the order converter.cc runs them. Each lives in its own
// file under passes/ and says there why it exists. Every pass keeps ONNX semantics (plus the
// runtime's documented extra attributes) and leaves the graph topologically sorted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "options/convert_options.h"

namespace orknn::convert {

// normalize_onnx_ops.cc: rewrites opset-specific forms into the ones the runtime reads (the
// model file has no opset): Identity/Dropout removed, Softmax < 13 marked legacy_coerce_2d,
// Upsample -> Resize, BatchNormalization's obsolete attributes dropped, Sum -> Add chain,
// Cast's `saturate` dropped.
Status normalize_onnx_ops(ir::Graph* graph);

// select_inputs_outputs.cc: cuts the graph at the tensors named by the `inputs` / `outputs`
// options (load_onnx(inputs=, outputs=)).
Status select_inputs_outputs(ir::Graph* graph, const ConvertOptions& options);

// resolve_input_shapes.cc: gives every graph input a static shape from input_size_list, the
// first dynamic_input set (`shape_set`), or rknn_batch_size for a dynamic batch; fails naming
// the input and its dynamic dimensions otherwise.
Status resolve_input_shapes(ir::Graph* graph, const ConvertOptions& options, size_t shape_set);

// input_preprocessing.cc: mean/std per input (checked against the channel count) and NHWC
// presentation for image inputs (4-D with 1, 3 or 4 channels).
Status assign_input_preprocessing(ir::Graph* graph, const ConvertOptions& options);

// infer_shapes_and_fold.cc: computes every tensor's shape and type in node order (the runtime's
// shape functions for runtime ops) and replaces nodes whose inputs are all known by their
// results. Integer computations (shapes, indices) are always folded; float subgraphs of runtime
// ops only when `fold_float` (optimization level >= 1). Nodes that are neither runtime ops nor
// foldable fail with a message naming them, their opset and the supported ops.
Status infer_shapes_and_fold(ir::Graph* graph, bool fold_float);

// import_qdq.cc: QuantizeLinear/DequantizeLinear pairs of a QDQ model become int8 tensors with
// their scales and zero points (uint8 is shifted to int8 exactly); dequantized constant weights
// become int8 constants and int32 biases. Returns the number of pairs imported via *out_count.
Status import_qdq(ir::Graph* graph, int* out_count);

// operands_to_attributes.cc: constant Clip min/max inputs and Pad's constant_value input become
// the attribute forms, so fusion and quantization see plain numbers.
Status operands_to_attributes(ir::Graph* graph);

// fold_batch_norm.cc: BatchNormalization after Conv/ConvTranspose folded into its weights.
Status fold_batch_norm(ir::Graph* graph);

// fuse_silu.cc: Mul(x, Sigmoid(x)) -> SiLU(x).
Status fuse_silu(ir::Graph* graph);

// fuse_activation.cc: Relu, Clip (Relu6) and LeakyRelu after Conv/ConvTranspose/Gemm/MatMul
// become the producer's `activation` attributes. LeakyRelu only when `allow_leaky_relu`: the
// runtime's int8 kernels take Relu and Clip as a clamp but run a fused LeakyRelu in float.
Status fuse_activation(ir::Graph* graph, bool allow_leaky_relu);

// check_supported_ops.cc: every node left is a runtime op the model format can carry.
Status check_supported_ops(const ir::Graph& graph);

// apply_batch_size.cc: rknn_batch_size: inputs of batch 1 get batch N; Reshape targets that
// fixed the batch at 1 follow; shapes are inferred again.
Status apply_batch_size(ir::Graph* graph, int batch_size);

// The text listing what the runtime supports, for error messages and --list-ops.
std::string supported_ops_text();

}  // namespace orknn::convert
