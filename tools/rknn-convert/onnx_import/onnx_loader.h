// Reading an ONNX file: the protobuf, its external data, and the ONNX checker.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/status.h"

namespace orknn::convert {

// The oldest and newest ai.onnx opsets the converter accepts.
constexpr int kOldestOpset = 7;
constexpr int kNewestOpset = 19;

// Reads and parses `path`, moves every external tensor's bytes into raw_data (files are resolved
// against the model's directory and may not leave it), and validates the model: the ONNX
// checker where this build's ONNX library knows the opset (see onnx_loader.cc), and our own
// structural checks always. Every failure names the file and what is wrong with it.
Result<onnx::ModelProto> load_onnx_model(const std::string& path);

// The same checks on a model already in memory (`directory` resolves external data).
Status prepare_onnx_model(onnx::ModelProto* model, const std::string& directory,
                          const std::string& what);

// The ai.onnx opset the model imports (0 when it imports none).
int default_domain_opset(const onnx::ModelProto& model);

}  // namespace orknn::convert
