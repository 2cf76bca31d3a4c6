// The input half of I/O conversion: an application's input buffer (its type, layout, padding,
// channel order) into the graph input tensor, with the model's mean/std and quantization. The
// byte-table, float-plane and NHWC-pixel fast paths and the general gather live together here
// because they must round alike; separate from the output path (output_conversion.cc), which
// shares only the layout helpers of io_layout.h.
#include "exec/io_conversion.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/thread_pool.h"
#include "exec/input_quantization.h"
#include "exec/io_layout.h"
#include "graph/tensor_conversion.h"

namespace orknn::exec {
namespace {

bool is_user_real_type(DataType type) {
  return type == DataType::kUInt8 || type == DataType::kInt8 || type == DataType::kFloat16 ||
         type == DataType::kFloat32;
}

DataType input_buffer_type(const graph::Tensor& tensor, const UserTensorFormat& format) {
  return format.pass_through || !graph::is_real_valued(tensor) ? tensor.data_type : format.type;
}

// Element `index` of an application buffer of Element as float (unaligned buffers allowed).
template <typename Element>
float load_as_float(const uint8_t* data, int64_t index) {
  Element value;
  std::memcpy(&value, data + index * static_cast<int64_t>(sizeof(Element)), sizeof(Element));
  if constexpr (std::is_same_v<Element, Float16Bits>) {
    return half_to_float(value);
  } else {
    return static_cast<float>(value);
  }
}

// body(first, end) over [0, count) in pieces of `grain` on the pool bound to the calling thread
// (the session's, with which rknn_inputs_set converts; the caller alone outside a session):
// a frame's conversion on every thread of the context, as its kernels run.
template <typename Body>
void for_each_piece(int64_t count, int64_t grain, Body&& body) {
  const int64_t pieces = grain > 0 ? (count + grain - 1) / grain : 0;
  ThreadPool& pool = ThreadPool::current_or_serial();
  if (pieces <= 1 || pool.thread_count() == 1) {
    if (count > 0) body(int64_t{0}, count);
    return;
  }
  pool.parallel_for(static_cast<size_t>(pieces), [&](size_t piece, size_t) {
    const int64_t first = static_cast<int64_t>(piece) * grain;
    body(first, std::min(count, first + grain));
  });
}

// Rows of `row_elements` per piece: about 32 K elements, the size at which a task's work
// outweighs handing it to another thread.
int64_t rows_per_piece(int64_t row_elements) {
  constexpr int64_t kPieceElements = 32768;
  return std::max<int64_t>(1, kPieceElements / std::max<int64_t>(1, row_elements));
}

// Model channel c's normalisation, (x - mean) x (1 / std), and the application's channel it
// reads (the last first when the input reverses its channels): the one place every conversion
// path takes them from, so all paths round alike.
struct ChannelNormalization {
  float mean;
  float inverse_std;
  int64_t source;
};

ChannelNormalization channel_normalization(const graph::GraphInput& input, int64_t channels,
                                           int64_t c) {
  return {input.mean.empty() ? 0.0f : input.mean[c], input.std.empty() ? 1.0f : 1.0f / input.std[c],
          input.reverse_channels ? channels - 1 - c : c};
}

// The normalisation of NHWC pixels of up to kPixelChannels channels, read once, pixel by pixel,
// each pixel's channels spread over planes (a pass per channel over the interleaved rows took
// 2.4 ns per element of a 640x640 RGB float image).
constexpr int64_t kPixelChannels = 4;

struct PixelNormalization {
  int64_t channels = 0;
  float mean[kPixelChannels];
  float inverse_std[kPixelChannels];
  int64_t source[kPixelChannels];  // the application's channel of the model's channel c

  PixelNormalization(const graph::GraphInput& input, int64_t channel_count)
      : channels(channel_count) {
    for (int64_t c = 0; c < channels; ++c) {
      const ChannelNormalization normalization = channel_normalization(input, channels, c);
      mean[c] = normalization.mean;
      inverse_std[c] = normalization.inverse_std;
      source[c] = normalization.source;
    }
  }

