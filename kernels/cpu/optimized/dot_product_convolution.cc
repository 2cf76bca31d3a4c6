// int8 convolution as GEMM on the dot-product tiles (dot_product_kernels.h): per image and
// group, output = W x im2col(input) with W packed once (w - zw, int8) and im2col panels of
// input codes x + o packed per task and depth chunk (padding is the input zero point's code, i.e.
// x - zx = 0). The zero-point term -(zx + o) sum_k (w - zw) is one constant per output channel,
// added with the bias before the requantization; the blocking is the int16-pair driver's
// (optimized/blocking.h). On pair-limited tables (VPMADDUBSW's int16 pair sums) A holds pairs
// the tiles sum exactly and each tile adds its rows' corrections (dot_product_pair_split.h).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/large_allocation.h"
#include "optimized/blocking.h"
#include "optimized/dot_product_epilogue.h"
#include "optimized/dot_product_im2col.h"
#include "optimized/dot_product_kernels.h"
#include "optimized/dot_product_pair_split.h"
#include "optimized/phase_planes.h"

namespace orknn::kernels::cpu::optimized {
namespace {

using reference::Conv2DShape;
using reference::Int8Requantization;

// Matrix depth per chunk: a task's B chunk (kDepthBlock x column block bytes, 48 KB) stays in
// L1/L2 while the row panels stream past it.
constexpr size_t kDepthBlock = 256;
// Gathering an int8 im2col element cost about 70 VNNI multiply-adds (resnet18 int8 at two
// threads, traced with the row gather; the tap pieces below made packing cheaper and the figure
// was not re-traced), so splitting over threads re-packs B per row block only when it must.
constexpr BlockLimits kLimits{kDepthBlock, 144, 192, 288, 64};
// Pair-limited tables pack B along tap pieces only from this many input channels per group on:
// below it, gathering each im2col row and packing the rows (pack_activation_groups) measured
// faster on Zen 3 (docs/cpu-kernels.md, "Session 13"; layer time with gathers / with the tap
// packer: the 3-channel stems and YOLOv5s's 32-channel 3x3 layers 0.6-0.8, the 3x3/2 layers
// of 64 channels about 0.9, of 128 channels 0.91-1.0), while at 256 channels the two were even
// or the tap packer won (ResNet18's 3x3/2 256 -> 512 at 14x14). Since session 14 the windows
// with stride 2 both ways read phase planes instead (phase_split_preferred), whatever their
// channels, so this applies to the other strides.
constexpr size_t kSmallestPairTapChannels = 256;
// The thread split's cost of a B column (BlockLimits::column_cost) for pointwise layers read in
// place on small planes with the table's small_plane_depth_block: their B is packed from the
// input rows without a gather, so kLimits' 64 (traced with the row gather) overstated it and
// split 14x14 layers of few output channels into 48-column tasks that each stream all of A.
// With 8, 576 -> 96 and 384 -> 64 at 14x14 split into two column blocks and 1024 -> 256 into
// row halves (docs/cpu-kernels.md, "Session 13: int8 pointwise convolutions on 7x7 and 14x14
// planes").
constexpr size_t kInPlaceColumnCost = 8;
// pair_convolution_preferred's "few channels": windows over fewer input channels (one group)
// go to the pair tiles at stride 1 too, where they measured faster with gathered rows.
constexpr int64_t kFewPairChannels = 64;
// The most tap pieces a block may hold in scratch (16 bytes each): kernels with more taps
// (large kernels over narrow outputs) gather their rows instead.
constexpr size_t kMaxTapPieces = 4096;
// The most weight pairs pair_limited_depth_order compares for one layer (a few milliseconds).
constexpr size_t kLargestPairingWork = size_t{1} << 22;

// Depth groups per chunk. Pair-limited tables split the depth into chunks of about kDepthBlock
// as equal as the groups allow, with the count rounded to the nearest (at least one): a depth of
// 288 (3x3 x 32) is one chunk of 72 groups rather than 64 + 8, whose second chunk stores and
// reloads every int32 sum for 8 groups of work (YOLOv5s's stride-2 layers measured 0.93-0.97x
// their time; docs/cpu-kernels.md, "Session 13"). A chunk then holds at most 1.5 x kDepthBlock,
// whose B block (at most 72 KB) stays in L2. On planes of at most kSmallPlanePixels output
// pixels the table's small_plane_depth_block replaces kDepthBlock: there B blocks are at most
// 192 columns (14x14) or 64 (7x7) wide, and deeper chunks took the deep pointwise layers there
// to 0.83-0.91x their time (fewer stores and reloads of the int32 sums; docs/cpu-kernels.md,
// "Session 13: int8 pointwise convolutions on 7x7 and 14x14 planes"). Other tables keep whole
// chunks of kDepthBlock.
// Whether a convolution of `pixels` output pixels per image takes the table's
// small_plane_depth_block (and, pointwise, kInPlaceColumnCost).
bool small_plane_chunks(const DotProductKernels& kernels, size_t pixels) {
  return kernels.small_plane_depth_block && pixels <= kSmallPlanePixels;
}

size_t chunk_groups(const DotProductKernels& kernels, size_t depth_groups, size_t pixels) {
  const bool small_plane = small_plane_chunks(kernels, pixels);
  const size_t nominal =
      (small_plane ? kernels.small_plane_depth_block : kDepthBlock) / kernels.group_depth;
  if (!kernels.pair_sums_limited || depth_groups == 0) return nominal;
  const size_t chunks = std::max<size_t>(1, (depth_groups + nominal / 2) / nominal);
  return divide_round_up(depth_groups, chunks);
}

// Whether the driver reads a stride-2 window's im2col rows in place from the input's phase planes
// (phase_planes.h) instead of gathering them with stride 2 or packing them along tap pieces.
// Pair-limited tables only (measured on Zen 3's avx2 pair tiles; the other tables' windows were
// not measured), windows larger than 1x1 (a 1x1 window reads one row phase and column tap: the
// subsampled copy, subsampled_pointwise.h, is that layer's form). Per layer against the row
// gather or the tap packer (docs/cpu-kernels-journal/session-14-strided.md): 3x3/2 over
// 32-256 channels 0.88-0.96x at one thread and 0.82-0.97x at two (one run of 1.17x for
// 256 -> 512 at 40x40 among 0.93 and 0.97), the 3-channel stems 0.81-0.91x and 0.89-1.00x.
bool phase_split_preferred(const DotProductKernels& kernels, const Conv2DShape& shape) {
  const reference::Window2D& w = shape.window;
  return kernels.pair_sums_limited && phase_planes_apply(w) && w.kernel_height * w.kernel_width > 1;
}

class DotProductConvolution final : public Conv2DInt8 {
 public:
  DotProductConvolution(const DotProductKernels& kernels, const Conv2DShape& shape,
                        const Int8Requantization& requantization, const int8_t* weights)
      : kernels_(kernels),
        shape_(shape),
        requantization_(requantization),
        geometry_(im2col_geometry(shape)) {
    mr_ = kernels.rows;
    nr_ = kernels.columns;
    group_depth_ = kernels.group_depth;
    group_rows_ = static_cast<size_t>(shape.output_channels / shape.groups);
    depth_ = static_cast<size_t>(geometry_.depth());
    depth_groups_ = divide_round_up(depth_, group_depth_);
    chunk_groups_ =
        chunk_groups(kernels, depth_groups_,
                     static_cast<size_t>(shape.window.output_height * shape.window.output_width));
    chunks_ = divide_round_up(depth_groups_, chunk_groups_);
    if (small_plane_chunks(
            kernels, static_cast<size_t>(shape.window.output_height * shape.window.output_width)) &&
        pointwise_in_place()) {
      limits_.column_cost = kInPlaceColumnCost;
    }
    group_panels_ = divide_round_up(group_rows_, mr_);
    columns_ = static_cast<size_t>(geometry_.columns());
    group_weights_size_ = divide_round_up(group_rows_, mr_) * depth_groups_ * mr_ * group_depth_;
    if (kernels.pair_sums_limited) choose_depth_order(weights);
    pack_weights(weights);

    const size_t column_block = std::min(kLimits.column_block, round_up(columns_, nr_));
    const size_t task_rows = std::min(kLimits.task_rows, round_up(group_rows_, mr_));
    const size_t chunk_depth = std::min(chunk_groups_, depth_groups_) * group_depth_;
    const size_t taps =
        static_cast<size_t>(geometry_.window.kernel_height * geometry_.window.kernel_width);
    const size_t panels = divide_round_up(column_block, nr_);
    const size_t tap_segments =
        max_panel_segments(column_block, nr_, static_cast<size_t>(geometry_.window.output_width));
    phase_split_ = phase_split_preferred(kernels, shape);
    packs_taps_ =
        kernels.pack_activation_taps && !pointwise_in_place() && !phase_split_ &&
        static_cast<size_t>(geometry_.window.stride_width) <= kernels.largest_tap_stride &&
        taps * tap_segments <= kMaxTapPieces &&
        nr_ * static_cast<size_t>(geometry_.window.stride_width) <= 64 &&
        (!kernels.pair_sums_limited ||
         static_cast<size_t>(shape.input_channels / shape.groups) >= kSmallestPairTapChannels);
    rows_offset_ = align_bytes(chunk_depth * column_block);
    accumulators_offset_ = rows_offset_ + align_bytes(group_depth_ * column_block);
    segments_offset_ =
        accumulators_offset_ + align_bytes(task_rows * column_block * sizeof(int32_t));
    const size_t segment_capacity = packs_taps_ ? tap_segments : max_segments(column_block);
    pieces_offset_ = segments_offset_ + align_bytes(segment_capacity * sizeof(Segment));
    first_piece_offset_ =
        pieces_offset_ +
        (packs_taps_ ? align_bytes(taps * tap_segments * sizeof(Int8TapPiece)) : 0);
    constants_offset_ = first_piece_offset_ +
                        (packs_taps_ ? align_bytes(taps * (panels + 1) * sizeof(uint32_t)) : 0);
    task_bytes_ = constants_offset_ + align_bytes(task_rows * sizeof(int32_t));
    if (phase_split_) {
      // A task splits the planes of the output rows its block touches, into its scratch: at
      // most (column block - 1) / width + 2 rows.
      const reference::Window2D& w = geometry_.window;
      const int64_t block_rows = std::min<int64_t>(
          w.output_height, static_cast<int64_t>(column_block - 1) / w.output_width + 2);
      const PhaseLayout largest = phase_layout(w, 0, block_rows);
      phase_offset_ = align_bytes(task_bytes_);
      task_bytes_ =
          phase_offset_ + align_bytes(static_cast<size_t>(shape.input_channels / shape.groups) *
                                      largest.channel_bytes());
      // Each tap's plane and row offset, which hold for any such block layout.
      for (int64_t ky = 0; ky < w.kernel_height; ++ky) {
        for (int64_t kx = 0; kx < w.kernel_width; ++kx) {
          const size_t offset = phase_tap_offset(w, largest, ky, kx);
          tap_planes_.push_back(offset / largest.plane_bytes());
          tap_rows_.push_back(offset % largest.plane_bytes());
        }
      }
    }
    small_multipliers_ =
        small_multipliers(requantization.multipliers.data(), requantization.multipliers.size(),
                          requantization.output_zero_point);
    requantizes_in_tile_ =
        kernels.tile_requantized_activations_in_b && small_multipliers_ && !requantization.silu;
    std::snprintf(algorithm_, sizeof(algorithm_), "%s int8 %sgemm %zux%zu", kernels.name,
                  kernels.pair_sums_limited ? "byte-pair " : "", mr_, nr_);
  }

