// The error every op's attribute parsing returns, naming the node: "Conv 'conv1': <message>".
// Parsers take a Node rather than a ShapeInferenceContext because the CPU kernel factories call
// them too.
#pragma once

#include "graph/graph.h"

namespace orknn::graph {

template <typename... Parts>
Status node_error(const Node& node, const Parts&... parts) {
  return invalid_model(node.describe(), ": ", parts...);
}

}  // namespace orknn::graph
