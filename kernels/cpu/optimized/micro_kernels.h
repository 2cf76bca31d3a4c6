// The ISA-specific part of the optimized kernels: a small table of micro-kernels. The drivers
// in this directory (blocking, packing, threading) are written once against this table; each
// ISA (x86/ AVX2, arm/ NEON, portable C++) provides one.
//
// Packed operand formats (the drivers produce them, the micro-kernels read them):
//  * float32: an A panel holds `rows` (MR) matrix rows: element (r, k) at a[k * MR + r]; a B
//    panel holds `columns` (NR) matrix columns: element (k, j) at b[k * NR + j]. Rows and
//    columns past the matrix edge are zero.
//  * int16 pairs (the int8 kernels, offsets already subtracted): depth is split into pairs
//    p = k / 2; A element (r, k) at a[(p * MR + r) * 2 + k % 2], B element (k, j) at
//    b[(p * NR + j) * 2 + k % 2]; an odd depth is padded with a zero pair member. Products of
//    a pair are summed exactly in int32 (pmaddwd semantics).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace orknn::kernels::cpu::optimized {

// The activation applied by a float tile after its last depth chunk, as a clamp
// (minimum/maximum, +-infinity when none) and optionally a leaky slope for negatives.
struct FloatActivation {
  float minimum;
  float maximum;
  bool leaky;
  float leaky_alpha;
};

// The reference's fused activation of one value: the leaky slope, then
// std::min(std::max(value, minimum), maximum). For the portable and NEON micro-kernels; the AVX2
// file must not call header inlines (see docs/cpu-kernels.md).
inline float activate_float(const FloatActivation& activation, float value) {
  if (activation.leaky && value < 0.0f) value *= activation.leaky_alpha;
  value = value < activation.minimum ? activation.minimum : value;
  return activation.maximum < value ? activation.maximum : value;
}

// Memory a tile asks into L2 while it runs, one 64-byte line per depth step from `start` on, up
// to `bytes`: the next panel of weights, which a model's layer reads from memory (its weights
// are in no cache when the model reaches it, and the hardware prefetchers stop at every 4 KiB
// page). Empty: none. Tiles may ignore it (the avx512 table's honour it).
struct PrefetchRange {
  const void* start = nullptr;
  size_t bytes = 0;
};

// One MR x NR block of C = A x B over `depth` packed steps. Only rows x columns of it are
// real: c is written for r < rows, j < columns at c[r * c_stride + j].
struct FloatTile {
  size_t rows;
  size_t columns;
  size_t depth;
  const float* a;
  const float* b;
  // Floats from one depth step of B to the next: NR for a packed panel, or a matrix row's
  // length when the tile reads B in place (then all NR columns must be readable).
  size_t b_stride;
  float* c;
  size_t c_stride;
  // false: c = init + A x B, where init is row_bias[r] (if non-null) + column_bias[j] (if
  // non-null) or 0. true: c += A x B.
  bool accumulate;
  const float* row_bias;
  const float* column_bias;
  const FloatActivation* activation;  // null: none (not the last depth chunk)
  PrefetchRange prefetch{};           // the next A panel, where A streams from memory
  // A residual Add on the last depth chunk, for tables whose float_tile_adds_residual is set
  // (dispatch.h ResidualAddition): after the activation, c = after(value + residual), with
  // residual[r * c_stride + j]. Null: none. (Addition commutes but for which NaN's payload it
  // returns when both are NaN: compilers commute it too, here as in the element-wise rows.)
  const float* residual = nullptr;
  const FloatActivation* after = nullptr;  // null: none
};

// The int32 equivalent on int16 pairs; `depth_pairs` steps of two.
struct Int16PairTile {
  size_t rows;
  size_t columns;
  size_t depth_pairs;
  const int16_t* a;
  const int16_t* b;
  int32_t* c;
  size_t c_stride;
  bool accumulate;
  const int32_t* row_bias;
  const int32_t* column_bias;
};

// docs/quantization.md 4.3 over a row of accumulators:
//   output[i] = clamp(round_half_to_even(double(accumulators[i]) * double(m_i)) + zero_point,
//                     minimum, maximum)
// with m_i = multipliers[0] when per_element is false, multipliers[i] otherwise.
// `small_multipliers` (set by the caller with small_multipliers() below) promises every
// multiplier is at most 0.49 and |output_zero_point| < 2^20: then |accumulator x multiplier| <
// 2^30, the +-1e9 bound never applies and the kernel may finish in int32. `in_float` (set by
// the caller, with per_element false) promises more: every accumulator is at most 2^24 in
// magnitude and its product with the multiplier at most 2^21 (float_requantization_bias_limit,
// dot_product_epilogue.h), so a kernel may round the product with one float FMA, exactly (the
// proof is at Int8TileRequantization::in_float, dot_product_kernels.h); kernels without such a path
// ignore it. `output` must not overlap the accumulators (a kernel may compute an output twice).
struct RequantizeRow {
  const int32_t* accumulators;
  size_t count;
  const float* multipliers;
  bool per_element;
  int32_t output_zero_point;
  int32_t output_minimum;
  int32_t output_maximum;
  int8_t* output;
  bool small_multipliers;
  bool in_float = false;
  // For DotProductKernels::requantize_offset_row: one past the largest |accumulator| (the offset
  // added) that may requantize in float with the same bits (float_requantization_bound,
  // dot_product_epilogue.h); 0: none, the double path.
  uint32_t float_bound = 0;
};