  size_t scratch_bytes() const override { return task_bytes_; }

  // Pair-limited tables: the share of (output channel, depth group) blocks with a correction.
  double correction_share() const {
    const size_t blocks = static_cast<size_t>(shape_.output_channels) * depth_groups_;
    return blocks ? static_cast<double>(corrections_.size()) / static_cast<double>(blocks) : 0.0;
  }
  const char* algorithm() const override { return algorithm_; }

  void run(const int8_t* input, const int8_t*, const int32_t* bias, int8_t* output,
           ThreadPool& pool) const override {
    const size_t images = static_cast<size_t>(shape_.batch);
    const size_t groups = static_cast<size_t>(shape_.groups);
    const OutputBlocks blocks = choose_output_blocks(group_rows_, columns_, images * groups,
                                                     pool.thread_count(), mr_, nr_, limits_);
    const size_t tasks = block_task_count(images * groups, blocks);
    pool.parallel_for(tasks, [&](size_t task, size_t thread) {
      const BlockTask position = block_task(task, blocks);
      Block block;
      block.image = position.independent / groups;
      block.group = position.independent % groups;
      block.first_row = position.first_row;
      block.first_column = position.first_column;
      if (block.first_row >= group_rows_ || block.first_column >= columns_) return;
      block.rows = std::min(blocks.row_block, group_rows_ - block.first_row);
      block.columns = std::min(blocks.column_block, columns_ - block.first_column);
      run_block(input, bias, output, block, pool.scratch(thread, task_bytes_));
    });
  }

