// Prints how close the memory planner comes to the ideal for a model: the planned internal
// arena against the lower bound (the largest sum of intermediate tensors alive at one step).
//
//   memory_plan_report MODEL.rknn [MODEL.rknn ...]
//
// Dynamic-shape models are reported once per shape set.
#include <cstdio>
#include <string>
#include <vector>

#include "exec/memory_planner.h"
#include "graph/graph_from_model.h"
#include "graph/shape_inference.h"
#include "model/model_file.h"

namespace {

int report(const std::string& path) {
  auto bytes = orknn::model::read_model_file(path);
  if (!bytes.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), bytes.status().message().c_str());
    return 1;
  }
  auto model = orknn::model::ModelFile::parse(std::move(bytes).value());
  if (!model.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), model.status().message().c_str());
    return 1;
  }
  auto graph = orknn::graph::graph_from_model(std::move(model).value());
  if (!graph.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), graph.status().message().c_str());
    return 1;
  }
  std::vector<std::vector<orknn::graph::Shape>> sets = graph.value()->dynamic_shape_sets;
  if (sets.empty()) sets.push_back(orknn::graph::stored_input_shapes(*graph.value()));
  for (size_t s = 0; s < sets.size(); ++s) {
    std::vector<orknn::graph::Shape> shapes;
    orknn::Status status = orknn::graph::infer_shapes(*graph.value(), sets[s], &shapes);
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), status.message().c_str());
      return 1;
    }
    const size_t planned = orknn::exec::plan_memory(*graph.value(), shapes).arena_bytes;
    const size_t bound = orknn::exec::arena_lower_bound(*graph.value(), shapes);
    std::printf(
        "%-40s set %zu: planned internal %10zu bytes, lower bound %10zu bytes, ratio %.3f\n",
        path.c_str(), s, planned, bound,
        bound ? static_cast<double>(planned) / static_cast<double>(bound) : 1.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.rknn [MODEL.rknn ...]\n", argv[0]);
    return 2;
  }
  int failures = 0;
  for (int i = 1; i < argc; ++i) failures += report(argv[i]);
  return failures ? 1 : 0;
}
