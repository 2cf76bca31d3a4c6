// Memory the application controls: weights and internal memory allocated outside
// (RKNN_FLAG_MEM_ALLOC_OUTSIDE / INTERNAL_ALLOC_OUTSIDE), one internal buffer reused by several
// contexts run in series, shared weights, the model itself in zero-copy memory, the info-only
// init, and dynamic input shapes.
#include <cstring>
#include <random>
#include <vector>

#include "api/zero_copy_check.h"

using namespace orknn::api_testing;

namespace {

rknn_mem_size query_mem_size(rknn_context context) {
  rknn_mem_size sizes;
  std::memset(&sizes, 0, sizeof(sizes));
  assert_int_equal(rknn_query(context, RKNN_QUERY_MEM_SIZE, &sizes, sizeof(sizes)), RKNN_SUCC);
  return sizes;
}

std::vector<uint8_t> affine(Precision precision) {
  AffineModelOptions options;
  options.precision = precision;
  return build_affine_model(options);
}

const std::vector<float> kImage = {12, 24, 38, 10, 20, 30, 14, 28, 46, 8, 16, 22};

// Runs the affine model on kImage with the copying API and returns output 0 as float.
std::vector<float> run_affine(rknn_context context) {
  std::vector<uint8_t> image(kImage.begin(), kImage.end());
  rknn_input input = make_input(0, image.data(), 12, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
  assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
  assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
  return get_float_output(context, 0, 12);
}

void test_alloc_outside(void**) {
  for (Precision precision : {Precision::kFloat32, Precision::kInt8}) {
    const std::vector<uint8_t> model = affine(precision);
    rknn_context context = init_or_fail(model, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    const rknn_mem_size sizes = query_mem_size(context);
    assert_true(sizes.total_weight_size > 0);
    assert_true(sizes.total_internal_size > 0);
    // Running before the internal memory is given is refused.
    std::vector<uint8_t> image(kImage.begin(), kImage.end());
    rknn_input input = make_input(0, image.data(), 12, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
    assert_int_equal(rknn_run(context, nullptr), RKNN_ERR_PARAM_INVALID);

    rknn_tensor_mem* weights = create_mem_or_fail(context, sizes.total_weight_size);
    rknn_tensor_mem* internal = create_mem_or_fail(context, sizes.total_internal_size);
    rknn_tensor_mem* short_weights = create_mem_or_fail(context, sizes.total_weight_size - 1);
    rknn_tensor_mem* short_internal = create_mem_or_fail(context, sizes.total_internal_size - 1);
    assert_int_equal(rknn_set_weight_mem(context, short_weights), RKNN_ERR_PARAM_INVALID);
    assert_int_equal(rknn_set_internal_mem(context, short_internal), RKNN_ERR_PARAM_INVALID);
    assert_int_equal(rknn_set_weight_mem(context, weights), RKNN_SUCC);
    assert_int_equal(rknn_set_internal_mem(context, internal), RKNN_SUCC);
    // The weights now live in the application's memory: the model's constants are in it.
    const uint8_t* stored = static_cast<const uint8_t*>(weights->virt_addr);
    bool any_nonzero = false;
    for (uint32_t i = 0; i < weights->size; ++i) any_nonzero |= stored[i] != 0;
    assert_true(any_nonzero);

    rknn_context reference = init_or_fail(model);
    expect_near_all(run_affine(context), run_affine(reference), 0.0);
    // Memory that the application supplies is not counted as allocated by the context.
    const rknn_mem_size own = query_mem_size(reference);
    assert_true(query_mem_size(context).total_dma_allocated_size < own.total_dma_allocated_size);
    rknn_destroy(reference);
    rknn_destroy(context);
    for (rknn_tensor_mem* mem : {weights, internal, short_weights, short_internal}) {
      assert_int_equal(rknn_destroy_mem(0, mem), RKNN_SUCC);
    }
  }
}

void test_internal_alloc_outside_and_flag_checks(void**) {
  const std::vector<uint8_t> model = affine(Precision::kFloat32);
  rknn_context context = init_or_fail(model, RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE);
  const rknn_mem_size sizes = query_mem_size(context);
  rknn_tensor_mem* internal = create_mem_or_fail(context, sizes.total_internal_size);
  rknn_tensor_mem* weights = create_mem_or_fail(context, sizes.total_weight_size);
  // Weights stay the runtime's with INTERNAL_ALLOC_OUTSIDE.
  assert_int_equal(rknn_set_weight_mem(context, weights), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_internal_mem(context, internal), RKNN_SUCC);
  rknn_context plain = init_or_fail(model);
  expect_near_all(run_affine(context), run_affine(plain), 0.0);
  // Without the flags neither call is allowed.
  assert_int_equal(rknn_set_internal_mem(plain, internal), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_weight_mem(plain, weights), RKNN_ERR_PARAM_INVALID);
  rknn_destroy(plain);
  rknn_destroy(context);
  assert_int_equal(rknn_destroy_mem(0, internal), RKNN_SUCC);
  assert_int_equal(rknn_destroy_mem(0, weights), RKNN_SUCC);
}

// The vendor's rknn_internal_mem_reuse_demo: one buffer of the largest internal size, wrapped
// for each context with rknn_create_mem_from_fd, contexts run one after the other.
void test_internal_memory_reuse(void**) {
  const std::vector<uint8_t> first_model = affine(Precision::kFloat32);
  const std::vector<uint8_t> second_model = build_chain_model(6);
  rknn_context first = init_or_fail(first_model, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
  rknn_context second = init_or_fail(second_model, RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE);
  const rknn_mem_size first_sizes = query_mem_size(first);
  const rknn_mem_size second_sizes = query_mem_size(second);
  const uint32_t largest =
      std::max(first_sizes.total_internal_size, second_sizes.total_internal_size);
  rknn_tensor_mem* shared = create_mem_or_fail(first, largest);
  rknn_tensor_mem* first_view = rknn_create_mem_from_fd(first, shared->fd, shared->virt_addr,
                                                        first_sizes.total_internal_size, 0);
  rknn_tensor_mem* second_view = rknn_create_mem_from_fd(second, shared->fd, shared->virt_addr,
                                                         second_sizes.total_internal_size, 0);
  assert_non_null(first_view);
  assert_non_null(second_view);
  rknn_tensor_mem* weights = create_mem_or_fail(first, first_sizes.total_weight_size);
  assert_int_equal(rknn_set_weight_mem(first, weights), RKNN_SUCC);
  assert_int_equal(rknn_set_internal_mem(first, first_view), RKNN_SUCC);
  assert_int_equal(rknn_set_internal_mem(second, second_view), RKNN_SUCC);

  rknn_context first_reference = init_or_fail(first_model);
  rknn_context second_reference = init_or_fail(second_model);
  std::vector<float> chain_input(16);
  for (int i = 0; i < 16; ++i) chain_input[i] = 0.25f * i - 1;
  for (int round = 0; round < 3; ++round) {
    expect_near_all(run_affine(first), run_affine(first_reference), 0.0);
    std::vector<std::vector<float>> results;
    for (rknn_context context : {second, second_reference}) {
      rknn_input input =
          make_input(0, chain_input.data(), 64, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_UNDEFINED);
      assert_int_equal(rknn_inputs_set(context, 1, &input), RKNN_SUCC);
      assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
      results.push_back(get_float_output(context, 0, 16));
    }
    expect_near_all(results[0], results[1], 0.0);
  }
  for (rknn_context context : {first, second, first_reference, second_reference}) {
    rknn_destroy(context);
  }
  for (rknn_tensor_mem* mem : {first_view, second_view, shared, weights}) {
    assert_int_equal(rknn_destroy_mem(0, mem), RKNN_SUCC);
  }
}

void test_model_info_only_then_init_again(void**) {
  std::vector<uint8_t> model = affine(Precision::kInt8);
  rknn_context context = 0;
  assert_int_equal(
      rknn_init(&context, model.data(), static_cast<uint32_t>(model.size()),
                RKNN_FLAG_COLLECT_MODEL_INFO_ONLY | RKNN_FLAG_MEM_ALLOC_OUTSIDE, nullptr),
      RKNN_SUCC);
  const rknn_mem_size info_sizes = query_mem_size(context);
  assert_int_equal(rknn_run(context, nullptr), RKNN_ERR_PARAM_INVALID);
  const rknn_context info_context = context;
  // Same variable, no destroy in between (rknn_dynshape_inference_zero_copy_alloc_outside).
  assert_int_equal(rknn_init(&context, model.data(), static_cast<uint32_t>(model.size()),
                             RKNN_FLAG_MEM_ALLOC_OUTSIDE, nullptr),
                   RKNN_SUCC);
  assert_true(context != info_context);
  // The info-only context was released by the second init.
  assert_int_equal(rknn_destroy(info_context), RKNN_ERR_CTX_INVALID);
  const rknn_mem_size sizes = query_mem_size(context);
  assert_int_equal(sizes.total_weight_size, info_sizes.total_weight_size);
  assert_int_equal(sizes.total_internal_size, info_sizes.total_internal_size);
  rknn_destroy(context);
}

void test_share_weights(void**) {
  const std::vector<uint8_t> model = affine(Precision::kFloat32);
  rknn_context owner = init_or_fail(model);
  rknn_init_extend extend;
  std::memset(&extend, 0, sizeof(extend));
  extend.ctx = owner;
  rknn_context sharer = 0;
  std::vector<uint8_t> copy = model;
  assert_int_equal(rknn_init(&sharer, copy.data(), static_cast<uint32_t>(copy.size()),
                             RKNN_FLAG_SHARE_WEIGHT_MEM, &extend),
                   RKNN_SUCC);
  // The sharer works after the owner is gone (it keeps the shared weights alive).
  const std::vector<float> expected = run_affine(owner);
  rknn_destroy(owner);
  expect_near_all(run_affine(sharer), expected, 0.0);
  rknn_destroy(sharer);

  // Different weights cannot be shared.
  rknn_context int8_owner = init_or_fail(affine(Precision::kInt8));
  extend.ctx = int8_owner;
  assert_int_equal(rknn_init(&sharer, copy.data(), static_cast<uint32_t>(copy.size()),
                             RKNN_FLAG_SHARE_WEIGHT_MEM, &extend),
                   RKNN_ERR_PARAM_INVALID);
  rknn_destroy(int8_owner);
}

void test_model_buffer_zero_copy(void**) {
  const std::vector<uint8_t> model = affine(Precision::kFloat16);
  rknn_tensor_mem* model_mem = rknn_create_mem2(0, model.size(), RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  assert_non_null(model_mem);
  std::memcpy(model_mem->virt_addr, model.data(), model.size());
  rknn_init_extend extend;
  std::memset(&extend, 0, sizeof(extend));
  extend.model_buffer_fd = model_mem->fd;
  extend.model_buffer_flags = model_mem->flags;
  extend.real_model_size = static_cast<uint32_t>(model.size());
  rknn_context context = 0;
  assert_int_equal(rknn_init(&context, model_mem->virt_addr, static_cast<uint32_t>(model.size()),
                             RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &extend),
                   RKNN_SUCC);
  rknn_tensor_mem where;
  std::memset(&where, 0, sizeof(where));
  assert_int_equal(rknn_query(context, RKNN_QUERY_DEVICE_MEM_INFO, &where, sizeof(where)),
                   RKNN_SUCC);
  assert_int_equal(where.fd, model_mem->fd);
  assert_ptr_equal(where.virt_addr, model_mem->virt_addr);
  assert_int_equal(where.size, model.size());
  // The model bytes are used in place: the context keeps them mapped after rknn_destroy_mem.
  assert_int_equal(rknn_destroy_mem(0, model_mem), RKNN_SUCC);
  rknn_context reference = init_or_fail(model);
  expect_near_all(run_affine(context), run_affine(reference), 0.0);
  // A model copied at init has no shareable memory to describe.
  assert_int_equal(rknn_query(reference, RKNN_QUERY_DEVICE_MEM_INFO, &where, sizeof(where)),
                   RKNN_ERR_FAIL);
  rknn_destroy(reference);
  rknn_destroy(context);

  // A buffer that is not rknn_create_mem* memory, or a wrong fd, is refused.
  std::vector<uint8_t> heap = model;
  extend.model_buffer_fd = 0;
  assert_int_equal(rknn_init(&context, heap.data(), static_cast<uint32_t>(heap.size()),
                             RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, &extend),
                   RKNN_ERR_PARAM_INVALID);
}

void test_dynamic_shapes(void**) {
  const std::vector<uint8_t> model = build_dynamic_model();
  rknn_context context = init_or_fail(model);
  rknn_input_range range;
  std::memset(&range, 0, sizeof(range));
  assert_int_equal(rknn_query(context, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)),
                   RKNN_SUCC);
  assert_int_equal(range.shape_number, 3);
  assert_int_equal(range.fmt, RKNN_TENSOR_NHWC);
  assert_int_equal(range.dyn_range[1][1], 8);  // [1,8,8,3]

  // The internal size is reported for the largest shape set.
  const rknn_mem_size sizes = query_mem_size(context);
  assert_int_equal(sizes.total_internal_size, 3 * 8 * 8 * 4);

  // An unsupported shape is refused (the message lists the supported ones).
  rknn_tensor_attr attr = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  attr.dims[1] = 5;
  attr.dims[2] = 5;
  assert_int_equal(rknn_set_input_shapes(context, 1, &attr), RKNN_ERR_INPUT_INVALID);
  assert_int_equal(rknn_set_input_shapes(context, 2, &attr), RKNN_ERR_PARAM_INVALID);

  for (const auto& hw : {std::pair<uint32_t, uint32_t>{8, 8}, {2, 6}, {4, 4}, {8, 8}}) {
    attr.dims[1] = hw.first;
    attr.dims[2] = hw.second;
    attr.fmt = RKNN_TENSOR_NHWC;
    assert_int_equal(rknn_set_input_shapes(context, 1, &attr), RKNN_SUCC);
    const rknn_tensor_attr current = query_attr(context, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    assert_int_equal(current.dims[1], hw.first);
    assert_int_equal(current.dims[2], hw.second);
    const rknn_tensor_attr output = query_attr(context, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 0);
    const uint32_t elements = 3 * hw.first * hw.second;
    assert_int_equal(output.n_elems, elements);
    const rknn_tensor_attr native = query_attr(context, RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, 0);
    assert_int_equal(native.fmt, RKNN_TENSOR_NC1HWC2);

    // Zero-copy with the current attrs: input values v give 2v + 1.
    rknn_tensor_attr input_attr = current;
    input_attr.type = RKNN_TENSOR_FLOAT32;
    rknn_tensor_mem* in = create_mem_or_fail(context, elements * 4);
    float* in_values = static_cast<float*>(in->virt_addr);
    for (uint32_t i = 0; i < elements; ++i) in_values[i] = 0.5f * i;
    assert_int_equal(rknn_set_io_mem(context, in, &input_attr), RKNN_SUCC);
    rknn_tensor_mem* out = create_mem_or_fail(context, output.size);
    rknn_tensor_attr output_attr = output;
    assert_int_equal(rknn_set_io_mem(context, out, &output_attr), RKNN_SUCC);
    assert_int_equal(rknn_run(context, nullptr), RKNN_SUCC);
    const float* out_values = static_cast<const float*>(out->virt_addr);
    // NHWC element (h, w, c) lands at NCHW (c, h, w).
    const uint32_t plane = hw.first * hw.second;
    for (uint32_t i = 0; i < elements; ++i) {
      const uint32_t c = i % 3, pixel = i / 3;
      if (out_values[c * plane + pixel] != 2 * in_values[i] + 1) {
        fail_msg("%ux%u: element %u is %f, expected %f", hw.first, hw.second, i,
                 out_values[c * plane + pixel], 2 * in_values[i] + 1);
      }
    }
    assert_int_equal(rknn_destroy_mem(context, in), RKNN_SUCC);
    assert_int_equal(rknn_destroy_mem(context, out), RKNN_SUCC);
  }

  // The single-input form.
  attr.dims[1] = 2;
  attr.dims[2] = 6;
  assert_int_equal(rknn_set_input_shape(context, &attr), RKNN_SUCC);
  assert_int_equal(query_attr(context, RKNN_QUERY_CURRENT_INPUT_ATTR, 0).dims[2], 6);
  rknn_destroy(context);

  // A static model has no shape sets.
  rknn_context static_context = init_or_fail(affine(Precision::kFloat32));
  rknn_tensor_attr static_attr = query_attr(static_context, RKNN_QUERY_INPUT_ATTR, 0);
  assert_int_equal(rknn_set_input_shapes(static_context, 1, &static_attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(
      rknn_query(static_context, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)),
      RKNN_ERR_MODEL_INVALID);
  rknn_destroy(static_context);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alloc_outside),
      cmocka_unit_test(test_internal_alloc_outside_and_flag_checks),
      cmocka_unit_test(test_internal_memory_reuse),
      cmocka_unit_test(test_model_info_only_then_init_again),
      cmocka_unit_test(test_share_weights),
      cmocka_unit_test(test_model_buffer_zero_copy),
      cmocka_unit_test(test_dynamic_shapes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
