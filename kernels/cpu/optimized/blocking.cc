#include "optimized/blocking.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace orknn::kernels::cpu::optimized {

namespace {

// Blocks of about rows / row_blocks x columns / column_blocks, rounded up to whole tiles (so
// there may be fewer blocks than asked for, and the last ones smaller).
OutputBlocks blocks_of(size_t rows, size_t columns, size_t row_blocks, size_t column_blocks,
                       size_t mr, size_t nr) {
  OutputBlocks blocks;
  blocks.row_block = round_up(divide_round_up(rows, row_blocks), mr);
  blocks.column_block = round_up(divide_round_up(columns, column_blocks), nr);
  blocks.row_blocks = divide_round_up(rows, blocks.row_block);
  blocks.column_blocks = divide_round_up(columns, blocks.column_block);
  return blocks;
}

// Tasks per thread a split may have at most: a few let threads that start late or are preempted
// hand their share to the others; more only add packing and claiming.
constexpr size_t kTasksPerThread = 4;
// Threads the model follows (pools have at most 64).
constexpr size_t kModelledThreads = 64;

OutputBlocks choose_split(size_t rows, size_t columns, size_t independent, size_t threads,
                          size_t mr, size_t nr, const BlockLimits& limits) {
  const OutputBlocks largest = blocks_of(rows, columns, divide_round_up(rows, limits.task_rows),
                                         divide_round_up(columns, limits.column_block), mr, nr);
  if (threads <= 1) return largest;
  const size_t most_tasks =
      std::max(kTasksPerThread * threads, block_task_count(independent, largest) + threads - 1);
  OutputBlocks best = largest;
  size_t best_time =
      modelled_split_time(rows, columns, independent, threads, mr, nr, limits, largest);
  // Row splits outermost and ascending: among splits within 1% of each other the first found,
  // the one that packs least, is kept. Rounding to whole tiles may give fewer blocks than asked
  // for (the same blocks as a smaller count: skipped), never more, so the task bound also
  // bounds the counts asked for.
  for (size_t asked_rows = largest.row_blocks;
       asked_rows <= divide_round_up(rows, mr) &&
       independent * asked_rows * largest.column_blocks <= most_tasks;
       ++asked_rows) {
    const size_t row_blocks = blocks_of(rows, columns, asked_rows, 1, mr, nr).row_blocks;
    if (row_blocks != asked_rows) continue;
    for (size_t asked_columns = largest.column_blocks;
         asked_columns <= divide_round_up(columns, nr) &&
         independent * row_blocks * asked_columns <= most_tasks;
         ++asked_columns) {
      const OutputBlocks blocks = blocks_of(rows, columns, row_blocks, asked_columns, mr, nr);
      if (blocks.column_blocks != asked_columns) continue;
      const size_t time =
          modelled_split_time(rows, columns, independent, threads, mr, nr, limits, blocks);
      if (time * 100 < best_time * 99) {
        best = blocks;
        best_time = time;
      }
    }
  }
  return best;
}

// Kernels choose their split on every run; the search above takes microseconds with many
// threads, so the last few answers are kept per thread (plain values: nothing allocates).
struct SplitQuestion {
  size_t rows, columns, independent, threads, mr, nr;
  BlockLimits limits;
  bool operator==(const SplitQuestion& other) const {
    return rows == other.rows && columns == other.columns && independent == other.independent &&
           threads == other.threads && mr == other.mr && nr == other.nr &&
           limits.column_block == other.limits.column_block &&
           limits.task_rows == other.limits.task_rows &&
           limits.column_cost == other.limits.column_cost &&
           limits.row_cost == other.limits.row_cost;
  }
};
struct RememberedSplit {
  SplitQuestion question;
  OutputBlocks blocks;
  bool valid;
};
constexpr size_t kRememberedSplits = 64;  // a model's distinct layer shapes, roughly
thread_local RememberedSplit remembered_splits[kRememberedSplits];

size_t slot_of(const SplitQuestion& q) {
  size_t hash = q.rows;
  for (size_t value : {q.columns, q.independent, q.threads, q.mr, q.nr, q.limits.column_block,
                       q.limits.task_rows, q.limits.column_cost, q.limits.row_cost}) {
    hash = hash * 1000003u ^ value;
  }
  return (hash ^ hash >> 17) % kRememberedSplits;
}

}  // namespace