// The SiLU epilogue of docs/quantization.md 4.3 over a row of one output channel's accumulators:
// output[i] = reference::requantize_silu(accumulators[i], scale, output_scale,
// output_zero_point), bit for bit (the exp is the reproducible one of 4.5).
struct RequantizeSiluRow {
  const int32_t* accumulators;
  size_t count;
  float scale;  // D[c]
  float output_scale;
  int32_t output_zero_point;
  int8_t* output;
};

// Whether a SiLU row may take the vector rows' finite form: |D| <= 2^64 and an output scale in
// [2^-60, 2^60] (every converted model's rows; false for NaNs). Every real is then finite
// (|real| <= 2^88) and no step makes a NaN, so the NaN tests go; and reals below -87 may be
// raised to -87, which puts the exp argument in [-87, 0], where 2^n is one multiplication. That
// changes no code: below -87 the scalar real x sigmoid is at most 104 e^-87 < 2^-119 in
// magnitude (and -0 below -104), -87's is below 2^-119 too, and either divided by an output
// scale of at least 2^-60 is far below 1/2, so both give the zero point's code. Above -87 every
// step is the scalar one. Defined in portable_micro_kernels.cc (baseline instruction set).
bool silu_row_is_finite(const RequantizeSiluRow& row);

inline bool small_multipliers(const float* multipliers, size_t count, int32_t zero_point) {
  if (zero_point <= -(1 << 20) || zero_point >= (1 << 20)) return false;
  for (size_t i = 0; i < count; ++i) {
    if (!(multipliers[i] >= -0.49f && multipliers[i] <= 0.49f)) return false;
  }
  return true;
}

// One output plane of a depthwise (single input channel) convolution over a zero-padded copy of
// the input split into `stride_width` column phases (phase p holds padded columns p, p + s,
// p + 2s, ...), so that every tap reads consecutive floats whatever the stride:
//   output[oh * output_stride + o] = activation(bias + sum_{i, j} weights[i * kernel_width + j] *
//       phase((j * dilation_width) % s)[(oh * stride_height + i * dilation_height) * input_stride
//                                       + o + (j * dilation_width) / s])
// where phase(p) = input + p * phase_stride. Each phase row may be read up to 8 floats past the
// last column any output needs.
struct DepthwisePlane {
  const float* input;
  size_t input_stride;
  size_t phase_stride;
  const float* weights;
  size_t kernel_height;
  size_t kernel_width;
  size_t stride_height;
  size_t stride_width;
  size_t dilation_height;
  size_t dilation_width;
  size_t output_height;
  size_t output_width;
  size_t output_stride;
  float bias;
  const FloatActivation* activation;  // null: none
  float* output;
};

// Output planes of a depthwise convolution whose output rows are as long as its input rows
// (stride 1, pad_left + pad_right == (kernel_width - 1) x dilation_width), read in place from
// the unpadded input. Output p = y x width + x of a plane reads, for tap t = (i, j), input
// p + (i x dilation_height - pad_top) x width + j x dilation_width - pad_left, or 0 where the
// tap falls above or below the input or across a row's end:
//   output_c[p] = activation(bias[c] + sum_t weights[c * taps + t] * tap(t))
// So a plane is one flat run of output_height x width values, a vector of outputs may span
// several rows of a narrow plane, and nothing is copied or padded: the kernel masks its loads
// with tap_lanes, which the driver builds once per layer (depthwise_flat_tap_lanes). Channel c
// reads input + c x input_height x width and writes output + c x output_height x width.
struct DepthwiseFlatPlanes {
  const float* input;
  size_t input_height;
  size_t width;
  size_t channels;
  const float* weights;  // [channel][kernel_height x kernel_width]
  const float* bias;     // [channel]; null: none
  size_t kernel_height;
  size_t kernel_width;
  size_t dilation_height;
  size_t dilation_width;
  size_t pad_top;
  size_t pad_left;
  size_t output_height;
  // tap_lanes[v * taps + t], bit l: output v x lanes + l exists and its tap t is inside the
  // input (lanes: the table's depthwise_flat_lanes).
  const uint16_t* tap_lanes;
  // The vectors of outputs from inner_begin to inner_end (multiples of the lanes) have all
  // their taps on input rows: their tap (i, j) lanes are tap (0, j)'s.
  size_t inner_begin;
  size_t inner_end;
  const FloatActivation* activation;  // null: none
  float* output;
};

