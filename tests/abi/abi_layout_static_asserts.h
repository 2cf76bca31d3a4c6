/*
 * The ABI facts of the public headers, as one set of tables, and compile-time checks of them.
 *
 * Every number here comes from the shared reference rknn-c-api.md (../shared/reference/ next to
 * the repository): the struct layouts from its Appendix A (LP64: x86-64 and aarch64) and Appendix B
 * (32-bit ARM, armhf), the values from its tables in sections 1-4, 7 and 8, and the prototypes from
 * sections 6-8. A row marked "derived" is not in the appendix; it follows from the field types and
 * the platform's C ABI and is listed so that every field of every struct is pinned down.
 *
 * Including this header (C11 or C++11) fails the build when the headers disagree with a table.
 * tests/abi/test_abi_layout.c includes it and also walks the same tables at run time, so that
 * ctest reports every fact it checked; define ORKNN_ABI_TABLES_ONLY before including to get
 * only the tables (useful to see all mismatches at once instead of the first compile error).
 *
 * Table rows are X-macros:
 *   ..._TYPES(X)        X(type, sizeof, alignof)                    per ABI
 *   ..._FIELDS(X)       X(type, field, offsetof, sizeof(field))     per ABI
 *   ..._FIELD_TYPES(X)  X(type, field, type of &field)              same on every ABI
 *   ..._VALUES(X)       X(constant, value)                          same on every ABI
 *   ..._MACROS(X)       X(constant, value)  constants that must be preprocessor macros
 *   ..._FUNCTIONS(X)    X(function, return type, (parameter types)) same on every ABI
 */
#ifndef ORKNN_TESTS_ABI_LAYOUT_STATIC_ASSERTS_H
#define ORKNN_TESTS_ABI_LAYOUT_STATIC_ASSERTS_H

#include <stddef.h>
#include <stdint.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

/* ---------------------------------------------------------------------------------------------
 * Language glue: the same checks in C11 and C++11.
 * ------------------------------------------------------------------------------------------- */

#ifdef __cplusplus
template <typename A, typename B>
struct orknn_abi_same_type {
  enum { value = 0 };
};
template <typename A>
struct orknn_abi_same_type<A, A> {
  enum { value = 1 };
};
#define ORKNN_ABI_STATIC_ASSERT(condition, message) static_assert(condition, message)
#define ORKNN_ABI_ALIGNOF(type) alignof(type)
/* 1 when `expression` has exactly the type `type`. */
#define ORKNN_ABI_SAME_TYPE(expression, type) \
  ((int)orknn_abi_same_type<decltype(expression), type>::value)
#else
#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "abi_layout_static_asserts.h needs C11 (_Static_assert, _Alignof, _Generic)"
#endif
#define ORKNN_ABI_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#define ORKNN_ABI_ALIGNOF(type) _Alignof(type)
/* 1 when `expression` has a type compatible with `type`. (C calls an enum compatible with its
 * underlying integer type; the C++ build of this header catches that difference.) */
#define ORKNN_ABI_SAME_TYPE(expression, type) _Generic((expression), type : 1, default : 0)
#endif

#define ORKNN_ABI_FIELD_SIZE(type, field) sizeof(((type*)0)->field)

/* Callback types of rknn_custom_op, spelled out once for the field-type table. */
typedef int (*orknn_abi_custom_op_callback)(rknn_custom_op_context* op_ctx,
                                            rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                                            rknn_custom_op_tensor* outputs, uint32_t n_outputs);
typedef int (*orknn_abi_custom_op_destroy_callback)(rknn_custom_op_context* op_ctx);

/* =============================================================================================
 * Layouts, per ABI.
 * ============================================================================================= */

#if defined(__arm__)

#define ORKNN_ABI_NAME "armhf (32-bit ARM, AAPCS)"
#define ORKNN_ABI_HAVE_LAYOUT 1

/* Appendix B. */
#define ORKNN_ABI_CORE_TYPES(X)                     \
  X(rknn_context, 4, 4)                             \
  X(rknn_input_output_num, 8, 4)                    \
  X(rknn_tensor_attr, 376, 4)                       \
  X(rknn_input_range, 33040, 4)                     \
  X(rknn_perf_detail, 16, 8)                        \
  X(rknn_perf_run, 8, 8)                            \
  X(rknn_sdk_version, 512, 1)                       \
  X(rknn_mem_size, 64, 8)                           \
  X(rknn_custom_string, 1024, 1)                    \
  X(rknn_tensor_mem, 40, 8)                         \
  X(rknn_input, 24, 4)                              \
  X(rknn_output, 16, 4)                             \
  X(rknn_init_extend, 132, 4)                       \
  X(rknn_run_extend, 24, 8)                         \
  X(rknn_output_extend, 8, 8)                       \
  X(rknn_query_cmd, 4, 4)                           \
  X(rknn_core_mask, 4, 4)                           \
  /* derived: section 4, all enums are int-sized */ \
  X(rknn_tensor_type, 4, 4)                         \
  X(rknn_tensor_qnt_type, 4, 4)                     \
  X(rknn_tensor_format, 4, 4)                       \
  X(rknn_tensor_mem_flags, 4, 4)                    \
  X(rknn_mem_alloc_flags, 4, 4)                     \
  X(rknn_mem_sync_mode, 4, 4)

