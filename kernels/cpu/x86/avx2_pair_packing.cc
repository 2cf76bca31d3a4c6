// The activation packers of the AVX2 pair tiles (avx2_pair_tile_parts.h): activation rows, or
// a convolution's taps read from its input planes, into the tiles' B panels (16 columns, four
// depth bytes per column), with the sign flip that makes the bytes unsigned for VPMADDUBSW.
#include "x86/avx2_pair_tile_parts.h"

namespace orknn::kernels::cpu::optimized::avx2_pairs {
namespace {

// Four rows of 32 columns (already flipped) interleaved into two 16-column panels' layout:
// column j's four bytes together. The unpacks work within 128-bit lanes, so the low lane holds
// the first panel's columns and the high lane the second's; the lane permutes put each panel's
// 64 bytes in column order.
ORKNN_TARGET_AVX2 void store_two_panels(__m256i r0, __m256i r1, __m256i r2, __m256i r3,
                                        int8_t* first, int8_t* second, bool has_second) {
  const __m256i pairs01_low = _mm256_unpacklo_epi8(r0, r1);   // columns 0-7 | 16-23
  const __m256i pairs01_high = _mm256_unpackhi_epi8(r0, r1);  // 8-15 | 24-31
  const __m256i pairs23_low = _mm256_unpacklo_epi8(r2, r3);
  const __m256i pairs23_high = _mm256_unpackhi_epi8(r2, r3);
  const __m256i quads0 = _mm256_unpacklo_epi16(pairs01_low, pairs23_low);    // 0-3 | 16-19
  const __m256i quads1 = _mm256_unpackhi_epi16(pairs01_low, pairs23_low);    // 4-7 | 20-23
  const __m256i quads2 = _mm256_unpacklo_epi16(pairs01_high, pairs23_high);  // 8-11 | 24-27
  const __m256i quads3 = _mm256_unpackhi_epi16(pairs01_high, pairs23_high);  // 12-15 | 28-31
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(first),
                      _mm256_permute2x128_si256(quads0, quads1, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(first + 32),
                      _mm256_permute2x128_si256(quads2, quads3, 0x20));
  if (!has_second) return;
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(second),
                      _mm256_permute2x128_si256(quads0, quads1, 0x31));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(second + 32),
                      _mm256_permute2x128_si256(quads2, quads3, 0x31));
}

// 32 bytes of a row from `first` (the flip applied), fewer than 32 real: a local copy whose bytes
// past the row hold the flip itself, so they come out as 0 after it (nothing past the row read).
ORKNN_TARGET_AVX2 __m256i load_row_tail(const int8_t* row, size_t count, __m256i flip) {
  alignas(32) int8_t staging[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(staging), flip);
  __builtin_memcpy(staging, row, count);
  return _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(staging)), flip);
}

// Byte shifts of a 16-byte vector by a run-time count (0..16) through VPSHUFB: the control is
// a 16-byte window of this table, whose 0x80 bytes give 0.
alignas(16) constexpr int8_t kShiftControl[48] = {
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128};

// Byte i of the result is v[i - count] (0 below count).
ORKNN_TARGET_AVX2 __m128i shift_bytes_up(__m128i v, size_t count) {
  return _mm_shuffle_epi8(
      v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kShiftControl + 16 - count)));
}

// Byte i of the result is v[i + count] (0 from 16 - count).
ORKNN_TARGET_AVX2 __m128i shift_bytes_down(__m128i v, size_t count) {
  return _mm_shuffle_epi8(
      v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kShiftControl + 16 + count)));
}

// Bytes [0, count) of `bytes` (count 1..16) in bytes [0, count) of a vector, the others
// unspecified, reading only those bytes: one load for 16, else two overlapping loads of 8 or 4
// bytes (the second shifted into place), else up to three single bytes.
ORKNN_TARGET_AVX2 __m128i load_span(const int8_t* bytes, size_t count) {
  if (count >= 8) {
    if (count == 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
    const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
    const __m128i high = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + count - 8));
    return _mm_or_si128(low, shift_bytes_up(high, count - 8));
  }
  if (count >= 4) {
    const __m128i low = _mm_cvtsi32_si128(load_group(bytes));
    const __m128i high = _mm_cvtsi32_si128(load_group(bytes + count - 4));
    return _mm_or_si128(low, shift_bytes_up(high, count - 4));
  }
  const size_t middle = count / 2;
  const uint32_t value =
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[0])) |
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[middle])) << (8 * middle) |
      static_cast<uint32_t>(static_cast<uint8_t>(bytes[count - 1])) << (8 * (count - 1));
  return _mm_cvtsi32_si128(static_cast<int32_t>(value));
}

// The bytes of a 16-lane mask (bit j set: byte j is 0xFF).
ORKNN_TARGET_AVX2 __m128i lane_bytes(uint32_t lanes) {
  const __m128i bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const __m128i spread =
      _mm_shuffle_epi8(_mm_cvtsi32_si128(static_cast<int32_t>(lanes)),
                       _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  return _mm_cmpeq_epi8(_mm_and_si128(spread, bits), bits);
}

// One tap piece's lanes of a panel row (Int8TapPiece, 16 lanes, stride 1 or 2), the other lanes
// unspecified: the bytes from its first lane's to its last lane's, which all lie in the plane,
// are read exactly (load_span; stride 2 spans up to 31 bytes, two loads, and keeps the even
// ones: the words masked to their low bytes and packed), then moved up to the first lane.
template <size_t kStride>
ORKNN_TARGET_AVX2 __m128i piece_lanes(const int8_t* plane, const Int8TapPiece& piece) {
  const auto first = static_cast<size_t>(__builtin_ctz(piece.lanes));
  const auto last = static_cast<size_t>(31 - __builtin_clz(piece.lanes));
  const int8_t* bytes =
      plane + (static_cast<ptrdiff_t>(piece.source) + static_cast<ptrdiff_t>(first * kStride));
  const size_t count = (last - first) * kStride + 1;
  __m128i span;
  if constexpr (kStride == 1) {
    span = load_span(bytes, count);
  } else {
    __m128i low, high;
    if (count > 16) {
      low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
      high = shift_bytes_down(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + count - 16)),
                              32 - count);
    } else {
      low = load_span(bytes, count);
      high = _mm_setzero_si128();
    }
    const __m128i words = _mm_set1_epi16(0x00FF);
    span = _mm_packus_epi16(_mm_and_si128(low, words), _mm_and_si128(high, words));
  }
  return first ? shift_bytes_up(span, first) : span;
}