// Output rows of 3x3 depthwise planes at stride 2 across, dilation 1 and pad_left 1 (any stride
// down, top, bottom and right pads: MobileNetV2's downsampling layers), read in place from the
// unpadded input: output (y, x) of channel c takes, for tap (i, j), input row
// y x stride_height + i - pad_top at column 2x + j - 1, 0 outside the input:
//   output_c[y][x] = activation(bias[c] + sum_t weights[c * 9 + t] * tap(t))
// Channel c reads input + c x input_height x input_width and writes output + c x output_height
// x output_width.
struct DepthwiseStride2Rows {
  const float* input;
  size_t input_height;
  size_t input_width;
  size_t channels;
  const float* weights;  // [channel][9]
  const float* bias;     // [channel]; null: none
  size_t stride_height;
  size_t pad_top;
  size_t output_height;
  size_t output_width;
  const FloatActivation* activation;  // null: none
  float* output;
};

// Float max pooling of output rows, 3x3 windows at stride 2 across, dilation 1 and pad_left 1
// (any stride down, top, bottom and right pads; ResNet's stem pooling), read in place: output
// (y, x) of a plane is the first of its taps inside the input (kernel rows in order, columns
// left to right within each), replaced only by a strictly larger one (the reference's: a NaN
// tap is skipped, a NaN first tap stays). Every output must have a tap inside the input (the
// driver checks). Plane p reads input + p x input_height x input_width and writes output + p x
// output_height x output_width.
struct MaxPoolStride2Rows {
  const float* input;
  size_t input_height;
  size_t input_width;
  size_t planes;
  size_t stride_height;
  size_t pad_top;
  size_t output_height;
  size_t output_width;
  float* output;
};

// out[i] = float(in[i * in_step] - zero_point) for i < count: an int8 row (or one column phase
// of it, in_step = the stride) widened for the float depthwise kernel; exact, as |x - zero_point|
// < 2^24. Reads nothing past in[(count - 1) * in_step].
struct WidenInt8Row {
  const int8_t* in;
  size_t in_step;
  int32_t zero_point;
  float* out;
  size_t count;
};

// Two int8 rows (matrix depth 2p and 2p + 1) of `columns` values into int16-pair B panels of
// NR columns: panel q at out + q * panel_stride, element (half, j) = row_half[q * NR + j] -
// zero_point, or 0 past `columns` and for a null row1 (an odd depth). zero_point fits int16.
struct Int8PairRows {
  const int8_t* row0;
  const int8_t* row1;
  size_t columns;
  int32_t zero_point;
  size_t panel_stride;  // in int16 elements
  int16_t* out;
};

// One row of a float32 binary operation: out[i] = a[i * a_step] (op) b[i * b_step] for i <
// count, where a step of 0 repeats an operand's first value (a scalar or a channel's value).
// Operations as reference::BinaryOperation: 0 add, 1 subtract, 2 multiply, 3 divide; each one
// IEEE operation per element, so every variant gives the reference's bits.
struct BinaryRow {
  int operation;
  const float* a;
  size_t a_step;  // 0 or 1
  const float* b;
  size_t b_step;  // 0 or 1
  float* out;
  size_t count;
};

// The same on per-tensor int8 operands, with the float domain's arithmetic element by element
// (graph/tensor_conversion.cc): each operand decoded as float(code - zero_point) x scale, the
// float operation, then the result encoded as value / scale (NaN: the zero point; else clamped
// to +-1e9, rounded half to even, plus the zero point), saturated to int8.
struct QuantizedOperand {
  const int8_t* codes;
  size_t step;  // 0 or 1
  float scale;
  int32_t zero_point;
};
struct QuantizedBinaryRow {
  int operation;
  QuantizedOperand a;
  QuantizedOperand b;
  int8_t* out;
  float out_scale;
  int32_t out_zero_point;
  size_t count;
};
// The plain C++ row, for variants without their own.
void portable_quantized_binary_row(const QuantizedBinaryRow& row);

// int8 Add and Sub on the codes (reference/quantized_add.h, bit for bit), each operand's
// `scale` being its ratio to the output scale (negated for Sub's second operand): for i < count
//   out[i] = saturate(round_half_even(float(a_i - a.zero_point) * a.scale +
//                                     float(b_i - b.zero_point) * b.scale) + out_zero_point)
// with a_i = a.codes[i * a.step], then clamped to [out_minimum, out_maximum] (a following
// Relu or Clip whose code table is a clamp). Preconditions (quantized_add_row_applies): finite
// ratios with 255 x (|a.scale| + |b.scale|) <= 2^30, so no result needs the reference's clamp,
// and an output zero point that is an int8 code (the avx2 row adds it after saturating the sums
// to int16).
struct QuantizedAddRow {
  QuantizedOperand a;
  QuantizedOperand b;
  int8_t* out;
  int32_t out_zero_point;
  int8_t out_minimum;
  int8_t out_maximum;
  size_t count;
};
inline bool quantized_add_row_applies(float a_ratio, float b_ratio, int32_t out_zero_point) {
  const float reach = 255.0f * (std::fabs(a_ratio) + std::fabs(b_ratio));
  return reach <= 1073741824.0f  // false for NaN and infinities too
         && out_zero_point >= -128 && out_zero_point <= 127;
}
void portable_quantized_add_row(const QuantizedAddRow& row);
void portable_max_row_float(float* accumulator, const float* row, size_t count);
void portable_max_row_int8(int8_t* accumulator, const int8_t* row, size_t count);
void portable_add_row_float(float* accumulator, const float* row, size_t count);