/* Appendix B; field sizes follow from the types (pointers are 4 bytes). */
#define ORKNN_ABI_CORE_FIELDS(X)                       \
  X(rknn_input_output_num, n_input, 0, 4)              \
  X(rknn_input_output_num, n_output, 4, 4)             \
  X(rknn_tensor_attr, index, 0, 4)                     \
  X(rknn_tensor_attr, n_dims, 4, 4)                    \
  X(rknn_tensor_attr, dims, 8, 64)                     \
  X(rknn_tensor_attr, name, 72, 256)                   \
  X(rknn_tensor_attr, n_elems, 328, 4)                 \
  X(rknn_tensor_attr, size, 332, 4)                    \
  X(rknn_tensor_attr, fmt, 336, 4)                     \
  X(rknn_tensor_attr, type, 340, 4)                    \
  X(rknn_tensor_attr, qnt_type, 344, 4)                \
  X(rknn_tensor_attr, fl, 348, 1)                      \
  X(rknn_tensor_attr, zp, 352, 4)                      \
  X(rknn_tensor_attr, scale, 356, 4)                   \
  X(rknn_tensor_attr, w_stride, 360, 4)                \
  X(rknn_tensor_attr, size_with_stride, 364, 4)        \
  X(rknn_tensor_attr, pass_through, 368, 1)            \
  X(rknn_tensor_attr, h_stride, 372, 4)                \
  X(rknn_input_range, index, 0, 4)                     \
  X(rknn_input_range, shape_number, 4, 4)              \
  X(rknn_input_range, fmt, 8, 4)                       \
  X(rknn_input_range, name, 12, 256)                   \
  X(rknn_input_range, dyn_range, 268, 32768)           \
  X(rknn_input_range, n_dims, 33036, 4)                \
  X(rknn_perf_detail, perf_data, 0, 4)                 \
  X(rknn_perf_detail, data_len, 8, 8)                  \
  X(rknn_perf_run, run_duration, 0, 8)                 \
  X(rknn_sdk_version, api_version, 0, 256)             \
  X(rknn_sdk_version, drv_version, 256, 256)           \
  X(rknn_mem_size, total_weight_size, 0, 4)            \
  X(rknn_mem_size, total_internal_size, 4, 4)          \
  X(rknn_mem_size, total_dma_allocated_size, 8, 8)     \
  X(rknn_mem_size, total_sram_size, 16, 4)             \
  X(rknn_mem_size, free_sram_size, 20, 4)              \
  X(rknn_mem_size, reserved, 24, 40)                   \
  X(rknn_custom_string, string, 0, 1024) /* derived */ \
  X(rknn_tensor_mem, virt_addr, 0, 4)                  \
  X(rknn_tensor_mem, phys_addr, 8, 8)                  \
  X(rknn_tensor_mem, fd, 16, 4)                        \
  X(rknn_tensor_mem, offset, 20, 4)                    \
  X(rknn_tensor_mem, size, 24, 4)                      \
  X(rknn_tensor_mem, flags, 28, 4)                     \
  X(rknn_tensor_mem, priv_data, 32, 4)                 \
  X(rknn_input, index, 0, 4)                           \
  X(rknn_input, buf, 4, 4)                             \
  X(rknn_input, size, 8, 4)                            \
  X(rknn_input, pass_through, 12, 1)                   \
  X(rknn_input, type, 16, 4)                           \
  X(rknn_input, fmt, 20, 4)                            \
  X(rknn_output, want_float, 0, 1)                     \
  X(rknn_output, is_prealloc, 1, 1)                    \
  X(rknn_output, index, 4, 4)                          \
  X(rknn_output, buf, 8, 4)                            \
  X(rknn_output, size, 12, 4)                          \
  X(rknn_init_extend, ctx, 0, 4)                       \
  X(rknn_init_extend, real_model_offset, 4, 4)         \
  X(rknn_init_extend, real_model_size, 8, 4)           \
  X(rknn_init_extend, model_buffer_fd, 12, 4)          \
  X(rknn_init_extend, model_buffer_flags, 16, 4)       \
  X(rknn_init_extend, reserved, 20, 112)               \
  X(rknn_run_extend, frame_id, 0, 8)                   \
  X(rknn_run_extend, non_block, 8, 4)                  \
  X(rknn_run_extend, timeout_ms, 12, 4)                \
  X(rknn_run_extend, fence_fd, 16, 4)                  \
  X(rknn_output_extend, frame_id, 0, 8) /* derived */

/* Appendix B sizes; rknn_matmul_ctx and the enums are derived. */
#define ORKNN_ABI_MATMUL_TYPES(X)               \
  X(rknn_matmul_ctx, 4, 4) /* derived */        \
  X(rknn_quant_params, 272, 4)                  \
  X(rknn_matmul_tensor_attr, 332, 4)            \
  X(rknn_matmul_io_attr, 996, 4)                \
  X(rknn_matmul_shape, 12, 4)                   \
  X(rknn_matmul_info, 64, 4)                    \
  X(rknn_matmul_quant_type, 4, 4) /* derived */ \
  X(rknn_matmul_type, 4, 4)       /* derived */ \
  X(rknn_matmul_layout, 4, 4)     /* derived */

/* Appendix B gives the rknn_matmul_info offsets of type, B_layout, iommu_domain_id, group_size
 * and reserved; the other rows are derived. */
#define ORKNN_ABI_MATMUL_FIELDS(X)                         \
  X(rknn_quant_params, name, 0, 256)         /* derived */ \
  X(rknn_quant_params, scale, 256, 4)        /* derived */ \
  X(rknn_quant_params, scale_len, 260, 4)    /* derived */ \
  X(rknn_quant_params, zp, 264, 4)           /* derived */ \
  X(rknn_quant_params, zp_len, 268, 4)       /* derived */ \
  X(rknn_matmul_tensor_attr, name, 0, 256)   /* derived */ \
  X(rknn_matmul_tensor_attr, n_dims, 256, 4) /* derived */ \
  X(rknn_matmul_tensor_attr, dims, 260, 64)  /* derived */ \
  X(rknn_matmul_tensor_attr, size, 324, 4)   /* derived */ \
  X(rknn_matmul_tensor_attr, type, 328, 4)   /* derived */ \
  X(rknn_matmul_io_attr, A, 0, 332)          /* derived */ \
  X(rknn_matmul_io_attr, B, 332, 332)        /* derived */ \
  X(rknn_matmul_io_attr, C, 664, 332)        /* derived */ \
  X(rknn_matmul_shape, M, 0, 4)              /* derived */ \
  X(rknn_matmul_shape, K, 4, 4)              /* derived */ \
  X(rknn_matmul_shape, N, 8, 4)              /* derived */ \
  X(rknn_matmul_info, M, 0, 4)               /* derived */ \
  X(rknn_matmul_info, K, 4, 4)               /* derived */ \
  X(rknn_matmul_info, N, 8, 4)               /* derived */ \
  X(rknn_matmul_info, type, 12, 4)                         \
  X(rknn_matmul_info, B_layout, 16, 2)                     \
  X(rknn_matmul_info, B_quant_type, 18, 2)  /* derived */  \
  X(rknn_matmul_info, AC_layout, 20, 2)     /* derived */  \
  X(rknn_matmul_info, AC_quant_type, 22, 2) /* derived */  \
  X(rknn_matmul_info, iommu_domain_id, 24, 4)              \
  X(rknn_matmul_info, group_size, 28, 2)                   \
  X(rknn_matmul_info, reserved, 30, 34)

/* Appendix B sizes (and section 7); the handle, function pointer and enum rows are derived. */
#define ORKNN_ABI_CUSTOM_OP_TYPES(X)                    \
  X(rknn_custom_op_interal_context, 4, 4) /* derived */ \
  X(rknn_target_type, 4, 4)               /* derived */ \
  X(rknn_gpu_op_context, 12, 4)                         \
  X(rknn_custom_op_context, 24, 4)                      \
  X(rknn_custom_op_tensor, 416, 8)                      \
  X(rknn_custom_op_attr, 268, 4)                        \
  X(rknn_custom_op, 816, 8)                             \
  X(get_custom_op_func, 4, 4) /* derived */

