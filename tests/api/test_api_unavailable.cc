// Entry points whose capability is not in this build yet (matmul, custom ops) still check their
// arguments the way the full implementation will, then fail cleanly: error codes, NULL results,
// nothing allocated.
#include <vector>

#include "api/api_test_util.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

using namespace orknn::api_testing;

namespace {

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
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_custom_ops),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
