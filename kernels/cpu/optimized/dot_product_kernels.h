// The int8 GEMMs (convolution, Gemm, MatMul) on dot-product instructions, which multiply bytes
// and sum groups of products into int32 lanes: ARM SDOT ("neon-dotprod", four int8 x int8
// products per lane), ARM SMMLA ("neon-i8mm", a 2x8 by 8x2 int8 product into a 2x2 int32
// block) and x86 VPDPBUSD ("avx512", AVX-512 VNNI: four uint8 x int8 products per lane). They
// read bytes, not the int16 pairs of the other int8 kernels, so the zero points are handled
// outside the products:
//   sum_k (x - zx)(w - zw) = sum_k (x + o)(w - zw)  -  (zx + o) sum_k (w - zw)
// The weights are packed once as w - zw (which must fit int8, checked when the kernel is built)
// and the second term is a per-output-channel constant computed then too. The activations are
// packed as x + o: o = 0 for the signed x signed instructions (raw codes), o = 128 for VPDPBUSD
// (unsigned bytes; x + 128 is the code with its sign bit flipped). All sums wrap modulo 2^32
// (none of these instructions saturates its int32 accumulation, and each group's products are
// summed exactly first) and the true accumulator fits int32 (docs/quantization.md 4.2), so the
// result equals the reference's.
//
// The drivers (dot_product_convolution.cc, dot_product_matrix.cc) and the plain C++ tiles of
// the layout (dot_product_portable_tiles.cc) are architecture-neutral and build everywhere; the
// instruction tiles live in arm/ and x86/.
//
// Packed operands, G = group_depth (4 for SDOT and VPDPBUSD, 8 for SMMLA): an A panel of MR
// rows holds element (r, k) at a[((k / G) * MR + r) * G + k % G]; a B panel of NR columns holds
// (k, j) at b[((k / G) * NR + j) * G + k % G]. Depth past the matrix, rows and columns past its
// edge are zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "dispatch.h"
#include "optimized/micro_kernels.h"

