/*
 * A client written the way the vendor's RKNN demo programs are written (rknn_benchmark,
 * rknn_common_test, rknn_create_mem_demo, the matmul and custom-op demos), so that our headers
 * are proven against the code people actually have. It must compile with
 * -Wall -Wextra -Werror -pedantic as C and, through vendor_style_app.cc, as C++.
 *
 * Usage: vendor_style_app <model.rknn> [custom_op_type]
 *   Loads the model by path, queries it, runs it once with the general (copying) API, runs a
 *   second context made by rknn_dup_context once with the zero-copy API, runs a small matmul,
 *   and, when custom_op_type is given, registers a CPU implementation of that operator type.
 *   Exits 0 when every call returns its documented success, nonzero otherwise.
 *
 * For now the test build only compiles it (there is no runtime to link yet).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

/* ------------------------------------------------------------------------------------------- */
/* Printing, as in the vendor demos.                                                           */

static void dump_tensor_attr(const rknn_tensor_attr* attr) {
  char dims[128] = {0};
  size_t used = 0;
  uint32_t i;
  for (i = 0; i < attr->n_dims && i < RKNN_MAX_DIMS && used < sizeof(dims); ++i) {
    int written =
        snprintf(dims + used, sizeof(dims) - used, i == 0 ? "%u" : ", %u", (unsigned)attr->dims[i]);
    if (written < 0) break;
    used += (size_t)written;
  }
  printf(
      "  index=%u, name=%s, n_dims=%u, dims=[%s], n_elems=%u, size=%u, w_stride = %u, "
      "size_with_stride=%u, fmt=%s, type=%s, qnt_type=%s, zp=%d, scale=%f\n",
      (unsigned)attr->index, attr->name, (unsigned)attr->n_dims, dims, (unsigned)attr->n_elems,
      (unsigned)attr->size, (unsigned)attr->w_stride, (unsigned)attr->size_with_stride,
      get_format_string(attr->fmt), get_type_string(attr->type),
      get_qnt_type_string(attr->qnt_type), (int)attr->zp, (double)attr->scale);
}

/* ------------------------------------------------------------------------------------------- */
/* A CPU custom operator: out = alpha * in, with alpha read from the node's attributes.        */

static int custom_op_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                          uint32_t n_inputs, rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
  (void)inputs;
  (void)outputs;
  printf("custom op init: %u inputs, %u outputs\n", (unsigned)n_inputs, (unsigned)n_outputs);
  op_ctx->priv_data = malloc(sizeof(float));
  if (op_ctx->priv_data == NULL) return RKNN_ERR_MALLOC_FAIL;
  *(float*)op_ctx->priv_data = 1.0f;
  return RKNN_SUCC;
}

