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
#include <optional>

#include "optimized/fused_binary_rows.h"
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

// How the output splits into rows and how each operand walks them (see the top of the file).
struct BinaryPlan {
  size_t rows = 1;
  size_t row_length = 0;
  OperandWalk a;
  OperandWalk b;
};

// Calls row_task(row, begin, end, a_offset, b_offset) for every row part, split over the pool
// when the output is large: several short rows per task, or chunks of one long row.
template <typename RowTask>
void for_each_row_part(const BinaryPlan& plan, ThreadPool& pool, RowTask&& row_task) {
  const size_t chunks_per_row = std::max<size_t>(1, (plan.row_length + kChunk - 1) / kChunk);
  const size_t rows_per_task =
      chunks_per_row > 1 ? 1 : std::max<size_t>(1, kChunk / std::max<size_t>(plan.row_length, 1));
  const size_t tasks = chunks_per_row > 1 ? plan.rows * chunks_per_row
                                          : (plan.rows + rows_per_task - 1) / rows_per_task;
  auto task = [&](size_t index, size_t) {
    size_t first_row = index * rows_per_task;
    size_t end_row = std::min(plan.rows, first_row + rows_per_task);
    size_t begin = 0;
    size_t end = plan.row_length;
    if (chunks_per_row > 1) {
      first_row = index / chunks_per_row;
      end_row = first_row + 1;
      begin = (index % chunks_per_row) * kChunk;
      end = std::min(plan.row_length, begin + kChunk);
    }
    for (size_t row = first_row; row < end_row; ++row) {
      row_task(row * plan.row_length + begin, end - begin,
               (row % plan.a.modulus) * plan.a.row_multiplier + begin * plan.a.step,
               (row % plan.b.modulus) * plan.b.row_multiplier + begin * plan.b.step);
    }
  };
  if (tasks == 1 || plan.rows * plan.row_length <= kChunk) {
    for (size_t index = 0; index < tasks; ++index) task(index, 0);
    return;
  }
  pool.parallel_for(tasks, task);
}

class OptimizedBinary final : public BinaryFloat {
 public:
  OptimizedBinary(const MicroKernels& kernels, int operation, const BinaryPlan& plan,
                  const RowActivation& activation)
      : kernels_(kernels), operation_(operation), plan_(plan), activation_(activation) {}

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const float* a, const float* b, float* output, ThreadPool& pool) const override {
    for_each_row_part(
        plan_, pool, [&](size_t output_offset, size_t count, size_t a_offset, size_t b_offset) {
          const BinaryRow row{operation_,   a + a_offset,           plan_.a.step, b + b_offset,
                              plan_.b.step, output + output_offset, count};
          binary_activation_row(kernels_, row, activation_);
        });
  }

 private:
  const MicroKernels& kernels_;
  int operation_;
  BinaryPlan plan_;
  RowActivation activation_;
};

struct CodeClamp {
  int8_t minimum = -128;
  int8_t maximum = 127;
};

// Whether table[code + 128] == clamp(code, minimum, maximum) for every code, and the bounds.
bool code_table_is_clamp(const std::vector<int8_t>& table, CodeClamp* clamp) {
  if (table.size() != 256 || table.front() > table.back()) return false;
  const CodeClamp candidate{table.front(), table.back()};
  for (int code = -128; code < 128; ++code) {
    const int expected = std::min<int>(std::max<int>(code, candidate.minimum), candidate.maximum);
    if (table[static_cast<size_t>(code + 128)] != expected) return false;
  }
  *clamp = candidate;
  return true;
}

// int8 Add/Sub on the codes (quantized_add_row) and Mul/Div in the float domain's arithmetic
// (quantized_binary_row), then the following activation's table while the part is in cache.
class OptimizedBinaryInt8 final : public BinaryInt8 {
 public:
  OptimizedBinaryInt8(const MicroKernels& kernels, int operation, const BinaryPlan& plan,
                      const BinaryInt8Quantization& quantization,
                      const std::optional<reference::QuantizedAdd>& add)
      : kernels_(kernels),
        operation_(operation),
        plan_(plan),
        quantization_(quantization),
        add_(add),
        table_(quantization.output_table) {
    // The add row clamps for free: a table that is a clamp (a Relu or Clip keeping its input's
    // quantization) needs no lookup pass.
    if (add_ && !table_.empty() && code_table_is_clamp(table_, &clamp_)) table_.clear();
    quantization_.output_table.clear();  // table_ is the one the rows apply
  }

  size_t scratch_bytes() const override { return 0; }
  const char* algorithm() const override { return kernels_.name; }

  void run(const int8_t* a, const int8_t* b, int8_t* output, ThreadPool& pool) const override {
    for_each_row_part(
        plan_, pool, [&](size_t output_offset, size_t count, size_t a_offset, size_t b_offset) {
          int8_t* out = output + output_offset;
          if (add_) {
            QuantizedAddRow row;
            row.a = {a + a_offset, plan_.a.step, add_->a_ratio, add_->a_zero_point};
            row.b = {b + b_offset, plan_.b.step, add_->b_ratio, add_->b_zero_point};
            row.out = out;
            row.out_zero_point = add_->output_zero_point;
            row.out_minimum = clamp_.minimum;
            row.out_maximum = clamp_.maximum;
            row.count = count;
            kernels_.quantized_add_row(row);
          } else {
            QuantizedBinaryRow row;
            row.operation = operation_;
            row.a = {a + a_offset, plan_.a.step, quantization_.a_scale, quantization_.a_zero_point};
            row.b = {b + b_offset, plan_.b.step, quantization_.b_scale, quantization_.b_zero_point};
            row.out = out;
            row.out_scale = quantization_.output_scale;
            row.out_zero_point = quantization_.output_zero_point;
            row.count = count;
            kernels_.quantized_binary_row(row);
          }
          if (!table_.empty()) kernels_.lookup_int8_row(table_.data(), out, out, count);
        });
  }

