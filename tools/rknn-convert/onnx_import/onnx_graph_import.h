// Translates a loaded ONNX model into the converter's IR, keeping ONNX semantics: op types,
// attributes and input order are unchanged; Constant nodes become constant tensors; each node
// remembers the opset it was written for, so opset-dependent rewrites (passes/normalize_onnx_ops)
// can tell the forms apart.
#pragma once

#include <onnx/onnx_pb.h>

#include "ir/graph.h"

namespace orknn::convert {

// Facts about the source model, for the summary.
struct SourceModelInfo {
  std::string producer;  // "pytorch 2.1.0"
  int64_t ir_version = 0;
  int opset = 0;
  size_t node_count = 0;
};

SourceModelInfo describe_source_model(const onnx::ModelProto& model);

// Fails, naming the value, for graph inputs or outputs of unsupported types or non-tensor types.
Result<ir::Graph> import_onnx_graph(const onnx::ModelProto& model, SourceModelInfo* out_info);

}  // namespace orknn::convert
