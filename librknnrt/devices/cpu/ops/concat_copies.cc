#include "devices/cpu/ops/concat_copies.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"

namespace orknn::devices::cpu {
namespace {

constexpr size_t kPieceBytes = 64 * 1024;
// Below this a copy is over before a second thread would have started.
constexpr size_t kParallelBytes = 2 * kPieceBytes;
// More runs than this (a concatenation along a late axis of a large tensor) are not planned.
constexpr size_t kMostPieces = 4096;

}  // namespace

ConcatCopies::ConcatCopies(size_t element_size, const kernels::reference::ConcatParams& params)
    : element_size_(element_size), params_(params) {
  size_t total = 0;
  size_t count = 0;
  for (int64_t outer = 0; outer < params.outer; ++outer) {
    for (size_t operand = 0; operand < params.axis_sizes.size(); ++operand) {
      const size_t run =
          static_cast<size_t>(params.axis_sizes[operand] * params.inner) * element_size;
      total += run;
      count += (run + kPieceBytes - 1) / kPieceBytes;
      if (count > kMostPieces) return;
    }
  }
  if (total < kParallelBytes) return;
  pieces_.reserve(count);
  size_t joined = 0;
  for (int64_t outer = 0; outer < params.outer; ++outer) {
    for (size_t operand = 0; operand < params.axis_sizes.size(); ++operand) {
      const size_t run =
          static_cast<size_t>(params.axis_sizes[operand] * params.inner) * element_size;
      // An empty operand may have no buffer at all: no piece reads or writes it.
      for (size_t begin = 0; begin < run; begin += kPieceBytes) {
        pieces_.push_back(Piece{static_cast<uint32_t>(operand),
                                static_cast<size_t>(outer) * run + begin, joined + begin,
                                std::min(kPieceBytes, run - begin)});
      }
      joined += run;
    }
  }
}

template <typename Copy>
void ConcatCopies::run_pieces(Copy copy) const {
  ThreadPool::current_or_serial().parallel_for(pieces_.size(),
                                               [&](size_t index, size_t) { copy(pieces_[index]); });
}

void ConcatCopies::concat(const void* const* inputs, void* output) const {
  auto* joined = static_cast<uint8_t*>(output);
  // An input the memory planner placed inside the output (exec/memory_planner.h) was written
  // there by its producer: its copy would be onto itself.
  if (pieces_.empty()) {
    if (params_.outer != 1) {
      kernels::reference::concat(element_size_, params_, inputs, output);
      return;
    }
    size_t offset = 0;
    for (size_t operand = 0; operand < params_.axis_sizes.size(); ++operand) {
      const size_t bytes =
          static_cast<size_t>(params_.axis_sizes[operand] * params_.inner) * element_size_;
      if (bytes > 0 && inputs[operand] != joined + offset) {
        std::memcpy(joined + offset, inputs[operand], bytes);
      }
      offset += bytes;
    }
    return;
  }
  run_pieces([&](const Piece& piece) {
    const uint8_t* source =
        static_cast<const uint8_t*>(inputs[piece.operand]) + piece.operand_offset;
    if (source != joined + piece.joined_offset) {
      std::memcpy(joined + piece.joined_offset, source, piece.bytes);
    }
  });
}

void ConcatCopies::split(const void* input, void* const* outputs) const {
  const auto* joined = static_cast<const uint8_t*>(input);
  // An output the memory planner placed inside the input is there already.
  if (pieces_.empty()) {
    if (params_.outer != 1) {
      kernels::reference::split(element_size_, params_, input, outputs);
      return;
    }
    size_t offset = 0;
    for (size_t operand = 0; operand < params_.axis_sizes.size(); ++operand) {
      const size_t bytes =
          static_cast<size_t>(params_.axis_sizes[operand] * params_.inner) * element_size_;
      if (bytes > 0 && outputs[operand] != joined + offset) {
        std::memcpy(outputs[operand], joined + offset, bytes);
      }
      offset += bytes;
    }
    return;
  }
  run_pieces([&](const Piece& piece) {
    uint8_t* destination = static_cast<uint8_t*>(outputs[piece.operand]) + piece.operand_offset;
    if (destination != joined + piece.joined_offset) {
      std::memcpy(destination, joined + piece.joined_offset, piece.bytes);
    }
  });
}

}  // namespace orknn::devices::cpu
