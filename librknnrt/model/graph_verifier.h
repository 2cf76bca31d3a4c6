// Verification of the graph stored in a model's GRAPH section: every index, shape, quantization
// parameter and data range is checked before any other part of the runtime looks at it, so the
// layers above (graph/, exec/) may rely on the invariants listed in docs/model-format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "model/orknn_model.pb.h"

namespace orknn::model {

// The public API reports shapes in fixed arrays of RKNN_MAX_DIMS entries.
inline constexpr int kMaxTensorRank = 16;
// Per-tensor element cap: keeps every byte count (elements x 8 at most) far from overflow on
// 64-bit hosts and every element index representable in an int64_t.
inline constexpr uint64_t kMaxTensorElements = uint64_t{1} << 31;

// Element count of `rank` dimensions, or std::nullopt when a dimension is negative or the count
// exceeds kMaxTensorElements.
std::optional<uint64_t> checked_element_count(const int64_t* dims, size_t rank);

// "[1,3,224,224]"
std::string format_shape(const int64_t* dims, size_t rank);

// Checks every invariant of docs/model-format.md ("What the reader verifies") against a graph
// whose constants live in a WEIGHTS section of `weights_size` bytes (0 when there is none).
// Errors are kInvalidModel and name the element and the rule it broke.
Status verify_graph(const proto::Model& model, uint64_t weights_size);

}  // namespace orknn::model