namespace orknn::kernels::cpu::optimized {

// Pair-limited tiles (VPMADDUBSW on AVX2) add the products of each byte pair of a group (bytes
// 0-1 and 2-3) into one int16 lane with saturation, so a pair is exact for every unsigned input
// only when its two weights have opposite signs or |w0| + |w1| <= 128 (255 x 128 = 32640). The
// convolution driver packs A with each other pair's larger weight cut to 128 - |smaller| (same
// sign) and hands the rest to the tiles as corrections: in row `row` of the A panel, depth group
// `group` (counted from the matrix's first) has `weights` on top of A's. A correction's weights
// are alone in their pairs (the other is 0), so its products are exact too.
// dot_product_pair_split.h builds them.
struct Int8PairCorrection {
  uint32_t group;
  uint32_t row;  // tile row: the A panel's row
  int8_t weights[4];
};

// One MR x NR block of C = A x B over `depth_groups` packed groups of G. Only rows x columns of
// it are real: c is written for r < rows, j < columns at c[r * c_stride + j], as C (accumulate
// false) or added to it (accumulate true).
struct Int8DotTile {
  size_t rows;
  size_t columns;
  size_t depth_groups;
  const int8_t* a;
  const int8_t* b;
  int32_t* c;
  size_t c_stride;
  bool accumulate;
  // Pair-limited tables (DotProductKernels::pair_sums_limited) only, else empty: the
  // corrections of this tile's rows in its depth groups, whose first, b's, is matrix group
  // `first_group`; sorted by group. The tile adds their products to its sums.
  const Int8PairCorrection* corrections = nullptr;
  size_t correction_count = 0;
  size_t first_group = 0;
  // Optional: bytes to ask into L2 while the tile runs, one line per depth group (the next
  // panel's weights; honoured by the avx512 tiles).
  PrefetchRange prefetch{};
};

// The last depth chunk of a convolution tile requantized in the tile (docs/quantization.md 4.3,
// the small-multiplier path): output row r, column j =
// clamp(round_half_to_even(double(acc + constants[r]) * double(multipliers[r])) + zero point),
// with acc the tile's sum (plus c when accumulating) and the addition modulo 2^32, exactly what
// requantize_offset_row gives. c is not written.
struct Int8TileRequantization {
  const int32_t* constants;  // per tile row: the bias plus the zero-point term
  const float* multipliers;  // per tile row
  int32_t output_zero_point;
  int32_t output_minimum;
  int32_t output_maximum;
  int8_t* output;
  size_t output_stride;
  // Set by the driver when every accumulator the tile can see is at most 2^24 in magnitude and
  // its product with the row's multiplier at most 2^21 (requantizes_in_float,
  // dot_product_epilogue.h). Then a tile may requantize in float with the same bits: acc is
  // exact as a float, and the double product acc x m (24 x 24 significant bits) is exact, so the
  // reference rounds the exact product P half to even; one fused multiply-add
  // fma(acc, m, 1.5 x 2^23) rounds the exact P + 1.5 x 2^23, which lies in [2^23, 2^24) where
  // floats are the integers, to nearest even (1.5 x 2^23 is even), so it is 1.5 x 2^23 +
  // round_half_even(P), and its bits minus those of 1.5 x 2^23 are that integer.
  bool in_float = false;
  // Per tile row, for the blocks whose static bound fails (in_float false): one past the largest
  // |acc| of the row's multiplier (float_requantization_bound), 0 for none. A tile that has them
  // compares its real sums (the constant added, the real columns) and requantizes a row in float
  // when every one is below the bound, with the same bits by the proof above; otherwise the row
  // takes the double path. Null: no check, the double path.
  const uint32_t* float_bounds = nullptr;
};

// One depth group of activation rows into B panels (the convolution's im2col): G rows of
// `columns` int8 codes, row d at rows[d]; panel q (columns [q * NR, + NR)) at
// out + q * panel_stride holds (j, d) at [j * G + d] = rows[d][q * NR + j] ^ flip (x + o), and 0
// for columns past `columns` up to the last panel's end. Reads nothing past a row's `columns`.
struct Int8GroupRows {
  const int8_t* rows[8];
  size_t columns;
  size_t group_depth;    // G
  size_t panel_columns;  // NR
  size_t panel_stride;   // bytes
  int8_t flip;
  int8_t* out;
};
// The plain C++ form, any G and NR (the ARM tables and the portable ones use it).
void portable_pack_activation_groups(const Int8GroupRows& group);

// Lanes of one im2col row inside one B panel read straight from an input channel plane: lane
// j (bit j of `lanes`) takes plane[source + j * stride]. `source` is the offset of the panel's
// lane 0, which may lie outside the plane (only the lanes in the mask are read). `bytes` is the
// same set as input bytes from `source`: bit j * stride for every lane j (so NR x stride <= 64).
// Every channel's row of one kernel tap has the same pieces, so a block builds them once per tap
// (dot_product_im2col.h); output rows whose pixels lie at the same distance in the plane share
// one piece (3x3 stride 1 "same" windows: one piece per panel, with the padding columns left
// out of the mask).
struct Int8TapPiece {
  int32_t source;
  uint32_t lanes;
  uint64_t bytes;
};

// One depth group of im2col rows into B panels, the layout of Int8GroupRows, without gathering
// the rows first: row d is channel plane planes[d] read along the pieces of its tap, those of
// panel q being pieces[first_piece[d][q] .. first_piece[d][q + 1]). Lanes no piece covers are
// padding (`pad`, the input zero point's code), then every real column is flipped (x + o) and
// columns past `columns` are 0.
struct Int8TapGroup {
  const int8_t* planes[8];
  const uint32_t* first_piece[8];  // panels + 1 entries
  const Int8TapPiece* pieces;
  size_t columns;
  size_t group_depth;    // G
  size_t panel_columns;  // NR
  size_t panel_stride;   // bytes
  size_t stride;         // input columns from one lane to the next (the window's stride)
  int8_t pad;
  int8_t flip;
  int8_t* out;
};
// The plain C++ form, any G, NR and stride.
void portable_pack_activation_taps(const Int8TapGroup& group);

// Four channel rows of one input row interleaved into a quad plane row (the direct
// convolution's copy, dot_product_direct.cc): out[j * 4 + d] = rows[d][j * stride] ^ flip for
// j < count (x + o as the tiles read it). Reads nothing past rows[d][(count - 1) * stride].
struct Int8QuadRow {
  const int8_t* rows[4];
  size_t count;
  size_t stride;
  int8_t flip;
  int8_t* out;
};
// The plain C++ form, any stride.
void portable_interleave_quad_row(const Int8QuadRow& row);

// One tile of the direct convolution (dot_product_direct.cc): `rows` output channels by
// `columns` output pixels (consecutive, flattened over output rows), summed over taps x quads
// depth groups read in place from the input's quad planes, which hold the four bytes x + o of
// channels 4q..4q+3 per pixel, so one group of a pixel is one int32 lane. Tap t's group of quad
// q for lane j is the lane at planes + tap_offsets[t] + q * quad_stride + j * 4 when bit j of
// tap_lanes[t] is set, else `padding` (the zero point's code in all four bytes). A holds the
// weights as panels of MR rows with the depth tap-major: group (t, q) at a + (t * quads + q) *
// MR * 4. With `requantization` the sums plus its constants are requantized into its output;
// without, they are stored to c[r * c_stride + j].
struct Int8DirectTile {
  size_t rows;
  size_t columns;
  size_t taps;
  size_t quads;
  const int8_t* a;
  const int8_t* planes;
  size_t quad_stride;
  const int32_t* tap_offsets;
  const uint32_t* tap_lanes;
  int32_t padding;
  int32_t* c;
  size_t c_stride;
  PrefetchRange prefetch{};  // the next A panel (micro_kernels.h; one line per depth group)
};
// The plain C++ form (G = 4, unsigned activations, MR = 8, any columns up to 32).
void portable_direct_tile(const Int8DirectTile& tile, const Int8TileRequantization* requantization);

struct DotProductKernels {
  const char* name;    // "neon-dotprod", "neon-i8mm", "avx512"
  size_t rows;         // MR
  size_t columns;      // NR
  size_t group_depth;  // G
  // o above: 0 when the tiles multiply int8 by int8, 128 when they read the activations as
  // unsigned bytes x + 128 (the packing flips their sign bits).
  int32_t activation_offset;
  // Convolutions: A is the weights, B the activations (im2col). Gemm/MatMul: A is the
  // activations, B the weights. The signed x signed instructions use one tile for both.
  void (*tile_activations_in_b)(const Int8DotTile& tile);
  void (*tile_activations_in_a)(const Int8DotTile& tile);
  void (*pack_activation_groups)(const Int8GroupRows& group);
  // Optional (null: gather each im2col row, then pack_activation_groups): a convolution's
  // depth groups packed from the input along tap pieces; `largest_tap_stride` is the largest
  // window stride it reads (Int8TapGroup::stride), larger strides gather rows.
  void (*pack_activation_taps)(const Int8TapGroup& group);
  size_t largest_tap_stride;
  // Optional (null: add the constant in a pass, then base's requantize_row): a convolution row's
  // requantization (one multiplier, small_multipliers, no SiLU) of accumulators[i] + offset,
  // the sum modulo 2^32, with requantize_row's results (sums below row.float_bound may take
  // the float form of Int8TileRequantization::in_float).
  void (*requantize_offset_row)(const RequantizeRow& row, int32_t offset);
  // Optional (null: store the int32 sums, then requantize them row by row): the convolution
  // tile whose last depth chunk writes int8 outputs (Int8TileRequantization). Used when every
  // multiplier is small (small_multipliers) and there is no SiLU epilogue.
  void (*tile_requantized_activations_in_b)(const Int8DotTile& tile,
                                            const Int8TileRequantization& requantization);
  // The variant's other micro-kernels (the requantization row).
  const MicroKernels& (*base)();
  // Optional (null: the im2col GEMM above for every convolution): the direct convolution on
  // quad planes (Int8DirectTile, at most `direct_columns` pixels per tile; needs group_depth 4
  // and unsigned activations) and the copy into those planes.
  void (*tile_direct)(const Int8DirectTile& tile, const Int8TileRequantization* requantization);
  void (*interleave_quad_row)(const Int8QuadRow& row);
  size_t direct_columns;
  // Int8PairCorrection: the tiles sum byte pairs with int16 saturation (group_depth 4, unsigned
  // activations). Only the im2col convolution supports it; the direct convolution, Gemm and
  // MatMul factories return null on such a table (and its tile_direct is null).
  bool pair_sums_limited = false;
  // Pair-limited tables: the im2col convolution factory returns null for weights whose share of
  // (output channel, depth group) blocks needing a correction is larger (a table's measured
  // break-even; the portable table's 1.0 takes every layer).
  double largest_correction_share = 1.0;
  // Pair-limited tables: the depth per chunk (in bytes of depth, a multiple of group_depth) for
  // convolutions of at most kSmallPlanePixels output pixels per image (the 7x7 and 14x14
  // planes), whose B blocks are narrow enough that deeper chunks still stay in L2; 0: the
  // driver's 256 everywhere (dot_product_convolution.cc, chunk_groups).
  size_t small_plane_depth_block = 0;
};
// The output planes small_plane_depth_block applies to: 14x14 and smaller.
constexpr size_t kSmallPlanePixels = 14 * 14;

// Defined only in AArch64 builds (arm/); call them only on a CPU with the instructions.
const DotProductKernels& sdot_kernels();
const DotProductKernels& i8mm_kernels();
// Defined only in x86-64 builds (x86/); call it only on a CPU with AVX-512 F/BW/VL/VNNI.
const DotProductKernels& avx512_vnni_kernels();
const DotProductKernels& avx2_pair_kernels();  // x86-64 builds only; call only on AVX2+FMA CPUs
// The same table as it was before the small-plane changes (docs/cpu-kernels.md, "Session 13:
// int8 pointwise convolutions on 7x7 and 14x14 planes"), for benchmarks and tests: every last
// panel of at most 8 columns on the 6 x 16 tile's one-vector form, never the column tile
// (avx2_dot_product_tiles.cc), and 256-deep chunks on small planes too.
const DotProductKernels& avx2_pair_kernels_before_small_planes();
// Plain C++ tiles of the same packed layout on the portable micro-kernels, in every build, so
// the drivers below are tested natively, under the sanitizers: group_depth 4 or 8, with the
// activations signed (offset 0, as SDOT/SMMLA), or unsigned (offset 128, as VPDPBUSD; then
// always group depth 4), or pair-limited (as VPMADDUBSW on AVX2: unsigned, group depth 4, pair
// sums saturated to int16, corrections; its tile_activations_in_a is null).
const DotProductKernels& portable_dot_product_kernels(size_t group_depth, bool unsigned_activations,
                                                      bool pair_sums_limited = false);

// x ^ activation_sign_flip(kernels) is x + o as the packed byte (o = 0 or 128).
inline int8_t activation_sign_flip(const DotProductKernels& kernels) {
  return static_cast<int8_t>(kernels.activation_offset == 0 ? 0 : -128);
}

// int8 convolution on `kernels` (non-depthwise shapes), as GEMM over an im2col or, where it
// applies and wins, directly on quad planes of the input: null when neither applies,
// i.e. the weights are not constant, a weight offset w - zw does not fit int8, or the input zero
// point is not an int8 code (padding is packed as that code). The table's base requantization
// row finishes each output row.
std::unique_ptr<Conv2DInt8> make_dot_product_conv2d_int8(
    const DotProductKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);

// The two convolutions make_dot_product_conv2d_int8 chooses from, for tests and benchmarks:
// the im2col GEMM (null as above), and the direct convolution (dot_product_direct.cc), null
// also when `kernels` has no direct tile or the shape has more than one group or a stride
// phase of the input wider than the output row.
std::unique_ptr<Conv2DInt8> make_im2col_dot_product_conv2d_int8(
    const DotProductKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);
std::unique_ptr<Conv2DInt8> make_direct_dot_product_conv2d_int8(
    const DotProductKernels& kernels, const reference::Conv2DShape& shape,
    const reference::Int8Requantization& requantization, const int8_t* constant_weights);
// Whether the avx2 variant runs `shape` on its pair-limited tiles (avx2_pair_kernels) rather
// than the int16-pair GEMM: where they measured faster (dot_product_convolution.cc).
bool pair_convolution_preferred(const reference::Conv2DShape& shape);
// Whether make_dot_product_conv2d_int8 takes the direct convolution for `shape` (when it
// applies): where it measured faster than the im2col GEMM (dot_product_direct.cc).
bool direct_convolution_wins(const reference::Conv2DShape& shape,
                             const reference::Int8Requantization& requantization);

// int8 Gemm / MatMul (output channels are B's columns) on `kernels`: null when B is not
// constant, a weight offset b - zb does not fit int8, or the input zero point is not an int8
// code.
std::unique_ptr<GemmInt8> make_dot_product_gemm_int8(
    const DotProductKernels& kernels, const reference::GemmParams& params,
    const reference::Int8Requantization& requantization, const int8_t* constant_b);
std::unique_ptr<MatMulInt8> make_dot_product_matmul_int8(
    const DotProductKernels& kernels, const reference::MatMulParams& params,
    const reference::Int8Requantization& requantization, const int8_t* constant_b);

}  // namespace orknn::kernels::cpu::optimized
