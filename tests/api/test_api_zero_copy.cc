// Zero-copy memory through the C API: memory objects (create, import, sync, destroy), binding
// them with rknn_set_io_mem in every accepted form, and every kind of bad memory object refused
// with a clear error and no crash.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "api/zero_copy_check.h"

using namespace orknn::api_testing;

namespace {

const std::vector<uint8_t>& affine_model(Precision precision) {
  static std::vector<uint8_t> models[3];
  std::vector<uint8_t>& model = models[static_cast<int>(precision)];
  if (model.empty()) {
    AffineModelOptions options;
    options.precision = precision;
    model = build_affine_model(options);
  }
  return model;
}

void test_memory_objects(void**) {
  rknn_context context = init_or_fail(affine_model(Precision::kFloat32));
  rknn_tensor_mem* mem = create_mem_or_fail(context, 8192);
  assert_true(mem->fd >= 0);
  assert_int_equal(mem->size, 8192);
  assert_int_equal(mem->offset, 0);
  assert_int_equal(mem->flags, RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE);
  std::memset(mem->virt_addr, 0x5a, mem->size);
  // Another user of the fd (a second mapping, as another device or process would make) sees
  // the same bytes.
  void* other = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, mem->fd, 0);
  assert_true(other != MAP_FAILED);
  assert_int_equal(static_cast<uint8_t*>(other)[4000], 0x5a);
  static_cast<uint8_t*>(other)[10] = 0x11;
  assert_int_equal(static_cast<uint8_t*>(mem->virt_addr)[10], 0x11);
  munmap(other, 8192);

  // Import a window of it, with and without the caller's mapping.
  rknn_tensor_mem* window = rknn_create_mem_from_fd(context, mem->fd, mem->virt_addr, 64, 4096);
  assert_non_null(window);
  assert_int_equal(window->flags, RKNN_TENSOR_MEMORY_FLAGS_FROM_FD);
  assert_ptr_equal(window->virt_addr, static_cast<uint8_t*>(mem->virt_addr) + 4096);
  assert_int_equal(window->offset, 4096);
  rknn_tensor_mem* mapped = rknn_create_mem_from_fd(context, mem->fd, nullptr, 64, 4100);
  assert_non_null(mapped);
  static_cast<uint8_t*>(mapped->virt_addr)[0] = 0x77;
  assert_int_equal(static_cast<uint8_t*>(mem->virt_addr)[4100], 0x77);
  assert_int_equal(static_cast<uint8_t*>(window->virt_addr)[4], 0x77);
  // Out of the fd's range, a bad fd, a negative offset, no size.
  assert_null(rknn_create_mem_from_fd(context, mem->fd, nullptr, 64, 8190));
  assert_null(rknn_create_mem_from_fd(context, -1, nullptr, 64, 0));
  assert_null(rknn_create_mem_from_fd(context, 1 << 20, nullptr, 64, 0));
  assert_null(rknn_create_mem_from_fd(context, mem->fd, nullptr, 64, -1));
  assert_null(rknn_create_mem_from_fd(context, mem->fd, nullptr, 0, 0));
  assert_null(rknn_create_mem_from_fd(0, mem->fd, nullptr, 64, 0));
  // No device here can import physical memory.
  assert_null(rknn_create_mem_from_phys(context, 0x1000, nullptr, 64));
  assert_null(rknn_create_mem_from_mb_blk(context, nullptr, 0));

  for (int mode :
       {RKNN_MEMORY_SYNC_TO_DEVICE, RKNN_MEMORY_SYNC_FROM_DEVICE, RKNN_MEMORY_SYNC_BIDIRECTIONAL}) {
    assert_int_equal(rknn_mem_sync(context, mem, static_cast<rknn_mem_sync_mode>(mode)), RKNN_SUCC);
    assert_int_equal(rknn_mem_sync(context, window, static_cast<rknn_mem_sync_mode>(mode)),
                     RKNN_SUCC);
  }
  assert_int_equal(rknn_mem_sync(context, mem, static_cast<rknn_mem_sync_mode>(9)),
                   RKNN_ERR_PARAM_INVALID);

