/*
 * rknn_api_demo: the general (copying) API from start to end, the way the vendor demos use it.
 *
 *   rknn_api_demo model.rknn [input ...]
 *
 * One input file per model input, in order: .npy (any dtype; converted to what the model takes)
 * or .jpg/.png/.bmp (decoded with stb_image, resized to the model's input size). Inputs without a
 * file get a deterministic synthetic image. Prints the model's attributes, the top 5 of every
 * output and the per-layer performance table. Exits non-zero, printing the API's return code,
 * when a call fails.
 *
 * Uses only rknn_api.h and librknnrt.so:
 *   cc rknn_api_demo.c ../common/sample_utils.c -I../common -I<prefix>/include \
 *      -L<prefix>/lib -lrknnrt -lm
 * (add -DSAMPLE_HAVE_STB -lstb for image files; see ../Makefile).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"
#include "sample_utils.h"

#define CHECK_RET(call, ret)                                                            \
  do {                                                                                  \
    if ((ret) != RKNN_SUCC) {                                                           \
      fprintf(stderr, "%s fail! ret=%d (%s)\n", (call), (ret), sample_error_name(ret)); \
      goto out;                                                                         \
    }                                                                                   \
  } while (0)

int main(int argc, char** argv) {
  rknn_context ctx = 0;
  rknn_sdk_version version;
  rknn_input_output_num io_num;
  rknn_custom_string custom_string;
  rknn_tensor_attr* input_attrs = NULL;
  rknn_tensor_attr* output_attrs = NULL;
  sample_input* input_data = NULL;
  rknn_input* inputs = NULL;
  rknn_output* outputs = NULL;
  int outputs_held = 0;
  int exit_code = 1;
  int ret;
  uint32_t i;

  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: %s model.rknn [input.npy|input.jpg|input.png|input.bmp ...]\n"
            "  one input file per model input; inputs without a file get a synthetic image\n",
            argv[0]);
    return argc < 2 ? 2 : 0;
  }
  const char* model_path = argv[1];
  memset(&io_num, 0, sizeof(io_num));

  /* Init from a path (size 0), with per-layer timing for the performance table. */
  ret = rknn_init(&ctx, (void*)model_path, 0, RKNN_FLAG_COLLECT_PERF_MASK, NULL);
  if (ret != RKNN_SUCC) {
    ctx = 0;
    fprintf(stderr, "rknn_init fail! ret=%d (%s), model: %s\n", ret, sample_error_name(ret),
            model_path);
    return 1;
  }

  memset(&version, 0, sizeof(version));
  ret = rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &version, sizeof(version));
  CHECK_RET("rknn_query(SDK_VERSION)", ret);
  printf("sdk version: %s driver version: %s\n", version.api_version, version.drv_version);

  ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
  CHECK_RET("rknn_query(IN_OUT_NUM)", ret);
  printf("model input num: %d, output num: %d\n", (int)io_num.n_input, (int)io_num.n_output);

  input_attrs = (rknn_tensor_attr*)calloc(io_num.n_input, sizeof(rknn_tensor_attr));
  output_attrs = (rknn_tensor_attr*)calloc(io_num.n_output, sizeof(rknn_tensor_attr));
  input_data = (sample_input*)calloc(io_num.n_input, sizeof(sample_input));
  inputs = (rknn_input*)calloc(io_num.n_input, sizeof(rknn_input));
  outputs = (rknn_output*)calloc(io_num.n_output, sizeof(rknn_output));
  if ((io_num.n_input && (!input_attrs || !input_data || !inputs)) ||
      (io_num.n_output && (!output_attrs || !outputs))) {
    fprintf(stderr, "out of memory\n");
    goto out;
  }

  printf("input tensors:\n");
  for (i = 0; i < io_num.n_input; ++i) {
    input_attrs[i].index = i;
    ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &input_attrs[i], sizeof(rknn_tensor_attr));
    CHECK_RET("rknn_query(INPUT_ATTR)", ret);
    sample_print_tensor_attr(stdout, &input_attrs[i]);
  }
  printf("output tensors:\n");
  for (i = 0; i < io_num.n_output; ++i) {
    output_attrs[i].index = i;
    ret = rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &output_attrs[i], sizeof(rknn_tensor_attr));
    CHECK_RET("rknn_query(OUTPUT_ATTR)", ret);
    sample_print_tensor_attr(stdout, &output_attrs[i]);
  }

  memset(&custom_string, 0, sizeof(custom_string));
  ret = rknn_query(ctx, RKNN_QUERY_CUSTOM_STRING, &custom_string, sizeof(custom_string));
  CHECK_RET("rknn_query(CUSTOM_STRING)", ret);
  printf("custom string: %s\n", custom_string.string);

  if ((uint32_t)(argc - 2) > io_num.n_input) {
    fprintf(stderr, "%d input files given, but the model has %u inputs\n", argc - 2,
            (unsigned)io_num.n_input);
    goto out;
  }
  for (i = 0; i < io_num.n_input; ++i) {
    char error[512] = {0};
    const int loaded =
        (int)i + 2 < argc
            ? sample_load_input(argv[i + 2], &input_attrs[i], &input_data[i], error, sizeof(error))
            : sample_make_synthetic_input(&input_attrs[i], i, &input_data[i], error, sizeof(error));
    if (loaded != 0) {
      fprintf(stderr, "input %u: %s\n", (unsigned)i, error);
      goto out;
    }
    printf("input %u: %s\n", (unsigned)i, input_data[i].description);
    inputs[i].index = i;
    inputs[i].buf = input_data[i].data;
    inputs[i].size = input_data[i].size;
    inputs[i].pass_through = 0;
    inputs[i].type = input_data[i].type;
    inputs[i].fmt = input_data[i].fmt;
  }
  ret = rknn_inputs_set(ctx, io_num.n_input, inputs);
  CHECK_RET("rknn_inputs_set", ret);

  {
    const int64_t start = sample_now_us();
    ret = rknn_run(ctx, NULL);
    CHECK_RET("rknn_run", ret);
    printf("rknn_run: %.2f ms\n", (double)(sample_now_us() - start) / 1000.0);
  }

  for (i = 0; i < io_num.n_output; ++i) {
    outputs[i].index = i;
    outputs[i].want_float = 1;
    outputs[i].is_prealloc = 0;
  }
  ret = rknn_outputs_get(ctx, io_num.n_output, outputs, NULL);
  CHECK_RET("rknn_outputs_get", ret);
  outputs_held = 1;

  for (i = 0; i < io_num.n_output; ++i) {
    int32_t classes[5];
    float values[5];
    const uint32_t count = outputs[i].size / sizeof(float);
    const uint32_t top = count < 5 ? count : 5;
    uint32_t k;
    sample_top_n((const float*)outputs[i].buf, count, top, classes, values);
    if (io_num.n_output > 1) printf("output %u (%s):\n", (unsigned)i, output_attrs[i].name);
    printf(" --- Top5 ---\n");
    for (k = 0; k < top; ++k) printf("%3d: %8.6f\n", classes[k], values[k]);
  }

  {
    rknn_perf_detail perf_detail;
    rknn_perf_run perf_run;
    memset(&perf_detail, 0, sizeof(perf_detail));
    ret = rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &perf_detail, sizeof(perf_detail));
    CHECK_RET("rknn_query(PERF_DETAIL)", ret);
    if (perf_detail.perf_data != NULL && perf_detail.data_len > 0) {
      printf("rknn run perf detail is:\n%s", perf_detail.perf_data);
      if (perf_detail.perf_data[perf_detail.data_len - 1] != '\n') printf("\n");
    }
    memset(&perf_run, 0, sizeof(perf_run));
    ret = rknn_query(ctx, RKNN_QUERY_PERF_RUN, &perf_run, sizeof(perf_run));
    CHECK_RET("rknn_query(PERF_RUN)", ret);
    printf("run duration: %lld us\n", (long long)perf_run.run_duration);
  }
  exit_code = 0;

out:
  if (outputs_held) {
    ret = rknn_outputs_release(ctx, io_num.n_output, outputs);
    if (ret != RKNN_SUCC) {
      fprintf(stderr, "rknn_outputs_release fail! ret=%d (%s)\n", ret, sample_error_name(ret));
      exit_code = 1;
    }
  }
  if (ctx != 0) {
    ret = rknn_destroy(ctx);
    if (ret != RKNN_SUCC) {
      fprintf(stderr, "rknn_destroy fail! ret=%d (%s)\n", ret, sample_error_name(ret));
      exit_code = 1;
    }
  }
  if (input_data != NULL) {
    for (i = 0; i < io_num.n_input; ++i) sample_free_input(&input_data[i]);
  }
  free(input_data);
  free(inputs);
  free(outputs);
  free(input_attrs);
  free(output_attrs);
  return exit_code;
}