 private:
  const MicroKernels& kernels_;
  int operation_;
  BinaryPlan plan_;
  BinaryInt8Quantization quantization_;
  std::optional<reference::QuantizedAdd> add_;  // Add and Sub
  CodeClamp clamp_;
  std::vector<int8_t> table_;  // the activation's, unless clamp_ does its work
};

int operation_code(reference::BinaryOperation operation) {
  switch (operation) {
    case reference::BinaryOperation::kAdd:
      return kAddRowOperation;
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

// The rows and operand walks, or nothing for a broadcast left to the reference.
std::optional<BinaryPlan> plan_binary(const std::vector<int64_t>& a_shape,
                                      const std::vector<int64_t>& b_shape) {
  const reference::BroadcastParams params = reference::make_broadcast_params(a_shape, b_shape);
  const std::vector<int64_t>& output = params.output_shape;
  const auto total = static_cast<size_t>(product(output));
  if (total == 0) return std::nullopt;

  ChannelRun a_run;
  ChannelRun b_run;
  bool a_supported = true;
  bool b_supported = true;
  const OperandForm a_form = classify(a_shape, output, &a_run, &a_supported);
  const OperandForm b_form = classify(b_shape, output, &b_run, &b_supported);
  if (!a_supported || !b_supported) return std::nullopt;
  const bool channel_a = a_form == OperandForm::kChannelRun;
  const bool channel_b = b_form == OperandForm::kChannelRun;
  if (channel_a && channel_b) return std::nullopt;

  BinaryPlan plan;
  plan.row_length = total;
  OperandWalk channel_walk;
  if (channel_a || channel_b) {
    const ChannelRun& run = channel_a ? a_run : b_run;
    if (run.inner > 1) {
      plan.rows = run.outer * run.channels;
      plan.row_length = run.inner;
      channel_walk = {run.channels, 1, 0};
    } else {
      plan.rows = run.outer;
      plan.row_length = run.channels;
      channel_walk = {1, 0, 1};
    }
  }
  auto walk = [&](OperandForm form) {
    if (form == OperandForm::kFull) return OperandWalk{plan.rows, plan.row_length, 1};
    if (form == OperandForm::kScalar) return OperandWalk{1, 0, 0};
    return channel_walk;
  };
  plan.a = walk(a_form);
  plan.b = walk(b_form);
  return plan;
}

}  // namespace

std::unique_ptr<BinaryFloat> make_binary(const MicroKernels& kernels,
                                         reference::BinaryOperation operation,
                                         const std::vector<int64_t>& a_shape,
                                         const std::vector<int64_t>& b_shape) {
  const int code = operation_code(operation);
  const std::optional<BinaryPlan> plan = plan_binary(a_shape, b_shape);
  if (code < 0 || !plan) return nullptr;
  return std::make_unique<OptimizedBinary>(kernels, code, *plan, RowActivation{});
}

std::unique_ptr<BinaryFloat> make_binary_activation(const MicroKernels& kernels,
                                                    reference::BinaryOperation operation,
                                                    const std::vector<int64_t>& a_shape,
                                                    const std::vector<int64_t>& b_shape,
                                                    const reference::UnaryParams& activation) {
  const int code = operation_code(operation);
  const std::optional<BinaryPlan> plan = plan_binary(a_shape, b_shape);
  if (code < 0 || !plan) return nullptr;
  const std::optional<RowActivation> row_activation = row_activation_of(activation);
  if (!row_activation) return nullptr;
  return std::make_unique<OptimizedBinary>(kernels, code, *plan, *row_activation);
}

std::unique_ptr<BinaryInt8> make_binary_int8(const MicroKernels& kernels,
                                             reference::BinaryOperation operation,
                                             const std::vector<int64_t>& a_shape,
                                             const std::vector<int64_t>& b_shape,
                                             const BinaryInt8Quantization& quantization) {
  const int code = operation_code(operation);
  const std::optional<BinaryPlan> plan = plan_binary(a_shape, b_shape);
  if (code < 0 || !plan) return nullptr;
  std::optional<reference::QuantizedAdd> add;
  if (operation == reference::BinaryOperation::kAdd ||
      operation == reference::BinaryOperation::kSubtract) {
    add = quantized_add_of(operation, quantization);
    // Ratios so large that results need the reference's clamp, or an output zero point that is
    // no int8 code (the verifier lets none through): the reference kernel.
    if (!quantized_add_row_applies(add->a_ratio, add->b_ratio, add->output_zero_point)) {
      return nullptr;
    }
  }
  return std::make_unique<OptimizedBinaryInt8>(kernels, code, *plan, quantization, add);
}

}  // namespace orknn::kernels::cpu::optimized