// One run of a float32 activation: out[i] = f(in[i]) for i < count. Operations: 0 Relu,
// 1 Clip (minimum, maximum), 2 LeakyRelu (alpha), 3 Sigmoid, 4 HardSwish, 5 Swish / SiLU
// (x * sigmoid(alpha * x)), 6 Tanh. Relu, Clip, LeakyRelu and HardSwish give the reference's
// bits; the others may use a vectorized exp within 1e-6 relative (docs/cpu-kernels.md).
struct UnaryRow {
  int operation;
  float alpha;
  float minimum;
  float maximum;
  const float* in;
  float* out;
  size_t count;
};
// The plain C++ row (the reference's formula per element), for variants without their own.
void portable_unary_row(const UnaryRow& row);

// An int8 activation as a 256-entry table: out[i] = table[in[i] + 128] for i < count (table
// holds the output code of every input code, -128 first). in and out may be the same pointer.
using LookupInt8Row = void (*)(const int8_t* table, const int8_t* in, int8_t* out, size_t count);
// The scalar byte loop, for variants (and CPUs) without a vector table lookup.
void portable_lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count);

// ---- depthwise with channels in lanes ----------------------------------------------------
// The channel-lane depthwise kernels hold kDepthwiseLanes output channels per vector: a padded
// band of input rows is stored [row][column][lane], so every tap of every output is one vector
// load whatever the plane's width, stride or padding (depthwise_convolution.cc).
constexpr size_t kDepthwiseLanes = 8;

// output_height x output_width output pixels of kDepthwiseLanes depthwise channels, row after
// row: output[(r * output_width + o) * 8 + l] = activation(bias[l] +
//     sum_{i, j} weights[(i * kernel_width + j) * 8 + l] *
//     input[(r * stride_height + i * dilation_height) * input_stride +
//           (o * stride_width + j * dilation_width) * 8 + l])
// (activation: null for none; int8 sums pass null and a zero bias).
struct DepthwiseLanes {
  const float* input;
  size_t input_stride;  // floats from one padded row to the next
  const float* weights;
  const float* bias;
  size_t kernel_height;
  size_t kernel_width;
  size_t stride_height;
  size_t stride_width;
  size_t dilation_height;
  size_t dilation_width;
  size_t output_height;
  size_t output_width;
  const FloatActivation* activation;
  float* output;
};

// kDepthwiseLanes channel runs interleaved into lanes: element e < count of lane l's run,
// sources[l][e], goes to out[(e / row_length) * out_row_stride + (e % row_length) * 8 + l]
// (int8: as the exact float sources[l][e] - zero_point). A run may span several input rows of
// row_length elements, which land on consecutive padded rows. Every source pointer is valid
// (the driver repeats one for missing channels).
template <typename Source>
struct InterleaveRows {
  const Source* const* sources;
  size_t count;
  size_t row_length;
  size_t out_row_stride;
  int32_t zero_point;  // int8 only
  float* out;
};
using InterleaveFloatRows = void (*)(const InterleaveRows<float>& rows);
using InterleaveInt8Rows = void (*)(const InterleaveRows<int8_t>& rows);
// rows[l][c] = in[c * 8 + l] for c < count: back to channel rows (every row pointer writable).
using DeinterleaveFloatRows = void (*)(const float* in, size_t count, float* const* rows);

// The output stage of the int8 depthwise kernels with 8 channels in lanes (RequantizeLanes,
// DepthwisePairs; the drivers fill it with lane_requantization): lane l's int32 sum acc, its
// bias[l] included, becomes
//   rows[l][pixel] = clamp(round_half_to_even(double(acc) * double(multipliers[l])) +
//                    output_zero_point, output_minimum, output_maximum)
// on the small-multiplier path of RequantizeRow (the caller checked small_multipliers()).
// `in_float`, as RequantizeRow's: every acc is within 2^24 and its product with multipliers[l]
// within 2^21 (kernels without a float path ignore it).
struct LaneRequantization {
  const int32_t* bias;       // [8]
  const float* multipliers;  // [8]
  int32_t output_zero_point;
  int32_t output_minimum;
  int32_t output_maximum;
  int8_t* const* rows;  // [8], every one writable
  bool in_float = false;
};

// int8 depthwise sums in lanes (exact integers below 2^24) requantized into channel rows:
// rows[l][c] for c < count from acc = int32(sums[c * 8 + l]) + bias[l] (`requantization`).
struct RequantizeLanes {
  const float* sums;
  size_t count;
  LaneRequantization requantization;
};