 private:
  struct Block {
    size_t image = 0;
    size_t group = 0;
    size_t first_row = 0;  // inside the group
    size_t rows = 0;
    size_t first_column = 0;
    size_t columns = 0;
  };

  // A block's phase planes (phase_split_): the output rows its columns touch, split in its
  // task's scratch.
  struct BlockPhases {
    const int8_t* planes = nullptr;
    PhaseLayout layout;
    size_t first_pixel = 0;  // the block's first column from its layout's first output row
  };

  // Pair-limited tables: the depth order with the fewest corrections (pair_limited_depth_order)
  // over every output channel's weight offsets. The order is the whole layer's, so A and B stay
  // one matrix product; B's packing reads depth index depth_order_[p] into position p.
  void choose_depth_order(const int8_t* weights) {
    const size_t channels = static_cast<size_t>(shape_.output_channels);
    std::vector<int8_t> offsets(channels * depth_);
    for (size_t channel = 0; channel < channels; ++channel) {
      const int32_t zero_point = requantization_.weight_zero_points[channel];
      for (size_t k = 0; k < depth_; ++k) {
        offsets[channel * depth_ + k] =
            static_cast<int8_t>(weights[channel * depth_ + k] - zero_point);
      }
    }
    depth_order_ = pair_limited_depth_order(offsets.data(), channels, depth_, kLargestPairingWork);
  }