size_t modelled_split_time(size_t rows, size_t columns, size_t independent, size_t threads,
                           size_t mr, size_t nr, const BlockLimits& limits,
                           const OutputBlocks& blocks) {
  threads = std::clamp<size_t>(threads, 1, kModelledThreads);
  size_t busy_until[kModelledThreads] = {};
  auto cost = [&](size_t task_rows, size_t task_columns) {
    return round_up(task_rows, mr) * round_up(task_columns, nr) +
           task_columns * limits.column_cost + task_rows * limits.row_cost;
  };
  // ThreadPool hands the tasks out in order, columns fastest, each to the first free thread.
  for (size_t task = 0; task < block_task_count(independent, blocks); ++task) {
    const BlockTask block = block_task(task, blocks);
    size_t* first_free = std::min_element(busy_until, busy_until + threads);
    *first_free += cost(std::min(blocks.row_block, rows - block.first_row),
                        std::min(blocks.column_block, columns - block.first_column));
  }
  return *std::max_element(busy_until, busy_until + threads);
}

OutputBlocks choose_output_blocks(size_t rows, size_t columns, size_t independent, size_t threads,
                                  size_t mr, size_t nr, const BlockLimits& limits) {
  if (rows == 0 || columns == 0) return OutputBlocks{mr, nr, 0, 0};  // no tasks
  if (threads <= 1 || independent == 0) {
    return blocks_of(rows, columns, divide_round_up(rows, limits.task_rows),
                     divide_round_up(columns, limits.column_block), mr, nr);
  }
  const SplitQuestion question{rows, columns, independent, threads, mr, nr, limits};
  RememberedSplit& slot = remembered_splits[slot_of(question)];
  if (!slot.valid || !(slot.question == question)) {
    slot = {question, choose_split(rows, columns, independent, threads, mr, nr, limits), true};
  }
  return slot.blocks;
}

BlockLimits float_convolution_limits(const CpuCacheSizes& caches, size_t mr, size_t nr) {
  constexpr size_t kFloat = sizeof(float);
  // Round down to a multiple of `multiple`, then clamp (the bounds are multiples too).
  auto fit = [](size_t value, size_t multiple, size_t low, size_t high) {
    return std::clamp(value / multiple * multiple, low, high);
  };
  BlockLimits limits{};
  limits.depth_block = fit(caches.level1_data / 2 / (nr * kFloat), 8, 64, 512);
  limits.column_block =
      fit(caches.level2 / 2 / (limits.depth_block * kFloat), nr, 4 * nr, 256 * nr);
  limits.row_block = fit(caches.level2 / 4 / (limits.depth_block * kFloat), mr, 4 * mr, 128 * mr);
  limits.task_rows = SIZE_MAX / 2;
  return limits;
}

bool lane_window_readable(const reference::Window2D& window) {
  return window.stride_height >= 1 && window.stride_width >= 1 && window.dilation_height >= 1 &&
         window.dilation_width >= 1 && window.output_height >= 1 && window.output_width >= 1 &&
         window.input_height >= 1 && window.input_width >= 1 && window.pad_top >= 0 &&
         window.pad_left >= 0;
}

int64_t lane_padded_plane(const reference::Window2D& window) {
  return (window.input_height + window.pad_top + window.pad_bottom +
          window.kernel_height * window.dilation_height) *
         (window.input_width + window.pad_left + window.pad_right +
          window.kernel_width * window.dilation_width);
}