// ---- int8 depthwise on rows of codes with 4-tap dot products --------------------------------
// One channel's output rows, up to kDepthwiseDotPixels outputs per vector: the taps of one
// kernel row come in groups of 4 bytes (one 4-byte dot product per output), gathered from one
// 64-byte load of the padded rows. A vector holds 16 outputs of one row (rows_per_vector 1; the
// last one of a row partly) or rows_per_vector whole rows of a narrow plane (their outputs are
// consecutive in the output when output_stride == output_width). gather[4k + b] is the byte,
// from the vector's first input byte, that output k reads for tap b of a group:
//   k x stride_width + b x dilation_width (one row per vector), or
//   (k / output_width) x stride_height x input_stride + (k % output_width) x stride_width +
//   b x dilation_width (rows_per_vector rows), below 64 for every output that is stored
//   (vpermb reads the low 6 bits; depthwise_dot_gather in the driver).
// Each output is
//   output[r * output_stride + o] = clamp(round_half_to_even(double(acc) x double(multiplier)) +
//       output_zero_point, output_minimum, output_maximum),
//   acc = offset + sum_{i < kernel_height, t < 4 x tap_groups} weights[(i * tap_groups + t / 4)
//       * 4 + t % 4] x input[(r * stride_height + i * dilation_height) * input_stride +
//       o * stride_width + t * dilation_width]
// in int32 arithmetic that wraps (exact while the true accumulator fits int32). `input` holds
// codes + 128 as unsigned bytes (the padding: input_zero_point + 128), `weights` w - zw (zero
// for taps past the kernel width) and `offset` the bias minus (input_zero_point + 128) x the sum
// of the channel's w - zw, so acc is the reference's accumulator. The small-multiplier path of
// RequantizeRow (the caller checked small_multipliers()). Every padded row is readable 64 bytes
// past the last column the outputs use (the row after it, or slack after the band).
constexpr size_t kDepthwiseDotPixels = 16;
// out[r * out_stride + c] = uint8_t(source[r * source_stride + c]) ^ 0x80 (code + 128) for
// r < rows, c < count: the input rows of a DepthwiseDotRows band.
struct FlipSignRows {
  const int8_t* source;
  size_t source_stride;
  size_t rows;
  size_t count;
  uint8_t* out;
  size_t out_stride;
};
struct DepthwiseDotRows {
  const uint8_t* input;
  size_t input_stride;    // bytes from one padded row to the next
  const uint8_t* gather;  // [64]
  size_t rows_per_vector;
  const int8_t* weights;  // [kernel_height][tap_groups][4]
  size_t kernel_height;
  size_t tap_groups;  // ceil(kernel_width / 4)
  size_t stride_height;
  size_t stride_width;
  size_t dilation_height;
  size_t dilation_width;
  size_t output_height;
  size_t output_width;
  int32_t offset;
  float multiplier;
  int32_t output_zero_point;
  int32_t output_minimum;
  int32_t output_maximum;
  int8_t* output;
  size_t output_stride;
};

// ---- int8 depthwise on int16 tap pairs in lanes ---------------------------------------------
// The same 8 channels per vector as the lanes above, but each 32-bit lane holds one channel's
// x - zx at two columns of a padded row as int16 (a "slot"), so one vpmaddwd multiplies and
// adds two taps of a kernel row in exact int32 arithmetic: |x - zx| and |w - zw| are at most
// 255, a pair's sum at most 2 x 255^2. Slot q of a padded row holds columns
// (q x slot_step, q x slot_step + dilation_width), slot_step 2 (stride 2, dilation 1: each
// column once, half the slots) or 1 (every column starts a slot):
// int16 out[r * out_row_stride + q * 16 + 2 * l + h] = sources[l][r * source_stride +
// q * slot_step + h * dilation_width] - zero_point for r < rows, q < slots, l < 8, h < 2: the
// rows are codes already padded with the zero point code (x - zx = 0 around the input). Every
// source row is readable slot_step x max(slots, 8) + dilation_width + 16 bytes from its start
// and every out row has room for max(slots, 8) slots.
struct InterleavePairs {
  const int8_t* const* sources;  // [8]
  size_t source_stride;
  size_t rows;
  size_t slots;
  size_t slot_step;  // 1 or 2
  size_t dilation_width;
  int32_t zero_point;
  int16_t* out;
  size_t out_row_stride;  // int16 elements
};
// output_height x output_width pixels of 8 channels from a band of slots, requantized straight
// into channel rows: with acc = bias[l] + sum_{i < kernel_height, k < pairs, h < 2}
//   weights[((i * pairs + k) * 8 + l) * 2 + h] x input[(r * stride_height + i * dilation_height)
//   * input_stride + (o * pixel_step + k * pair_step) * 16 + 2 * l + h]
// (int32, wrapping: exact while the true sum fits int32), rows[l][r * output_width + o] gets acc
// through `requantization` (its bias, rows and in_float). pixel_step and pair_step are in slots.
struct DepthwisePairs {
  const int16_t* input;
  size_t input_stride;     // int16 elements from one padded row to the next
  const int16_t* weights;  // [kernel_height][pairs][8][2]
  size_t kernel_height;
  size_t pairs;  // ceil(kernel_width / 2)
  size_t stride_height;
  size_t dilation_height;
  size_t pixel_step;
  size_t pair_step;
  size_t output_height;
  size_t output_width;
  LaneRequantization requantization;
};

