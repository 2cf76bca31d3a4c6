// The zero-copy oracle: a model run through rknn_set_io_mem must give exactly the bytes the
// copying API (rknn_inputs_set / rknn_outputs_get) gives for the same input bytes. Include after
// every standard header (see api_test_util.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
// Last: cmocka.
#include "api/api_test_util.h"

namespace orknn::api_testing {

struct InputSpec {
  rknn_tensor_type type;
  rknn_tensor_format format;
  bool pass_through;  // type and format are then the model's native ones (queried)
};

// `native_type`: outputs in the model's own type (else FLOAT32); `format`: NCHW (UNDEFINED is
// used for tensors that are not 4-D), NHWC or NC1HWC2 (native type only).
struct OutputSpec {
  bool native_type;
  rknn_tensor_format format;
};

inline size_t type_bytes(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32:
    case RKNN_TENSOR_INT32:
      return 4;
    case RKNN_TENSOR_FLOAT16:
    case RKNN_TENSOR_INT16:
      return 2;
    case RKNN_TENSOR_INT64:
      return 8;
    default:
      return 1;
  }
}

// Random values that every conversion path accepts: bytes for 8-bit types, small reals otherwise.
inline std::vector<uint8_t> random_tensor_bytes(rknn_tensor_type type, size_t elements,
                                                std::mt19937* random) {
  std::vector<uint8_t> bytes(elements * type_bytes(type));
  std::uniform_real_distribution<float> real(-2.0f, 6.0f);
  for (size_t i = 0; i < elements; ++i) {
    if (type == RKNN_TENSOR_FLOAT32) {
      const float value = real(*random);
      std::memcpy(&bytes[i * 4], &value, 4);
    } else if (type == RKNN_TENSOR_FLOAT16) {
      const Float16Bits half = float_to_half(real(*random));
      std::memcpy(&bytes[i * 2], &half, 2);
    } else {
      bytes[i] = static_cast<uint8_t>((*random)() & 0xff);
    }
  }
  return bytes;
}

inline rknn_tensor_mem* create_mem_or_fail(rknn_context context, uint32_t size) {
  rknn_tensor_mem* mem = rknn_create_mem(context, size);
  if (!mem) fail_msg("rknn_create_mem(%u) failed", size);
  return mem;
}

// Binds new FLOAT32 memory to every one of `count` outputs (OUTPUT_ATTR layout).
inline std::vector<rknn_tensor_mem*> bind_float_outputs(rknn_context context, uint32_t count) {
  std::vector<rknn_tensor_mem*> mems;
  for (uint32_t o = 0; o < count; ++o) {
    rknn_tensor_attr output = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, o);
    output.type = RKNN_TENSOR_FLOAT32;
    mems.push_back(create_mem_or_fail(context, output.n_elems * 4));
    const int bound = rknn_set_io_mem(context, mems.back(), &output);
    if (bound != RKNN_SUCC) fail_msg("rknn_set_io_mem(output %u) returned %d", o, bound);
  }
  return mems;
}

inline void destroy_mems_or_fail(rknn_context context, const std::vector<rknn_tensor_mem*>& mems) {
  for (rknn_tensor_mem* mem : mems) {
    const int destroyed = rknn_destroy_mem(context, mem);
    if (destroyed != RKNN_SUCC) fail_msg("rknn_destroy_mem returned %d", destroyed);
  }
}

// NCHW -> NHWC of whole elements.
inline std::vector<uint8_t> nchw_to_nhwc(const std::vector<uint8_t>& nchw,
                                         const rknn_tensor_attr& nchw_attr, size_t element) {
  const uint32_t n = nchw_attr.dims[0], c = nchw_attr.dims[1], h = nchw_attr.dims[2],
                 w = nchw_attr.dims[3];
  std::vector<uint8_t> nhwc(nchw.size());
  for (uint32_t in = 0; in < n; ++in)
    for (uint32_t ic = 0; ic < c; ++ic)
      for (uint32_t ih = 0; ih < h; ++ih)
        for (uint32_t iw = 0; iw < w; ++iw) {
          const size_t from = ((in * c + ic) * h + ih) * w + iw;
          const size_t to = ((in * h + ih) * w + iw) * c + ic;
          std::memcpy(&nhwc[to * element], &nchw[from * element], element);
        }
  return nhwc;
}

// NC1HWC2 (dims [N,C1,H,W,C2] of `native`) -> NCHW with `channels` real channels.
inline std::vector<uint8_t> nc1hwc2_to_nchw(const uint8_t* data, const rknn_tensor_attr& native,
                                            uint32_t channels, size_t element) {
  const uint32_t n = native.dims[0], h = native.dims[2], w = native.dims[3], c2 = native.dims[4],
                 c1 = native.dims[1];
  std::vector<uint8_t> nchw(static_cast<size_t>(n) * channels * h * w * element);
  for (uint32_t in = 0; in < n; ++in)
    for (uint32_t c = 0; c < channels; ++c)
      for (uint32_t ih = 0; ih < h; ++ih)
        for (uint32_t iw = 0; iw < w; ++iw) {
          const size_t from = (((in * c1 + c / c2) * h + ih) * w + iw) * c2 + c % c2;
          const size_t to = ((in * channels + c) * h + ih) * w + iw;
          std::memcpy(&nchw[to * element], data + from * element, element);
        }
  return nchw;
}

