/*
 * rknn_zero_copy_demo: the zero-copy API from start to end, the way the vendor's zero-copy demos
 * use it.
 *
 *   rknn_zero_copy_demo model.rknn [input ...] [--loops N]
 *
 * Queries the native input attributes, creates input memory with rknn_create_mem, asks for UINT8
 * NHWC images (the runtime normalises and quantises) and copies them in row by row with the
 * stride the runtime reports; creates FLOAT32 output memory (the runtime dequantises into it);
 * binds everything once with rknn_set_io_mem and then only calls rknn_run, N times, timing it.
 * Prints the top 5 of every output. Inputs are .npy or image files as in rknn_api_demo; inputs
 * without a file get a synthetic image.
 *
 * Uses only rknn_api.h and librknnrt.so:
 *   cc rknn_zero_copy_demo.c ../common/zero_copy_io.c ../common/sample_utils.c -I../common \
 *      -I<prefix>/include -L<prefix>/lib -lrknnrt -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"
#include "sample_utils.h"
#include "zero_copy_io.h"

int main(int argc, char** argv) {
  rknn_context ctx = 0;
  sample_zero_copy_io io;
  const char* inputs[16];
  int n_inputs = 0, loops = 10, exit_code = 1, ret, i;

  memset(&io, 0, sizeof(io));
  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    fprintf(argc < 2 ? stderr : stdout, "usage: %s model.rknn [input ...] [--loops N]\n", argv[0]);
    return argc < 2 ? 2 : 0;
  }
  for (i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc) {
      loops = atoi(argv[++i]);
    } else if (n_inputs < 16) {
      inputs[n_inputs++] = argv[i];
    }
  }
  if (loops < 1) loops = 1;

  ret = rknn_init(&ctx, (void*)argv[1], 0, 0, NULL);
  if (ret != RKNN_SUCC) {
    fprintf(stderr, "rknn_init fail! ret=%d (%s), model: %s\n", ret, sample_error_name(ret),
            argv[1]);
    return 1;
  }
  if (sample_zero_copy_bind(ctx, inputs, n_inputs, &io) != RKNN_SUCC) goto out;

  {
    int64_t total = 0;
    for (i = 0; i < loops; ++i) {
      const int64_t start = sample_now_us();
      ret = rknn_run(ctx, NULL);
      if (ret != RKNN_SUCC) {
        fprintf(stderr, "rknn_run fail! ret=%d (%s)\n", ret, sample_error_name(ret));
        goto out;
      }
      total += sample_now_us() - start;
    }
    printf("%d runs, Avg Time %.2f ms, Avg FPS = %.2f\n", loops, (double)total / loops / 1000.0,
           total > 0 ? 1e6 * loops / (double)total : 0.0);
  }
  sample_zero_copy_print_top5(&io);
  exit_code = 0;

out:
  sample_zero_copy_release(ctx, &io);
  ret = rknn_destroy(ctx);
  if (ret != RKNN_SUCC) {
    fprintf(stderr, "rknn_destroy fail! ret=%d (%s)\n", ret, sample_error_name(ret));
    exit_code = 1;
  }
  return exit_code;
}