// Row d of a tap group in panel q (16 lanes, before the flip): the padding code, then each
// piece's lanes.
template <size_t kStride>
ORKNN_TARGET_AVX2 __m128i tap_row(const Int8TapGroup& group, size_t d, size_t q, __m128i padding) {
  __m128i row = padding;
  const int8_t* plane = group.planes[d];
  const uint32_t end = group.first_piece[d][q + 1];
  for (uint32_t p = group.first_piece[d][q]; p < end; ++p) {
    const Int8TapPiece& piece = group.pieces[p];
    if (piece.lanes == 0) continue;
    const __m128i lanes = piece_lanes<kStride>(plane, piece);
    row = piece.lanes == 0xFFFFu ? lanes : _mm_blendv_epi8(row, lanes, lane_bytes(piece.lanes));
  }
  return row;
}

// Four 16-column rows (flipped, zero past the block) interleaved into one panel's layout.
ORKNN_TARGET_AVX2 void store_panel(__m128i r0, __m128i r1, __m128i r2, __m128i r3, int8_t* out) {
  const __m128i pairs01_low = _mm_unpacklo_epi8(r0, r1);   // columns 0-7
  const __m128i pairs01_high = _mm_unpackhi_epi8(r0, r1);  // 8-15
  const __m128i pairs23_low = _mm_unpacklo_epi8(r2, r3);
  const __m128i pairs23_high = _mm_unpackhi_epi8(r2, r3);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(pairs01_low, pairs23_low));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16),
                   _mm_unpackhi_epi16(pairs01_low, pairs23_low));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32),
                   _mm_unpacklo_epi16(pairs01_high, pairs23_high));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48),
                   _mm_unpackhi_epi16(pairs01_high, pairs23_high));
}

// Per panel: the group's four rows (tap_row), flipped, zero past the block, interleaved.
template <size_t kStride>
ORKNN_TARGET_AVX2 void pack_taps_with_stride(const Int8TapGroup& group) {
  const __m128i flip = _mm_set1_epi8(group.flip);
  const __m128i padding = _mm_set1_epi8(group.pad);
  const __m128i lane_numbers = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (size_t first = 0, q = 0; first < group.columns; first += kTileColumns, ++q) {
    // Columns past the block are 0 after the flip.
    const size_t left = group.columns - first;
    const __m128i real =
        left >= kTileColumns
            ? _mm_set1_epi8(-1)
            : _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<int8_t>(left)), lane_numbers);
    const __m128i r0 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 0, q, padding), flip), real);
    const __m128i r1 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 1, q, padding), flip), real);
    const __m128i r2 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 2, q, padding), flip), real);
    const __m128i r3 =
        _mm_and_si128(_mm_xor_si128(tap_row<kStride>(group, 3, q, padding), flip), real);
    store_panel(r0, r1, r2, r3, group.out + q * group.panel_stride);
  }
}

}  // namespace

// Four activation rows into 16-column panels (Int8GroupRows, G = 4, NR = 16), two panels per
// step: one 32-byte load per row, the sign flip, and byte then 16-bit unpacks. The last step
// (fewer than 32 columns left) reads the rows through a local copy and writes only the panels
// that hold real columns, zero past `columns`.
ORKNN_TARGET_AVX2 void pack_activation_quads(const Int8GroupRows& group) {
  const __m256i flip = _mm256_set1_epi8(group.flip);
  const size_t columns = group.columns;
  const size_t stride = group.panel_stride;
  size_t first = 0;
  int8_t* out = group.out;
  for (; first + 2 * kTileColumns <= columns; first += 2 * kTileColumns, out += 2 * stride) {
    const __m256i r0 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[0] + first)), flip);
    const __m256i r1 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[1] + first)), flip);
    const __m256i r2 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[2] + first)), flip);
    const __m256i r3 = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group.rows[3] + first)), flip);
    store_two_panels(r0, r1, r2, r3, out, out + stride, true);
  }
  if (first == columns) return;
  const size_t left = columns - first;
  store_two_panels(load_row_tail(group.rows[0] + first, left, flip),
                   load_row_tail(group.rows[1] + first, left, flip),
                   load_row_tail(group.rows[2] + first, left, flip),
                   load_row_tail(group.rows[3] + first, left, flip), out, out + stride,
                   left > kTileColumns);
}

// Int8TapGroup for G = 4, NR = 16, strides 1 and 2 (largest_tap_stride below).
ORKNN_TARGET_AVX2 void pack_activation_taps(const Int8TapGroup& group) {
  if (group.stride == 1) {
    pack_taps_with_stride<1>(group);
  } else {
    pack_taps_with_stride<2>(group);
  }
}

}  // namespace orknn::kernels::cpu::optimized::avx2_pairs