inline void expect_zero_copy_matches_general(const std::vector<uint8_t>& model,
                                             const InputSpec& input_spec,
                                             const OutputSpec& output_spec, uint32_t seed) {
  rknn_context general = init_or_fail(model);
  rknn_context zero_copy = init_or_fail(model);
  rknn_input_output_num io{};
  assert_int_equal(rknn_query(general, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
  std::mt19937 random(seed);
  std::vector<rknn_tensor_mem*> mems;

  for (uint32_t i = 0; i < io.n_input; ++i) {
    rknn_tensor_attr attr = query_attr(
        zero_copy, input_spec.pass_through ? RKNN_QUERY_NATIVE_INPUT_ATTR : RKNN_QUERY_INPUT_ATTR,
        i);
    if (!input_spec.pass_through) {
      attr.type = input_spec.type;
      attr.fmt = attr.n_dims == 4 ? input_spec.format : attr.fmt;
    }
    attr.pass_through = input_spec.pass_through ? 1 : 0;
    const std::vector<uint8_t> data = random_tensor_bytes(attr.type, attr.n_elems, &random);
    rknn_input input =
        make_input(i, const_cast<uint8_t*>(data.data()), static_cast<uint32_t>(data.size()),
                   attr.type, attr.fmt, attr.pass_through);
    assert_int_equal(rknn_inputs_set(general, 1, &input), RKNN_SUCC);
    rknn_tensor_mem* mem = create_mem_or_fail(zero_copy, static_cast<uint32_t>(data.size()));
    std::memcpy(mem->virt_addr, data.data(), data.size());
    const int bound = rknn_set_io_mem(zero_copy, mem, &attr);
    if (bound != RKNN_SUCC) fail_msg("rknn_set_io_mem(input %u) returned %d", i, bound);
    mems.push_back(mem);
  }

  std::vector<rknn_tensor_mem*> output_mems;
  std::vector<rknn_tensor_attr> output_attrs;
  for (uint32_t o = 0; o < io.n_output; ++o) {
    rknn_tensor_attr attr = query_attr(zero_copy, RKNN_QUERY_OUTPUT_ATTR, o);
    const bool four_d = attr.n_dims == 4;
    uint32_t size = attr.n_elems * (output_spec.native_type ? type_bytes(attr.type) : 4);
    if (four_d && output_spec.format == RKNN_TENSOR_NC1HWC2) {
      attr = query_attr(zero_copy, RKNN_QUERY_NATIVE_OUTPUT_ATTR, o);
      size = attr.size_with_stride;
    } else {
      if (!output_spec.native_type) attr.type = RKNN_TENSOR_FLOAT32;
      attr.fmt = four_d ? output_spec.format : RKNN_TENSOR_UNDEFINED;
    }
    rknn_tensor_mem* mem = create_mem_or_fail(zero_copy, size);
    const int bound = rknn_set_io_mem(zero_copy, mem, &attr);
    if (bound != RKNN_SUCC) fail_msg("rknn_set_io_mem(output %u) returned %d", o, bound);
    output_mems.push_back(mem);
    output_attrs.push_back(attr);
  }

  assert_int_equal(rknn_run(general, nullptr), RKNN_SUCC);
  // Twice: the second run must not depend on state the first left behind.
  assert_int_equal(rknn_run(zero_copy, nullptr), RKNN_SUCC);
  assert_int_equal(rknn_run(zero_copy, nullptr), RKNN_SUCC);

  for (uint32_t o = 0; o < io.n_output; ++o) {
    const rknn_tensor_attr nchw_attr = query_attr(general, RKNN_QUERY_OUTPUT_ATTR, o);
    const size_t element = output_spec.native_type ? type_bytes(nchw_attr.type) : 4;
    std::vector<uint8_t> expected(nchw_attr.n_elems * element);
    rknn_output output{};
    output.index = o;
    output.want_float = output_spec.native_type ? 0 : 1;
    output.is_prealloc = 1;
    output.buf = expected.data();
    output.size = static_cast<uint32_t>(expected.size());
    assert_int_equal(rknn_outputs_get(general, 1, &output, nullptr), RKNN_SUCC);

    const rknn_tensor_attr& attr = output_attrs[o];
    const uint8_t* actual_data = static_cast<const uint8_t*>(output_mems[o]->virt_addr);
    std::vector<uint8_t> actual(actual_data, actual_data + expected.size());
    if (nchw_attr.n_dims == 4 && attr.fmt == RKNN_TENSOR_NHWC) {
      expected = nchw_to_nhwc(expected, nchw_attr, element);
    } else if (attr.fmt == RKNN_TENSOR_NC1HWC2) {
      actual = nc1hwc2_to_nchw(actual_data, attr, nchw_attr.dims[1], element);
    }
    if (actual != expected) {
      size_t first = 0;
      while (first < actual.size() && actual[first] == expected[first]) ++first;
      fail_msg("output %u (%s, type %d, fmt %d): byte %zu differs from the general API", o,
               nchw_attr.name, attr.type, attr.fmt, first);
    }
  }
  for (rknn_tensor_mem* mem : mems) assert_int_equal(rknn_destroy_mem(zero_copy, mem), RKNN_SUCC);
  for (rknn_tensor_mem* mem : output_mems)
    assert_int_equal(rknn_destroy_mem(zero_copy, mem), RKNN_SUCC);
  rknn_destroy(general);
  rknn_destroy(zero_copy);
}

}  // namespace orknn::api_testing
