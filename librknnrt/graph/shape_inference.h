// Whole-graph shape inference and the load-time verification built on it.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace orknn::graph {

// Given the shapes of the graph inputs (in graph.inputs order), computes the shape of every
// tensor into *out_shapes (indexed by tensor). Constants keep their stored shapes.
Status infer_shapes(const Graph& graph, const std::vector<Shape>& input_shapes,
                    std::vector<Shape>* out_shapes);

// Checks every node against its schema (known op, input and output counts) and that the shapes
// inferred from the stored input shapes equal the shapes stored in the model. After this
// succeeds, kernels may trust every shape of the graph.
Status verify_graph(const Graph& graph);

// The stored shapes of the graph inputs, in graph.inputs order.
std::vector<Shape> stored_input_shapes(const Graph& graph);

}  // namespace orknn::graph