  // rknn_create_mem2: cacheability flags, no context, bad flags.
  rknn_tensor_mem* uncached = rknn_create_mem2(context, 100, RKNN_FLAG_MEMORY_NON_CACHEABLE);
  assert_non_null(uncached);
  rknn_tensor_mem* orphan = rknn_create_mem2(0, 100, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  assert_non_null(orphan);
  assert_int_equal(rknn_mem_sync(0, orphan, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
  assert_null(rknn_create_mem2(context, 100, 0x100));
  assert_null(
      rknn_create_mem2(context, 100, RKNN_FLAG_MEMORY_CACHEABLE | RKNN_FLAG_MEMORY_NON_CACHEABLE));
  assert_null(rknn_create_mem2(0, 100, RKNN_FLAG_MEMORY_CACHEABLE));
  assert_null(rknn_create_mem2(context, 0, 0));
  assert_null(rknn_create_mem(context, 0));
  assert_null(rknn_create_mem(0, 64));

  // Imports do not own the fd: destroying them leaves the original usable.
  assert_int_equal(rknn_destroy_mem(context, window), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(context, mapped), RKNN_SUCC);
  assert_int_equal(static_cast<uint8_t*>(mem->virt_addr)[4100], 0x77);
  assert_int_equal(fcntl(mem->fd, F_GETFD), FD_CLOEXEC);
  assert_int_equal(rknn_destroy_mem(context, uncached), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(0, orphan), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(context, mem), RKNN_SUCC);
  rknn_destroy(context);
}

void test_foreign_and_destroyed_memory(void**) {
  rknn_context context = init_or_fail(affine_model(Precision::kFloat32));
  rknn_tensor_attr attr = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  std::vector<uint8_t> bytes(4096);
  rknn_tensor_mem foreign;
  std::memset(&foreign, 0, sizeof(foreign));
  foreign.virt_addr = bytes.data();
  foreign.size = 4096;
  foreign.fd = -1;
  foreign.flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
  assert_int_equal(rknn_set_io_mem(context, &foreign, &attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_internal_mem(context, &foreign), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_weight_mem(context, &foreign), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_mem_sync(context, &foreign, RKNN_MEMORY_SYNC_TO_DEVICE),
                   RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_destroy_mem(context, &foreign), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_destroy_mem(context, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_io_mem(context, nullptr, &attr), RKNN_ERR_PARAM_INVALID);

  // A destroyed object is refused by address, without reading the freed struct.
  rknn_tensor_mem* destroyed = create_mem_or_fail(context, 4096);
  assert_int_equal(rknn_destroy_mem(context, destroyed), RKNN_SUCC);
  assert_int_equal(rknn_set_io_mem(context, destroyed, &attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_mem_sync(context, destroyed, RKNN_MEMORY_SYNC_TO_DEVICE),
                   RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_destroy_mem(context, destroyed), RKNN_ERR_PARAM_INVALID);

  rknn_tensor_mem* mem = create_mem_or_fail(context, 4096);
  assert_int_equal(rknn_set_io_mem(context, mem, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_io_mem(0, mem, &attr), RKNN_ERR_CTX_INVALID);
  rknn_tensor_attr unknown = attr;
  std::strcpy(unknown.name, "no such tensor");
  assert_int_equal(rknn_set_io_mem(context, mem, &unknown), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_attr bad_enum = attr;
  bad_enum.type = static_cast<rknn_tensor_type>(99);
  assert_int_equal(rknn_set_io_mem(context, mem, &bad_enum), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_destroy_mem(context, mem), RKNN_SUCC);
  rknn_destroy(context);
}

void test_wrong_size_type_and_layout(void**) {
  rknn_context context = init_or_fail(affine_model(Precision::kInt8));
  rknn_tensor_attr input = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  input.type = RKNN_TENSOR_UINT8;
  input.fmt = RKNN_TENSOR_NHWC;
  rknn_tensor_mem* small = create_mem_or_fail(context, input.n_elems - 1);
  assert_int_equal(rknn_set_io_mem(context, small, &input), RKNN_ERR_INPUT_INVALID);
  rknn_tensor_mem* enough = create_mem_or_fail(context, input.n_elems);
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_SUCC);
  // Float32 needs 4 bytes per element.
  input.type = RKNN_TENSOR_FLOAT32;
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_ERR_INPUT_INVALID);
  // Types no input conversion exists for, and pass_through in a type other than the model's.
  input.type = RKNN_TENSOR_INT64;
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_ERR_INPUT_INVALID);
  input.type = RKNN_TENSOR_UINT8;
  input.pass_through = 1;
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_ERR_INPUT_INVALID);
  // Absurd strides are refused before any size is computed from them.
  input.pass_through = 0;
  input.w_stride = 0xffffffffu;
  input.h_stride = 0xffffffffu;
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_ERR_INPUT_INVALID);
  input.w_stride = 1u << 24;
  input.h_stride = 1u << 24;
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_ERR_INPUT_INVALID);
  input.w_stride = input.h_stride = 0;
  // NC1HWC2 input without pass_through.
  input.pass_through = 0;
  input.fmt = RKNN_TENSOR_NC1HWC2;
  assert_int_equal(rknn_set_io_mem(context, enough, &input), RKNN_ERR_INPUT_INVALID);

  // Outputs: FLOAT32 needs 4x the int8 size; INT16 is not offered; a 2-D output has no NHWC.
  rknn_tensor_attr output = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 0);
  output.type = RKNN_TENSOR_FLOAT32;
  rknn_tensor_mem* int8_sized = create_mem_or_fail(context, output.n_elems);
  assert_int_equal(rknn_set_io_mem(context, int8_sized, &output), RKNN_ERR_OUTPUT_INVALID);
  output.type = RKNN_TENSOR_INT16;
  rknn_tensor_mem* float_sized = create_mem_or_fail(context, output.n_elems * 4);
  assert_int_equal(rknn_set_io_mem(context, float_sized, &output), RKNN_ERR_OUTPUT_INVALID);
  rknn_tensor_attr flat = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 1);
  flat.fmt = RKNN_TENSOR_NHWC;
  assert_int_equal(rknn_set_io_mem(context, float_sized, &flat), RKNN_ERR_OUTPUT_INVALID);

