#include "devices/cpu/ops/strided_copies.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"

namespace orknn::devices::cpu {
namespace {

// Output bytes per task, and below twice this a copy stays on the calling thread.
constexpr size_t kTaskBytes = 64 * 1024;
// The edge of a transposing tile, in elements.
constexpr int64_t kTile = 16;

// Splits `count` units of `unit_bytes` each into tasks of about kTaskBytes and runs
// body(first, end) for each, on the pool when there is more than one.
template <typename Body>
void for_each_task(size_t count, size_t unit_bytes, Body body) {
  const size_t per_task = std::max<size_t>(1, kTaskBytes / std::max<size_t>(1, unit_bytes));
  const size_t tasks = (count + per_task - 1) / per_task;
  if (tasks <= 2) {
    body(size_t{0}, count);
    return;
  }
  ThreadPool::current_or_serial().parallel_for(tasks, [&](size_t task, size_t) {
    const size_t first = task * per_task;
    body(first, std::min(count, first + per_task));
  });
}

template <typename Element>
void copy_one(const uint8_t* from, uint8_t* to) {
  Element value;
  std::memcpy(&value, from, sizeof(Element));
  std::memcpy(to, &value, sizeof(Element));
}

}  // namespace

StridedCopies::StridedCopies(size_t element_size,
                             const kernels::reference::StridedCopyParams& params)
    : element_size_(element_size), input_offset_(params.input_offset) {
  total_ = 1;
  for (int64_t extent : params.output_shape) total_ *= static_cast<size_t>(extent);
  if (total_ == 0) return;
  // Axes of extent 1 never move; a neighbour pair whose outer stride is the inner one times the
  // inner extent is one axis.
  for (size_t k = 0; k < params.output_shape.size(); ++k) {
    const int64_t extent = params.output_shape[k];
    const int64_t stride = params.input_strides[k];
    if (extent == 1) continue;
    shape_.push_back(extent);
    input_strides_.push_back(stride);
  }
  for (size_t k = shape_.size(); k-- > 1;) {
    if (input_strides_[k - 1] == input_strides_[k] * shape_[k]) {
      shape_[k - 1] *= shape_[k];
      input_strides_[k - 1] = input_strides_[k];
      shape_.erase(shape_.begin() + static_cast<ptrdiff_t>(k));
      input_strides_.erase(input_strides_.begin() + static_cast<ptrdiff_t>(k));
    }
  }
  output_strides_.assign(shape_.size(), 1);
  for (size_t k = shape_.size(); k-- > 1;) output_strides_[k - 1] = output_strides_[k] * shape_[k];
  if (shape_.empty() || input_strides_.back() == 1) {
    plan_ = Plan::kRuns;
    return;
  }
  for (size_t k = 0; k + 1 < shape_.size(); ++k) {
    if (input_strides_[k] == 1) {
      plan_ = Plan::kTiles;
      tile_axis_ = k;
      return;
    }
  }
  plan_ = Plan::kElements;
}

void StridedCopies::outer_offsets(size_t index, size_t skip_a, size_t skip_b, int64_t* input_offset,
                                  int64_t* output_offset) const {
  int64_t in = 0, out = 0;
  for (size_t k = shape_.size(); k-- > 0;) {
    if (k == skip_a || k == skip_b) continue;
    const auto extent = static_cast<size_t>(shape_[k]);
    const auto position = static_cast<int64_t>(index % extent);
    index /= extent;
    in += position * input_strides_[k];
    out += position * output_strides_[k];
  }
  *input_offset = in;
  *output_offset = out;
}

template <typename Element>
void StridedCopies::copy_runs(const uint8_t* input, uint8_t* output) const {
  const size_t last = shape_.empty() ? SIZE_MAX : shape_.size() - 1;
  const size_t run = shape_.empty() ? 1 : static_cast<size_t>(shape_.back());
  const size_t run_bytes = run * sizeof(Element);
  for_each_task(total_ / run, run_bytes, [&](size_t first, size_t end) {
    for (size_t r = first; r < end; ++r) {
      int64_t in = 0, out = 0;
      outer_offsets(r, last, SIZE_MAX, &in, &out);
      std::memcpy(output + out * static_cast<int64_t>(sizeof(Element)),
                  input + in * static_cast<int64_t>(sizeof(Element)), run_bytes);
    }
  });
}

template <typename Element>
void StridedCopies::copy_tiles(const uint8_t* input, uint8_t* output) const {
  constexpr auto kBytes = static_cast<int64_t>(sizeof(Element));
  const size_t last = shape_.size() - 1;
  const int64_t rows = shape_[tile_axis_];  // contiguous in the input
  const int64_t columns = shape_[last];     // contiguous in the output
  const int64_t row_step = output_strides_[tile_axis_];
  const int64_t column_step = input_strides_[last];
  const auto row_blocks = static_cast<size_t>((rows + kTile - 1) / kTile);
  const size_t outer = total_ / static_cast<size_t>(rows * columns);
  for_each_task(outer * row_blocks, static_cast<size_t>(kTile * columns * kBytes),
                [&](size_t first, size_t end) {
                  for (size_t task = first; task < end; ++task) {
                    int64_t in = 0, out = 0;
                    outer_offsets(task / row_blocks, tile_axis_, last, &in, &out);
                    const int64_t row0 = static_cast<int64_t>(task % row_blocks) * kTile;
                    const int64_t row_end = std::min(rows, row0 + kTile);
                    for (int64_t column0 = 0; column0 < columns; column0 += kTile) {
                      const int64_t column_end = std::min(columns, column0 + kTile);
                      for (int64_t i = row0; i < row_end; ++i) {
                        const uint8_t* from = input + (in + i) * kBytes;
                        uint8_t* to = output + (out + i * row_step) * kBytes;
                        for (int64_t j = column0; j < column_end; ++j) {
                          copy_one<Element>(from + j * column_step * kBytes, to + j * kBytes);
                        }
                      }
                    }
                  }
                });
}

template <typename Element>
void StridedCopies::copy_elements(const uint8_t* input, uint8_t* output) const {
  constexpr auto kBytes = static_cast<int64_t>(sizeof(Element));
  const size_t last = shape_.size() - 1;
  const int64_t columns = shape_[last];
  const int64_t column_step = input_strides_[last];
  for_each_task(total_ / static_cast<size_t>(columns), static_cast<size_t>(columns * kBytes),
                [&](size_t first, size_t end) {
                  for (size_t r = first; r < end; ++r) {
                    int64_t in = 0, out = 0;
                    outer_offsets(r, last, SIZE_MAX, &in, &out);
                    for (int64_t j = 0; j < columns; ++j) {
                      copy_one<Element>(input + (in + j * column_step) * kBytes,
                                        output + (out + j) * kBytes);
                    }
                  }
                });
}

template <typename Element>
void StridedCopies::copy_typed(const uint8_t* input, uint8_t* output) const {
  switch (plan_) {
    case Plan::kNothing:
      return;
    case Plan::kRuns:
      return copy_runs<Element>(input, output);
    case Plan::kTiles:
      return copy_tiles<Element>(input, output);
    case Plan::kElements:
      return copy_elements<Element>(input, output);
  }
}

void StridedCopies::copy(const void* input, void* output) const {
  if (plan_ == Plan::kNothing) return;
  const auto* first =
      static_cast<const uint8_t*>(input) + input_offset_ * static_cast<int64_t>(element_size_);
  auto* destination = static_cast<uint8_t*>(output);
  switch (element_size_) {
    case 1:
      return copy_typed<uint8_t>(first, destination);
    case 2:
      return copy_typed<uint16_t>(first, destination);
    case 4:
      return copy_typed<uint32_t>(first, destination);
    case 8:
      return copy_typed<uint64_t>(first, destination);
    default: {
      // Any other element size: the reference's walk (serial).
      kernels::reference::StridedCopyParams params;
      params.output_shape = shape_;
      params.input_strides = input_strides_;
      kernels::reference::strided_copy(element_size_, params, first, destination);
    }
  }
}

}  // namespace orknn::devices::cpu
