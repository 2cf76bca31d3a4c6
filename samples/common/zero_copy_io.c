#include "zero_copy_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_utils.h"

static int report(const char* call, int ret) {
  if (ret != RKNN_SUCC)
    fprintf(stderr, "%s fail! ret=%d (%s)\n", call, ret, sample_error_name(ret));
  return ret;
}

/* Binds input `index`: native attr, the loaded data's type and layout, strided rows. */
static int bind_input(rknn_context ctx, uint32_t index, const char* path, sample_zero_copy_io* io) {
  rknn_tensor_attr attr, plain;
  sample_input data;
  char error[512] = {0};
  int ret;
  memset(&attr, 0, sizeof(attr));
  memset(&plain, 0, sizeof(plain));
  memset(&data, 0, sizeof(data));
  attr.index = plain.index = index;
  ret = rknn_query(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &attr, sizeof(attr));
  if (report("rknn_query(NATIVE_INPUT_ATTR)", ret) != RKNN_SUCC) return ret;
  sample_print_tensor_attr(stdout, &attr);
  ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &plain, sizeof(plain));
  if (report("rknn_query(INPUT_ATTR)", ret) != RKNN_SUCC) return ret;
  if ((path ? sample_load_input(path, &plain, &data, error, sizeof(error))
            : sample_make_synthetic_input(&plain, index, &data, error, sizeof(error))) != 0) {
    fprintf(stderr, "input %u: %s\n", (unsigned)index, error);
    return RKNN_ERR_INPUT_INVALID;
  }
  printf("input %u: %s\n", (unsigned)index, data.description);

  attr.type = data.type;
  attr.fmt = data.fmt;
  attr.pass_through = 0;
  {
    const uint32_t element = (uint32_t)sample_type_size(data.type);
    const int image = attr.n_dims == 4 && data.fmt == RKNN_TENSOR_NHWC;
    const uint32_t height = image ? attr.dims[1] : 1;
    const uint32_t width = image ? attr.dims[2] : 1;
    const uint32_t channels = image ? attr.dims[3] : 1;
    const uint32_t stride = image && attr.w_stride > width ? attr.w_stride : width;
    const uint32_t batches = image ? attr.dims[0] : 1;
    const uint32_t row_bytes = width * channels * element;
    const uint32_t stored_row_bytes = stride * channels * element;
    const uint32_t size = image ? batches * height * stored_row_bytes : data.size;
    rknn_tensor_mem* mem = rknn_create_mem(ctx, size);
    if (!mem) {
      sample_free_input(&data);
      fprintf(stderr, "rknn_create_mem(%u) fail!\n", (unsigned)size);
      return RKNN_ERR_MALLOC_FAIL;
    }
    io->input_mems[index] = mem;
    if (!image || stride == width) {
      memcpy(mem->virt_addr, data.data, image ? batches * height * row_bytes : data.size);
    } else {
      /* The runtime wants padded rows: copy one row at a time. */
      uint32_t row;
      for (row = 0; row < batches * height; ++row) {
        memcpy((uint8_t*)mem->virt_addr + (size_t)row * stored_row_bytes,
               (const uint8_t*)data.data + (size_t)row * row_bytes, row_bytes);
      }
    }
    sample_free_input(&data);
    return report("rknn_set_io_mem(input)", rknn_set_io_mem(ctx, mem, &attr));
  }
}

int sample_zero_copy_bind(rknn_context ctx, const char* const* input_paths, int n_paths,
                          sample_zero_copy_io* io) {
  rknn_input_output_num io_num;
  uint32_t i;
  int ret;
  memset(io, 0, sizeof(*io));
  memset(&io_num, 0, sizeof(io_num));
  ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
  if (report("rknn_query(IN_OUT_NUM)", ret) != RKNN_SUCC) return ret;
  io->input_mems = (rknn_tensor_mem**)calloc(io_num.n_input + 1, sizeof(rknn_tensor_mem*));
  io->output_mems = (rknn_tensor_mem**)calloc(io_num.n_output + 1, sizeof(rknn_tensor_mem*));
  io->output_attrs = (rknn_tensor_attr*)calloc(io_num.n_output + 1, sizeof(rknn_tensor_attr));
  if (!io->input_mems || !io->output_mems || !io->output_attrs) return RKNN_ERR_MALLOC_FAIL;
  io->n_input = io_num.n_input;
  io->n_output = io_num.n_output;
  if (n_paths > (int)io_num.n_input) {
    fprintf(stderr, "%d input files given, but the model has %u inputs\n", n_paths,
            (unsigned)io_num.n_input);
    return RKNN_ERR_PARAM_INVALID;
  }
  printf("input tensors (native):\n");
  for (i = 0; i < io_num.n_input; ++i) {
    ret = bind_input(ctx, i, (int)i < n_paths ? input_paths[i] : NULL, io);
    if (ret != RKNN_SUCC) return ret;
  }
  printf("output tensors (bound as FLOAT32):\n");
  for (i = 0; i < io_num.n_output; ++i) {
    rknn_tensor_attr* attr = &io->output_attrs[i];
    attr->index = i;
    ret = rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, attr, sizeof(*attr));
    if (report("rknn_query(OUTPUT_ATTR)", ret) != RKNN_SUCC) return ret;
    /* Dequantised float32 in the output's plain layout: 4 bytes per element. */
    attr->type = RKNN_TENSOR_FLOAT32;
    attr->size = attr->n_elems * (uint32_t)sizeof(float);
    sample_print_tensor_attr(stdout, attr);
    io->output_mems[i] = rknn_create_mem(ctx, attr->size);
    if (!io->output_mems[i]) {
      fprintf(stderr, "rknn_create_mem(%u) fail!\n", (unsigned)attr->size);
      return RKNN_ERR_MALLOC_FAIL;
    }
    ret = rknn_set_io_mem(ctx, io->output_mems[i], attr);
    if (report("rknn_set_io_mem(output)", ret) != RKNN_SUCC) return ret;
  }
  return RKNN_SUCC;
}

void sample_zero_copy_print_top5(const sample_zero_copy_io* io) {
  uint32_t i, k;
  for (i = 0; i < io->n_output; ++i) {
    int32_t classes[5];
    float values[5];
    const uint32_t count = io->output_attrs[i].n_elems;
    const uint32_t top = count < 5 ? count : 5;
    sample_top_n((const float*)io->output_mems[i]->virt_addr, count, top, classes, values);
    if (io->n_output > 1) printf("output %u (%s):\n", (unsigned)i, io->output_attrs[i].name);
    printf(" --- Top5 ---\n");
    for (k = 0; k < top; ++k) printf("%3d: %8.6f\n", classes[k], values[k]);
  }
}

void sample_zero_copy_release(rknn_context ctx, sample_zero_copy_io* io) {
  uint32_t i;
  for (i = 0; io->input_mems && i < io->n_input; ++i) {
    if (io->input_mems[i]) rknn_destroy_mem(ctx, io->input_mems[i]);
  }
  for (i = 0; io->output_mems && i < io->n_output; ++i) {
    if (io->output_mems[i]) rknn_destroy_mem(ctx, io->output_mems[i]);
  }
  free(io->input_mems);
  free(io->output_mems);
  free(io->output_attrs);
  memset(io, 0, sizeof(*io));
}