/* All derived: Appendix B has only the sizes of these structs. */
#define ORKNN_ABI_CUSTOM_OP_FIELDS(X)            \
  X(rknn_gpu_op_context, cl_context, 0, 4)       \
  X(rknn_gpu_op_context, cl_command_queue, 4, 4) \
  X(rknn_gpu_op_context, cl_kernel, 8, 4)        \
  X(rknn_custom_op_context, target, 0, 4)        \
  X(rknn_custom_op_context, internal_ctx, 4, 4)  \
  X(rknn_custom_op_context, gpu_ctx, 8, 12)      \
  X(rknn_custom_op_context, priv_data, 20, 4)    \
  X(rknn_custom_op_tensor, attr, 0, 376)         \
  X(rknn_custom_op_tensor, mem, 376, 40)         \
  X(rknn_custom_op_attr, name, 0, 256)           \
  X(rknn_custom_op_attr, dtype, 256, 4)          \
  X(rknn_custom_op_attr, n_elems, 260, 4)        \
  X(rknn_custom_op_attr, data, 264, 4)           \
  X(rknn_custom_op, version, 0, 4)               \
  X(rknn_custom_op, target, 4, 4)                \
  X(rknn_custom_op, op_type, 8, 256)             \
  X(rknn_custom_op, cl_kernel_name, 264, 256)    \
  X(rknn_custom_op, cl_kernel_source, 520, 4)    \
  X(rknn_custom_op, cl_source_size, 528, 8)      \
  X(rknn_custom_op, cl_build_options, 536, 256)  \
  X(rknn_custom_op, init, 792, 4)                \
  X(rknn_custom_op, prepare, 796, 4)             \
  X(rknn_custom_op, compute, 800, 4)             \
  X(rknn_custom_op, compute_native, 804, 4)      \
  X(rknn_custom_op, destroy, 808, 4)

#elif defined(__LP64__) || defined(_LP64)

#define ORKNN_ABI_NAME "LP64 (x86-64, aarch64)"
#define ORKNN_ABI_HAVE_LAYOUT 1

/* Appendix A. */
#define ORKNN_ABI_CORE_TYPES(X)                     \
  X(rknn_context, 8, 8)                             \
  X(rknn_input_output_num, 8, 4)                    \
  X(rknn_tensor_attr, 376, 4)                       \
  X(rknn_input_range, 33040, 4)                     \
  X(rknn_perf_detail, 16, 8)                        \
  X(rknn_perf_run, 8, 8)                            \
  X(rknn_sdk_version, 512, 1)                       \
  X(rknn_mem_size, 64, 8)                           \
  X(rknn_custom_string, 1024, 1)                    \
  X(rknn_tensor_mem, 40, 8)                         \
  X(rknn_input, 32, 8)                              \
  X(rknn_output, 24, 8)                             \
  X(rknn_init_extend, 136, 8)                       \
  X(rknn_run_extend, 24, 8)                         \
  X(rknn_output_extend, 8, 8)                       \
  X(rknn_query_cmd, 4, 4)                           \
  X(rknn_core_mask, 4, 4)                           \
  /* derived: section 4, all enums are int-sized */ \
  X(rknn_tensor_type, 4, 4)                         \
  X(rknn_tensor_qnt_type, 4, 4)                     \
  X(rknn_tensor_format, 4, 4)                       \
  X(rknn_tensor_mem_flags, 4, 4)                    \
  X(rknn_mem_alloc_flags, 4, 4)                     \
  X(rknn_mem_sync_mode, 4, 4)

/* Appendix A. */
#define ORKNN_ABI_CORE_FIELDS(X)                       \
  X(rknn_input_output_num, n_input, 0, 4)              \
  X(rknn_input_output_num, n_output, 4, 4)             \
  X(rknn_tensor_attr, index, 0, 4)                     \
  X(rknn_tensor_attr, n_dims, 4, 4)                    \
  X(rknn_tensor_attr, dims, 8, 64)                     \
  X(rknn_tensor_attr, name, 72, 256)                   \
  X(rknn_tensor_attr, n_elems, 328, 4)                 \
  X(rknn_tensor_attr, size, 332, 4)                    \
  X(rknn_tensor_attr, fmt, 336, 4)                     \
  X(rknn_tensor_attr, type, 340, 4)                    \
  X(rknn_tensor_attr, qnt_type, 344, 4)                \
  X(rknn_tensor_attr, fl, 348, 1)                      \
  X(rknn_tensor_attr, zp, 352, 4)                      \
  X(rknn_tensor_attr, scale, 356, 4)                   \
  X(rknn_tensor_attr, w_stride, 360, 4)                \
  X(rknn_tensor_attr, size_with_stride, 364, 4)        \
  X(rknn_tensor_attr, pass_through, 368, 1)            \
  X(rknn_tensor_attr, h_stride, 372, 4)                \
  X(rknn_input_range, index, 0, 4)                     \
  X(rknn_input_range, shape_number, 4, 4)              \
  X(rknn_input_range, fmt, 8, 4)                       \
  X(rknn_input_range, name, 12, 256)                   \
  X(rknn_input_range, dyn_range, 268, 32768)           \
  X(rknn_input_range, n_dims, 33036, 4)                \
  X(rknn_perf_detail, perf_data, 0, 8)                 \
  X(rknn_perf_detail, data_len, 8, 8)                  \
  X(rknn_perf_run, run_duration, 0, 8)                 \
  X(rknn_sdk_version, api_version, 0, 256)             \
  X(rknn_sdk_version, drv_version, 256, 256)           \
  X(rknn_mem_size, total_weight_size, 0, 4)            \
  X(rknn_mem_size, total_internal_size, 4, 4)          \
  X(rknn_mem_size, total_dma_allocated_size, 8, 8)     \
  X(rknn_mem_size, total_sram_size, 16, 4)             \
  X(rknn_mem_size, free_sram_size, 20, 4)              \
  X(rknn_mem_size, reserved, 24, 40)                   \
  X(rknn_custom_string, string, 0, 1024) /* derived */ \
  X(rknn_tensor_mem, virt_addr, 0, 8)                  \
  X(rknn_tensor_mem, phys_addr, 8, 8)                  \
  X(rknn_tensor_mem, fd, 16, 4)                        \
  X(rknn_tensor_mem, offset, 20, 4)                    \
  X(rknn_tensor_mem, size, 24, 4)                      \
  X(rknn_tensor_mem, flags, 28, 4)                     \
  X(rknn_tensor_mem, priv_data, 32, 8)                 \
  X(rknn_input, index, 0, 4)                           \
  X(rknn_input, buf, 8, 8)                             \
  X(rknn_input, size, 16, 4)                           \
  X(rknn_input, pass_through, 20, 1)                   \
  X(rknn_input, type, 24, 4)                           \
  X(rknn_input, fmt, 28, 4)                            \
  X(rknn_output, want_float, 0, 1)                     \
  X(rknn_output, is_prealloc, 1, 1)                    \
  X(rknn_output, index, 4, 4)                          \
  X(rknn_output, buf, 8, 8)                            \
  X(rknn_output, size, 16, 4)                          \
  X(rknn_init_extend, ctx, 0, 8)                       \
  X(rknn_init_extend, real_model_offset, 8, 4)         \
  X(rknn_init_extend, real_model_size, 12, 4)          \
  X(rknn_init_extend, model_buffer_fd, 16, 4)          \
  X(rknn_init_extend, model_buffer_flags, 20, 4)       \
  X(rknn_init_extend, reserved, 24, 112)               \
  X(rknn_run_extend, frame_id, 0, 8)                   \
  X(rknn_run_extend, non_block, 8, 4)                  \
  X(rknn_run_extend, timeout_ms, 12, 4)                \
  X(rknn_run_extend, fence_fd, 16, 4)                  \
  X(rknn_output_extend, frame_id, 0, 8) /* derived */