  // `count` pixels from element `first` of `data` into out + c x plane_stride + w.
  template <typename Element>
  void row(const uint8_t* data, int64_t first, int64_t count, float* out,
           int64_t plane_stride) const {
    if (channels == 3) {
      // The RGB image: the three planes' rows written side by side, constants in registers.
      float *p0 = out, *p1 = out + plane_stride, *p2 = out + 2 * plane_stride;
      const float m0 = mean[0], m1 = mean[1], m2 = mean[2];
      const float i0 = inverse_std[0], i1 = inverse_std[1], i2 = inverse_std[2];
      const int64_t s0 = source[0], s1 = source[1], s2 = source[2];
      for (int64_t w = 0; w < count; ++w) {
        const int64_t pixel = first + 3 * w;
        p0[w] = (load_as_float<Element>(data, pixel + s0) - m0) * i0;
        p1[w] = (load_as_float<Element>(data, pixel + s1) - m1) * i1;
        p2[w] = (load_as_float<Element>(data, pixel + s2) - m2) * i2;
      }
      return;
    }
    for (int64_t w = 0; w < count; ++w) {
      const int64_t pixel = first + w * channels;
      for (int64_t c = 0; c < channels; ++c) {
        out[c * plane_stride + w] =
            (load_as_float<Element>(data, pixel + source[c]) - mean[c]) * inverse_std[c];
      }
    }
  }
};

// out (NCHW floats) = (value - mean[c]) x (1 / std[c]) for every element of the application's
// buffer `data` (Element, NCHW or NHWC with padding, channels optionally reversed), read in
// its own type by a loop per row: no call and no layout switch per element.
template <typename Element>
void gather_normalized(const graph::Shape& shape, const UserTensorFormat& format,
                       const graph::GraphInput& input, const uint8_t* data, float* out) {
  const int64_t elements = graph::element_count(shape);
  const int64_t batch = shape.empty() ? 1 : shape[0];
  const int64_t channels = shape.size() >= 2 ? shape[1] : 1;
  // A tensor with a zero dimension has nothing to convert (and would divide by zero below).
  const int64_t planes = batch * channels;
  const int64_t spatial = planes == 0 ? 0 : (shape.size() >= 2 ? elements / planes : 1);
  const bool nhwc = needs_relayout(shape, format);
  if (nhwc && channels <= kPixelChannels) {
    const UserBufferGeometry g(shape, format);
    const PixelNormalization pixels(input, channels);
    for_each_piece(batch * g.height, rows_per_piece(g.width * channels),
                   [&](int64_t first, int64_t end) {
                     for (int64_t image_row = first; image_row < end; ++image_row) {
                       const int64_t n = image_row / g.height, h = image_row % g.height;
                       const int64_t row = ((n * g.stored_height + h) * g.stored_width) * channels;
                       pixels.row<Element>(data, row, g.width,
                                           out + n * channels * spatial + h * g.width, spatial);
                     }
                   });
    return;
  }
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const ChannelNormalization normalization = channel_normalization(input, channels, c);
      const float mean = normalization.mean;
      const float inverse_std = normalization.inverse_std;
      float* plane = out + (n * channels + c) * spatial;
      if (!nhwc) {
        const int64_t first = (n * channels + normalization.source) * spatial;
        for (int64_t s = 0; s < spatial; ++s) {
          plane[s] = (load_as_float<Element>(data, first + s) - mean) * inverse_std;
        }
        continue;
      }
      const UserBufferGeometry g(shape, format);
      for (int64_t h = 0; h < g.height; ++h) {
        const int64_t row = ((n * g.stored_height + h) * g.stored_width) * g.channels;
        float* out_row = plane + h * g.width;
        for (int64_t w = 0; w < g.width; ++w) {
          const int64_t from = row + w * g.channels + normalization.source;
          out_row[w] = (load_as_float<Element>(data, from) - mean) * inverse_std;
        }
      }
    }
  }
}

// Whether input_quantization.h's encoding is this tensor's.
bool fast_int8_encoding(const graph::Tensor& tensor) {
  const graph::Quantization& q = tensor.quantization;
  return tensor.data_type == DataType::kInt8 && q.is_quantized() && !q.is_per_channel() &&
         q.zero_points[0] >= -128 && q.zero_points[0] <= 127 && q.scales[0] > 0.0f;
}

InputQuantization input_quantization(const graph::Tensor& tensor) {
  return {tensor.quantization.scales[0], tensor.quantization.zero_points[0]};
}

// A byte input (uint8 or int8: camera frames, decoded images) has 256 values per channel, so its
// whole conversion -- normalisation and the model's encoding -- is one table per channel.
// Each entry is computed by the general path's own steps (gather_normalized's arithmetic, then
// `encode`), so the codes are the same bits; the pass over the image is then a load, a table
// load and a store per element, in place of a float scratch round trip and a division
// (rknn_inputs_set of a 640x640 RGB frame into an int8 model: 3.5 ms before, bench_inputs_set).
// Tables pay once the image has a few elements per table entry.
bool byte_tables_pay(const graph::Shape& shape, const UserTensorFormat& format) {
  if (shape.size() != 4 || shape[0] < 1 || shape[1] < 1) return false;
  if (format.type != DataType::kUInt8 && format.type != DataType::kInt8) return false;
  if (format.layout == Layout::kNC1HWC2) return false;
  return shape[2] * shape[3] >= 1024;
}

