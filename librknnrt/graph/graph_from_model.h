// Builds the runtime Graph from a verified model file and checks it op by op.
#pragma once

#include <memory>

#include "graph/graph.h"

namespace orknn::model {
class ModelFile;
}

namespace orknn::graph {

// The model file stays alive as long as the graph (constants point into its weights).
Result<std::shared_ptr<const Graph>> graph_from_model(
    std::shared_ptr<const model::ModelFile> model_file);

}  // namespace orknn::graph