LanePlanes lane_planes(const reference::Window2D& window) {
  LanePlanes planes;
  const int64_t last_row = (window.output_height - 1) * window.stride_height +
                           (window.kernel_height - 1) * window.dilation_height - window.pad_top;
  const int64_t last_column = (window.output_width - 1) * window.stride_width +
                              (window.kernel_width - 1) * window.dilation_width - window.pad_left;
  planes.height =
      static_cast<size_t>(window.pad_top + std::max<int64_t>(window.input_height, last_row + 1));
  planes.width =
      static_cast<size_t>(window.pad_left + std::max<int64_t>(window.input_width, last_column + 1));
  const auto width = static_cast<int64_t>(planes.width);
  for (int64_t ky = 0; ky < window.kernel_height; ++ky) {
    for (int64_t kx = 0; kx < window.kernel_width; ++kx) {
      planes.tap_offsets.push_back(
          static_cast<int32_t>(ky * window.dilation_height * width + kx * window.dilation_width));
    }
  }
  for (int64_t oy = 0; oy < window.output_height; ++oy) {
    for (int64_t ox = 0; ox < window.output_width; ++ox) {
      planes.pixel_offsets.push_back(
          static_cast<int32_t>(oy * window.stride_height * width + ox * window.stride_width));
    }
  }
  return planes;
}

bool int16_pair_offsets_fit(int32_t input_zero_point,
                            const std::vector<int32_t>& weight_zero_points) {
  constexpr int64_t kLimit = 32767;
  if (largest_int8_offset(input_zero_point) > kLimit) return false;
  for (int32_t zero_point : weight_zero_points) {
    if (largest_int8_offset(zero_point) > kLimit) return false;
  }
  return true;
}

Im2colGeometry im2col_geometry(const reference::Conv2DShape& shape) {
  const reference::Window2D& window = shape.window;
  Im2colGeometry geometry;
  geometry.channels = shape.input_channels / shape.groups;
  const bool pointwise =
      window.kernel_height == 1 && window.kernel_width == 1 && window.stride_height == 1 &&
      window.stride_width == 1 && window.pad_top == 0 && window.pad_left == 0 &&
      window.output_height == window.input_height && window.output_width == window.input_width;
  if (pointwise) {
    // One row of height x width pixels: packing copies whole panels.
    geometry.window.input_width = geometry.window.output_width =
        window.input_height * window.input_width;
  } else {
    geometry.window = window;
  }
  return geometry;
}

size_t build_segments(const Im2colGeometry& g, size_t first_column, size_t columns,
                      size_t panel_columns, Segment* segments) {
  size_t count = 0;
  size_t j = 0;
  while (j < columns) {
    const int64_t pixel = static_cast<int64_t>(first_column + j);
    const int64_t output_row = pixel / g.window.output_width;
    const int64_t output_column = pixel % g.window.output_width;
    const size_t lane = j % panel_columns;
    const size_t length = std::min({panel_columns - lane, columns - j,
                                    static_cast<size_t>(g.window.output_width - output_column)});
    segments[count++] =
        Segment{static_cast<uint32_t>(j / panel_columns), static_cast<uint32_t>(lane),
                static_cast<uint32_t>(length),
                static_cast<int32_t>(output_row * g.window.stride_height - g.window.pad_top),
                static_cast<int32_t>(output_column * g.window.stride_width - g.window.pad_left)};
    j += length;
  }
  return count;
}

