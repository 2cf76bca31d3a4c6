// ONNX TensorProto and type conversion into the converter's IR.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "ir/graph.h"

namespace orknn::convert {

// The IR element type for an ONNX TensorProto.DataType, for tensors that flow through the graph
// (inputs, outputs, activations). Fails naming the type when the runtime has no equivalent.
Result<DataType> data_type_from_onnx(int onnx_type, const std::string& what);

// The constant tensor held by `proto` (raw_data, typed fields or, after the loader resolved it,
// external data moved into raw_data). Types without a runtime equivalent are converted where the
// values survive (DOUBLE -> FLOAT32, UINT16/UINT32/UINT64 -> INT64). The element count must match
// the dimensions exactly; `what` names the tensor in messages.
Result<ir::Tensor> tensor_from_onnx(const onnx::TensorProto& proto, const std::string& what);

// "FLOAT", "INT64", ... for messages.
std::string onnx_type_name(int onnx_type);

}  // namespace orknn::convert