/* Appendix A; rknn_matmul_ctx and the enums are derived. */
#define ORKNN_ABI_MATMUL_TYPES(X)               \
  X(rknn_matmul_ctx, 8, 8) /* derived */        \
  X(rknn_quant_params, 288, 8)                  \
  X(rknn_matmul_tensor_attr, 332, 4)            \
  X(rknn_matmul_io_attr, 996, 4)                \
  X(rknn_matmul_shape, 12, 4)                   \
  X(rknn_matmul_info, 64, 4)                    \
  X(rknn_matmul_quant_type, 4, 4) /* derived */ \
  X(rknn_matmul_type, 4, 4)       /* derived */ \
  X(rknn_matmul_layout, 4, 4)     /* derived */

/* Appendix A, except rknn_matmul_shape (derived). */
#define ORKNN_ABI_MATMUL_FIELDS(X)            \
  X(rknn_quant_params, name, 0, 256)          \
  X(rknn_quant_params, scale, 256, 8)         \
  X(rknn_quant_params, scale_len, 264, 4)     \
  X(rknn_quant_params, zp, 272, 8)            \
  X(rknn_quant_params, zp_len, 280, 4)        \
  X(rknn_matmul_tensor_attr, name, 0, 256)    \
  X(rknn_matmul_tensor_attr, n_dims, 256, 4)  \
  X(rknn_matmul_tensor_attr, dims, 260, 64)   \
  X(rknn_matmul_tensor_attr, size, 324, 4)    \
  X(rknn_matmul_tensor_attr, type, 328, 4)    \
  X(rknn_matmul_io_attr, A, 0, 332)           \
  X(rknn_matmul_io_attr, B, 332, 332)         \
  X(rknn_matmul_io_attr, C, 664, 332)         \
  X(rknn_matmul_shape, M, 0, 4) /* derived */ \
  X(rknn_matmul_shape, K, 4, 4) /* derived */ \
  X(rknn_matmul_shape, N, 8, 4) /* derived */ \
  X(rknn_matmul_info, M, 0, 4)                \
  X(rknn_matmul_info, K, 4, 4)                \
  X(rknn_matmul_info, N, 8, 4)                \
  X(rknn_matmul_info, type, 12, 4)            \
  X(rknn_matmul_info, B_layout, 16, 2)        \
  X(rknn_matmul_info, B_quant_type, 18, 2)    \
  X(rknn_matmul_info, AC_layout, 20, 2)       \
  X(rknn_matmul_info, AC_quant_type, 22, 2)   \
  X(rknn_matmul_info, iommu_domain_id, 24, 4) \
  X(rknn_matmul_info, group_size, 28, 2)      \
  X(rknn_matmul_info, reserved, 30, 34)

/* Appendix A; the handle, function pointer and enum rows are derived. */
#define ORKNN_ABI_CUSTOM_OP_TYPES(X)                    \
  X(rknn_custom_op_interal_context, 8, 8) /* derived */ \
  X(rknn_target_type, 4, 4)               /* derived */ \
  X(rknn_gpu_op_context, 24, 8)                         \
  X(rknn_custom_op_context, 48, 8)                      \
  X(rknn_custom_op_tensor, 416, 8)                      \
  X(rknn_custom_op_attr, 272, 8)                        \
  X(rknn_custom_op, 832, 8)                             \
  X(get_custom_op_func, 8, 8) /* derived */

/* Appendix A, except rknn_gpu_op_context (derived). */
#define ORKNN_ABI_CUSTOM_OP_FIELDS(X)                          \
  X(rknn_gpu_op_context, cl_context, 0, 8)       /* derived */ \
  X(rknn_gpu_op_context, cl_command_queue, 8, 8) /* derived */ \
  X(rknn_gpu_op_context, cl_kernel, 16, 8)       /* derived */ \
  X(rknn_custom_op_context, target, 0, 4)                      \
  X(rknn_custom_op_context, internal_ctx, 8, 8)                \
  X(rknn_custom_op_context, gpu_ctx, 16, 24)                   \
  X(rknn_custom_op_context, priv_data, 40, 8)                  \
  X(rknn_custom_op_tensor, attr, 0, 376)                       \
  X(rknn_custom_op_tensor, mem, 376, 40)                       \
  X(rknn_custom_op_attr, name, 0, 256)                         \
  X(rknn_custom_op_attr, dtype, 256, 4)                        \
  X(rknn_custom_op_attr, n_elems, 260, 4)                      \
  X(rknn_custom_op_attr, data, 264, 8)                         \
  X(rknn_custom_op, version, 0, 4)                             \
  X(rknn_custom_op, target, 4, 4)                              \
  X(rknn_custom_op, op_type, 8, 256)                           \
  X(rknn_custom_op, cl_kernel_name, 264, 256)                  \
  X(rknn_custom_op, cl_kernel_source, 520, 8)                  \
  X(rknn_custom_op, cl_source_size, 528, 8)                    \
  X(rknn_custom_op, cl_build_options, 536, 256)                \
  X(rknn_custom_op, init, 792, 8)                              \
  X(rknn_custom_op, prepare, 800, 8)                           \
  X(rknn_custom_op, compute, 808, 8)                           \
  X(rknn_custom_op, compute_native, 816, 8)                    \
  X(rknn_custom_op, destroy, 824, 8)

#else

/* No measured layout for this ABI (e.g. i386): the vendor library does not exist for it. Only
 * the ABI-independent facts below are checked. */
#define ORKNN_ABI_NAME "unknown (no measured layout)"
#define ORKNN_ABI_HAVE_LAYOUT 0

#endif

/* =============================================================================================
 * Field types, the same on every ABI: X(struct, field, type of &struct.field).
 * ============================================================================================= */

