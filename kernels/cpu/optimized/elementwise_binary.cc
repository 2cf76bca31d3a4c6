// Float32 Add/Sub/Mul/Div over the broadcasts models use, as rows for the micro-kernels'
// binary_row. The output is seen as `rows` rows of `row_length` elements; each operand reads
// row r at (r % modulus) x row_multiplier with an element step of 0 or 1:
//   equal to the output     modulus rows, multiplier row_length, step 1
//   a scalar                multiplier 0, step 0
//   a channel run [C]       with elements after it (inner > 1): rows = outer x C of inner
//                           elements, modulus C, multiplier 1, step 0 (the channel's value);
//                           trailing (inner = 1): rows = outer of C elements, multiplier 0, step 1
// Long rows are cut into chunks so the pool's threads share even a single row.
#include <algorithm>

#include "optimized/optimized_kernels.h"

namespace orknn::kernels::cpu::optimized {
namespace {

struct OperandWalk {
  size_t modulus = 1;
  size_t row_multiplier = 0;
  size_t step = 0;
};

enum class OperandForm { kFull, kScalar, kChannelRun };

struct ChannelRun {
  size_t outer = 1;
  size_t channels = 1;
  size_t inner = 1;
};

int64_t product(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dimension : shape) count *= dimension;
  return count;
}

// The operand's form against the output shape (both right-aligned; the operand padded with 1s).
OperandForm classify(const std::vector<int64_t>& operand, const std::vector<int64_t>& output,
                     ChannelRun* out_run, bool* out_supported) {
  *out_supported = true;
  const int64_t elements = product(operand);
  if (elements == product(output)) return OperandForm::kFull;
  if (elements == 1) return OperandForm::kScalar;
  const size_t rank = output.size();
  std::vector<int64_t> padded(rank, 1);
  std::copy(operand.begin(), operand.end(), padded.begin() + (rank - operand.size()));
  size_t first = rank;
  size_t last = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (padded[d] == 1) continue;
    first = std::min(first, d);
    last = d;
  }
  ChannelRun run;
  for (size_t d = 0; d < rank; ++d) {
    const auto dimension = static_cast<size_t>(output[d]);
    if (d < first) {
      run.outer *= dimension;
    } else if (d > last) {
      run.inner *= dimension;
    } else if (padded[d] != output[d]) {
      *out_supported = false;  // broadcast inside the run: the reference handles it
    } else {
      run.channels *= dimension;
    }
  }
  *out_run = run;
  return OperandForm::kChannelRun;
}

constexpr size_t kChunk = 16384;  // elements per task: large enough to amortize the hand-out

class OptimizedBinary final : public BinaryFloat {
 public:
  OptimizedBinary(const MicroKernels& kernels, int operation, size_t rows, size_t row_length,
                  OperandWalk a, OperandWalk b)
      : kernels_(kernels),
        operation_(operation),
        rows_(rows),
        row_length_(row_length),
        chunks_per_row_(std::max<size_t>(1, (row_length + kChunk - 1) / kChunk)),
        a_(a),
        b_(b) {}

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const float* a, const float* b, float* output, ThreadPool& pool) const override {
    const size_t total = rows_ * row_length_;
    // Rows shorter than a chunk are grouped so each task still has about a chunk of work.
    const size_t rows_per_task =
        chunks_per_row_ > 1 ? 1 : std::max<size_t>(1, kChunk / std::max<size_t>(row_length_, 1));
    const size_t row_groups = (rows_ + rows_per_task - 1) / rows_per_task;
    const size_t tasks = chunks_per_row_ > 1 ? rows_ * chunks_per_row_ : row_groups;
    auto task = [&](size_t index, size_t) {
      size_t first_row = index * rows_per_task;
      size_t end_row = std::min(rows_, first_row + rows_per_task);
      size_t begin = 0;
      size_t end = row_length_;
      if (chunks_per_row_ > 1) {
        first_row = index / chunks_per_row_;
        end_row = first_row + 1;
        begin = (index % chunks_per_row_) * kChunk;
        end = std::min(row_length_, begin + kChunk);
      }
      for (size_t row = first_row; row < end_row; ++row) {
        BinaryRow work;
        work.operation = operation_;
        work.a = a + (row % a_.modulus) * a_.row_multiplier + begin * a_.step;
        work.a_step = a_.step;
        work.b = b + (row % b_.modulus) * b_.row_multiplier + begin * b_.step;
        work.b_step = b_.step;
        work.out = output + row * row_length_ + begin;
        work.count = end - begin;
        kernels_.binary_row(work);
      }
    };
    if (total <= kChunk || tasks == 1) {
      for (size_t index = 0; index < tasks; ++index) task(index, 0);
      return;
    }
    pool.parallel_for(tasks, task);
  }

 private:
  const MicroKernels& kernels_;
  int operation_;
  size_t rows_;
  size_t row_length_;
  size_t chunks_per_row_;
  OperandWalk a_;
  OperandWalk b_;
};

int operation_code(reference::BinaryOperation operation) {
  switch (operation) {
    case reference::BinaryOperation::kAdd:
      return 0;
    case reference::BinaryOperation::kSubtract:
      return 1;
    case reference::BinaryOperation::kMultiply:
      return 2;
    case reference::BinaryOperation::kDivide:
      return 3;
    default:
      return -1;
  }
}

}  // namespace

std::unique_ptr<BinaryFloat> make_binary(const MicroKernels& kernels,
                                         reference::BinaryOperation operation,
                                         const std::vector<int64_t>& a_shape,
                                         const std::vector<int64_t>& b_shape) {
  const int code = operation_code(operation);
  if (code < 0) return nullptr;
  const reference::BroadcastParams params = reference::make_broadcast_params(a_shape, b_shape);
  const std::vector<int64_t>& output = params.output_shape;
  const auto total = static_cast<size_t>(product(output));
  if (total == 0) return nullptr;

  ChannelRun a_run;
  ChannelRun b_run;
  bool a_supported = true;
  bool b_supported = true;
  const OperandForm a_form = classify(a_shape, output, &a_run, &a_supported);
  const OperandForm b_form = classify(b_shape, output, &b_run, &b_supported);
  if (!a_supported || !b_supported) return nullptr;
  if (a_form == OperandForm::kChannelRun && b_form == OperandForm::kChannelRun) return nullptr;

  const bool channel_a = a_form == OperandForm::kChannelRun;
  const bool channel_b = b_form == OperandForm::kChannelRun;
  size_t rows = 1;
  size_t row_length = total;
  OperandWalk channel_walk;
  if (channel_a || channel_b) {
    const ChannelRun& run = channel_a ? a_run : b_run;
    if (run.inner > 1) {
      rows = run.outer * run.channels;
      row_length = run.inner;
      channel_walk = {run.channels, 1, 0};
    } else {
      rows = run.outer;
      row_length = run.channels;
      channel_walk = {1, 0, 1};
    }
  }
  auto walk = [&](OperandForm form) {
    if (form == OperandForm::kFull) return OperandWalk{rows, row_length, 1};
    if (form == OperandForm::kScalar) return OperandWalk{1, 0, 0};
    return channel_walk;
  };
  return std::make_unique<OptimizedBinary>(kernels, code, rows, row_length, walk(a_form),
                                           walk(b_form));
}

}  // namespace orknn::kernels::cpu::optimized
