/*
 * OpenRKNN public C API.
 *
 * This header is the ABI contract of librknnrt.so. It is source- and binary-compatible with
 * the RKNN SDK 2.3.2 runtime interface: the same function names and signatures, the same
 * struct layouts on LP64 (aarch64, x86-64) and on 32-bit ARM (armhf), and the same enum,
 * flag and error-code values. Applications written for the vendor runtime build against it
 * unchanged and run with our library.
 *
 * Conventions used in the per-function comments below:
 *   - "Ownership": who allocates and who frees each pointer argument or result.
 *   - "Thread safety": every function that takes a context says the same thing: calls on one
 *     context are serialised by the runtime; different contexts may run in parallel.
 *   - Every function returning int returns RKNN_SUCC (0) on success and a negative RKNN_ERR_*
 *     code on failure. Functions returning a pointer return NULL on failure.
 * The full ownership, lifetime and threading rules are in docs/ (threading & memory rules).
 *
 * Requires C99 or later, or C++.
 */
#ifndef _RKNN_API_H
#define _RKNN_API_H

#include <stdint.h>

/* Marks the functions the library exports. librknnrt is built with -fvisibility=hidden, so
 * only declarations carrying this macro become dynamic symbols. */
#ifndef RKNN_API_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define RKNN_API_EXPORT __attribute__((visibility("default")))
#else
#define RKNN_API_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Flags for the `flag` argument of rknn_init (OR them together).
 * ------------------------------------------------------------------------------------------- */

/* Scheduling priority of the context: high is the default. */
#define RKNN_FLAG_PRIOR_HIGH 0x00000000
#define RKNN_FLAG_PRIOR_MEDIUM 0x00000001
#define RKNN_FLAG_PRIOR_LOW 0x00000002

/* Pipelined mode: rknn_outputs_get returns the result of the previous frame instead of waiting
 * for the current one. Only useful when a single thread drives the context. */
#define RKNN_FLAG_ASYNC_MASK 0x00000004

/* Record per-layer timing so that RKNN_QUERY_PERF_DETAIL has content. Makes runs slower. */
#define RKNN_FLAG_COLLECT_PERF_MASK 0x00000008

/* The caller provides all memory (weights, internal activations, inputs, outputs) through
 * rknn_set_weight_mem, rknn_set_internal_mem and rknn_set_io_mem. */
#define RKNN_FLAG_MEM_ALLOC_OUTSIDE 0x00000010

/* Reuse the weights of another context of the same network, given in rknn_init_extend.ctx. */
#define RKNN_FLAG_SHARE_WEIGHT_MEM 0x00000020

/* A fence file descriptor is passed in from outside (rknn_run_extend.fence_fd). */
#define RKNN_FLAG_FENCE_IN_OUTSIDE 0x00000040

/* A fence file descriptor is handed out to the caller. */
#define RKNN_FLAG_FENCE_OUT_OUTSIDE 0x00000080

/* Load the model only far enough to answer RKNN_QUERY_MEM_SIZE (total_weight_size and
 * total_internal_size); the context cannot run. */
#define RKNN_FLAG_COLLECT_MODEL_INFO_ONLY 0x00000100

/* Only the internal (intermediate activation) memory is provided by the caller. */
#define RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE 0x00000200

/* Operators the NPU cannot run go to the GPU before the CPU. */
#define RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU 0x00000400

/* Allow internal buffers in on-chip SRAM. */
#define RKNN_FLAG_ENABLE_SRAM 0x00000800

/* SRAM buffers are shared between contexts (needs RKNN_FLAG_ENABLE_SRAM). */
#define RKNN_FLAG_SHARE_SRAM 0x00001000

/* Do not raise the process priority (the default is nice -19). */
#define RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY 0x00002000

/* The runtime does not flush CPU caches of input memory before a run; the caller does it with
 * rknn_mem_sync. Not compatible with rknn_inputs_set. */
#define RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE 0x00004000

/* The runtime does not invalidate CPU caches of output memory after a run; a caller that reads
 * output_mem->virt_addr must call rknn_mem_sync(..., RKNN_MEMORY_SYNC_FROM_DEVICE) first. Not
 * compatible with rknn_outputs_get. */
#define RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE 0x00008000

