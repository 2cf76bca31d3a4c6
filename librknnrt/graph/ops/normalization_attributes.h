// Attribute parsing of the normalization family, shared by the shape functions (which validate)
// and the CPU kernel factories (which trust).
#pragma once

#include "graph/graph.h"

namespace orknn::graph {

struct NormalizationAttributes {
  float epsilon = 1e-5f;  // BatchNormalization, InstanceNormalization, LayerNormalization
  int64_t axis = -1;      // LayerNormalization, Softmax: normalized to [0, rank)
  // Softmax before opset 13 flattened the input to 2-D at `axis` and normalized over the whole
  // second part. Our model files do not record the opset, so the converter marks such nodes
  // with the int attribute `legacy_coerce_2d` = 1; without it Softmax has opset-13 semantics
  // (one axis). The legacy form's default axis is 1, as in those opsets.
  bool legacy_coerce_2d = false;
};

// Parses and checks the attributes of a BatchNormalization, InstanceNormalization,
// LayerNormalization or Softmax node whose first input has rank `rank`.
Result<NormalizationAttributes> parse_normalization_attributes(const Node& node, int64_t rank);

}  // namespace orknn::graph
