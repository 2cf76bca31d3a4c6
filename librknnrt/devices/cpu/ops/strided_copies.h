// Slice and Transpose (reference::StridedCopyParams) as copies on the context's thread pool. The
// reference walks the output element by element with a memcpy call per element; here the layout
// is simplified once, when the kernel is built - axes of extent 1 dropped, neighbours that are
// contiguous in the input merged - and then copied in one of three ways:
//   * runs: the innermost axis is contiguous in the input (a Slice that keeps whole rows, a
//     Transpose that keeps the last axis): one memcpy per run;
//   * tiles: another axis is contiguous in the input (a Transpose that moves the last axis, as
//     NCHW <-> NHWC does): 16 x 16 element tiles of that axis and the innermost one, so both the
//     rows read and the rows written stay in L1 across a tile;
//   * elements: neither (steps other than 1 on every axis): a loop per element in its own size.
// Large copies are cut into pieces the pool's threads share. Same bytes as the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reference/data_movement.h"

namespace orknn::devices::cpu {

class StridedCopies {
 public:
  enum class Plan { kNothing, kRuns, kTiles, kElements };

  StridedCopies(size_t element_size, const kernels::reference::StridedCopyParams& params);

  void copy(const void* input, void* output) const;

  // For tests: how the copy runs, and its simplified axes.
  Plan plan() const { return plan_; }
  size_t axis_count() const { return shape_.size(); }

 private:
  // Output position `index` of the axes other than `skip_a` and `skip_b` (an odometer over
  // them, outermost first) as an input and an output offset, in elements.
  void outer_offsets(size_t index, size_t skip_a, size_t skip_b, int64_t* input_offset,
                     int64_t* output_offset) const;
  template <typename Element>
  void copy_runs(const uint8_t* input, uint8_t* output) const;
  template <typename Element>
  void copy_tiles(const uint8_t* input, uint8_t* output) const;
  template <typename Element>
  void copy_elements(const uint8_t* input, uint8_t* output) const;
  template <typename Element>
  void copy_typed(const uint8_t* input, uint8_t* output) const;

  size_t element_size_;
  Plan plan_ = Plan::kNothing;
  std::vector<int64_t> shape_;           // output extents, outermost first
  std::vector<int64_t> input_strides_;   // in elements, may be negative
  std::vector<int64_t> output_strides_;  // in elements (the output is contiguous)
  int64_t input_offset_ = 0;
  size_t tile_axis_ = 0;  // kTiles: the axis with input stride 1
  size_t total_ = 0;      // output elements
};

}  // namespace orknn::devices::cpu