/* The model buffer given to rknn_init is NPU memory from rknn_create_mem/rknn_create_mem2 and is
 * used in place, without a copy; it must stay valid until rknn_destroy. */
#define RKNN_FLAG_MODEL_BUFFER_ZERO_COPY 0x00010000

/* An alloc_flags bit for rknn_create_mem2: allocate without a context (ctx may be 0). */
#define RKNN_MEM_FLAG_ALLOC_NO_CONTEXT 0x00020000

/* ---------------------------------------------------------------------------------------------
 * Return codes.
 * ------------------------------------------------------------------------------------------- */

#define RKNN_SUCC 0                      /* success */
#define RKNN_ERR_FAIL (-1)               /* generic failure */
#define RKNN_ERR_TIMEOUT (-2)            /* the operation timed out */
#define RKNN_ERR_DEVICE_UNAVAILABLE (-3) /* the NPU (or other device) cannot be used */
#define RKNN_ERR_MALLOC_FAIL (-4)        /* out of memory */
#define RKNN_ERR_PARAM_INVALID (-5)      /* an argument is wrong */
#define RKNN_ERR_MODEL_INVALID (-6)      /* the model file is malformed or unsupported */
#define RKNN_ERR_CTX_INVALID (-7)        /* the context handle is not a live context */
#define RKNN_ERR_INPUT_INVALID (-8)      /* an input descriptor or buffer is wrong */
#define RKNN_ERR_OUTPUT_INVALID (-9)     /* an output descriptor or buffer is wrong */
/* The device does not match this runtime; update the runtime and the NPU driver. */
#define RKNN_ERR_DEVICE_UNMATCH (-10)
/* A pre-compiled model does not suit the installed driver. (The spelling is part of the API.) */
#define RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL (-11)
/* The model's optimization-level version does not suit the installed driver. */
#define RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION (-12)
/* The model was compiled for another target platform. */
#define RKNN_ERR_TARGET_PLATFORM_UNMATCH (-13)

/* ---------------------------------------------------------------------------------------------
 * Limits.
 * ------------------------------------------------------------------------------------------- */

#define RKNN_MAX_DIMS 16               /* entries in a dims[] array */
#define RKNN_MAX_NUM_CHANNEL 15        /* largest channel count of an image input */
#define RKNN_MAX_NAME_LEN 256          /* bytes in a tensor name, including the NUL */
#define RKNN_MAX_DYNAMIC_SHAPE_NUM 512 /* shape sets one dynamic-shape input can list */

/* Opaque handle of a loaded model (or of a matmul). Its width follows the pointer size of the
 * vendor ABI: 32 bits on 32-bit ARM, 64 bits everywhere else. */
#ifdef __arm__
typedef uint32_t rknn_context;
#else
typedef uint64_t rknn_context;
#endif

/* ---------------------------------------------------------------------------------------------
 * Enumerations. All are int-sized.
 * ------------------------------------------------------------------------------------------- */

/* What rknn_query reports; the comment names the struct `info` must point to. */
typedef enum _rknn_query_cmd {
  RKNN_QUERY_IN_OUT_NUM = 0,    /* rknn_input_output_num */
  RKNN_QUERY_INPUT_ATTR = 1,    /* rknn_tensor_attr; set .index first */
  RKNN_QUERY_OUTPUT_ATTR = 2,   /* rknn_tensor_attr; set .index first */
  RKNN_QUERY_PERF_DETAIL = 3,   /* rknn_perf_detail; meaningful after a run */
  RKNN_QUERY_PERF_RUN = 4,      /* rknn_perf_run; meaningful after a run */
  RKNN_QUERY_SDK_VERSION = 5,   /* rknn_sdk_version */
  RKNN_QUERY_MEM_SIZE = 6,      /* rknn_mem_size */
  RKNN_QUERY_CUSTOM_STRING = 7, /* rknn_custom_string */

  /* rknn_tensor_attr of inputs/outputs in the layout the NPU uses internally (NC1HWC2). */
  RKNN_QUERY_NATIVE_INPUT_ATTR = 8,
  RKNN_QUERY_NATIVE_OUTPUT_ATTR = 9,
  RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR = 8,  /* same command as RKNN_QUERY_NATIVE_INPUT_ATTR */
  RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR = 9, /* same command as RKNN_QUERY_NATIVE_OUTPUT_ATTR */

  /* rknn_tensor_attr of inputs/outputs in a native NHWC layout. */
  RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR = 10,
  RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR = 11,

  /* rknn_tensor_mem describing where the model buffer lives (fd / physical address). */
  RKNN_QUERY_DEVICE_MEM_INFO = 12,

  /* rknn_input_range: the shape sets a dynamic-shape input accepts. */
  RKNN_QUERY_INPUT_DYNAMIC_RANGE = 13,

  /* rknn_tensor_attr with the shapes selected by the last rknn_set_input_shapes (dynamic-shape
   * models only). */
  RKNN_QUERY_CURRENT_INPUT_ATTR = 14,
  RKNN_QUERY_CURRENT_OUTPUT_ATTR = 15,
  RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR = 16,
  RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR = 17,

  RKNN_QUERY_CMD_MAX = 18 /* one past the last command */
} rknn_query_cmd;

