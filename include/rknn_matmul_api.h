/*
 * OpenRKNN matrix-multiplication API: C = A x B run directly on the NPU, without a model file.
 *
 * Binary-compatible with the RKNN SDK 2.3.2 matmul interface (see rknn_api.h for the general
 * conventions). A matmul context is an ordinary rknn_context: memory for A, B and C comes from
 * rknn_create_mem(ctx, io_attr.X.size) and is released with rknn_destroy_mem.
 *
 * Shape rules of the hardware (the runtime checks them and says which one failed):
 *   - K is at most 10240.
 *   - RK3566/RK3568: K a multiple of 32 (int8) or 16 (float16); N a multiple of 16 (int8) or 8
 *     (float16).
 *   - RK3562: K a multiple of 32; N a multiple of 16 (int8) or 8 (float16).
 *   - RK3588/RK3576: K a multiple of 32; N a multiple of 32 (int8), 16 (float16) or 64 (int4).
 * Native layouts (B_layout / AC_layout = RKNN_MM_LAYOUT_NATIVE), slowest dimension first:
 *   - A: (K/8, M, 8) int8 and (K/4, M, 4) float16 on RK356x; (K/16, M, 16) int8 and
 *     (K/8, M, 8) float16 on RK3562/RK3588/RK3576; (K/32, M, 32) int4 on RK3588/RK3576.
 *   - B: (N/16, K/32, 16, 32) int8 on RK356x/RK3562; (N/32, K/32, 32, 32) int8,
 *     (N/16, K/32, 16, 32) float16 and (N/64, K/32, 64, 32) int4 on RK3588/RK3576. When K is
 *     above 8192 (RK3588) or 4096 (RK3576) B is stored as ceil(K / limit) such blocks; use
 *     rknn_B_normal_layout_to_native_layout rather than packing by hand.
 *   - C: (N/4, M, 4); (N/8, M, 8) for int4 on RK3588.
 */
#ifndef _RKNN_MATMUL_API_H
#define _RKNN_MATMUL_API_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Handle of a matmul context; the same kind of handle as a model context. */
typedef rknn_context rknn_matmul_ctx;

/* How B (and, for per-layer, A and C) is quantized. */
typedef enum _rknn_matmul_quant_type {
  RKNN_QUANT_TYPE_PER_LAYER_SYM = 0,
  RKNN_QUANT_TYPE_PER_LAYER_ASYM = 1,
  RKNN_QUANT_TYPE_PER_CHANNEL_SYM = 2,
  RKNN_QUANT_TYPE_PER_CHANNEL_ASYM = 3,
  RKNN_QUANT_TYPE_PER_GROUP_SYM = 4,
  RKNN_QUANT_TYPE_PER_GROUP_ASYM = 5
} rknn_matmul_quant_type;

/* Quantization parameters of one matmul tensor. The arrays belong to the caller. */
typedef struct _rknn_quant_params {
  char name[RKNN_MAX_NAME_LEN]; /* which tensor: the name from rknn_matmul_io_attr */

  float* scale; /* scale_len scales (1 per layer, N per channel) */
  int32_t scale_len;

  int32_t* zp; /* zp_len zero points */
  int32_t zp_len;
} rknn_quant_params;

/* Element types of the product, spelled <A type>_MM_<B type>_TO_<C type>. */
typedef enum _rknn_matmul_type {
  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 = 1,
  RKNN_INT8_MM_INT8_TO_INT32 = 2,
  RKNN_INT8_MM_INT8_TO_INT8 = 3,
  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 = 4,
  RKNN_FLOAT16_MM_INT8_TO_FLOAT32 = 5,
  RKNN_FLOAT16_MM_INT8_TO_FLOAT16 = 6,
  RKNN_FLOAT16_MM_INT4_TO_FLOAT32 = 7,
  RKNN_FLOAT16_MM_INT4_TO_FLOAT16 = 8,
  RKNN_INT8_MM_INT8_TO_FLOAT32 = 9,
  RKNN_INT4_MM_INT4_TO_INT16 = 10,
  RKNN_INT8_MM_INT4_TO_INT32 = 11,
  RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 = 12,
  RKNN_INT8_MM_INT4_TO_FLOAT16 = 15
} rknn_matmul_type;

/* The enumerator's own name as text ("RKNN_INT8_MM_INT8_TO_INT32", ...); "UNKNOW" for values
 * that are not a matmul type. Header-only; the result is a string literal. */
static inline const char* get_matmul_type_string(rknn_matmul_type type) {
  switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32:
      return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32";
    case RKNN_INT8_MM_INT8_TO_INT32:
      return "RKNN_INT8_MM_INT8_TO_INT32";
    case RKNN_INT8_MM_INT8_TO_INT8:
      return "RKNN_INT8_MM_INT8_TO_INT8";
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16:
      return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32:
      return "RKNN_FLOAT16_MM_INT8_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16:
      return "RKNN_FLOAT16_MM_INT8_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32:
      return "RKNN_FLOAT16_MM_INT4_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16:
      return "RKNN_FLOAT16_MM_INT4_TO_FLOAT16";
    case RKNN_INT8_MM_INT8_TO_FLOAT32:
      return "RKNN_INT8_MM_INT8_TO_FLOAT32";
    case RKNN_INT4_MM_INT4_TO_INT16:
      return "RKNN_INT4_MM_INT4_TO_INT16";
    case RKNN_INT8_MM_INT4_TO_INT32:
      return "RKNN_INT8_MM_INT4_TO_INT32";
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16:
      return "RKNN_FLOAT16_MM_INT4_TO_BFLOAT16";
    /* The vendor helper has no case for this value and prints "UNKNOW"; naming it is harmless. */
    case RKNN_INT8_MM_INT4_TO_FLOAT16:
      return "RKNN_INT8_MM_INT4_TO_FLOAT16";
    default:
      return "UNKNOW";
  }
}

