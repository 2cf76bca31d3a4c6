// Entry points whose capability is not in this build yet (zero-copy memory, dynamic shapes,
// matmul, custom ops) still check their arguments the way the full implementation will, then
// fail cleanly: error codes, NULL results, nothing allocated.
#include <vector>

#include "api/api_test_util.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

using namespace orknn::api_testing;

namespace {

void test_zero_copy_memory(void**) {
  rknn_context context = init_or_fail(build_affine_model({}));
  assert_null(rknn_create_mem(context, 64));
  assert_null(rknn_create_mem(context, 0));
  assert_null(rknn_create_mem(0, 64));
  assert_null(rknn_create_mem2(context, 64, RKNN_FLAG_MEMORY_CACHEABLE));
  assert_null(rknn_create_mem2(0, 64, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT));
  assert_null(rknn_create_mem_from_fd(context, -1, nullptr, 64, 0));
  assert_null(rknn_create_mem_from_fd(context, 3, nullptr, 64, -1));
  assert_null(rknn_create_mem_from_phys(context, 0x1000, nullptr, 64));
  assert_null(rknn_create_mem_from_mb_blk(context, nullptr, 0));
  assert_int_equal(rknn_destroy_mem(context, nullptr), RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem foreign;
  std::memset(&foreign, 0, sizeof(foreign));
  assert_int_equal(rknn_destroy_mem(context, &foreign), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_mem_sync(context, nullptr, RKNN_MEMORY_SYNC_TO_DEVICE),
                   RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_mem_sync(context, &foreign, static_cast<rknn_mem_sync_mode>(9)),
                   RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_weight_mem(context, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_internal_mem(context, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_weight_mem(context, &foreign), RKNN_ERR_FAIL);
  assert_int_equal(rknn_set_internal_mem(context, &foreign), RKNN_ERR_FAIL);
  rknn_tensor_attr attr = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  assert_int_equal(rknn_set_io_mem(context, nullptr, &attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_io_mem(context, &foreign, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_io_mem(context, &foreign, &attr), RKNN_ERR_FAIL);
  assert_int_equal(rknn_set_io_mem(0, &foreign, &attr), RKNN_ERR_CTX_INVALID);
  rknn_destroy(context);
}

void test_dynamic_shapes(void**) {
  rknn_context context = init_or_fail(build_affine_model({}));
  rknn_tensor_attr attr = query_attr(context, RKNN_QUERY_INPUT_ATTR, 0);
  assert_int_equal(rknn_set_input_shape(context, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_input_shapes(context, 1, nullptr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_input_shapes(context, 2, &attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_set_input_shapes(context, 1, &attr), RKNN_ERR_FAIL);
  assert_int_equal(rknn_set_input_shapes(0, 1, &attr), RKNN_ERR_CTX_INVALID);
  rknn_destroy(context);
}

void test_matmul(void**) {
  rknn_matmul_ctx matmul = 0;
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof(info));
  info.M = 4;
  info.K = 64;
  info.N = 32;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  static rknn_matmul_io_attr io_attr;
  assert_int_equal(rknn_matmul_create(nullptr, &info, &io_attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_matmul_create(&matmul, nullptr, &io_attr), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_matmul_create(&matmul, &info, &io_attr), RKNN_ERR_FAIL);
  rknn_matmul_shape shapes[1] = {{4, 64, 32}};
  assert_int_equal(rknn_matmul_create_dynamic_shape(&matmul, &info, 0, shapes, &io_attr),
                   RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_matmul_run(matmul), RKNN_ERR_CTX_INVALID);
  assert_int_equal(rknn_matmul_destroy(matmul), RKNN_ERR_CTX_INVALID);
  assert_int_equal(rknn_matmul_set_core_mask(matmul, RKNN_NPU_CORE_0), RKNN_ERR_CTX_INVALID);
  std::vector<int8_t> b(64 * 32), native(64 * 32);
  assert_int_equal(rknn_B_normal_layout_to_native_layout(nullptr, native.data(), 64, 32, &info),
                   RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_B_normal_layout_to_native_layout(b.data(), native.data(), 0, 32, &info),
                   RKNN_ERR_PARAM_INVALID);
}

void test_custom_ops(void**) {
  rknn_context context = init_or_fail(build_affine_model({}));
  static rknn_custom_op op;
  assert_int_equal(rknn_register_custom_ops(context, nullptr, 1), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_register_custom_ops(context, &op, 0), RKNN_ERR_PARAM_INVALID);
  assert_int_equal(rknn_register_custom_ops(context, &op, 1), RKNN_ERR_FAIL);
  assert_int_equal(rknn_register_custom_ops(0, &op, 1), RKNN_ERR_CTX_INVALID);
  rknn_custom_op_attr attr;
  std::memset(&attr, 0x5a, sizeof(attr));
  rknn_custom_op_get_op_attr(nullptr, "alpha", &attr);
  assert_int_equal(attr.n_elems, 0);
  assert_null(attr.data);
  rknn_custom_op_get_op_attr(nullptr, nullptr, nullptr);  // must not crash
  rknn_destroy(context);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_zero_copy_memory),
      cmocka_unit_test(test_dynamic_shapes),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_custom_ops),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
