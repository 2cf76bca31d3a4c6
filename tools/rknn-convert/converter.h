// The library entry points of rknn-convert; main.cc only parses the command line and calls
// these, so the tests drive exactly what the tool does.
#pragma once

#include <onnx/onnx_pb.h>

#include "ir/graph.h"
#include "options/convert_options.h"
#include "report/summary.h"

namespace orknn::convert {

// The float32 graph the rest of the conversion starts from: imported, cut to the requested
// inputs/outputs, shapes resolved (dynamic_input set `shape_set`), folded and fused for the
// optimization level, QDQ pairs imported (*out_qdq_pairs counts them), every op checked.
Result<ir::Graph> build_float_graph(const onnx::ModelProto& model, const ConvertOptions& options,
                                    size_t shape_set, int* out_qdq_pairs);

// A whole conversion: reads options.model_path, writes options.output_path (atomically, and only
// when everything succeeded). *out_summary (may be null) describes the result.
Status convert_model(const ConvertOptions& options, ConversionSummary* out_summary);

// hybrid-step1: calibrates and writes the per-tensor quantization file (options.output_path)
// that a second conversion reads through quantization_config.
Status write_quantization_config(const ConvertOptions& options);

// accuracy-analysis: float vs quantized per layer (see analysis/accuracy_analysis.h).
Status run_accuracy_analysis(const ConvertOptions& options);

}  // namespace orknn::convert