// Channel c's 256 normalised values, in the order of the raw byte that holds them, then
// `encode` over them into tables + 256 c.
template <typename Element, typename Code, typename Encode>
void build_byte_tables(const graph::GraphInput& input, int64_t channels, Encode&& encode,
                       Code* tables) {
  uint8_t raw[256];
  for (int value = 0; value < 256; ++value) raw[value] = static_cast<uint8_t>(value);
  float normalized[256];
  for (int64_t c = 0; c < channels; ++c) {
    const ChannelNormalization normalization = channel_normalization(input, channels, c);
    for (int value = 0; value < 256; ++value) {
      normalized[value] =
          (load_as_float<Element>(raw, value) - normalization.mean) * normalization.inverse_std;
    }
    encode(normalized, tables + c * 256);
  }
}

// out (NCHW, the model's order) = tables[c][byte] for every element of the application's NCHW
// or NHWC buffer, channels optionally reversed (table c belongs to the model's channel c).
template <typename Code>
void convert_through_tables(const graph::Shape& shape, const UserTensorFormat& format,
                            const graph::GraphInput& input, const uint8_t* data, const Code* tables,
                            Code* out) {
  const int64_t batch = shape[0], channels = shape[1];
  const int64_t spatial = shape[2] * shape[3];
  const auto source_channel = [&](int64_t c) {
    return channel_normalization(input, channels, c).source;
  };
  if (!needs_relayout(shape, format)) {
    // Pieces of whole rows of the planes.
    const int64_t height = shape[2], width = shape[3];
    for_each_piece(
        batch * channels * height, rows_per_piece(width), [&](int64_t first, int64_t end) {
          for (int64_t plane_row = first; plane_row < end; ++plane_row) {
            const int64_t plane = plane_row / height, h = plane_row % height;
            const int64_t n = plane / channels, c = plane % channels;
            const uint8_t* from = data + (n * channels + source_channel(c)) * spatial + h * width;
            const Code* table = tables + c * 256;
            Code* to = out + plane * spatial + h * width;
            for (int64_t w = 0; w < width; ++w) to[w] = table[from[w]];
          }
        });
    return;
  }
  // NHWC: each pixel row is read once, in order, its channels spread over the planes.
  const UserBufferGeometry g(shape, format);
  for_each_piece(
      batch * g.height, rows_per_piece(g.width * channels), [&](int64_t first, int64_t end) {
        for (int64_t image_row = first; image_row < end; ++image_row) {
          const int64_t n = image_row / g.height, h = image_row % g.height;
          const uint8_t* row = data + (n * g.stored_height + h) * g.stored_width * channels;
          Code* first = out + n * channels * spatial + h * g.width;
          if (channels == 3) {
            // The RGB frame: the three planes' rows written side by side.
            const int64_t s0 = source_channel(0), s1 = source_channel(1), s2 = source_channel(2);
            const Code *t0 = tables, *t1 = tables + 256, *t2 = tables + 512;
            Code *p0 = first, *p1 = first + spatial, *p2 = first + 2 * spatial;
            for (int64_t w = 0; w < g.width; ++w) {
              const uint8_t* pixel = row + 3 * w;
              p0[w] = t0[pixel[s0]];
              p1[w] = t1[pixel[s1]];
              p2[w] = t2[pixel[s2]];
            }
            continue;
          }
          for (int64_t w = 0; w < g.width; ++w) {
            const uint8_t* pixel = row + w * channels;
            for (int64_t c = 0; c < channels; ++c) {
              first[c * spatial + w] = tables[c * 256 + pixel[source_channel(c)]];
            }
          }
        }
      });
}

// Never shrinks: a session alternating byte and float inputs would otherwise zero the float
// path's buffer on every float call.
void grow(std::vector<float>* scratch, size_t size) {
  if (scratch->size() < size) scratch->resize(size);
}

