/*
 * rknn_internal_mem_reuse_demo: two models run one after the other share one internal (feature)
 * buffer, the way the vendor's internal-memory-reuse demo does it.
 *
 *   rknn_internal_mem_reuse_demo model_a.rknn model_b.rknn [loops]
 *
 * Both contexts are created with RKNN_FLAG_MEM_ALLOC_OUTSIDE: the runtime allocates neither
 * weights nor internal memory. The demo queries RKNN_QUERY_MEM_SIZE for each, gives each its
 * own weight memory, allocates ONE internal buffer of the larger internal size, and hands each
 * context a view of it (rknn_create_mem_from_fd on the same fd). The models then run in series,
 * with zero-copy inputs (synthetic images) and float outputs. Running them at the same time from
 * two threads would be wrong: they would overwrite each other's intermediate results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"
#include "sample_utils.h"
#include "zero_copy_io.h"

#define MODELS 2

int main(int argc, char** argv) {
  rknn_context ctx[MODELS] = {0, 0};
  rknn_mem_size sizes[MODELS];
  rknn_tensor_mem* weights[MODELS] = {NULL, NULL};
  rknn_tensor_mem* views[MODELS] = {NULL, NULL};
  rknn_tensor_mem* internal = NULL;
  sample_zero_copy_io io[MODELS];
  uint32_t largest = 0;
  int loops = argc > 3 ? atoi(argv[3]) : 3, exit_code = 1, ret, m, i;

  memset(io, 0, sizeof(io));
  if (argc < 3) {
    fprintf(stderr, "usage: %s model_a.rknn model_b.rknn [loops]\n", argv[0]);
    return 2;
  }
  if (loops < 1) loops = 1;
  for (m = 0; m < MODELS; ++m) {
    ret = rknn_init(&ctx[m], (void*)argv[1 + m], 0, RKNN_FLAG_MEM_ALLOC_OUTSIDE, NULL);
    if (ret != RKNN_SUCC) {
      ctx[m] = 0;
      fprintf(stderr, "rknn_init fail! ret=%d (%s), model: %s\n", ret, sample_error_name(ret),
              argv[1 + m]);
      goto out;
    }
    memset(&sizes[m], 0, sizeof(sizes[m]));
    ret = rknn_query(ctx[m], RKNN_QUERY_MEM_SIZE, &sizes[m], sizeof(sizes[m]));
    if (ret != RKNN_SUCC) {
      fprintf(stderr, "rknn_query(MEM_SIZE) fail! ret=%d (%s)\n", ret, sample_error_name(ret));
      goto out;
    }
    printf("model %d (%s): total weight size: %u, total internal size: %u\n", m, argv[1 + m],
           sizes[m].total_weight_size, sizes[m].total_internal_size);
    if (sizes[m].total_internal_size > largest) largest = sizes[m].total_internal_size;
    weights[m] = rknn_create_mem(ctx[m], sizes[m].total_weight_size);
    if (!weights[m] || rknn_set_weight_mem(ctx[m], weights[m]) != RKNN_SUCC) {
      fprintf(stderr, "weight memory for model %d fail!\n", m);
      goto out;
    }
  }

  /* One buffer for both: the largest internal size; a view of it per context. */
  internal = rknn_create_mem(ctx[0], largest > 0 ? largest : 1);
  if (!internal) {
    fprintf(stderr, "rknn_create_mem(%u) fail!\n", (unsigned)largest);
    goto out;
  }
  printf("shared internal buffer: %u bytes (fd %d)\n", (unsigned)internal->size, (int)internal->fd);
  for (m = 0; m < MODELS; ++m) {
    views[m] = rknn_create_mem_from_fd(
        ctx[m], internal->fd, internal->virt_addr,
        sizes[m].total_internal_size > 0 ? sizes[m].total_internal_size : 1, 0);
    if (!views[m]) {
      fprintf(stderr, "rknn_create_mem_from_fd fail!\n");
      goto out;
    }
    ret = rknn_set_internal_mem(ctx[m], views[m]);
    if (ret != RKNN_SUCC) {
      fprintf(stderr, "rknn_set_internal_mem fail! ret=%d (%s)\n", ret, sample_error_name(ret));
      goto out;
    }
    if (sample_zero_copy_bind(ctx[m], NULL, 0, &io[m]) != RKNN_SUCC) goto out;
  }

  /* In series: each run may overwrite the other model's intermediate tensors, never its own. */
  for (i = 0; i < loops; ++i) {
    for (m = 0; m < MODELS; ++m) {
      const int64_t start = sample_now_us();
      ret = rknn_run(ctx[m], NULL);
      if (ret != RKNN_SUCC) {
        fprintf(stderr, "rknn_run(model %d) fail! ret=%d (%s)\n", m, ret, sample_error_name(ret));
        goto out;
      }
      printf("loop %d model %d: %.2f ms\n", i, m, (double)(sample_now_us() - start) / 1000.0);
    }
  }
  for (m = 0; m < MODELS; ++m) {
    printf("model %d results:\n", m);
    sample_zero_copy_print_top5(&io[m]);
  }
  exit_code = 0;

out:
  for (m = 0; m < MODELS; ++m) {
    if (ctx[m]) sample_zero_copy_release(ctx[m], &io[m]);
    if (views[m]) rknn_destroy_mem(ctx[m], views[m]);
    if (weights[m]) rknn_destroy_mem(ctx[m], weights[m]);
  }
  if (internal) rknn_destroy_mem(ctx[0], internal);
  for (m = 0; m < MODELS; ++m) {
    if (ctx[m]) rknn_destroy(ctx[m]);
  }
  return exit_code;
}