namespace {

// The conversion of a gather that copies its elements unchanged (the int8 im2col rows): then
// pack_row copies each stride-1 run as a block instead of element by element.
struct CopyUnchanged {};

// The padding at a segment's ends: usually 0 or 1 elements (a pad of 1), which a library
// memset call per segment would cost more than (it was 5% of resnet18 int8).
template <typename Out>
void fill_padding(Out* out, int64_t count, Out pad) {
  if (count == 1) {
    *out = pad;
  } else if (count > 1) {
    std::fill_n(out, count, pad);
  }
}

// Writes im2col row `k` (matrix depth index) for every segment. `destination(segment)` is
// where the segment's first element goes; consecutive elements are kStep apart.
template <size_t kStep, typename Out, typename In, typename Convert, typename Destination>
void pack_row(const Im2colGeometry& g, const In* input, int64_t k, const Segment* segments,
              size_t segment_count, Convert convert, Destination destination, Out pad = Out{0}) {
  const int64_t taps = g.window.kernel_height * g.window.kernel_width;
  const int64_t channel = k / taps;
  const int64_t kernel_row = k % taps / g.window.kernel_width;
  const int64_t kernel_column = k % g.window.kernel_width;
  const In* plane = input + channel * g.window.input_height * g.window.input_width;
  const int64_t row_offset = kernel_row * g.window.dilation_height;
  const int64_t column_offset = kernel_column * g.window.dilation_width;
  for (size_t s = 0; s < segment_count; ++s) {
    const Segment& segment = segments[s];
    Out* out = destination(segment);
    const int64_t length = segment.length;
    const int64_t input_row = segment.input_row + row_offset;
    constexpr bool kBlockCopy = std::is_same_v<Convert, CopyUnchanged>;
    static_assert(!kBlockCopy || (kStep == 1 && std::is_same_v<In, Out>));
    if (input_row < 0 || input_row >= g.window.input_height) {
      if constexpr (kBlockCopy) {
        std::fill_n(out, length, pad);
      } else {
        for (int64_t t = 0; t < length; ++t) out[t * kStep] = pad;
      }
      continue;
    }
    const In* row = plane + input_row * g.window.input_width;
    const int64_t first = segment.input_column + column_offset;
    if (g.window.stride_width == 1) {
      // Valid t: 0 <= first + t < width.
      const int64_t low = std::clamp<int64_t>(-first, 0, length);
      const int64_t high = std::clamp<int64_t>(g.window.input_width - first, low, length);
      const In* source = row + first;
      if constexpr (kBlockCopy) {
        fill_padding(out, low, pad);
        std::copy_n(source + low, high - low, out + low);
        fill_padding(out + high, length - high, pad);
      } else {
        for (int64_t t = 0; t < low; ++t) out[t * kStep] = pad;
        for (int64_t t = low; t < high; ++t) out[t * kStep] = convert(source[t]);
        for (int64_t t = high; t < length; ++t) out[t * kStep] = pad;
      }
    } else {
      // Valid t: 0 <= first + t * stride < width, found once so the copy loops have no test.
      const int64_t stride = g.window.stride_width;
      const int64_t low =
          std::clamp<int64_t>(first < 0 ? (-first + stride - 1) / stride : 0, 0, length);
      const int64_t past = g.window.input_width - first;  // columns from `first` to the edge
      const int64_t high =
          std::clamp<int64_t>(past > 0 ? (past + stride - 1) / stride : 0, low, length);
      const In* source = row + (first + low * stride);  // inside the row when low < high
      if constexpr (kBlockCopy) {
        fill_padding(out, low, pad);
        if (stride == 2) {
          // A constant stride the compiler vectorizes (the int8 stems: 7x7 and 6x6 stride 2).
          for (int64_t t = low; t < high; ++t) out[t] = source[(t - low) * 2];
        } else {
          for (int64_t t = low; t < high; ++t) out[t] = source[(t - low) * stride];
        }
        fill_padding(out + high, length - high, pad);
      } else {
        for (int64_t t = 0; t < low; ++t) out[t * kStep] = pad;
        if (stride == 2) {
          // The common strided case with a constant stride, which the compiler vectorizes.
          for (int64_t t = low; t < high; ++t) out[t * kStep] = convert(source[(t - low) * 2]);
        } else {
          for (int64_t t = low; t < high; ++t) {
            out[t * kStep] = convert(source[(t - low) * stride]);
          }
        }
        for (int64_t t = high; t < length; ++t) out[t * kStep] = pad;
      }
    }
  }
}

}  // namespace

// How far ahead (in input rows) a pointwise gather prefetches, and the line it prefetches by.
constexpr size_t kCopyAhead = 4;
constexpr size_t kCacheLine = 64;

