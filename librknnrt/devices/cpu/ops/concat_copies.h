// Concat and Split as copies on the context's thread pool. Both move whole runs of bytes: per
// outer index, one contiguous run per operand. The runs are planned once, when the kernel is
// built, as pieces of at most 64 KiB that the pool's threads share (YOLOv5s concatenates
// megabyte feature maps: 2.7% of its one-thread time, all of it on one core before). Small
// tensors, and layouts with too many runs to plan, take the reference's serial copy. A piece
// that already sits where it would be copied is skipped (the memory planner places a Concat's
// inputs inside its output, and a Split's outputs inside its input, when it can:
// exec/memory_planner.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reference/data_movement.h"

namespace orknn::devices::cpu {

class ConcatCopies {
 public:
  ConcatCopies(size_t element_size, const kernels::reference::ConcatParams& params);

  // output <- inputs joined along the axis (Concat).
  void concat(const void* const* inputs, void* output) const;
  // outputs <- input cut along the axis (Split).
  void split(const void* input, void* const* outputs) const;

  // For tests: the pieces planned (0: the serial copy runs).
  size_t piece_count() const { return pieces_.size(); }

 private:
  struct Piece {
    uint32_t operand;       // input of Concat, output of Split
    size_t operand_offset;  // bytes into the operand
    size_t joined_offset;   // bytes into the joined tensor
    size_t bytes;
  };
  template <typename Copy>
  void run_pieces(Copy copy) const;

  size_t element_size_;
  kernels::reference::ConcatParams params_;
  std::vector<Piece> pieces_;
};

}  // namespace orknn::devices::cpu