static int custom_op_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                             uint32_t n_inputs, rknn_custom_op_tensor* outputs,
                             uint32_t n_outputs) {
  rknn_custom_op_attr op_attr;
  float alpha = 1.0f;
  const float* in;
  float* out;
  uint32_t i;

  if (n_inputs < 1 || n_outputs < 1) return RKNN_ERR_PARAM_INVALID;
  if (inputs[0].attr.type != RKNN_TENSOR_FLOAT32 || outputs[0].attr.type != RKNN_TENSOR_FLOAT32)
    return RKNN_ERR_PARAM_INVALID;

  memset(&op_attr, 0, sizeof(op_attr));
  rknn_custom_op_get_op_attr(op_ctx, "alpha", &op_attr);
  if (op_attr.n_elems == 1 && op_attr.dtype == RKNN_TENSOR_FLOAT32 && op_attr.data != NULL) {
    alpha = *(const float*)op_attr.data;
  } else if (op_ctx->priv_data != NULL) {
    alpha = *(const float*)op_ctx->priv_data;
  }

  in = (const float*)((const char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
  out = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
  for (i = 0; i < inputs[0].attr.n_elems && i < outputs[0].attr.n_elems; ++i) {
    out[i] = alpha * in[i];
  }
  return RKNN_SUCC;
}

static int custom_op_destroy(rknn_custom_op_context* op_ctx) {
  free(op_ctx->priv_data);
  op_ctx->priv_data = NULL;
  return RKNN_SUCC;
}

static int register_custom_op(rknn_context ctx, const char* op_type) {
  rknn_custom_op op;
  int ret;

  memset(&op, 0, sizeof(op));
  op.version = 1;
  op.target = RKNN_TARGET_TYPE_CPU;
  snprintf(op.op_type, sizeof(op.op_type), "%s", op_type);
  op.init = custom_op_init;
  op.prepare = NULL;
  op.compute = custom_op_compute;
  op.compute_native = NULL;
  op.destroy = custom_op_destroy;

  ret = rknn_register_custom_ops(ctx, &op, 1);
  if (ret < 0) {
    printf("rknn_register_custom_ops fail! ret=%d\n", ret);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------- */
/* Model information.                                                                          */

typedef struct {
  rknn_input_output_num io_num;
  rknn_tensor_attr* input_attrs;
  rknn_tensor_attr* output_attrs;
} ModelInfo;

static void release_model_info(ModelInfo* info) {
  free(info->input_attrs);
  free(info->output_attrs);
  info->input_attrs = NULL;
  info->output_attrs = NULL;
}

/* Queries the number and attributes of inputs and outputs with the given commands. */
static int query_model_info(rknn_context ctx, rknn_query_cmd input_cmd, rknn_query_cmd output_cmd,
                            ModelInfo* info) {
  uint32_t i;
  int ret;

  memset(info, 0, sizeof(*info));
  ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &info->io_num, sizeof(info->io_num));
  if (ret != RKNN_SUCC) {
    printf("rknn_query fail! ret=%d\n", ret);
    return -1;
  }
  printf("model input num: %u, output num: %u\n", (unsigned)info->io_num.n_input,
         (unsigned)info->io_num.n_output);

  info->input_attrs = (rknn_tensor_attr*)calloc(info->io_num.n_input + 1, sizeof(rknn_tensor_attr));
  info->output_attrs =
      (rknn_tensor_attr*)calloc(info->io_num.n_output + 1, sizeof(rknn_tensor_attr));
  if (info->input_attrs == NULL || info->output_attrs == NULL) {
    printf("malloc fail!\n");
    return -1;
  }

  printf("input tensors:\n");
  for (i = 0; i < info->io_num.n_input; i++) {
    info->input_attrs[i].index = i;
    ret = rknn_query(ctx, input_cmd, &info->input_attrs[i], sizeof(rknn_tensor_attr));
    if (ret != RKNN_SUCC) {
      printf("rknn_query fail! ret=%d\n", ret);
      return -1;
    }
    dump_tensor_attr(&info->input_attrs[i]);
  }

  printf("output tensors:\n");
  for (i = 0; i < info->io_num.n_output; i++) {
    info->output_attrs[i].index = i;
    ret = rknn_query(ctx, output_cmd, &info->output_attrs[i], sizeof(rknn_tensor_attr));
    if (ret != RKNN_SUCC) {
      printf("rknn_query fail! ret=%d\n", ret);
      return -1;
    }
    dump_tensor_attr(&info->output_attrs[i]);
  }
  return 0;
}

static int query_versions_and_memory(rknn_context ctx) {
  rknn_sdk_version version;
  rknn_mem_size mem_size;
  rknn_custom_string custom_string;
  int ret;

  memset(&version, 0, sizeof(version));
  ret = rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &version, sizeof(rknn_sdk_version));
  if (ret < 0) {
    printf("rknn_query RKNN_QUERY_SDK_VERSION error ret=%d\n", ret);
    return -1;
  }
  printf("rknn_api/rknnrt version: %s, driver version: %s\n", version.api_version,
         version.drv_version);

  memset(&mem_size, 0, sizeof(mem_size));
  ret = rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &mem_size, sizeof(mem_size));
  if (ret != RKNN_SUCC) {
    printf("rknn_query RKNN_QUERY_MEM_SIZE fail! ret=%d\n", ret);
    return -1;
  }
  printf("total weight size: %u, total internal size: %u\n", (unsigned)mem_size.total_weight_size,
         (unsigned)mem_size.total_internal_size);
  printf("total dma used size: %llu\n", (unsigned long long)mem_size.total_dma_allocated_size);

  memset(&custom_string, 0, sizeof(custom_string));
  ret = rknn_query(ctx, RKNN_QUERY_CUSTOM_STRING, &custom_string, sizeof(custom_string));
  if (ret != RKNN_SUCC) {
    printf("rknn_query fail! ret=%d\n", ret);
    return -1;
  }
  printf("custom string: %s\n", custom_string.string);
  return 0;
}

/* ------------------------------------------------------------------------------------------- */
/* General (copying) API: rknn_inputs_set / rknn_run / rknn_outputs_get.                        */

static int run_general_api(rknn_context ctx, const ModelInfo* info) {
  rknn_input* inputs = NULL;
  rknn_output* outputs = NULL;
  rknn_perf_run perf_run;
  rknn_perf_detail perf_detail;
  uint32_t i;
  int result = -1;
  int ret;

  inputs = (rknn_input*)calloc(info->io_num.n_input + 1, sizeof(rknn_input));
  outputs = (rknn_output*)calloc(info->io_num.n_output + 1, sizeof(rknn_output));
  if (inputs == NULL || outputs == NULL) {
    printf("malloc fail!\n");
    goto out;
  }

  /* Image inputs take uint8 NHWC, the rest float32 in the model's own layout. */
  for (i = 0; i < info->io_num.n_input; i++) {
    const rknn_tensor_attr* attr = &info->input_attrs[i];
    int is_image = attr->n_dims == 4;
    inputs[i].index = i;
    inputs[i].pass_through = 0;
    inputs[i].type = is_image ? RKNN_TENSOR_UINT8 : RKNN_TENSOR_FLOAT32;
    inputs[i].fmt = is_image ? RKNN_TENSOR_NHWC : attr->fmt;
    inputs[i].size = attr->n_elems * (is_image ? 1u : (uint32_t)sizeof(float));
    inputs[i].buf = calloc(inputs[i].size + 1, 1);
    if (inputs[i].buf == NULL) {
      printf("malloc fail!\n");
      goto out;
    }
  }

  ret = rknn_inputs_set(ctx, info->io_num.n_input, inputs);
  if (ret < 0) {
    printf("rknn_input_set fail! ret=%d\n", ret);
    goto out;
  }

  ret = rknn_set_core_mask(ctx, RKNN_NPU_CORE_AUTO);
  if (ret < 0) {
    printf("rknn_set_core_mask fail! ret=%d\n", ret);
    goto out;
  }

  ret = rknn_run(ctx, NULL);
  if (ret < 0) {
    printf("rknn_run fail! ret=%d\n", ret);
    goto out;
  }

  memset(&perf_run, 0, sizeof(perf_run));
  ret = rknn_query(ctx, RKNN_QUERY_PERF_RUN, &perf_run, sizeof(perf_run));
  if (ret != RKNN_SUCC) {
    printf("rknn_query RKNN_QUERY_PERF_RUN fail! ret=%d\n", ret);
    goto out;
  }
  printf("run duration: %lld us\n", (long long)perf_run.run_duration);

  memset(&perf_detail, 0, sizeof(perf_detail));
  ret = rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &perf_detail, sizeof(perf_detail));
  if (ret != RKNN_SUCC) {
    printf("rknn_query fail! ret=%d\n", ret);
    goto out;
  }
  printf("perf detail: %llu bytes\n%s\n", (unsigned long long)perf_detail.data_len,
         perf_detail.perf_data != NULL ? perf_detail.perf_data : "");

  for (i = 0; i < info->io_num.n_output; i++) {
    outputs[i].index = i;
    outputs[i].want_float = 1;
    outputs[i].is_prealloc = 0;
  }
  ret = rknn_outputs_get(ctx, info->io_num.n_output, outputs, NULL);
  if (ret < 0) {
    printf("rknn_outputs_get fail! ret=%d\n", ret);
    goto out;
  }
  for (i = 0; i < info->io_num.n_output; i++) {
    const float* values = (const float*)outputs[i].buf;
    printf("output %u: %u bytes, first value %f\n", (unsigned)i, (unsigned)outputs[i].size,
           outputs[i].size >= sizeof(float) && values != NULL ? (double)values[0] : 0.0);
  }
  ret = rknn_outputs_release(ctx, info->io_num.n_output, outputs);
  if (ret < 0) {
    printf("rknn_outputs_release fail! ret=%d\n", ret);
    goto out;
  }
  result = 0;

out:
  if (inputs != NULL) {
    for (i = 0; i < info->io_num.n_input; i++) free(inputs[i].buf);
  }
  free(inputs);
  free(outputs);
  return result;
}

