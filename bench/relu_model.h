// A one-node model for the I/O benchmarks: x -> Relu -> y, both of `type` and `shape` with
// quantization `q` (empty for float), the input with `options` (mean, std, layout). Exits with
// the builder's message if it cannot be serialized (a benchmark has nothing to fall back to).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "model/model_builder.h"

inline std::vector<uint8_t> relu_model(orknn::DataType type, const std::vector<int64_t>& shape,
                                       const orknn::model::Quantization& q,
                                       const orknn::model::InputOptions& options = {}) {
  orknn::model::ModelBuilder builder;
  const int x = builder.add_tensor("x", type, shape, q);
  const int y = builder.add_tensor("y", type, shape, q);
  builder.add_node("Relu", {x}, {y}, {}, "relu");
  builder.add_input(x, options);
  builder.add_output(y);
  builder.set_target_platform("rk3588");
  auto bytes = builder.serialize();
  if (!bytes.ok()) {
    std::fprintf(stderr, "model: %s\n", bytes.status().message().c_str());
    std::exit(1);
  }
  return std::move(bytes).value();
}
