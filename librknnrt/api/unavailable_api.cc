// Entry points whose capability belongs to later work: the NPU matmul API and custom operators.
// Each checks its arguments like the real function will (so applications see the same error codes
// for bad input) and then reports clearly that this build does not provide the capability, with one
// log line naming the function.
#include "api/api_support.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

using orknn::invalid_argument;
using orknn::Status;
using orknn::StatusCode;
using orknn::api::call_api;
using orknn::api::call_on_context;
using orknn::api::ContextState;

namespace {

Status not_in_this_build(const char* capability) {
  return orknn::unimplemented(capability, " is not available in this build of OpenRKNN yet");
}

constexpr const char kMatmul[] = "the matmul API";
constexpr const char kCustomOps[] = "custom operators";

}  // namespace

extern "C" {

int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr) {
  return call_api("rknn_matmul_create", [&]() -> Status {
    if (!ctx || !info || !io_attr)
      return invalid_argument("ctx, info and io_attr must not be NULL");
    return not_in_this_build(kMatmul);
  });
}

int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                     rknn_matmul_shape dynamic_shapes[],
                                     rknn_matmul_io_attr io_attrs[]) {
  return call_api("rknn_matmul_create_dynamic_shape", [&]() -> Status {
    if (!ctx || !info || !dynamic_shapes || !io_attrs) {
      return invalid_argument("ctx, info, dynamic_shapes and io_attrs must not be NULL");
    }
    if (shape_num <= 0) return invalid_argument("shape_num ", shape_num, " must be positive");
    return not_in_this_build(kMatmul);
  });
}

// Every other matmul call needs a matmul context, and none can exist in this build.
#define ORKNN_MATMUL_CONTEXT_CALL(function, ctx)                                                 \
  call_api(function, [&]() -> Status {                                                           \
    return orknn::make_error(StatusCode::kInvalidContext, "invalid matmul context 0x", std::hex, \
                             static_cast<uint64_t>(ctx), " (", kMatmul,                          \
                             " is not available in this build)");                                \
  })

int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem,
                           rknn_matmul_tensor_attr* attr) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_set_io_mem", ctx);
}
int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_set_core_mask", context);
}
int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_set_quant_params", context);
}
int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_get_quant_params", ctx);
}
int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_set_dynamic_shape", ctx);
}
int rknn_matmul_run(rknn_matmul_ctx ctx) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_run", ctx);
}
int rknn_matmul_destroy(rknn_matmul_ctx ctx) {
  return ORKNN_MATMUL_CONTEXT_CALL("rknn_matmul_destroy", ctx);
}

int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N,
                                          rknn_matmul_info* info) {
  return call_api("rknn_B_normal_layout_to_native_layout", [&]() -> Status {
    if (!B_input || !B_output || !info)
      return invalid_argument("B_input, B_output and info must not be NULL");
    if (K <= 0 || N <= 0) return invalid_argument("K ", K, " and N ", N, " must be positive");
    return not_in_this_build(kMatmul);
  });
}

int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num) {
  return call_on_context("rknn_register_custom_ops", ctx, [&](ContextState&) -> Status {
    if (!op) return invalid_argument("op is NULL");
    if (custom_op_num == 0) return invalid_argument("custom_op_num is 0");
    return not_in_this_build(kCustomOps);
  });
}

void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name,
                                rknn_custom_op_attr* op_attr) {
  // No custom op can run in this build, so no attribute exists; the documented answer for a
  // missing attribute is an empty one.
  if (op_attr) {
    op_attr->n_elems = 0;
    op_attr->data = nullptr;
  }
}

}  // extern "C"