#define ORKNN_ABI_CORE_FIELD_TYPES(X)                   \
  X(rknn_input_output_num, n_input, uint32_t*)          \
  X(rknn_input_output_num, n_output, uint32_t*)         \
  X(rknn_tensor_attr, index, uint32_t*)                 \
  X(rknn_tensor_attr, n_dims, uint32_t*)                \
  X(rknn_tensor_attr, dims, uint32_t(*)[16])            \
  X(rknn_tensor_attr, name, char(*)[256])               \
  X(rknn_tensor_attr, n_elems, uint32_t*)               \
  X(rknn_tensor_attr, size, uint32_t*)                  \
  X(rknn_tensor_attr, fmt, rknn_tensor_format*)         \
  X(rknn_tensor_attr, type, rknn_tensor_type*)          \
  X(rknn_tensor_attr, qnt_type, rknn_tensor_qnt_type*)  \
  X(rknn_tensor_attr, fl, int8_t*)                      \
  X(rknn_tensor_attr, zp, int32_t*)                     \
  X(rknn_tensor_attr, scale, float*)                    \
  X(rknn_tensor_attr, w_stride, uint32_t*)              \
  X(rknn_tensor_attr, size_with_stride, uint32_t*)      \
  X(rknn_tensor_attr, pass_through, uint8_t*)           \
  X(rknn_tensor_attr, h_stride, uint32_t*)              \
  X(rknn_input_range, index, uint32_t*)                 \
  X(rknn_input_range, shape_number, uint32_t*)          \
  X(rknn_input_range, fmt, rknn_tensor_format*)         \
  X(rknn_input_range, name, char(*)[256])               \
  X(rknn_input_range, dyn_range, uint32_t(*)[512][16])  \
  X(rknn_input_range, n_dims, uint32_t*)                \
  X(rknn_perf_detail, perf_data, char**)                \
  X(rknn_perf_detail, data_len, uint64_t*)              \
  X(rknn_perf_run, run_duration, int64_t*)              \
  X(rknn_sdk_version, api_version, char(*)[256])        \
  X(rknn_sdk_version, drv_version, char(*)[256])        \
  X(rknn_mem_size, total_weight_size, uint32_t*)        \
  X(rknn_mem_size, total_internal_size, uint32_t*)      \
  X(rknn_mem_size, total_dma_allocated_size, uint64_t*) \
  X(rknn_mem_size, total_sram_size, uint32_t*)          \
  X(rknn_mem_size, free_sram_size, uint32_t*)           \
  X(rknn_mem_size, reserved, uint32_t(*)[10])           \
  X(rknn_custom_string, string, char(*)[1024])          \
  X(rknn_tensor_mem, virt_addr, void**)                 \
  X(rknn_tensor_mem, phys_addr, uint64_t*)              \
  X(rknn_tensor_mem, fd, int32_t*)                      \
  X(rknn_tensor_mem, offset, int32_t*)                  \
  X(rknn_tensor_mem, size, uint32_t*)                   \
  X(rknn_tensor_mem, flags, uint32_t*)                  \
  X(rknn_tensor_mem, priv_data, void**)                 \
  X(rknn_input, index, uint32_t*)                       \
  X(rknn_input, buf, void**)                            \
  X(rknn_input, size, uint32_t*)                        \
  X(rknn_input, pass_through, uint8_t*)                 \
  X(rknn_input, type, rknn_tensor_type*)                \
  X(rknn_input, fmt, rknn_tensor_format*)               \
  X(rknn_output, want_float, uint8_t*)                  \
  X(rknn_output, is_prealloc, uint8_t*)                 \
  X(rknn_output, index, uint32_t*)                      \
  X(rknn_output, buf, void**)                           \
  X(rknn_output, size, uint32_t*)                       \
  X(rknn_init_extend, ctx, rknn_context*)               \
  X(rknn_init_extend, real_model_offset, int32_t*)      \
  X(rknn_init_extend, real_model_size, uint32_t*)       \
  X(rknn_init_extend, model_buffer_fd, int32_t*)        \
  X(rknn_init_extend, model_buffer_flags, uint32_t*)    \
  X(rknn_init_extend, reserved, uint8_t(*)[112])        \
  X(rknn_run_extend, frame_id, uint64_t*)               \
  X(rknn_run_extend, non_block, int32_t*)               \
  X(rknn_run_extend, timeout_ms, int32_t*)              \
  X(rknn_run_extend, fence_fd, int32_t*)                \
  X(rknn_output_extend, frame_id, uint64_t*)

#define ORKNN_ABI_MATMUL_FIELD_TYPES(X)               \
  X(rknn_quant_params, name, char(*)[256])            \
  X(rknn_quant_params, scale, float**)                \
  X(rknn_quant_params, scale_len, int32_t*)           \
  X(rknn_quant_params, zp, int32_t**)                 \
  X(rknn_quant_params, zp_len, int32_t*)              \
  X(rknn_matmul_tensor_attr, name, char(*)[256])      \
  X(rknn_matmul_tensor_attr, n_dims, uint32_t*)       \
  X(rknn_matmul_tensor_attr, dims, uint32_t(*)[16])   \
  X(rknn_matmul_tensor_attr, size, uint32_t*)         \
  X(rknn_matmul_tensor_attr, type, rknn_tensor_type*) \
  X(rknn_matmul_io_attr, A, rknn_matmul_tensor_attr*) \
  X(rknn_matmul_io_attr, B, rknn_matmul_tensor_attr*) \
  X(rknn_matmul_io_attr, C, rknn_matmul_tensor_attr*) \
  X(rknn_matmul_shape, M, int32_t*)                   \
  X(rknn_matmul_shape, K, int32_t*)                   \
  X(rknn_matmul_shape, N, int32_t*)                   \
  X(rknn_matmul_info, M, int32_t*)                    \
  X(rknn_matmul_info, K, int32_t*)                    \
  X(rknn_matmul_info, N, int32_t*)                    \
  X(rknn_matmul_info, type, rknn_matmul_type*)        \
  X(rknn_matmul_info, B_layout, int16_t*)             \
  X(rknn_matmul_info, B_quant_type, int16_t*)         \
  X(rknn_matmul_info, AC_layout, int16_t*)            \
  X(rknn_matmul_info, AC_quant_type, int16_t*)        \
  X(rknn_matmul_info, iommu_domain_id, int32_t*)      \
  X(rknn_matmul_info, group_size, int16_t*)           \
  X(rknn_matmul_info, reserved, int8_t(*)[34])