/* Shape, size and type of A, B or C, filled in by the runtime. */
typedef struct _rknn_matmul_tensor_attr {
  char name[RKNN_MAX_NAME_LEN]; /* operand name, as used in rknn_quant_params.name */

  uint32_t n_dims;
  uint32_t dims[RKNN_MAX_DIMS]; /* (M, K), (K, N), (M, N) or the native blocked shape */

  uint32_t size; /* bytes the buffer must hold */

  rknn_tensor_type type;
} rknn_matmul_tensor_attr;

/* The three operands of a matmul context. */
typedef struct _rknn_matmul_io_attr {
  rknn_matmul_tensor_attr A; /* M x K */
  rknn_matmul_tensor_attr B; /* K x N */
  rknn_matmul_tensor_attr C; /* M x N */
} rknn_matmul_io_attr;

/* One supported problem size of a dynamic-shape matmul. */
typedef struct _rknn_matmul_shape {
  int32_t M;
  int32_t K;
  int32_t N;
} rknn_matmul_shape;

/* Values of rknn_matmul_info.B_layout and .AC_layout. */
typedef enum {
  RKNN_MM_LAYOUT_NORM = 0,   /* row-major */
  RKNN_MM_LAYOUT_NATIVE = 1, /* the NPU's blocked layout (see the top of this file) */
  RKNN_MM_LAYOUT_TP_NORM = 2 /* transposed, row-major: B given as N x K */
} rknn_matmul_layout;

/* What to compute. Zero it, then fill in the fields you need. */
typedef struct rknn_matmul_info_t {
  int32_t M;
  int32_t K; /* alignment rules at the top of this file */
  int32_t N; /* alignment rules at the top of this file */

  rknn_matmul_type type;

  int16_t B_layout;      /* a rknn_matmul_layout value */
  int16_t B_quant_type;  /* a rknn_matmul_quant_type value; per-group needs group_size */
  int16_t AC_layout;     /* a rknn_matmul_layout value (NORM or NATIVE) */
  int16_t AC_quant_type; /* A and C are quantized per layer: keep 0 */

  int32_t iommu_domain_id; /* IOMMU domain (4 GiB address space each) for the buffers */

  int16_t group_size; /* elements along K per quantization group (per-group B only) */

  int8_t reserved[34];
} rknn_matmul_info;

/* Creates a matmul context for `info` and fills `*io_attr` with the shapes, sizes and types of
 * A, B and C. `info` and `io_attr` are caller-owned and used only during the call. Destroy the
 * context with rknn_matmul_destroy.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info,
                                       rknn_matmul_io_attr* io_attr);

/* Creates a matmul context that accepts `shape_num` problem sizes, `dynamic_shapes[i]` (only M
 * may differ between them; info->M/K/N are ignored). `io_attrs` must have `shape_num` entries and
 * receives the operand descriptions of each shape. Arrays are caller-owned and used only during
 * the call. Destroy with rknn_matmul_destroy.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info,
                                                     int shape_num,
                                                     rknn_matmul_shape dynamic_shapes[],
                                                     rknn_matmul_io_attr io_attrs[]);

/* Binds `mem` (at least attr->size bytes, usually from rknn_create_mem on this context) as the
 * operand `attr` names (one of io_attr.A, .B, .C). `mem` must stay valid while bound.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem,
                                           rknn_matmul_tensor_attr* attr);

/* Selects the NPU cores the matmul runs on (multi-core NPUs only).
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask);

/* Sets the quantization parameters of the operand named by params->name (int8 types). The
 * arrays params points to are read during the call only.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_set_quant_params(rknn_matmul_ctx context,
                                                 rknn_quant_params* params);

/* Reads back the per-channel quantization parameters (RKNN_INT8_MM_INT8_TO_INT32 only) into
 * `*params`, and the scale the caller applies to C into `*scale`. Pointers stored into `*params`
 * are owned by the runtime and stay valid until the context is destroyed.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params,
                                                 float* scale);

/* Selects which of the shapes given to rknn_matmul_create_dynamic_shape the next runs use.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape);

/* Computes C = A x B with the bound buffers; blocks until C is written.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_run(rknn_matmul_ctx ctx);

/* Destroys a matmul context. Buffers bound to it are not freed (destroy them with
 * rknn_destroy_mem before).
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_matmul_destroy(rknn_matmul_ctx ctx);

/* Repacks a row-major K x N matrix `B_input` into the native layout the NPU uses for B, for
 * info->type on this platform, writing to `B_output` (caller-owned, at least io_attr.B.size
 * bytes). Needs no context.
 * Thread safety: pure function on its arguments; safe from any thread. */
RKNN_API_EXPORT int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K,
                                                          int N, rknn_matmul_info* info);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _RKNN_MATMUL_API_H */