// The table path for byte inputs into per-tensor int8 and float32 tensors; false leaves the
// input to the general path. The tables live in `scratch` (the general path's float buffer).
bool convert_bytes_through_tables(const graph::Tensor& tensor, const graph::GraphInput& input,
                                  const UserTensorFormat& format, const uint8_t* source,
                                  std::vector<float>* scratch, uint8_t* destination) {
  const graph::Shape& shape = tensor.shape;
  if (!byte_tables_pay(shape, format)) return false;
  const int64_t channels = shape[1];
  // Tables of Code in the scratch buffer, each channel's normalised values through `encode`,
  // then the pass over the image into the model's buffer.
  const auto convert = [&](auto* tables, auto&& encode) {
    using Code = std::remove_pointer_t<decltype(tables)>;
    if (format.type == DataType::kInt8) {
      build_byte_tables<int8_t>(input, channels, encode, tables);
    } else {
      build_byte_tables<uint8_t>(input, channels, encode, tables);
    }
    convert_through_tables(shape, format, input, source, tables,
                           reinterpret_cast<Code*>(destination));
    return true;
  };
  if (fast_int8_encoding(tensor)) {
    const InputQuantization quantization = input_quantization(tensor);
    grow(scratch, static_cast<size_t>(channels) * 256 / sizeof(float));
    return convert(reinterpret_cast<int8_t*>(scratch->data()),
                   [&](const float* values, int8_t* codes) {
                     quantize_input(values, 256, quantization, codes);
                   });
  }
  if (tensor.data_type == DataType::kFloat32) {
    grow(scratch, static_cast<size_t>(channels) * 256);
    return convert(scratch->data(), [](const float* values, float* out) {
      std::memcpy(out, values, 256 * sizeof(float));
    });
  }
  return false;
}
}  // namespace

Status check_input_format(size_t index, const graph::Tensor& tensor,
                          const UserTensorFormat& format) {
  const bool real = graph::is_real_valued(tensor);
  if (format.pass_through || !real) {
    if (format.type != tensor.data_type) {
      return make_error(StatusCode::kInvalidInput, "input ", index, " ('", tensor.name,
                        "'): ", format.pass_through ? "tensor type " : "invalid dtype ",
                        data_type_name(format.type),
                        format.pass_through ? " not supported in pass_through == 1, tensor type "
                                              "must be: "
                                            : ", request dtype ",
                        data_type_name(tensor.data_type));
    }
  } else if (!is_user_real_type(format.type)) {
    return make_error(StatusCode::kInvalidInput, "input ", index, " ('", tensor.name,
                      "'): invalid dtype ", data_type_name(format.type),
                      ", request dtype UINT8, INT8, FP16 or FP32");
  }
  ORKNN_RETURN_IF_ERROR(check_padding(true, index, tensor, format));
  // Inputs that are not 4-D have one layout; applications commonly pass NHWC for every input
  // (the vendor demos do), so the layout of such an input is not checked.
  if (tensor.shape.size() == 4 && format.layout == Layout::kNC1HWC2 && !format.pass_through) {
    return make_error(StatusCode::kInvalidInput, "input ", index, " ('", tensor.name,
                      "'): an NC1HWC2 input must be passed with pass_through = 1 (it is in the "
                      "model's type already)");
  }
  return ok_status();
}

