/*
 * OpenRKNN custom-operator API: lets an application (or a plugin library) supply the
 * implementation of an operator type the runtime does not have, on the CPU or on the GPU
 * through OpenCL.
 *
 * Binary-compatible with the RKNN SDK 2.3.2 custom-op interface (see rknn_api.h for the
 * general conventions).
 *
 * Plugins: a shared library named librkcst_<name>.so in the plugin folder
 * (/usr/lib/rknpu/op_plugins on Linux, overridden by RKNN_CSTOP_PLUGIN_DIR) that exports
 *     RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void);
 * is registered automatically for every context.
 */
#ifndef _RKNN_CUSTOM_OP_H
#define _RKNN_CUSTOM_OP_H

#include "rknn_api.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by a custom op's init callback to decline: the runtime then uses its own
 * implementation of the operator, if it has one. */
#define RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE (-14)

#define RKNN_CUSTOM_OP_MAX_STR_LEN 64
#define RKNN_CUSTOM_OP_MAX_VALUE_LEN 32

/* For plugin libraries built with hidden visibility: marks get_rknn_custom_op as exported. */
#if defined(__GNUC__) || defined(__clang__)
#define RKNN_CUSTOM_OP_EXPORT __attribute__((visibility("default")))
#else
#define RKNN_CUSTOM_OP_EXPORT
#endif

/* Runtime-private per-operator state; same width as rknn_context. (The spelling of the name is
 * part of the API.) */
#ifdef __arm__
typedef uint32_t rknn_custom_op_interal_context;
#else
typedef uint64_t rknn_custom_op_interal_context;
#endif

/* Where a custom operator executes. */
typedef enum _rknn_target_type {
  RKNN_TARGET_TYPE_CPU = 1,
  RKNN_TARGET_TYPE_GPU = 2, /* OpenCL */
  RKNN_TARGET_TYPE_MAX = 3  /* one past the last target */
} rknn_target_type;

/* OpenCL objects for a GPU custom op, owned by the runtime. Cast them to cl_context,
 * cl_command_queue and cl_kernel; do not release them. */
typedef struct _rknn_gpu_op_context {
  void* cl_context;
  void* cl_command_queue;
  void* cl_kernel;
} rknn_gpu_op_context;

/* Per-instance context passed to every callback of one operator node. */
typedef struct _rknn_custom_op_context {
  rknn_target_type target;                     /* where this instance runs */
  rknn_custom_op_interal_context internal_ctx; /* runtime-private; do not touch */
  rknn_gpu_op_context gpu_ctx;                 /* valid when target is the GPU */
  void* priv_data;                             /* free for the op's own state (init..destroy) */
} rknn_custom_op_context;

/* One input or output of a custom op instance: its description and its memory. Both are owned
 * by the runtime and valid for the duration of the callback. */
typedef struct _rknn_custom_op_tensor {
  rknn_tensor_attr attr;
  rknn_tensor_mem mem;
} rknn_custom_op_tensor;

/* An attribute of the operator node as stored in the model (filled by
 * rknn_custom_op_get_op_attr). */
typedef struct _rknn_custom_op_attr {
  char name[RKNN_MAX_NAME_LEN];
  rknn_tensor_type dtype; /* element type of data */
  uint32_t n_elems;       /* elements in data */
  void* data;             /* owned by the runtime; valid while the context lives; NULL if absent */
} rknn_custom_op_attr;

/* Description and callbacks of one custom operator type, given to rknn_register_custom_ops.
 * Each callback returns RKNN_SUCC or a negative error code. Callbacks of one context are called
 * from one thread at a time. */
typedef struct _rknn_custom_op {
  uint32_t version;                /* version of this op implementation, for the caller's use */
  rknn_target_type target;         /* CPU or GPU */
  char op_type[RKNN_MAX_NAME_LEN]; /* operator type name as it appears in the model */

  char cl_kernel_name[RKNN_MAX_NAME_LEN]; /* GPU: name of the kernel function */
  /* GPU: the OpenCL source text when cl_source_size > 0, otherwise the path of a .cl file. */
  char* cl_kernel_source;
  uint64_t cl_source_size;                  /* bytes of cl_kernel_source, or 0 for a path */
  char cl_build_options[RKNN_MAX_NAME_LEN]; /* GPU: options for clBuildProgram */

  /* Optional: called once per node after loading; may return RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE
   * to fall back to the runtime's own implementation. */
  int (*init)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
              rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  /* Optional: called when shapes are known (again after they change), before compute. */
  int (*prepare)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                 rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  /* Required: computes the outputs from the inputs, once per run. */
  int (*compute)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                 rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  /* Reserved for computing on native-layout tensors; set to NULL. */
  int (*compute_native)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                        uint32_t n_inputs, rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  /* Optional: releases what init/prepare set up (e.g. priv_data); called at rknn_destroy. */
  int (*destroy)(rknn_custom_op_context* op_ctx);
} rknn_custom_op;

/* Type of the get_rknn_custom_op entry point a plugin library exports. */
typedef rknn_custom_op* (*get_custom_op_func)(void);

/* Registers `custom_op_num` operator implementations from the array `op` with a context. Call it
 * after rknn_init and before the first rknn_run. The array and the strings it points to are
 * copied during the call; the callback code must stay loaded while the context lives.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op,
                                             uint32_t custom_op_num);

/* Looks up the attribute `attr_name` of the node whose callback received `op_ctx`, and fills
 * `*op_attr` (caller-owned). When the node has no such attribute, op_attr->n_elems is 0 and
 * op_attr->data is NULL. Call it only from inside a callback.
 * Thread safety: safe from inside any callback. */
RKNN_API_EXPORT void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx,
                                                const char* attr_name,
                                                rknn_custom_op_attr* op_attr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _RKNN_CUSTOM_OP_H */