/* ------------------------------------------------------------------------------------------- */
/* Zero-copy API on a duplicated context: native attrs, rknn_create_mem, rknn_set_io_mem.       */

static int run_zero_copy_api(rknn_context ctx) {
  rknn_context zero_copy_ctx = 0;
  ModelInfo native;
  rknn_tensor_mem** input_mems = NULL;
  rknn_tensor_mem** output_mems = NULL;
  uint32_t i;
  int result = -1;
  int ret;

  memset(&native, 0, sizeof(native));
  ret = rknn_dup_context(&ctx, &zero_copy_ctx);
  if (ret < 0) {
    printf("rknn_dup_context fail! ret=%d\n", ret);
    return -1;
  }

  if (query_model_info(zero_copy_ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, RKNN_QUERY_NATIVE_OUTPUT_ATTR,
                       &native) != 0) {
    goto out;
  }

  input_mems = (rknn_tensor_mem**)calloc(native.io_num.n_input + 1, sizeof(rknn_tensor_mem*));
  output_mems = (rknn_tensor_mem**)calloc(native.io_num.n_output + 1, sizeof(rknn_tensor_mem*));
  if (input_mems == NULL || output_mems == NULL) {
    printf("malloc fail!\n");
    goto out;
  }

  for (i = 0; i < native.io_num.n_input; i++) {
    input_mems[i] = rknn_create_mem(zero_copy_ctx, native.input_attrs[i].size_with_stride);
    if (input_mems[i] == NULL) {
      printf("rknn_create_mem fail!\n");
      goto out;
    }
    memset(input_mems[i]->virt_addr, 0, input_mems[i]->size);
    ret = rknn_set_io_mem(zero_copy_ctx, input_mems[i], &native.input_attrs[i]);
    if (ret < 0) {
      printf("rknn_set_io_mem fail! ret=%d\n", ret);
      goto out;
    }
    ret = rknn_mem_sync(zero_copy_ctx, input_mems[i], RKNN_MEMORY_SYNC_TO_DEVICE);
    if (ret < 0) {
      printf("rknn_mem_sync fail! ret=%d\n", ret);
      goto out;
    }
  }

  for (i = 0; i < native.io_num.n_output; i++) {
    output_mems[i] = rknn_create_mem2(zero_copy_ctx, native.output_attrs[i].size_with_stride,
                                      RKNN_FLAG_MEMORY_CACHEABLE);
    if (output_mems[i] == NULL) {
      printf("rknn_create_mem2 fail!\n");
      goto out;
    }
    ret = rknn_set_io_mem(zero_copy_ctx, output_mems[i], &native.output_attrs[i]);
    if (ret < 0) {
      printf("rknn_set_io_mem fail! ret=%d\n", ret);
      goto out;
    }
  }

  ret = rknn_run(zero_copy_ctx, NULL);
  if (ret < 0) {
    printf("rknn_run fail! ret=%d\n", ret);
    goto out;
  }

  for (i = 0; i < native.io_num.n_output; i++) {
    ret = rknn_mem_sync(zero_copy_ctx, output_mems[i], RKNN_MEMORY_SYNC_FROM_DEVICE);
    if (ret < 0) {
      printf("rknn_mem_sync fail! ret=%d\n", ret);
      goto out;
    }
    printf("zero-copy output %u: fd=%d, size=%u, first byte %d\n", (unsigned)i,
           (int)output_mems[i]->fd, (unsigned)output_mems[i]->size,
           (int)((const int8_t*)output_mems[i]->virt_addr)[0]);
  }
  result = 0;

out:
  if (input_mems != NULL) {
    for (i = 0; i < native.io_num.n_input; i++) {
      if (input_mems[i] != NULL && rknn_destroy_mem(zero_copy_ctx, input_mems[i]) < 0) result = -1;
    }
  }
  if (output_mems != NULL) {
    for (i = 0; i < native.io_num.n_output; i++) {
      if (output_mems[i] != NULL && rknn_destroy_mem(zero_copy_ctx, output_mems[i]) < 0) {
        result = -1;
      }
    }
  }
  free(input_mems);
  free(output_mems);
  release_model_info(&native);
  if (rknn_destroy(zero_copy_ctx) < 0) {
    printf("rknn_destroy fail!\n");
    result = -1;
  }
  return result;
}