/* Element type of a tensor or buffer. */
typedef enum _rknn_tensor_type {
  RKNN_TENSOR_FLOAT32 = 0,
  RKNN_TENSOR_FLOAT16 = 1,
  RKNN_TENSOR_INT8 = 2,
  RKNN_TENSOR_UINT8 = 3,
  RKNN_TENSOR_INT16 = 4,
  RKNN_TENSOR_UINT16 = 5,
  RKNN_TENSOR_INT32 = 6,
  RKNN_TENSOR_UINT32 = 7,
  RKNN_TENSOR_INT64 = 8,
  RKNN_TENSOR_BOOL = 9,
  RKNN_TENSOR_INT4 = 10, /* two values per byte */
  RKNN_TENSOR_BFLOAT16 = 11,

  RKNN_TENSOR_TYPE_MAX = 12 /* one past the last type */
} rknn_tensor_type;

/* Short printable name of a tensor type ("FP32", "INT8", ...); "UNKNOW" for other values.
 * Header-only (no library symbol). The result is a string literal. */
static inline const char* get_type_string(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32:
      return "FP32";
    case RKNN_TENSOR_FLOAT16:
      return "FP16";
    case RKNN_TENSOR_INT8:
      return "INT8";
    case RKNN_TENSOR_UINT8:
      return "UINT8";
    case RKNN_TENSOR_INT16:
      return "INT16";
    case RKNN_TENSOR_UINT16:
      return "UINT16";
    case RKNN_TENSOR_INT32:
      return "INT32";
    case RKNN_TENSOR_UINT32:
      return "UINT32";
    case RKNN_TENSOR_INT64:
      return "INT64";
    case RKNN_TENSOR_BOOL:
      return "BOOL";
    case RKNN_TENSOR_INT4:
      return "INT4";
    case RKNN_TENSOR_BFLOAT16:
      return "BF16";
    case RKNN_TENSOR_TYPE_MAX: /* listed so that -Wswitch-enum stays quiet in client code */
    default:
      return "UNKNOW"; /* sic: applications compare against this exact text */
  }
}

/* Quantization scheme of a tensor. */
typedef enum _rknn_tensor_qnt_type {
  RKNN_TENSOR_QNT_NONE = 0,              /* not quantized */
  RKNN_TENSOR_QNT_DFP = 1,               /* dynamic fixed point, uses rknn_tensor_attr.fl */
  RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC = 2, /* real = (q - zp) * scale */

  RKNN_TENSOR_QNT_MAX = 3 /* one past the last scheme */
} rknn_tensor_qnt_type;

/* Printable name of a quantization scheme ("NONE", "DFP", "AFFINE"); "UNKNOW" otherwise.
 * Header-only; the result is a string literal. */
static inline const char* get_qnt_type_string(rknn_tensor_qnt_type type) {
  switch (type) {
    case RKNN_TENSOR_QNT_NONE:
      return "NONE";
    case RKNN_TENSOR_QNT_DFP:
      return "DFP";
    case RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC:
      return "AFFINE";
    case RKNN_TENSOR_QNT_MAX:
    default:
      return "UNKNOW";
  }
}