  for (rknn_tensor_mem* mem : {small, enough, int8_sized, float_sized}) {
    assert_int_equal(rknn_destroy_mem(context, mem), RKNN_SUCC);
  }
  rknn_destroy(context);
}

void test_double_binding_and_unbound_run(void**) {
  rknn_context context = init_or_fail(affine_model(Precision::kFloat32));
  rknn_tensor_attr input = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  rknn_tensor_attr output0 = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 0);
  rknn_tensor_attr output1 = query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 1);
  rknn_tensor_mem* shared = create_mem_or_fail(context, 4096);
  assert_int_equal(rknn_set_io_mem(context, shared, &input), RKNN_SUCC);
  // Binding the same object again to the same tensor is a rebind; to another tensor, an error.
  assert_int_equal(rknn_set_io_mem(context, shared, &input), RKNN_SUCC);
  assert_int_equal(rknn_set_io_mem(context, shared, &output0), RKNN_ERR_PARAM_INVALID);
  // An import that overlaps it counts as the same memory.
  rknn_tensor_mem* overlap =
      rknn_create_mem_from_fd(context, shared->fd, shared->virt_addr, 256, 0);
  assert_non_null(overlap);
  assert_int_equal(rknn_set_io_mem(context, overlap, &output0), RKNN_ERR_PARAM_INVALID);

  // Not every tensor bound: rknn_run says which one is missing.
  rknn_tensor_mem* out0 = create_mem_or_fail(context, output0.size);
  assert_int_equal(rknn_set_io_mem(context, out0, &output0), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_ERR_OUTPUT_INVALID);
  rknn_tensor_mem* out1 = create_mem_or_fail(context, output1.size);
  assert_int_equal(rknn_set_io_mem(context, out1, &output1), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);

  // Destroying an object while bound is safe: the context keeps the memory until it is done.
  assert_int_equal(rknn_destroy_mem(context, out1), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  for (rknn_tensor_mem* mem : {shared, overlap, out0}) {
    assert_int_equal(rknn_destroy_mem(context, mem), RKNN_SUCC);
  }
  rknn_destroy(context);
}

