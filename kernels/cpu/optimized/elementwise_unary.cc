// Float32 activations (Relu, Clip, LeakyRelu, Sigmoid, HardSwish, Swish/SiLU, Tanh) on the
// micro-kernels' unary_row, cut into chunks the pool's threads share.
#include <algorithm>

#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr size_t kUnaryChunk = 8192;  // elements per task

class OptimizedUnary final : public UnaryFloat {
 public:
  OptimizedUnary(const MicroKernels& kernels, int operation, float alpha, size_t count)
      : kernels_(kernels), operation_(operation), alpha_(alpha), count_(count) {}

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const float* input, float* output, float minimum, float maximum,
           ThreadPool& pool) const override {
    const size_t tasks = (count_ + kUnaryChunk - 1) / kUnaryChunk;
    auto task = [&](size_t index, size_t) {
      const size_t begin = index * kUnaryChunk;
      const UnaryRow row{operation_,
                         alpha_,
                         minimum,
                         maximum,
                         input + begin,
                         output + begin,
                         std::min(kUnaryChunk, count_ - begin)};
      kernels_.unary_row(row);
    };
    if (tasks <= 1) {
      if (tasks == 1) task(0, 0);
      return;
    }
    pool.parallel_for(tasks, task);
  }

 private:
  const MicroKernels& kernels_;
  int operation_;
  float alpha_;
  size_t count_;
};

int unary_code(reference::UnaryOperation operation) {
  switch (operation) {
    case reference::UnaryOperation::kRelu:
      return 0;
    case reference::UnaryOperation::kClip:
      return 1;
    case reference::UnaryOperation::kLeakyRelu:
      return 2;
    case reference::UnaryOperation::kSigmoid:
      return 3;
    case reference::UnaryOperation::kHardSwish:
      return 4;
    case reference::UnaryOperation::kSwish:
      return 5;
    case reference::UnaryOperation::kTanh:
      return 6;
    default:
      return -1;
  }
}

}  // namespace

void RegionEpilogue::apply(float* first, size_t rows, size_t count, size_t stride) const {
  const int swish = unary_code(reference::UnaryOperation::kSwish);
  for (size_t r = 0; r < rows; ++r) {
    float* row = first + r * stride;
    unary_row(UnaryRow{swish, 1.0f, 0.0f, 0.0f, row, row, count});
  }
}

RegionEpilogue silu_epilogue(const MicroKernels& kernels) {
  return RegionEpilogue{kernels.unary_row};
}

std::unique_ptr<UnaryFloat> make_unary(const MicroKernels& kernels,
                                       const reference::UnaryParams& params, int64_t count) {
  const int code = unary_code(params.operation);
  if (code < 0 || count <= 0) return nullptr;
  return std::make_unique<OptimizedUnary>(kernels, code, params.alpha, static_cast<size_t>(count));
}

}  // namespace orknn::kernels::cpu::optimized