/* Memory layout of a tensor; dims[] are listed in this order. */
typedef enum _rknn_tensor_format {
  RKNN_TENSOR_NCHW = 0,
  RKNN_TENSOR_NHWC = 1,
  RKNN_TENSOR_NC1HWC2 = 2,   /* NPU native: channels split in blocks of C2 */
  RKNN_TENSOR_UNDEFINED = 3, /* not an image tensor: the source model's order */

  RKNN_TENSOR_FORMAT_MAX = 4 /* one past the last format */
} rknn_tensor_format;

/* Which NPU cores a context may run on (a bit per core, with a few named combinations). */
typedef enum _rknn_core_mask {
  RKNN_NPU_CORE_AUTO = 0, /* the runtime picks an idle core for each run (default) */
  RKNN_NPU_CORE_0 = 1,
  RKNN_NPU_CORE_1 = 2,
  RKNN_NPU_CORE_2 = 4,
  RKNN_NPU_CORE_0_1 = 3,      /* cores 0 and 1 together */
  RKNN_NPU_CORE_0_1_2 = 7,    /* cores 0, 1 and 2 together */
  RKNN_NPU_CORE_ALL = 0xffff, /* every core the platform has */

  RKNN_NPU_CORE_UNDEFINED = 0x10000
} rknn_core_mask;

/* Printable name of a tensor format ("NCHW", "NHWC", "NC1HWC2", "UNDEFINED"); "UNKNOW"
 * otherwise. Header-only; the result is a string literal. */
static inline const char* get_format_string(rknn_tensor_format fmt) {
  switch (fmt) {
    case RKNN_TENSOR_NCHW:
      return "NCHW";
    case RKNN_TENSOR_NHWC:
      return "NHWC";
    case RKNN_TENSOR_NC1HWC2:
      return "NC1HWC2";
    case RKNN_TENSOR_UNDEFINED:
      return "UNDEFINED";
    case RKNN_TENSOR_FORMAT_MAX:
    default:
      return "UNKNOW";
  }
}

/* ---------------------------------------------------------------------------------------------
 * Query results and descriptors.
 * ------------------------------------------------------------------------------------------- */

/* Result of RKNN_QUERY_IN_OUT_NUM. */
typedef struct _rknn_input_output_num {
  uint32_t n_input;
  uint32_t n_output;
} rknn_input_output_num;

/* Description of one input or output tensor (the *_ATTR queries), and the binding description
 * given to rknn_set_io_mem and rknn_set_input_shapes. */
typedef struct _rknn_tensor_attr {
  uint32_t index; /* set by the caller before rknn_query: which input/output */

  uint32_t n_dims;
  uint32_t dims[RKNN_MAX_DIMS]; /* in the order given by fmt; unused entries are 0 */
  char name[RKNN_MAX_NAME_LEN]; /* NUL-terminated */

  uint32_t n_elems; /* product of dims */
  uint32_t size;    /* bytes, tightly packed */

  rknn_tensor_format fmt;
  rknn_tensor_type type;
  rknn_tensor_qnt_type qnt_type;
  int8_t fl;   /* fractional length, for RKNN_TENSOR_QNT_DFP */
  int32_t zp;  /* zero point, for RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC */
  float scale; /* scale, for RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC */

  uint32_t w_stride;         /* read-only: elements per stored row; 0 means the width */
  uint32_t size_with_stride; /* bytes including row padding */

  /* For rknn_set_io_mem: non-zero means the buffer is already in the model's internal type and
   * layout and is used as is; zero means the runtime converts from type/fmt. */
  uint8_t pass_through;
  uint32_t h_stride; /* write-only: padded rows per image (multi-batch); 0 means the height */
} rknn_tensor_attr;

/* Result of RKNN_QUERY_INPUT_DYNAMIC_RANGE: the shapes one input of a dynamic-shape model
 * accepts. Large (about 32 KiB). */
typedef struct _rknn_input_range {
  uint32_t index;        /* set by the caller before rknn_query */
  uint32_t shape_number; /* valid rows of dyn_range */
  rknn_tensor_format fmt;
  char name[RKNN_MAX_NAME_LEN];
  uint32_t dyn_range[RKNN_MAX_DYNAMIC_SHAPE_NUM][RKNN_MAX_DIMS]; /* [shape set][dimension] */
  uint32_t n_dims;
} rknn_input_range;

