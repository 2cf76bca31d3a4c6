// RKNN_FLAG_SHARE_WEIGHT_MEM: a second model whose constants are the same as a live context's
// (same names, types and bytes) uses that context's weights instead of keeping its own copy.
#pragma once

#include <memory>

#include "graph/graph.h"

namespace orknn::exec {

// Returns `model` with every constant pointing into `donor`'s weights, keeping `donor`'s storage
// alive instead of `model`'s. Fails, naming the tensor, when a constant has no identical
// counterpart in `donor` (sharing it would change the results).
Result<std::shared_ptr<const graph::Graph>> share_weights(
    const graph::Graph& model, std::shared_ptr<const graph::Graph> donor);

}  // namespace orknn::exec
