// From the converter's IR to the open model format, through the runtime's ModelBuilder (which
// verifies what it writes exactly as the reader will).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "model/model_builder.h"

namespace orknn::convert {

struct ExportMetadata {
  std::string target_platform;
  std::string custom_string;
  // [set][input]; empty for static models.
  std::vector<std::vector<std::vector<int64_t>>> dynamic_shape_sets;
};

// Fills `builder` (freshly constructed) with the graph. `extra_outputs` are tensor names added
// as graph outputs after the graph's own (calibration and analysis read intermediate tensors
// this way).
Status build_model(const ir::Graph& graph, const ExportMetadata& metadata,
                   const std::vector<std::string>& extra_outputs, model::ModelBuilder* builder);

// The producer version written into models.
const char* converter_version();

}  // namespace orknn::convert