#define ORKNN_ABI_CUSTOM_OP_FIELD_TYPES(X)                                 \
  X(rknn_gpu_op_context, cl_context, void**)                               \
  X(rknn_gpu_op_context, cl_command_queue, void**)                         \
  X(rknn_gpu_op_context, cl_kernel, void**)                                \
  X(rknn_custom_op_context, target, rknn_target_type*)                     \
  X(rknn_custom_op_context, internal_ctx, rknn_custom_op_interal_context*) \
  X(rknn_custom_op_context, gpu_ctx, rknn_gpu_op_context*)                 \
  X(rknn_custom_op_context, priv_data, void**)                             \
  X(rknn_custom_op_tensor, attr, rknn_tensor_attr*)                        \
  X(rknn_custom_op_tensor, mem, rknn_tensor_mem*)                          \
  X(rknn_custom_op_attr, name, char(*)[256])                               \
  X(rknn_custom_op_attr, dtype, rknn_tensor_type*)                         \
  X(rknn_custom_op_attr, n_elems, uint32_t*)                               \
  X(rknn_custom_op_attr, data, void**)                                     \
  X(rknn_custom_op, version, uint32_t*)                                    \
  X(rknn_custom_op, target, rknn_target_type*)                             \
  X(rknn_custom_op, op_type, char(*)[256])                                 \
  X(rknn_custom_op, cl_kernel_name, char(*)[256])                          \
  X(rknn_custom_op, cl_kernel_source, char**)                              \
  X(rknn_custom_op, cl_source_size, uint64_t*)                             \
  X(rknn_custom_op, cl_build_options, char(*)[256])                        \
  X(rknn_custom_op, init, orknn_abi_custom_op_callback*)                   \
  X(rknn_custom_op, prepare, orknn_abi_custom_op_callback*)                \
  X(rknn_custom_op, compute, orknn_abi_custom_op_callback*)                \
  X(rknn_custom_op, compute_native, orknn_abi_custom_op_callback*)         \
  X(rknn_custom_op, destroy, orknn_abi_custom_op_destroy_callback*)

/* =============================================================================================
 * Constants, the same on every ABI.
 * ============================================================================================= */

/* Section 4 (rknn_api.h enums). */
#define ORKNN_ABI_CORE_ENUM_VALUES(X)          \
  X(RKNN_QUERY_IN_OUT_NUM, 0)                  \
  X(RKNN_QUERY_INPUT_ATTR, 1)                  \
  X(RKNN_QUERY_OUTPUT_ATTR, 2)                 \
  X(RKNN_QUERY_PERF_DETAIL, 3)                 \
  X(RKNN_QUERY_PERF_RUN, 4)                    \
  X(RKNN_QUERY_SDK_VERSION, 5)                 \
  X(RKNN_QUERY_MEM_SIZE, 6)                    \
  X(RKNN_QUERY_CUSTOM_STRING, 7)               \
  X(RKNN_QUERY_NATIVE_INPUT_ATTR, 8)           \
  X(RKNN_QUERY_NATIVE_OUTPUT_ATTR, 9)          \
  X(RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR, 8)   \
  X(RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR, 9)  \
  X(RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR, 10)     \
  X(RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 11)    \
  X(RKNN_QUERY_DEVICE_MEM_INFO, 12)            \
  X(RKNN_QUERY_INPUT_DYNAMIC_RANGE, 13)        \
  X(RKNN_QUERY_CURRENT_INPUT_ATTR, 14)         \
  X(RKNN_QUERY_CURRENT_OUTPUT_ATTR, 15)        \
  X(RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, 16)  \
  X(RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, 17) \
  X(RKNN_QUERY_CMD_MAX, 18)                    \
  X(RKNN_TENSOR_FLOAT32, 0)                    \
  X(RKNN_TENSOR_FLOAT16, 1)                    \
  X(RKNN_TENSOR_INT8, 2)                       \
  X(RKNN_TENSOR_UINT8, 3)                      \
  X(RKNN_TENSOR_INT16, 4)                      \
  X(RKNN_TENSOR_UINT16, 5)                     \
  X(RKNN_TENSOR_INT32, 6)                      \
  X(RKNN_TENSOR_UINT32, 7)                     \
  X(RKNN_TENSOR_INT64, 8)                      \
  X(RKNN_TENSOR_BOOL, 9)                       \
  X(RKNN_TENSOR_INT4, 10)                      \
  X(RKNN_TENSOR_BFLOAT16, 11)                  \
  X(RKNN_TENSOR_TYPE_MAX, 12)                  \
  X(RKNN_TENSOR_QNT_NONE, 0)                   \
  X(RKNN_TENSOR_QNT_DFP, 1)                    \
  X(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC, 2)      \
  X(RKNN_TENSOR_QNT_MAX, 3)                    \
  X(RKNN_TENSOR_NCHW, 0)                       \
  X(RKNN_TENSOR_NHWC, 1)                       \
  X(RKNN_TENSOR_NC1HWC2, 2)                    \
  X(RKNN_TENSOR_UNDEFINED, 3)                  \
  X(RKNN_TENSOR_FORMAT_MAX, 4)                 \
  X(RKNN_NPU_CORE_AUTO, 0)                     \
  X(RKNN_NPU_CORE_0, 1)                        \
  X(RKNN_NPU_CORE_1, 2)                        \
  X(RKNN_NPU_CORE_2, 4)                        \
  X(RKNN_NPU_CORE_0_1, 3)                      \
  X(RKNN_NPU_CORE_0_1_2, 7)                    \
  X(RKNN_NPU_CORE_ALL, 0xffff)                 \
  X(RKNN_NPU_CORE_UNDEFINED, 0x10000)          \
  X(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, 1)  \
  X(RKNN_TENSOR_MEMORY_FLAGS_FROM_FD, 2)       \
  X(RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS, 3)     \
  X(RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN, 4)       \
  X(RKNN_FLAG_MEMORY_FLAGS_DEFAULT, 0)         \
  X(RKNN_FLAG_MEMORY_CACHEABLE, 1)             \
  X(RKNN_FLAG_MEMORY_NON_CACHEABLE, 2)         \
  X(RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM, 4)        \
  X(RKNN_MEMORY_SYNC_TO_DEVICE, 1)             \
  X(RKNN_MEMORY_SYNC_FROM_DEVICE, 2)           \
  X(RKNN_MEMORY_SYNC_BIDIRECTIONAL, 3)

/* Sections 1 and 2: rknn_init flags and limits. These must be preprocessor macros: applications
 * test them with #ifdef to detect features. */