/* ------------------------------------------------------------------------------------------- */
/* Matmul API: C(M x N) = A(M x K) * B(K x N), int8 in, int32 out, all ones.                    */

static int run_matmul(void) {
  enum { kM = 4, kK = 64, kN = 32 };
  rknn_matmul_ctx matmul_ctx = 0;
  rknn_matmul_info info;
  rknn_matmul_io_attr io_attr;
  rknn_tensor_mem* a = NULL;
  rknn_tensor_mem* b = NULL;
  rknn_tensor_mem* c = NULL;
  int result = -1;
  int ret;

  memset(&info, 0, sizeof(info));
  info.M = kM;
  info.K = kK;
  info.N = kN;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  info.B_layout = RKNN_MM_LAYOUT_NORM;
  info.AC_layout = RKNN_MM_LAYOUT_NORM;
  info.B_quant_type = RKNN_QUANT_TYPE_PER_LAYER_SYM;

  memset(&io_attr, 0, sizeof(io_attr));
  ret = rknn_matmul_create(&matmul_ctx, &info, &io_attr);
  if (ret < 0) {
    printf("rknn_matmul_create fail! ret=%d\n", ret);
    return -1;
  }
  printf("matmul type: %s, A size %u, B size %u, C size %u\n", get_matmul_type_string(info.type),
         (unsigned)io_attr.A.size, (unsigned)io_attr.B.size, (unsigned)io_attr.C.size);

  a = rknn_create_mem(matmul_ctx, io_attr.A.size);
  b = rknn_create_mem(matmul_ctx, io_attr.B.size);
  c = rknn_create_mem(matmul_ctx, io_attr.C.size);
  if (a == NULL || b == NULL || c == NULL) {
    printf("rknn_create_mem fail!\n");
    goto out;
  }
  memset(a->virt_addr, 1, io_attr.A.size);
  memset(b->virt_addr, 1, io_attr.B.size);

  ret = rknn_matmul_set_io_mem(matmul_ctx, a, &io_attr.A);
  if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(matmul_ctx, b, &io_attr.B);
  if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(matmul_ctx, c, &io_attr.C);
  if (ret < 0) {
    printf("rknn_matmul_set_io_mem fail! ret=%d\n", ret);
    goto out;
  }

  ret = rknn_matmul_run(matmul_ctx);
  if (ret < 0) {
    printf("rknn_matmul_run fail! ret=%d\n", ret);
    goto out;
  }
  if (((const int32_t*)c->virt_addr)[0] != kK) {
    printf("matmul result %d, expected %d\n", (int)((const int32_t*)c->virt_addr)[0], (int)kK);
    goto out;
  }
  result = 0;

out:
  if (a != NULL && rknn_destroy_mem(matmul_ctx, a) < 0) result = -1;
  if (b != NULL && rknn_destroy_mem(matmul_ctx, b) < 0) result = -1;
  if (c != NULL && rknn_destroy_mem(matmul_ctx, c) < 0) result = -1;
  if (rknn_matmul_destroy(matmul_ctx) < 0) {
    printf("rknn_matmul_destroy fail!\n");
    result = -1;
  }
  return result;
}