  // The depth index at packed position p.
  size_t depth_index(size_t p) const { return depth_order_.empty() ? p : depth_order_[p]; }

  // Weights [M][C/g][kh][kw] -> per group, panels of MR rows of w - zw; and per output channel
  // the zero-point term -(zx + o) sum_k (w - zw), modulo 2^32, and the accumulator's reach.
  // Pair-limited tables: each panel's groups split (split_pair_limited_group) once its rows are
  // packed; the terms above are the whole weights', which A and the corrections sum to.
  void pack_weights(const int8_t* weights) {
    const size_t groups = static_cast<size_t>(shape_.groups);
    packed_weights_.assign(groups * group_weights_size_, 0);
    zero_point_terms_.assign(groups * group_rows_, 0);
    bias_limits_.assign(groups * group_rows_, -1);
    float_bounds_.assign(groups * group_rows_, 0);
    for (size_t group = 0; group < groups; ++group) {
      int8_t* packed = packed_weights_.data() + group * group_weights_size_;
      for (size_t row = 0; row < group_rows_; ++row) {
        const size_t channel = group * group_rows_ + row;
        const int8_t* source = weights + channel * depth_;
        const int32_t zero_point = requantization_.weight_zero_points[channel];
        int64_t sum = 0;
        int64_t magnitudes = 0;
        int8_t* panel = packed + (row / mr_) * depth_groups_ * mr_ * group_depth_;
        // Group by group, with no division per weight (resnet50 int8: 23 M weights).
        int8_t* group_row = panel + (row % mr_) * group_depth_;
        for (size_t k = 0; k < depth_; k += group_depth_, group_row += mr_ * group_depth_) {
          const size_t group_end = std::min(depth_, k + group_depth_);
          for (size_t position = k; position < group_end; ++position) {
            // Fits int8 (checked by the factory).
            const int32_t offset = source[depth_index(position)] - zero_point;
            sum += offset;
            magnitudes += offset < 0 ? -offset : offset;
            group_row[position - k] = static_cast<int8_t>(offset);
          }
        }
        const int64_t packed_zero_point =
            int64_t{requantization_.input_zero_point} + kernels_.activation_offset;
        zero_point_terms_[channel] =
            static_cast<int32_t>(static_cast<uint32_t>(-packed_zero_point * sum));
        bias_limits_[channel] = float_requantization_bias_limit(
            magnitudes, requantization_.input_zero_point, requantization_.multipliers[channel]);
        float_bounds_[channel] = float_requantization_bound(requantization_.multipliers[channel]);
        if (kernels_.pair_sums_limited && (row % mr_ == mr_ - 1 || row + 1 == group_rows_)) {
          split_panel(panel, row / mr_ * mr_, row + 1);
        }
      }
    }
  }

  // The pairs of A panel `panel` (rows [first_row, end_row) of its group) split for a
  // pair-limited tile; its corrections appended to corrections_, indexed per depth chunk.
  void split_panel(int8_t* panel, size_t first_row, size_t end_row) {
    std::vector<Int8PairCorrection> found;
    for (size_t row = first_row; row < end_row; ++row) {
      const auto panel_row = static_cast<uint32_t>(row - first_row);
      for (size_t g = 0; g < depth_groups_; ++g) {
        split_pair_limited_group(panel + (g * mr_ + panel_row) * group_depth_,
                                 static_cast<uint32_t>(g), panel_row, found);
      }
    }
    const PanelCorrections indexed =
        index_panel_corrections(std::move(found), depth_groups_, chunk_groups_);
    const auto base = static_cast<uint32_t>(corrections_.size());
    corrections_.insert(corrections_.end(), indexed.corrections.begin(), indexed.corrections.end());
    for (const uint32_t begin : indexed.chunk_begin) correction_begin_.push_back(base + begin);
  }

  // The tap pieces of a block (packs_taps_): where every depth row's panels read the input.
  struct TapPlan {
    const Int8TapPiece* pieces = nullptr;
    const uint32_t* first_piece = nullptr;  // per tap, panels + 1 entries
    size_t panels = 0;
  };