void gather_im2col_rows_float(const Im2colGeometry& g, const float* input, size_t depth_begin,
                              size_t depth, const Segment* segments, size_t segment_count,
                              size_t columns, size_t row_stride, float* packed) {
  const bool pointwise = g.single_row_pointwise();
  for (size_t kk = 0; kk < depth; ++kk) {
    const int64_t k = static_cast<int64_t>(depth_begin + kk);
    float* out = packed + kk * row_stride;
    if (pointwise) {
      const float* row = input + k * g.window.input_width + segments[0].input_column;
      // A pointwise block's rows are a plane apart (on large planes a page or more), one
      // prefetch stream each, and between blocks the tiles' output stores push the streams out
      // of the prefetchers: each row's copy started with demand misses. Asking for the row
      // kCopyAhead rows on while this one is copied took 0.80-0.93x the time of YOLOv5s's 1x1
      // layers on 80x80 and 160x160 planes (bench_kernels, in one process), and left the smaller
      // planes even.
      if (kk + kCopyAhead < depth) {
        const char* ahead = reinterpret_cast<const char*>(row + kCopyAhead * g.window.input_width);
        for (size_t byte = 0; byte < columns * sizeof(float); byte += kCacheLine) {
          __builtin_prefetch(ahead + byte);
        }
      }
      std::memcpy(out, row, columns * sizeof(float));
    } else {
      pack_row<1, float>(
          g, input, k, segments, segment_count, [](float value) { return value; },
          [out](const Segment& segment) { return out + segment.lane; });
    }
    // Fewer than NR floats: a plain loop (a memset call per row was 3% of resnet18 at two
    // threads, where 7x7-pixel layers re-gather B once per row block).
    for (size_t column = columns; column < row_stride; ++column) out[column] = 0.0f;
  }
}

namespace {

// Any zero point: converts element by element into the interleaved pairs.
void pack_pairs_elementwise(const Im2colGeometry& g, const int8_t* input, int32_t zero_point,
                            size_t pair_begin, size_t pairs, const Segment* segments,
                            size_t segment_count, size_t columns, size_t panel_columns,
                            int16_t* packed) {
  const size_t panel_size = pairs * panel_columns * 2;
  const size_t tail = columns % panel_columns;
  const size_t panels = divide_round_up(columns, panel_columns);
  int16_t* last_panel = packed + (columns / panel_columns) * panel_size;
  const int64_t depth = g.depth();
  for (size_t pp = 0; pp < pairs; ++pp) {
    for (size_t half = 0; half < 2; ++half) {
      const int64_t k = static_cast<int64_t>(2 * (pair_begin + pp) + half);
      if (k >= depth) {
        for (size_t panel = 0; panel < panels; ++panel) {
          int16_t* out = packed + panel * panel_size + pp * panel_columns * 2 + half;
          for (size_t j = 0; j < panel_columns; ++j) out[2 * j] = 0;
        }
        continue;
      }
      pack_row<2, int16_t>(
          g, input, k, segments, segment_count,
          [zero_point](int8_t value) { return static_cast<int16_t>(value - zero_point); },
          [&](const Segment& segment) {
            return packed + segment.panel * panel_size + (pp * panel_columns + segment.lane) * 2 +
                   half;
          });
    }
    if (tail) {
      std::memset(last_panel + (pp * panel_columns + tail) * 2, 0,
                  (panel_columns - tail) * 2 * sizeof(int16_t));
    }
  }
}

}  // namespace