Status convert_input(size_t index, const graph::Tensor& tensor, const graph::GraphInput& input,
                     const void* data, uint64_t size, const UserTensorFormat& format,
                     std::vector<float>* scratch, uint8_t* destination) {
  ORKNN_RETURN_IF_ERROR(check_input_format(index, tensor, format));
  const graph::Shape& shape = tensor.shape;
  const uint64_t elements = static_cast<uint64_t>(tensor.elements());
  UserTensorFormat buffer_format = format;
  buffer_format.type = input_buffer_type(tensor, format);
  const uint64_t required = user_buffer_bytes(shape, buffer_format);
  if (size < required) {
    return make_error(StatusCode::kInvalidInput, "input ", index, ": size ", size, " < required ",
                      required, " (", describe_format(user_dims(shape, format), buffer_format.type),
                      ")");
  }
  const auto* source = static_cast<const uint8_t*>(data);

  if (format.pass_through || !graph::is_real_valued(tensor)) {
    // The buffer is already in the model's type; only the layout may differ.
    if (needs_relayout(shape, format)) {
      relayout(shape, format, element_size(tensor.data_type), source, destination, false);
    } else if (elements > 0 && source != destination) {
      std::memcpy(destination, source, elements * element_size(tensor.data_type));
    }
    return ok_status();
  }

  if (convert_bytes_through_tables(tensor, input, format, source, scratch, destination)) {
    return ok_status();
  }
  if (format.type == DataType::kFloat32 && fast_int8_encoding(tensor) &&
      !needs_relayout(shape, format) && shape.size() >= 2) {
    // Float planes in the model's order: normalised and encoded in one pass per plane.
    const InputQuantization quantization = input_quantization(tensor);
    const int64_t batch = shape[0], channels = shape[1];
    const int64_t spatial =
        batch * channels == 0 ? 0 : static_cast<int64_t>(elements) / (batch * channels);
    const auto* values = reinterpret_cast<const float*>(source);
    auto* codes = reinterpret_cast<int8_t*>(destination);
    // Pieces of the planes, about 32 K elements each.
    const int64_t piece = rows_per_piece(1);
    const int64_t pieces_per_plane = std::max<int64_t>(1, (spatial + piece - 1) / piece);
    for_each_piece(batch * channels * pieces_per_plane, 1, [&](int64_t first, int64_t end) {
      for (int64_t index = first; index < end; ++index) {
        const int64_t plane = index / pieces_per_plane;
        const int64_t begin = (index % pieces_per_plane) * piece;
        const int64_t count = std::min(piece, spatial - begin);
        if (count <= 0) continue;
        const int64_t n = plane / channels, c = plane % channels;
        const ChannelNormalization normalization = channel_normalization(input, channels, c);
        normalize_and_quantize_input(
            values + (n * channels + normalization.source) * spatial + begin,
            static_cast<size_t>(count), normalization.mean, normalization.inverse_std, quantization,
            codes + plane * spatial + begin);
      }
    });
    return ok_status();
  }
  if (format.type == DataType::kFloat32 && fast_int8_encoding(tensor) &&
      needs_relayout(shape, format) && format.layout == Layout::kNHWC &&
      shape[1] <= kPixelChannels) {
    // Float NHWC pixels: normalised in blocks into an L1 staging area, each channel's block then
    // encoded into its plane (one pass over the image instead of a float copy of it).
    const InputQuantization quantization = input_quantization(tensor);
    const UserBufferGeometry g(shape, format);
    const int64_t channels = shape[1], spatial = g.height * g.width;
    const PixelNormalization pixels(input, channels);
    constexpr int64_t kBlock = 256;
    auto* codes = reinterpret_cast<int8_t*>(destination);
    for_each_piece(
        g.batch * g.height, rows_per_piece(g.width * channels), [&](int64_t first, int64_t end) {
          float staging[kPixelChannels * kBlock];
          for (int64_t image_row = first; image_row < end; ++image_row) {
            const int64_t n = image_row / g.height, h = image_row % g.height;
            const int64_t row = ((n * g.stored_height + h) * g.stored_width) * channels;
            for (int64_t w = 0; w < g.width; w += kBlock) {
              const int64_t count = std::min(kBlock, g.width - w);
              pixels.row<float>(source, row + w * channels, count, staging, kBlock);
              for (int64_t c = 0; c < channels; ++c) {
                quantize_input(staging + c * kBlock, static_cast<size_t>(count), quantization,
                               codes + (n * channels + c) * spatial + h * g.width + w);
              }
            }
          }
        });
    return ok_status();
  }
  // Gather into NCHW float, normalise, then encode into the model's representation (float32
  // models: gathered in place, their encoding is the identity).
  const bool in_place = tensor.data_type == DataType::kFloat32;
  float* floats = in_place ? reinterpret_cast<float*>(destination) : nullptr;
  if (!in_place) {
    grow(scratch, static_cast<size_t>(elements));
    floats = scratch->data();
  }
  switch (format.type) {
    case DataType::kUInt8:
      gather_normalized<uint8_t>(shape, format, input, source, floats);
      break;
    case DataType::kInt8:
      gather_normalized<int8_t>(shape, format, input, source, floats);
      break;
    case DataType::kFloat16:
      gather_normalized<Float16Bits>(shape, format, input, source, floats);
      break;
    default:
      gather_normalized<float>(shape, format, input, source, floats);
      break;
  }
  if (in_place) return ok_status();
  if (fast_int8_encoding(tensor)) {
    const InputQuantization quantization = input_quantization(tensor);
    auto* codes = reinterpret_cast<int8_t*>(destination);
    for_each_piece(static_cast<int64_t>(elements), rows_per_piece(1),
                   [&](int64_t first, int64_t end) {
                     quantize_input(floats + first, static_cast<size_t>(end - first), quantization,
                                    codes + first);
                   });
    return ok_status();
  }
  graph::encode_from_float(tensor, floats, destination);
  return ok_status();
}

}  // namespace orknn::exec