  // B panels for depth groups [group_begin, + groups) read straight from the input along the
  // block's tap pieces: row k is channel k / taps read through tap k % taps's pieces.
  void pack_b_from_taps(const int8_t* group_input, const Block& block, const TapPlan& plan,
                        size_t group_begin, size_t groups, int8_t* packed) const {
    const reference::Window2D& w = geometry_.window;
    const size_t taps = static_cast<size_t>(w.kernel_height * w.kernel_width);
    const size_t plane = static_cast<size_t>(w.input_height * w.input_width);
    Int8TapGroup group{};
    group.pieces = plan.pieces;
    group.columns = block.columns;
    group.group_depth = group_depth_;
    group.panel_columns = nr_;
    group.panel_stride = groups * nr_ * group_depth_;
    group.stride = static_cast<size_t>(w.stride_width);
    group.pad = static_cast<int8_t>(requantization_.input_zero_point);
    group.flip = activation_sign_flip(kernels_);
    // Channel and tap of the chunk's first row, then counted up (no division per row) unless
    // the depth is reordered.
    size_t k = group_begin * group_depth_;
    size_t channel = k / taps;
    size_t tap = k % taps;
    for (size_t g = 0; g < groups; ++g) {
      for (size_t d = 0; d < group_depth_; ++d, ++k) {
        if (k >= depth_) {
          // Past the matrix depth: any real row (A is zero there).
          group.planes[d] = group.planes[0];
          group.first_piece[d] = group.first_piece[0];
          continue;
        }
        if (!depth_order_.empty()) {
          channel = depth_order_[k] / taps;
          tap = depth_order_[k] % taps;
        }
        group.planes[d] = group_input + channel * plane;
        group.first_piece[d] = plan.first_piece + tap * (plan.panels + 1);
        if (++tap == taps) {
          tap = 0;
          ++channel;
        }
      }
      group.out = packed + g * nr_ * group_depth_;
      kernels_.pack_activation_taps(group);
    }
  }

  // B panels for depth groups [group_begin, + groups): panel q at packed + q * groups * NR * G.
  // A pointwise convolution's im2col rows are input rows: read in place; others are gathered
  // into `rows` first along the block's `segments` (gather_im2col_int8_row). Depth past the
  // matrix reuses a real row (A is zero there).
  void pack_b(const int8_t* group_input, const BlockPhases* phases, const Block& block,
              const Segment* segments, size_t segment_count, size_t group_begin, size_t groups,
              int8_t* rows, int8_t* packed) const {
    const auto zero_code = static_cast<int8_t>(requantization_.input_zero_point);
    const size_t g_depth = group_depth_;
    const bool in_place = pointwise_in_place();
    const size_t plane =
        static_cast<size_t>(geometry_.window.input_height * geometry_.window.input_width);
    Int8GroupRows group{};
    group.columns = block.columns;
    group.group_depth = g_depth;
    group.panel_columns = nr_;
    group.panel_stride = groups * nr_ * g_depth;
    group.flip = activation_sign_flip(kernels_);
    for (size_t g = 0; g < groups; ++g) {
      for (size_t d = 0; d < g_depth; ++d) {
        const size_t position = (group_begin + g) * g_depth + d;
        const size_t k = position < depth_ ? depth_index(position) : position;
        if (k >= depth_) {
          group.rows[d] = group.rows[0];
        } else if (in_place) {
          group.rows[d] = group_input + k * plane + block.first_column;
        } else if (phases) {
          group.rows[d] = phase_row(*phases, k);
        } else {
          int8_t* row = rows + d * block.columns;
          gather_im2col_int8_row(geometry_, group_input, static_cast<int64_t>(k), segments,
                                 segment_count, zero_code, row);
          group.rows[d] = row;
        }
      }
      group.out = packed + g * nr_ * g_depth;
      kernels_.pack_activation_groups(group);
    }
  }

  BlockPhases split_block_phases(const int8_t* group_input, const Block& block,
                                 int8_t* planes) const {
    const reference::Window2D& w = geometry_.window;
    const auto width = static_cast<size_t>(w.output_width);
    const size_t first_row = block.first_column / width;
    const size_t last_row = (block.first_column + block.columns - 1) / width;
    BlockPhases phases;
    phases.planes = planes;
    phases.layout = phase_layout(w, static_cast<int64_t>(first_row),
                                 static_cast<int64_t>(last_row - first_row + 1));
    phases.first_pixel = block.first_column - first_row * width;
    split_phase_planes(w, phases.layout, group_input,
                       static_cast<size_t>(shape_.input_channels / shape_.groups),
                       static_cast<int8_t>(requantization_.input_zero_point), planes);
    return phases;
  }

  // Im2col row k of a phase-split window at the block's first column: a stretch of channel
  // k / taps's planes, read in place.
  const int8_t* phase_row(const BlockPhases& phases, size_t k) const {
    const size_t taps = tap_planes_.size();
    const size_t tap = k % taps;
    return phases.planes + k / taps * phases.layout.channel_bytes() +
           tap_planes_[tap] * phases.layout.plane_bytes() + tap_rows_[tap] + phases.first_pixel;
  }

