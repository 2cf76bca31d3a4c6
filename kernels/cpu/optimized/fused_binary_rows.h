// A binary row followed by an activation in place, while the row is in cache: the one step
// elementwise_binary.cc's fused Add/Sub/Mul/Div + activation kernels and the convolutions'
// fused residual Adds (dispatch.h ResidualAddition) share, with the table's binary_row and
// unary_row, so both give the bits of the two nodes run apart.
#pragma once

#include <cstddef>
#include <optional>

#include "dispatch.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

// binary_row's operation code of an Add.
constexpr int kAddRowOperation = 0;

// unary_row's operation code and parameters of an activation; operation -1: none.
struct RowActivation {
  int operation = -1;
  float alpha = 0.0f;
  float minimum = 0.0f;
  float maximum = 0.0f;
};

// The activations unary_row computes with the reference's bits; nothing for the others.
inline std::optional<RowActivation> row_activation_of(const reference::UnaryParams& activation) {
  RowActivation row{-1, activation.alpha, activation.minimum, activation.maximum};
  switch (activation.operation) {
    case reference::UnaryOperation::kRelu:
      row.operation = 0;
      break;
    case reference::UnaryOperation::kClip:
      row.operation = 1;
      break;
    case reference::UnaryOperation::kLeakyRelu:
      row.operation = 2;
      break;
    case reference::UnaryOperation::kHardSwish:
      row.operation = 4;
      break;
    default:
      return std::nullopt;
  }
  return row;
}

// out = activation(a op b) over `row` (row.out may be row.a or row.b).
inline void binary_activation_row(const MicroKernels& kernels, const BinaryRow& row,
                                  const RowActivation& activation) {
  kernels.binary_row(row);
  if (activation.operation < 0) return;
  const UnaryRow activate{activation.operation,
                          activation.alpha,
                          activation.minimum,
                          activation.maximum,
                          row.out,
                          row.out,
                          row.count};
  kernels.unary_row(activate);
}

// The tiles' form of a row activation (FloatTile::after), for those whose clamp gives
// unary_row's bits: Relu (x < 0 ? 0 : x keeps -0 and NaN, as max(0, x) with x second does),
// Clip and LeakyRelu. False for the others (HardSwish).
inline bool tile_activation_of(const RowActivation& row, FloatActivation* tile) {
  constexpr float kInfinity = __builtin_huge_valf();
  *tile = FloatActivation{-kInfinity, kInfinity, false, 0.0f};
  switch (row.operation) {
    case 0:
      tile->minimum = 0.0f;
      return true;
    case 1:
      tile->minimum = row.minimum;
      tile->maximum = row.maximum;
      return true;
    case 2:
      tile->leaky = true;
      tile->leaky_alpha = row.alpha;
      return true;
    default:
      return false;
  }
}

// A convolution driver's fused residual Add: after it finishes a piece of output (in `output`,
// the run's output tensor), apply(piece, count) makes it after(piece + residual) in place, with
// the residual's elements at the same offset. Inactive (apply does nothing) without an addition.
class ResidualRows {
 public:
  ResidualRows(const MicroKernels& kernels, const ResidualAddition* addition, const float* output)
      : kernels_(kernels), addition_(addition), output_(output) {
    if (addition && addition->has_after) {
      // residual_activation_supported() was asked when the kernel was built.
      activation_ = row_activation_of(addition->after).value_or(RowActivation{});
    }
    // Column tiles (a one-column last panel, for_each_tile) take no residual: a table with
    // them keeps the row pass.
    in_tile_ = addition && kernels.float_tile_adds_residual && !kernels.float_column_tiles &&
               (!addition->has_after || tile_activation_of(activation_, &tile_after_));
  }

  // Whether the GEMM tiles add the residual (FloatTile::residual) instead of apply(); then
  // tile_after() is theirs.
  bool in_tile() const { return in_tile_; }
  const FloatActivation* tile_after() const {
    return addition_->has_after ? &tile_after_ : nullptr;
  }

  // The residual's elements for the output at `piece`.
  const float* residual_at(const float* piece) const {
    return addition_->residual + (piece - output_);
  }

  void apply(float* piece, size_t count) const {
    if (!addition_) return;
    const float* residual = residual_at(piece);
    const float* a = addition_->residual_first ? residual : piece;
    const float* b = addition_->residual_first ? piece : residual;
    binary_activation_row(kernels_, BinaryRow{kAddRowOperation, a, 1, b, 1, piece, count},
                          activation_);
  }

 private:
  const MicroKernels& kernels_;
  const ResidualAddition* addition_;
  const float* output_;
  RowActivation activation_{};
  FloatActivation tile_after_{};
  bool in_tile_ = false;
};

}  // namespace orknn::kernels::cpu::optimized