/* Result of RKNN_QUERY_PERF_DETAIL. */
typedef struct _rknn_perf_detail {
  /* Text table of per-layer timings, owned by the runtime: do not free; valid until the next
   * PERF_DETAIL query or rknn_destroy of the context. */
  char* perf_data;
  uint64_t data_len; /* length of perf_data in bytes */
} rknn_perf_detail;

/* Result of RKNN_QUERY_PERF_RUN. */
typedef struct _rknn_perf_run {
  int64_t run_duration; /* time of the last inference in microseconds, without I/O setup */
} rknn_perf_run;

/* Result of RKNN_QUERY_SDK_VERSION. Both strings are NUL-terminated. */
typedef struct _rknn_sdk_version {
  char api_version[256]; /* runtime version */
  char drv_version[256]; /* NPU driver version */
} rknn_sdk_version;

/* Result of RKNN_QUERY_MEM_SIZE. */
typedef struct _rknn_mem_size {
  uint32_t total_weight_size;        /* bytes of weight memory */
  uint32_t total_internal_size;      /* bytes of intermediate memory, inputs/outputs excluded */
  uint64_t total_dma_allocated_size; /* all DMA memory the context holds */
  uint32_t total_sram_size;          /* SRAM reserved for the NPU; 0 without SRAM */
  uint32_t free_sram_size;           /* of which still free */
  uint32_t reserved[10];
} rknn_mem_size;

/* Result of RKNN_QUERY_CUSTOM_STRING: the free-form string stored in the model at conversion
 * time, NUL-terminated, empty when none was given. */
typedef struct _rknn_custom_string {
  char string[1024];
} rknn_custom_string;

/* Origin of a rknn_tensor_mem, kept in rknn_tensor_mem.flags. rknn_destroy_mem releases the
 * rknn_tensor_mem struct itself in every case. */
typedef enum _rknn_tensor_mem_flags {
  RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE = 1, /* rknn_create_mem / rknn_create_mem2 */
  RKNN_TENSOR_MEMORY_FLAGS_FROM_FD = 2,      /* rknn_create_mem_from_fd */
  RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS = 3,    /* rknn_create_mem_from_phys */
  RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN = 4
} rknn_tensor_mem_flags;

/* alloc_flags of rknn_create_mem2 (may be OR'ed with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT). */
typedef enum _rknn_mem_alloc_flags {
  RKNN_FLAG_MEMORY_FLAGS_DEFAULT = 0, /* same as RKNN_FLAG_MEMORY_CACHEABLE */
  RKNN_FLAG_MEMORY_CACHEABLE = 1,     /* CPU-cached; needs cache maintenance */
  RKNN_FLAG_MEMORY_NON_CACHEABLE = 2, /* uncached; no cache maintenance */
  RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM = 4 /* SRAM where possible, the rest in DRAM */
} rknn_mem_alloc_flags;

/* Direction of a cache synchronisation by rknn_mem_sync. */
typedef enum _rknn_mem_sync_mode {
  RKNN_MEMORY_SYNC_TO_DEVICE = 1,    /* the CPU wrote; make it visible to the device */
  RKNN_MEMORY_SYNC_FROM_DEVICE = 2,  /* the device wrote; make it visible to the CPU */
  RKNN_MEMORY_SYNC_BIDIRECTIONAL = 3 /* both of the above */
} rknn_mem_sync_mode;

/* A block of device-accessible memory (zero-copy API). Created by one of the rknn_create_mem*
 * functions and released with rknn_destroy_mem. */
typedef struct _rknn_tensor_memory {
  void* virt_addr;    /* CPU address of the start of the block */
  uint64_t phys_addr; /* device/physical address, 0 when not known */
  int32_t fd;         /* dma-buf file descriptor of the block */
  int32_t offset;     /* where the tensor starts inside fd */
  uint32_t size;      /* bytes */
  uint32_t flags;     /* a rknn_tensor_mem_flags value */
  void* priv_data;    /* runtime-private; do not touch */
} rknn_tensor_mem;