// The plain C++ versions, for variants without their own.
void portable_depthwise_lanes(const DepthwiseLanes& lanes);
void portable_interleave_float_rows(const InterleaveRows<float>& rows);
void portable_interleave_int8_rows(const InterleaveRows<int8_t>& rows);
void portable_deinterleave_float_rows(const float* in, size_t count, float* const* rows);
void portable_requantize_lanes(const RequantizeLanes& lanes);

// ---- Winograd F(2x2, 3x3) transforms of the int8 convolution (int8_winograd_convolution.cc) ----
// The input transform U = B^T d B of `count` int16 lanes of a tile row: lane n belongs to tile
// n / 2 of the run and to member n % 2 of a pair of input channels. The tile row's four padded
// rows are split by column parity: padded row r's even columns at rows + 2 x r x row_length, its
// odd ones row_length further on, so that lane n reads, in padded row r, the columns
// even[n], odd[n], even[n + 2], odd[n + 2]. Position xi = 4 i + j of U (i down, j across) of lane
// n goes to out[xi * position_step + n]. Every row is readable up to 16 int16 past lane
// count + 1 (the driver's slack). Values are x - zx, so every result fits int16.
struct WinogradInputRun {
  const int16_t* rows;
  size_t row_length;
  size_t count;
  int16_t* out;
  size_t position_step;
};
// The output transform Y = A^T M A / 4 + bias of `count` tiles of a tile row: position xi of
// tile t at m[xi * position_step + t]; output (r, c) of tile t to top[2t + c] (r = 0) or
// bottom[2t + c] (r = 1). The driver's bounds keep M and 4 x (Y - bias) exact in int32 (the
// arithmetic wraps, as the GEMM's does), so the division by 4 is exact. The largest |output| of
// the run (as uint32, every output of the 2 x count) is max'ed into *largest, for the
// requantization's float path (RequantizeRow::in_float) checked on the real sums.
struct WinogradOutputRun {
  const int32_t* m;
  size_t position_step;
  size_t count;
  int32_t bias;
  int32_t* top;
  int32_t* bottom;
  uint32_t* largest;
};
// The plain C++ versions (the driver's default when a table has none).
void portable_winograd_input_run(const WinogradInputRun& run);
void portable_winograd_output_run(const WinogradOutputRun& run);

struct MicroKernels {
  const char* name;      // "avx2", "portable"
  size_t float_rows;     // MR of the float tile
  size_t float_columns;  // NR
  void (*float_tile)(const FloatTile& tile);
  size_t int16_rows;
  size_t int16_columns;
  void (*int16_pair_tile)(const Int16PairTile& tile);
  void (*pack_int8_pairs)(const Int8PairRows& rows);
  void (*requantize_row)(const RequantizeRow& row);
  void (*depthwise_plane)(const DepthwisePlane& plane);
  void (*binary_row)(const BinaryRow& row);
  void (*quantized_binary_row)(const QuantizedBinaryRow& row);
  void (*quantized_add_row)(const QuantizedAddRow& row);
  // Pooling rows: accumulator[i] = max(accumulator[i], row[i]) (the larger; the accumulator on
  // ties) or accumulator[i] += row[i], for i < count.
  void (*max_row_float)(float* accumulator, const float* row, size_t count);
  void (*max_row_int8)(int8_t* accumulator, const int8_t* row, size_t count);
  void (*add_row_float)(float* accumulator, const float* row, size_t count);
  void (*unary_row)(const UnaryRow& row);
  void (*requantize_silu_row)(const RequantizeSiluRow& row);
  // out[i] = orknn::reproducible_exp(in[i]) bit for bit (the vector form the SiLU epilogue
  // uses; in the table so tests can compare it with the scalar function).
  void (*reproducible_exp_row)(const float* in, float* out, size_t count);
  void (*widen_int8_row)(const WidenInt8Row& row);
  // out[i] = int32(sums[i]) + bias for i < count: the int8 depthwise kernel's float sums, which
  // are exact integers below 2^24, back to int32 accumulators.
  void (*float_sums_to_accumulators)(const float* sums, int32_t bias, int32_t* out, size_t count);
  LookupInt8Row lookup_int8_row;
  // Depthwise with channels in lanes (above).
  void (*depthwise_lanes)(const DepthwiseLanes& lanes);
  InterleaveFloatRows interleave_float_rows;
  InterleaveInt8Rows interleave_int8_rows;
  DeinterleaveFloatRows deinterleave_float_rows;
  void (*requantize_lanes)(const RequantizeLanes& lanes);
  // Null where the table has none (the drivers then run the lanes above).
  void (*depthwise_dot_rows)(const DepthwiseDotRows& rows);
  void (*flip_sign_rows)(const FlipSignRows& rows);  // set with depthwise_dot_rows
  // Optional (null: add the constant in a pass, then requantize_silu_row): the SiLU epilogue
  // of accumulators[i] + offset, the sum modulo 2^32, with requantize_silu_row's results.
  void (*requantize_silu_offset_row)(const RequantizeSiluRow& row, int32_t offset) = nullptr;
  // Optional (null: the portable ones above): the Winograd F(2x2, 3x3) transforms.
  void (*winograd_input_run)(const WinogradInputRun& run) = nullptr;
  void (*winograd_output_run)(const WinogradOutputRun& run) = nullptr;
  // Optional (null: the lanes or dot rows above): int8 depthwise on int16 tap pairs.
  void (*interleave_pairs)(const InterleavePairs& pairs) = nullptr;
  void (*depthwise_pairs)(const DepthwisePairs& pairs) = nullptr;
  // Optional (null: float_tile for each): `count` (1..kFloatColumnTileGroup) float tiles of
  // one real column each, on the same B panel (b, b_stride, depth, accumulate, column_bias and
  // activation of tiles[0]) and consecutive row panels (each its own a, c, rows, row_bias),
  // with float_tile's results bit for bit.
  void (*float_column_tiles)(const FloatTile* tiles, size_t count) = nullptr;
  // Optional (null: the depthwise_plane or lanes drivers): the float depthwise on flat planes,
  // depthwise_flat_lanes (at most 16) outputs per vector.
  void (*depthwise_flat)(const DepthwiseFlatPlanes& planes) = nullptr;
  size_t depthwise_flat_lanes = 0;
  // The widest output row depthwise_flat is chosen for (wider rows: depthwise_plane).
  size_t depthwise_flat_widest = 0;
  // Optional (null: the lanes driver): the float 3x3 depthwise at stride 2 across, on output
  // rows at least depthwise_stride2_narrowest wide.
  void (*depthwise_stride2_rows)(const DepthwiseStride2Rows& rows) = nullptr;
  size_t depthwise_stride2_narrowest = 0;
  // Optional (null: max_row_float in the generic driver): 3x3 float max pooling at stride 2.
  void (*max_pool_stride2_rows)(const MaxPoolStride2Rows& rows) = nullptr;
  // Whether float_tile honours FloatTile::residual; taken only by tables without
  // float_column_tiles. Else the drivers add the residual to each row group after its tiles.
  bool float_tile_adds_residual = false;
};
// The most tiles one float_column_tiles call takes.
constexpr size_t kFloatColumnTileGroup = 4;