  // 1x1, stride 1, no padding: im2col row k is input channel k's plane (any dilation).
  bool pointwise_in_place() const {
    const reference::Window2D& w = geometry_.window;
    return w.kernel_height == 1 && w.kernel_width == 1 && w.stride_height == 1 &&
           w.stride_width == 1 && w.pad_top == 0 && w.pad_left == 0 &&
           w.output_height == w.input_height && w.output_width == w.input_width;
  }

  void run_block(const int8_t* input, const int32_t* bias, int8_t* output, const Block& block,
                 uint8_t* scratch) const {
    auto* packed_b = reinterpret_cast<int8_t*>(scratch);
    auto* rows = reinterpret_cast<int8_t*>(scratch + rows_offset_);
    auto* accumulators = reinterpret_cast<int32_t*>(scratch + accumulators_offset_);
    auto* segments = reinterpret_cast<Segment*>(scratch + segments_offset_);
    const size_t panels = divide_round_up(block.columns, nr_);
    size_t segment_count = 0;
    TapPlan plan;
    if (packs_taps_) {
      // Segments cut at output rows and panels, then each tap's pieces of them.
      segment_count = build_segments(geometry_, block.first_column, block.columns, nr_, segments);
      auto* pieces = reinterpret_cast<Int8TapPiece*>(scratch + pieces_offset_);
      auto* first_piece = reinterpret_cast<uint32_t*>(scratch + first_piece_offset_);
      build_tap_pieces(geometry_, segments, segment_count, panels, pieces, first_piece);
      plan = TapPlan{pieces, first_piece, panels};
    } else if (!pointwise_in_place() && !phase_split_) {
      // One run per output row of the block (a "panel" as wide as the block).
      segment_count =
          build_segments(geometry_, block.first_column, block.columns, block.columns, segments);
    }
    const size_t c_stride = round_up(block.columns, nr_);
    const size_t input_channels = static_cast<size_t>(shape_.input_channels);
    const size_t group_channels = input_channels / static_cast<size_t>(shape_.groups);
    const size_t plane =
        static_cast<size_t>(shape_.window.input_height * shape_.window.input_width);
    const int8_t* group_input =
        input + (block.image * input_channels + block.group * group_channels) * plane;
    const int8_t* group_weights = packed_weights_.data() + block.group * group_weights_size_;
    BlockPhases phases;
    if (phase_split_) {
      phases = split_block_phases(group_input, block,
                                  reinterpret_cast<int8_t*>(scratch + phase_offset_));
    }
    const size_t end_row = block.first_row + block.rows;

    const size_t first_channel = block.group * group_rows_;
    int8_t* group_output =
        output +
        (block.image * static_cast<size_t>(shape_.output_channels) + first_channel) * columns_;
    // What the last depth chunk's tiles add before they requantize: bias and zero-point term.
    auto* constants = reinterpret_cast<int32_t*>(scratch + constants_offset_);
    for (size_t r = 0; r < block.rows; ++r) {
      const size_t channel = first_channel + block.first_row + r;
      constants[r] = wrapping_add(bias ? bias[channel] : 0, zero_point_terms_[channel]);
    }
    Int8TileRequantization requantization{};
    requantization.output_zero_point = requantization_.output_zero_point;
    requantization.output_minimum = requantization_.output_minimum;
    requantization.output_maximum = requantization_.output_maximum;
    requantization.output_stride = columns_;
    const size_t block_channel = first_channel + block.first_row;
    requantization.in_float =
        requantizes_in_tile_ &&
        requantizes_in_float(bias_limits_.data() + block_channel,
                             bias ? bias + block_channel : nullptr, block.rows);

    Int8DotTile tile{};
    tile.c_stride = c_stride;
    for (size_t group_begin = 0; group_begin < depth_groups_; group_begin += chunk_groups_) {
      const size_t groups = std::min(chunk_groups_, depth_groups_ - group_begin);
      if (packs_taps_) {
        pack_b_from_taps(group_input, block, plan, group_begin, groups, packed_b);
      } else {
        pack_b(group_input, phase_split_ ? &phases : nullptr, block, segments, segment_count,
               group_begin, groups, rows, packed_b);
      }
      tile.depth_groups = groups;
      tile.accumulate = group_begin > 0;
      const bool requantize = requantizes_in_tile_ && group_begin + groups == depth_groups_;
      for (size_t block_row = block.first_row; block_row < end_row;
           block_row += kLimits.row_block) {
        const size_t block_end = std::min(end_row, block_row + kLimits.row_block);
        for (size_t q = 0; q < panels; ++q) {
          tile.columns = std::min(nr_, block.columns - q * nr_);
          tile.b = packed_b + q * groups * nr_ * group_depth_;
          for (size_t row = block_row; row < block_end; row += mr_) {
            tile.rows = std::min(mr_, block_end - row);
            tile.a =
                group_weights + ((row / mr_) * depth_groups_ + group_begin) * mr_ * group_depth_;
            if (kernels_.pair_sums_limited) {
              const uint32_t* begin = correction_begin_.data() +
                                      (block.group * group_panels_ + row / mr_) * (chunks_ + 1) +
                                      group_begin / chunk_groups_;
              tile.corrections = corrections_.data() + begin[0];
              tile.correction_count = begin[1] - begin[0];
              tile.first_group = group_begin;
            }
            tile.c = accumulators + (row - block.first_row) * c_stride + q * nr_;
            // The first panel's tiles ask for the next row panel's weights: in a model they
            // come from memory (ResNet50's deep 1x1 layers hold 0.25-2 MB each).
            const size_t panel_bytes = groups * mr_ * group_depth_;
            tile.prefetch = {tile.a + depth_groups_ * mr_ * group_depth_,
                             q == 0 && row + mr_ < group_rows_ ? panel_bytes : 0};
            if (requantize) {
              requantization.constants = constants + (row - block.first_row);
              requantization.multipliers = requantization_.multipliers.data() + first_channel + row;
              requantization.float_bounds = float_bounds_.data() + first_channel + row;
              requantization.output = group_output + row * columns_ + block.first_column + q * nr_;
              kernels_.tile_requantized_activations_in_b(tile, requantization);
            } else {
              kernels_.tile_activations_in_b(tile);
            }
          }
        }
      }
    }

    if (requantizes_in_tile_) return;  // the tiles wrote the outputs
    for (size_t r = 0; r < block.rows; ++r) {
      const size_t channel = first_channel + block.first_row + r;
      const int32_t constant = constants[r];
      finish_row(
          kernels_, requantization_, channel, false, small_multipliers_,
          accumulators + r * c_stride, block.columns, [constant](size_t) { return constant; },
          group_output + (block.first_row + r) * columns_ + block.first_column);
    }
  }