namespace {

// Stride 1 with output rows as wide as the input's ("same" padding, e.g. 3x3 pad 1): the next
// output row reads the next input row at the same columns, so a run of segments whose input
// rows exist reads one contiguous stretch of the plane. It is copied at once, then the columns
// that fall in the left or right padding (which the stretch fills from the neighbouring row)
// are set to the pad. One copy per run instead of one per output row.
void gather_same_width_row(const Im2colGeometry& g, const int8_t* input, int64_t k,
                           const Segment* segments, size_t segment_count, int8_t pad, int8_t* row) {
  const reference::Window2D& w = g.window;
  const int64_t taps = w.kernel_height * w.kernel_width;
  const int8_t* plane = input + k / taps * w.input_height * w.input_width;
  const int64_t row_offset = k % taps / w.kernel_width * w.dilation_height;
  const int64_t column_offset = k % w.kernel_width * w.dilation_width;
  const int64_t plane_size = w.input_height * w.input_width;
  auto row_exists = [&](const Segment& segment) {
    const int64_t input_row = segment.input_row + row_offset;
    return input_row >= 0 && input_row < w.input_height;
  };
  size_t s = 0;
  while (s < segment_count) {
    const Segment& first = segments[s];
    int8_t* out = row + first.lane;
    if (!row_exists(first)) {
      fill_padding(out, int64_t{first.length}, pad);
      ++s;
      continue;
    }
    size_t end = s + 1;
    int64_t length = first.length;
    while (end < segment_count && row_exists(segments[end])) length += segments[end++].length;
    // Plane index of out[0]; the stretch is clipped to the plane (clipped ends are padding).
    const int64_t start =
        (first.input_row + row_offset) * w.input_width + first.input_column + column_offset;
    const int64_t low = std::clamp<int64_t>(-start, 0, length);
    const int64_t high = std::clamp<int64_t>(plane_size - start, low, length);
    fill_padding(out, low, pad);
    std::copy_n(plane + start + low, high - low, out + low);
    fill_padding(out + high, length - high, pad);
    for (size_t t = s; t < end; ++t) {
      const Segment& segment = segments[t];
      const int64_t segment_length = segment.length;
      const int64_t first_column = segment.input_column + column_offset;
      const int64_t valid_low = std::clamp<int64_t>(-first_column, 0, segment_length);
      const int64_t valid_high =
          std::clamp<int64_t>(w.input_width - first_column, valid_low, segment_length);
      fill_padding(row + segment.lane, valid_low, pad);
      fill_padding(row + segment.lane + valid_high, segment_length - valid_high, pad);
    }
    s = end;
  }
}

}  // namespace

void gather_im2col_int8_row(const Im2colGeometry& g, const int8_t* input, int64_t k,
                            const Segment* segments, size_t segment_count, int8_t pad,
                            int8_t* row) {
  const reference::Window2D& w = g.window;
  if (w.stride_width == 1 && w.stride_height == 1 && w.output_width == w.input_width) {
    gather_same_width_row(g, input, k, segments, segment_count, pad, row);
    return;
  }
  pack_row<1, int8_t>(
      g, input, k, segments, segment_count, CopyUnchanged{},
      [&](const Segment& segment) { return row + segment.lane; }, pad);
}

void pack_im2col_int16_pairs(const MicroKernels& kernels, const Im2colGeometry& g,
                             const int8_t* input, int32_t zero_point, size_t first_column,
                             size_t pair_begin, size_t pairs, const Segment* segments,
                             size_t segment_count, size_t columns, int8_t* rows, int16_t* packed) {
  const size_t panel_columns = kernels.int16_columns;
  if (zero_point < -128 || zero_point > 127) {
    // Padding (x == zero point) has no int8 code: convert element by element.
    pack_pairs_elementwise(g, input, zero_point, pair_begin, pairs, segments, segment_count,
                           columns, panel_columns, packed);
    return;
  }
  const bool pointwise = g.single_row_pointwise();
  const int64_t depth = g.depth();
  // Im2col row k of the block's columns, gathered as int8 (padding = the zero point), unless
  // it is a stretch of the input already (pointwise).
  auto row_of = [&](int64_t k, int8_t* row) -> const int8_t* {
    if (k >= depth) return nullptr;
    if (pointwise) return input + k * g.window.input_width + static_cast<int64_t>(first_column);
    // Segments built with int16_pair_segment_panel: one panel as wide as the block.
    gather_im2col_int8_row(g, input, k, segments, segment_count, static_cast<int8_t>(zero_point),
                           row);
    return row;
  };
  Int8PairRows pair_rows{};
  pair_rows.columns = columns;
  pair_rows.zero_point = zero_point;
  pair_rows.panel_stride = pairs * panel_columns * 2;
  for (size_t pp = 0; pp < pairs; ++pp) {
    const int64_t k = static_cast<int64_t>(2 * (pair_begin + pp));
    pair_rows.row0 = row_of(k, rows);
    pair_rows.row1 = row_of(k + 1, rows + columns);
    pair_rows.out = packed + pp * panel_columns * 2;
    kernels.pack_int8_pairs(pair_rows);
  }
}

}  // namespace orknn::kernels::cpu::optimized