/* ------------------------------------------------------------------------------------------- */

int main(int argc, char** argv) {
  rknn_context ctx = 0;
  ModelInfo info;
  const char* model_path;
  const char* custom_op_type;
  int ret;

  if (argc < 2) {
    printf("Usage: %s <rknn model> [custom op type]\n", argv[0]);
    return -1;
  }
  model_path = argv[1];
  custom_op_type = argc > 2 ? argv[2] : NULL;
  memset(&info, 0, sizeof(info));

  /* size 0: the model argument is a file path. */
  ret = rknn_init(&ctx, (void*)model_path, 0, 0, NULL);
  if (ret < 0) {
    printf("rknn_init fail! ret=%d\n", ret);
    return -1;
  }

  if (custom_op_type != NULL) ret = register_custom_op(ctx, custom_op_type);
  if (ret == 0) ret = query_versions_and_memory(ctx);
  if (ret == 0) ret = query_model_info(ctx, RKNN_QUERY_INPUT_ATTR, RKNN_QUERY_OUTPUT_ATTR, &info);
  if (ret == 0) ret = run_general_api(ctx, &info);
  if (ret == 0) ret = run_zero_copy_api(ctx);
  if (ret == 0) ret = run_matmul();

  release_model_info(&info);
  if (rknn_destroy(ctx) < 0) {
    printf("rknn_destroy fail!\n");
    ret = -1;
  }
  printf("%s\n", ret == 0 ? "vendor_style_app: all calls succeeded" : "vendor_style_app: FAILED");
  return ret == 0 ? 0 : 1;
}