const MicroKernels& portable_micro_kernels();
// Defined only in x86-64 builds (kernels/cpu/x86/).
const MicroKernels& avx2_micro_kernels();
// avx2's table with the int8 SiLU epilogue and the reproducible exp on AVX-512 F/BW/VL (the
// avx512 variant's); call it only on a CPU with those. Its lookup_int8_row is the AVX-512 VBMI
// one below when the CPU also has VBMI, the portable loop otherwise.
const MicroKernels& avx512_micro_kernels();
// x86-64 only: whether the CPU (and OS) run AVX-512 F/BW/VBMI, and the VBMI table lookup (64
// bytes per step with vpermi2b); call the latter only when the former is true.
bool cpu_has_avx512_vbmi();
void avx512_vbmi_lookup_int8_row(const int8_t* table, const int8_t* in, int8_t* out, size_t count);
// x86-64 only: the avx512 table's requantize_lanes (AVX-512 F/BW/VL;
// x86/avx512_depthwise_lanes.cc).
void avx512_requantize_lanes(const RequantizeLanes& lanes);
// x86-64 only: the avx512 table's quantized_binary_row on 16 lanes (AVX-512 F/BW/VL;
// x86/avx512_quantized_binary.cc).
void avx512_quantized_binary_row(const QuantizedBinaryRow& row);
// x86-64 only: the avx512 table's depthwise_dot_rows on AVX-512 VNNI and VBMI (vpdpbusd,
// vpermb; x86/avx512_depthwise_dot_rows.cc); call it only when cpu_has_avx512_vbmi().
void avx512_depthwise_dot_rows(const DepthwiseDotRows& rows);
void avx512_flip_sign_rows(const FlipSignRows& rows);
// x86-64 only: the avx512 table's unary_row: Sigmoid and Swish / SiLU on AVX-512 F (avx2's
// bits), the other operations avx2's (x86/avx512_sigmoid_rows.cc).
void avx512_unary_row(const UnaryRow& row);
// x86-64 only: the avx512 table's float depthwise on flat planes, 16 outputs per vector with
// masked loads (AVX-512 F/BW/VL; x86/avx512_depthwise_flat.cc).
void avx512_depthwise_flat(const DepthwiseFlatPlanes& planes);
size_t avx512_depthwise_flat_lanes();
// x86-64 only: the avx512 table's float depthwise at stride 2 across (AVX-512 F/BW/VL;
// x86/avx512_depthwise_stride2.cc).
void avx512_depthwise_stride2_rows(const DepthwiseStride2Rows& rows);
// x86-64 only: the avx512 table's 3x3 float max pooling at stride 2 across (AVX-512 F/BW/VL;
// x86/avx512_max_pool_stride2.cc).
void avx512_max_pool_stride2_rows(const MaxPoolStride2Rows& rows);
// x86-64 only: the avx512 table's float tile (AVX-512 F, 12 x 32) and its shape.
void avx512_float_tile(const FloatTile& tile);
size_t avx512_float_tile_rows();
size_t avx512_float_tile_columns();