#define ORKNN_ABI_FLAG_MACROS(X)                             \
  X(RKNN_FLAG_PRIOR_HIGH, 0x00000000)                        \
  X(RKNN_FLAG_PRIOR_MEDIUM, 0x00000001)                      \
  X(RKNN_FLAG_PRIOR_LOW, 0x00000002)                         \
  X(RKNN_FLAG_ASYNC_MASK, 0x00000004)                        \
  X(RKNN_FLAG_COLLECT_PERF_MASK, 0x00000008)                 \
  X(RKNN_FLAG_MEM_ALLOC_OUTSIDE, 0x00000010)                 \
  X(RKNN_FLAG_SHARE_WEIGHT_MEM, 0x00000020)                  \
  X(RKNN_FLAG_FENCE_IN_OUTSIDE, 0x00000040)                  \
  X(RKNN_FLAG_FENCE_OUT_OUTSIDE, 0x00000080)                 \
  X(RKNN_FLAG_COLLECT_MODEL_INFO_ONLY, 0x00000100)           \
  X(RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, 0x00000200)            \
  X(RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU, 0x00000400) \
  X(RKNN_FLAG_ENABLE_SRAM, 0x00000800)                       \
  X(RKNN_FLAG_SHARE_SRAM, 0x00001000)                        \
  X(RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, 0x00002000)        \
  X(RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE, 0x00004000)     \
  X(RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE, 0x00008000)    \
  X(RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, 0x00010000)            \
  X(RKNN_MEM_FLAG_ALLOC_NO_CONTEXT, 0x00020000)              \
  X(RKNN_MAX_DIMS, 16)                                       \
  X(RKNN_MAX_NUM_CHANNEL, 15)                                \
  X(RKNN_MAX_NAME_LEN, 256)                                  \
  X(RKNN_MAX_DYNAMIC_SHAPE_NUM, 512)

/* Section 3. */
#define ORKNN_ABI_ERROR_MACROS(X)                         \
  X(RKNN_SUCC, 0)                                         \
  X(RKNN_ERR_FAIL, -1)                                    \
  X(RKNN_ERR_TIMEOUT, -2)                                 \
  X(RKNN_ERR_DEVICE_UNAVAILABLE, -3)                      \
  X(RKNN_ERR_MALLOC_FAIL, -4)                             \
  X(RKNN_ERR_PARAM_INVALID, -5)                           \
  X(RKNN_ERR_MODEL_INVALID, -6)                           \
  X(RKNN_ERR_CTX_INVALID, -7)                             \
  X(RKNN_ERR_INPUT_INVALID, -8)                           \
  X(RKNN_ERR_OUTPUT_INVALID, -9)                          \
  X(RKNN_ERR_DEVICE_UNMATCH, -10)                         \
  X(RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL, -11)          \
  X(RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION, -12) \
  X(RKNN_ERR_TARGET_PLATFORM_UNMATCH, -13)

/* Section 8. */
#define ORKNN_ABI_MATMUL_ENUM_VALUES(X)    \
  X(RKNN_QUANT_TYPE_PER_LAYER_SYM, 0)      \
  X(RKNN_QUANT_TYPE_PER_LAYER_ASYM, 1)     \
  X(RKNN_QUANT_TYPE_PER_CHANNEL_SYM, 2)    \
  X(RKNN_QUANT_TYPE_PER_CHANNEL_ASYM, 3)   \
  X(RKNN_QUANT_TYPE_PER_GROUP_SYM, 4)      \
  X(RKNN_QUANT_TYPE_PER_GROUP_ASYM, 5)     \
  X(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, 1) \
  X(RKNN_INT8_MM_INT8_TO_INT32, 2)         \
  X(RKNN_INT8_MM_INT8_TO_INT8, 3)          \
  X(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, 4) \
  X(RKNN_FLOAT16_MM_INT8_TO_FLOAT32, 5)    \
  X(RKNN_FLOAT16_MM_INT8_TO_FLOAT16, 6)    \
  X(RKNN_FLOAT16_MM_INT4_TO_FLOAT32, 7)    \
  X(RKNN_FLOAT16_MM_INT4_TO_FLOAT16, 8)    \
  X(RKNN_INT8_MM_INT8_TO_FLOAT32, 9)       \
  X(RKNN_INT4_MM_INT4_TO_INT16, 10)        \
  X(RKNN_INT8_MM_INT4_TO_INT32, 11)        \
  X(RKNN_FLOAT16_MM_INT4_TO_BFLOAT16, 12)  \
  X(RKNN_INT8_MM_INT4_TO_FLOAT16, 15)      \
  X(RKNN_MM_LAYOUT_NORM, 0)                \
  X(RKNN_MM_LAYOUT_NATIVE, 1)              \
  X(RKNN_MM_LAYOUT_TP_NORM, 2)

/* Section 7. */
#define ORKNN_ABI_CUSTOM_OP_ENUM_VALUES(X) \
  X(RKNN_TARGET_TYPE_CPU, 1)               \
  X(RKNN_TARGET_TYPE_GPU, 2)               \
  X(RKNN_TARGET_TYPE_MAX, 3)

#define ORKNN_ABI_CUSTOM_OP_MACROS(X)         \
  X(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE, -14) \
  X(RKNN_CUSTOM_OP_MAX_STR_LEN, 64)           \
  X(RKNN_CUSTOM_OP_MAX_VALUE_LEN, 32)

/* =============================================================================================
 * Function prototypes, the same on every ABI (sections 6, 7, 8). These are also the exact list
 * of symbols librknnrt.so must export.
 * ============================================================================================= */

#define ORKNN_ABI_CORE_FUNCTIONS(X)                                                               \
  X(rknn_init, int, (rknn_context*, void*, uint32_t, uint32_t, rknn_init_extend*))                \
  X(rknn_dup_context, int, (rknn_context*, rknn_context*))                                        \
  X(rknn_destroy, int, (rknn_context))                                                            \
  X(rknn_query, int, (rknn_context, rknn_query_cmd, void*, uint32_t))                             \
  X(rknn_inputs_set, int, (rknn_context, uint32_t, rknn_input*))                                  \
  X(rknn_set_batch_core_num, int, (rknn_context, int))                                            \
  X(rknn_set_core_mask, int, (rknn_context, rknn_core_mask))                                      \
  X(rknn_run, int, (rknn_context, rknn_run_extend*))                                              \
  X(rknn_wait, int, (rknn_context, rknn_run_extend*))                                             \
  X(rknn_outputs_get, int, (rknn_context, uint32_t, rknn_output*, rknn_output_extend*))           \
  X(rknn_outputs_release, int, (rknn_context, uint32_t, rknn_output*))                            \
  X(rknn_create_mem_from_phys, rknn_tensor_mem*, (rknn_context, uint64_t, void*, uint32_t))       \
  X(rknn_create_mem_from_fd, rknn_tensor_mem*, (rknn_context, int32_t, void*, uint32_t, int32_t)) \
  X(rknn_create_mem_from_mb_blk, rknn_tensor_mem*, (rknn_context, void*, int32_t))                \
  X(rknn_create_mem, rknn_tensor_mem*, (rknn_context, uint32_t))                                  \
  X(rknn_create_mem2, rknn_tensor_mem*, (rknn_context, uint64_t, uint64_t))                       \
  X(rknn_destroy_mem, int, (rknn_context, rknn_tensor_mem*))                                      \
  X(rknn_set_weight_mem, int, (rknn_context, rknn_tensor_mem*))                                   \
  X(rknn_set_internal_mem, int, (rknn_context, rknn_tensor_mem*))                                 \
  X(rknn_set_io_mem, int, (rknn_context, rknn_tensor_mem*, rknn_tensor_attr*))                    \
  X(rknn_set_input_shape, int, (rknn_context, rknn_tensor_attr*))                                 \
  X(rknn_set_input_shapes, int, (rknn_context, uint32_t, rknn_tensor_attr*))                      \
  X(rknn_mem_sync, int, (rknn_context, rknn_tensor_mem*, rknn_mem_sync_mode))