/* One input for rknn_inputs_set. */
typedef struct _rknn_input {
  uint32_t index; /* model input index */
  void* buf;      /* caller-owned data; copied during rknn_inputs_set */
  uint32_t size;  /* bytes in buf */
  /* Non-zero: buf is already in the model's internal type and layout and is passed unchanged;
   * type and fmt are ignored. Zero: the runtime converts from type/fmt (and normalises). */
  uint8_t pass_through;
  rknn_tensor_type type;  /* element type of buf */
  rknn_tensor_format fmt; /* layout of buf */
} rknn_input;

/* One output for rknn_outputs_get. */
typedef struct _rknn_output {
  uint8_t want_float;  /* non-zero: dequantize to float32; zero: the model's output type */
  uint8_t is_prealloc; /* non-zero: buf/size are supplied by the caller */
  uint32_t index;      /* model output index */
  /* Result data. When is_prealloc is zero the runtime allocates it; it stays valid until
   * rknn_outputs_release, which frees it. */
  void* buf;
  uint32_t size; /* bytes in buf */
} rknn_output;

/* Optional extra arguments of rknn_init. Zero it before use. */
typedef struct _rknn_init_extend {
  rknn_context ctx;            /* with RKNN_FLAG_SHARE_WEIGHT_MEM: the context to share with */
  int32_t real_model_offset;   /* path form: where the model starts inside the file */
  uint32_t real_model_size;    /* path form: model bytes from real_model_offset */
  int32_t model_buffer_fd;     /* with RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: fd of the model memory */
  uint32_t model_buffer_flags; /* with RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: rknn_tensor_mem.flags */
  uint8_t reserved[112];
} rknn_init_extend;

/* Optional extra arguments of rknn_run and rknn_wait. */
typedef struct _rknn_run_extend {
  uint64_t frame_id;  /* out: number of the frame this run produced */
  int32_t non_block;  /* 0: block until done; 1: return at once */
  int32_t timeout_ms; /* for blocking mode */
  int32_t fence_fd;   /* with RKNN_FLAG_FENCE_IN_OUTSIDE: fence to wait for */
} rknn_run_extend;

/* Optional extra arguments of rknn_outputs_get. */
typedef struct _rknn_output_extend {
  uint64_t frame_id; /* out: frame the outputs belong to (see rknn_run_extend.frame_id) */
} rknn_output_extend;

/* ---------------------------------------------------------------------------------------------
 * Functions.
 * ------------------------------------------------------------------------------------------- */

/* Loads a model and creates a context for it.
 * `model` is either the model bytes (`size` > 0), which are copied so the caller may free them
 * on return (unless RKNN_FLAG_MODEL_BUFFER_ZERO_COPY), or, when `size` is 0, a NUL-terminated
 * path of the .rknn file. `flag` is an OR of RKNN_FLAG_*. `extend` may be NULL.
 * On success `*context` receives a new handle, released with rknn_destroy.
 * Thread safety: may be called from any thread; the new context is not shared until returned. */
RKNN_API_EXPORT int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag,
                              rknn_init_extend* extend);

/* Creates a second context for the model of `*context_in` that shares its weights (the usual
 * way to run one model from several threads). `*context_out` receives the new handle, released
 * with rknn_destroy; either context may be destroyed first.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_dup_context(rknn_context* context_in, rknn_context* context_out);

/* Destroys a context and everything the runtime allocated for it. Memory from rknn_create_mem*
 * should be destroyed with rknn_destroy_mem before; caller-allocated memory stays the caller's.
 * The handle is invalid afterwards.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. Do not destroy a context while another thread still uses it. */
RKNN_API_EXPORT int rknn_destroy(rknn_context context);