// One tile of a direct float convolution (an implicit GEMM without im2col; direct_convolution.cc):
// C = A x B over depth steps k = tap * channels + c, where B's step k is, in column j,
//   inputs[tap][c * channel_stride + j]  when bit j of masks[tap] is set, else 0
// (the lanes whose input pixel is padding are masked out; their addresses are never read).
// A is packed [tap][channel][rows of the tile's shape]. rows, columns, c, c_stride, accumulate,
// row_bias and activation as in FloatTile (no column bias).
struct DirectFloatTile {
  size_t rows;
  size_t columns;
  size_t taps;
  size_t channels;
  const float* a;
  const float* const* inputs;
  const uint32_t* masks;
  // When not null, tap t's depth steps (planes channel_stride apart: a run of phases' channels,
  // docs/cpu-kernels.md "Session 7"), instead of `channels` for every tap.
  const size_t* tap_channels;
  size_t channel_stride;
  float* c;
  size_t c_stride;
  bool accumulate;
  const float* row_bias;
  const FloatActivation* activation;
  // When nonzero: per depth step, also prefetch the 32 floats this many floats after the
  // step's B (the input of a later pixel block, whose planes a hardware prefetcher does not
  // follow: every depth step reads another plane).
  size_t prefetch_distance;
};
using DirectFloatTileFunction = void (*)(const DirectFloatTile& tile);
// x86-64 only: that tile on AVX-512 F, 12 rows x 32 columns (x86/avx512_direct_tiles.cc).
void avx512_direct_float_tile(const DirectFloatTile& tile);
// x86-64 only: the avx2 table's int8 depthwise on int16 tap pairs (x86/avx2_depthwise_pairs.cc).
void avx2_interleave_pairs(const InterleavePairs& pairs);
void avx2_depthwise_pairs(const DepthwisePairs& pairs);
// x86-64 only: the Winograd transforms on AVX2 (x86/avx2_winograd_int8_transforms.cc).
void avx2_winograd_input_run(const WinogradInputRun& run);
void avx2_winograd_output_run(const WinogradOutputRun& run);
// x86-64 only: that tile on AVX2 + FMA, as register blocks of 6 rows x 16 columns
// (x86/avx2_direct_tiles.cc).
void avx2_direct_float_tile(const DirectFloatTile& tile);
// One tile of a float convolution with output channels in lanes (lane_convolution.cc): up to
// 32 output channels of `pixels` (1..14) output pixels over `depth` steps,
//   c[j * c_stride + p] = activation(bias[j] + sum_k a[k * pixels + p] * b[k * 32 + j])
// for j < channels (1..32), p < pixels: A is a pixel panel of the packed im2col ([depth][pixels]),
// B a block of 32 output channels of the packed weights ([depth][32], zero past the real ones).
// bias and activation may be null. The whole depth runs in one call (no accumulation in c).
struct LaneFloatTile {
  size_t pixels;
  size_t channels;
  size_t depth;
  const float* a;
  const float* b;
  const float* bias;
  const FloatActivation* activation;
  float* c;
  size_t c_stride;
  PrefetchRange prefetch{};  // the next block's weights
};
using LaneFloatTileFunction = void (*)(const LaneFloatTile& tile);
// The im2col of one pixel panel for LaneFloatTile, [channels x taps][pixels]: step
// (c, t) lane p is planes[c * plane_stride + tap_offsets[t] + pixel_offsets[p]], for p < pixels
// (1..14). Every offset is within the (padded) planes.
struct LanePanelPacking {
  const float* planes;
  size_t channels;
  size_t plane_stride;
  const int32_t* tap_offsets;
  size_t taps;
  const int32_t* pixel_offsets;
  size_t pixels;
  float* out;
};
using LanePanelPackingFunction = void (*)(const LanePanelPacking& packing);
// x86-64 only: that tile on AVX-512 F, two 16-lane vectors of channels x up to 14 pixels
// (x86/avx512_lane_tiles.cc).
void avx512_lane_float_tile(const LaneFloatTile& tile);
// x86-64 only: that packing with one masked gather per step (x86/avx512_lane_tiles.cc).
void avx512_pack_lane_panel(const LanePanelPacking& packing);
// x86-64 only: that tile on AVX2 + FMA, as pixel groups of 4 vectors of 8 channels x up to 3
// pixels over chunks of the depth (x86/avx2_lane_tiles.cc).
void avx2_lane_float_tile(const LaneFloatTile& tile);
// x86-64 only: that packing as copies of runs or one load per pixel (x86/avx2_lane_tiles.cc).
void avx2_pack_lane_panel(const LanePanelPacking& packing);
// Defined only in AArch64 builds (kernels/cpu/arm/).
const MicroKernels& neon_micro_kernels();
// AArch64 only: the neon table's float 3x3 depthwise and 3x3 max pooling at stride 2 across
// (arm/neon_stride2_rows.cc).
void neon_depthwise_stride2_rows(const DepthwiseStride2Rows& rows);
void neon_max_pool_stride2_rows(const MaxPoolStride2Rows& rows);

}  // namespace orknn::kernels::cpu::optimized