  const DotProductKernels& kernels_;
  const Conv2DShape shape_;
  const Int8Requantization requantization_;
  const Im2colGeometry geometry_;
  BlockLimits limits_ = kLimits;  // the thread split's (column_cost: kInPlaceColumnCost)
  size_t mr_ = 0;
  size_t nr_ = 0;
  size_t group_depth_ = 0;
  size_t group_rows_ = 0;
  size_t depth_ = 0;
  size_t depth_groups_ = 0;
  size_t chunk_groups_ = 0;
  size_t chunks_ = 0;        // depth chunks of chunk_groups_
  size_t group_panels_ = 0;  // A panels per convolution group
  size_t columns_ = 0;
  size_t group_weights_size_ = 0;
  size_t rows_offset_ = 0;
  size_t accumulators_offset_ = 0;
  size_t segments_offset_ = 0;
  size_t pieces_offset_ = 0;
  size_t first_piece_offset_ = 0;
  size_t constants_offset_ = 0;
  bool packs_taps_ = false;           // B packed along tap pieces (pack_activation_taps)
  bool phase_split_ = false;          // im2col rows copied out of phase planes (phase_planes.h)
  size_t phase_offset_ = 0;           // the block's planes in the task's scratch
  std::vector<size_t> tap_planes_;    // per tap, its plane in a channel's (py x kernel width + kx)
  std::vector<size_t> tap_rows_;      // per tap, its first row's offset in the plane
  bool requantizes_in_tile_ = false;  // tile_requantized_activations_in_b
  size_t task_bytes_ = 0;
  bool small_multipliers_ = false;
  std::vector<int8_t, LargeAllocator<int8_t>> packed_weights_;
  std::vector<int32_t> zero_point_terms_;
  std::vector<int64_t> bias_limits_;    // per output channel, float_requantization_bias_limit
  std::vector<uint32_t> float_bounds_;  // per output channel, float_requantization_bound
  // Pair-limited tables: the depth order (choose_depth_order; empty: the identity), every A
  // panel's corrections, each panel's sorted by group, and per
  // panel (groups x panels, in order) chunks_ + 1 indices into them, one per depth chunk start.
  std::vector<uint32_t> depth_order_;
  std::vector<Int8PairCorrection> corrections_;
  std::vector<uint32_t> correction_begin_;
  char algorithm_[64];
};

// Every w - zw of the constant weights fits int8.
bool weight_offsets_fit_int8(const Conv2DShape& shape, const Int8Requantization& q,
                             const int8_t* weights) {
  const size_t channels = static_cast<size_t>(shape.output_channels);
  if (q.weight_zero_points.size() < channels) return false;
  const size_t depth = static_cast<size_t>(shape.input_channels / shape.groups *
                                           shape.window.kernel_height * shape.window.kernel_width);
  for (size_t channel = 0; channel < channels; ++channel) {
    const int32_t zero_point = q.weight_zero_points[channel];
    if (zero_point == 0) continue;
    for (size_t k = 0; k < depth; ++k) {
      const int32_t offset = weights[channel * depth + k] - zero_point;
      if (offset < -128 || offset > 127) return false;
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<Conv2DInt8> make_im2col_dot_product_conv2d_int8(
    const DotProductKernels& kernels, const Conv2DShape& shape,
    const Int8Requantization& requantization, const int8_t* constant_weights) {
  // An empty output (a window larger than the padded input) has no blocks to split.
  if (!constant_weights || shape.output_channels <= 0 || shape.batch <= 0 ||
      im2col_geometry(shape).columns() <= 0) {
    return nullptr;
  }
  if (requantization.input_zero_point < -128 || requantization.input_zero_point > 127) {
    return nullptr;
  }
  // Pair corrections are written for quads of unsigned activations (VPMADDUBSW's operands).
  if (kernels.pair_sums_limited && (kernels.group_depth != 4 || kernels.activation_offset != 128)) {
    return nullptr;
  }
  if (!weight_offsets_fit_int8(shape, requantization, constant_weights)) return nullptr;
  auto kernel =
      std::make_unique<DotProductConvolution>(kernels, shape, requantization, constant_weights);
  if (kernels.pair_sums_limited && kernel->correction_share() > kernels.largest_correction_share) {
    return nullptr;
  }
  return kernel;
}

bool pair_convolution_preferred(const Conv2DShape& shape) {
  // Measured per layer against the int16-pair GEMM on Zen 3 (bench_kernels --int8-vs-gemm with
  // trained-like weights, and ResNet50, ResNet18, YOLOv5s and MobileNetV2 int8 per layer;
  // docs/cpu-kernels.md, "Session 12" and "Session 13"): pointwise layers read in place
  // 0.76-0.89x its time at 14x14-160x160, at 7x7 0.83-0.94x except 512 -> 2048 (1.01-1.08x;
  // taken too, one rule for all). Stride-2 windows packed along tap pieces (the AVX2
  // pack_activation_taps) over at least 64 input channels: 0.90-0.99x at one thread, 0.90-1.03x
  // at two, 14x14 outputs and larger (1x1 and 3x3), and 0.87-0.94x (two threads 0.89-1.01x) for
  // 1x1/2 256 -> 512 at 7x7 outputs (other 7x7 windows, and 1x1/2 from 512 channels on, go to
  // the lanes convolution before, dispatch.cc). Below 64 input channels (kFewPairChannels,
  // where the driver gathers the im2col rows, kSmallestPairTapChannels): stride 2 (the
  // 3-channel stems 7x7/2, 6x6/2 and 3x3/2, YOLOv5s's 3x3/2 32 -> 64) 0.83-0.96x, and stride 1
  // (YOLOv5s's 3x3 32 -> 32) 0.80-0.85x; they lost on the tap packer (1.02-1.47x). 3x3 stride-1
  // layers of 64 channels and more go to the int8 Winograd before (dispatch.cc); other stride-1
  // windows of 64 channels and more were not measured and stay on the GEMM.
  const reference::Window2D& w = shape.window;
  const bool in_place = w.kernel_height == 1 && w.kernel_width == 1 && w.stride_height == 1 &&
                        w.stride_width == 1 && w.pad_top == 0 && w.pad_left == 0 &&
                        w.pad_bottom == 0 && w.pad_right == 0;
  if (in_place) return true;
  if (w.dilation_height != 1 || w.dilation_width != 1) return false;
  if (w.output_height * w.output_width < 7 * 7) return false;
  const int64_t group_channels = shape.input_channels / (shape.groups > 0 ? shape.groups : 1);
  const bool stride_two = w.stride_height == 2 && w.stride_width == 2;
  const bool stride_one = w.stride_height == 1 && w.stride_width == 1;
  const bool few_channels = shape.groups == 1 && group_channels < kFewPairChannels;
  return (stride_two && (group_channels >= kFewPairChannels || few_channels)) ||
         (stride_one && few_channels);
}

std::unique_ptr<Conv2DInt8> make_dot_product_conv2d_int8(const DotProductKernels& kernels,
                                                         const Conv2DShape& shape,
                                                         const Int8Requantization& requantization,
                                                         const int8_t* constant_weights) {
  if (direct_convolution_wins(shape, requantization)) {
    if (auto kernel =
            make_direct_dot_product_conv2d_int8(kernels, shape, requantization, constant_weights)) {
      return kernel;
    }
  }
  return make_im2col_dot_product_conv2d_int8(kernels, shape, requantization, constant_weights);
}

}  // namespace orknn::kernels::cpu::optimized