// UINT8 NHWC image in, FLOAT32 out, values checked by hand (not only against the general API).
void test_affine_values(void**) {
  for (Precision precision : {Precision::kFloat32, Precision::kFloat16, Precision::kInt8}) {
    rknn_context context = init_or_fail(affine_model(precision));
    rknn_tensor_attr input = query_attr(context, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
    input.type = RKNN_TENSOR_UINT8;
    input.fmt = RKNN_TENSOR_NHWC;
    rknn_tensor_mem* in = create_mem_or_fail(context, input.n_elems);
    const std::vector<float> user = {12, 24, 38, 10, 20, 30, 14, 28, 46, 8, 16, 22};
    for (size_t i = 0; i < user.size(); ++i) {
      static_cast<uint8_t*>(in->virt_addr)[i] = static_cast<uint8_t>(user[i]);
    }
    assert_int_equal(rknn_set_io_mem(context, in, &input), RKNN_SUCC);
    const std::vector<rknn_tensor_mem*> outs = bind_float_outputs(context, 2);
    assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
    const std::vector<float> expected = affine_model_expected(user, false);
    for (rknn_tensor_mem* out : outs) {
      const float* values = static_cast<const float*>(out->virt_addr);
      expect_near_all(std::vector<float>(values, values + 12), expected,
                      affine_tolerance(precision));
    }
    assert_int_equal(rknn_destroy_mem(context, in), RKNN_SUCC);
    destroy_mems_or_fail(context, outs);
    rknn_destroy(context);
  }
}

// Padded rows (w_stride) and padded images (h_stride) give the same result as packed input.
void test_strides(void**) {
  rknn_context context = init_or_fail(affine_model(Precision::kFloat32));
  rknn_tensor_attr input = query_attr(context, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  input.type = RKNN_TENSOR_UINT8;
  input.fmt = RKNN_TENSOR_NHWC;
  const uint32_t height = input.dims[1], width = input.dims[2], channels = input.dims[3];
  input.w_stride = width + 3;
  input.h_stride = height + 1;
  const uint32_t padded = input.h_stride * input.w_stride * channels;
  rknn_tensor_mem* too_small = create_mem_or_fail(context, padded - 1);
  assert_int_equal(rknn_set_io_mem(context, too_small, &input), RKNN_ERR_INPUT_INVALID);
  rknn_tensor_mem* in = create_mem_or_fail(context, padded);
  std::vector<float> user(height * width * channels);
  uint8_t* stored = static_cast<uint8_t*>(in->virt_addr);
  std::memset(stored, 0xee, padded);  // padding must be ignored
  for (uint32_t h = 0; h < height; ++h)
    for (uint32_t w = 0; w < width; ++w)
      for (uint32_t c = 0; c < channels; ++c) {
        const uint8_t value = static_cast<uint8_t>(10 + 7 * h + 3 * w + 5 * c);
        user[(h * width + w) * channels + c] = value;
        stored[(h * input.w_stride + w) * channels + c] = value;
      }
  assert_int_equal(rknn_set_io_mem(context, in, &input), RKNN_SUCC);
  const std::vector<rknn_tensor_mem*> outs = bind_float_outputs(context, 2);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  const float* values = static_cast<const float*>(outs[0]->virt_addr);
  expect_near_all(std::vector<float>(values, values + 12), affine_model_expected(user, false),
                  1e-5);
  destroy_mems_or_fail(context, {too_small, in, outs[0], outs[1]});
  rknn_destroy(context);
}

// With the DISABLE_FLUSH flags the application syncs the memory itself around rknn_run.
void test_application_managed_cache(void**) {
  rknn_context context =
      init_or_fail(affine_model(Precision::kInt8), RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE |
                                                       RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE);
  rknn_tensor_attr input = query_attr(context, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  input.type = RKNN_TENSOR_UINT8;
  rknn_tensor_mem* in = create_mem_or_fail(context, input.n_elems);
  const std::vector<float> user = {12, 24, 38, 10, 20, 30, 14, 28, 46, 8, 16, 22};
  for (size_t i = 0; i < user.size(); ++i) {
    static_cast<uint8_t*>(in->virt_addr)[i] = static_cast<uint8_t>(user[i]);
  }
  assert_int_equal(rknn_set_io_mem(context, in, &input), RKNN_SUCC);
  const std::vector<rknn_tensor_mem*> outs = bind_float_outputs(context, 2);
  assert_int_equal(rknn_mem_sync(context, in, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  assert_int_equal(rknn_mem_sync(context, outs[0], RKNN_MEMORY_SYNC_FROM_DEVICE), RKNN_SUCC);
  const float* values = static_cast<const float*>(outs[0]->virt_addr);
  expect_near_all(std::vector<float>(values, values + 12), affine_model_expected(user, false),
                  affine_tolerance(Precision::kInt8));
  destroy_mems_or_fail(context, {in, outs[0], outs[1]});
  rknn_destroy(context);
}

// A 2-D input has one layout: the NHWC that applications pass for every input is accepted, in
// both APIs.
void test_two_d_input_ignores_layout(void**) {
  rknn_context context = init_or_fail(build_chain_model(2));
  std::vector<float> values(16, 1.0f);
  rknn_input input = make_input(0, values.data(), 64, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC);
  assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  expect_near_all(get_float_output(context, 0, 16), std::vector<float>(16, 2.0f), 0.0);
  rknn_tensor_attr attr = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  attr.fmt = RKNN_TENSOR_NHWC;
  rknn_tensor_mem* mem = create_mem_or_fail(context, 64);
  assert_int_equal(rknn_set_io_mem(context, mem, &attr), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(context, mem), RKNN_SUCC);
  rknn_destroy(context);
}

// Multi-batch (rknn_batch_size 2): sizes are batch x single; with h_stride each image of the
// batch starts at size / batch and its padding rows are ignored.
void test_multi_batch(void**) {
  AffineModelOptions options;
  options.batch = 2;
  rknn_context context = init_or_fail(build_affine_model(options));
  rknn_tensor_attr input = query_attr(context, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  assert_int_equal(input.dims[0], 2);
  assert_int_equal(input.n_elems, 2 * 12);
  input.type = RKNN_TENSOR_UINT8;
  input.fmt = RKNN_TENSOR_NHWC;
  const uint32_t height = input.dims[1], row = input.dims[2] * input.dims[3];
  input.h_stride = height + 1;
  const uint32_t per_image = input.h_stride * row;
  rknn_tensor_mem* in = create_mem_or_fail(context, 2 * per_image);
  const std::vector<float> images[2] = {{12, 24, 38, 10, 20, 30, 14, 28, 46, 8, 16, 22},
                                        {30, 40, 50, 60, 70, 80, 90, 100, 110, 5, 6, 7}};
  uint8_t* stored = static_cast<uint8_t*>(in->virt_addr);
  std::memset(stored, 0xff, in->size);
  for (int b = 0; b < 2; ++b) {
    for (uint32_t i = 0; i < height * row; ++i) {
      stored[b * per_image + i] = static_cast<uint8_t>(images[b][i]);
    }
  }
  assert_int_equal(rknn_set_io_mem(context, in, &input), RKNN_SUCC);
  assert_int_equal(query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 0).n_elems, 2 * 12);
  assert_int_equal(query_attr(context, RKNN_QUERY_OUTPUT_ATTR, 1).size, 2 * 12 * 4);
  const std::vector<rknn_tensor_mem*> outs = bind_float_outputs(context, 2);
  assert_int_equal(rknn_set_batch_core_num(context, 2), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  const float* values = static_cast<const float*>(outs[0]->virt_addr);
  for (int b = 0; b < 2; ++b) {
    expect_near_all(std::vector<float>(values + 12 * b, values + 12 * (b + 1)),
                    affine_model_expected(images[b], false), 1e-5);
  }
  destroy_mems_or_fail(context, {in, outs[0], outs[1]});
  rknn_destroy(context);
}

// Every input form and output form against the copying API, bit for bit.
void test_matches_general_api(void**) {
  const InputSpec inputs[] = {
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, false},
      {RKNN_TENSOR_INT8, RKNN_TENSOR_NHWC, false},
      {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC, false},
      {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, false},
      {RKNN_TENSOR_FLOAT16, RKNN_TENSOR_NHWC, false},
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NCHW, false},
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, true},
  };
  const OutputSpec outputs[] = {{false, RKNN_TENSOR_NCHW},
                                {true, RKNN_TENSOR_NCHW},
                                {true, RKNN_TENSOR_NC1HWC2},
                                {false, RKNN_TENSOR_NHWC},
                                {true, RKNN_TENSOR_NHWC}};
  uint32_t seed = 1;
  for (Precision precision : {Precision::kFloat32, Precision::kFloat16, Precision::kInt8}) {
    for (const InputSpec& input : inputs) {
      for (const OutputSpec& output : outputs) {
        expect_zero_copy_matches_general(affine_model(precision), input, output, seed++);
      }
    }
  }
  // A model whose graph output is computed straight from the input, and a 2-D one.
  expect_zero_copy_matches_general(build_chain_model(3),
                                   {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, false},
                                   {true, RKNN_TENSOR_NCHW}, 99);
  expect_zero_copy_matches_general(build_chain_model(3),
                                   {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, true},
                                   {false, RKNN_TENSOR_NCHW}, 98);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_memory_objects),
      cmocka_unit_test(test_foreign_and_destroyed_memory),
      cmocka_unit_test(test_wrong_size_type_and_layout),
      cmocka_unit_test(test_double_binding_and_unbound_run),
      cmocka_unit_test(test_affine_values),
      cmocka_unit_test(test_strides),
      cmocka_unit_test(test_application_managed_cache),
      cmocka_unit_test(test_two_d_input_ignores_layout),
      cmocka_unit_test(test_multi_batch),
      cmocka_unit_test(test_matches_general_api),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