#define ORKNN_ABI_MATMUL_FUNCTIONS(X)                                                           \
  X(rknn_matmul_create, int, (rknn_matmul_ctx*, rknn_matmul_info*, rknn_matmul_io_attr*))       \
  X(rknn_matmul_create_dynamic_shape, int,                                                      \
    (rknn_matmul_ctx*, rknn_matmul_info*, int, rknn_matmul_shape*, rknn_matmul_io_attr*))       \
  X(rknn_matmul_set_io_mem, int, (rknn_matmul_ctx, rknn_tensor_mem*, rknn_matmul_tensor_attr*)) \
  X(rknn_matmul_set_core_mask, int, (rknn_matmul_ctx, rknn_core_mask))                          \
  X(rknn_matmul_set_quant_params, int, (rknn_matmul_ctx, rknn_quant_params*))                   \
  X(rknn_matmul_get_quant_params, int, (rknn_matmul_ctx, rknn_quant_params*, float*))           \
  X(rknn_matmul_set_dynamic_shape, int, (rknn_matmul_ctx, rknn_matmul_shape*))                  \
  X(rknn_matmul_run, int, (rknn_matmul_ctx))                                                    \
  X(rknn_matmul_destroy, int, (rknn_matmul_ctx))                                                \
  X(rknn_B_normal_layout_to_native_layout, int, (void*, void*, int, int, rknn_matmul_info*))

#define ORKNN_ABI_CUSTOM_OP_FUNCTIONS(X)                                      \
  X(rknn_register_custom_ops, int, (rknn_context, rknn_custom_op*, uint32_t)) \
  X(rknn_custom_op_get_op_attr, void, (rknn_custom_op_context*, const char*, rknn_custom_op_attr*))

/* =============================================================================================
 * The compile-time checks.
 * ============================================================================================= */

#ifndef ORKNN_ABI_TABLES_ONLY

#define ORKNN_ABI_ASSERT_TYPE(type, size, align)                                  \
  ORKNN_ABI_STATIC_ASSERT(sizeof(type) == (size), "sizeof(" #type ") != " #size); \
  ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_ALIGNOF(type) == (align), "alignof(" #type ") != " #align);

#define ORKNN_ABI_ASSERT_FIELD(type, field, offset, size)                 \
  ORKNN_ABI_STATIC_ASSERT(offsetof(type, field) == (offset),              \
                          "offsetof(" #type ", " #field ") != " #offset); \
  ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_FIELD_SIZE(type, field) == (size),    \
                          "sizeof(" #type "." #field ") != " #size);

#define ORKNN_ABI_ASSERT_FIELD_TYPE(type, field, pointer_type)                   \
  ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE(&((type*)0)->field, pointer_type), \
                          "&" #type "." #field " is not " #pointer_type);

#define ORKNN_ABI_ASSERT_VALUE(name, value) \
  ORKNN_ABI_STATIC_ASSERT((name) == (value), #name " != " #value);

#define ORKNN_ABI_ASSERT_FUNCTION(name, return_type, parameters)                 \
  ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE(&name, return_type(*) parameters), \
                          "prototype of " #name " is not " #return_type " " #parameters);

#if ORKNN_ABI_HAVE_LAYOUT
ORKNN_ABI_CORE_TYPES(ORKNN_ABI_ASSERT_TYPE)
ORKNN_ABI_CORE_FIELDS(ORKNN_ABI_ASSERT_FIELD)
ORKNN_ABI_MATMUL_TYPES(ORKNN_ABI_ASSERT_TYPE)
ORKNN_ABI_MATMUL_FIELDS(ORKNN_ABI_ASSERT_FIELD)
ORKNN_ABI_CUSTOM_OP_TYPES(ORKNN_ABI_ASSERT_TYPE)
ORKNN_ABI_CUSTOM_OP_FIELDS(ORKNN_ABI_ASSERT_FIELD)
#endif

ORKNN_ABI_CORE_FIELD_TYPES(ORKNN_ABI_ASSERT_FIELD_TYPE)
ORKNN_ABI_MATMUL_FIELD_TYPES(ORKNN_ABI_ASSERT_FIELD_TYPE)
ORKNN_ABI_CUSTOM_OP_FIELD_TYPES(ORKNN_ABI_ASSERT_FIELD_TYPE)

ORKNN_ABI_CORE_ENUM_VALUES(ORKNN_ABI_ASSERT_VALUE)
ORKNN_ABI_FLAG_MACROS(ORKNN_ABI_ASSERT_VALUE)
ORKNN_ABI_ERROR_MACROS(ORKNN_ABI_ASSERT_VALUE)
ORKNN_ABI_MATMUL_ENUM_VALUES(ORKNN_ABI_ASSERT_VALUE)
ORKNN_ABI_CUSTOM_OP_ENUM_VALUES(ORKNN_ABI_ASSERT_VALUE)
ORKNN_ABI_CUSTOM_OP_MACROS(ORKNN_ABI_ASSERT_VALUE)

ORKNN_ABI_CORE_FUNCTIONS(ORKNN_ABI_ASSERT_FUNCTION)
ORKNN_ABI_MATMUL_FUNCTIONS(ORKNN_ABI_ASSERT_FUNCTION)
ORKNN_ABI_CUSTOM_OP_FUNCTIONS(ORKNN_ABI_ASSERT_FUNCTION)

/* Handles: unsigned integers of the pointer width of the vendor ABI, all of one type. */
ORKNN_ABI_STATIC_ASSERT((rknn_context)-1 > 0, "rknn_context must be unsigned");
ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE((rknn_matmul_ctx)0, rknn_context),
                        "rknn_matmul_ctx must be rknn_context");
ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE((rknn_custom_op_interal_context)0, rknn_context),
                        "rknn_custom_op_interal_context must have the type of rknn_context");
#if defined(__arm__)
ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE((rknn_context)0, uint32_t),
                        "rknn_context is uint32_t on 32-bit ARM");
#else
ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE((rknn_context)0, uint64_t),
                        "rknn_context is uint64_t outside 32-bit ARM");
#endif
ORKNN_ABI_STATIC_ASSERT(ORKNN_ABI_SAME_TYPE((get_custom_op_func)0, rknn_custom_op* (*)(void)),
                        "get_custom_op_func must be rknn_custom_op* (*)(void)");

#endif /* ORKNN_ABI_TABLES_ONLY */

#endif /* ORKNN_TESTS_ABI_LAYOUT_STATIC_ASSERTS_H */
