// Entry points whose capability belongs to later work: zero-copy memory and dynamic shapes,
// the NPU matmul API and custom operators. Each checks its arguments like the real function
// will (so applications see the same error codes for bad input) and then reports clearly that
// this build does not provide the capability, with one log line naming the function.
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

constexpr const char kZeroCopy[] = "zero-copy memory (rknn_create_mem*/rknn_set_io_mem)";
constexpr const char kDynamicShapes[] = "changing input shapes (dynamic-shape models)";
constexpr const char kMatmul[] = "the matmul API";
constexpr const char kCustomOps[] = "custom operators";

// For functions that return a pointer: log the failure and give NULL.
template <typename Body>
rknn_tensor_mem* null_on_failure(const char* function, Body&& body) {
  call_api(function, body);
  return nullptr;
}

Status check_context(rknn_context context) {
  if (orknn::api::ContextRegistry::instance().find(context)) return orknn::ok_status();
  return orknn::make_error(StatusCode::kInvalidContext, "invalid context 0x", std::hex,
                           static_cast<uint64_t>(context));
}

}  // namespace

extern "C" {

rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr, void* virt_addr,
                                           uint32_t size) {
  return null_on_failure("rknn_create_mem_from_phys", [&]() -> Status {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (size == 0) return invalid_argument("size is 0");
    return not_in_this_build(kZeroCopy);
  });
}

rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr,
                                         uint32_t size, int32_t offset) {
  return null_on_failure("rknn_create_mem_from_fd", [&]() -> Status {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (fd < 0) return invalid_argument("fd ", fd, " is negative");
    if (offset < 0) return invalid_argument("offset ", offset, " is negative");
    if (size == 0) return invalid_argument("size is 0");
    return not_in_this_build(kZeroCopy);
  });
}

rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk, int32_t offset) {
  return null_on_failure("rknn_create_mem_from_mb_blk", [&]() -> Status {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    return orknn::unimplemented("MB_BLK memory is not supported on any platform");
  });
}

rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size) {
  return null_on_failure("rknn_create_mem", [&]() -> Status {
    ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (size == 0) return invalid_argument("size is 0");
    return not_in_this_build(kZeroCopy);
  });
}

rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags) {
  return null_on_failure("rknn_create_mem2", [&]() -> Status {
    if (!(alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT)) ORKNN_RETURN_IF_ERROR(check_context(ctx));
    if (size == 0) return invalid_argument("size is 0");
    return not_in_this_build(kZeroCopy);
  });
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return call_api("rknn_destroy_mem", [&]() -> Status {
    if (!mem) return invalid_argument("mem is NULL");
    // No rknn_tensor_mem can have come from this build, so `mem` is not ours to free.
    return invalid_argument("mem was not created by rknn_create_mem* of this runtime");
  });
}

int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return call_on_context("rknn_set_weight_mem", ctx, [&](ContextState&) -> Status {
    if (!mem) return invalid_argument("mem is NULL");
    return not_in_this_build(kZeroCopy);
  });
}

int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem) {
  return call_on_context("rknn_set_internal_mem", ctx, [&](ContextState&) -> Status {
    if (!mem) return invalid_argument("mem is NULL");
    return not_in_this_build(kZeroCopy);
  });
}

int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr) {
  return call_on_context("rknn_set_io_mem", ctx, [&](ContextState&) -> Status {
    if (!mem) return invalid_argument("mem is NULL");
    if (!attr) return invalid_argument("attr is NULL");
    return not_in_this_build(kZeroCopy);
  });
}

int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr) {
  return call_on_context("rknn_set_input_shape", ctx, [&](ContextState&) -> Status {
    if (!attr) return invalid_argument("attr is NULL");
    return not_in_this_build(kDynamicShapes);
  });
}

int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]) {
  return call_on_context("rknn_set_input_shapes", ctx, [&](ContextState& state) -> Status {
    if (!attr) return invalid_argument("attr is NULL");
    if (n_inputs != state.session->input_count()) {
      return invalid_argument("n_inputs ", n_inputs, " != model input count ",
                              state.session->input_count());
    }
    return not_in_this_build(kDynamicShapes);
  });
}

int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode) {
  return call_api("rknn_mem_sync", [&]() -> Status {
    if (!mem) return invalid_argument("mem is NULL");
    const int32_t sync_mode = orknn::api::enum_value(mode);
    if (sync_mode < RKNN_MEMORY_SYNC_TO_DEVICE || sync_mode > RKNN_MEMORY_SYNC_BIDIRECTIONAL) {
      return invalid_argument("mode ", sync_mode, " is not 1, 2 or 3");
    }
    return invalid_argument("mem was not created by rknn_create_mem* of this runtime");
  });
}

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
