// Helpers shared by the GPU device tests: run a single-node graph on the GPU (every supported
// node forced there) and on the CPU device, and compare.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/stored_node_run.h"

namespace orknn::testing {

// True when this machine has an OpenCL device; otherwise prints why (tests then skip).
bool gpu_available();

// Deterministic random integers and floats for shapes and values.
class Randomizer {
 public:
  explicit Randomizer(uint32_t seed) : engine_(seed) {}
  int64_t integer(int64_t low, int64_t high) {  // inclusive
    return std::uniform_int_distribution<int64_t>(low, high)(engine_);
  }
  bool coin() { return integer(0, 1) == 1; }
  std::vector<float> values(const graph::Shape& shape, float low = -1.0f, float high = 1.0f);

 private:
  std::mt19937 engine_;
};

// A real-valued tensor in float32; gpu_matches_cpu converts it to the precision under test.
// Names starting with "keep_" stay float32 in every precision (Resize scales).
StoredTensor real_tensor(const std::string& name, const graph::Shape& shape,
                         const std::vector<float>& values, bool constant = false);
StoredTensor int64_tensor(const std::string& name, const graph::Shape& shape,
                          const std::vector<int64_t>& values);

// Runs the node on the GPU and on the CPU device in `precision` (kFloat32 or kFloat16) and fails
// the current test unless every output agrees within `tolerance` x max(1, max|cpu|) and the
// node really ran on the GPU. `what` names the case in messages.
void expect_gpu_matches_cpu(const std::string& what, const std::string& op_type,
                            const std::vector<StoredTensor>& inputs, const Attributes& attributes,
                            DataType precision, double tolerance);

// Both precisions with the tolerances: float32 1e-4, float16 1e-2.
void expect_gpu_matches_cpu_in_both_precisions(const std::string& what, const std::string& op_type,
                                               const std::vector<StoredTensor>& inputs,
                                               const Attributes& attributes);

}  // namespace orknn::testing