/* Reports information about the model or the context. `info` points to the caller-owned struct
 * named by `cmd` (see rknn_query_cmd) and `size` is its size in bytes; it must be at least the
 * size of that struct. Pointers stored into `info` (rknn_perf_detail.perf_data) stay owned by
 * the runtime.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size);

/* Sets the data of `n_inputs` inputs (general API). The data are converted and copied before
 * the function returns, so the caller's buffers may be reused at once.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]);

/* Sets how many NPU cores a multi-batch model spreads its batches over (multi-core NPUs only).
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_batch_core_num(rknn_context context, int core_num);

/* Selects the NPU cores the context runs on (multi-core NPUs only; an error on single-core
 * ones). Takes effect from the next rknn_run.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask);

/* Runs one inference with the inputs set or bound. Blocks until the result is ready.
 * `extend` may be NULL.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_run(rknn_context context, rknn_run_extend* extend);

/* Waits for a non-blocking run to finish. `extend` may be NULL.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_wait(rknn_context context, rknn_run_extend* extend);

/* Waits for the inference to finish and fills `outputs` (general API). Buffers the runtime
 * allocates (is_prealloc == 0) belong to the runtime and must be given back with
 * rknn_outputs_release. `extend` may be NULL.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_outputs_get(rknn_context context, uint32_t n_outputs,
                                     rknn_output outputs[], rknn_output_extend* extend);

/* Releases what rknn_outputs_get handed out: frees the runtime-allocated buffers
 * (is_prealloc == 0); caller-supplied buffers are left alone. Call it once per rknn_outputs_get.
 * (The parameter name's spelling follows the vendor header.)
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_outputs_release(rknn_context context, uint32_t n_ouputs,
                                         rknn_output outputs[]);

/* Wraps caller-allocated physically contiguous memory (`phys_addr`, CPU mapping `virt_addr`,
 * `size` bytes) in a rknn_tensor_mem for the zero-copy API. The memory stays the caller's; the
 * returned struct is released with rknn_destroy_mem. Returns NULL on failure.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr,
                                                           void* virt_addr, uint32_t size);

/* Wraps a caller-owned dma-buf in a rknn_tensor_mem. `virt_addr` is the CPU mapping of the start
 * of `fd` (not of the tensor), the tensor occupies `size` bytes from `offset`. The fd stays the
 * caller's; the returned struct is released with rknn_destroy_mem. Returns NULL on failure.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd,
                                                         void* virt_addr, uint32_t size,
                                                         int32_t offset);

/* Wraps a media-buffer block (RV11xx MPI `MB_BLK`) in a rknn_tensor_mem. Kept for ABI
 * compatibility; platforms without media buffers return NULL.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk,
                                                             int32_t offset);

/* Allocates `size` bytes of cacheable device-accessible memory. The runtime owns the memory;
 * release it (and the returned struct) with rknn_destroy_mem. Returns NULL on failure.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size);

/* Like rknn_create_mem with a 64-bit size and RKNN_FLAG_MEMORY_* `alloc_flags`. With
 * RKNN_MEM_FLAG_ALLOC_NO_CONTEXT in `alloc_flags`, `ctx` may be 0. Release with
 * rknn_destroy_mem. Returns NULL on failure.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size,
                                                  uint64_t alloc_flags);

/* Releases a rknn_tensor_mem from any rknn_create_mem* function: frees the struct itself, and
 * the memory too when the runtime allocated it. Unbind or stop using it first.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem);

/* Gives the context caller-provided memory for its weights (RKNN_FLAG_MEM_ALLOC_OUTSIDE), at
 * least rknn_mem_size.total_weight_size bytes. `mem` must outlive the context.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem);

/* Gives the context caller-provided memory for intermediate tensors
 * (RKNN_FLAG_MEM_ALLOC_OUTSIDE or RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE), at least
 * rknn_mem_size.total_internal_size bytes. Call before rknn_set_io_mem. `mem` must outlive the
 * context; it may be shared by contexts that never run at the same time.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem);

/* Binds `mem` as the buffer of the input or output described by `attr` (zero-copy API); `attr`
 * may request another type/layout than the model's, and is copied. `mem` stays bound until it
 * is replaced or the context is destroyed, and must stay valid that long.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr);

/* Deprecated (use rknn_set_input_shapes): selects the shape of one input of a dynamic-shape
 * model. Kept for ABI compatibility.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr);

/* Selects the current shapes of all `n_inputs` inputs of a dynamic-shape model. Each attr needs
 * index, name, n_dims, dims and fmt; the shapes must be one of the sets the model lists
 * (RKNN_QUERY_INPUT_DYNAMIC_RANGE). The array is read during the call only.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs,
                                          rknn_tensor_attr attr[]);

/* Makes cacheable memory from rknn_create_mem* coherent between the CPU and the device in the
 * direction `mode`.
 * Thread safety: calls on one context are serialised by the runtime; different contexts may run
 * in parallel. */
RKNN_API_EXPORT int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem,
                                  rknn_mem_sync_mode mode);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _RKNN_API_H */
